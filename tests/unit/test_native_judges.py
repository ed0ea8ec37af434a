"""The judge tracker's per-list bookkeeping in Rust (native/src/judges/,
``streameval._native.JudgeTrackerCore`` over the native ``JudgmentTable``) against the Python
reference (``streameval.judges.tracker.JudgeTracker`` over ``JudgmentStore``): the same judgment
changes (grades, re-grades, older grades superseded, deletions) and finalized lists (heads
changing across minutes, more queries than the sketch holds, stale and fresh grades, re-read
lists, lists the windows do not take, with and without a judged source) with evictions and
resets between them give, at every step, the same head set, eviction horizon, families and
newest judgment time, and at every look the same freshness, head/tail coverage and agreement
rows, floats bit for bit (both add the same floats in the same order).

The Space-Saving sketch alone is checked the same way (``streameval._native.SpaceSaving``
against ``streameval.judges.frequency.SpaceSaving``): counts, errors and the top in order.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

from typing import Any, NamedTuple, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.config import EvaluationSettings, JudgesSettings
from streameval.durations import format_duration
from streameval.events.models import Judgment
from streameval.join.judgments import JudgmentStore
from streameval.join.open_lists import OpenList
from streameval.judges.frequency import SpaceSaving
from streameval.judges.tracker import JudgeTracker
from streameval.score.lists import ListScorer
from streameval.values import JUDGED, SCORED, ScoredList, SourceScore
from streameval.windows.spec import WindowSpec
from tests.ci import require_native

_native = require_native("native judge tracker")

BUCKET_MS = 10_000
WINDOWS = (60_000, 600_000)
QUERIES = [f"q{i}" for i in range(12)]
DOCS = [f"d{i}" for i in range(6)]
JUDGES = ["alice", "bob", "llm:a", "llm:b", "llm:c", "vendor/x", ""]
#: grades and coverages whose float sums depend on the order they are added in
GRADES = st.sampled_from([0.0, 1.0, 2.0, 3.0, 0.5, 0.1, 0.2, 1 / 3])
COVERAGES = st.sampled_from([0.0, 1.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.1, 0.2, 0.7, 0.25])


def _times(first_minute: int, last_minute: int) -> st.SearchStrategy[int]:
    """Times spread over whole minutes (heads are decided per minute; a plain integer range
    would mostly give times near 0)."""
    minutes = st.integers(min_value=first_minute, max_value=last_minute)
    return st.builds(lambda m, ms: m * 60_000 + ms, minutes, st.integers(0, 59_999))


#: impression times over ten minutes, a few before 0
TIMES = _times(-1, 9)


class _List(NamedTuple):
    """What the tracker reads of an OpenList."""

    query_id: str
    timestamp: int
    doc_ids: tuple[str, ...]
    counted_before: bool


_judgment = st.tuples(
    st.just("judgment"),
    st.sampled_from(QUERIES[:6]),
    st.sampled_from(DOCS),
    st.sampled_from(JUDGES),
    _times(-1, 4),  # mostly before the lists: stale docs
    GRADES,
)
_delete = st.tuples(
    st.just("delete"), st.sampled_from(QUERIES[:6]), st.sampled_from(DOCS), st.sampled_from(JUDGES)
)
#: the listener told of a doc that did not change: nothing may change (native side only)
_spurious = st.tuples(st.just("spurious"), st.sampled_from(QUERIES[:6]), st.sampled_from(DOCS))


@st.composite
def _lists(draw: st.DrawFn, ks: int) -> tuple[Any, ...]:
    query = draw(st.one_of(st.sampled_from(QUERIES[:3]), st.sampled_from(QUERIES)))
    ts = draw(TIMES)
    docs = tuple(draw(st.lists(st.sampled_from(DOCS), max_size=6)))
    counted_before = draw(st.integers(0, 4)) == 0
    shape = draw(st.integers(0, 5))
    coverage = (
        None  # no judged source
        if shape == 0
        else ()  # a judged source without coverage
        if shape == 1
        else draw(st.lists(COVERAGES, min_size=ks, max_size=ks).map(tuple))
    )
    windowed = draw(st.integers(0, 5)) != 0
    return ("list", query, ts, docs, counted_before, coverage, windowed)


#: horizons of the looks before an eviction or a reset and at the end: the 10m window covers
#: the lists' first minutes, the middle, the last ones, none
HORIZONS = (None, 0, 60_000, 300_000, 650_000, 1_300_000)
_evict = st.tuples(st.just("evict"), st.integers(min_value=0, max_value=1_300_000))
_look = st.tuples(st.just("look"), st.integers(min_value=0, max_value=1_300_000))
_reset = st.tuples(st.just("reset"))


def _operations(ks: int) -> st.SearchStrategy[list[tuple[Any, ...]]]:
    """Judgments first (so that lists meet judged docs, stale and fresh, and shared pairs),
    then judgment changes and lists, with the rarer evictions, looks and resets mixed in."""
    # (five distinct list strategies: one object given five times was drawn no more often
    # than given once, measured)
    step = st.one_of(_judgment, _delete, _spurious, *[_lists(ks) for _ in range(5)])
    rare = st.one_of(_evict, _look, _reset)
    first = st.lists(_judgment, min_size=5, max_size=30)
    mixed = st.integers(0, 7).flatmap(lambda i: rare if i == 0 else step)
    then = st.lists(mixed, min_size=10, max_size=80)
    return st.builds(lambda a, b: a + b, first, then)


CASES = st.tuples(
    st.sampled_from([(1, 3), (3,), (1, 3, 5, 10)]),  # ks
    st.sampled_from([1, 2, 3]),  # head_queries
    st.sampled_from([2, 3]),  # max_families
    st.sampled_from([20_000, 60_000, 120_000, 30 * 86_400_000]),  # max_age
)


def _scored(query_id: str, ts: int, ks: tuple[int, ...], coverage: Any) -> ScoredList:
    sources: tuple[SourceScore, ...] = ()
    if coverage is not None:
        n = len(ks)
        judged = SourceScore(
            JUDGED, SCORED, ks, (0.0,) * n, (0.0,) * n, (0.0,) * n, coverage or None
        )
        sources = (judged,)
    return ScoredList("r", query_id, ts, {}, (), sources, False, None, False)


class _Pair:
    """The Python tracker and the native one, driven alike."""

    def __init__(
        self, ks: tuple[int, ...], head_queries: int, max_families: int, max_age: int
    ) -> None:
        judges = JudgesSettings(
            families=("llm:", "vendor/"),
            max_families=max_families,
            agreement_windows=(60_000, 3_600_000),
            max_age=max_age,
            head_queries=head_queries,
        )
        evaluation = EvaluationSettings(ks=ks, windows=WINDOWS, bucket=BUCKET_MS)
        self.ks = tuple(sorted(ks))
        self.store = JudgmentStore()
        specs = [WindowSpec(w, BUCKET_MS) for w in WINDOWS]
        self.python = JudgeTracker(judges, self.store, ListScorer(evaluation), specs, ks)
        self.table = _native.JudgmentTable(1000)
        self.native = _native.JudgeTrackerCore(
            list(judges.families),
            judges.max_families,
            [(format_duration(w), w) for w in judges.agreement_windows],
            judges.max_age,
            judges.head_queries,
            [(s.name, s.size_ms) for s in specs],
            BUCKET_MS,
            list(ks),
        )
        listen = self.python._changed

        def both(query_id: str, doc_id: str) -> None:
            listen(query_id, doc_id)
            self.native.changed(self.table, query_id, doc_id)

        self.store.listener = both

    def step(self, op: tuple[Any, ...]) -> None:
        kind = op[0]
        if kind == "judgment":
            _, q, d, judge, ts, grade = op
            # the native table first: the Python store's listener tells both trackers
            changed = self.table.store_apply(q, d, judge, grade, ts)
            # (built unvalidated: a time before 1970 is fine for the table, not for EventTime)
            j = Judgment.model_construct(
                type="judgment", query_id=q, doc_id=d, judge=judge, timestamp=ts, grade=grade
            )
            assert self.store.apply(j) == changed
        elif kind == "delete":
            _, q, d, judge = op
            assert self.table.delete(q, d, judge) == self.store.delete(q, d, judge)
        elif kind == "spurious":
            self.native.changed(self.table, op[1], op[2])
        elif kind == "list":
            _, q, ts, docs, counted_before, coverage, windowed = op
            lst = cast(OpenList, _List(q, ts, docs, counted_before))
            self.python.fold(lst, _scored(q, ts, self.ks, coverage), windowed)
            native_coverage = coverage or None
            self.native.fold(self.table, q, ts, docs, counted_before, native_coverage, windowed)
        elif kind == "evict":
            self.look_all()  # (what the eviction drops was looked at first)
            self.python.evict(op[1])
            self.native.evict(op[1])
        elif kind == "look":
            self.look(op[1])
        else:
            self.look_all()
            self.python.reset()
            self.native.reset()
        self.compare()

    def compare(self) -> None:
        python, native = self.python, self.native
        assert native.head() == sorted(python._head)
        due = python.evict_due
        assert native.evict_due == (None if due == float("inf") else due)
        assert native.active == python.active
        assert native.families == python._families.names
        assert native.newest == python._newest

    def look_all(self) -> None:
        for horizon in HORIZONS:
            self.look(horizon)

    def look(self, horizon: int | None) -> None:
        view = self.python.view(horizon)
        freshness, coverage = self.native.view(horizon)
        assert freshness == [(r.window, r.judged_docs, r.stale_docs) for r in view.freshness]
        expected = [
            (r.window, r.query_class, r.k, r.lists, r.coverage_sum.hex())
            for r in view.coverage_by_class
        ]
        assert [(*row[:4], row[4].hex()) for row in coverage] == expected
        agreement = [
            (r.window, r.family, r.other, r.pairs, None if r.alpha is None else r.alpha.hex())
            for r in view.agreement
        ]
        rows = self.native.agreement()
        assert [(*r[:4], None if r[4] is None else r[4].hex()) for r in rows] == agreement


@settings(max_examples=100, deadline=None)
@given(CASES, st.data())
def test_the_same_figures_as_the_python_tracker(
    case: tuple[tuple[int, ...], int, int, int], data: st.DataObject
) -> None:
    ks, head_queries, max_families, max_age = case
    pair = _Pair(ks, head_queries, max_families, max_age)
    for op in data.draw(_operations(len(ks))):
        pair.step(op)
    pair.look_all()


def test_a_worked_stream_agrees_and_is_as_worked_out() -> None:
    """Heads across minutes, a stale grade, a re-read list, by hand: the native figures are
    the values worked out here (the Python tracker's too, through ``step``)."""
    pair = _Pair((1, 3), 1, 8, 60_000)
    for op in [
        ("judgment", "q0", "d0", "alice", 0, 3.0),
        ("judgment", "q0", "d0", "llm:a", 0, 2.0),
        ("judgment", "q0", "d1", "alice", 100_000, 1.0),
        ("list", "q0", 10_000, ("d0", "d1", "d2"), False, (1.0, 2 / 3), True),
        ("list", "q0", 20_000, ("d0",), False, (1.0, 1.0), True),
        ("list", "q1", 30_000, ("d5",), False, (0.0, 0.0), True),
        # minute 1: the head is q0 (2 lists in minute 0); d0 graded at 0 is stale from 60 s
        ("list", "q0", 70_000, ("d0", "d1"), False, (1.0, 1.0), True),
        ("list", "q1", 80_000, ("d1",), True, (1.0, 1.0), True),
    ]:
        pair.step(op)
    assert pair.native.head() == ["q0"]
    assert pair.native.families == ["human", "llm:a"]
    assert pair.native.active
    # horizon 600 s: the 10m window is [0, 600 s), the 1m window [540 s, 600 s)
    freshness, coverage = pair.native.view(600_000)
    # 10m: judged 2 + 1 + 0 + 2 + 1 = 6, stale: d0 in the 70 s list (graded at 0, max_age 60 s)
    assert freshness == [("1m", 0, 0), ("10m", 6, 1)]
    rows = {(w, c, k): (n, s) for w, c, k, n, s in coverage}
    assert rows["10m", "head", 3] == (1, 1.0)
    assert rows["10m", "tail", 3] == (4, 2 / 3 + 1.0 + 0.0 + 1.0)
    pair.look(600_000)
    # the one shared pair, (q0, d0) graded 3 and 2 at 0: not within 1m of the newest grade
    # (100 s), within 1h; one unit (3, 2): expected 2·13 − 25 = 1, alpha 1 − 1·1/1 = 0
    assert pair.native.agreement() == [
        ("1h", "human", "llm:a", 1, 0.0),
        ("all", "human", "llm:a", 1, 0.0),
    ]


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="bucket_ms"):
        _native.JudgeTrackerCore(["llm:"], 8, [("1h", 3_600_000)], 1, 1, [("1m", 60_000)], 0, [1])
    core = _native.JudgeTrackerCore(
        ["llm:"], 8, [("1h", 3_600_000)], 1, 1, [("1m", 60_000)], 10_000, [1, 3]
    )
    with pytest.raises(ValueError, match="coverage"):
        core.fold(_native.JudgmentTable(10), "q", 0, ("d",), False, (1.0,), True)
    with pytest.raises(ValueError, match="capacity"):
        _native.SpaceSaving(0)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=6),
    st.lists(
        st.tuples(st.sampled_from(QUERIES), st.integers(min_value=1, max_value=4)), max_size=150
    ),
)
def test_the_sketch_holds_and_ranks_as_the_python_one(
    capacity: int, adds: list[tuple[str, int]]
) -> None:
    python, native = SpaceSaving(capacity), _native.SpaceSaving(capacity)
    for item, weight in adds:
        python.add(item, weight)
        native.add(item, weight)
        assert native.top(capacity) == python.top(capacity)
    assert (len(native), native.total) == (len(python), python.total)
    for item in QUERIES:
        assert native.count(item) == python.count(item)
    for n in range(capacity + 2):
        assert native.top(n) == python.top(n)
