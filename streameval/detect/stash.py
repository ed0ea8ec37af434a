"""The open buckets of one relevance source (:class:`Stash`): per bucket, segment and watched k,
the sufficient statistics of NDCG@k per query, until the bucket completes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from streameval.values import Segment
from streameval.windows.spec import pop_before

#: per query: (count, sum, sum of squares) of NDCG@k in one bucket (a tuple: one allocation, and
#: the rare repeat of a query within a bucket replaces it)
Agg = tuple[float, float, float]
#: per query_id, its Agg (one bucket, segment, relevance source and k)
PerQuery = dict[str, Agg]
#: one bucket of one relevance source: segment -> one PerQuery per watched k
BucketData = dict[Segment, list[PerQuery]]
#: no lists: a zero count, sum and sum of squares
ZERO = (0.0, 0.0, 0.0)


class SumsStash(Protocol):
    """The open buckets of one relevance source's per-query sums, as :class:`Stash` keeps
    them: per bucket, segment and watched k, per query (count, sum, sum of squares) of NDCG@k.
    The native engine's core keeps one of its own (:class:`streameval.engine.native_sums.
    CoreStash`), which a :class:`~streameval.engine.consumers.FedBySums` consumer reads."""

    ignored: int
    closed: int | None

    def add(
        self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]
    ) -> None: ...

    def take(self, horizon_ms: int) -> list[tuple[int, BucketData]]:
        """The buckets the horizon completed since the last call, oldest first (removed)."""
        ...

    def clear(self) -> None: ...

    def leave(self) -> None: ...

    def close_before(self, point: int) -> None:
        """Buckets before ``point`` are closed (in the state topic already: a restored
        progress); ``closed`` moves up to ``point``, never down, and the open buckets before it
        are dropped."""
        ...

    def merge(
        self, bucket_ms: int, segment: Segment, j: int, per_query: Mapping[str, Sequence[float]]
    ) -> None:
        """A whole bucket's sums of ``segment`` and the ``j``-th watched k, merged in (no check
        of ``closed``: the caller's)."""
        ...


class SourceSums(Protocol):
    """Per-query sums kept per source partition by the engine (the native core's, made at a
    source's first list: :class:`streameval.engine.native_sums.CoreSources`), for a
    :class:`~streameval.engine.consumers.FedBySourceSums` consumer."""

    def stash(self, source: str, relevance: str) -> SumsStash:
        """The sums of ``relevance`` of ``source`` (a view: made in the engine if not yet)."""
        ...

    def sources(self) -> list[str]:
        """The sources whose sums are kept, in the order they were made."""
        ...

    def open(self, source: str) -> None:
        """Make the sums of ``source`` (if not yet), as its first list would."""
        ...

    def forget(self, source: str) -> None:
        """Drop the sums of ``source``."""
        ...


class FedStashes:
    """The :class:`~streameval.engine.consumers.FedBySums` part of a consumer whose per-list
    state is a :class:`SumsStash` per source (``_stash``, buckets of ``_bucket_ms``, watched
    ks at ``_positions``): the engine may hand it stashes of its own to read instead."""

    _stash: dict[str, SumsStash]
    _bucket_ms: int
    _positions: tuple[int, ...]

    def summed(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """Every source it keeps a stash of: (bucket_ms, the watched ks' positions)."""
        return dict.fromkeys(self._stash, (self._bucket_ms, self._positions))

    def feed_from(self, stashes: Mapping[str, SumsStash]) -> None:
        """Read ``stashes`` from now on: what the replaced stashes had closed and ignored
        carries over (they hold no open bucket then)."""
        for relevance, stash in stashes.items():
            old = self._stash[relevance]
            stash.closed, stash.ignored = old.closed, old.ignored
            self._stash[relevance] = stash
        self._fed()

    def _fed(self) -> None:
        """The stashes changed (at hand again where the consumer keeps them so)."""


class Stash:
    """The open buckets of one relevance source: per bucket, segment and watched k, the
    sufficient statistics per query. Buckets before ``closed`` are closed."""

    __slots__ = (
        "bucket_ms",
        "closed",
        "cur",
        "cur_b",
        "cur_end",
        "ignored",
        "pending",
        "positions",
        "single",
    )

    def __init__(self, bucket_ms: int, positions: tuple[int, ...]) -> None:
        self.bucket_ms = bucket_ms
        self.positions = positions  # where each watched k sits in a SourceScore's tuples
        self.single = positions[0] if len(positions) == 1 else None
        self.pending: dict[int, BucketData] = {}
        self.closed: int | None = None
        # the bucket last added to, [cur_b, cur_end), and its data: a list inside it needs two
        # comparisons, not the modulo of an epoch-ms timestamp (a two-digit int)
        self.cur_b = self.cur_end = 0
        self.cur: BucketData = {}
        self.ignored = 0

    def add(self, ts: int, segment: Segment, query_id: str, ndcg: tuple[float | None, ...]) -> None:
        # once per list and relevance source: the query's sums are folded here, inline
        single = self.single
        if single is not None:  # one watched k (the default)
            x = ndcg[single]
            if x is None:
                return  # no NDCG@k (e.g. no interaction, `no_relevance = "skip"`)
            if not self.cur_b <= ts < self.cur_end and not self._enter(ts):
                return
            per_k = self.cur.get(segment)
            if per_k is None:
                per_k = self.cur[segment] = [{}]
            per_query = per_k[0]
            agg = per_query.get(query_id)
            if agg is None:
                per_query[query_id] = (1, x, x * x)
            else:
                c, t, tt = agg
                per_query[query_id] = (c + 1, t + x, tt + x * x)
            return
        if not self.cur_b <= ts < self.cur_end and not self._enter(ts):
            return
        per_k = self.cur.get(segment)
        if per_k is None:
            per_k = self.cur[segment] = [{} for _ in self.positions]
        for per_query, i in zip(per_k, self.positions, strict=True):
            value = ndcg[i]
            if value is not None:
                _fold(per_query, query_id, value)

    def _enter(self, ts: int) -> bool:
        """Make the bucket of ``ts`` the one added to; False (the list counted as ignored) when
        it is already closed."""
        b = ts - ts % self.bucket_ms
        closed = self.closed
        if closed is not None and b < closed:
            self.ignored += 1
            return False
        cur = self.pending.get(b)
        if cur is None:
            cur = self.pending[b] = {}
        self.cur_b = b
        self.cur_end = b + self.bucket_ms
        self.cur = cur
        return True

    def leave(self) -> None:
        """Forget the bucket last added to (it may be taken or merged into): the next list
        looks its bucket up again."""
        self.cur_b = self.cur_end = 0

    def take(self, horizon_ms: int) -> list[tuple[int, BucketData]]:
        """The buckets the horizon completed since the last call, in order (removed)."""
        closed = self.closed
        if closed is not None and horizon_ms < closed + self.bucket_ms:
            return []  # no bucket completed since the last call (most calls)
        end = horizon_ms - horizon_ms % self.bucket_ms
        self.closed = end
        self.leave()
        return pop_before(self.pending, end)

    def clear(self) -> None:
        self.pending.clear()
        self.leave()

    def close_before(self, point: int) -> None:
        """Buckets before ``point`` are closed (a restored progress: they are in the state
        topic already); the open ones before it are dropped."""
        if self.closed is None or point > self.closed:
            self.closed = point
            self.pending = {b: d for b, d in self.pending.items() if b >= point}
            self.leave()

    def merge(
        self, bucket_ms: int, segment: Segment, j: int, per_query: Mapping[str, Sequence[float]]
    ) -> None:
        """A whole bucket's sums of ``segment`` and the ``j``-th watched k merged into bucket
        ``bucket_ms`` (``Detectors.ingest``; no check of ``closed``: the caller's)."""
        into = self.pending.setdefault(bucket_ms, {})
        per_k = into.get(segment)
        if per_k is None:
            per_k = into[segment] = [{} for _ in self.positions]
        per_k[j] = merge((per_k[j], per_query))
        self.leave()


def _fold(per_query: PerQuery, query_id: str, x: float) -> None:
    """One list's NDCG@k into its query's sums."""
    agg = per_query.get(query_id)
    if agg is None:
        per_query[query_id] = (1, x, x * x)
    else:
        c, t, tt = agg
        per_query[query_id] = (c + 1, t + x, tt + x * x)


def merge(parts: Iterable[Mapping[str, Sequence[float]]]) -> PerQuery:
    merged: PerQuery = {}
    for part in parts:
        for q, (c, s, ss) in part.items():
            agg = merged.get(q)
            if agg is None:
                merged[q] = (c, s, ss)
            else:
                merged[q] = (agg[0] + c, agg[1] + s, agg[2] + ss)
    return merged
