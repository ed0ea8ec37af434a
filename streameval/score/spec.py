"""The declaration of a metric, kept apart from its arithmetic (as ir_measures does)."""

import math
from dataclasses import dataclass
from typing import Literal

from streameval.score.errors import MetricSpecError

Gain = Literal["linear", "exponential"]
Discount = Literal["log2", "jarvelin"]

#: the largest cutoff accepted; impressions carry at most 1000 results (DESIGN §2)
MAX_K = 1000

_GAINS: tuple[str, ...] = ("linear", "exponential")
_DISCOUNTS: tuple[str, ...] = ("log2", "jarvelin")


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """Which NDCG@k variant to compute (DESIGN §3, "Metric variants").

    ``ks`` may be given in any order and with repeats: it is stored sorted and deduplicated.
    ``discount_base`` only matters for the ``jarvelin`` discount but must be > 1 always.
    Raises :class:`MetricSpecError` (a ``ConfigError``) naming the offending key.
    """

    ks: tuple[int, ...] = (1, 3, 5, 10)
    gain: Gain = "linear"
    discount: Discount = "log2"
    discount_base: float = 2.0

    def __post_init__(self) -> None:
        ks = tuple(self.ks)
        if not ks:
            raise MetricSpecError("ks: at least one cutoff is required")
        for k in ks:
            if isinstance(k, bool) or not isinstance(k, int):
                raise MetricSpecError(f"ks: cutoffs must be integers, got {k!r}")
            if not 1 <= k <= MAX_K:
                raise MetricSpecError(f"ks: each cutoff must lie in 1..{MAX_K}, got {k}")
        object.__setattr__(self, "ks", tuple(sorted(set(ks))))
        if self.gain not in _GAINS:
            raise MetricSpecError(f"gain: expected one of {_GAINS}, got {self.gain!r}")
        if self.discount not in _DISCOUNTS:
            raise MetricSpecError(f"discount: expected one of {_DISCOUNTS}, got {self.discount!r}")
        base = self.discount_base
        if isinstance(base, bool) or not isinstance(base, int | float):
            raise MetricSpecError(f"discount_base: expected a number, got {base!r}")
        if not (math.isfinite(base) and base > 1.0):
            raise MetricSpecError(f"discount_base: must be finite and > 1, got {base!r}")
        object.__setattr__(self, "discount_base", float(base))

    @property
    def max_k(self) -> int:
        """The largest cutoff: how deep any list or ideal ordering has to be read."""
        return self.ks[-1]
