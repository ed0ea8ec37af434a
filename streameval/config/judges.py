"""``[judges]``: judge families, agreement, judgment freshness, coverage by query frequency."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, model_validator

from streameval.config.base import FROZEN, Duration


class JudgesSettings(BaseModel):
    """Judge families and the figures about them (DESIGN §12; docs/judges.md)."""

    model_config = FROZEN

    #: judge-id prefixes, each a family: a prefix ending in ``:`` makes every judge under it a
    #: family of its own (``llm:`` → ``llm:gpt-4o``, ``llm:claude``), any other prefix is one
    #: family named by it; a judge matching none (an empty judge too) is family ``human``
    families: tuple[Annotated[str, Field(min_length=1)], ...] = ("llm:",)
    #: families kept apart, in the order first seen; later ones fold into ``__other__``
    max_families: int = Field(8, ge=2, le=100)
    #: windows of judgment time for the agreement figure (besides ``all``: every shared pair)
    agreement_windows: tuple[Duration, ...] = Field((3_600_000,), min_length=1)
    #: the agreement (Krippendorff's alpha, interval) below which StreamevalJudgeAgreementLow fires
    agreement_floor: float = Field(0.667, ge=-1.0, le=1.0)
    #: shared (query, doc) pairs a window needs before the alert considers its agreement
    agreement_min_pairs: int = Field(50, ge=2)
    #: a judged doc whose newest grade is older than this at the list's impression time is stale
    max_age: Duration = 30 * 86_400_000
    #: the most frequent queries (by impressions since start) that make up the head
    head_queries: int = Field(100, ge=1, le=100_000)

    @model_validator(mode="after")
    def _valid(self) -> JudgesSettings:
        if len(set(self.families)) != len(self.families):
            raise ValueError("families: each prefix may appear once")
        if len(set(self.agreement_windows)) != len(self.agreement_windows):
            raise ValueError("agreement_windows: each window may appear once")
        if any(w <= 0 for w in self.agreement_windows):
            raise ValueError("agreement_windows: each window must be positive")
        if self.max_age <= 0:
            raise ValueError("max_age: must be positive")
        return self
