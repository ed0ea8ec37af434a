"""The engine's judge bookkeeping: per-family judged sources, agreement, freshness, head/tail.

One :class:`JudgeTracker` per pipeline, told of every change of the judgment table (its
listener) and of every finalized list (:meth:`JudgeTracker.fold`):

* **families** (:mod:`.families`): each judge's family, registered when its first grade is read;
* **per-family judged NDCG**: once two families or more have been seen, every finalized list
  also gets a judged source per family, named ``judged:<family>`` (a doc's grade there is the
  mean of that family's judges' latest grades; its ideal is that family's pool), scored by the
  same :class:`~streameval.score.lists.ListScorer` and folded into the same windows. With one
  family (every judge human, the default simulator's case) nothing is added or paid;
* **agreement** (:mod:`.agreement`): per pair of families, over the (query, doc) pairs both
  graded (each family's grade the mean of its judges' latest), Krippendorff's interval alpha and
  the pair count, per window of judgment time ending at the newest judgment read, and ``all``;
* **freshness**: per bucket of impression time, the judged docs shown in the top max(ks) of
  finalized lists and those whose newest grade is older than ``max_age`` at the impression;
* **coverage by query frequency**: the ``head_queries`` most frequent queries by finalized lists
  since start (:class:`~.frequency.SpaceSaving`, decided afresh once per minute of impression
  time, from the counts before it) are the head;
  judged coverage@k per bucket for head and tail lists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from streameval.config import JudgesSettings
from streameval.durations import format_duration
from streameval.join.judgments import JudgmentStore
from streameval.join.open_lists import OpenList
from streameval.judges.agreement import PairSums
from streameval.judges.families import Families
from streameval.judges.frequency import SpaceSaving
from streameval.score import all_distinct
from streameval.score.lists import ListScorer
from streameval.snapshot import (
    AgreementRow,
    FreshnessRow,
    JudgesView,
    QueryClassCoverageRow,
)
from streameval.values import JUDGED, ScoredList, SourceScore, source_named
from streameval.windows.spec import WindowSpec, bucket_start, window_buckets

HEAD = "head"
TAIL = "tail"
ALL = "all"
#: the Space-Saving sketch holds this many counters per head query (its error bound shrinks
#: with it: a held count overestimates by at most lists / capacity)
SKETCH_PER_HEAD = 5
#: the head is decided afresh at most once per this much impression time (a sort of the
#: sketch's counters; a head query's rank barely moves within a minute)
HEAD_EVERY = 60_000

_Grades = tuple[dict[str, float], list[float] | None]  # a family's grade per doc, its pool


def relevance_of(family: str) -> str:
    """The ``relevance`` label of a family's judged source: ``judged:<family>``."""
    return f"{JUDGED}:{family}"


