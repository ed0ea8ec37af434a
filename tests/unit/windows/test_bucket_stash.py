"""BucketStash: the open buckets of one stream of lists, handed out once, in order."""

from __future__ import annotations

from streameval.windows.stash import BucketStash


def _count(stash: BucketStash[list[int]], ts: int) -> None:
    acc = stash.open(ts)
    if acc is not None:
        acc.append(ts)


def test_buckets_are_handed_out_once_in_order_when_the_horizon_completes_them() -> None:
    stash: BucketStash[list[int]] = BucketStash(10, list)
    for ts in (25, 3, 14, 9, 31):
        _count(stash, ts)
    assert stash.take(19) == [(0, [3, 9])]  # bucket 10 is not complete before 20
    assert stash.take(19) == []
    assert stash.take(30) == [(10, [14]), (20, [25])]
    assert list(stash.pending) == [30]


def test_a_list_of_a_closed_bucket_is_ignored_and_counted() -> None:
    stash: BucketStash[list[int]] = BucketStash(10, list)
    stash.take(20)
    _count(stash, 15)  # re-read after its bucket was handed out
    _count(stash, 20)
    assert stash.ignored == 1 and stash.pending == {20: [20]}


def test_close_before_drops_what_the_state_topic_holds_already() -> None:
    stash: BucketStash[list[int]] = BucketStash(10, list)
    for ts in (5, 15, 25):
        _count(stash, ts)
    stash.close_before(20)
    assert stash.pending == {20: [25]} and stash.closed == 20
    stash.close_before(10)  # never backwards
    assert stash.closed == 20
    stash.clear()
    assert stash.pending == {}
