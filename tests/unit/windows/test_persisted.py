"""The state topic's value format and the group's table of finalized buckets."""

from __future__ import annotations

import json

import pytest

from streameval.kafka.state_table import StateTable, parse_state_key, state_key
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.values import ScoredList, SourceScore
from streameval.windows.persisted import BadState, SourceBuckets, decode_bucket, encode_bucket
from streameval.windows.store import Bucket


def scored(ts: int, ndcg: float, segment: tuple[str, ...] = ("r", "a")) -> ScoredList:
    source = SourceScore("implicit", "scored", (1, 3), (ndcg, ndcg / 3), (1.0, 1.0), (1.0, 3.0))
    judged = SourceScore(
        "judged", "scored", (1, 3), (None, 0.1), (0.0, 0.1), (1.0, 1.0), coverage=(1.0, 0.5)
    )
    return ScoredList("r", "q", ts, {}, segment, (source, judged), True, 2, True)


def test_a_bucket_read_back_equals_the_one_written_to_the_bit() -> None:
    bucket = Bucket()
    for value in (0.1, 0.7, 1 / 3, 2**-40):
        bucket.fold(scored(1_000, value))
    bucket.fold(scored(2_000, 0.3, ("r", "b")))
    back = decode_bucket(encode_bucket(bucket))
    assert not isinstance(back, BadState)
    assert back.ndcg == bucket.ndcg
    assert back.coverage == bucket.coverage
    assert back.engagement == bucket.engagement
    # the sums are those of the values: 0.1 + 0.7 + 1/3 + 2^-40, at k = 1
    acc = back.ndcg[("implicit", ("r", "a"), (1, 3))]
    assert acc[0] == 4 and acc[1] == 0.1 + 0.7 + 1 / 3 + 2**-40


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe",
        b"[]",
        b'{"v": 2, "n": [], "c": [], "e": []}',
        b'{"v": 1, "n": [["implicit", ["a"], [1], [1, 0.5]]], "c": [], "e": []}',  # 2 of 3
        b'{"v": 1, "n": [["implicit", ["a"], [], []]], "c": [], "e": []}',
        b'{"v": 1, "n": [["implicit", ["a"], [1.5], [1, 0.5, 0.25]]], "c": [], "e": []}',
        b'{"v": 1, "n": [], "c": [], "e": [[["a"], [1, 2, 3]]]}',
        b'{"v": 1, "n": [], "c": [], "e": [[["a"], [1, 0, "x", 0, 0]]]}',
        b'{"v": 1, "n": [], "c": [], "e": [[[1], [1, 0, 0, 0, 0]]]}',
        b'{"v": 1, "n": "x", "c": [], "e": []}',
        b'{"v": 1, "n": [], "c": [], "e": [[["a"], [1, 0, 1e999, 0, 0]]]}',
        # an integer past the floats (math.isfinite raised OverflowError out of decode_bucket)
        b'{"v": 1, "n": [], "c": [], "e": [[["a"], [1, 0, ' + b"9" * 400 + b", 0, 0]]]}",
        b"[" * 100_000,  # nested past the recursion limit (json.loads raised RecursionError)
    ],
)
def test_what_is_not_a_bucket_of_ours_is_a_value_not_an_exception(raw: bytes) -> None:
    assert isinstance(decode_bucket(raw), BadState)


def test_source_buckets_hand_out_complete_buckets_until_persisted() -> None:
    buckets = SourceBuckets(10_000)
    buckets.add("t/0", scored(1_000, 1.0))
    buckets.add("t/0", scored(15_000, 0.5))
    buckets.add("t/1", scored(9_999, 0.25))
    assert [(s, start) for s, start, _ in buckets.complete(10_000)] == [("t/0", 0), ("t/1", 0)]
    assert [(s, start) for s, start, _ in buckets.complete(20_000)] == [
        ("t/0", 0),
        ("t/0", 10_000),
        ("t/1", 0),
    ]
    buckets.persisted(10_000)
    assert [(s, start) for s, start, _ in buckets.complete(20_000)] == [("t/0", 10_000)]


def test_keys_round_trip_and_foreign_keys_are_refused() -> None:
    key = state_key("streameval", "search-clicks/3", 1_767_225_600_000)
    assert parse_state_key(key) == ("streameval", "search-clicks/3", 1_767_225_600_000)
    for bad in (None, b"x", b"g\x1ft/0\x1fnot-a-number", b"\xff\x1f\x1f1", b"a\x1fb\x1fc\x1f1"):
        assert parse_state_key(bad) is None


def test_the_table_applies_values_tombstones_and_counts_what_is_not_ours() -> None:
    table = StateTable("g", codecs=STATE_CODECS)
    bucket = Bucket()
    bucket.fold(scored(1_000, 0.5))
    value = encode_bucket(bucket)
    table.apply(state_key("g", "t/0", 0), value)
    table.apply(state_key("g", "t/0", 10_000), value)
    table.apply(state_key("other-group", "t/0", 20_000), value)  # not ours: ignored, not bad
    assert [s for s, _ in table.buckets("t/0", 0, 30_000)] == [0, 10_000]
    table.apply(state_key("g", "t/0", 0), None)  # tombstone
    assert [s for s, _ in table.buckets("t/0", 0, 30_000)] == [10_000]
    assert table.invalid == 0 and not table.is_bad("t/0")
    table.apply(b"garbage", value)
    table.apply(state_key("g", "t/1", 0), json.dumps({"v": 1}).encode())
    assert table.invalid == 2
    assert table.is_bad("t/1") and not table.is_bad("t/0")
    assert set(table.view()) == {"t/0"}
    assert table.complete_before("t/0") == 20_000  # the bucket at 10 s is the newest held
    assert table.complete_before("t/1") is None
