"""The detectors' runtime state that outlives a bucket: exponentially forgotten moments and the
per-query references, bounded.

Both forget in event time with one half-life (``detection.half_life``): an observation
``half_life`` old weighs half as much as a new one. Decay is applied lazily, from the bucket
start of the last update, so an idle series costs nothing.
"""

from __future__ import annotations

from streameval.detect.arithmetic import decay


class EwMoments:
    """Exponentially weighted count, sum and sum of squares of a stream of values."""

    __slots__ = ("_half_life", "t_ms", "total", "total_sq", "weight")

    def __init__(self, half_life_ms: int) -> None:
        self._half_life = half_life_ms
        self.weight = 0.0
        self.total = 0.0
        self.total_sq = 0.0
        self.t_ms: int | None = None

    def add(self, t_ms: int, n: float, total: float, total_sq: float) -> None:
        """Fold ``n`` values (their sum and sum of squares) observed at ``t_ms``."""
        if self.t_ms is not None and t_ms > self.t_ms:
            f = decay(t_ms - self.t_ms, self._half_life)
            self.weight *= f
            self.total *= f
            self.total_sq *= f
        if self.t_ms is None or t_ms > self.t_ms:
            self.t_ms = t_ms
        self.weight += n
        self.total += total
        self.total_sq += total_sq

    @property
    def mean(self) -> float | None:
        return self.total / self.weight if self.weight > 0.0 else None

    @property
    def variance(self) -> float | None:
        """The weighted variance about the weighted mean (None without weight)."""
        if self.weight <= 0.0:
            return None
        mean = self.total / self.weight
        return max(self.total_sq / self.weight - mean * mean, 0.0)


class QueryReferences:
    """Per query, the exponentially weighted mean NDCG@k of its own past lists: the reference
    a new list of that query is compared with.

    Bounded: at most ``capacity`` queries, the least recently updated forgotten first (a dict
    keeps insertion order, and an update re-inserts its query at the end). A forgotten query is
    treated as new when it comes back.
    """

    __slots__ = ("_capacity", "_half_life", "_refs")

    def __init__(self, half_life_ms: int, capacity: int) -> None:
        self._half_life = half_life_ms
        self._capacity = capacity
        # query_id -> [weight, mean, t_ms of the last update]
        self._refs: dict[str, list[float]] = {}

    def get(self, query_id: str) -> list[float] | None:
        """``[weight, mean, t_ms]`` (weight as of ``t_ms``; do not modify), or None."""
        return self._refs.get(query_id)

    def update(self, query_id: str, t_ms: int, count: int, total: float) -> None:
        """Fold ``count`` lists of ``query_id`` (NDCG sum ``total``) observed at ``t_ms``."""
        entry = self._refs.pop(query_id, None)
        if entry is None:
            weight = float(count)
            mean = total / count
        else:
            old = entry[0] * decay(t_ms - int(entry[2]), self._half_life)
            weight = old + count
            mean = (entry[1] * old + total) / weight
        self._refs[query_id] = [weight, mean, float(t_ms)]
        if len(self._refs) > self._capacity:
            del self._refs[next(iter(self._refs))]

    def weight(self, query_id: str, t_ms: int) -> float:
        entry = self._refs.get(query_id)
        if entry is None:
            return 0.0
        return entry[0] * decay(t_ms - int(entry[2]), self._half_life)

    def __len__(self) -> int:
        return len(self._refs)