class JudgeTracker:
    __slots__ = (
        "_agreement",
        "_bucket_ms",
        "_buckets",
        "_families",
        "_head",
        "_head_from",
        "_ks",
        "_longest",
        "_max_age",
        "_minute",
        "_newest",
        "_oldest",
        "_oldest_grade",
        "_per_query",
        "_scorer",
        "_settings",
        "_shared",
        "_sketch",
        "_store",
        "_tail_at",
        "_top",
        "_unjudged",
        "_width",
        "_windows",
        "active",
        "evict_due",
    )

    def __init__(
        self,
        settings: JudgesSettings,
        store: JudgmentStore,
        scorer: ListScorer,
        windows: Sequence[WindowSpec],
        ks: Sequence[int],
    ) -> None:
        self._settings = settings
        self._store = store
        self._scorer = scorer
        self._windows = tuple(windows)
        self._bucket_ms = windows[0].bucket_ms
        self._longest = max(w.size_ms for w in windows)
        self._oldest: int | None = None  # the smallest key of _buckets
        #: the horizon from which :meth:`evict` has a bucket to drop
        self.evict_due: float = math.inf
        self._ks = tuple(sorted(ks))
        self._top = self._ks[-1]
        self._max_age = settings.max_age
        # a bucket: judged docs, stale docs, then for head lists: lists, coverage sum per k;
        # then the same for tail lists
        self._width = 2 + 2 * (1 + len(self._ks))
        self._tail_at = 2 + 1 + len(self._ks)
        self._families = Families(settings.families, settings.max_families)
        #: (query, doc) graded by two families or more -> family -> (newest time, mean grade)
        self._shared: dict[tuple[str, str], dict[str, tuple[int, float]]] = {}
        self._newest: int | None = None
        #: the oldest grade time ever read (a bound: the grade may have been replaced since)
        self._oldest_grade: float = math.inf
        self._agreement: tuple[AgreementRow, ...] | None = None  # cached until a change
        #: per query: (the table's version of it, per family its grades and pool, per judged
        #: doc its newest grade time, the oldest of those)
        self._per_query: dict[str, tuple[int, dict[str, _Grades], dict[str, int], float]] = {}
        self._unjudged: dict[str, SourceScore] = {}
        # bucket start -> [judged docs, stale docs, then per class (head, tail) and k:
        # lists, coverage sum, coverage sum of squares]
        self._buckets: dict[int, list[float]] = {}
        self._sketch = SpaceSaving(SKETCH_PER_HEAD * settings.head_queries)
        self._head: frozenset[str] = frozenset()
        self._head_from = -math.inf  # the start of the minute the head was decided for
        self._minute: dict[str, int] = {}  # lists per query since the head was decided
        #: two families or more seen: lists get a judged source per family (a plain attribute:
        #: the pipeline reads it for every list)
        self.active = False
        store.listener = self._changed

    # --- the judgment table's listener ----------------------------------------------------------

    def _changed(self, query_id: str, doc_id: str) -> None:
        judges = self._store.judges_of(query_id).get(doc_id, {})
        by_family: dict[str, list[tuple[int, float]]] = {}
        of = self._families.of
        for judge, entry in judges.items():
            by_family.setdefault(of(judge), []).append(entry)
            if self._newest is None or entry[0] > self._newest:
                self._newest = entry[0]
            self._oldest_grade = min(self._oldest_grade, entry[0])
        self.active = len(self._families.names) >= 2
        key = (query_id, doc_id)
        if len(by_family) >= 2:
            self._shared[key] = {
                family: (max(t for t, _ in entries), sum(g for _, g in entries) / len(entries))
                for family, entries in by_family.items()
            }
        else:
            self._shared.pop(key, None)
        self._agreement = None

    # --- per-family judged sources ----------------------------------------------------------------

    def _query(self, query_id: str) -> tuple[int, dict[str, _Grades], dict[str, int], float]:
        version = self._store.version(query_id)
        cached = self._per_query.get(query_id)
        if cached is not None and cached[0] == version:
            return cached
        of = self._families.of
        sums: dict[str, dict[str, list[float]]] = {}
        newest: dict[str, int] = {}
        for doc, judges in self._store.judges_of(query_id).items():
            for judge, (ts, grade) in judges.items():
                acc = sums.setdefault(of(judge), {}).setdefault(doc, [0.0, 0.0])
                acc[0] += grade
                acc[1] += 1
                if ts > newest.get(doc, ts - 1):
                    newest[doc] = ts
        pool = self._scorer.ideal_pool
        families: dict[str, _Grades] = {}
        for family, docs in sums.items():
            grades = {doc: acc[0] / acc[1] for doc, acc in docs.items()}
            families[family] = (grades, sorted(grades.values(), reverse=True) if pool else None)
        oldest = min(newest.values(), default=math.inf)
        cached = self._per_query[query_id] = (version, families, newest, oldest)
        return cached

    def family_sources(self, lst: OpenList) -> tuple[SourceScore, ...]:
        """The judged source of each family for a finalized list (call when :attr:`active`)."""
        _, families, _, _ = self._query(lst.query_id)
        unique = all_distinct(lst.doc_ids)
        out: list[SourceScore] = []
        for family in self._families.names:
            relevance = relevance_of(family)
            got = families.get(family)
            if got is None:
                source = self._unjudged.get(family)
                if source is None:
                    source = self._unjudged[family] = self._scorer.unjudged_source(relevance)
            else:
                source = self._scorer.judged_source(relevance, lst.doc_ids, got[0], got[1], unique)
            out.append(source)
        return tuple(out)

    def score(self, lst: OpenList, scored: ScoredList) -> ScoredList:
        """``scored`` with the families' judged sources appended, when :attr:`active`."""
        if not self.active:
            return scored
        return scored._replace(sources=scored.sources + self.family_sources(lst))

    # --- freshness and coverage by frequency (windowed) ---------------------------------------

    def fold(self, lst: OpenList, scored: ScoredList, windowed: bool) -> None:
        """A finalized list: its query counted (once: not when re-read), its judged docs' ages
        and its judged coverage per query class into its bucket (``windowed``: the windows
        fold it too). Runs for every list: the judged docs shown come from the judged source's
        coverage@max(k), and their ages are looked at only when one of the query's judged docs
        can be stale (the query's oldest newest-grade time is before impression − max_age)."""
        query_id = lst.query_id
        ts = lst.timestamp
        b = ts - ts % self._bucket_ms  # bucket_start, inline (once per list)
        if not self._head_from <= b < self._head_from + HEAD_EVERY:
            # once per minute of impression time: the minute's counts into the sketch (in the
            # order first seen), and the head decided afresh from them
            self._head_from = b - b % HEAD_EVERY
            add = self._sketch.add
            for query, n in self._minute.items():
                add(query, n)
            self._minute.clear()
            self._head = frozenset(self._sketch.top(self._settings.head_queries))
        if not lst.counted_before:
            minute = self._minute
            minute[query_id] = minute.get(query_id, 0) + 1
        if not windowed:
            return
        acc = self._buckets.get(b)
        if acc is None:
            acc = self._buckets[b] = [0.0] * self._width
            if self._oldest is None or b < self._oldest:
                self._set_oldest(b)
        judged = source_named(scored.sources, JUDGED)
        coverage = None if judged is None else judged.coverage
        if coverage is None:
            return
        top = self._top
        doc_ids = lst.doc_ids
        shown = len(doc_ids) if len(doc_ids) < top else top
        judged_docs = round(coverage[-1] * shown)  # judged positions in the top max(k)
        if judged_docs:
            acc[0] += judged_docs
            oldest_ok = ts - self._max_age
            # (no grade ever read is that old: none can be stale, the usual case)
            if oldest_ok > self._oldest_grade:
                _, _, newest, oldest = self._query(query_id)
                if oldest < oldest_ok:  # a doc of this query may be stale: look
                    for doc in doc_ids[:top]:
                        when = newest.get(doc)
                        if when is not None and when < oldest_ok:
                            acc[1] += 1
        i = self._tail_at if query_id not in self._head else 2
        acc[i] += 1  # lists (the same for every k)
        if judged_docs:  # (else no judged doc in the top max(k): coverage 0 at every k)
            for c in coverage:
                i += 1
                acc[i] += c

    def evict(self, horizon_ms: int) -> None:
        """Drop buckets no window covers any more as of ``horizon_ms`` (the pipeline calls it
        once the horizon reaches :attr:`evict_due`)."""
        oldest = bucket_start(horizon_ms, self._bucket_ms) - self._longest
        for b in [b for b in self._buckets if b < oldest]:
            del self._buckets[b]
        self._set_oldest(min(self._buckets, default=None))

    def _set_oldest(self, oldest: int | None) -> None:
        """The oldest bucket, and the horizon at which it is dropped (as the windows'
        ``WindowStore.next_eviction``)."""
        self._oldest = oldest
        if oldest is None:
            self.evict_due = math.inf
        else:
            after = oldest + self._longest
            self.evict_due = after - after % self._bucket_ms + self._bucket_ms

    def reset(self) -> None:
        """Before the streams are re-read (a rebalance): the buckets go, as the windows do."""
        self._buckets.clear()
        self._set_oldest(None)

    # --- reading --------------------------------------------------------------------------------

    def agreement(self) -> tuple[AgreementRow, ...]:
        if self._agreement is not None:
            return self._agreement
        windows = [(format_duration(w), w) for w in sorted(self._settings.agreement_windows)]
        sums: dict[tuple[str, str, str], PairSums] = {}
        newest = self._newest if self._newest is not None else 0
        for grades in self._shared.values():
            families = sorted(grades)
            for i, a in enumerate(families):
                ta, ga = grades[a]
                for b in families[i + 1 :]:
                    tb, gb = grades[b]
                    when = max(ta, tb)
                    for name, size in [(ALL, None), *windows]:
                        if size is None or when > newest - size:
                            key = (name, a, b)
                            acc = sums.get(key)
                            if acc is None:
                                acc = sums[key] = PairSums()
                            acc.add(ga, gb)
        order = {name: i for i, (name, _) in enumerate([*windows, (ALL, 0)])}
        rows = [
            AgreementRow(name, a, b, acc.units, acc.alpha) for (name, a, b), acc in sums.items()
        ]
        rows.sort(key=lambda r: (order[r.window], r.family, r.other))
        self._agreement = tuple(rows)
        return self._agreement

    def view(self, horizon_ms: int | None) -> JudgesView:
        freshness: list[FreshnessRow] = []
        coverage: list[QueryClassCoverageRow] = []
        if horizon_ms is not None:
            for spec in self._windows:
                total = [0.0] * self._width
                for s in window_buckets(horizon_ms, spec.size_ms, spec.bucket_ms):
                    acc = self._buckets.get(s)
                    if acc is not None:
                        for i, v in enumerate(acc):
                            total[i] += v
                freshness.append(FreshnessRow(spec.name, int(total[0]), int(total[1])))
                for start, query_class in ((2, HEAD), (self._tail_at, TAIL)):
                    lists = int(total[start])
                    if not lists:
                        continue
                    for j, k in enumerate(self._ks):
                        row = QueryClassCoverageRow(
                            spec.name, query_class, k, lists, total[start + 1 + j]
                        )
                        coverage.append(row)
        settings = self._settings
        return JudgesView(
            families=tuple(self._families.names),
            agreement=self.agreement(),
            agreement_floor=settings.agreement_floor,
            agreement_min_pairs=settings.agreement_min_pairs,
            newest_judgment_ms=self._newest,
            max_age_ms=settings.max_age,
            freshness=tuple(freshness),
            coverage_by_class=tuple(coverage),
            head_queries=settings.head_queries,
        )


__all__ = ["HEAD", "TAIL", "JudgeTracker", "relevance_of"]
