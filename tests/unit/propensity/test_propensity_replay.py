"""``[propensity]`` end to end: its config errors (one line naming the key), ``replay`` with the
source on (windows, outcomes, the ``"propensity"`` object, byte for byte the same twice), its
export rows, and detection of ``implicit_debiased``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.config import load_settings
from streameval.errors import ConfigError
from streameval.export.collector import format_snapshot
from streameval.export.history import History
from streameval.export.status import status_page_html, status_payload
from streameval.runtime.compose import evaluation_for
from streameval.sim import SimConfig, traffic
from streameval.snapshot import PropensityRow, Snapshot

START_MS = 1_700_000_000_000
ON = """
[propensity]
enabled = true
refresh_lists = 500
min_clicks = 30

[detection]
relevance = ["judged", "implicit", "implicit_debiased"]
"""


def _replay(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    return subprocess.run(
        [sys.executable, "-m", "streameval.cli", "replay", "--no-progress", *args],
        env={**clean, **(env or {})},
        capture_output=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = SimConfig(seed=11, rate=50.0, duration_ms=600_000, queries=200)
    path = tmp_path_factory.mktemp("propensity") / "log.jsonl"
    path.write_bytes(b"\n".join(r.raw for r in traffic(config, START_MS)) + b"\n")
    return path


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("propensity") / "streameval.toml"
    path.write_text(ON)
    return path


@pytest.fixture(scope="module")
def output(log: Path, config: Path) -> bytes:
    done = _replay("--config", str(config), "--output", "json", str(log))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout


def test_replay_scores_reports_and_detects_implicit_debiased(output: bytes) -> None:
    report = json.loads(output)
    relevances = {row["relevance"] for row in report["windows"]}
    assert relevances == {"implicit", "judged", "implicit_debiased"}
    outcomes = {(r["relevance"], r["outcome"]): r["lists"] for r in report["lists_total"]}
    # every finalized list has an outcome for each source, the same count for all three
    per_source = {
        rel: sum(n for (r, _), n in outcomes.items() if r == rel)
        for rel in ("implicit", "judged", "implicit_debiased")
    }
    assert len(set(per_source.values())) == 1
    assert outcomes["implicit_debiased", "scored"] > 0
    positions = report["propensity"]["positions"]
    assert [p["position"] for p in positions] == list(range(1, 11))
    assert positions[0]["propensity"] == 1.0
    # the simulator's examination is 1/i: rank 2 is examined about half as often as rank 1
    assert 0.35 < positions[1]["propensity"] < 0.65
    assert report["propensity"]["entries"] > 0
    watched = {row["relevance"] for row in report.get("detection", [])}
    assert "implicit_debiased" in watched


def test_replay_with_the_source_on_is_the_same_byte_for_byte(
    log: Path, config: Path, output: bytes
) -> None:
    # another interpreter hash seed too: nothing in the state is ordered by a hash (DESIGN §4)
    again = _replay(
        "--config", str(config), "--output", "json", str(log), env={"PYTHONHASHSEED": "12345"}
    )
    assert again.stdout == output


def test_without_the_section_nothing_changes(log: Path) -> None:
    done = _replay("--output", "json", str(log))
    report = json.loads(done.stdout)
    assert "propensity" not in report
    assert {row["relevance"] for row in report["windows"]} == {"implicit", "judged"}


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("STREAMEVAL_PROPENSITY__CLIP", "0", "propensity.clip"),
        ("STREAMEVAL_PROPENSITY__CLIP", "1.5", "propensity.clip"),
        ("STREAMEVAL_PROPENSITY__MAX_RANK", "1", "propensity.max_rank"),
        ("STREAMEVAL_PROPENSITY__MAX_ENTRIES", "0", "propensity.max_entries"),
        ("STREAMEVAL_PROPENSITY__MIN_CLICKS", "0", "propensity.min_clicks"),
        ("STREAMEVAL_PROPENSITY__REFRESH_LISTS", "0", "propensity.refresh_lists"),
        ("STREAMEVAL_PROPENSITY__ENABLED", "maybe", "propensity.enabled"),
        ("STREAMEVAL_DETECTION__RELEVANCE", "implicit_debiased", "detection.relevance"),
    ],
)
def test_a_wrong_value_is_one_line_naming_the_key(
    tmp_path: Path, variable: str, value: str, key: str
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    done = _replay(str(empty), env={variable: value})
    assert done.returncode != 0
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("streameval: error: ")
    assert key in lines[0]


def test_detection_of_implicit_debiased_needs_the_source_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STREAMEVAL_DETECTION__RELEVANCE", "implicit_debiased")
    monkeypatch.setenv("STREAMEVAL_PROPENSITY__ENABLED", "true")
    assert load_settings().detection.relevance == ("implicit_debiased",)


def test_export_rows() -> None:
    snapshot = Snapshot(
        segment_labels=("arm",),
        windows=("1m",),
        ks=(10,),
        propensity=(
            PropensityRow(1, 1.0, 0.0, 900.0),
            PropensityRow(2, 0.5, 0.02, 400.0),
            PropensityRow(3, None, None, 12.0),
        ),
        propensity_entries=77,
        propensity_dropped=3,
    )
    samples = {
        (s.name, s.labels.get("position")): s.value
        for family in format_snapshot(snapshot, version="test")
        for s in family.samples
    }
    assert samples["streameval_examination_propensity", "1"] == 1.0
    assert samples["streameval_examination_propensity", "2"] == 0.5
    assert ("streameval_examination_propensity", "3") not in samples  # not estimated yet
    assert samples["streameval_examination_propensity_stderr", "2"] == 0.02
    assert samples["streameval_propensity_harvested_clicks", "3"] == 12.0
    assert samples["streameval_propensity_entries", None] == 77
    assert samples["streameval_propensity_dropped_total", None] == 3


def test_the_status_payload_carries_the_propensity_only_when_on() -> None:
    rows = (PropensityRow(1, 1.0, 0.0, 900.0), PropensityRow(2, None, None, 3.0))
    on = Snapshot(segment_labels=(), windows=("1m",), ks=(10,), propensity=rows,
                  propensity_entries=5)  # fmt: skip
    payload = status_payload(on, History())
    assert payload["propensity"]["positions"][1] == {
        "position": 2, "propensity": None, "stderr": None, "harvested_clicks": 3.0,
    }  # fmt: skip
    assert payload["propensity"]["entries"] == 5
    off = Snapshot(segment_labels=(), windows=("1m",), ks=(10,))
    assert status_payload(off, History())["propensity"] is None
    assert b"propensityPanel" in status_page_html()


def test_no_export_rows_when_off() -> None:
    snapshot = Snapshot(segment_labels=("arm",), windows=("1m",), ks=(10,))
    names = {f.name for f in format_snapshot(snapshot, version="test")}
    assert not any("propensity" in name for name in names)


def test_the_daemon_with_a_state_topic_refuses_to_detect_implicit_debiased(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("STREAMEVAL_DETECTION__RELEVANCE", "implicit,implicit_debiased")
    monkeypatch.setenv("STREAMEVAL_PROPENSITY__ENABLED", "true")
    settings = load_settings()
    assert settings.kafka.state_topic  # on by default
    with pytest.raises(ConfigError, match=r"^detection\.relevance: .*kafka\.state_topic"):
        evaluation_for(settings, lambda *_: None)
    monkeypatch.setenv("STREAMEVAL_KAFKA__STATE_TOPIC", "")
    evaluation = evaluation_for(load_settings(), lambda *_: None)
    assert evaluation.detectors is not None
    assert "implicit_debiased" in evaluation.detectors.spec.relevance
