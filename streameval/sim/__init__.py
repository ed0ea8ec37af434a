"""A seeded, event-time traffic simulator of a search system under an A/B test.

Pure: no clock, no I/O. ``traffic(SimConfig(...), start_ms)`` yields
:class:`~streameval.sim.records.SimRecord` ``(time_ms, kind, key, raw)`` in event-time order;
``streameval demo`` feeds them to the pipeline in process, ``streameval simulate`` to Kafka.
"""

from streameval.sim.catalogue import Catalogue, Query, build_catalogue
from streameval.sim.config import Ranker, SimConfig
from streameval.sim.records import JUDGMENT_KEY_SEPARATOR, SimRecord
from streameval.sim.traffic import CONTROL, TREATMENT, catalogue_of, traffic

__all__ = [
    "CONTROL",
    "JUDGMENT_KEY_SEPARATOR",
    "TREATMENT",
    "Catalogue",
    "Query",
    "Ranker",
    "SimConfig",
    "SimRecord",
    "build_catalogue",
    "catalogue_of",
    "traffic",
]
