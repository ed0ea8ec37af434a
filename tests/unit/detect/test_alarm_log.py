"""The operator's log of regression alarms (DESIGN §8): one WARNING line when an alarm starts, one
INFO line when it clears, naming the detector, the series, the shift ± its standard error and the
event time; once per transition, in event time, the same whichever way the buckets are fed."""

from __future__ import annotations

import json
import logging
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.alarms import LOGGER
from streameval.detect import Detectors, detectors_for
from streameval.durations import format_instant
from streameval.engine import Pipeline
from streameval.interleave.detector import PairTests, log_mixture_ratio
from tests.unit.detect.scenario import regression_log
from tests.unit.detect.test_detectors import CONTROL, TREATMENT, _settings, feed, row, spec


def _lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]


def test_a_vs_control_alarm_logs_its_start_and_its_clear_once_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    det = Detectors(spec(("vs_control",)))
    # the case of test_vs_control_worked_by_hand: the alarm holds from bucket 2 on, with
    # W = 0.462 >= h = ln 1.5 = 0.405, shift d = -0.2 and its stderr sqrt(v) = sqrt(0.025)
    feed(det, 0, [(CONTROL, "q1", 0.8), (CONTROL, "q1", 0.6), (TREATMENT, "q1", 0.7)])
    treatment = [(TREATMENT, "q1", 0.6), (TREATMENT, "q1", 0.4)]
    feed(det, 1, [(CONTROL, "q1", 0.9), (CONTROL, "q1", 0.5), *treatment])
    assert _lines(caplog) == []
    lower = [(TREATMENT, "q1", 0.5), (TREATMENT, "q1", 0.5)]
    feed(det, 2, [(CONTROL, "q1", 0.7), (CONTROL, "q1", 0.7), *lower])
    assert math.sqrt(0.025) == pytest.approx(0.1581, abs=5e-5)
    assert _lines(caplog) == [
        (
            logging.WARNING,
            "regression alarm started: detector=vs_control k=10 relevance=judged "
            "segment={ranker=ltr,arm=treatment} NDCG shift -0.2000 ± 0.1581 "
            "(statistic 0.46, threshold 0.41) at event time 1970-01-01T00:00:20Z",
        )
    ]
    # bucket 3: the same drop again keeps the alarm on: no new line
    feed(det, 3, [(CONTROL, "q1", 0.7), (CONTROL, "q1", 0.7), *lower])
    assert row(det, "vs_control", TREATMENT).alarm
    assert len(_lines(caplog)) == 1
    # bucket 4: the treatment well above its control: the statistic falls to 0, the alarm clears
    higher = [(TREATMENT, "q1", 0.9), (TREATMENT, "q1", 0.9)]
    feed(det, 4, [(CONTROL, "q1", 0.7), (CONTROL, "q1", 0.7), *higher])
    r = row(det, "vs_control", TREATMENT)
    assert not r.alarm
    (level, cleared) = _lines(caplog)[1]
    assert level == logging.INFO
    assert cleared.startswith(
        "regression alarm cleared: detector=vs_control k=10 relevance=judged "
        "segment={ranker=ltr,arm=treatment} NDCG shift "
    )
    assert f"{r.shift:+.4f} ± {r.shift_stderr:.4f}" in cleared
    assert cleared.endswith(
        f"(statistic {r.statistic:.2f}, threshold 0.41) at event time 1970-01-01T00:00:40Z"
    )
    feed(det, 5, [(CONTROL, "q1", 0.7), (CONTROL, "q1", 0.7), *higher])
    assert len(_lines(caplog)) == 2


def _scenario_lines(caplog: pytest.LogCaptureFixture, advance_share: float) -> list[str]:
    """The regression scenario (a 30 % drop of the treatment half-way) through the pipeline,
    ``pipeline.advance()`` called after that share of the records, at random (a daemon's poll
    loop) or never (a replay); returns the alarm lines it logged, and checks them against the
    detectors' rows."""
    caplog.clear()
    settings = _settings()
    det = detectors_for(settings)
    assert det is not None
    pipeline = Pipeline(settings.evaluation, consumers=(det,))
    pipeline.add_source("log")
    rng = random.Random(3)
    for record in regression_log():
        pipeline.offer(record.raw, "log")
        if rng.random() < advance_share:
            pipeline.advance()
    pipeline.finish()
    lines = _lines(caplog)
    for r in det.rows():
        series = (
            f"detector={r.detector} k={r.k} relevance={r.relevance} "
            f"segment={{ranker={r.segment[0]},arm={r.segment[1]}}} "
        )
        mine = [(level, text) for level, text in lines if series in text]
        # started and cleared alternate, WARNING then INFO, and end in the row's state
        assert [level for level, _ in mine] == [logging.WARNING, logging.INFO] * (
            len(mine) // 2
        ) + [logging.WARNING] * (len(mine) % 2)
        assert bool(len(mine) % 2) == r.alarm
        if r.first_alarm_ms is not None:  # the first start is logged at the bucket it held
            assert mine[0][1].startswith("regression alarm started")
            assert mine[0][1].endswith(f"at event time {format_instant(r.first_alarm_ms)}")
        else:
            assert mine == []
    return [text for _, text in lines]


