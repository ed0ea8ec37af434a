"""Issue 28 §4: a native ``timestamp`` in epoch seconds is read as milliseconds (January 1970)
without a word. ``inspect`` now shows each event time as UTC and flags those that can only be
seconds; the daemon and ``replay`` log them (rate-limited). How they are counted is unchanged."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from streameval.cli import main
from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.epoch import SECONDS_BELOW_MS, looks_like_seconds, utc_text
from streameval.log_limits import SecondsTimestampLog

#: 2026-01-01T00:00:00Z in epoch seconds, and in epoch milliseconds
T_S = 1_767_225_600
T_MS = T_S * 1000


def _impression(request_id: str, ts: int) -> dict[str, object]:
    return {"type": "impression", "request_id": request_id, "timestamp": ts, "results": ["a"]}


def _click(request_id: str, ts: int) -> dict[str, object]:
    return {"type": "click", "request_id": request_id, "doc_id": "a", "timestamp": ts}


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize(
    ("ms", "seconds"),
    [
        (T_S, True),  # 2026 in seconds
        (0, True),
        (SECONDS_BELOW_MS - 1, True),  # 1973-03-03T09:46:39.999Z as ms
        (SECONDS_BELOW_MS, False),
        (T_MS, False),
        (-1, False),  # before 1970: not a seconds value either
    ],
)
def test_the_rule(ms: int, seconds: bool) -> None:
    assert looks_like_seconds(ms) is seconds


def test_utc_text() -> None:
    assert utc_text(T_MS) == "2026-01-01T00:00:00.000Z"
    assert utc_text(T_MS + 1_234) == "2026-01-01T00:00:01.234Z"
    assert utc_text(SECONDS_BELOW_MS) == "1973-03-03T09:46:40.000Z"
    assert utc_text(10**20) == "?"


def test_inspect_shows_utc_and_flags_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _write(tmp_path / "log.jsonl", [_impression("r1", T_S), _click("r1", T_MS)])
    assert main(["inspect", str(log)]) == 0
    out = capsys.readouterr().out.splitlines()
    # 1 767 225 600 ms after the epoch: 20 days, 10:53:45.600
    assert out[0].endswith(
        "[event time 1767225600 is 1970-01-21T10:53:45.600Z as epoch milliseconds: probably "
        "epoch seconds (2026-01-01T00:00:00.000Z); event times are epoch milliseconds (or "
        'RFC 3339), a mapped source can say timestamp_unit = "s"]'
    )
    assert out[1].endswith("  [2026-01-01T00:00:00.000Z]")
    assert out[-1] == (
        "event times like epoch seconds (before 1973 as milliseconds): 1; read as "
        "milliseconds, such events count as late"
    )


def test_inspect_json_says_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = _write(tmp_path / "log.jsonl", [_impression("r1", T_S), _click("r1", T_MS)])
    assert main(["inspect", str(log), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    first, second = shown["lines"]
    assert first["time"] == "1970-01-21T10:53:45.600Z" and "epoch seconds" in first["warning"]
    assert second["time"] == "2026-01-01T00:00:00.000Z" and "warning" not in second
    assert shown["summary"]["seconds_timestamps"] == 1


def test_inspect_without_seconds_adds_no_summary_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _write(tmp_path / "log.jsonl", [_impression("r1", T_MS), _click("r1", T_MS + 1)])
    assert main(["inspect", str(log)]) == 0
    assert "epoch seconds" not in capsys.readouterr().out


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_log_is_rate_limited_and_says_how_many_it_held(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = _Clock()
    log = SecondsTimestampLog(interval_s=30.0, clock=clock)
    with caplog.at_level(logging.WARNING, logger="streameval.intake"):
        for i in range(5):
            log(T_S + i, "search-impressions/0")
        clock.now = 31.0
        log(T_S, "search-impressions/1")
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2
    assert said[0].startswith("search-impressions/0: event time 1767225600 is 1970-")
    assert said[1].startswith("search-impressions/1: ")
    assert said[1].endswith("(+4 more like it in the last 30 s)")


def _intake(records: list[dict[str, object]], warn: bool) -> tuple[str, list[tuple[int, str]]]:
    told: list[tuple[int, str]] = []
    pipeline = Pipeline(
        EvaluationSettings(),
        on_seconds=(lambda ms, source: told.append((ms, source))) if warn else None,
    )
    for r in records:
        pipeline.offer(json.dumps(r).encode(), "input")
    pipeline.finish()
    return repr(pipeline.snapshot().intake), told


def test_the_figures_do_not_change_only_the_warnings() -> None:
    records = [
        _impression("r1", T_MS),
        _click("r1", T_MS + 1_000),
        _impression("r2", T_S),  # seconds: late against the watermark of r1
        _click("r2", T_S + 1),
        _impression("r3", T_MS + 2_000),
    ]
    quiet, none = _intake(records, warn=False)
    said, told = _intake(records, warn=True)
    assert said == quiet
    assert none == [] and told == [(T_S, "input"), (T_S + 1, "input")]


def test_replay_logs_the_seconds_once(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    records = [_impression("r0", T_MS)] + [_impression(f"r{i}", T_S + i) for i in range(1, 50)]
    log = _write(tmp_path / "log.jsonl", records)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "replay", "--output", "json", str(log)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    warned = [line for line in proc.stderr.splitlines() if "epoch seconds" in line]
    assert len(warned) == 1  # 49 of them, within one interval: one line
    assert json.loads(proc.stdout)["intake"]["late"] == 49
