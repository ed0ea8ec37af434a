"""``[srm]``: the sample-ratio mismatch test of the A/B (DESIGN §12; docs/srm.md)."""

from __future__ import annotations

import math

from pydantic import BaseModel, Field, field_validator

from streameval.config.base import FROZEN

#: how far the expected shares' sum may be from 1 (rounding of shares written as decimals)
SUM_TOLERANCE = 1e-6


class SrmSettings(BaseModel):
    """An always-valid test of the lists per arm against the expected split (Lindon & Malek
    2022): arms are the values of ``evaluation.control``'s labels."""

    model_config = FROZEN

    #: test the split of the A/B's lists between its arms (off: no test, no metrics)
    enabled: bool = True
    #: the expected share of each arm's lists, e.g. ``{control = 0.5, treatment = 0.5}``
    #: (shares summing to 1; the lists of other arms are counted as excluded); unset: equal
    #: shares over the arms seen, the test restarting whenever a new arm appears
    expected: dict[str, float] | None = None
    #: the bound on ever raising a false alarm over the test's whole run (Ville's inequality);
    #: 0.001, the usual bar of SRM checks (Statsig's health check alerts below p = 0.001)
    alpha: float = Field(0.001, gt=0.0, lt=1.0)
    #: the total concentration of the Dirichlet prior over splits, centred on the expected one:
    #: larger is quicker for small mismatches, slower for gross ones (docs/srm.md)
    concentration: float = Field(1000.0, gt=0.0, le=1e9)

    @field_validator("expected")
    @classmethod
    def _shares(cls, expected: dict[str, float] | None) -> dict[str, float] | None:
        if expected is None:
            return None
        if len(expected) < 2:
            raise ValueError("name at least two arms and their shares, or leave it unset")
        for arm, share in expected.items():
            if arm in ("", "__other__"):
                raise ValueError(f"{arm!r} is not an arm (lists without one are excluded)")
            if not (math.isfinite(share) and 0.0 < share < 1.0):
                raise ValueError(f"the share of {arm!r} is {share}: each share is in (0, 1)")
        total = math.fsum(expected.values())
        if abs(total - 1.0) > SUM_TOLERANCE:
            raise ValueError(f"the shares sum to {total:g}, not 1: give each arm its share")
        return expected
