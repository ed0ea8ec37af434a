"""`[detection]` and `evaluation.control`: defaults, and wrong values failing with the key named."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from streameval.config import load_settings
from streameval.detect import DetectionSpec
from streameval.errors import ConfigError


def test_defaults_watch_ndcg_at_10_of_both_sources_with_a_30_day_target() -> None:
    settings = load_settings()
    det = settings.detection
    assert det.detectors == ("vs_control", "vs_baseline")
    assert det.min_relative_drop == 0.02
    assert det.false_alarm_every == 30 * 86_400_000
    assert det.ks == (10,)
    assert det.relevance == ("judged", "implicit")
    assert settings.evaluation.control == {"arm": "control"}
    spec = DetectionSpec.from_settings(settings)
    assert spec is not None
    # h = ln(30 d / 10 s) = ln(259200)
    assert spec.threshold == pytest.approx(math.log(259_200))
    assert spec.k_index == ((10, 3),)  # NDCG@10 is the 4th of ks (1, 3, 5, 10)
    assert spec.is_control(("bm25", "control")) and not spec.is_control(("ltr", "treatment"))


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        ("[detection]\nmin_relative_drop = 0\n", "detection.min_relative_drop"),
        ("[detection]\nmin_relative_drop = 1.5\n", "detection.min_relative_drop"),
        ("[detection]\ndetectors = ['vs_everything']\n", "detection.detectors"),
        ("[detection]\nrelevance = ['clicks']\n", "detection.relevance"),
        ("[detection]\nks = [7]\n", "detection.ks"),
        ("[detection]\nfalse_alarm_every = '5s'\n", "detection.false_alarm_every"),
        ("[detection]\nfalse_alarm_every = 'a month'\n", "detection.false_alarm_every"),
        ("[detection]\nmax_queries = 0\n", "detection.max_queries"),
        ("[detection]\nunknown = 1\n", "detection.unknown"),
        ("[evaluation]\ncontrol = { variant = 'A' }\n", "evaluation.control"),
        # vs_control asked for explicitly (its detector, or its control) with a control that
        # no segment label can tell apart (issue 28: on by default it is only left out)
        (
            "[evaluation]\nsegment_labels = ['ranker']\n[detection]\ndetectors = ['vs_control']\n",
            "evaluation.control",
        ),
        (
            "[evaluation]\nsegment_labels = ['ranker']\ncontrol = { arm = 'A' }\n",
            "evaluation.control",
        ),
    ],
)
def test_a_wrong_value_names_its_key(tmp_path: Path, toml: str, key: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(path)


def test_without_vs_control_the_control_labels_need_not_exist(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        "[evaluation]\nsegment_labels = ['ranker']\n[detection]\ndetectors = ['vs_baseline']\n"
    )
    assert load_settings(path).detection.detectors == ("vs_baseline",)


def test_default_ks_follow_the_scored_ks_when_10_is_not_scored(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[evaluation]\nks = [1, 5]\n")
    spec = DetectionSpec.from_settings(load_settings(path))
    assert spec is not None and spec.ks == (5,)


def test_no_detectors_is_no_spec(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text("[detection]\ndetectors = []\n")
    assert DetectionSpec.from_settings(load_settings(path)) is None
