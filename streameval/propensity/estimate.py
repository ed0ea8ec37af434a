"""The examination propensity per rank from harvested pair sums: weighted least squares.

Intervention harvesting (Agarwal, Zaitsev, Wang, Li, Najork, Joachims, "Estimating Position Bias
without Intrusive Interventions", WSDM 2019): a (query, doc) shown at rank k in some lists and at
rank k' in others (different rankers, arms, noise) was clicked at rates p_k·r and p_k'·r, the
same relevance r both times, so the ratio of its click rates is p_k / p_k'. Summed over every
such pair (:class:`~streameval.propensity.table.PositionTable` keeps
``T[k][k'] = Σ_(q,d) min(n_k, n_k') · c_k / n_k``, the clicks at k harvested against k'),
``T[k][k'] / T[k'][k]`` estimates p_k / p_k' for every pair of ranks (AllPairs, not only
adjacent ones, as the paper recommends).

All pairs are combined by weighted least squares on the logs, ``log p_k − log p_k' =
log(T[k][k'] / T[k'][k])``, with rank 1 the reference (``p_1 = 1``: only ratios matter to the
weighting) and each equation weighted by the inverse of its log ratio's variance under a
Poisson model of the harvested clicks, ``1 / (1/T[k][k'] + 1/T[k'][k])`` (the delta method).
The covariance of the fitted logs is the inverse of the normal matrix; the standard error of
``p_k`` is ``p_k · sqrt(var(log p_k))`` (delta method again) when nothing better is known; given
the sums per group of queries, it is the delete-a-group jackknife's (:func:`estimate`).

A rank is estimated when it has harvested at least ``min_clicks`` (``Σ_k' T[k][k']``) and is
connected to rank 1 through pairs of such ranks; otherwise its propensity is None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple


class Estimate(NamedTuple):
    """Per rank (index 0 = rank 1): the propensity relative to rank 1 and its standard error
    (None: not estimated yet), and the clicks harvested at that rank."""

    propensity: tuple[float | None, ...]
    stderr: tuple[float | None, ...]
    harvested: tuple[float, ...]

    @property
    def complete(self) -> bool:
        """Every rank is estimated."""
        return all(p is not None for p in self.propensity)


def empty(max_rank: int) -> Estimate:
    """No data: nothing estimated."""
    none: tuple[float | None, ...] = (None,) * max_rank
    return Estimate(none, none, (0.0,) * max_rank)


def estimate(
    pairs: Sequence[Sequence[float]],
    min_clicks: float,
    groups: Sequence[Sequence[Sequence[float]]] = (),
) -> Estimate:
    """The propensities from the harvested pair sums ``pairs[k][k']`` (square, ranks from 1).

    ``groups``: the same sums split by group of queries (they add up to ``pairs``). With two
    or more, the standard error is the delete-a-group jackknife's (Efron & Stein 1981; a
    group of queries left out at a time, as a bootstrap over queries would resample them): the
    pairs of ranks share their clicks and a query's docs share their users, so the
    delta-method error, which takes every equation as independent, is too small (by ~1.5-2x on
    the simulator, benchmarks/propensity.py). A rank a leave-one-out fit cannot estimate keeps
    the delta-method error."""
    harvested = tuple(
        math.fsum(max(v, 0.0) for j, v in enumerate(row) if j != k) for k, row in enumerate(pairs)
    )
    eligible = [h >= min_clicks for h in harvested]
    propensity, stderr = _fit(pairs, eligible)
    if len(groups) >= 2 and any(p is not None for p in propensity[1:]):
        stderr = _jackknife(pairs, groups, eligible, propensity, stderr)
    return Estimate(propensity, stderr, harvested)


def _jackknife(
    pairs: Sequence[Sequence[float]],
    groups: Sequence[Sequence[Sequence[float]]],
    eligible: list[bool],
    propensity: tuple[float | None, ...],
    stderr: tuple[float | None, ...],
) -> tuple[float | None, ...]:
    size = len(pairs)
    fits = []
    for group in groups:
        rest = [[pairs[k][j] - group[k][j] for j in range(size)] for k in range(size)]
        fits.append(_fit(rest, eligible)[0])
    g = len(groups)
    out = list(stderr)
    for k in range(1, size):
        values = [fit[k] for fit in fits]
        if propensity[k] is None or any(v is None for v in values):
            continue
        known = [v for v in values if v is not None]
        mean = math.fsum(known) / g
        out[k] = math.sqrt((g - 1) / g * math.fsum((v - mean) ** 2 for v in known))
    return tuple(out)


def _fit(
    pairs: Sequence[Sequence[float]], eligible: Sequence[bool]
) -> tuple[tuple[float | None, ...], tuple[float | None, ...]]:
    """Weighted least squares over the pairs of eligible ranks: (propensity, delta-method
    standard error) per rank."""
    size = len(pairs)
    edges: list[tuple[int, int, float, float]] = []  # (k, k', weight, log ratio)
    for k in range(size):
        for j in range(k + 1, size):
            a, b = pairs[k][j], pairs[j][k]
            if eligible[k] and eligible[j] and a > 0 and b > 0:
                edges.append((k, j, 1.0 / (1.0 / a + 1.0 / b), math.log(a / b)))
    reached = _reached_from_first(size, edges) if size and eligible[0] else set()
    unknowns = sorted(reached - {0})
    index = {k: i for i, k in enumerate(unknowns)}
    n = len(unknowns)
    normal = [[0.0] * n for _ in range(n)]
    rhs = [0.0] * n
    for k, j, w, y in edges:
        if k not in reached or j not in reached:
            continue
        for node, sign in ((k, 1.0), (j, -1.0)):
            i = index.get(node)
            if i is not None:
                normal[i][i] += w
                rhs[i] += sign * w * y
        ik, ij = index.get(k), index.get(j)
        if ik is not None and ij is not None:
            normal[ik][ij] -= w
            normal[ij][ik] -= w
    inverse = _inverse(normal)
    propensity: list[float | None] = [None] * size
    stderr: list[float | None] = [None] * size
    if 0 in reached:
        propensity[0], stderr[0] = 1.0, 0.0
    for k, i in index.items():
        log_p = math.fsum(inverse[i][c] * rhs[c] for c in range(n))
        p = math.exp(log_p)
        propensity[k] = p
        stderr[k] = p * math.sqrt(max(inverse[i][i], 0.0))
    return tuple(propensity), tuple(stderr)


def _reached_from_first(size: int, edges: Sequence[tuple[int, int, float, float]]) -> set[int]:
    neighbours: list[list[int]] = [[] for _ in range(size)]
    for k, j, _, _ in edges:
        neighbours[k].append(j)
        neighbours[j].append(k)
    reached = {0}
    todo = [0]
    while todo:
        for j in neighbours[todo.pop()]:
            if j not in reached:
                reached.add(j)
                todo.append(j)
    return reached


def _inverse(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss–Jordan with partial pivoting (the normal matrix of a connected graph with one node
    fixed is symmetric positive definite, so it is invertible)."""
    n = len(matrix)
    a = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        div = a[col][col]
        a[col] = [v / div for v in a[col]]
        for r in range(n):
            if r != col and a[r][col] != 0.0:
                f = a[r][col]
                a[r] = [v - f * u for v, u in zip(a[r], a[col], strict=True)]
    return [row[n:] for row in a]
