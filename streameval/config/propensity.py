"""``[propensity]``: position-debiased implicit relevance (DESIGN §12; docs/propensity.md)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from streameval.config.base import FROZEN


class PropensitySettings(BaseModel):
    """The examination propensity per rank, estimated from the stream by intervention
    harvesting, and the relevance source ``implicit_debiased`` scored with it."""

    model_config = FROZEN

    #: estimate the propensities and score ``implicit_debiased`` (opt-in: it costs replay
    #: throughput, see docs/propensity.md)
    enabled: bool = False
    #: the ranks whose propensity is estimated (deeper ranks take the last one's)
    max_rank: int = Field(10, ge=2, le=100)
    #: propensities are clipped from below at this value before weighting (weights <= 1/clip)
    clip: float = Field(0.1, gt=0.0, le=1.0)
    #: (query, doc) entries of the estimator's table; once full, new pairs are not added
    max_entries: int = Field(1_000_000, ge=1)
    #: clicks harvested at a rank before its propensity is estimated; until every rank up to
    #: max_rank is, implicit_debiased counts every list as no_relevance
    min_clicks: float = Field(100.0, ge=1.0)
    #: the estimate is refreshed after every this many finalized lists (in input order)
    refresh_lists: int = Field(10_000, ge=1)
