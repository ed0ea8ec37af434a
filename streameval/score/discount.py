"""Rank discounts: the weight of rank i (1-based) in DCG.

* ``log2``: 1 / log2(i + 1) — rank 1 weighs 1, rank 3 weighs 1/2 (trec_eval, sklearn).
* ``jarvelin``: Järvelin & Kekäläinen (2002): ranks i ≤ b are undiscounted, then
  1 / log_b(i). For the default b = 2 this is the seeds' DCG_p = rel_1 + Σ_{i≥2} rel_i/log2(i)
  (rank 1 undiscounted, rank 2 weighs 1/log2(2) = 1). For b > 2 the original paper does not
  discount ranks below b, because log_b(i) < 1 there would *boost* them; at i = b the two
  forms agree (1/log_b(b) = 1), so the discount is continuous and never exceeds 1.
"""

import functools
import math

from streameval.score.errors import ScoreInputError
from streameval.score.spec import Discount, MetricSpec


def _check_rank(i: int) -> None:
    if i < 1:
        raise ScoreInputError(f"ranks are 1-based, got {i}")


def log2(i: int) -> float:
    """1 / log2(i + 1) for the 1-based rank ``i``."""
    _check_rank(i)
    return 1.0 / math.log2(i + 1)


def jarvelin(i: int, base: float = 2.0) -> float:
    """1 for ranks i ≤ base, else 1 / log_base(i) (see the module docstring)."""
    _check_rank(i)
    if not base > 1.0:
        raise ScoreInputError(f"discount base must be > 1, got {base!r}")
    if i <= base:
        return 1.0
    return math.log(base) / math.log(i)


@functools.lru_cache(maxsize=64)
def _table(discount: Discount, base: float, n: int) -> tuple[float, ...]:
    if discount == "log2":
        return tuple(log2(i) for i in range(1, n + 1))
    return tuple(jarvelin(i, base) for i in range(1, n + 1))


def discount_table(spec: MetricSpec, n: int) -> tuple[float, ...]:
    """The discounts of ranks 1..n under ``spec`` (computed once per (discount, base, n))."""
    if n < 0:
        raise ScoreInputError(f"table length must be >= 0, got {n}")
    return _table(spec.discount, spec.discount_base, n)
