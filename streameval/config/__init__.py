"""Configuration: one frozen pydantic-settings model, validated at start, passed down.

Sources, highest priority first: ``STREAMEVAL_…`` environment variables (nested keys with ``__``,
e.g. ``STREAMEVAL_EVALUATION__KS='[1, 5]'``, or for a list of plain values ``1,5``: see
:mod:`streameval.config.env`, which also warns of a variable that sets nothing), the TOML file
given with ``--config``, the defaults (DESIGN §7). A wrong value fails at start with a
:class:`~streameval.errors.ConfigError` whose message names the key, e.g. ``evaluation.ks: …``.

One module per section (:mod:`~streameval.config.kafka`, :mod:`~streameval.config.metrics`,
:mod:`~streameval.config.evaluation`, :mod:`~streameval.config.detection`,
:mod:`~streameval.config.input` with its :mod:`~streameval.config.mapping`), the root model
(:mod:`~streameval.config.settings`) and its loading (:mod:`~streameval.config.loading`); this
package exports their public names.
"""

from streameval.config.base import Duration
from streameval.config.detection import DetectionSettings
from streameval.config.evaluation import DwellGrade, EvaluationSettings, InterleavingSettings
from streameval.config.input import InputSettings, SourceFormat
from streameval.config.judges import JudgesSettings
from streameval.config.kafka import KafkaSettings
from streameval.config.loading import load_settings
from streameval.config.mapping import (
    ClickMapping,
    ImpressionMapping,
    JudgmentMapping,
    MappingSettings,
    Pointer,
)
from streameval.config.metrics import MetricsSettings
from streameval.config.propensity import PropensitySettings
from streameval.config.settings import Settings
from streameval.config.srm import SrmSettings

__all__ = [
    "ClickMapping",
    "DetectionSettings",
    "Duration",
    "DwellGrade",
    "EvaluationSettings",
    "ImpressionMapping",
    "InputSettings",
    "InterleavingSettings",
    "JudgesSettings",
    "JudgmentMapping",
    "KafkaSettings",
    "MappingSettings",
    "MetricsSettings",
    "Pointer",
    "PropensitySettings",
    "Settings",
    "SourceFormat",
    "SrmSettings",
    "load_settings",
]