def test_the_regression_scenario_logs_the_treatments_alarm_in_event_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    as_replay = _scenario_lines(caplog, 0.0)
    # the treatment's judged vs_control alarm starts (the regression is 6 minutes in, at
    # 2023-11-14T22:19:20Z, a 30 % drop: judged, the alarm holds within its first minute)
    started = [
        t
        for t in as_replay
        if t.startswith("regression alarm started: detector=vs_control k=10 relevance=judged")
        and "arm=treatment" in t
    ]
    assert len(started) == 1
    at = started[0].rsplit(" ", 1)[1]
    assert "2023-11-14T22:19:20Z" <= at < "2023-11-14T22:20:20Z"
    # the shift it reports is a drop
    assert " NDCG shift -0." in started[0]
    # the same lines whenever the horizon moves (event time, not the reading's pace)
    assert _scenario_lines(caplog, 0.3) == as_replay


def test_an_interleaving_alarm_logs_its_start_and_its_clear(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    tests = PairTests(scale=0.5, alpha=0.05)  # threshold ln 20 = 2.996
    # 12 losses of 12 decisive lists: log Λ = 4.20 (computed apart below) >= 2.996
    statistic = log_mixture_ratio(0, 12, 0.5)
    assert statistic > math.log(20)
    tests.close(60_000, [(("b", "a"), (0, 12)), (("a", "b"), (12, 0))])
    assert _lines(caplog) == [
        (
            logging.WARNING,
            "regression alarm started: detector=interleaving ranker=b opponent=a preference "
            f"-1.0000 ± 0.0000 (wins 0, losses 12; statistic {statistic:.2f}, threshold 3.00) "
            "at event time 1970-01-01T00:01:00Z",
        )
    ]
    # as many wins: the preference is 0, and the statistic falls back below the threshold
    tests.close(70_000, [(("b", "a"), (12, 0)), (("a", "b"), (0, 12))])
    assert log_mixture_ratio(12, 12, 0.5) < math.log(20)
    # preference 0 over 24 ±1 outcomes: sample variance 24 / 23, stderr sqrt(1 / 23) = 0.2085
    (level, text) = _lines(caplog)[1]
    assert level == logging.INFO
    assert text.startswith(
        "regression alarm cleared: detector=interleaving ranker=b opponent=a preference "
        "+0.0000 ± 0.2085 (wins 12, losses 12; "
    )
    assert text.endswith("at event time 1970-01-01T00:01:10Z")
    assert len(_lines(caplog)) == 2


def test_replay_logs_the_alarms_on_stderr_and_its_json_stays_json(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"".join(r.raw + b"\n" for r in regression_log()))
    config = tmp_path / "streameval.toml"
    config.write_text(
        '[evaluation]\nks = [10]\nattribution_window = "1m"\nwindows = ["1m"]\n'
        '[detection]\nmin_relative_drop = 0.05\nhalf_life = "5m"\nmin_lists = 100\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    command = [sys.executable, "-m", "streameval.cli", "replay", "--config", str(config)]
    done = subprocess.run(
        [*command, "--output", "json", "--no-progress", str(log)],
        env=env,
        capture_output=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)  # nothing but the JSON document on stdout
    alarm = [
        r
        for r in report["detection"]
        if r["detector"] == "vs_control" and r["relevance"] == "judged" and r["alarm"]
    ]
    assert len(alarm) == 1
    err = done.stderr.decode()
    expected = (
        "WARNING streameval.alarms: regression alarm started: detector=vs_control k=10 "
        "relevance=judged segment={ranker=ltr-v2,arm=treatment} NDCG shift -0."
    )
    assert expected in err
    assert f"at event time {format_instant(alarm[0]['first_alarm'])}\n" in err
