"""`streameval inspect FILE`: each record with the event it maps to or why it is invalid, and a
summary of types, fields never present and the share invalid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streameval.cli import main
from tests.foreign_shapes import SEGMENT_TOML, to_segment

T = 1_767_225_600_000


def _log(tmp_path: Path) -> Path:
    records = [
        to_segment(
            {
                "type": "impression",
                "request_id": "r1",
                "timestamp": T,
                "query": "Shoes",
                "results": ["a", "b"],
                "labels": {"ranker": "bm25", "arm": "control"},
            }
        ),
        to_segment({"type": "click", "request_id": "r1", "doc_id": "b", "timestamp": T + 2000}),
        {
            "type": "track",
            "event": "Product Clicked",
            "timestamp": "2026-01-01T00:00:03Z",
            "properties": {"product_id": "b"},
        },
        {"type": "track", "event": "Page Viewed", "timestamp": "2026-01-01T00:00:04Z"},
    ]
    path = tmp_path / "segment.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    return path


def test_inspect_shows_each_mapped_record_and_a_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(_log(tmp_path)), "--config", str(SEGMENT_TOML)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith('#1 impression: {"type": "impression", "request_id": "r1"')
    assert '"labels": {"ranker": "bm25", "arm": "control"}' in out[0]
    assert out[1].startswith('#2 click: {"type": "click", "request_id": "r1", "doc_id": "b"')
    assert out[2] == (
        "#3 invalid (mapping at /properties/search_id): /properties/search_id"
        " (the click's request_id): missing"
    )
    assert out[3] == "#4 invalid (unknown_type): unknown type 'Page Viewed'"
    assert out[4].startswith("#5 invalid (bad_json): ")
    # 5 records, 3 invalid: 60 %
    assert out[5] == (
        "5 records: click 1, impression 1; invalid 3 (60.0 %: bad_json 1, mapping 1,"
        " unknown_type 1)"
    )
    # the Segment mapping also reads view_ms, rating and event_id: none of these records has them
    assert out[6] == (
        "fields never present: /properties/query_id, /properties/event_id, /properties/view_ms,"
        " /properties/position, /properties/rating, /properties/rater"
    )


def test_inspect_without_the_mapping_says_why_the_shape_is_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(_log(tmp_path)), "-n", "2", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    # Segment's own "type": "track" is read as a native event type we do not know
    assert [line["invalid"] for line in shown["lines"]] == ["unknown_type", "unknown_type"]
    assert shown["summary"]["invalid_share"] == 1.0
    assert shown["summary"]["records"] == 2


def test_inspect_of_native_events_lists_optional_fields_never_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "native.jsonl"
    path.write_text(
        json.dumps({"type": "click", "request_id": "r", "doc_id": "d", "timestamp": T}) + "\n"
    )
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == "1 records: click 1; invalid 0 (0.0 %)"
    assert out[-1] == (
        "fields never present: click.action, click.dwell_ms, click.position, click.event_id"
    )
