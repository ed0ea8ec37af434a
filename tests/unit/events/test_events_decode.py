"""decode(): native events, every invalid reason, hostile input, and 'never raises'."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.events.bounds import MAX_ID_CHARS, MAX_LABELS, MAX_QUERY_CHARS, MAX_RESULTS
from streameval.events.decode import (
    DEFAULT_MAX_BYTES,
    INVALID_REASONS,
    MAX_DETAIL_CHARS,
    Invalid,
    decode,
    decoder,
    dedup_key,
)
from streameval.events.models import Click, Impression, Judgment

# 2024-05-01T12:00:01.123Z as epoch ms, derived by hand:
#   2024-01-01T00:00:00Z = 1_704_067_200 s (54 years incl. 13 leap days: 19_723 days * 86_400)
#   + Jan 31 + Feb 29 (leap year) + Mar 31 + Apr 30 = 121 days = 10_454_400 s -> 1_714_521_600
#   + 12 h = 43_200 s -> 1_714_564_800 s; + 1.123 s -> 1_714_564_801_123 ms.
T0 = 1_714_564_801_123


def _raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _impression(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "impression",
        "request_id": "req-1",
        "timestamp": T0,
        "results": ["d1", "d2", "d3"],
    }
    record.update(extra)
    return record


def _click(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "click",
        "request_id": "req-1",
        "doc_id": "d2",
        "timestamp": T0,
    }
    record.update(extra)
    return record


def _judgment(**extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "judgment",
        "query_id": "q-1",
        "doc_id": "d2",
        "grade": 2,
        "timestamp": T0,
    }
    record.update(extra)
    return record


def _invalid(raw: bytes) -> Invalid:
    result = decode(raw)
    assert isinstance(result, Invalid), result
    assert result.reason in INVALID_REASONS
    assert len(result.detail) <= MAX_DETAIL_CHARS
    assert result.detail.isprintable()
    return result


# --- valid native events -----------------------------------------------------------------------


def test_impression_minimal_defaults() -> None:
    event = decode(_raw(_impression()))
    assert event == Impression(
        type="impression",
        request_id="req-1",
        timestamp=T0,
        results=("d1", "d2", "d3"),
    )
    assert isinstance(event, Impression)
    assert event.doc_ids == ("d1", "d2", "d3")
    assert event.query is None
    assert event.query_id == ""  # no query: no judgments will be found
    assert event.labels == {}
    assert event.event_id is None


def test_impression_object_results_keep_ids_only_in_rank_order() -> None:
    results = [{"doc_id": "d9", "score": 3.5}, "d1", {"doc_id": "d4"}, "d9"]
    event = decode(_raw(_impression(results=results)))
    assert isinstance(event, Impression)
    assert event.doc_ids == ("d9", "d1", "d4", "d9")  # duplicates kept: positions stay true
    assert not hasattr(event, "results")  # the scores are not stored


def test_impression_query_labels_and_ids() -> None:
    event = decode(
        _raw(
            _impression(
                query="  Red\tSHOES ",
                labels={"ranker": "bm25-v2", "arm": "B"},
                event_id="ev-7",
                unknown_field={"ignored": True},
            )
        )
    )
    assert isinstance(event, Impression)
    assert event.query == "  Red\tSHOES "  # the text as given
    assert event.query_id == "red shoes"  # the default: the normalized text
    assert event.labels == {"ranker": "bm25-v2", "arm": "B"}
    assert event.event_id == "ev-7"


def test_given_query_id_is_kept_verbatim() -> None:
    event = decode(_raw(_impression(query="Red Shoes", query_id="Q-RED")))
    assert isinstance(event, Impression)
    assert event.query_id == "Q-RED"


def test_click_defaults_and_lower_case_action() -> None:
    event = decode(_raw(_click()))
    assert event == Click(type="click", request_id="req-1", doc_id="d2", timestamp=T0)
    assert isinstance(event, Click)
    assert event.action == "click"
    full = decode(_raw(_click(action=" Add_To_Cart ", dwell_ms=0, position=1, event_id="c1")))
    assert isinstance(full, Click)
    assert (full.action, full.dwell_ms, full.position, full.event_id) == (
        "add_to_cart",
        0,
        1,
        "c1",
    )


def test_judgment_from_query_is_normalized_like_impressions() -> None:
    by_query = decode(_raw(_judgment(query_id=None, query="Red  Shoes ")))
    assert isinstance(by_query, Judgment)
    assert by_query.query_id == "red shoes"
    impression = decode(_raw(_impression(query="red shoes")))
    assert isinstance(impression, Impression)
    assert by_query.query_id == impression.query_id  # they share judgments (DESIGN §2)


def test_judgment_fields() -> None:
    event = decode(_raw(_judgment(grade=-1.5, judge="llm:gpt-x", event_id="j1")))
    assert isinstance(event, Judgment)
    assert (event.query_id, event.doc_id, event.grade, event.judge, event.event_id) == (
        "q-1",
        "d2",
        -1.5,
        "llm:gpt-x",
        "j1",
    )


@pytest.mark.parametrize(
    ("timestamp", "expected"),
    [
        (T0, T0),
        ("2024-05-01T12:00:01.123Z", T0),
        ("2024-05-01t12:00:01.123z", T0),  # RFC 3339 allows lower case
        ("2024-05-01 12:00:01.123Z", T0),  # and a space separator
        ("2024-05-01T14:00:01.123+02:00", T0),  # same instant, other zone
        ("2024-05-01T07:30:01.123-04:30", T0),
        ("2024-05-01T12:00:01.123", T0),  # no zone: UTC
        ("2024-05-01T12:00:01.123999Z", T0),  # sub-millisecond part is floored
        ("2024-05-01T12:00:01Z", T0 - 123),
        (str(T0), T0),  # digits in a string: epoch ms too
        (float(T0) + 0.9, T0),  # a float is floored
        ("1970-01-01T00:00:00Z", 0),
        (0, 0),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
    ],
)
def test_timestamps_in_both_forms_and_zones(timestamp: Any, expected: int) -> None:
    event = decode(_raw(_click(timestamp=timestamp)))
    assert isinstance(event, Click), event
    assert event.timestamp == expected


@pytest.mark.parametrize(
    "timestamp",
    [
        -1,
        "1969-12-31T23:59:59Z",
        253_402_300_800_000,  # year 10000
        10**40,  # huge integer
        1e300,
        True,
        None,
        [T0],
        "",
        "yesterday",
        "2024-05-01",  # a date without a time
        "2024-05-01T25:00:00Z",
        "2024-02-30T00:00:00Z",
        "2024-05-01T12:00:60Z",  # leap seconds are not representable
        "2024-05-01T12:00:00Z" + " " * 100,
        "１７１４５６４８０１１２３",  # full-width digits are not epoch ms
    ],
)
def test_bad_timestamps_are_schema_invalid(timestamp: Any) -> None:
    assert _invalid(_raw(_click(timestamp=timestamp))).reason == "schema"


def test_leading_byte_order_mark_is_ignored() -> None:
    event = decode(b"\xef\xbb\xbf" + _raw(_click()))
    assert isinstance(event, Click)


def test_str_input_is_read_like_bytes() -> None:
    assert decode(json.dumps(_click())) == decode(_raw(_click()))  # type: ignore[arg-type]


# --- invalid: one table per reason -------------------------------------------------------------


def test_too_large_is_checked_before_parsing() -> None:
    ten_mb = _raw(_impression(query="x" * 10_000_000))
    result = _invalid(ten_mb)
    assert result.reason == "too_large"
    assert str(DEFAULT_MAX_BYTES) in result.detail
    small_cap = decoder(max_bytes=64)
    raw = _raw(_click())
    assert len(raw) > 64
    capped = small_cap(raw)
    assert isinstance(capped, Invalid)
    assert capped.reason == "too_large"
    assert isinstance(decoder(max_bytes=len(raw))(raw), Click)  # the cap is inclusive


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe{}",
        b'{"type":"click","request_id":"\xc3\x28","doc_id":"d","timestamp":1}',
        '{"type":"judgment","query":"Stra\u00dfe"}'.encode("latin-1"),
        b'{"type":"click","request_id":"\xed\xa0\x80"}',  # an encoded surrogate is not UTF-8
    ],
)
def test_bad_encoding(raw: bytes) -> None:
    assert _invalid(raw).reason == "bad_encoding"


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"{",
        b"not json",
        b'{"type":"click",}',
        b'{"type":"click"} trailing',
        b"[" * 10_000 + b"]" * 10_000,  # 10 000-deep nesting: refused by the parser
        b'{"type":"impression","labels":' + b'{"a":' * 10_000 + b"1" + b"}" * 10_001,
        b'{"query_id":"q","user_query":' + b"[" * 10_000 + b"]" * 10_000 + b"}",  # UBI path
        b"\xef\xbb\xbf",
    ],
)
def test_bad_json(raw: bytes) -> None:
    assert _invalid(raw).reason == "bad_json"


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        (_raw(_impression(request_id="")), "request_id"),  # empty ids are invalid
        (_raw(_impression(request_id="r" * (MAX_ID_CHARS + 1))), "request_id"),
        (_raw(_impression(results=[])), "results"),
        (_raw(_impression(results=[f"d{i}" for i in range(MAX_RESULTS + 1)])), "results"),
        (_raw(_impression(results=["d"] * 100_000)), "results"),  # 100k results, 600 KB
        (_raw(_impression(results=[""])), "results"),
        (_raw(_impression(results=[{"score": 1.0}])), "results"),
        (_raw(_impression(results=[{"doc_id": "d", "score": "high"}])), "results"),
        (_raw(_impression(results=[7])), "results"),
        (_raw(_impression(query="q" * (MAX_QUERY_CHARS + 1))), "query"),
        # NFKC expands U+FDFA to 18 characters: 100 of them normalize to 1800 > 1024.
        (_raw(_impression(query="\ufdfa" * 100)), "normalized query"),
        (_raw(_impression(labels={f"k{i}": "v" for i in range(MAX_LABELS + 1)})), "labels"),
        (_raw(_impression(labels={"ranker": 3})), "labels"),
        (_raw(_impression(labels={"ranker": "v" * 257})), "labels"),
        (_raw(_impression(labels={"": "v"})), "labels"),
        (_raw(_impression(labels=["ranker"])), "labels"),
        (_raw(_click(doc_id="")), "doc_id"),
        (_raw(_click(dwell_ms=-1)), "dwell_ms"),
        (_raw(_click(position=0)), "position"),
        (_raw(_click(position=10**30)), "position"),
        (_raw(_click(action="")), "action"),
        (_raw(_click(event_id="")), "event_id"),
        (_raw(_judgment(grade=1e309)), "grade"),  # overflows to infinity
        (_raw(_judgment(grade=1001)), "grade"),
        (_raw(_judgment(grade="2")), "grade"),
        (_raw(_judgment(query_id=None)), "query_id or query"),
        (_raw({k: v for k, v in _judgment().items() if k != "query_id"}), "query_id or query"),
        (_raw(_judgment(query_id=None, query=" \t ")), "empty"),
        (_raw({"type": "click"}), "request_id"),
    ],
)
def test_schema(raw: bytes, where: str) -> None:
    result = _invalid(raw)
    assert result.reason == "schema"
    assert where in result.detail


@pytest.mark.parametrize(
    "raw",
    [
        b'{"type":"judgment","query_id":"q","doc_id":"d","grade":NaN,"timestamp":1}',
        b'{"type":"judgment","query_id":"q","doc_id":"d","grade":Infinity,"timestamp":1}',
        b'{"type":"judgment","query_id":"q","doc_id":"d","grade":-Infinity,"timestamp":1}',
    ],
)
def test_non_finite_grades_are_invalid(raw: bytes) -> None:
    # JSON has no NaN/Infinity literal; pydantic's parser accepts them and the model refuses
    # them ("schema"); a stricter parser would say "bad_json". Either way: never a judgment.
    assert _invalid(raw).reason in ("schema", "bad_json")


@pytest.mark.parametrize("raw", [b"[1, 2]", b"3", b'"click"', b"null", b'[{"type":"click"}]'])
def test_non_objects_are_schema_invalid(raw: bytes) -> None:
    assert _invalid(raw).reason == "schema"


@pytest.mark.parametrize(
    ("record", "shown"),
    [
        ({"type": "purchase", "request_id": "r"}, "purchase"),
        ({"type": "IMPRESSION"}, "IMPRESSION"),  # tags are case-sensitive
        ({"type": 5}, "5"),
        ({"type": None}, "None"),
        ({"type": "\n" * 500}, "\\n"),  # the tag is shown escaped and cut short
    ],
)
def test_unknown_type(record: dict[str, Any], shown: str) -> None:
    result = _invalid(_raw(record))
    assert result.reason == "unknown_type"
    assert shown in result.detail


def test_detail_never_echoes_the_record() -> None:
    secret = "SECRET-" + "z" * 50
    for record in (
        _impression(request_id=secret * 10),  # too long
        _click(timestamp=secret),
        _judgment(grade=secret),
        _impression(labels={"k": 1, "user": secret}),
    ):
        result = _invalid(_raw(record))
        assert "SECRET" not in result.detail, result


def test_invalid_reasons_are_a_closed_set() -> None:
    """The decoder's five, future_timestamp (the pipeline's check against the record's
    timestamp) and mapping (a mapped format's record that does not map): every label value of
    streameval_invalid_events_total{reason}."""
    assert INVALID_REASONS == (
        "too_large",
        "bad_encoding",
        "bad_json",
        "schema",
        "unknown_type",
        "future_timestamp",
        "mapping",
    )


# --- never raises ------------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=25,
)
_keys = st.sampled_from(
    [
        "type",
        "request_id",
        "doc_id",
        "timestamp",
        "results",
        "query",
        "query_id",
        "labels",
        "grade",
        "action",
        "position",
        "dwell_ms",
        "event_id",
        "query_response_hit_ids",
        "action_name",
        "event_attributes",
        "user_query",
        "query_attributes",
    ]
)
_tags = st.sampled_from(["impression", "click", "judgment", "other"])
_records = st.dictionaries(_keys, _json_values | _tags, max_size=8)


def _check(result: object) -> None:
    if isinstance(result, Invalid):
        assert result.reason in INVALID_REASONS
        assert len(result.detail) <= MAX_DETAIL_CHARS
        assert result.detail.isprintable()
    else:
        assert isinstance(result, Impression | Click | Judgment)


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(st.binary(max_size=300))
def test_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    _check(decode(raw))


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(_json_values)
def test_never_raises_on_arbitrary_json_values(value: Any) -> None:
    _check(decode(json.dumps(value).encode()))


@settings(max_examples=300, deadline=None)
@given(_records)
def test_never_raises_on_event_shaped_records(record: dict[str, Any]) -> None:
    _check(decode(json.dumps(record).encode()))


@pytest.mark.parametrize("raw", [None, 42, ["{}"], object()])
def test_never_raises_on_wrong_input_types(raw: Any) -> None:
    _check(decode(raw))


# --- duplicates --------------------------------------------------------------------------------


def test_dedup_key_prefers_event_id() -> None:
    raw = _raw(_click(event_id="c-1"))
    event = decode(raw)
    assert isinstance(event, Click)
    assert dedup_key(event, raw) == "c-1"
    other_bytes = _raw(_click(event_id="c-1", action="dwell"))  # same id, other content
    other = decode(other_bytes)
    assert isinstance(other, Click)
    assert dedup_key(other, other_bytes) == "c-1"


def test_dedup_key_without_event_id_is_a_digest_of_the_record() -> None:
    raw = _raw(_click())
    event = decode(raw)
    assert isinstance(event, Click)
    key = dedup_key(event, raw)
    assert isinstance(key, bytes)
    assert len(key) == 16
    assert dedup_key(event, raw + b"\r\n") == key  # same record, as a log line
    redelivered = bytes(raw)
    assert dedup_key(event, redelivered) == key
    later = _raw(_click(timestamp=T0 + 1))
    later_event = decode(later)
    assert isinstance(later_event, Click)
    assert dedup_key(later_event, later) != key


@pytest.mark.parametrize(
    "record",
    [
        _click(dwell_ms="5"),
        _click(dwell_ms=True),
        _click(position=1.5),
        _click(position="2"),
        _judgment(grade=True),
    ],
)
def test_numbers_must_be_json_numbers(record: dict[str, Any]) -> None:
    assert _invalid(_raw(record)).reason == "schema"


def test_null_optional_fields_read_as_absent() -> None:
    event = decode(_raw(_impression(query=None, query_id=None, labels=None, event_id=None)))
    assert isinstance(event, Impression)
    assert (event.query, event.query_id, event.labels, event.event_id) == (None, "", {}, None)
    click = decode(_raw(_click(dwell_ms=None, position=None, action=None)))
    assert isinstance(click, Click)
    assert (click.dwell_ms, click.position, click.action) == (None, None, "click")
    judged = decode(_raw(_judgment(judge=None)))
    assert isinstance(judged, Judgment)
    assert judged.judge == ""


@pytest.mark.parametrize("dwell", [0, 1500.5, 45_000, 2.5e3])
def test_dwell_is_any_finite_json_number_at_least_zero(dwell: float) -> None:
    click = decode(_raw(_click(action="dwell", dwell_ms=dwell)))
    assert isinstance(click, Click)
    assert click.dwell_ms == dwell


@pytest.mark.parametrize(
    "record",
    [_click(action=5), _click(action=" "), _judgment(judge=7), _judgment(judge="j" * 257)],
)
def test_a_wrong_action_or_judge_names_its_field(record: dict[str, Any]) -> None:
    invalid = _invalid(_raw(record))
    assert invalid.reason == "schema"
    assert "action" in invalid.detail or "judge" in invalid.detail
