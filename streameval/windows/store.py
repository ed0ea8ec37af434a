"""Runtime state of the event-time windows: sufficient statistics in fixed buckets.

Since-start totals live in :mod:`streameval.windows.totals`.

Each finalized list is folded into the bucket of its impression's timestamp. A window's figures
are the sum of its buckets as of the evaluation horizon (:func:`window_buckets`). Buckets older
than the longest window are dropped, so memory is bounded by
``longest window / bucket × segments × relevance sources × ks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

from streameval.snapshot import EngagementRow, Moments, NdcgRow
from streameval.values import ScoredList, Segment
from streameval.windows.spec import WindowSpec, bucket_start, window_buckets

_K = TypeVar("_K")
_N = TypeVar("_N", int, float)
_Key = tuple[str, Segment, int]  # (relevance, segment, k)
#: (relevance, segment, ks): the accumulators of every cutoff of one source in one segment
_SourceKey = tuple[str, Segment, tuple[int, ...]]


class Bucket:
    """One bucket's sufficient statistics.

    ``ndcg`` and ``coverage`` hold, per (relevance, segment, ks), one flat list with
    ``[count, sum, sum of squares]`` for each k in turn: one dict look-up per list and source
    instead of one per k. A cutoff whose count is 0 has no value in the bucket.
    """

    __slots__ = ("coverage", "engagement", "interleaving", "ndcg")

    def __init__(self) -> None:
        self.ndcg: dict[_SourceKey, list[float]] = {}
        self.coverage: dict[_SourceKey, list[float]] = {}
        # per segment: lists, clicked lists, reciprocal-rank sum, its sum of squares,
        # zero-interaction lists
        self.engagement: dict[Segment, list[float]] = {}
        # interleaved lists (DESIGN §10), per ordered pair (ranker, opponent): wins, losses,
        # ties, no_click; kept here so the window state changelog persists them too
        self.interleaving: dict[tuple[str, str], list[int]] = {}

    def fold(self, scored: ScoredList) -> None:
        """Add one finalized list."""
        seg = scored.segment
        for source in scored.sources:
            key = (source.relevance, seg, source.ks)
            _fold(self.ndcg, key, source.ndcg)
            if source.coverage is not None:
                _fold(self.coverage, key, source.coverage)
        eng = self.engagement.get(seg)
        if eng is None:
            eng = self.engagement[seg] = [0, 0, 0.0, 0.0, 0]
        eng[0] += 1
        if scored.clicked:
            eng[1] += 1
        rr = 1.0 / scored.first_click_rank if scored.first_click_rank else 0.0
        eng[2] += rr
        eng[3] += rr * rr
        if not scored.interacted:
            eng[4] += 1
        if scored.interleaved is not None:
            fold_outcomes(self.interleaving, scored.interleaved.outcomes)

    def merge(self, other: Bucket) -> None:
        """Add another bucket's statistics (e.g. one loaded from the state topic)."""
        add_sums(self.ndcg, other.ndcg)
        add_sums(self.coverage, other.coverage)
        add_sums(self.engagement, other.engagement)
        add_sums(self.interleaving, other.interleaving)


#: the index of each interleaving outcome in a pair's counts
OUTCOME_INDEX = {"win": 0, "loss": 1, "tie": 2, "no_click": 3}


def fold_outcomes(
    table: dict[tuple[str, str], list[int]], outcomes: Sequence[tuple[str, str, str]]
) -> None:
    """Count one list's interleaving outcomes, per ordered pair."""
    for ranker, opponent, outcome in outcomes:
        acc = table.get((ranker, opponent))
        if acc is None:
            acc = table[ranker, opponent] = [0, 0, 0, 0]
        acc[OUTCOME_INDEX[outcome]] += 1


def add_sums(table: dict[_K, list[_N]], other: Mapping[_K, Sequence[_N]]) -> None:
    """Add another table's accumulators (lists of counts and sums, position by position) into
    ``table``: buckets merged, a window's buckets totalled, partitions' counts summed."""
    for key, acc in other.items():
        total = table.get(key)
        if total is None:
            table[key] = list(acc)
        else:
            for i, v in enumerate(acc):
                total[i] += v


def _fold(
    table: dict[_SourceKey, list[float]], key: _SourceKey, values: Sequence[float | None]
) -> None:
    """Add one value per cutoff (None: no value at that k) to the accumulators of ``key``."""
    acc = table.get(key)
    i = 0
    for value in values:
        if value is not None:
            if acc is None:
                acc = table[key] = [0, 0.0, 0.0] * len(values)
            acc[i] += 1
            acc[i + 1] += value
            acc[i + 2] += value * value
        i += 3


