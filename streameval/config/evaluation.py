"""``[evaluation]``: what is measured and how (NDCG@k, join, windows, segments, bounds,
interleaving)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from streameval.config.base import FROZEN, Duration
from streameval.durations import format_duration


class DwellGrade(BaseModel):
    model_config = FROZEN

    #: a ``dwell`` interaction of at least this many milliseconds ...
    min_ms: int = Field(30_000, ge=0)
    #: ... grades its doc this (implicit relevance)
    grade: float = 2.0


class InterleavingSettings(BaseModel):
    """Interleaved lists (DESIGN §10; extension keys, ``[evaluation.interleaving]``)."""

    model_config = FROZEN

    #: what a team's result earns: "clicks" (1 per clicked result, team-draft's credit) or
    #: "grades" (its implicit grade, DESIGN §3: click 1, add_to_cart 2, purchase 3, ...)
    credit: Literal["clicks", "grades"] = "clicks"
    #: the detector's bound on ever raising a false alarm for one (ranker, opponent) pair
    alpha: float = Field(0.01, gt=0.0, lt=1.0)
    #: scale of the normal mixture over the per-list preference (the effect it is quickest
    #: for): 0.03, about what a 2-3 % drop of NDCG@10 moves the preference on decisive lists in
    #: the simulator's click model (benchmarks/interleaving_scale.py)
    mixture_scale: float = Field(0.03, gt=0.0, le=10.0)
    #: distinct team names kept; later ones fold into ``"__other__"``
    max_teams: int = Field(100, ge=2)


class EvaluationSettings(BaseModel):
    """What is measured and how: NDCG@k's variants, the join, the windows, the segments, the
    bounds on state (DESIGN §3, §4, §5)."""

    model_config = FROZEN

    #: the cutoffs k of NDCG@k (and judged coverage@k)
    ks: tuple[Annotated[int, Field(ge=1, le=1000)], ...] = Field((1, 3, 5, 10), min_length=1)
    #: which engine evaluates (docs/native.md, "The engine assembled"): "native", the record path
    #: compiled (``streameval._native``), agreeing with the Python engine exactly; or "python",
    #: the reference. Where the module is not built, "native" runs the Python engine with one
    #: WARNING at start; with an Avro source too (an INFO line when "native" is the default).
    engine: Literal["python", "native"] = "native"
    #: gain of a grade: "linear" (rel) or "exponential" (2^rel - 1)
    gain: Literal["linear", "exponential"] = "linear"
    #: discount of rank i: "log2" (1/log2(i+1)) or "jarvelin" (ranks below ``discount_base``
    #: undiscounted, then 1/log_b(i))
    discount: Literal["log2", "jarvelin"] = "log2"
    #: the base b of the "jarvelin" discount
    discount_base: float = Field(2.0, gt=1.0)
    #: the ideal ordering of judged relevance: "pool" (every judged doc of the query, as
    #: trec_eval) or "list" (the list's own docs)
    ideal: Literal["pool", "list"] = "pool"
    #: unjudged docs of judged relevance: "zero" (gain 0, a lower bound) or "condensed" (dropped
    #: before scoring)
    unjudged: Literal["zero", "condensed"] = "zero"
    #: a list whose ideal DCG is 0: "skip" (no NDCG, counted ``no_relevance``) or "zero"
    no_relevance: Literal["skip", "zero"] = "skip"
    #: how long (event time) a list stays open for interactions after its impression
    attribution_window: Duration = 300_000
    #: how far behind the newest event time of its partition an event may be and still count:
    #: the watermark is the newest event time less this
    allowed_lateness: Duration = 10_000
    #: the sliding event-time windows reported (each a multiple of ``bucket``)
    windows: tuple[Duration, ...] = Field((60_000, 300_000, 3_600_000), min_length=1)
    #: the windows' bucket: a finalized list counts in the bucket of its impression's time
    bucket: Duration = 10_000
    #: the impression labels that become Prometheus labels (the segments)
    segment_labels: tuple[str, ...] = ("ranker", "arm")
    #: distinct segment label combinations kept; the rest fold into ``"__other__"``
    max_segments: int = Field(100, ge=1)
    #: implicit relevance: the grade of each interaction action (a doc takes its highest)
    implicit_grades: dict[str, float] = Field(
        default_factory=lambda: {"click": 1.0, "add_to_cart": 2.0, "purchase": 3.0}
    )
    dwell_grade: DwellGrade = DwellGrade()
    #: open (not yet finalized) lists kept at most; beyond it the oldest is evicted and counted
    max_open_lists: int = Field(1_000_000, ge=1)
    #: clicks waiting for their impression (read out of order) kept at most (extension)
    max_pending_clicks: int = Field(100_000, ge=0)
    #: identities (event_id, else the exact record) of judgments remembered to tell a re-sent one
    #: from a new one, outside keyed judgment topics (extension)
    max_judgment_ids: int = Field(1_000_000, ge=1)
    #: records larger than this are invalid (reason "too_large")
    max_record_bytes: int = Field(1_048_576, ge=64)
    #: an event dated more than this after the timestamp of the Kafka record that carries it
    #: is invalid (reason "future_timestamp"): one event from a wrong clock would otherwise move
    #: the watermark ahead for good and make every in-time event after it late (extension)
    max_future_skew: Duration = 300_000
    #: the control arm of an A/B test (DESIGN §9): the segment labels (and values) that mark it;
    #: the ``vs_control`` detector compares every other segment with it
    control: dict[str, str] = Field(default_factory=lambda: {"arm": "control"}, min_length=1)
    #: interleaved lists: credit, detector (extension)
    interleaving: InterleavingSettings = InterleavingSettings()

    @model_validator(mode="after")
    def _windows_fit_buckets(self) -> EvaluationSettings:
        if self.bucket <= 0:
            raise ValueError("bucket must be positive")
        for w in self.windows:
            if w <= 0 or w % self.bucket:
                raise ValueError(
                    f"windows: {format_duration(w)} is not a positive multiple of the bucket "
                    f"({format_duration(self.bucket)})"
                )
        if len(set(self.windows)) != len(self.windows):
            raise ValueError("windows: each window may appear once")
        if len(set(self.ks)) != len(self.ks):
            raise ValueError("ks: each cutoff may appear once")
        if len(set(self.segment_labels)) != len(self.segment_labels):
            raise ValueError("segment_labels: each label may appear once")
        reserved = {"k", "window", "relevance", "outcome", "detector"}
        if clash := reserved.intersection(self.segment_labels):
            raise ValueError(f"segment_labels: {sorted(clash)} are reserved label names")
        return self

    @property
    def window_names(self) -> tuple[str, ...]:
        return tuple(format_duration(w) for w in self.windows)
