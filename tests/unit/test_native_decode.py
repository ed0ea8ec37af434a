"""The native decoder (native/src/decode.rs, ``streameval._native``) against the Python one
(``streameval.events.decode.decode_native``), the reference: for every record, the same event
(every field equal) or the same invalid ``reason`` and ``detail`` (character for character).

Records: hypothesis-generated valid events of the three types, their mutations (wrong types,
missing fields, bad timestamps, huge values, nested junk, unicode in queries), byte-level damage
(non-UTF-8, non-JSON, truncation, a byte order mark, deep nesting), and every line of a
simulator log (``streameval.sim.traffic``, the records of ``streameval simulate``, noise on).

The details are pydantic's wording: the first error of the model's fields in order, its
location, ``(+n more)`` counting every error (a result item that fails counts one per member of
its union), the Python ``repr`` of an unknown ``type``, and the characters ``str.isprintable``
refuses escaped. Golden details, derived by hand from those rules: :data:`GOLDEN_DETAILS`.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import json
from datetime import datetime
from itertools import islice
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from streameval import native
from streameval.events import bounds
from streameval.sim import SimConfig, traffic
from tests.ci import require_native

require_native("native decoder")

MAX_BYTES = 4096
SIM_START_MS = 1_700_000_000_000


def python_answer(raw: bytes, max_bytes: int = MAX_BYTES) -> tuple[object, ...]:
    """The Python decoder's answer in the native binding's shape."""
    return native.reference_answer(raw, max_bytes)


def assert_agree(raw: bytes, max_bytes: int = MAX_BYTES) -> tuple[object, ...]:
    want = python_answer(raw, max_bytes)
    got = native.decode_native(raw, max_bytes)
    # invalid: the reason and the detail; valid: every field, of the same type
    assert native.same_answer(want, got), (raw, want, got)
    return want


# --- strategies --------------------------------------------------------------------------------

_JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
_IDS = st.text(min_size=1, max_size=12) | st.sampled_from(["", "x" * 256, "x" * 257, "é" * 257])
_QUERIES = st.text(max_size=30) | st.sampled_from(
    [
        "Red  Shoes ",
        "STRASSE",
        "Straße",
        "ﬁle",
        "\u3000ＲＥＤ\u00a0",
        "\x1cA\x1fb",
        "",
        "   ",
        "ǅ",
        "\U000e0100",
    ]
)


@st.composite
def _rfc3339(draw: st.DrawFn) -> str:
    y = draw(st.integers(1960, 10000))
    mo, d = draw(st.integers(0, 13)), draw(st.integers(0, 32))
    h, mi, s = draw(st.integers(0, 25)), draw(st.integers(0, 61)), draw(st.integers(0, 61))
    date = draw(st.sampled_from([f"{y:04d}-{mo:02d}-{d:02d}", f"{y:04d}-W{mo:02d}-{d % 10}"]))
    sep = draw(st.sampled_from("Tt x"))
    time = draw(
        st.sampled_from(
            [f"{h:02d}:{mi:02d}:{s:02d}", f"{h:02d}{mi:02d}{s:02d}", f"{h:02d}:{mi:02d}"]
        )
    )
    frac = draw(st.sampled_from(["", ".1", ".123", ".123456", ".1234567", ",5", "."]))
    zone = draw(
        st.sampled_from(
            [
                "",
                "Z",
                "z",
                "+01:00",
                "-05:30",
                "+00:00",
                "+2359",
                "+24:00",
                "-00:00:01.5",
                "+1",
                "Zx",
            ]
        )
    )
    return draw(
        st.sampled_from(
            [date + sep + time + frac + zone, (date + sep + time + frac + zone).lower()]
        )
    )


_TIMESTAMPS = (
    st.integers(0, bounds.MAX_EPOCH_MS)
    | st.integers(-(2**70), 2**70)
    | st.floats(-1e16, 1e16)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _rfc3339()
    | st.integers(0, 10**17).map(str)
    | st.text(max_size=20)
)
_NUMBERS = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.floats(-2e12, 2e12)
)
_RESULT = (
    _IDS
    | st.fixed_dictionaries(
        {"doc_id": _IDS},
        optional={
            "score": _NUMBERS
            | st.none()
            | st.sampled_from(["1.5", " 2 ", "1_0", "_1", "inf", "x", True]),
            "team": _IDS | st.none(),
        },
    )
    | st.fixed_dictionaries(
        {"id": _IDS}, optional={"[interleaving]": _IDS | st.none(), "doc_id": _JUNK}
    )
    | _JUNK
)


def _impression() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "type": st.just("impression"),
            "request_id": _IDS,
            "timestamp": _TIMESTAMPS,
            "results": st.lists(_RESULT, min_size=0, max_size=5) | st.just(["d"] * 1001),
        },
        optional={
            "query": _QUERIES | st.none() | st.just("q" * 1025),
            "query_id": _IDS | st.none(),
            "labels": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=4)
            | st.just({f"k{i}": "v" for i in range(33)})
            # around the cap, some pairs failing (they count only when key and value pass)
            | st.dictionaries(
                st.text(max_size=3), st.text(max_size=3) | _JUNK, min_size=30, max_size=36
            )
            | st.none(),
            "event_id": _IDS | st.none(),
            # not inputs: the decoders fill teams from the items, whatever these say
            "teams": _JUNK,
            "\x00teams": _JUNK,
        },
    )


def _click() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just("click"), "request_id": _IDS, "doc_id": _IDS, "timestamp": _TIMESTAMPS},
        optional={
            "action": st.sampled_from(["click", " Purchase ", "   ", "ǅ", "x" * 101])
            | st.text(max_size=5)
            | st.none(),
            "dwell_ms": _NUMBERS | st.none(),
            "position": st.integers(-5, 2_000_000)
            | st.integers(-(2**70), 2**70)
            | _NUMBERS
            | st.none(),
            "event_id": _IDS | st.none(),
        },
    )


def _judgment() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "type": st.just("judgment"),
            "doc_id": _IDS,
            "grade": _NUMBERS | st.integers(-1001, 1001),
            "timestamp": _TIMESTAMPS,
        },
        optional={
            "query_id": _IDS | st.none(),
            "query": _QUERIES | st.none(),
            "judge": _IDS | st.none() | st.just("j" * 257),
            "event_id": _IDS | st.none(),
        },
    )


_EVENTS = _impression() | _click() | _judgment()


# valid events only (each field drawn from its valid values): the fields must agree
_GOOD_ID = st.text(min_size=1, max_size=12)
_GOOD_TIME = (
    st.integers(0, bounds.MAX_EPOCH_MS)
    | st.floats(0, 4e12)
    | st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 30)).map(
        lambda d: d.isoformat(sep=random_sep(d))
    )
    | st.integers(0, 10**15).map(str)
)
_GOOD_RESULT = _GOOD_ID | st.fixed_dictionaries(
    {"doc_id": _GOOD_ID},
    optional={"score": st.floats(-1e9, 1e9) | st.none(), "team": _GOOD_ID | st.none()},
)
_GOOD_EVENTS = (
    st.fixed_dictionaries(
        {
            "type": st.just("impression"),
            "request_id": _GOOD_ID,
            "timestamp": _GOOD_TIME,
            "results": st.lists(_GOOD_RESULT, min_size=1, max_size=12),
        },
        optional={
            "query": _QUERIES,
            "query_id": _GOOD_ID | st.none(),
            "event_id": _GOOD_ID,
            "labels": st.dictionaries(
                st.text(min_size=1, max_size=4), st.text(max_size=4), max_size=4
            ),
        },
    )
    | st.fixed_dictionaries(
        {
            "type": st.just("click"),
            "request_id": _GOOD_ID,
            "doc_id": _GOOD_ID,
            "timestamp": _GOOD_TIME,
        },
        optional={
            "action": st.sampled_from(["click", " Purchase ", "DWELL", "ǅx"]),
            "event_id": _GOOD_ID,
            "dwell_ms": st.floats(0, 1e9) | st.integers(0, 10**9),
            "position": st.integers(1, 1000),
        },
    )
    | st.fixed_dictionaries(
        {
            "type": st.just("judgment"),
            "doc_id": _GOOD_ID,
            "timestamp": _GOOD_TIME,
            "grade": st.floats(-1000, 1000) | st.integers(-1000, 1000),
            "query": _QUERIES.filter(str.strip),
        },
        optional={"query_id": _GOOD_ID, "judge": st.text(max_size=8), "event_id": _GOOD_ID},
    )
)


def random_sep(d: datetime) -> str:
    """A separator RFC 3339 allows, chosen by the datetime (deterministic per example)."""
    return "Tt "[d.microsecond % 3]


@st.composite
def _mutated(draw: st.DrawFn) -> dict[str, Any]:
    event = dict(draw(_EVENTS | _GOOD_EVENTS))
    for _ in range(draw(st.integers(0, 2))):
        action = draw(st.sampled_from(["drop", "junk", "type"]))
        key = draw(st.sampled_from(sorted(event)))
        if action == "drop":
            event.pop(key)
        elif action == "junk":
            event[key] = draw(_JUNK)
        else:
            event["type"] = draw(
                _JUNK | st.sampled_from(["impression", "click", "judgment", "Click"])
            )
        if not event:
            break
    return event


def _dumps(event: object, ensure_ascii: bool) -> bytes:
    return json.dumps(event, ensure_ascii=ensure_ascii).encode("utf-8", "surrogatepass")


@st.composite
def _damaged(draw: st.DrawFn) -> bytes:
    raw = _dumps(draw(_mutated()), draw(st.booleans()))
    how = draw(st.sampled_from(["truncate", "byte", "bom", "nest", "dup", "trail"]))
    if how == "truncate":
        return raw[: draw(st.integers(0, len(raw)))]
    if how == "byte":
        at = draw(st.integers(0, len(raw)))
        return raw[:at] + draw(st.binary(min_size=1, max_size=3)) + raw[at:]
    if how == "bom":
        return b"\xef\xbb\xbf" + raw
    if how == "nest":
        depth = draw(st.integers(190, 260))
        return b'{"type":"click","x":' + b"[" * depth + b"]" * depth + b"}"
    if how == "dup":  # duplicate keys: the last wins
        return raw[:-1] + b',"type":"click"}' if raw.endswith(b"}") and len(raw) > 2 else raw
    return raw + b" x"


# --- the differential tests --------------------------------------------------------------------

_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(_GOOD_EVENTS, st.booleans())
def test_valid_events_agree(event: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(event, ensure_ascii))


@_SETTINGS
@given(_EVENTS, st.booleans())
def test_generated_events_agree(event: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(event, ensure_ascii))


@_SETTINGS
@given(_mutated(), st.booleans())
def test_mutated_events_agree(event: dict[str, Any], ensure_ascii: bool) -> None:
    assert_agree(_dumps(event, ensure_ascii))


@_SETTINGS
@given(_damaged())
def test_damaged_bytes_agree(raw: bytes) -> None:
    assert_agree(raw)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_arbitrary_bytes_agree(raw: bytes) -> None:
    assert_agree(raw)


@settings(max_examples=200, deadline=None)
@given(_EVENTS, st.integers(0, 400))
def test_size_cap_agrees(event: dict[str, Any], max_bytes: int) -> None:
    raw = _dumps(event, True)
    want = assert_agree(raw, max_bytes)
    assume(len(raw) > max_bytes)
    assert want[0] == "too_large"


def test_simulator_log_agrees() -> None:
    """Every line of a simulator log (duplicates and noise records on) decodes the same."""
    config = SimConfig(seed=3, noise_share=0.2, interleaving=True)
    lines = [record.raw for record in islice(traffic(config, SIM_START_MS), 20_000)]
    kinds = {assert_agree(line, 1_048_576)[0] for line in lines}
    assert {"impression", "click", "judgment"} <= kinds


# --- golden cases: details of each kind of error ----------------------------------------------

SAME_DETAIL = [
    b"x" * 5000,
    b"\xff",
    b'{"a":"\xff"}',
    b"[]",
    b"5",
    b"{}",
    b'{"type":"foo"}',
    b'{"type":"click"}',
    b'{"type":"click","request_id":"","doc_id":5,"timestamp":"x"}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1,"dwell_ms":NaN}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1e400}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1,"position":1.0}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1,"dwell_ms":-1}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1,"action":"   "}',
    b'{"type":"impression","request_id":"a","results":[],"timestamp":1}',
    b'{"type":"impression","request_id":"a","results":"x","timestamp":1}',
    b'{"type":"impression","request_id":"a","results":["x"],"timestamp":1,"labels":[]}',
    b'{"type":"judgment","doc_id":"a","grade":1,"timestamp":1}',
    b'{"type":"judgment","doc_id":"a","grade":1,"timestamp":1,"query":"  "}',
    b'{"type":"judgment","doc_id":"a","grade":1001,"query_id":"q","timestamp":1}',
    b'{"type":"judgment","doc_id":"a","grade":true,"query_id":"q","timestamp":1}',
    b'{"type":"click","request_id":"a","doc_id":"d","timestamp":1} x',
    b"[" * 300,
]


@pytest.mark.parametrize("raw", SAME_DETAIL, ids=lambda raw: raw[:40].decode("latin-1"))
def test_detail_agrees(raw: bytes) -> None:
    want = python_answer(raw)
    assert len(want) == 2  # every golden case is invalid
    assert native.decode_native(raw, MAX_BYTES) == want


_ITEM = "impression.results.0"
_RESULTS_HEAD = '{"type":"impression","request_id":"r","timestamp":1,"results":'
_PAIRS_32 = ",".join(f'"k{i}":"v"' for i in range(32))

#: (record, detail), the detail derived by hand from pydantic's rules (see the module docstring)
GOLDEN_DETAILS = [
    # an unknown type: str() of the Python value, cut to 40 characters, then its repr
    ('{"type":[1.5,null,true]}', "unknown type '[1.5, None, True]'"),
    ('{"type":{"a":1,"b":"x","a":2}}', "unknown type \"{'a': 2, 'b': 'x'}\""),
    ('{"type":1e16}', "unknown type '1e+16'"),
    ('{"type":0.00001}', "unknown type '1e-05'"),
    ('{"type":"it\'s"}', 'unknown type "it\'s"'),
    ('{"type":["' + "y" * 47 + '"]}', "unknown type \"['" + "y" * 35 + '..."'),
    # non-printable characters (not only control ones) escaped as unicode_escape writes them
    (
        '{"type":"\\u00ad\\u200b\\u2028\\ud834\\udd73"}',
        "unknown type '\\\\xad\\\\u200b\\\\u2028\\\\U0001d173'",
    ),
    (
        _RESULTS_HEAD + '["a"],"labels":{"\\u2028":5}}',
        "impression.labels.\\u2028: Input should be a valid string",
    ),
    # a failing result item: one error per member of its union (string, ResultItem, SolrDoc),
    # then too_short when no item passed
    (
        _RESULTS_HEAD + "[5]}",
        f"{_ITEM}.constrained-str: Input should be a valid string (+3 more)",
    ),
    (
        _RESULTS_HEAD + '[{"doc_id":"","score":"x"},"a"]}',
        f"{_ITEM}.constrained-str: Input should be a valid string (+4 more)",
    ),
    (
        _RESULTS_HEAD + '[""]}',
        f"{_ITEM}.constrained-str: String should have at least 1 character (+3 more)",
    ),
    # labels: a pair counts toward the cap of 32 only when its key and value pass; over the cap,
    # the length is the one error
    (
        _RESULTS_HEAD + '["a"],"labels":{"":"v",' + _PAIRS_32 + "}}",
        "impression.labels..[key]: String should have at least 1 character",
    ),
    (
        _RESULTS_HEAD + '["a"],"labels":{"":"v",' + _PAIRS_32 + ',"k32":"v"}}',
        "impression.labels: Dictionary should have at most 32 items after validation, not more",
    ),
    (
        _RESULTS_HEAD + "[5" + ',"a"' * 1001 + "]}",
        "impression.results: Tuple should have at most 1000 items after validation, not 1002",
    ),
]


@pytest.mark.parametrize(("raw", "detail"), GOLDEN_DETAILS, ids=lambda x: str(x)[:40])
def test_golden_details(raw: str, detail: str) -> None:
    assert native.decode_native(raw.encode(), 1_048_576)[1] == detail
    assert python_answer(raw.encode(), 1_048_576)[1] == detail


def test_valid_golden_fields() -> None:
    """Fields computed independently of either decoder."""
    raw = (
        '{"type":"impression","request_id":"r","timestamp":"2024-01-01T01:00:00+01:00",'
        '"results":[{"doc_id":"a","score":"1.5","team":"A"},"b",{"id":"c","[interleaving]":"B"}],'
        '"query":" Straße  ＲＥＤ ","labels":{"k":"v","k":"w"}}'
    ).encode()
    assert native.decode_native(raw, MAX_BYTES) == (
        "impression",
        "r",
        1_704_067_200_000,
        ("a", "b", "c"),
        " Straße  ＲＥＤ ",
        "strasse red",
        {"k": "w"},
        None,
        ("A", None, "B"),
    )
    assert assert_agree(raw)[0] == "impression"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xef\xbb\xbf{}", "schema"),
        (b"\xef\xbb\xbf[]", "schema"),
        (b'\xef\xbb\xbf{"action_name":"click","query_id":"q","timestamp":1}', "schema"),
        (b'\xef\xbb\xbf{"type":"click","request_id":"r","doc_id":"d","timestamp":1}', "click"),
    ],
)
def test_byte_order_mark_stays_native(raw: bytes, reason: str) -> None:
    """A native source's record after a byte order mark is read as native, never as UBI (the
    Python decoder read it again through ``decode``, which falls back to UBI)."""
    assert assert_agree(raw)[0] == reason
    if reason == "schema" and raw.endswith(b"}") and b"type" not in raw:
        assert python_answer(raw)[1] == 'no "type": a native event needs one'


def test_bounds_are_pythons() -> None:
    """The crate's bounds (native/src/bounds.rs) are those of streameval/events/bounds.py."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "native" / "src" / "bounds.rs").read_text()
    for name in dir(bounds):
        if name.startswith(("MAX_", "MIN_")):
            line = next(line for line in text.splitlines() if f"const {name}:" in line)
            value = line.split("=")[1].strip().rstrip(";").replace("_", "")
            assert float(value) == float(getattr(bounds, name)), name


@_SETTINGS
@given(_TIMESTAMPS)
def test_timestamps_agree(timestamp: object) -> None:
    """Every timestamp form (RFC 3339 variants, week dates, zones, floats, digit strings)."""
    assert_agree(
        _dumps({"type": "click", "request_id": "r", "doc_id": "d", "timestamp": timestamp}, True)
    )


@_SETTINGS
@given(_QUERIES | st.text(), st.booleans())
def test_query_normalization_agrees(query: str, ensure_ascii: bool) -> None:
    """NFKC + casefold + white space, Python's Unicode version (tables of native/src/tables.rs)."""
    event = {"type": "judgment", "doc_id": "d", "grade": 1, "timestamp": 1, "query": query}
    assert_agree(_dumps(event, ensure_ascii))
