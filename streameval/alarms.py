"""The operator's log of regression alarms (DESIGN §8): one line when an alarm starts (WARNING),
one when it clears (INFO).

The one place that writes them. The detectors (:class:`~streameval.detect.detectors.Detectors`,
:class:`~streameval.interleave.detector.PairTests`, the sample-ratio test
:class:`~streameval.srm.sequential.SrmTest`) call :func:`series_changed`, :func:`pair_changed`
or :func:`srm_changed` when a step takes a statistic across its threshold, in event time, the same
way in the daemon, the demo and ``replay`` (which shows them on stderr:
:func:`show_on_stderr`; its standard output is unchanged). A step that does not cross the
threshold logs nothing, so each transition is logged once; a state loaded from a snapshot is not
a transition. With several instances each one runs the group-wide detectors, and so each logs.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence

from streameval.durations import format_instant

#: the alarms' logger (the daemon's log shows it at its --log-level; ``replay`` and the demo
#: show it on stderr)
LOGGER = "streameval.alarms"
_LOG = logging.getLogger(LOGGER)


def _segment_text(labels: Sequence[str], segment: Sequence[str]) -> str:
    return ",".join(f"{name}={value}" for name, value in zip(labels, segment, strict=True))


def series_changed(
    *,
    alarm: bool,
    detector: str,
    relevance: str,
    k: int,
    labels: Sequence[str],
    segment: Sequence[str],
    statistic: float,
    threshold: float,
    shift: float | None,
    stderr: float | None,
    bucket_ms: int,
) -> None:
    """An NDCG detector series (``vs_control``, ``vs_baseline``) crossed its threshold in the
    bucket starting at ``bucket_ms``: ``alarm`` is its state from then on."""
    estimate = "n/a" if shift is None else f"{shift:+.4f} ± {stderr or 0.0:.4f}"
    _LOG.log(
        logging.WARNING if alarm else logging.INFO,
        "regression alarm %s: detector=%s k=%d relevance=%s segment={%s} NDCG shift %s "
        "(statistic %.2f, threshold %.2f) at event time %s",
        "started" if alarm else "cleared",
        detector,
        k,
        relevance,
        _segment_text(labels, segment),
        estimate,
        statistic,
        threshold,
        format_instant(bucket_ms),
    )


def pair_changed(
    *,
    alarm: bool,
    ranker: str,
    opponent: str,
    wins: int,
    losses: int,
    statistic: float,
    threshold: float,
    bucket_ms: int,
) -> None:
    """The interleaving test of ``ranker`` against ``opponent`` crossed its threshold in the
    bucket starting at ``bucket_ms``. Its shift is the preference over the decisive lists,
    (wins − losses) / (wins + losses), ± its standard error (the sample standard deviation of
    the ±1 outcomes over √n)."""
    n = wins + losses
    preference = (wins - losses) / n if n else 0.0
    stderr = math.sqrt(max(1.0 - preference * preference, 0.0) / (n - 1)) if n > 1 else 0.0
    _LOG.log(
        logging.WARNING if alarm else logging.INFO,
        "regression alarm %s: detector=interleaving ranker=%s opponent=%s preference "
        "%+.4f ± %.4f (wins %d, losses %d; statistic %.2f, threshold %.2f) at event time %s",
        "started" if alarm else "cleared",
        ranker,
        opponent,
        preference,
        stderr,
        wins,
        losses,
        statistic,
        threshold,
        format_instant(bucket_ms),
    )


def srm_changed(
    *,
    alarm: bool,
    arms: Sequence[tuple[str, int, float]],
    statistic: float,
    threshold: float,
    bucket_ms: int,
) -> None:
    """The sample-ratio test of the A/B crossed its threshold in the bucket starting at
    ``bucket_ms`` (or restarted, when the arms changed: ``alarm`` False). ``arms``: (arm,
    lists, expected share) of each arm tested."""
    total = sum(n for _, n, _ in arms)
    split = ", ".join(
        f"{arm}={n} ({n / total if total else 0.0:.4f}, expected {share:.4f})"
        for arm, n, share in arms
    )
    _LOG.log(
        logging.WARNING if alarm else logging.INFO,
        "sample-ratio mismatch alarm %s: lists per arm %s (statistic %.2f, threshold %.2f) at "
        "event time %s",
        "started" if alarm else "cleared",
        split,
        statistic,
        threshold,
        format_instant(bucket_ms),
    )


def show_on_stderr() -> None:
    """Where no logging is set up (``replay``, the demo): the alarm lines on stderr, both
    levels. Once per process however often it is called."""
    logger = logging.getLogger(LOGGER)
    if any(getattr(h, "_streameval_alarms", False) for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler._streameval_alarms = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
