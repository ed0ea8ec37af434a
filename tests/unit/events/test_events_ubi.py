"""OpenSearch UBI records read as native events (DESIGN §2, streameval.events.ubi)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streameval.events.bounds import MAX_LABELS
from streameval.events.decode import Invalid, decode
from streameval.events.models import Click, Impression
from streameval.events.ubi import labels_from_attributes

# 2024-05-01T12:00:01.123Z = 1_714_564_801_123 ms (derivation in test_events_decode.py).
T0 = 1_714_564_801_123


def _raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _ubi_query(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "query_id": "5e3b2a1c-8b7d-4f2e-a3d4-c9b2e1f3a4b5",
        "client_id": "browser-1",
        "user_query": "Red  Shoes ",
        "query_response_hit_ids": ["sku-3", "sku-1", "sku-2"],
        "timestamp": T0,
    }
    record.update(extra)
    return record


def _ubi_event(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "action_name": "click",
        "query_id": "5e3b2a1c-8b7d-4f2e-a3d4-c9b2e1f3a4b5",
        "client_id": "browser-1",
        "timestamp": "2024-05-01T12:00:01.123Z",
        "event_attributes": {
            "object": {"object_id": "sku-1", "object_id_field": "sku"},
            "position": {"ordinal": 1},
        },
    }
    record.update(extra)
    return record


def test_ubi_query_is_an_impression() -> None:
    event = decode(_raw(_ubi_query()))
    assert isinstance(event, Impression)
    assert event.request_id == "5e3b2a1c-8b7d-4f2e-a3d4-c9b2e1f3a4b5"  # UBI query_id
    assert event.doc_ids == ("sku-3", "sku-1", "sku-2")  # rank order kept
    assert event.query == "Red  Shoes "
    assert event.query_id == "red shoes"  # ours: the normalized user_query
    assert event.timestamp == T0
    assert event.labels == {}


def test_ubi_query_labels_from_attributes_and_application() -> None:
    attributes = {
        "ranker": "ltr-v3",
        "arm": "B",
        "experiment": True,
        "bucket": 7,
        "weight": 0.25,
        "nested": {"a": 1},
        "list": [1, 2],
        "missing": None,
        "application": "from-attributes",
    }
    event = decode(_raw(_ubi_query(query_attributes=attributes, application="shop-web")))
    assert isinstance(event, Impression)
    assert event.labels == {
        "ranker": "ltr-v3",
        "arm": "B",
        "experiment": "true",
        "bucket": "7",
        "weight": "0.25",
        "application": "shop-web",  # the top-level field wins
    }


def test_labels_are_bounded_rather_than_refused() -> None:
    attributes = {f"k{i:02d}": "v" for i in range(50)}
    attributes["long"] = "v" * 1000
    attributes["x" * 100] = "long key"
    labels = labels_from_attributes(attributes, "app")
    assert len(labels) == MAX_LABELS
    assert labels["application"] == "app"
    assert "long" not in labels
    assert all(len(key) <= 64 for key in labels)
    # keys kept in record order: k00 .. k30 plus application
    assert [key for key in labels if key != "application"] == [f"k{i:02d}" for i in range(31)]


def test_integer_object_ids_become_text() -> None:
    event = decode(_raw(_ubi_query(query_response_hit_ids=[101, "sku-1", 18446744073709551615])))
    assert isinstance(event, Impression)
    assert event.doc_ids == ("101", "sku-1", "18446744073709551615")
    click = decode(
        _raw(_ubi_event(event_attributes={"object": {"object_id": 101}, "position": {}}))
    )
    assert isinstance(click, Click)
    assert click.doc_id == "101"  # joins the impression above
    assert click.position is None


def test_ubi_event_is_a_click() -> None:
    event = decode(_raw(_ubi_event()))
    assert isinstance(event, Click)
    assert event.request_id == "5e3b2a1c-8b7d-4f2e-a3d4-c9b2e1f3a4b5"
    assert event.doc_id == "sku-1"
    assert event.timestamp == T0
    assert event.action == "click"
    assert event.position == 2  # ordinal 1 is 0-based: the second result
    assert event.event_id is None


@pytest.mark.parametrize(
    ("action_name", "action"),
    [
        ("click_through", "click"),
        ("CLICK", "click"),
        ("add_to_cart", "add_to_cart"),
        ("Purchase", "purchase"),
    ],
)
def test_ubi_actions(action_name: str, action: str) -> None:
    event = decode(_raw(_ubi_event(action_name=action_name)))
    assert isinstance(event, Click)
    assert event.action == action


@pytest.mark.parametrize(
    ("position", "expected"),
    [
        ({"ordinal": 0}, 1),
        ({"ordinal": 9}, 10),
        ({"ordinal": {"index": 2}}, 3),  # UBI 1.0 form
        ({"x": 10, "y": 20}, None),
        ({}, None),
    ],
)
def test_ubi_position_ordinal(position: dict[str, Any], expected: int | None) -> None:
    attributes = {"object": {"object_id": "sku-1"}, "position": position}
    event = decode(_raw(_ubi_event(event_attributes=attributes)))
    assert isinstance(event, Click)
    assert event.position == expected


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        ("2024-05-01T12:00:01.123", T0),  # UBI timestamps without a zone are UTC
        ("2024-05-01T12:00:01.123Z", T0),
        ("2024-05-01T13:00:01.123+01:00", T0),
        (T0, T0),
        (str(T0), T0),
    ],
)
def test_ubi_timestamps(timestamp: Any, expected: int) -> None:
    query = decode(_raw(_ubi_query(timestamp=timestamp)))
    event = decode(_raw(_ubi_event(timestamp=timestamp)))
    assert isinstance(query, Impression)
    assert isinstance(event, Click)
    assert query.timestamp == event.timestamp == expected


def test_mapped_events_revalidate_to_themselves() -> None:
    query = decode(_raw(_ubi_query(query_attributes={"ranker": "x"}, application="a")))
    event = decode(_raw(_ubi_event(action_name="click_through")))
    assert isinstance(query, Impression)
    assert isinstance(event, Click)
    assert Impression.model_validate(query.model_dump(by_alias=True)) == query
    assert Click.model_validate(event.model_dump()) == event


def test_misleading_bytes_still_take_the_exact_rule() -> None:
    # The key name appears as a *value*: the fast guess says "query", the exact rule "event".
    event = decode(_raw(_ubi_event(message="query_response_hit_ids")))
    assert isinstance(event, Click)
    # The key spelled with a JSON escape: no fast guess, still a query.
    raw = _raw(_ubi_query()).replace(b'"query_response_hit_ids"', b'"query\\u005fresponse_hit_ids"')
    query = decode(raw)
    assert isinstance(query, Impression)
    assert query.doc_ids == ("sku-3", "sku-1", "sku-2")


@pytest.mark.parametrize(
    ("record", "reason", "where"),
    [
        ({"query_id": "q", "timestamp": T0}, "schema", "neither"),
        ({"user_query": "shoes", "hits": ["a"]}, "schema", "neither"),
        (_ubi_query(query_response_hit_ids=[]), "schema", "query_response_hit_ids"),
        (_ubi_query(query_response_hit_ids=["a"] * 1001), "schema", "query_response_hit_ids"),
        (_ubi_query(query_response_hit_ids=[1.5]), "schema", "query_response_hit_ids"),
        (_ubi_query(query_response_hit_ids=[2**64]), "schema", "query_response_hit_ids"),
        (_ubi_query(query_id=""), "schema", "query_id"),
        (_ubi_query(timestamp="soon"), "schema", "timestamp"),
        (_ubi_query(query_attributes=["ranker"]), "schema", "query_attributes"),
        (_ubi_event(event_attributes={"position": {"ordinal": 1}}), "schema", "object"),
        ({k: v for k, v in _ubi_event().items() if k != "event_attributes"}, "schema", "event"),
        ({k: v for k, v in _ubi_event().items() if k != "query_id"}, "schema", "query_id"),
        (
            _ubi_event(
                event_attributes={"object": {"object_id": "a"}, "position": {"ordinal": -1}}
            ),
            "schema",
            "ordinal",
        ),
        (_ubi_event(action_name=""), "schema", "action_name"),
        (_ubi_event(action_name="impression"), "unknown_type", "impression"),
        (_ubi_event(action_name="Impression"), "unknown_type", "impression"),
    ],
)
def test_invalid_ubi_records(record: dict[str, Any], reason: str, where: str) -> None:
    result = decode(_raw(record))
    assert isinstance(result, Invalid), result
    assert result.reason == reason
    assert where in result.detail


def test_a_native_type_wins_over_ubi_fields() -> None:
    # With "type", the record is native: UBI fields are just unknown extras (ignored).
    record = {
        "type": "click",
        "request_id": "r",
        "doc_id": "d",
        "timestamp": T0,
        "action_name": "purchase",
    }
    event = decode(_raw(record))
    assert isinstance(event, Click)
    assert event.action == "click"
