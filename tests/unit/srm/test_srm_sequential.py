"""The running sample-ratio test (streameval.srm.sequential): what it counts, when it restarts,
its alarm and its log lines, and its saved state."""

from __future__ import annotations

import logging
import math

import pytest

from streameval.alarms import LOGGER
from streameval.srm.arithmetic import log_bayes_factor
from streameval.srm.arms import EXCLUDED, arm_reader
from streameval.srm.sequential import SrmTest

B = 10_000


def test_counts_accumulate_over_buckets_and_the_statistic_is_their_closed_form() -> None:
    test = SrmTest(None, 0.001, 100.0)
    test.close(0, {"control": 50, "treatment": 45, EXCLUDED: 3})
    test.close(B, {"treatment": 55, "control": 40})
    assert test.counts == {"control": 90, "treatment": 100}
    assert test.excluded == 3
    assert test.since_ms == 0
    assert test.statistic == log_bayes_factor([90, 100], [0.5, 0.5], 100.0)
    row = test.row()
    assert row is not None
    assert [(a.arm, a.lists, a.expected_share) for a in row.arms] == [
        ("control", 90, 0.5),
        ("treatment", 100, 0.5),
    ]
    assert row.arms[0].observed_share == pytest.approx(90 / 190)
    assert not row.alarm and row.first_alarm_ms is None


def test_one_arm_is_no_ab_and_has_no_row() -> None:
    test = SrmTest(None, 0.001, 100.0)
    test.close(0, {"control": 5000})
    assert test.row() is None and test.statistic == 0.0


def test_a_new_arm_restarts_the_test_from_its_bucket(caplog: pytest.LogCaptureFixture) -> None:
    test = SrmTest(None, 0.01, 10.0)
    test.close(0, {"a": 900, "b": 100})  # far off 50/50: alarms
    assert test.alarm and test.first_alarm_ms == 0
    caplog.clear()
    with caplog.at_level(logging.INFO, logger=LOGGER):
        test.close(B, {"a": 10, "b": 10, "c": 10})
    assert test.counts == {"a": 10, "b": 10, "c": 10}
    assert test.since_ms == B and test.first_alarm_ms is None and not test.alarm
    assert test.shares() == {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}
    (cleared,) = caplog.records
    assert cleared.levelno == logging.INFO
    assert "sample-ratio mismatch alarm cleared" in cleared.getMessage()


def test_with_expected_shares_other_arms_are_excluded_and_none_restarts() -> None:
    test = SrmTest({"treatment": 0.25, "control": 0.75}, 0.001, 100.0)
    assert test.counts == {"control": 0, "treatment": 0}  # the arms from the start
    test.close(0, {"control": 300, "treatment": 100, "other": 7, EXCLUDED: 2})
    test.close(B, {"new": 5, "control": 3})
    assert test.counts == {"control": 303, "treatment": 100}
    assert test.excluded == 14 and test.since_ms == 0
    assert test.statistic == log_bayes_factor([303, 100], [0.75, 0.25], 100.0)


def test_an_expected_arm_that_never_shows_is_a_mismatch() -> None:
    test = SrmTest({"control": 0.5, "treatment": 0.5}, 0.001, 100.0)
    test.close(0, {"control": 200})
    assert test.alarm
    row = test.row()
    assert row is not None and row.arms[1].lists == 0 and row.arms[1].observed_share == 0.0


def test_alarm_start_and_clear_lines(caplog: pytest.LogCaptureFixture) -> None:
    test = SrmTest(None, 0.05, 2.0)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        test.close(0, {"a": 30, "b": 10})
        test.close(B, {"a": 10, "b": 10})  # no crossing: no line
        test.close(2 * B, {"a": 300, "b": 330})  # back near 50/50
    assert [r.levelno for r in caplog.records] == [logging.WARNING, logging.INFO]
    started = caplog.records[0].getMessage()
    assert "sample-ratio mismatch alarm started" in started
    assert "a=30 (0.7500, expected 0.5000)" in started
    assert "2023" not in started and "1970-01-01T00:00:00Z" in started
    assert test.first_alarm_ms == 0 and not test.alarm


def test_dump_and_load_round_trip_and_bad_states_change_nothing() -> None:
    test = SrmTest(None, 0.01, 10.0)
    test.close(0, {"a": 900, "b": 100, EXCLUDED: 4})
    again = SrmTest(None, 0.01, 10.0)
    again.load(test.dump())
    assert again.row() == test.row()
    for bad in ({}, {"counts": [["a", -1]], "excluded": 0, "first": None, "since": None},
                {"counts": [["a", 1]], "excluded": 0, "first": "x", "since": None}):  # fmt: skip
        with pytest.raises(ValueError, match="sample-ratio"):
            again.load(bad)
        assert again.row() == test.row()
    expected = SrmTest({"a": 0.5, "z": 0.5}, 0.01, 10.0)
    with pytest.raises(ValueError, match="expected"):
        expected.load(test.dump())


def test_the_arm_of_a_segment() -> None:
    one = arm_reader(("ranker", "arm"), {"arm": "control"})
    assert one(("bm25", "treatment")) == "treatment"
    assert one(("bm25", "")) == EXCLUDED
    assert one(("__other__", "__other__")) == EXCLUDED
    two = arm_reader(("arm", "ranker", "market"), {"ranker": "bm25", "arm": "control"})
    assert two(("control", "bm25", "de")) == "control/bm25"
    assert two(("control", "", "de")) == EXCLUDED
    with pytest.raises(ValueError, match="not segment labels"):
        arm_reader(("ranker",), {"arm": "control"})


def test_fingerprint_names_the_configuration() -> None:
    assert SrmTest(None, 0.01, 10.0).fingerprint != SrmTest(None, 0.01, 11.0).fingerprint
    assert math.isclose(SrmTest(None, 0.001, 1.0).threshold, math.log(1000))
