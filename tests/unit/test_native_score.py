"""Native scoring and judgment table (native/src/score/, judgments.rs, judgment_rules.rs;
``streameval._native``) against the Python reference: ``Scorer``, ``ListScorer``,
``discount_table``, ``MetricSpec``'s errors, the interleaving credit and team cap,
``JudgmentStore`` and ``JudgmentRules``.

Every float is compared bit for bit (the sign of a zero included): the native code runs the same
operations in the same order. Inputs are hypothesis-generated over every config variant that
changes scoring (``ks`` below and above the unrolling limit of 64, ``gain``, ``discount``,
``discount_base``, ``ideal``, ``unjudged``, ``no_relevance``), with repeated docs, unjudged docs,
negative, fractional and tiny grades, and judgment streams with identities, duplicates, keys,
tombstones and older grades.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval import native
from streameval.config import EvaluationSettings
from streameval.engine.judgments import JudgmentRules
from streameval.events.decode import dedup_key
from streameval.events.models import Impression, Judgment
from streameval.join.open_lists import OpenList
from streameval.score import MetricSpec, MetricSpecError, Scorer, discount_table
from streameval.score.credit import TeamCap, list_outcomes
from streameval.score.lists import ListScorer
from streameval.values import Interleaved
from tests.ci import require_native

_native = require_native("native scoring")

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def bits(value: object) -> object:
    """A float as its 8 bytes (so 0.0 and -0.0 differ), containers element-wise."""
    if isinstance(value, float):
        return struct.pack("<d", value)
    if isinstance(value, tuple | list):
        return tuple(bits(v) for v in value)
    return value


def assert_same(native_value: object, python_value: object, what: str) -> None:
    assert bits(native_value) == bits(python_value), f"{what}: {native_value!r} != {python_value!r}"


# --- strategies --------------------------------------------------------------------------------

#: grades as they reach the scorer: small integers (as floats or ints), halves and thirds (means
#: of judges), negatives, -0.0, tiny and large values within the event bounds (±1000)
grades_st = st.one_of(
    st.sampled_from([0.0, 1.0, 2.0, 3.0, -1.0, -0.0, 0.5, 1.5, 2.5, 1 / 3, 2 / 3, 5e-324]),
    st.integers(-3, 4),
    st.floats(-1000.0, 1000.0, allow_nan=False, allow_infinity=False),
)
ks_st = st.one_of(
    st.lists(st.integers(1, 20), min_size=1, max_size=5),
    st.lists(st.integers(1, 100), min_size=1, max_size=4),  # some above 64: the looped form
    st.just([1, 3, 5, 10]),
)
base_st = st.one_of(
    st.sampled_from([2.0, 1.5, math.e, 3.0, 10.0]),
    st.floats(1.0001, 50.0, allow_nan=False, allow_infinity=False),
)
spec_st = st.builds(
    MetricSpec,
    ks=ks_st.map(tuple),
    gain=st.sampled_from(["linear", "exponential"]),
    discount=st.sampled_from(["log2", "jarvelin"]),
    discount_base=base_st,
)
DOCS = [f"d{i}" for i in range(12)]
doc_lists_st = st.lists(st.sampled_from(DOCS), min_size=1, max_size=30)


def spec_kwargs(spec: MetricSpec) -> dict[str, Any]:
    return {
        "ks": list(spec.ks),
        "gain": spec.gain,
        "discount": spec.discount,
        "discount_base": spec.discount_base,
    }


# --- the metric core ---------------------------------------------------------------------------


@pytest.mark.parametrize("discount", ["log2", "jarvelin"])
@pytest.mark.parametrize("base", [2.0, 1.5, math.e, 3.0, 10.0, 1.0000001, 997.3])
def test_discount_tables_equal_bit_for_bit(discount: str, base: float) -> None:
    spec = MetricSpec(ks=(1,), discount=discount, discount_base=base)  # type: ignore[arg-type]
    assert_same(_native.discount_table(1000, discount, base), discount_table(spec, 1000), "table")


@pytest.mark.parametrize(
    ("kwargs", "python_kwargs"),
    [
        ({"ks": []}, {"ks": ()}),
        ({"ks": [0]}, {"ks": (0,)}),
        ({"ks": [3, 1001]}, {"ks": (3, 1001)}),
        ({"ks": [1], "gain": "quadratic"}, {"gain": "quadratic"}),
        ({"ks": [1], "discount": "ln"}, {"discount": "ln"}),
        ({"ks": [1], "discount_base": 1.0}, {"discount_base": 1.0}),
        ({"ks": [1], "discount_base": 0.5}, {"discount_base": 0.5}),
        ({"ks": [1], "discount_base": math.inf}, {"discount_base": math.inf}),
        ({"ks": [1], "discount_base": math.nan}, {"discount_base": math.nan}),
    ],
)
def test_spec_errors_name_the_key(kwargs: dict[str, Any], python_kwargs: dict[str, Any]) -> None:
    with pytest.raises(MetricSpecError) as python_error:
        MetricSpec(**python_kwargs)
    with pytest.raises(ValueError) as native_error:
        _native.score_batch([[1.0]], **kwargs)
    assert str(native_error.value) == str(python_error.value)


@SETTINGS
@given(
    spec=spec_st,
    lists=st.lists(st.lists(grades_st, max_size=40), min_size=1, max_size=6),
    pool_mode=st.sampled_from(["list", "pool", "best_first"]),
    pools=st.lists(st.lists(grades_st, max_size=120), min_size=6, max_size=6),
)
def test_scorer_matches_python(
    spec: MetricSpec, lists: list[list[float]], pool_mode: str, pools: list[list[float]]
) -> None:
    scorer = Scorer(spec)
    pools = pools[: len(lists)]
    if pool_mode == "best_first":
        pools = [sorted(p, reverse=True) for p in pools]
    best_first = pool_mode == "best_first"
    if pool_mode == "list":
        got = _native.score_batch(lists, **spec_kwargs(spec))
        expected = [scorer.score(g, g) for g in lists]
    else:
        got = _native.score_batch(lists, pools, best_first=best_first, **spec_kwargs(spec))
        expected = [
            scorer.score(g, p, best_first=best_first) for g, p in zip(lists, pools, strict=True)
        ]
    for (dcg, idcg, ndcg), want in zip(got, expected, strict=True):
        assert_same(dcg, want.dcg, "dcg")
        assert_same(idcg, want.idcg, "idcg")
        assert_same(ndcg, None if want.ndcg[0] is None else want.ndcg, "ndcg")
    # the batch object reads the lists once and scores them the same way
    batch = _native.GradeBatch(lists, None if pool_mode == "list" else pools)
    assert len(batch) == len(lists)
    again = batch.score(best_first=best_first, ndcg_only=True, **spec_kwargs(spec))
    assert_same(again, [ndcg for _, _, ndcg in got], "GradeBatch ndcg")


# --- judgment streams, the judgment table ------------------------------------------------------

QUERIES = ["q0", "q1", "q2"]
JUDGES = ["", "alice", "bob"]
KEYS = [b"k0", b"k1", b"k2", b"k3"]

judgment_st = st.fixed_dictionaries(
    {
        "query_id": st.sampled_from(QUERIES),
        "doc_id": st.sampled_from(DOCS),
        "judge": st.sampled_from(JUDGES),
        # a decoded judgment's grade is a float (pydantic converts an integer)
        "grade": st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0, -1.0, -0.0]), grades_st).map(float),
        "timestamp": st.integers(0, 5),
        "event_id": st.one_of(st.none(), st.sampled_from(["e0", "e1", "e2", "e3"])),
    }
)
#: a record of a judgment stream: unkeyed, keyed, a tombstone, or the same record again
record_st = st.one_of(
    st.tuples(st.just("plain"), judgment_st),
    st.tuples(st.just("keyed"), judgment_st, st.sampled_from(KEYS)),
    st.tuples(st.just("tombstone"), st.sampled_from(KEYS)),
    st.tuples(st.just("again")),
)


def run_stream(
    records: list[tuple[Any, ...]], max_ids: int
) -> tuple[JudgmentRules, Any, list[tuple[str, str]]]:
    """Apply ``records`` to a Python JudgmentRules and a native JudgmentTable: every outcome."""
    rules = JudgmentRules(max_ids)
    table = _native.JudgmentTable(max_ids)
    outcomes: list[tuple[str, str]] = []
    last: tuple[Any, ...] | None = None
    for drawn in records:
        record = last if drawn[0] == "again" else drawn
        if record is None:
            continue
        last = record
        if record[0] == "tombstone":
            outcomes.append((table.tombstone(record[1]), rules.tombstone(record[1]).value))
            continue
        fields = record[1]
        judgment = Judgment.model_construct(type="judgment", query=None, **fields)
        raw = repr(sorted(fields.items())).encode()
        key = record[2] if record[0] == "keyed" else None
        identity = dedup_key(judgment, raw)
        got = table.apply(
            fields["query_id"],
            fields["doc_id"],
            fields["judge"],
            fields["grade"],
            fields["timestamp"],
            identity=identity,
            key=key,
        )
        outcomes.append((got, rules.apply(judgment, raw, key).value))
    return rules, table, outcomes


def assert_same_table(rules: JudgmentRules, table: Any) -> None:
    store = rules.store
    assert len(table) == len(store)
    assert table.ids == (len(rules.ids), rules.ids.forgotten)
    for q in [*QUERIES, "unknown"]:
        assert table.version(q) == store.version(q), q
        assert_same(table.pool(q), store.pool(q), f"pool of {q}")
        grades = store.grades(q)
        assert table.grades(q).keys() == grades.keys()
        for doc, grade in grades.items():
            assert_same(table.grade(q, doc), grade, f"grade of {q}/{doc}")
        python_judges = [
            (doc, [(judge, ts, g) for judge, (ts, g) in judges.items()])
            for doc, judges in store.judges_of(q).items()
        ]
        assert_same(table.judges_of(q), python_judges, f"judges of {q}")


@SETTINGS
@given(records=st.lists(record_st, max_size=40), max_ids=st.integers(1, 6))
def test_judgment_table_matches_python(records: list[tuple[Any, ...]], max_ids: int) -> None:
    rules, table, outcomes = run_stream(records, max_ids)
    for got, expected in outcomes:
        assert got == expected
    assert_same_table(rules, table)


def test_judgment_store_calls_match_python() -> None:
    """``JudgmentStore.apply``'s answers, ``replace`` and ``delete`` (no identities, no keys)."""
    rules = JudgmentRules(10)
    table = _native.JudgmentTable(10)
    calls = [
        ("apply", "q", "a", "x", 2.0, 5, False),
        ("apply", "q", "a", "x", 2.0, 5, False),  # the same again: False
        ("apply", "q", "a", "x", 1.0, 3, False),  # older: True, nothing changes
        ("apply", "q", "a", "y", 1.0, 3, False),
        ("apply", "q", "a", "x", 0.0, 1, True),  # replace: wins whatever its time
        ("delete", "q", "a", "y"),
        ("delete", "q", "a", "y"),
        ("delete", "q", "a", "x"),
        ("apply", "q", "b", "x", 3.0, 1, False),
    ]
    for call in calls:
        if call[0] == "apply":
            _, q, d, judge, grade, ts, replace = call
            judgment = Judgment.model_construct(
                type="judgment",
                query_id=q,
                query=None,
                doc_id=d,
                judge=judge,
                grade=grade,
                timestamp=ts,
                event_id=None,
            )
            got = table.store_apply(q, d, judge, grade, ts, replace=replace)
            assert got == rules.store.apply(judgment, replace=bool(replace)), call
        else:
            assert table.delete(*call[1:]) == rules.store.delete(*call[1:]), call
        assert_same_table(rules, table)
    # six changes: three grades set, two deleted (the query with them), one more set
    assert table.version("q") == rules.store.version("q") == 6


