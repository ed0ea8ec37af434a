"""The native decoders of UBI records and of the ``auto`` format (native/src/ubi.rs,
``streameval._native.decode`` and ``decode_ubi``) against the Python ones
(``streameval.events.decode.decode`` and ``decode_ubi``), the reference: for every record, the
same event (every field equal) or the same invalid reason and detail.

Records: hypothesis-generated UBI queries, SRW A/B queries and UBI events, valid and mutated
(fields dropped, wrong types, junk and nested junk, out-of-range ordinals and ids, escapes, a
byte order mark, truncation, non-UTF-8, not an object, over the size cap), the generated native
events of tests/unit/test_native_decode.py (the ``auto`` format reads both), and every record
literal of the Python tests of UBI and of the decoder (tests/unit/events/).

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import ast
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval import native
from streameval.events.decode import Invalid, decode, decode_ubi
from tests.ci import require_native
from tests.unit.test_native_decode import (
    _EVENTS,
    _IDS,
    _JUNK,
    _QUERIES,
    _TIMESTAMPS,
    _dumps,
    _mutated,
    python_answer,
)

_native = require_native("native decoder")

MAX_BYTES = 8192
_TESTS = Path(__file__).resolve().parent


def python_ubi(raw: bytes, max_bytes: int, auto: bool) -> tuple[object, ...]:
    """The Python decoder's answer in the native binding's shape."""
    event = (decode if auto else decode_ubi)(raw, max_bytes)
    if isinstance(event, Invalid):
        return (event.reason, event.detail)
    return python_answer_of(event)


def python_answer_of(event: object) -> tuple[object, ...]:
    # (the field order of the event's model, as the binding answers: reference_answer's shape)
    return tuple(getattr(event, name) for name in type(event).model_fields)  # type: ignore[attr-defined]


#: details that differ where the record took the native event's path (decode.rs, whose
#: details are brought to parity separately: docs/native.md "The invalid details")
NATIVE_PATH_DETAILS: list[bytes] = []


def assert_agree(raw: bytes, max_bytes: int = MAX_BYTES) -> None:
    for auto, native_decode in ((True, _native.decode), (False, _native.decode_ubi)):
        want = python_ubi(raw, max_bytes, auto)
        got = native_decode(raw, max_bytes)
        assert len(got) == len(want), (auto, raw, want, got)
        if len(want) == 2 and want[0] == got[0] and want[1] != got[1]:
            # the same reason, another detail: allowed only where the Python decoder answered
            # as its native path does (the same detail as decode_native's)
            assert python_answer(raw, max_bytes) == want, (auto, raw, want, got)
            NATIVE_PATH_DETAILS.append(raw)
            continue
        assert native.same_answer(want, got), (auto, raw, want, got)


# --- strategies --------------------------------------------------------------------------------

_OBJECT_ID = (
    _IDS
    | st.integers(-(2**65), 2**65)
    | st.sampled_from([2**64 - 1, -(2**64) + 1, 2**64, -(2**64)])
    | _JUNK
)
_ATTRIBUTES = st.dictionaries(
    st.text(max_size=3) | st.sampled_from(["k" * 64, "k" * 65, "application", "ab_test_id"]),
    _JUNK | st.sampled_from(["v" * 256, "v" * 257, 1e16, 1e-5, -0.0, 2**70, True]),
    max_size=40,
)
_ORDINAL_INDEX = st.integers(-2, 1_000_001) | _JUNK | st.sampled_from(["5", 2.0, 2**70])
_ORDINAL = (
    st.integers(-2, 1_000_001)
    | st.sampled_from([999_999, 1_000_000, 2**70, -(2**70), 3.0, 3.5, "3", " 4 ", "1_0", "3.0"])
    | st.sampled_from(["x", "", "-1", "+2", "1__0", True, False, None])
    | st.fixed_dictionaries({"index": _ORDINAL_INDEX})
    | st.fixed_dictionaries({}, optional={"x": _JUNK})
    | _JUNK
)
_ACTIONS = (
    st.sampled_from(
        ["click", " Click_Through ", "impression", "IMPRESSION", "purchase", "", "  ", "İ" * 60]
    )
    | st.text(max_size=5)
    | st.just("a" * 101)
)


def _ubi_query() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "query_id": _IDS,
            "query_response_hit_ids": st.lists(_OBJECT_ID, min_size=0, max_size=4),
            "timestamp": _TIMESTAMPS,
        },
        optional={
            "user_query": _QUERIES | st.none() | st.just("ﷺ" * 100),
            "query_attributes": _ATTRIBUTES | st.none() | _JUNK,
            "application": st.text(max_size=8) | st.none() | st.just("a" * 257),
        },
    )


def _ab_query() -> st.SearchStrategy[dict[str, Any]]:
    hit = st.fixed_dictionaries(
        {"_id": _OBJECT_ID}, optional={"_search_configuration_id": _IDS | st.none()}
    )
    return st.fixed_dictionaries(
        {
            "query_id": _IDS,
            "test_id": _IDS | _JUNK,
            "hits": st.lists(hit | _JUNK, min_size=0, max_size=4),
            "timestamp": _TIMESTAMPS,
        },
        optional={
            "user_query": _QUERIES | st.none(),
            "query_attributes": _ATTRIBUTES | st.none(),
            "application": st.text(max_size=8) | st.none(),
        },
    )


def _ubi_event() -> st.SearchStrategy[dict[str, Any]]:
    target = st.fixed_dictionaries(
        {}, optional={"object_id": _OBJECT_ID, "id": _OBJECT_ID, "other": _JUNK}
    )
    position = st.fixed_dictionaries({}, optional={"ordinal": _ORDINAL}) | _JUNK
    attributes = st.fixed_dictionaries(
        {}, optional={"object": target | _JUNK, "position": position | st.none()}
    )
    return st.fixed_dictionaries(
        {
            "action_name": _ACTIONS | _JUNK,
            "query_id": _IDS,
            "event_attributes": attributes | _JUNK,
            "timestamp": _TIMESTAMPS,
        }
    )


_UBI = _ubi_query() | _ab_query() | _ubi_event()

# well-formed records (valid but for rare draws): the fields of valid events compared
_GOOD_ID = st.text(min_size=1, max_size=12) | st.integers(-(2**63), 2**63)
_GOOD_TIME = st.integers(0, 4 * 10**12) | st.sampled_from(
    ["2026-01-01T00:00:00.5Z", "1700000000000"]
)
_SCALARS = st.dictionaries(
    st.text(min_size=1, max_size=6),
    st.text(max_size=8) | st.integers() | st.floats() | st.booleans() | st.none(),
    max_size=5,
)
_GOOD_UBI = (
    st.fixed_dictionaries(
        {
            "query_id": st.text(min_size=1, max_size=12),
            "query_response_hit_ids": st.lists(_GOOD_ID, min_size=1, max_size=5),
            "timestamp": _GOOD_TIME,
        },
        optional={
            "user_query": _QUERIES,
            "query_attributes": _SCALARS,
            "application": st.text(max_size=8),
        },
    )
    | st.fixed_dictionaries(
        {
            "query_id": st.text(min_size=1, max_size=12),
            "test_id": st.text(max_size=8),
            "hits": st.lists(
                st.fixed_dictionaries(
                    {"_id": _GOOD_ID},
                    optional={"_search_configuration_id": st.sampled_from(["A", "B", None])},
                ),
                min_size=1,
                max_size=5,
            ),
            "timestamp": _GOOD_TIME,
        },
        optional={"user_query": _QUERIES, "query_attributes": _SCALARS},
    )
    | st.fixed_dictionaries(
        {
            "action_name": st.sampled_from(["click", "Click_Through", "add_to_cart", " Purchase"]),
            "query_id": st.text(min_size=1, max_size=12),
            "event_attributes": st.fixed_dictionaries(
                {"object": st.fixed_dictionaries({"object_id": _GOOD_ID})},
                optional={
                    "position": st.fixed_dictionaries(
                        {},
                        optional={
                            "ordinal": st.integers(0, 999_999)
                            | st.fixed_dictionaries({"index": st.integers(0, 50)})
                        },
                    )
                },
            ),
            "timestamp": _GOOD_TIME,
        }
    )
)


@st.composite
def _ubi_mutated(draw: st.DrawFn) -> dict[str, Any]:
    record = dict(draw(_UBI))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from([*sorted(record), "hits", "test_id", "action_name", "type"]))
        if draw(st.booleans()):
            record.pop(key, None)
        else:
            record[key] = draw(_JUNK)
    return record


@st.composite
def _damaged(draw: st.DrawFn) -> bytes:
    raw = _dumps(draw(_ubi_mutated() | _mutated()), draw(st.booleans()))
    how = draw(st.sampled_from(["none", "truncate", "byte", "bom", "dup", "trail", "list"]))
    if how == "truncate":
        return raw[: draw(st.integers(0, len(raw)))]
    if how == "byte":
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + draw(st.binary(min_size=1, max_size=3)) + raw[at:]
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "dup":  # duplicate keys: the last wins (and a key's first place is kept)
        return raw[:-1] + b',"query_id":"dup"}' if raw.endswith(b"}") and len(raw) > 2 else raw
    if how == "trail":
        return raw + b" x"
    if how == "list":
        return b"[" + raw + b"]"
    return raw


_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_UBI, st.booleans())
def test_ubi_records_agree(record: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(record, ensure_ascii))


@_SETTINGS
@given(_GOOD_UBI, st.booleans())
def test_valid_ubi_records_agree(record: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(record, ensure_ascii))


@_SETTINGS
@given(_ubi_mutated(), st.booleans())
def test_mutated_ubi_records_agree(record: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(record, ensure_ascii))


@_SETTINGS
@given(_damaged())
def test_damaged_bytes_agree(raw: bytes) -> None:
    assert_agree(raw)


@settings(max_examples=100, deadline=None)
@given(_EVENTS | _UBI, st.integers(0, 400))
def test_size_cap_agrees(record: dict[str, Any], max_bytes: int) -> None:
    assert_agree(_dumps(record, True), max_bytes)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_agree(raw: bytes) -> None:
    assert_agree(raw)


def _literals() -> list[bytes]:
    """Every record literal of the Python tests of the decoders (bytes, and strings that look
    like JSON objects), and the records of docs/input-formats.md."""
    found: set[bytes] = set()
    for name in ("test_events_ubi.py", "test_events_decode.py", "test_events_interleaving.py"):
        tree = ast.parse((_TESTS / "events" / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant):
                if isinstance(node.value, bytes):
                    found.add(node.value)
                elif isinstance(node.value, str) and node.value.lstrip().startswith("{"):
                    found.add(node.value.encode("utf-8", "surrogatepass"))
            elif isinstance(node, ast.Dict):  # dict displays of records: dumped when literal
                with contextlib.suppress(ValueError, TypeError):
                    found.add(json.dumps(ast.literal_eval(node)).encode())
    for line in (_TESTS.parents[1] / "docs" / "input-formats.md").read_text().splitlines():
        if line.startswith("{"):
            found.add(line.encode())
    return sorted(found)


LITERALS = _literals()


def test_test_literals_agree() -> None:
    assert len(LITERALS) > 50  # the test files were found and read
    for raw in LITERALS:
        assert_agree(raw)


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        (
            b'{"query_id":"q","query_response_hit_ids":["a",7],"timestamp":1,'
            b'"query_attributes":{"x":1e16,"y":false},"application":"shop"}',
            (
                "impression",
                "q",
                1,
                ("a", "7"),
                None,
                "",
                {"x": "1e+16", "y": "false", "application": "shop"},
                None,
                None,
            ),
        ),
        (
            b'{"action_name":"Click_Through","query_id":"q","timestamp":"1970-01-01T00:00:01Z",'
            b'"event_attributes":{"object":{"id":5},"position":{"ordinal":0}}}',
            ("click", "q", "5", 1000, "click", None, 1, None),
        ),
    ],
)
def test_golden_fields(raw: bytes, want: tuple[object, ...]) -> None:
    """Fields written down by hand from ubi.py's mapping rules (ordinal 0 is position 1)."""
    assert _native.decode_ubi(raw, MAX_BYTES) == want
    assert python_ubi(raw, MAX_BYTES, auto=False) == want


