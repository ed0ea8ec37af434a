"""Sequential regression detectors (DESIGN §9): a consumer of finalized lists beside the windows.

:mod:`~streameval.detect.spec` declares (frozen), :mod:`~streameval.detect.arithmetic` computes
(pure functions), :mod:`~streameval.detect.state` and :mod:`~streameval.detect.detectors` hold the
runtime state.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from streameval.config import Settings
from streameval.detect.detectors import Detectors
from streameval.detect.spec import VS_BASELINE, VS_CONTROL, DetectionSpec
from streameval.snapshot import Snapshot

__all__ = [
    "VS_BASELINE",
    "VS_CONTROL",
    "DetectionSpec",
    "Detectors",
    "detectors_for",
    "with_detection",
]


def detectors_for(settings: Settings) -> Detectors | None:
    """The detectors ``settings`` configure (None when none is in effect: see
    :attr:`~streameval.config.Settings.detectors_in_effect`, which also says why vs_control may
    be left out: logged here, once per set-up)."""
    if VS_CONTROL in settings.detection.detectors and VS_CONTROL not in (
        settings.detectors_in_effect
    ):
        ev = settings.evaluation
        logging.getLogger("streameval.detect").info(
            "vs_control is off: evaluation.control %s is not among evaluation.segment_labels %s "
            "(add its labels to the segment labels to compare each segment with the control)",
            dict(ev.control),
            list(ev.segment_labels),
        )
    spec = DetectionSpec.from_settings(settings)
    return None if spec is None else Detectors(spec)


def with_detection(snapshot: Snapshot, detectors: Detectors | None) -> Snapshot:
    """``snapshot`` with the detectors' rows (unchanged without detectors)."""
    if detectors is None:
        return snapshot
    return replace(snapshot, detection=detectors.rows())
