"""The always-valid test of a sample ratio (DESIGN §12): pure arithmetic, no state.

Lindon & Malek, "Anytime-Valid Inference for Multinomial Count Data", NeurIPS 2022. Under the
null, each counted unit (here: a finalized list) falls in arm ``i`` with the expected share
``p_i``. Against it, the alternative mixes every split over a Dirichlet prior centred on the
expected one, ``Dir(a)`` with ``a_i = c · p_i`` (``c`` the prior's concentration). The ratio of
the Dirichlet-multinomial marginal likelihood of the counts ``x`` (``n = Σ x_i``) to their
likelihood under the null is, in closed form,

    log BF = lgamma(Σ a) − lgamma(Σ a + n) + Σ [lgamma(a_i + x_i) − lgamma(a_i)] − Σ x_i log p_i

It is a nonnegative martingale under the null with mean 1, so by Ville's inequality
``P(BF_n >= 1/α for some n) <= α``: the test may be looked at after every unit, or at any
subsequence of them (e.g. after each bucket of counts), and raises a false alarm with
probability at most ``α`` over its whole, unbounded, run. The statistic depends on the counts
only, not on their order, so counts summed per bucket (and over partitions) give the same value.

Equivalently, unit by unit (the product form, used by the benchmark): the ``n+1``-th unit,
falling in arm ``i``, multiplies the factor by ``(a_i + x_i) / ((Σ a + n) · p_i)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def log_bayes_factor(counts: Sequence[int], shares: Sequence[float], concentration: float) -> float:
    """log BF of ``counts`` per arm against the expected ``shares`` (positive, summing to 1),
    under a Dirichlet prior of total ``concentration`` centred on them; 0 for no counts."""
    n = 0
    total = 0.0
    for x, p in zip(counts, shares, strict=True):
        if x:
            a = concentration * p
            total += math.lgamma(a + x) - math.lgamma(a) - x * math.log(p)
            n += x
    if not n:
        return 0.0
    return total + math.lgamma(concentration) - math.lgamma(concentration + n)


def threshold(alpha: float) -> float:
    """The alarm threshold of the log factor: log(1/α) (Ville's inequality)."""
    return math.log(1.0 / alpha)
