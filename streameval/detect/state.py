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

    def dump(self) -> list[float | int | None]:
        return [self.weight, self.total, self.total_sq, self.t_ms]

    def load(self, values: list[float | int | None]) -> None:
        weight, total, total_sq, t_ms = values
        self.weight, self.total, self.total_sq = (
            float(weight or 0),
            float(total or 0),
            float(total_sq or 0),
        )
        self.t_ms = None if t_ms is None else int(t_ms)

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

    Bounded: when more than ``capacity`` × 5/4 queries are held, the least recently updated
    are forgotten down to ``capacity`` (amortized: one sort per ``capacity`` / 4 new queries). A
    forgotten query is treated as new when it comes back.
    """

    __slots__ = ("_capacity", "_factors", "_half_life", "_limit", "_refs")

    def __init__(self, half_life_ms: int, capacity: int) -> None:
        self._half_life = half_life_ms
        self._capacity = capacity
        self._limit = capacity + max(1, capacity // 4)
        # query_id -> [weight as of t, mean, t_ms of the last update]
        self._refs: dict[str, list[float]] = {}
        # decay factor by elapsed time (elapsed times are whole buckets: few distinct values)
        self._factors: dict[float, float] = {}

    def get(self, query_id: str) -> list[float] | None:
        """``[weight, mean, t_ms]`` (weight as of ``t_ms``; do not modify), or None."""
        return self._refs.get(query_id)

    @property
    def entries(self) -> dict[str, list[float]]:
        """The table itself, for the detectors' per-bucket pass to read and update in place
        (with :meth:`factor` and :meth:`trim`): one dict lookup per query and bucket."""
        return self._refs

    @property
    def factors(self) -> dict[float, float]:
        """The cache of :meth:`factor`, for the per-bucket pass to read first (a call less per
        query; do not modify)."""
        return self._factors

    def factor(self, elapsed_ms: float) -> float:
        """The decay over ``elapsed_ms`` (cached: elapsed times are whole buckets)."""
        factor = self._factors.get(elapsed_ms)
        if factor is None:
            if len(self._factors) > 4096:
                self._factors.clear()
            factor = self._factors[elapsed_ms] = decay(int(elapsed_ms), self._half_life)
        return factor

    def trim(self) -> None:
        """Forget the least recently updated queries once more than capacity × 5/4 are held."""
        if len(self._refs) > self._limit:
            self._shrink()

    def update(self, query_id: str, t_ms: int, count: float, total: float) -> None:
        """Fold ``count`` lists of ``query_id`` (NDCG sum ``total``) observed at ``t_ms``."""
        entry = self._refs.get(query_id)
        if entry is None:
            self._refs[query_id] = [count, total / count, t_ms]
            if len(self._refs) > self._limit:
                self._shrink()
            return
        elapsed = t_ms - entry[2]
        if elapsed > 0:
            weight = entry[0] * self.factor(elapsed) + count
            entry[2] = t_ms
        else:
            weight = entry[0] + count
        entry[1] += (total - count * entry[1]) / weight
        entry[0] = weight

    def dump(self) -> list[list[str | float]]:
        """``[query_id, weight, mean, t_ms]`` per query, oldest insertion first (the order
        :meth:`_shrink` breaks ties by)."""
        return [[q, *entry] for q, entry in self._refs.items()]

    def load(self, entries: list[list[str | float]]) -> None:
        refs: dict[str, list[float]] = {}
        for q, weight, mean, t_ms in entries:
            refs[str(q)] = [weight, mean, t_ms]  # type: ignore[list-item]
        self._refs = refs

    def _shrink(self) -> None:
        newest = sorted(self._refs.items(), key=lambda item: item[1][2])[-self._capacity :]
        self._refs = dict(newest)

    def weight(self, query_id: str, t_ms: int) -> float:
        entry = self._refs.get(query_id)
        if entry is None:
            return 0.0
        return entry[0] * decay(int(t_ms - entry[2]), self._half_life)

    def __len__(self) -> int:
        return len(self._refs)
