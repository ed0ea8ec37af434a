"""Sample-ratio mismatch (DESIGN §12): an always-valid test of the A/B's lists per arm against
the expected split. A consumer of finalized lists beside :mod:`streameval.detect` and
:mod:`streameval.interleave`, fed through :class:`streameval.engine.consumers.ListConsumer`.
"""

from __future__ import annotations

from streameval.config import Settings
from streameval.srm.arithmetic import log_bayes_factor
from streameval.srm.arms import EXCLUDED, arm_reader
from streameval.srm.counter import SrmCounter
from streameval.srm.sequential import SrmTest


def srm_test_for(settings: Settings) -> SrmTest | None:
    """The test the settings configure (None: off, or no list can name its arm)."""
    if not settings.srm_in_effect:
        return None
    srm = settings.srm
    return SrmTest(srm.expected, srm.alpha, srm.concentration)


def srm_counter_for(settings: Settings) -> SrmCounter | None:
    """The one-process consumer of the settings' test (None when it does not run)."""
    test = srm_test_for(settings)
    if test is None:
        return None
    ev = settings.evaluation
    return SrmCounter(test, arm_reader(ev.segment_labels, ev.control), ev.bucket)


__all__ = [
    "EXCLUDED",
    "SrmCounter",
    "SrmTest",
    "arm_reader",
    "log_bayes_factor",
    "srm_counter_for",
    "srm_test_for",
]
