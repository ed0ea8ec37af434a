"""An alarm that fired and cleared is kept as such, in event time: when the current (or last)
alarm began and when it stopped holding, beside the first alarm ever (which never moves)."""

from __future__ import annotations

import json

from streameval.detect import Detectors
from tests.unit.detect.test_detectors import CONTROL, TREATMENT, B, feed, row, spec

# h = ln 1.5 = 0.405 (spec's default); min_lists 2; delta = 0.1 × control level (~0.07)
# buckets 0-2 as in test_vs_control_worked_by_hand: the alarm holds from bucket 2 (W = 0.462)
WARM_UP = [
    [(CONTROL, "q1", 0.8), (CONTROL, "q1", 0.6), (TREATMENT, "q1", 0.7)],
    [(CONTROL, "q1", 0.9), (CONTROL, "q1", 0.5), (TREATMENT, "q1", 0.6), (TREATMENT, "q1", 0.4)],
    [(CONTROL, "q1", 0.7), (CONTROL, "q1", 0.7), (TREATMENT, "q1", 0.5), (TREATMENT, "q1", 0.5)],
]
#: the treatment well above the control: d > 0, the log-likelihood ratio of a drop is negative
#: and larger than W, so W falls to 0 in one bucket
RECOVERED = [
    (CONTROL, "q1", 0.7),
    (CONTROL, "q1", 0.7),
    (TREATMENT, "q1", 0.9),
    (TREATMENT, "q1", 0.9),
]
#: the treatment far below again: d about -0.4, llr = -delta (d + delta / 2) / v > h
DROPPED = [
    (CONTROL, "q1", 0.7),
    (CONTROL, "q1", 0.7),
    (TREATMENT, "q1", 0.3),
    (TREATMENT, "q1", 0.3),
]


def run(buckets: list[list[tuple[tuple[str, str], str, float]]]) -> Detectors:
    det = Detectors(spec(("vs_control",)))
    for i, lists in enumerate(buckets):
        feed(det, i, lists)
    return det


def test_alarm_holds_since_the_bucket_it_began() -> None:
    r = row(run(WARM_UP), "vs_control", TREATMENT)
    assert r.alarm
    assert (r.first_alarm_ms, r.alarm_since_ms, r.cleared_ms) == (2 * B, 2 * B, None)


def test_a_cleared_alarm_says_when_it_stopped_holding() -> None:
    r = row(run([*WARM_UP, RECOVERED]), "vs_control", TREATMENT)
    assert not r.alarm and r.statistic == 0.0
    assert (r.first_alarm_ms, r.alarm_since_ms, r.cleared_ms) == (2 * B, 2 * B, 3 * B)


def test_a_new_alarm_after_a_clear_starts_a_new_episode() -> None:
    r = row(run([*WARM_UP, RECOVERED, DROPPED]), "vs_control", TREATMENT)
    assert r.alarm
    # the first alarm ever stays where it was; the current one began at bucket 4
    assert (r.first_alarm_ms, r.alarm_since_ms, r.cleared_ms) == (2 * B, 4 * B, None)


def test_a_quiet_series_has_no_episode() -> None:
    r = row(run(WARM_UP[:2]), "vs_control", TREATMENT)
    assert (r.alarm, r.alarm_since_ms, r.cleared_ms) == (False, None, None)


def test_the_episode_survives_dump_and_load() -> None:
    det = run([*WARM_UP, RECOVERED])
    again = Detectors(det.spec)
    again.load(json.loads(json.dumps(det.dump())))
    assert row(again, "vs_control", TREATMENT) == row(det, "vs_control", TREATMENT)


def test_a_dump_without_episodes_still_loads() -> None:
    """A group snapshot written by an older version (5 fields per series): an alarm holding
    then is taken to hold since its first alarm; nothing is known of a clear."""
    det = run(WARM_UP)
    state = json.loads(json.dumps(det.dump()))
    state["series"] = [entry[:9] for entry in state["series"]]
    again = Detectors(det.spec)
    again.load(state)
    r = row(again, "vs_control", TREATMENT)
    assert (r.alarm, r.first_alarm_ms, r.alarm_since_ms, r.cleared_ms) == (True, 2 * B, 2 * B, None)