# --- finalized lists: both relevance sources, interleaving -------------------------------------

evaluation_st = st.builds(
    lambda ks, gain, discount, base, ideal, unjudged, no_relevance, credit: EvaluationSettings(
        ks=tuple(sorted(set(ks))),
        gain=gain,
        discount=discount,
        discount_base=base,
        ideal=ideal,
        unjudged=unjudged,
        no_relevance=no_relevance,
        interleaving={"credit": credit, "max_teams": 3},
    ),
    ks_st,
    st.sampled_from(["linear", "exponential"]),
    st.sampled_from(["log2", "jarvelin"]),
    base_st,
    st.sampled_from(["pool", "list"]),
    st.sampled_from(["zero", "condensed"]),
    st.sampled_from(["skip", "zero"]),
    st.sampled_from(["clicks", "grades"]),
)
TEAMS = ["A", "B", "C", "D", "E", None]
list_st = st.tuples(
    st.sampled_from([*QUERIES, "", "unjudged"]),
    doc_lists_st,
    st.one_of(st.none(), st.dictionaries(st.sampled_from(DOCS), grades_st, max_size=6)),
    st.one_of(st.none(), st.lists(st.sampled_from(TEAMS), min_size=30, max_size=30)),
    st.sets(st.sampled_from(DOCS), max_size=4),
)


