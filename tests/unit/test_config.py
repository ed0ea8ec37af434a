from pathlib import Path

import pytest

from streameval.config import load_settings
from streameval.errors import ConfigError


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def test_defaults_are_the_design_contract() -> None:
    s = load_settings()
    assert s.kafka.bootstrap_servers == "localhost:9092"
    assert s.kafka.group_id == "streameval"
    assert s.kafka.topics == ("search-impressions", "search-clicks")
    assert s.kafka.judgment_topics == ("search-judgments",)
    assert s.kafka.dlq_topic == "streameval-dlq"
    assert (s.metrics.host, s.metrics.port) == ("0.0.0.0", 9724)
    e = s.evaluation
    assert e.ks == (1, 3, 5, 10)
    assert (e.gain, e.discount, e.discount_base) == ("linear", "log2", 2.0)
    assert (e.ideal, e.unjudged, e.no_relevance) == ("pool", "zero", "skip")
    assert (e.attribution_window, e.allowed_lateness, e.bucket) == (300_000, 10_000, 10_000)
    assert e.window_names == ("1m", "5m", "1h")
    assert e.segment_labels == ("ranker", "arm")
    assert e.max_segments == 100
    assert e.implicit_grades == {"click": 1.0, "add_to_cart": 2.0, "purchase": 3.0}
    assert (e.dwell_grade.min_ms, e.dwell_grade.grade) == (30_000, 2.0)


def test_file_then_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(
        '[kafka]\nbootstrap_servers = "broker:9093"\n'
        '[evaluation]\nks = [5, 10]\nwindows = ["30s", "2m"]\ngain = "exponential"\n'
    )
    s = load_settings(cfg)
    assert s.kafka.bootstrap_servers == "broker:9093"
    assert s.evaluation.ks == (5, 10)
    assert s.evaluation.window_names == ("30s", "2m")
    monkeypatch.setenv("STREAMEVAL_EVALUATION__KS", "[3]")
    monkeypatch.setenv("STREAMEVAL_KAFKA__SASL_PASSWORD", "hunter2")
    s = load_settings(cfg)
    assert s.evaluation.ks == (3,)  # the environment wins over the file
    assert s.evaluation.gain == "exponential"  # the rest of the file still applies
    assert s.kafka.sasl_password is not None
    assert "hunter2" not in repr(s)  # secrets never show up in logs


def test_settings_are_frozen() -> None:
    s = load_settings()
    with pytest.raises(ValueError):
        s.evaluation.ks = (1,)  # type: ignore[misc]


@pytest.mark.parametrize(
    ("section", "values", "key"),
    [
        ("evaluation", {"ks": [0]}, "evaluation.ks"),
        ("evaluation", {"gain": "quadratic"}, "evaluation.gain"),
        ("evaluation", {"attribution_window": "5 minutes"}, "evaluation.attribution_window"),
        ("evaluation", {"bucket": "7s"}, "windows"),
        ("evaluation", {"segment_labels": ["k"]}, "segment_labels"),
        ("evaluation", {"discount_base": 1.0}, "evaluation.discount_base"),
        ("metrics", {"port": 70000}, "metrics.port"),
        ("kafka", {"topics": []}, "topics"),
        ("kafka", {"bootstrap": "x"}, "kafka.bootstrap"),
    ],
)
def test_a_wrong_value_fails_naming_the_key(
    section: str, values: dict[str, object], key: str
) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(**{section: values})
    assert key in str(info.value)


def test_unreadable_or_malformed_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[evaluation\nks = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(bad)