def _merge(into: dict[_Key, list[float]], table: dict[_SourceKey, list[float]]) -> None:
    """Add a bucket's accumulators to the window's, per (relevance, segment, k)."""
    for (rel, seg, ks), acc in table.items():
        i = 0
        for k in ks:
            n = acc[i]
            if n:
                total = into.get((rel, seg, k))
                if total is None:
                    total = into[(rel, seg, k)] = [0, 0.0, 0.0]
                total[0] += n
                total[1] += acc[i + 1]
                total[2] += acc[i + 2]
            i += 3


class WindowStore:
    """Buckets of sufficient statistics, per (relevance, segment, k) and per segment."""

    def __init__(self, windows: Sequence[WindowSpec]) -> None:
        if not windows:
            raise ValueError("at least one window is needed")
        bucket_sizes = {w.bucket_ms for w in windows}
        if len(bucket_sizes) != 1:
            raise ValueError("all windows must share one bucket size")
        self._windows = tuple(windows)
        self._bucket_ms = bucket_sizes.pop()
        self._longest_ms = max(w.size_ms for w in windows)
        self._buckets: dict[int, Bucket] = {}
        self._oldest: int | None = None  # the smallest key of _buckets (None: no bucket)

    @property
    def windows(self) -> tuple[WindowSpec, ...]:
        return self._windows

    def add(self, scored: ScoredList) -> None:
        """Fold one finalized list into the bucket of its impression time."""
        ts = scored.timestamp
        self._bucket(ts - ts % self._bucket_ms).fold(scored)  # bucket_start, inlined

    def merge(self, start: int, bucket: Bucket) -> None:
        """Add a bucket's statistics (loaded from the state topic) to the bucket at ``start``."""
        self._bucket(start).merge(bucket)

    def _bucket(self, start: int) -> Bucket:
        bucket = self._buckets.get(start)
        if bucket is None:
            bucket = self._buckets[start] = Bucket()
            if self._oldest is None or start < self._oldest:
                self._oldest = start
        return bucket

    def evict(self, horizon_ms: int) -> None:
        """Drop buckets no window can cover any more as of ``horizon_ms``."""
        oldest = bucket_start(horizon_ms, self._bucket_ms) - self._longest_ms
        if self._oldest is None or self._oldest >= oldest:
            return  # the common case (called on every watermark move): nothing to drop
        for start in [s for s in self._buckets if s < oldest]:
            del self._buckets[start]
        self._oldest = min(self._buckets, default=None)

    def next_eviction(self) -> int | None:
        """The horizon at which :meth:`evict` next has a bucket to drop (None: no bucket)."""
        if self._oldest is None:
            return None
        # evict drops the oldest bucket once bucket_start(horizon) > oldest + longest window
        after = self._oldest + self._longest_ms
        return after - after % self._bucket_ms + self._bucket_ms

    def rows(self, horizon_ms: int | None) -> tuple[tuple[NdcgRow, ...], tuple[EngagementRow, ...]]:
        """The windows' figures as of ``horizon_ms`` (nothing before the first horizon)."""
        if horizon_ms is None:
            return (), ()
        ndcg_rows: list[NdcgRow] = []
        eng_rows: list[EngagementRow] = []
        for spec in self._windows:
            buckets = [
                b
                for s in window_buckets(horizon_ms, spec.size_ms, spec.bucket_ms)
                if (b := self._buckets.get(s)) is not None
            ]
            ndcg: dict[_Key, list[float]] = {}
            cov: dict[_Key, list[float]] = {}
            eng: dict[Segment, list[float]] = {}
            for b in buckets:
                _merge(ndcg, b.ndcg)
                _merge(cov, b.coverage)
                for seg, e in b.engagement.items():
                    total = eng.setdefault(seg, [0, 0, 0.0, 0.0, 0])
                    for i, v in enumerate(e):
                        total[i] += v
            for key in sorted(ndcg.keys() | cov.keys()):
                rel, seg, k = key
                n = ndcg.get(key)
                c = cov.get(key)
                ndcg_rows.append(
                    NdcgRow(
                        spec.name,
                        rel,
                        seg,
                        k,
                        Moments() if n is None else Moments(int(n[0]), n[1], n[2]),
                        None if c is None else Moments(int(c[0]), c[1], c[2]),
                    )
                )
            for seg, e in sorted(eng.items()):
                eng_rows.append(
                    EngagementRow(
                        window=spec.name,
                        segment=seg,
                        lists=int(e[0]),
                        clicked_lists=int(e[1]),
                        reciprocal_rank=Moments(int(e[0]), e[2], e[3]),
                        zero_click_lists=int(e[4]),
                    )
                )
        return tuple(ndcg_rows), tuple(eng_rows)