def open_list(query_id: str, doc_ids: list[str], grades: dict[str, float] | None) -> OpenList:
    impression = Impression.model_construct(
        type="impression",
        request_id="r",
        timestamp=0,
        doc_ids=tuple(doc_ids),
        query=None,
        query_id=query_id,
        labels={},
        event_id=None,
        teams=None,
    )
    lst = OpenList(impression, ())
    lst.grades = grades
    return lst


def native_list_scorer(evaluation: EvaluationSettings) -> Any:
    return _native.ListScorer(**native.scoring_options(evaluation))


def source_fields(source: Any) -> tuple[object, ...]:
    return (source.outcome, source.ndcg, source.dcg, source.idcg, source.coverage)


@SETTINGS
@given(
    evaluation=evaluation_st,
    records=st.lists(record_st, max_size=25),
    lists=st.lists(list_st, min_size=1, max_size=6),
)
def test_list_scorer_matches_python(
    evaluation: EvaluationSettings, records: list[tuple[Any, ...]], lists: list[Any]
) -> None:
    rules, table, _ = run_stream(records, 100)
    python_scorer = ListScorer(evaluation)
    scorer = native_list_scorer(evaluation)
    doc_lists = [docs for _, docs, _, _, _ in lists]
    query_ids = [q for q, _, _, _, _ in lists]
    implicit = scorer.implicit_batch(doc_lists, [g for _, _, g, _, _ in lists])
    judged = scorer.judged_table_batch(query_ids, doc_lists, table)
    store = rules.store
    judged_maps = [dict(store.grades(q)) if q else {} for q in query_ids]
    pools = [list(store.pool(q)) for q in query_ids]
    judged_again = scorer.judged_batch(doc_lists, judged_maps, pools)
    for i, (query_id, docs, grades, _, _) in enumerate(lists):
        scored = python_scorer.score(open_list(query_id, docs, grades), store)
        python_implicit, python_judged = scored.sources
        assert_same(implicit[i], source_fields(python_implicit), "implicit")
        assert_same(judged[i], source_fields(python_judged), "judged")
        assert_same(judged_again[i], source_fields(python_judged), "judged from maps")


@SETTINGS
@given(
    lists=st.lists(list_st, min_size=1, max_size=8), credit=st.sampled_from(["clicks", "grades"])
)
def test_interleaving_outcomes_match_python(lists: list[Any], credit: str) -> None:
    python_cap, cap = TeamCap(3), _native.TeamCap(3)
    for _, docs, grades, all_teams, clicked in lists:
        if all_teams is None:
            continue
        teams = all_teams[: len(docs)]
        interleaved = Interleaved(tuple(docs), tuple(teams), frozenset(clicked), grades or {})
        expected = python_cap.outcomes(list_outcomes(interleaved, credit))
        got = cap.list_outcomes(docs, teams, clicked, grades, credit)
        assert tuple(got) == expected
