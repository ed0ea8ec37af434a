"""``[detection]``: the sequential regression detectors."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from streameval.config.base import FROZEN, Duration


class DetectionSettings(BaseModel):
    """Sequential regression detectors (DESIGN §9; docs/detection.md)."""

    model_config = FROZEN

    #: which detectors run; ``[]`` turns detection off
    detectors: tuple[Literal["vs_control", "vs_baseline"], ...] = ("vs_control", "vs_baseline")
    #: the smallest relative drop of NDCG@k worth a page (the CUSUM is tuned to it)
    min_relative_drop: float = Field(0.02, gt=0.0, lt=1.0)
    #: the false-alarm target: at most one false alarm per this much event time per series
    false_alarm_every: Duration = 30 * 86_400_000
    #: the cutoffs watched (each among ``evaluation.ks``; left at its default and 10 not
    #: scored, the largest of ``evaluation.ks`` is watched)
    ks: tuple[Annotated[int, Field(ge=1, le=1000)], ...] = Field((10,), min_length=1)
    #: the relevance sources watched
    #: (``implicit_debiased`` needs ``[propensity] enabled``; not watched by default)
    relevance: tuple[Literal["judged", "implicit", "implicit_debiased"], ...] = Field(
        ("judged", "implicit"), min_length=1
    )
    #: memory of the references, levels and variances (exponential forgetting in event time)
    half_life: Duration = 1_200_000
    #: queries remembered per series for their own reference (least recently seen forgotten)
    max_queries: int = Field(10_000, ge=1)
    #: a series steps once its residual variance rests on this many lists (warm-up)
    min_lists: int = Field(200, ge=2)

    @model_validator(mode="after")
    def _distinct(self) -> DetectionSettings:
        for name in ("detectors", "ks", "relevance"):
            values = getattr(self, name)
            if len(set(values)) != len(values):
                raise ValueError(f"{name}: each value may appear once")
        if self.half_life <= 0:
            raise ValueError("half_life must be positive")
        return self
