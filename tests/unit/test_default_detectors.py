"""Issue 28 §2: a default never makes another setting fatal (DESIGN §7). ``vs_control`` is on by
default only where its control (``evaluation.control``) can be told apart by the segment
labels; asked for explicitly with a control it cannot tell apart, it still fails, naming both
keys."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.config import load_settings
from streameval.detect import DetectionSpec, detectors_for
from streameval.errors import ConfigError

_RANKER_ONLY = "[evaluation]\nsegment_labels = ['ranker']\n"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return path


def test_segment_labels_without_the_control_label_leave_vs_control_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = load_settings(_config(tmp_path, _RANKER_ONLY))
    assert settings.detection.detectors == ("vs_control", "vs_baseline")  # as configured
    assert settings.detectors_in_effect == ("vs_baseline",)
    spec = DetectionSpec.from_settings(settings)
    assert spec is not None and spec.detectors == ("vs_baseline",)
    with caplog.at_level(logging.INFO, logger="streameval.detect"):
        detectors = detectors_for(settings)
    assert detectors is not None and detectors.spec.detectors == ("vs_baseline",)
    said = [r for r in caplog.records if "vs_control is off" in r.getMessage()]
    assert len(said) == 1 and said[0].levelno == logging.INFO
    assert "evaluation.segment_labels" in said[0].getMessage()


def test_a_control_told_apart_by_the_segment_labels_keeps_vs_control(tmp_path: Path) -> None:
    settings = load_settings(_config(tmp_path, _RANKER_ONLY + "control = { ranker = 'A' }\n"))
    assert settings.detectors_in_effect == ("vs_control", "vs_baseline")
    assert load_settings().detectors_in_effect == ("vs_control", "vs_baseline")


def test_vs_control_asked_for_in_the_environment_still_fails_naming_both_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STREAMEVAL_DETECTION__DETECTORS", '["vs_control", "vs_baseline"]')
    with pytest.raises(ConfigError) as info:
        load_settings(_config(tmp_path, _RANKER_ONLY))
    message = str(info.value)
    assert "evaluation.control" in message and "evaluation.segment_labels" in message
    assert "detection.detectors" in message


def test_a_setting_checked_only_with_detection_follows_the_detectors_in_effect(
    tmp_path: Path,
) -> None:
    # detectors = [] (asked): no detector runs, so the detection keys are not checked
    text = _RANKER_ONLY + "bucket = '1h'\nwindows = ['1h']\n[detection]\ndetectors = []\n"
    settings = load_settings(_config(tmp_path, text + "false_alarm_every = '1m'\n"))
    assert settings.detectors_in_effect == ()
    assert detectors_for(settings) is None


@pytest.mark.parametrize("command", ["replay", "demo"])
def test_the_commands_start_with_segment_labels_without_arm(tmp_path: Path, command: str) -> None:
    log = tmp_path / "empty.jsonl"
    log.write_text("")
    fast = ["--duration", "1m", "--speed", "1e6", "--rate", "2", "--queries", "20", "--port", "0"]
    args = [str(log)] if command == "replay" else fast
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    cfg = _config(tmp_path, _RANKER_ONLY)
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", command, "--config", str(cfg), *args],
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "evaluation.control" not in proc.stderr
    assert proc.returncode == 0, proc.stderr
