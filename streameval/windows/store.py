"""Runtime state of the event-time windows: sufficient statistics in fixed buckets.

Since-start totals live in :mod:`streameval.windows.totals`.

Each finalized list is folded into the bucket of its impression's timestamp. A window's figures
are the sum of its buckets as of the evaluation horizon (:func:`window_buckets`). Buckets older
than the longest window are dropped, so memory is bounded by
``longest window / bucket × segments × relevance sources × ks``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from streameval.scored import ScoredList
from streameval.snapshot import EngagementRow, Moments, NdcgRow, Segment
from streameval.windows.spec import WindowSpec, bucket_start, window_buckets

_Key = tuple[str, Segment, int]  # (relevance, segment, k)


def _acc() -> list[float]:
    return [0, 0.0, 0.0]


@dataclass(slots=True)
class _Bucket:
    ndcg: defaultdict[_Key, list[float]] = field(default_factory=lambda: defaultdict(_acc))
    coverage: defaultdict[_Key, list[float]] = field(default_factory=lambda: defaultdict(_acc))
    # per segment: lists, clicked lists, reciprocal-rank sum, its sum of squares, zero-interaction
    engagement: defaultdict[Segment, list[float]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0.0, 0.0, 0])
    )


def _add(acc: list[float], value: float) -> None:
    acc[0] += 1
    acc[1] += value
    acc[2] += value * value


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
        self._buckets: dict[int, _Bucket] = {}

    @property
    def windows(self) -> tuple[WindowSpec, ...]:
        return self._windows

    def add(self, scored: ScoredList) -> None:
        """Fold one finalized list into the bucket of its impression time."""
        bucket = self._buckets.get(start := bucket_start(scored.timestamp, self._bucket_ms))
        if bucket is None:
            bucket = self._buckets[start] = _Bucket()
        seg = scored.segment
        for source in scored.sources:
            rel = source.relevance
            for i, k in enumerate(source.ks):
                value = source.ndcg[i]
                if value is not None:
                    _add(bucket.ndcg[(rel, seg, k)], value)
                if source.coverage is not None:
                    _add(bucket.coverage[(rel, seg, k)], source.coverage[i])
        eng = bucket.engagement[seg]
        eng[0] += 1
        if scored.clicked:
            eng[1] += 1
        rr = 1.0 / scored.first_click_rank if scored.first_click_rank else 0.0
        eng[2] += rr
        eng[3] += rr * rr
        if not scored.interacted:
            eng[4] += 1

    def evict(self, horizon_ms: int) -> None:
        """Drop buckets no window can cover any more as of ``horizon_ms``."""
        oldest = bucket_start(horizon_ms, self._bucket_ms) - self._longest_ms
        for start in [s for s in self._buckets if s < oldest]:
            del self._buckets[start]

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
            ndcg: dict[_Key, Moments] = {}
            cov: dict[_Key, Moments] = {}
            eng: dict[Segment, list[float]] = {}
            for b in buckets:
                for key, acc in b.ndcg.items():
                    ndcg[key] = ndcg.get(key, Moments()) + Moments(int(acc[0]), acc[1], acc[2])
                for key, acc in b.coverage.items():
                    cov[key] = cov.get(key, Moments()) + Moments(int(acc[0]), acc[1], acc[2])
                for seg, e in b.engagement.items():
                    total = eng.setdefault(seg, [0, 0, 0.0, 0.0, 0])
                    for i, v in enumerate(e):
                        total[i] += v
            for key in sorted(ndcg.keys() | cov.keys()):
                rel, seg, k = key
                ndcg_rows.append(
                    NdcgRow(spec.name, rel, seg, k, ndcg.get(key, Moments()), cov.get(key))
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
