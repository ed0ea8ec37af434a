"""Property tests on thousands of random lists.

References: pytrec_eval's ``ndcg_cut`` (trec_eval: gain = rel, discount 1/log2(i+1), ideal
from the query's qrels = our pool ideal; integer grades only), scikit-learn's ``ndcg_score``
(list ideal, fractional grades; ties in y_score are averaged, so scores are distinct), and a
naive reference written here for the variants neither library has (exponential gain, Järvelin
discount, negative grades). All to 1e-9 absolute.
"""

import math
from collections.abc import Callable, Sequence

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from streameval.score import (
    MetricSpec,
    Scorer,
    condensed,
    grades_in_rank_order,
)

TOL = 1e-9

ks_strategy = st.lists(st.integers(1, 40), min_size=1, max_size=5)

# one query: the shown list (grade or None = unjudged, per position) and the extra judged docs
# of the pool that the ranker did not show
query_strategy = st.tuples(
    st.lists(st.one_of(st.none(), st.integers(0, 3)), min_size=1, max_size=30),
    st.lists(st.integers(0, 3), min_size=1, max_size=10),
)


@settings(max_examples=200, deadline=None)
@given(queries=st.lists(query_strategy, min_size=1, max_size=25), ks=ks_strategy)
def test_pool_ideal_matches_pytrec_eval_ndcg_cut(
    queries: list[tuple[list[int | None], list[int]]], ks: list[int]
) -> None:
    spec = MetricSpec(ks=tuple(ks))
    scorer = Scorer(spec)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    ours = {}
    for q, (shown, extra) in enumerate(queries):
        qid = f"q{q}"
        docs = [f"s{i}" for i in range(len(shown))]
        judged = {doc: g for doc, g in zip(docs, shown, strict=True) if g is not None}
        judged.update({f"x{j}": g for j, g in enumerate(extra)})
        qrels[qid] = judged
        # distinct descending scores: trec_eval's order is exactly the list order
        run[qid] = {doc: float(len(docs) - i) for i, doc in enumerate(docs)}
        grades = grades_in_rank_order(docs, judged)
        ours[qid] = scorer.score(grades, list(judged.values()))
    measure = "ndcg_cut." + ",".join(str(k) for k in spec.ks)
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {measure}).evaluate(run)
    assert theirs.keys() == ours.keys()
    for qid, scores in ours.items():
        for k, value in zip(scores.ks, scores.ndcg, strict=True):
            expected = theirs[qid][f"ndcg_cut_{k}"]
            if value is None:  # no relevant doc in the pool: trec_eval reports 0
                assert expected == 0.0
                assert max(qrels[qid].values()) == 0
            else:
                assert value == pytest.approx(expected, abs=TOL)


fractional_grade = st.integers(0, 30).map(lambda tenths: tenths / 10)


@settings(max_examples=800, deadline=None)
@given(grades=st.lists(fractional_grade, min_size=2, max_size=30), k=st.integers(1, 35))
def test_list_ideal_matches_sklearn_ndcg_score(grades: list[float], k: int) -> None:
    value = Scorer(MetricSpec(ks=(k,))).score(grades, grades).ndcg[0]
    scores = [float(len(grades) - i) for i in range(len(grades))]  # distinct: no tie averaging
    expected = ndcg_score([grades], [scores], k=k)
    if value is None:  # sklearn reports 0 for an all-zero y_true
        assert expected == 0.0
        assert not any(grades)
    else:
        assert value == pytest.approx(expected, abs=TOL)


# --- a naive reference for every variant --------------------------------------------------


def _gain(spec: MetricSpec) -> Callable[[float], float]:
    if spec.gain == "linear":
        return lambda g: g
    return lambda g: 2**g - 1


def _discount(spec: MetricSpec, rank: int) -> float:
    if spec.discount == "log2":
        return 1 / math.log2(rank + 1)
    # Järvelin & Kekäläinen: no discount up to rank b, then 1/log_b(rank)
    b = spec.discount_base
    return 1.0 if rank <= b else 1 / math.log(rank, b)


def _reference(
    spec: MetricSpec, grades: Sequence[float], pool: Sequence[float], k: int
) -> tuple[float, float, float | None]:
    gain = _gain(spec)
    dcg = 0.0
    for rank, grade in enumerate(grades[:k], start=1):
        dcg += gain(grade) * _discount(spec, rank)
    best = sorted((gain(g) for g in pool if gain(g) > 0), reverse=True)[:k]
    idcg = 0.0
    for rank, g in enumerate(best, start=1):
        idcg += g * _discount(spec, rank)
    return dcg, idcg, (dcg / idcg if idcg > 0 else None)


spec_strategy = st.builds(
    MetricSpec,
    ks=ks_strategy.map(tuple),
    gain=st.sampled_from(["linear", "exponential"]),
    discount=st.sampled_from(["log2", "jarvelin"]),
    discount_base=st.sampled_from([1.5, 2.0, 2.5, 3.0, 10.0]),
)
signed_grade = st.integers(-20, 40).map(lambda tenths: tenths / 10)


