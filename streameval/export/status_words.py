"""The status page's words: arm names, signed figures, event times, and each regression
detector's state as a sentence an engineer reads at a glance (DESIGN §9).

Pure functions of snapshot rows; :mod:`streameval.export.status` puts what they return into the
JSON the page reads, so the page only lays the words out.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from streameval.detect.spec import VS_CONTROL
from streameval.snapshot import DetectionRow, SrmRow
from streameval.values import Segment

#: a detector series' state, in the order the page lists them (what needs a look first)
ALARM, CLEARED, QUIET, WARMING_UP = "alarm", "cleared", "quiet", "warming up"
STATES = (ALARM, CLEARED, QUIET, WARMING_UP)

MINUS = "\u2212"  # a real minus sign: "−0.070" reads as a drop, "-0.070" looks like a dash


def arm_name(segment: Segment) -> str:
    """A segment as the page names it: its label values joined by `` · `` (``∅`` for a value
    the impressions did not carry, ``all traffic`` without segment labels)."""
    return " · ".join(value or "∅" for value in segment) if segment else "all traffic"


def signed(value: float, digits: int = 3) -> str:
    """``+0.012`` / ``−0.070``: always a sign, and a real minus."""
    text = f"{value:+.{digits}f}"
    return MINUS + text[1:] if text.startswith("-") else text


def event_time(ms: int, reference_ms: int | None = None) -> str:
    """An event time in UTC: ``20:54:30Z`` on the reference's day, else with its date."""
    at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    same_day = (
        reference_ms is not None
        and datetime.fromtimestamp(reference_ms / 1000, tz=UTC).date() == at.date()
    )
    return at.strftime("%H:%M:%SZ" if same_day else "%Y-%m-%d %H:%M:%SZ")


def detector_state(row: DetectionRow) -> str:
    """``alarm`` while it holds; ``cleared`` once an alarm stopped holding; ``warming up``
    before the series had enough lists to take a step; else ``quiet``."""
    if row.alarm:
        return ALARM
    if row.cleared_ms is not None:
        return CLEARED
    if row.bucket_ms is None:
        return WARMING_UP
    return QUIET


def detector_words(row: DetectionRow, reference_ms: int | None = None) -> dict[str, Any]:
    """The tile of one detector series: ``state``, ``headline`` (who, what, by how much, against
    what), ``status`` (since when / cleared when, in event time) and ``detail`` (the statistic
    against its threshold), e.g. ``ltr · treatment judged NDCG@10 −0.070 ± 0.004 vs control``,
    ``alarm since 20:54:30Z``, ``vs_control CUSUM 24.9 / threshold 12.5``."""
    state = detector_state(row)
    against = "vs control" if row.detector == VS_CONTROL else "vs its own recent past"
    who = f"{arm_name(row.segment)} {row.relevance} NDCG@{row.k}"
    if row.shift is None:
        headline = f"{who} {against}: no estimate yet"
    else:
        spread = "" if row.shift_stderr is None else f" ± {row.shift_stderr:.3f}"
        headline = f"{who} {signed(row.shift)}{spread} {against}"
    since = row.alarm_since_ms if row.alarm_since_ms is not None else row.first_alarm_ms
    if state == ALARM:
        status = "alarm" if since is None else f"alarm since {event_time(since, reference_ms)}"
    elif state == CLEARED and row.cleared_ms is not None:
        status = f"alarm cleared at {event_time(row.cleared_ms, reference_ms)}"
        if since is not None:
            status += f" (it held from {event_time(since, reference_ms)})"
    elif state == WARMING_UP:
        status = "warming up: not enough lists for a first step yet"
    else:
        status = "no alarm"
    detail = (
        f"{row.detector} CUSUM {_figure(row.statistic)} / threshold {_figure(row.threshold)}"
        " (alarm while at or above it)"
    )
    if row.first_alarm_ms is not None and row.first_alarm_ms != since:
        detail += f" · first alarm {event_time(row.first_alarm_ms, reference_ms)}"
    return {"state": state, "headline": headline, "status": status, "detail": detail}


def _figure(value: float) -> str:
    return f"{value:.1f}" if math.isfinite(value) else "–"


#: what the page says of a ``vs_control`` alarm raised while the A/B's split is off (DESIGN §12)
BROKEN_SPLIT = (
    "resting on a broken split: the sample-ratio test alarms (the arms' lists are not in the "
    "expected ratio), so this comparison of the arms is not to be trusted until it is explained"
)


def broken_split(row: DetectionRow, srm: SrmRow | None) -> bool:
    """A ``vs_control`` alarm that holds while the sample-ratio test alarms."""
    return row.detector == VS_CONTROL and row.alarm and srm is not None and srm.alarm


def srm_words(row: SrmRow, reference_ms: int | None = None) -> dict[str, Any]:
    """The line of the sample-ratio test: ``state`` (alarm / quiet), ``headline`` (each arm's
    observed share against its expected one), ``status`` and ``detail`` (the statistic against
    its threshold, the lists behind it)."""
    parts = []
    for arm in row.arms:
        observed = "–" if math.isnan(arm.observed_share) else f"{100 * arm.observed_share:.2f} %"
        parts.append(f"{arm.arm or '∅'} {observed} (expected {100 * arm.expected_share:.2f} %)")
    headline = "sample ratio " + " · ".join(parts)
    if row.alarm:
        status = "mismatch"
        if row.first_alarm_ms is not None:
            status += f" since {event_time(row.first_alarm_ms, reference_ms)}"
    else:
        status = "no mismatch"
    lists = sum(arm.lists for arm in row.arms)
    detail = (
        f"srm log Bayes factor {_figure(row.statistic)} / threshold {_figure(row.threshold)} "
        f"over {lists:,} lists"
    )
    if row.since_ms is not None:
        detail += f" since {event_time(row.since_ms, reference_ms)}"
    if row.excluded:
        detail += f" ({row.excluded:,} without an arm, not tested)"
    return {
        "state": ALARM if row.alarm else QUIET,
        "headline": headline,
        "status": status,
        "detail": detail,
    }
