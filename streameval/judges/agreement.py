"""Agreement between judge families: Krippendorff's alpha with the interval metric.

Krippendorff, K. (2011). *Computing Krippendorff's Alpha-Reliability*. Annenberg School for
Communication, University of Pennsylvania; Hayes, A. F. & Krippendorff, K. (2007). Answering the
call for a standard reliability measure for coding data. *Communication Methods and Measures*
1(1), 77–89.

With the values of each unit (a (query, doc) pair) by its coders, ``m_u`` of them (a unit with
fewer than two is not pairable and left out), ``n`` the pairable values in all, and the interval
metric ``δ²(c, k) = (c − k)²``::

    alpha = 1 − D_o / D_e
          = 1 − (n − 1) · Σ_u [Σ_{i≠j in u} (v_i − v_j)² / (m_u − 1)] / Σ_{i≠j in all} (v_i − v_j)²

(the coincidence-matrix form of Krippendorff 2011 §C, written with the pairs of values it counts),
and ``Σ_{i≠j} (v_i − v_j)² = 2·m·Σv² − 2·(Σv)²`` over any ``m`` values. alpha is 1 for perfect
agreement, 0 for agreement at chance, below 0 for systematic disagreement; it is undefined
(None) when every value is the same (no expected disagreement).

Why interval, not ordinal: a family's grade of a doc is the mean of its judges' latest grades,
a number that need not be one of the scale's points, and NDCG's gain uses the grade's magnitude;
the interval alpha of two families also rests on four sums (:class:`PairSums`), so a window of
shared pairs costs no sort.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def alpha_interval(units: Iterable[Sequence[float]]) -> float | None:
    """Krippendorff's alpha, interval metric, of ``units`` (each: the values its coders gave,
    missing values left out; any number of coders). None: nothing pairable, or no variation."""
    n = 0
    total = 0.0
    total_sq = 0.0
    observed = 0.0
    for values in units:
        m = len(values)
        if m < 2:
            continue
        s1 = sum(values)
        s2 = sum(v * v for v in values)
        observed += (2.0 * m * s2 - 2.0 * s1 * s1) / (m - 1)
        n += m
        total += s1
        total_sq += s2
    expected = 2.0 * n * total_sq - 2.0 * total * total
    if n < 2 or expected <= 0.0:
        return None
    return 1.0 - (n - 1) * observed / expected


@dataclass(slots=True)
class PairSums:
    """The sufficient statistics of the interval alpha of two coders over units both coded."""

    units: int = 0
    diff_sq: float = 0.0  # Σ (a − b)²
    total: float = 0.0  # Σ a + Σ b
    total_sq: float = 0.0  # Σ a² + Σ b²

    def add(self, a: float, b: float) -> None:
        self.units += 1
        d = a - b
        self.diff_sq += d * d
        self.total += a + b
        self.total_sq += a * a + b * b

    @property
    def alpha(self) -> float | None:
        """alpha of the units added (:func:`alpha_interval` with two values per unit)."""
        n = 2 * self.units
        expected = n * self.total_sq - self.total * self.total
        if self.units < 1 or expected <= 1e-12 * max(1.0, n * self.total_sq):
            return None
        return 1.0 - (n - 1) * self.diff_sq / expected
