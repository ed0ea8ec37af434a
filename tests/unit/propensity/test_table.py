"""The estimator's table: counts per (query, doc, rank), the pair sums it harvests (checked
against the definition computed from the raw shows), its cap."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from streameval.propensity import PositionTable

R = 4


def _by_definition(shows: list[tuple[str, str, int, bool]]) -> list[list[float]]:
    """T[k][j] = Σ_(q,d) min(n_k, n_j) · c_k / n_k over (q, d) shown at both k and j."""
    n: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * R)
    c: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0] * R)
    for q, d, k, clicked in shows:
        n[q, d][k] += 1
        c[q, d][k] += clicked
    pairs = [[0.0] * R for _ in range(R)]
    for key, counts in n.items():
        for k in range(R):
            for j in range(R):
                if k != j and counts[k] and counts[j]:
                    pairs[k][j] += min(counts[k], counts[j]) * c[key][k] / counts[k]
    return pairs


def test_pair_sums_follow_their_definition_however_often_harvested() -> None:
    rng = random.Random(3)
    docs = [f"d{i}" for i in range(6)]
    table = PositionTable(R, 1_000)
    shows: list[tuple[str, str, int, bool]] = []
    for step in range(400):
        query = rng.choice(["q1", "q2"])
        shown = rng.sample(docs, 5)  # one beyond max_rank: not recorded
        gains = [float(rng.random() < 0.3) * rng.choice([1.0, 2.0]) for _ in shown]
        table.add(query, shown, gains)
        shows += [(query, d, k, gains[k] > 0) for k, d in enumerate(shown[:R])]
        if step % 37 == 0:
            table.harvest()
    expected = _by_definition(shows)
    got = table.harvest()
    for k in range(R):
        assert got[k] == pytest.approx(expected[k], abs=1e-9)
        # the groups of queries add up to the whole
        assert [sum(g[k][j] for g in table.groups) for j in range(R)] == pytest.approx(
            expected[k], abs=1e-9
        )
    assert table.entries == 12
    # q1 and q2 fall in different groups (by the CRC-32 of their ids), so two groups hold sums
    assert sum(any(any(row) for row in g) for g in table.groups) == 2


def test_counts_gains_and_a_repeated_doc_at_its_first_position() -> None:
    table = PositionTable(R, 10)
    table.add("q", ["a", "b", "a", "c"], [2.0, 0.0, 3.0, 1.0])
    table.add("q", ["b", "a"], [1.0, 0.0])
    a, b = table.docs("q")["a"], table.docs("q")["b"]
    assert a[:R] == [1.0, 1.0, 0.0, 0.0]  # impressions per rank (the repeat at 3 not counted)
    assert a[R : 2 * R] == [1.0, 0.0, 0.0, 0.0]  # interacted impressions per rank
    assert a[2 * R] == 2.0  # gains
    assert b[:R] == [1.0, 1.0, 0.0, 0.0]
    assert b[R : 2 * R] == [1.0, 0.0, 0.0, 0.0]
    assert b[2 * R] == 1.0
    # a: clicked 1/1 at rank 1, 0/1 at rank 2; b: 1/1 at rank 1 (second list), 0/1 at rank 2
    assert table.harvest()[0][1] == 2.0
    assert table.pairs[1][0] == 0.0
    assert table.docs("other") == {}


def test_the_cap_keeps_the_entries_first_seen_and_counts_the_rest() -> None:
    table = PositionTable(R, 3)
    table.add("q1", ["a", "b"], [0.0, 0.0])
    table.add("q2", ["c", "d", "e"], [1.0, 0.0, 0.0])
    table.add("q1", ["b", "a"], [1.0, 0.0])
    assert table.entries == 3
    assert table.dropped == 2  # d and e
    assert set(table.docs("q1")) == {"a", "b"}
    assert set(table.docs("q2")) == {"c"}


def test_expected_examinations_follow_the_weights_incrementally() -> None:
    table = PositionTable(R, 10)
    table.add("q", ["a", "b"], [0.0, 0.0])
    entry = table.docs("q")["a"]
    assert table.expected(entry) == 0.0  # no weights yet
    table.set_weights((1.0, 0.5, 0.25, 0.2), 1)
    assert table.expected(entry) == 1.0
    table.add("q", ["b", "c", "a"], [0.0, 0.0, 0.0])
    assert table.expected(entry) == pytest.approx(1.25)
    table.set_weights((1.0, 0.4, 0.2, 0.1), 2)
    assert table.expected(entry) == pytest.approx(1.2)
