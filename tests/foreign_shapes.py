"""Native events rewritten into the shapes other teams log (the worked mappings of
docs/input-formats.md's "Point it at your topics", whose TOML files are in tests/fixtures/input/): a
Snowplow-like and a Segment-like JSON shape, and the Segment-like shape in Avro (Confluent wire
format).

Each rewrite is exact: every field the native event has is carried, at the place the mapping
reads it, in that shape's own form (timestamps as text, positions from 0, the team's action
names), so the mapped log must give exactly the native log's figures. A record that is not a
native event (a broken one) is carried unchanged.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "input"
SNOWPLOW_TOML = FIXTURES / "snowplow.toml"
SEGMENT_TOML = FIXTURES / "segment.toml"
SEGMENT_AVSC = FIXTURES / "segment.avsc"
SHAPES = ("snowplow", "segment")

_SNOWPLOW_ACTIONS = {"click": "link_click", "dwell": "long_view", "purchase": "transaction"}
_SEGMENT_EVENTS = {
    "click": "Product Clicked",
    "dwell": "Product Viewed",
    "add_to_cart": "Product Added",
    "purchase": "Order Completed",
}


def _utc(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).replace(microsecond=(ms % 1000) * 1000)


def snowplow_time(ms: int) -> str:
    """Snowplow's enriched-event form: ``2026-01-01 00:00:00.123`` (UTC, no zone)."""
    return _utc(ms).strftime("%Y-%m-%d %H:%M:%S.") + f"{ms % 1000:03d}"


def segment_time(ms: int) -> str:
    """Segment's form: ISO 8601 with milliseconds and ``Z``."""
    return _utc(ms).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def to_snowplow(ev: dict[str, Any]) -> dict[str, Any]:
    kind = ev["type"]
    out: dict[str, Any] = {
        "app_id": "shop",
        "platform": "web",
        "derived_tstamp": snowplow_time(ev["timestamp"]),
        "collector_tstamp": snowplow_time(ev["timestamp"] + 37),
    }
    if "event_id" in ev:
        out["event_id"] = ev["event_id"]
    if kind == "impression":
        out["event_name"] = "search_results"
        data = _drop_none(
            {
                "searchId": ev["request_id"],
                "terms": ev.get("query"),
                "results": [{"sku": d, "price": 9.99} for d in ev["results"]],
            }
        )
        labels = ev.get("labels") or {}
        out["contexts"] = {
            "schema": "iglu:com.snowplowanalytics.snowplow/contexts/jsonschema/1-0-0",
            "data": [{"schema": "iglu:com.acme/experiment/jsonschema/1-0-0", "data": dict(labels)}],
        }
    elif kind == "click":
        out["event_name"] = "search_click"
        action = ev.get("action", "click")
        data = _drop_none(
            {
                "searchId": ev["request_id"],
                "sku": ev["doc_id"],
                "interaction": _SNOWPLOW_ACTIONS.get(action, action),
                "dwellMs": ev.get("dwell_ms"),
                "index": None if ev.get("position") is None else ev["position"] - 1,
            }
        )
    else:
        out["event_name"] = "relevance_judgment"
        data = _drop_none(
            {
                "terms": ev["query"],
                "sku": ev["doc_id"],
                "grade": ev["grade"],
                "rater": ev.get("judge"),
            }
        )
    out["unstruct_event"] = {
        "schema": "iglu:com.snowplowanalytics.snowplow/unstruct_event/jsonschema/1-0-0",
        "data": {"schema": f"iglu:com.acme/{out['event_name']}/jsonschema/1-0-0", "data": data},
    }
    return out


def _segment(ev: dict[str, Any]) -> dict[str, Any]:
    """The Segment-like record, with the timestamp still in epoch ms (JSON and Avro differ)."""
    kind = ev["type"]
    props: dict[str, Any] = {"event_id": ev.get("event_id")}
    traits: dict[str, str] = {}
    if kind == "impression":
        event = "Products Searched"
        labels = ev.get("labels") or {}
        props |= {
            "search_id": ev["request_id"],
            "query": ev.get("query"),
            "query_id": ev.get("query_id"),
            "products": [{"product_id": d} for d in ev["results"]],
            "experiment_arm": labels.get("arm"),
        }
        if "ranker" in labels:
            traits["ranker"] = labels["ranker"]
    elif kind == "click":
        action = ev.get("action", "click")
        event = _SEGMENT_EVENTS[action]
        props |= {
            "search_id": ev["request_id"],
            "product_id": ev["doc_id"],
            "view_ms": ev.get("dwell_ms"),
            "position": ev.get("position"),
        }
    else:
        event = "Product Rated"
        props |= {
            "query": ev.get("query"),
            "query_id": ev.get("query_id"),
            "product_id": ev["doc_id"],
            "rating": float(ev["grade"]),
            "rater": ev.get("judge"),
        }
    return {
        "type": "track",
        "event": event,
        "timestamp": ev["timestamp"],
        "properties": props,
        "context": {"traits": traits},
    }


def to_segment(ev: dict[str, Any]) -> dict[str, Any]:
    out = _segment(ev)
    out["timestamp"] = segment_time(out["timestamp"])
    out["properties"] = _drop_none(out["properties"])
    return out


def rewrite(raw: bytes, shape: str) -> bytes:
    """One native record (bytes) in ``shape``; a record that is not a native event, as it is."""
    try:
        ev = json.loads(raw)
    except ValueError:
        return raw
    convert = to_snowplow if shape == "snowplow" else to_segment
    return json.dumps(convert(ev)).encode()


class SegmentAvro:
    """The Segment-like shape in Avro, Confluent wire format, under ``schema_id``."""

    def __init__(self, schema_id: int) -> None:
        from fastavro import parse_schema

        self.schema_id = schema_id
        self.schema_text = SEGMENT_AVSC.read_text()
        self.schema = parse_schema(json.loads(self.schema_text))

    def encode(self, raw: bytes) -> bytes:
        """One native record as wire-format Avro; a record that is not a native event becomes
        bytes that are not the wire format (its own bytes: a JSON text never starts with 0)."""
        from fastavro import schemaless_writer

        try:
            ev = json.loads(raw)
        except ValueError:
            return raw
        buf = io.BytesIO()
        schemaless_writer(buf, self.schema, _segment(ev))
        return b"\x00" + self.schema_id.to_bytes(4, "big") + buf.getvalue()
