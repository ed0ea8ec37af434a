"""Table-driven unit cases for each pure function of the metric core."""

from itertools import pairwise
from math import log2 as lg

import pytest

from streameval.score import (
    CutoffScores,
    MetricSpec,
    ScoreInputError,
    Scorer,
    condensed,
    cumulative_gain,
    dcg_at_k,
    discount_table,
    exponential,
    gain_function,
    grades_in_rank_order,
    ideal_gains,
    jarvelin,
    judged_coverage,
    judged_in_rank_order,
    linear,
    log2,
    reciprocal_rank,
    reciprocal_rank_at,
)

# --- gains ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "lin", "exp"),
    [
        (0, 0.0, 0.0),  # 2^0 - 1
        (1, 1.0, 1.0),  # 2^1 - 1
        (3, 3.0, 7.0),  # 2^3 - 1
        (0.5, 0.5, 2**0.5 - 1),  # fractional: 0.41421
        (-1, -1.0, -0.5),  # 2^-1 - 1: a negative grade stays a (smaller) penalty
    ],
)
def test_gains(rel: float, lin: float, exp: float) -> None:
    assert linear(rel) == lin
    assert exponential(rel) == pytest.approx(exp, abs=1e-15)
    assert gain_function("linear")(rel) == lin
    assert gain_function("exponential")(rel) == pytest.approx(exp, abs=1e-15)


def test_exponential_overflow_is_an_input_error() -> None:
    with pytest.raises(ScoreInputError):
        exponential(2000)


# --- discounts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rank", "expected"),
    [(1, 1.0), (2, 1 / lg(3)), (3, 0.5), (7, 1 / 3), (15, 0.25)],  # 1/lg(i+1)
)
def test_log2_discount(rank: int, expected: float) -> None:
    assert log2(rank) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("rank", "base", "expected"),
    [
        # base 2: rank 1 undiscounted, rank 2 = 1/lg2 = 1, then 1/lg(i)
        (1, 2.0, 1.0),
        (2, 2.0, 1.0),
        (3, 2.0, 1 / lg(3)),
        (4, 2.0, 0.5),
        (8, 2.0, 1 / 3),
        # base 3: ranks 1..3 undiscounted (log3(2) < 1 would boost rank 2), rank 9 = 1/log3(9)
        (1, 3.0, 1.0),
        (2, 3.0, 1.0),
        (3, 3.0, 1.0),
        (4, 3.0, lg(3) / lg(4)),  # 1/log3(4) = 0.7925
        (9, 3.0, 0.5),
        # a base between integers: ranks ≤ 2.5 undiscounted, rank 3 = ln2.5/ln3 = 0.8340
        (2, 2.5, 1.0),
        (3, 2.5, lg(2.5) / lg(3)),
        # a base below 2: only rank 1 undiscounted, rank 2 = ln1.5/ln2 = 0.5850
        (1, 1.5, 1.0),
        (2, 1.5, lg(1.5)),
    ],
)
def test_jarvelin_discount(rank: int, base: float, expected: float) -> None:
    assert jarvelin(rank, base) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize("base", [1.1, 1.5, 2.0, 2.5, 3.0, 10.0])
def test_jarvelin_never_boosts_and_never_increases(base: float) -> None:
    values = [jarvelin(i, base) for i in range(1, 200)]
    assert values[0] == 1.0
    assert all(0 < v <= 1.0 for v in values)
    assert all(a >= b for a, b in pairwise(values))


@pytest.mark.parametrize("bad", [0, -1])
def test_discounts_reject_rank_below_one(bad: int) -> None:
    with pytest.raises(ScoreInputError):
        log2(bad)
    with pytest.raises(ScoreInputError):
        jarvelin(bad, 2.0)


def test_jarvelin_rejects_base_not_above_one() -> None:
    with pytest.raises(ScoreInputError):
        jarvelin(3, 1.0)


def test_discount_table_follows_spec_and_is_cached() -> None:
    log_spec = MetricSpec()
    table = discount_table(log_spec, 4)
    assert table == pytest.approx((1.0, 1 / lg(3), 0.5, 1 / lg(5)), abs=1e-15)
    assert discount_table(MetricSpec(ks=(1, 2)), 4) is table  # same (discount, base, n)
    jar = discount_table(MetricSpec(discount="jarvelin", discount_base=3.0), 5)
    assert jar == pytest.approx((1.0, 1.0, 1.0, lg(3) / lg(4), lg(3) / lg(5)), abs=1e-15)
    assert discount_table(log_spec, 0) == ()
    with pytest.raises(ScoreInputError):
        discount_table(log_spec, -1)


# --- dcg_at_k / ideal_gains / cumulative_gain ---------------------------------------------

D = (1.0, 1 / lg(3), 0.5, 1 / lg(5), 1 / lg(6))


