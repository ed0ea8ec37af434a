"""The detectors' open buckets in Rust (native/src/query_sums.rs, ``streameval._native.QuerySums``)
against the Python reference (``streameval.detect.stash.Stash``): the same operations (lists
added, horizons taken, resets) give the same completed buckets, in the same order (buckets,
segments and queries: the detectors sum over them in that order), with bit-equal sums, and the
same ``ignored`` and ``closed``.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.detect.stash import Stash
from tests.ci import require_native

QuerySums = require_native("native query sums").QuerySums

BUCKET_MS = 10_000
SEGMENTS = [("control",), ("treatment",), ("treatment", "mobile"), ()]
QUERIES = ["q0", "q1", "q2", "é", ""]
#: NDCG values that make float sums order-sensitive, and an absent one
VALUES = st.one_of(
    st.none(),
    st.sampled_from([0.0, 1.0, 0.1, 0.2, 0.3, 1 / 3, 0.7]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)

_add = st.tuples(
    st.just("add"),
    st.integers(min_value=-2 * BUCKET_MS, max_value=8 * BUCKET_MS),
    st.sampled_from(SEGMENTS),
    st.sampled_from(QUERIES),
    st.lists(VALUES, min_size=4, max_size=4),
)
_take = st.tuples(st.just("take"), st.integers(min_value=-BUCKET_MS, max_value=9 * BUCKET_MS))
_clear = st.tuples(st.just("clear"))
OPERATIONS = st.lists(st.one_of(_add, _add, _add, _take, _clear), max_size=80)
#: watched positions of the cutoffs (1, 3, 5, 10): one k (the default path), several
POSITIONS = st.sampled_from([(0,), (3,), (1, 3), (0, 1, 2, 3)])


def _bits(agg: Any) -> tuple[int, bytes, bytes]:
    count, total, squares = agg
    return int(count), struct.pack("<d", total), struct.pack("<d", squares)


def _plain(taken: list[tuple[int, Any]]) -> list[Any]:
    """Completed buckets with their order made explicit and floats as their bits."""
    return [
        (
            b,
            [
                (segment, [[(q, _bits(a)) for q, a in per_query.items()] for per_query in per_k])
                for segment, per_k in data.items()
            ],
        )
        for b, data in taken
    ]


def _run(positions: tuple[int, ...], operations: list[tuple[Any, ...]]) -> None:
    python, rust = Stash(BUCKET_MS, positions), QuerySums(BUCKET_MS, list(positions))
    for op in operations:
        if op[0] == "add":
            _, ts, segment, query_id, values = op
            python.add(ts, segment, query_id, tuple(values))
            rust.add(ts, segment, query_id, tuple(values))
        elif op[0] == "take":
            assert _plain(rust.take(op[1])) == _plain(python.take(op[1]))
        else:
            python.clear()
            rust.clear()
        assert (rust.ignored, rust.closed) == (python.ignored, python.closed)
    assert _plain(rust.take(10**12)) == _plain(python.take(10**12))


@settings(max_examples=300, deadline=None)
@given(POSITIONS, OPERATIONS)
def test_the_same_buckets_as_the_python_stash(
    positions: tuple[int, ...], operations: list[tuple[Any, ...]]
) -> None:
    _run(positions, operations)


def test_a_query_repeated_in_a_bucket_sums_bit_for_bit() -> None:
    # 0.1 + 0.2 + 0.3 in that order is 0.6000000000000001; in another order 0.6
    values = [0.1, 0.2, 0.3]
    operations = [("add", i, ("a",), "q", [v, None, None, None]) for i, v in enumerate(values)]
    _run((0,), [*operations, ("take", BUCKET_MS)])
    rust = QuerySums(BUCKET_MS, [0])
    for i, v in enumerate(values):
        rust.add(i, ("a",), "q", (v,))
    ((b, data),) = rust.take(BUCKET_MS)
    assert b == 0
    assert data[("a",)][0]["q"] == (3, 0.1 + 0.2 + 0.3, 0.1 * 0.1 + 0.2 * 0.2 + 0.3 * 0.3)
    assert data[("a",)][0]["q"][1] == 0.6000000000000001


def test_a_bucket_must_be_positive() -> None:
    with pytest.raises(ValueError, match="bucket_ms"):
        QuerySums(0, [0])
