"""replay --output json: the "judges" object."""

from __future__ import annotations

from streameval.export.status import judges_payload
from streameval.report import snapshot_json
from streameval.snapshot import Snapshot
from tests.unit.export.judges_view import JUDGES_VIEW


def test_judges_object_when_there_are_judgments() -> None:
    out = snapshot_json(Snapshot(("arm",), ("5m",), (10,), judgments=3, judges=JUDGES_VIEW))
    judges = out["judges"]
    assert judges["families"] == ["human", "llm:gpt-4o"]
    assert judges["agreement"][0] == {
        "window": "1h",
        "family": "human",
        "other": "llm:gpt-4o",
        "pairs": 120,
        "alpha": 0.42,
    }
    assert judges["agreement"][2]["alpha"] is None
    assert judges["freshness"][0] == {
        "window": "5m",
        "judged_docs": 40,
        "stale_docs": 10,
        "stale_share": 0.25,
    }
    assert judges["coverage_by_query_class"][0] == {
        "window": "5m",
        "query_class": "head",
        "k": 10,
        "lists": 4,
        "coverage": 0.75,
    }
    assert (judges["agreement_floor"], judges["max_age_ms"]) == (0.667, 2_592_000_000)


def test_no_judges_object_without_judgments() -> None:
    out = snapshot_json(Snapshot(("arm",), ("5m",), (10,), judgments=0, judges=JUDGES_VIEW))
    assert "judges" not in out


def test_status_payload_marks_the_rows_the_alert_would_fire_on() -> None:
    snapshot = Snapshot(("arm",), ("5m",), (10,), judgments=3, judges=JUDGES_VIEW)
    payload = judges_payload(snapshot)
    assert payload is not None
    low = {(r["window"], r["other"]): r["low"] for r in payload["agreement"]}
    # 1h: 0.42 < 0.667 with 120 >= 50 pairs; all: never watched; llm:tiny: alpha undefined
    assert low == {
        ("1h", "llm:gpt-4o"): True,
        ("all", "llm:gpt-4o"): False,
        ("all", "llm:tiny"): False,
    }
    assert (
        judges_payload(Snapshot(("arm",), ("5m",), (10,), judgments=0, judges=JUDGES_VIEW)) is None
    )