@pytest.mark.parametrize(
    ("gains", "k", "expected"),
    [
        ([3, 2, 1], 1, 3.0),
        ([3, 2, 1], 2, 3 + 2 / lg(3)),
        ([3, 2, 1], 3, 3 + 2 / lg(3) + 0.5),
        ([3, 2, 1], 5, 3 + 2 / lg(3) + 0.5),  # k > len: padded with zero gain
        ([], 3, 0.0),
        ([0, 0, 4], 3, 2.0),
        ([1, -1], 2, 1 - 1 / lg(3)),
    ],
)
def test_dcg_at_k(gains: list[float], k: int, expected: float) -> None:
    assert dcg_at_k(gains, k, D) == pytest.approx(expected, abs=1e-15)


def test_dcg_at_k_rejects_bad_arguments() -> None:
    with pytest.raises(ScoreInputError):
        dcg_at_k([1.0], 0, D)
    with pytest.raises(ScoreInputError):
        dcg_at_k([1.0] * 6, 6, D)  # five discounts for six ranks


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([1, 3, 2], [3, 2, 1]),
        ([0.2, 0.6, 0.0], [0.6, 0.2, 0.0]),
        ([1, -1, 0, 2], [2, 1, 0]),  # negatives never in the ideal
        ([-1, -2], []),
        ([], []),
    ],
)
def test_ideal_gains(values: list[float], expected: list[float]) -> None:
    assert ideal_gains(values) == expected


@pytest.mark.parametrize(
    ("gains", "k", "expected"),
    [([3, 2, 1], 2, 5.0), ([3, 2, 1], 10, 6.0), ([], 1, 0.0), ([0.2, 0.6], 2, 0.8)],
)
def test_cumulative_gain(gains: list[float], k: int, expected: float) -> None:
    assert cumulative_gain(gains, k) == pytest.approx(expected, abs=1e-15)


def test_cumulative_gain_rejects_k_below_one() -> None:
    with pytest.raises(ScoreInputError):
        cumulative_gain([1.0], 0)


# --- reciprocal rank / coverage ------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ([True, False], 1.0),
        ([False, False, True], 1 / 3),
        ([False, True, True], 0.5),  # the first relevant one counts
        ([False, False], 0.0),
        ([], 0.0),
    ],
)
def test_reciprocal_rank(flags: list[bool], expected: float) -> None:
    assert reciprocal_rank(flags) == expected


@pytest.mark.parametrize(("position", "expected"), [(1, 1.0), (4, 0.25), (None, 0.0)])
def test_reciprocal_rank_at(position: int | None, expected: float) -> None:
    assert reciprocal_rank_at(position) == expected


def test_reciprocal_rank_at_rejects_zero_position() -> None:
    with pytest.raises(ScoreInputError):
        reciprocal_rank_at(0)


@pytest.mark.parametrize(
    ("flags", "k", "expected"),
    [
        ([True, True, True], 10, 1.0),  # a fully judged 3-doc list: 3/min(10, 3)
        ([True, False, True, False], 2, 0.5),  # 1 of the top 2
        ([True, False, True, False], 3, 2 / 3),
        ([True, False, True, False], 10, 0.5),  # 2 judged / 4 shown
        ([False], 1, 0.0),
        ([], 5, None),  # no positions, no coverage
    ],
)
def test_judged_coverage(flags: list[bool], k: int, expected: float | None) -> None:
    assert judged_coverage(flags, k) == expected


def test_judged_coverage_rejects_k_below_one() -> None:
    with pytest.raises(ScoreInputError):
        judged_coverage([True], 0)


# --- ranking helpers -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("docs", "expected"),
    [
        (["a", "b", "c"], [3.0, 0.0, 1.0]),  # b unjudged -> default 0
        (["a", "a", "c"], [3.0, 0.0, 1.0]),  # repeat gains nothing, c keeps rank 3
        (["c", "a", "c", "a"], [1.0, 3.0, 0.0, 0.0]),
        ([], []),
    ],
)
def test_grades_in_rank_order(docs: list[str], expected: list[float]) -> None:
    assert grades_in_rank_order(docs, {"a": 3.0, "c": 1.0}) == expected


def test_grades_in_rank_order_default_applies_to_unjudged_not_repeats() -> None:
    grades = grades_in_rank_order(["x", "a", "a"], {"a": 2.0}, default=-1.0)
    assert grades == [-1.0, 2.0, 0.0]


def test_judged_in_rank_order() -> None:
    assert judged_in_rank_order(["a", "b", "a"], {"a": 1.0}) == [True, False, True]


def test_condensed_drops_unjudged_and_closes_gaps() -> None:
    assert condensed([3.0, 0.0, 1.0, 0.0], [True, False, True, True]) == [3.0, 1.0, 0.0]
    with pytest.raises(ScoreInputError):
        condensed([1.0], [True, False])


def test_condensed_list_scores_higher_than_zero_filled() -> None:
    # zero-filled: [0(unjudged), 2] -> DCG@2 = 2/lg3; condensed: [2] -> DCG@2 = 2; ideal [2] = 2
    scorer = Scorer(MetricSpec(ks=(2,)))
    grades, flags = [0.0, 2.0], [False, True]
    assert scorer.score(grades, [2.0]).ndcg == pytest.approx((1 / lg(3),), abs=1e-15)
    assert scorer.score(condensed(grades, flags), [2.0]).ndcg == (1.0,)


