"""Credit and outcomes of one interleaved list, against tables of cases worked out by hand."""

from __future__ import annotations

import pytest

from streameval.score.credit import (
    LOSS,
    NO_CLICK,
    TIE,
    WIN,
    credit_of,
    list_outcomes,
    pair_outcomes,
    team_credit,
)
from streameval.values import Interleaved

# (doc ids, teams, what each doc earned, expected credit per team)
CREDIT_CASES = [
    # two teams, one click on A's doc
    (("a", "b", "c", "d"), ("A", "B", "A", "B"), {"a": 1.0}, {"A": 1.0, "B": 0.0}),
    # two clicks each side: 1 + 1 = 2 for A (a, c), 1 for B (d)
    (("a", "b", "c", "d"), ("A", "B", "A", "B"), {"a": 1, "c": 1, "d": 1}, {"A": 2.0, "B": 1.0}),
    # repeated doc: "a" counts at its first position only, for that position's team (A), not B
    (("a", "b", "a"), ("A", "B", "B"), {"a": 1.0}, {"A": 1.0, "B": 0.0}),
    # repeated doc whose first copy has no team: nobody earns it, even the later copy's team
    (("a", "b", "a"), (None, "B", "A"), {"a": 1.0}, {"B": 0.0}),
    # a click on a result without a team earns nothing; the teams shown are still there at 0
    (("a", "b", "x"), ("A", "B", None), {"x": 1.0}, {"A": 0.0, "B": 0.0}),
    # a click on a doc not in the list earns nothing
    (("a", "b"), ("A", "B"), {"zzz": 1.0}, {"A": 0.0, "B": 0.0}),
    # three teams (multileaving), grades: A 3 (purchase) vs B 1 + 2 = 3, C 0
    (
        ("a", "b", "c", "d", "e"),
        ("A", "B", "C", "B", "A"),
        {"a": 3.0, "b": 1.0, "d": 2.0},
        {"A": 3.0, "B": 3.0, "C": 0.0},
    ),
]


@pytest.mark.parametrize(("docs", "teams", "earned", "expected"), CREDIT_CASES)
def test_team_credit(
    docs: tuple[str, ...],
    teams: tuple[str | None, ...],
    earned: dict[str, float],
    expected: dict[str, float],
) -> None:
    assert team_credit(docs, teams, earned) == expected


# (credit per team, expected (ranker, opponent, outcome) set)
OUTCOME_CASES = [
    ({"A": 1.0, "B": 0.0}, {("A", "B", WIN), ("B", "A", LOSS)}),
    ({"A": 0.0, "B": 2.0}, {("A", "B", LOSS), ("B", "A", WIN)}),
    ({"A": 1.0, "B": 1.0}, {("A", "B", TIE), ("B", "A", TIE)}),
    ({"A": 0.0, "B": 0.0}, {("A", "B", NO_CLICK), ("B", "A", NO_CLICK)}),
    # three teams: A beats both, B and C tie at 0 (the list had credit, so 0 = 0 is a tie)
    (
        {"A": 1.0, "B": 0.0, "C": 0.0},
        {
            ("A", "B", WIN),
            ("B", "A", LOSS),
            ("A", "C", WIN),
            ("C", "A", LOSS),
            ("B", "C", TIE),
            ("C", "B", TIE),
        },
    ),
    # three teams without any credit: every pair no_click
    (
        {"A": 0.0, "B": 0.0, "C": 0.0},
        {(r, o, NO_CLICK) for r in "ABC" for o in "ABC" if r != o},
    ),
    # one team only (the other contributed nothing shown): no pair, no outcome
    ({"A": 1.0}, set()),
]


@pytest.mark.parametrize(("credit", "expected"), OUTCOME_CASES)
def test_pair_outcomes(credit: dict[str, float], expected: set[tuple[str, str, str]]) -> None:
    out = pair_outcomes(credit)
    assert set(out) == expected
    assert len(out) == len(expected)  # each ordered pair once


def _list(clicked: set[str], grades: dict[str, float]) -> Interleaved:
    return Interleaved(("a", "b", "c", "d"), ("A", "B", "A", "B"), frozenset(clicked), grades)


def test_clicks_count_one_per_clicked_result_whatever_the_grade() -> None:
    # a purchase (grade 3) on B's "b" and clicks on A's "a" and "c": by clicks A 2 > B 1
    lst = _list({"a", "c", "b"}, {"a": 1.0, "c": 1.0, "b": 3.0})
    assert credit_of(lst, "clicks") == {"a": 1.0, "b": 1.0, "c": 1.0}
    assert set(list_outcomes(lst, "clicks")) == {("A", "B", WIN), ("B", "A", LOSS)}
    # by grades: A 1 + 1 = 2 < B 3
    assert set(list_outcomes(lst, "grades")) == {("A", "B", LOSS), ("B", "A", WIN)}


def test_an_interaction_without_click_earns_only_by_grades() -> None:
    # add_to_cart (grade 2) on "d" (B) without a click: no click credit at all -> no_click
    lst = _list(set(), {"d": 2.0})
    assert set(list_outcomes(lst, "clicks")) == {("A", "B", NO_CLICK), ("B", "A", NO_CLICK)}
    assert set(list_outcomes(lst, "grades")) == {("A", "B", LOSS), ("B", "A", WIN)}