def test_native_events_read_by_auto_as_by_native() -> None:
    raw = b'{"type":"click","request_id":"r","doc_id":"d","timestamp":1}'
    assert _native.decode(raw, MAX_BYTES) == python_answer(raw)


_BIG = b"9" * 5000
_ORD = b'{"action_name":"x","query_id":"q","timestamp":1,"event_attributes":{"object":{"id":"d"},'


@pytest.mark.parametrize(
    "raw",
    [
        b'{"query_id":"q","query_response_hit_ids":["a"],"timestamp":1,'
        b'"query_attributes":{"a":' + _BIG + b"}}",
        b'{"query_id":"q","query_response_hit_ids":["a"],"timestamp":1,'
        b'"query_attributes":{"a":1,"b":2,"a":[1]}}',  # the last value, the first place
        b'{"query_id":"q","query_response_hit_ids":[18446744073709551615,-18446744073709551615],'
        b'"timestamp":1}',
        b'{"query_id":"q","query_response_hit_ids":[18446744073709551616],"timestamp":1}',
        b"\xef\xbb\xbf\xef\xbb\xbf{}",
        b'{"typ\\u0065":"click","request_id":"r","doc_id":"d","timestamp":1}',
        _ORD + b'"position":{"ordinal":{"index":999999}}}}',
        _ORD + b'"position":{"ordinal":{"index":1000000}}}}',
        _ORD + b'"position":{"ordinal":"\\u0033"}}}',
        _ORD + b'"position":{"ordinal":"  12_3.000  "}}}',
        _ORD + b'"position":{"ordinal":"\xef\xbc\x93"}}}',  # a full-width digit
        _ORD + b'"position":{"ordinal":1e3}}}',
        _ORD + b'"position":{"ordinal":"0x10"}}}',
        _ORD + b'"position":{"ordinal":{"index":"' + b"1" * 30 + b'"}}}}',
        b'{"action_name":"\\u0130","query_id":"q","timestamp":1,'
        b'"event_attributes":{"object":{"id":"d"}}}',
    ],
)
def test_edge_records_agree(raw: bytes) -> None:
    assert_agree(raw)