# --- Scorer --------------------------------------------------------------------------------


def test_scorer_all_cutoffs_in_one_result() -> None:
    # grades 3,2,3,0,1,2 (seed 003) at ks 1, 3, 5, 10
    s = Scorer(MetricSpec()).score([3, 2, 3, 0, 1, 2], [3, 2, 3, 0, 1, 2])
    assert isinstance(s, CutoffScores)
    assert s.ks == (1, 3, 5, 10)
    dcg3 = 3 + 2 / lg(3) + 1.5
    dcg5 = dcg3 + 1 / lg(6)
    dcg10 = dcg5 + 2 / lg(7)
    idcg3 = 3 + 3 / lg(3) + 1
    idcg5 = idcg3 + 2 / lg(5) + 1 / lg(6)
    assert s.dcg == pytest.approx((3.0, dcg3, dcg5, dcg10), abs=1e-12)
    assert s.idcg == pytest.approx((3.0, idcg3, idcg5, idcg5), abs=1e-12)
    assert s.ndcg == pytest.approx((1.0, dcg3 / idcg3, dcg5 / idcg5, dcg10 / idcg5), abs=1e-12)
    assert s.has_relevance


@pytest.mark.parametrize(
    ("grades", "pool"),
    [
        ([0, 0, 0], [0, 0, 0]),
        ([], []),
        ([-1, 0], [-1, 0]),  # nothing positive anywhere
        ([0, 0], [0, -2]),
    ],
)
def test_scorer_zero_idcg_gives_none_not_an_error(grades: list[float], pool: list[float]) -> None:
    s = Scorer(MetricSpec(ks=(1, 3))).score(grades, pool)
    assert s.ndcg == (None, None)
    assert s.idcg == (0.0, 0.0)
    assert not s.has_relevance


def test_scorer_negative_dcg_without_relevance_still_reports_dcg() -> None:
    s = Scorer(MetricSpec(ks=(2,))).score([-1, 0], [-1, 0])
    assert s.dcg == (-1.0,)
    assert s.ndcg == (None,)


def test_scorer_single_cutoff() -> None:
    s = Scorer(MetricSpec(ks=(2,))).score([0, 1], [1])
    assert s.dcg == pytest.approx((1 / lg(3),), abs=1e-15)
    assert s.idcg == (1.0,)


def test_scorer_k_beyond_list_is_padded() -> None:
    s = Scorer(MetricSpec(ks=(1, 50))).score([1, 2], [1, 2])
    # DCG@50 = 1 + 2/lg3 ; IDCG@50 = 2 + 1/lg3
    assert s.ndcg == pytest.approx((0.5, (1 + 2 / lg(3)) / (2 + 1 / lg(3))), abs=1e-15)


def test_scorer_reads_only_max_k_of_a_long_list() -> None:
    grades = [1.0] + [0.0] * 998 + [5.0]
    assert Scorer(MetricSpec(ks=(3,))).score(grades, grades).dcg == (1.0,)


def test_scorer_large_pool_uses_the_top_of_the_pool() -> None:
    # pool much longer than max(ks) (heap path): only the 3 best grades matter
    pool = [0.0] * 500 + [1.0, 3.0, 2.0] + [0.5] * 500
    s = Scorer(MetricSpec(ks=(3,))).score([3.0], pool)
    assert s.idcg == pytest.approx((3 + 2 / lg(3) + 1 / 2,), abs=1e-15)


def test_scorer_exponential_jarvelin() -> None:
    # gains 2^g - 1 of [1, 3, 0, 2] = [1, 7, 0, 3]; jarvelin base 3: ranks 1..3 weigh 1, rank 4
    # weighs 1/log3(4). DCG@4 = 1 + 7 + 0 + 3·lg3/lg4; ideal [7, 3, 1, 0] -> 11.
    spec = MetricSpec(ks=(4,), gain="exponential", discount="jarvelin", discount_base=3.0)
    s = Scorer(spec).score([1, 3, 0, 2], [1, 3, 0, 2])
    assert s.dcg == pytest.approx((8 + 3 * lg(3) / lg(4),), abs=1e-12)
    assert s.idcg == (11.0,)


def test_scorer_exponential_overflow_is_an_input_error() -> None:
    with pytest.raises(ScoreInputError):
        Scorer(MetricSpec(gain="exponential")).score([2000], [2000])


def test_scorer_negative_grade_lowers_score_below_zero_possible() -> None:
    # [-3, 1]: DCG@2 = -3 + 1/lg3 = -2.369; ideal [1] -> 1. NDCG = -2.369
    s = Scorer(MetricSpec(ks=(2,))).score([-3, 1], [-3, 1])
    assert s.ndcg == pytest.approx((-3 + 1 / lg(3),), abs=1e-15)


def test_scorer_is_frozen_value() -> None:
    scorer = Scorer(MetricSpec())
    with pytest.raises(AttributeError):
        scorer.spec = MetricSpec(ks=(1,))  # type: ignore[misc]
    assert scorer == Scorer(MetricSpec())
