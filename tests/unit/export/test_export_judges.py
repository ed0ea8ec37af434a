"""The judges' metric families: exact samples for a hand-built view."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from streameval.export import names
from streameval.export.collector import SnapshotCollector
from streameval.snapshot import JudgesView, Snapshot
from tests.unit.export.judges_view import JUDGES_VIEW


def registry_for(view: JudgesView | None, judgments: int = 11) -> CollectorRegistry:
    snapshot = Snapshot(("arm",), ("5m", "1h"), (10,), judgments=judgments, judges=view)
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(lambda: snapshot, version="x"))
    return registry


def test_agreement_pairs_floor_and_freshness_samples() -> None:
    r = registry_for(JUDGES_VIEW)
    one_h = {"window": "1h", "family": "human", "other": "llm:gpt-4o"}
    assert r.get_sample_value(names.JUDGE_AGREEMENT, one_h) == 0.42
    assert r.get_sample_value(names.JUDGE_AGREEMENT_PAIRS, one_h) == 120
    tiny = {"window": "all", "family": "human", "other": "llm:tiny"}
    assert r.get_sample_value(names.JUDGE_AGREEMENT, tiny) is None  # undefined alpha
    assert r.get_sample_value(names.JUDGE_AGREEMENT_PAIRS, tiny) == 1
    assert r.get_sample_value(names.JUDGE_AGREEMENT_FLOOR) == 0.667
    assert r.get_sample_value(names.JUDGE_AGREEMENT_MIN_PAIRS) == 50
    assert r.get_sample_value(names.JUDGMENT_STALE_SHARE, {"window": "5m"}) == 0.25  # 10 / 40
    assert r.get_sample_value(names.JUDGMENT_STALE_DOCS, {"window": "5m"}) == 10
    assert r.get_sample_value(names.JUDGMENT_JUDGED_DOCS, {"window": "1h"}) == 0
    assert r.get_sample_value(names.JUDGMENT_STALE_SHARE, {"window": "1h"}) is None
    assert r.get_sample_value(names.JUDGMENT_MAX_AGE) == 2_592_000.0
    head = {"window": "5m", "query_class": "head", "k": "10"}
    assert r.get_sample_value(names.JUDGED_COVERAGE_BY_QUERY_CLASS, head) == 0.75  # 3 / 4
    assert r.get_sample_value(names.QUERY_CLASS_LISTS, head) == 4
    tail = {"window": "5m", "query_class": "tail", "k": "10"}
    assert r.get_sample_value(names.JUDGED_COVERAGE_BY_QUERY_CLASS, tail) == 0.25


def test_nothing_without_a_view_and_no_floor_with_one_family() -> None:
    assert registry_for(None).get_sample_value(names.JUDGE_AGREEMENT_FLOOR) is None
    one = JudgesView(families=("human",), agreement_floor=0.5, agreement_min_pairs=3)
    r = registry_for(one)
    assert r.get_sample_value(names.JUDGE_AGREEMENT_FLOOR) is None
    assert r.get_sample_value(names.JUDGMENT_MAX_AGE) == 0.0
    assert registry_for(one, judgments=0).get_sample_value(names.JUDGMENT_MAX_AGE) is None
