"""Rankers, the regression's document swap and the click model, one draw at a time."""

from __future__ import annotations

import random
from dataclasses import replace

from streameval.sim import SimConfig, catalogue_of
from streameval.sim.behaviour import Shown, degrade, interactions, rank
from streameval.sim.catalogue import Query, query_text

CONFIG = SimConfig(queries=50, candidates=20)


def test_a_noiseless_ranker_sorts_by_true_grade() -> None:
    query = Query("q", "q", ("a", "b", "c", "d"), (1, 3, 0, 2))
    shown = rank(query, 0.0, 3, random.Random(0))
    assert shown == Shown(("b", "d", "a"), (3, 2, 1))


def test_a_noisier_ranker_puts_less_relevance_on_top() -> None:
    catalogue = catalogue_of(CONFIG)
    rng = random.Random(1)

    def top_grades(noise: float) -> int:
        return sum(sum(rank(q, noise, 3, rng).grades) for q in catalogue.queries for _ in range(4))

    assert top_grades(0.0) > top_grades(1.0) > top_grades(100.0)


def test_degrade_replaces_the_given_share_by_distinct_off_topic_documents() -> None:
    catalogue = catalogue_of(CONFIG)
    rng = random.Random(2)
    query = catalogue.queries[7]
    own = set(query.doc_ids)
    replaced = total = 0
    for _ in range(1000):
        shown = rank(query, 1.0, 10, rng)
        worse = degrade(shown, 0.3, 7, catalogue, rng)
        assert len(set(worse.doc_ids)) == 10
        for before, after, grade in zip(shown.doc_ids, worse.doc_ids, worse.grades, strict=True):
            total += 1
            if after != before:
                replaced += 1
                assert after not in own
                assert grade == 0
    # 10000 positions at 0.3: sd sqrt(.3 * .7 / 10000) = 0.0046
    assert abs(replaced / total - 0.3) < 4 * 0.0046


def test_degrade_of_size_zero_or_one() -> None:
    catalogue = catalogue_of(CONFIG)
    shown = rank(catalogue.queries[0], 1.0, 10, random.Random(3))
    assert degrade(shown, 0.0, 0, catalogue, random.Random(4)) == shown
    gone = degrade(shown, 1.0, 0, catalogue, random.Random(4))
    assert not set(gone.doc_ids) & set(catalogue.queries[0].doc_ids)
    assert gone.grades == (0,) * 10


def test_interactions_are_in_time_order_inside_the_limit() -> None:
    config = replace(CONFIG, max_interaction_delay_ms=20_000)
    rng = random.Random(5)
    shown = Shown(tuple(f"d{i}" for i in range(10)), (3,) * 10)
    seen = 0
    for _ in range(500):
        events = interactions(shown, config, rng)
        delays = [e.delay_ms for e in events]
        assert delays == sorted(delays)
        assert all(0 < d <= 20_000 for d in delays)
        seen += len(events)
        for e in events:
            assert shown.doc_ids[e.position - 1] == e.doc_id
            assert (e.dwell_ms is not None) == (e.action == "dwell")
    # Every grade 3: a click somewhere with P = 1 - prod(1 - 0.7 / i, i = 1..10) = 0.934; the
    # first comes ~4 s in, then an 80 s dwell runs past the 20 s limit: about one event a list.
    assert 0.85 * 500 < seen < 500 * 1.5


def test_nobody_clicks_what_is_never_attractive() -> None:
    config = replace(CONFIG, click_given_grade=(0.0, 0.0, 0.0, 0.0))
    shown = Shown(tuple(f"d{i}" for i in range(10)), (3,) * 10)
    rng = random.Random(6)
    assert all(interactions(shown, config, rng) == [] for _ in range(200))


def test_query_texts_are_distinct_and_readable() -> None:
    texts = [query_text(i) for i in range(5000)]
    assert len(set(texts)) == 5000
    assert texts[0] == "shoes"
    assert all(t == t.strip() and "  " not in t for t in texts)