@settings(max_examples=600, deadline=None)
@given(
    spec=spec_strategy,
    grades=st.lists(signed_grade, max_size=60),
    extra=st.lists(signed_grade, max_size=400),
)
def test_every_variant_matches_the_naive_reference(
    spec: MetricSpec, grades: list[float], extra: list[float]
) -> None:
    pool = grades + extra  # long pools exercise the heap path
    scores = Scorer(spec).score(grades, pool)
    for i, k in enumerate(scores.ks):
        dcg, idcg, ndcg = _reference(spec, grades, pool, k)
        assert scores.dcg[i] == pytest.approx(dcg, abs=TOL)
        assert scores.idcg[i] == pytest.approx(idcg, abs=TOL)
        if ndcg is None:
            assert scores.ndcg[i] is None
        else:
            assert scores.ndcg[i] == pytest.approx(ndcg, abs=TOL)
            # the pool holds every grade of the list: NDCG never exceeds 1, even with negatives
            assert ndcg <= 1 + TOL


# --- invariants ---------------------------------------------------------------------------

nonneg_grades = st.lists(st.integers(0, 40).map(lambda tenths: tenths / 10), max_size=40)


@settings(max_examples=500, deadline=None)
@given(spec=spec_strategy, grades=nonneg_grades, extra=nonneg_grades)
def test_non_negative_grades_give_ndcg_in_unit_interval(
    spec: MetricSpec, grades: list[float], extra: list[float]
) -> None:
    scorer = Scorer(spec)
    for pool in (grades, grades + extra):
        for value in scorer.score(grades, pool).ndcg:
            if value is not None:
                assert -TOL <= value <= 1 + TOL
    # IDCG never decreases with k, nor does DCG with non-negative gains
    s = scorer.score(grades, grades + extra)
    assert all(a <= b + TOL for a, b in zip(s.idcg, s.idcg[1:], strict=False))
    assert all(a <= b + TOL for a, b in zip(s.dcg, s.dcg[1:], strict=False))


@settings(max_examples=500, deadline=None)
@given(spec=spec_strategy, grades=st.lists(signed_grade, min_size=1, max_size=40))
def test_perfect_ordering_scores_one(spec: MetricSpec, grades: list[float]) -> None:
    # the perfect list shows the docs best first and stops before any negatively graded one
    best = sorted((g for g in grades if g >= 0), reverse=True)
    scores = Scorer(spec).score(best, grades)
    if any(g > 0 for g in grades):
        assert scores.ndcg == pytest.approx((1.0,) * len(scores.ks), abs=TOL)
    else:
        assert scores.ndcg == (None,) * len(scores.ks)


@settings(max_examples=500, deadline=None)
@given(
    spec=spec_strategy,
    grades=st.lists(signed_grade, min_size=2, max_size=40),
    data=st.data(),
)
def test_moving_a_better_doc_down_never_raises_the_score(
    spec: MetricSpec, grades: list[float], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(grades) - 2))
    j = data.draw(st.integers(i + 1, len(grades) - 1))
    if grades[i] < grades[j]:
        grades[i], grades[j] = grades[j], grades[i]
    swapped = list(grades)
    swapped[i], swapped[j] = grades[j], grades[i]  # the better (or equal) doc goes down
    scorer = Scorer(spec)
    before = scorer.score(grades, grades)
    after = scorer.score(swapped, grades)
    for b, a in zip(before.dcg, after.dcg, strict=True):
        assert a <= b + TOL
    for nb, na in zip(before.ndcg, after.ndcg, strict=True):
        if nb is not None and na is not None:
            assert na <= nb + TOL


@settings(max_examples=300, deadline=None)
@given(spec=spec_strategy, grades=st.lists(signed_grade, max_size=30), pad=st.integers(1, 50))
def test_zero_padding_changes_nothing(spec: MetricSpec, grades: list[float], pad: int) -> None:
    scorer = Scorer(spec)
    assert scorer.score(grades + [0.0] * pad, grades) == scorer.score(grades, grades)


@settings(max_examples=300, deadline=None)
@given(grades=st.lists(signed_grade, max_size=30))
def test_condensing_a_fully_judged_list_is_identity(grades: list[float]) -> None:
    assert condensed(grades, [True] * len(grades)) == grades
    assert condensed(grades, [False] * len(grades)) == []


@settings(max_examples=300, deadline=None)
@given(
    docs=st.lists(st.sampled_from("abcdefgh"), max_size=20),
    grade_of=st.dictionaries(st.sampled_from("abcdef"), signed_grade),
)
def test_grades_in_rank_order_matches_a_naive_join(
    docs: list[str], grade_of: dict[str, float]
) -> None:
    expected = [
        0.0 if doc in docs[:position] else grade_of.get(doc, -9.0)
        for position, doc in enumerate(docs)
    ]
    assert grades_in_rank_order(docs, grade_of, default=-9.0) == expected
