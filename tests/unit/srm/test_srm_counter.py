"""The one-process consumer of finalized lists (streameval.srm.counter): every list counts once
in the bucket of its impression, and the test does not depend on when ``advance`` is called nor
on the order of the lists within what the horizon has not yet passed."""

from __future__ import annotations

import random

from streameval.engine.consumers import DeclinesJudged, JudgedEarlyConsumer
from streameval.snapshot import SrmRow
from streameval.srm.arms import arm_reader
from streameval.srm.counter import SrmCounter
from streameval.srm.sequential import SrmTest
from streameval.values import ScoredList

B = 10_000
T0 = 1_700_000_000_000
LATE = 30_000  # how far behind the newest impression a list may still be finalized
TEMPLATE = ScoredList("r", "q", 0, {}, ("ltr", "control"), (), False, None, False)


def _counter() -> SrmCounter:
    return SrmCounter(SrmTest(None, 0.01, 50.0), arm_reader(("ranker", "arm"), {"arm"}), B)


def _lists(seed: int, order_seed: int = 0, n: int = 6000) -> list[ScoredList]:
    """Impressions 20 ms apart; treatment lists 8 % fewer (a mismatch that alarms); some lists
    with no arm. Finalization order: by impression time plus a random delay below LATE."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        arm = rng.choices(["control", "treatment", ""], weights=[0.52, 0.46, 0.02])[0]
        out.append(TEMPLATE._replace(timestamp=T0 + 20 * i, segment=("ltr", arm)))
    late = random.Random(order_seed)
    delays = [late.randrange(LATE) for _ in out]
    order = sorted(range(n), key=lambda i: out[i].timestamp + delays[i])
    return [out[i] for i in order]


def _run(lists: list[ScoredList], advance_every: int | None, seed: int) -> SrmRow | None:
    """Hand out the lists, telling the horizon (the newest impression less LATE) after every
    ``advance_every`` lists, or at random moments (None), then at the end of input."""
    rng = random.Random(seed)
    counter = _counter()
    newest = 0
    for i, scored in enumerate(lists):
        counter.add(scored)
        newest = max(newest, scored.timestamp)
        due = rng.random() < 0.01 if advance_every is None else not (i + 1) % advance_every
        if due:
            counter.advance(newest - LATE)
    counter.advance(newest + B)
    return counter.test.row()


def test_the_moments_of_advance_do_not_change_the_test() -> None:
    lists = _lists(1)
    reference = _run(lists, 1, 0)
    assert reference is not None
    assert reference.alarm and reference.first_alarm_ms is not None
    assert sum(a.lists for a in reference.arms) + reference.excluded == len(lists)
    assert reference.excluded > 0
    for every, seed in [(7, 0), (500, 0), (None, 1), (None, 2), (len(lists) + 1, 0)]:
        assert _run(lists, every, seed) == reference


def test_the_order_within_the_open_buckets_does_not_change_the_test() -> None:
    """The same impressions, finalized in other orders (other delays): the same test."""
    rows = {_run(_lists(1, order_seed), 3, 0) for order_seed in (1, 2, 3)}
    assert len(rows) == 1


def test_a_list_for_a_closed_bucket_is_not_counted_and_a_reset_drops_open_buckets() -> None:
    counter = _counter()
    counter.add(TEMPLATE._replace(timestamp=T0, segment=("x", "control")))
    counter.add(TEMPLATE._replace(timestamp=T0 + 1, segment=("x", "treatment")))
    counter.advance(T0 + B)
    counter.add(TEMPLATE._replace(timestamp=T0 + 2, segment=("x", "treatment")))  # re-read
    assert counter.ignored == 1
    counter.add(TEMPLATE._replace(timestamp=T0 + B, segment=("x", "treatment")))
    counter.reset()  # a re-read: the open bucket's lists come again
    counter.add(TEMPLATE._replace(timestamp=T0 + B, segment=("x", "treatment")))
    counter.advance(T0 + 2 * B)
    assert counter.test.counts == {"control": 1, "treatment": 2}


def test_it_is_reset_on_a_re_read_but_takes_no_judged_score_early() -> None:
    counter = _counter()
    assert isinstance(counter, JudgedEarlyConsumer)
    assert isinstance(counter, DeclinesJudged) and not counter.takes_judged
