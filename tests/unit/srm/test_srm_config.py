"""``[srm]``: its defaults, and every mistake in it one line naming the key and the fix (a
non-zero exit, no traceback, through ``replay`` as an operator runs it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.config import load_settings
from streameval.errors import ConfigError
from streameval.srm import srm_counter_for, srm_test_for


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def _load(tmp_path: Path, text: str) -> None:
    path = tmp_path / "streameval.toml"
    path.write_text(text)
    load_settings(path)


def test_the_defaults() -> None:
    settings = load_settings()
    assert settings.srm_in_effect
    test = srm_test_for(settings)
    assert test is not None
    assert test.expected is None and test.alpha == 0.001 and test.concentration == 1000.0


def test_off_or_without_an_arm_label_it_does_not_run(tmp_path: Path) -> None:
    path = tmp_path / "off.toml"
    path.write_text("[srm]\nenabled = false\n")
    assert srm_counter_for(load_settings(path)) is None
    # the default control's label not segmented, [srm] not asked for: left out, no error
    path.write_text('[evaluation]\nsegment_labels = ["ranker"]\n')
    settings = load_settings(path)
    assert not settings.srm_in_effect and srm_test_for(settings) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[srm]\nexpected = {control = 0.5, treatment = 0.4}\n",
            "srm.expected: the shares sum to 0.9, not 1: give each arm its share",
        ),
        (
            "[srm]\nexpected = {control = 1.0}\n",
            "srm.expected: name at least two arms and their shares, or leave it unset",
        ),
        (
            '[srm]\nexpected = {control = 0.5, "__other__" = 0.5}\n',
            "srm.expected: '__other__' is not an arm (lists without one are excluded)",
        ),
        (
            "[srm]\nexpected = {control = 1.5, treatment = -0.5}\n",
            "srm.expected: the share of 'control' is 1.5: each share is in (0, 1)",
        ),
        ("[srm]\nalpha = 1.5\n", "srm.alpha: Input should be less than 1"),
        ("[srm]\nconcentration = 0\n", "srm.concentration: Input should be greater than 0"),
        ("[srm]\nexpect = {a = 0.5, b = 0.5}\n", "srm.expect: Extra inputs are not permitted"),
        (
            '[evaluation]\nsegment_labels = ["ranker"]\n[srm]\nalpha = 0.01\n',
            "srm: evaluation.control's labels ['arm'] are not among evaluation.segment_labels "
            "['ranker'], so no list names its arm: add them to evaluation.segment_labels, or "
            "set srm.enabled = false",
        ),
    ],
)
def test_a_mistake_is_one_line_naming_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, text)
    text_of = str(info.value)
    assert "\n" not in text_of
    assert message in text_of


def test_an_arm_listed_twice_is_one_line_through_replay(tmp_path: Path) -> None:
    """TOML itself refuses a key given twice; the operator still gets one line, no traceback."""
    config = tmp_path / "streameval.toml"
    config.write_text("[srm]\nexpected = {control = 0.5, control = 0.5}\n")
    log = tmp_path / "empty.jsonl"
    log.write_text("")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    proc = subprocess.run(
        [sys.executable, "-m", "streameval.cli", "replay", "--config", str(config), str(log)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "is not valid TOML" in lines[0] and "line 2" in lines[0]
    assert "Traceback" not in proc.stderr
