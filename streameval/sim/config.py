"""The simulator's parameters: one frozen dataclass, validated when built.

Every probability, rate and size has a default that gives plausible e-commerce search traffic;
a wrong value raises :class:`~streameval.errors.ConfigError` naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from streameval.errors import ConfigError

#: Grades run 0..3 (irrelevant, marginal, relevant, perfect); per-grade tuples have four entries.
GRADES = 4
PerGrade = tuple[float, float, float, float]


@dataclass(frozen=True, slots=True)
class Ranker:
    """One ranker of the A/B test: it orders candidates by ``true grade + N(0, noise²)``.

    ``noise`` is the ranker's quality: 0 ranks perfectly, larger is worse.
    """

    name: str
    noise: float = 1.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("ranker name: must not be empty")
        if not math.isfinite(self.noise) or self.noise < 0:
            raise ConfigError(f"ranker {self.name!r} noise: must be >= 0, got {self.noise}")


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Everything the traffic model can be told. Times are event time in milliseconds."""

    seed: int = 0
    #: impressions (result pages served) per event second, Poisson arrivals
    rate: float = 10.0
    #: event time over which impressions are generated (None: forever); the interactions of the
    #: last impressions follow after it
    duration_ms: int | None = None

    # --- catalogue ---
    queries: int = 1000
    #: candidate documents per query, each with a hidden true grade 0..3
    candidates: int = 25
    #: results per page (the ranked list shown)
    page_size: int = 10
    #: query popularity ~ 1 / rank**zipf_exponent
    zipf_exponent: float = 1.0
    #: share of candidates with true grade 0, 1, 2, 3
    grade_weights: PerGrade = (0.55, 0.25, 0.12, 0.08)

    # --- the A/B test ---
    control: Ranker = field(default_factory=lambda: Ranker("bm25-v1", 1.0))
    treatment: Ranker = field(default_factory=lambda: Ranker("ltr-v2", 1.0))
    #: share of requests served by the treatment arm
    treatment_share: float = 0.5
    #: event time after the start at which the treatment regresses (None: never)
    regression_at_ms: int | None = None
    #: expected relative drop of the treatment's judged NDCG@k once regressed (0.2 = 20 % lower).
    #: Mechanism: each shown result of the treatment is, with this probability, replaced by an
    #: off-topic document (as a broken filter or a stale index would do). An off-topic document
    #: has true grade 0 and no judgment for the query, so each list's expected DCG@k drops by
    #: exactly this share while its ideal DCG (the judged pool) stays: the expected NDCG@k drops
    #: by this share for every k, with `ideal = "pool"` and `unjudged = "zero"` (the defaults).
    regression_size: float = 0.2
    #: one ranker serves every request (no A/B test): the ``control`` ranker, labelled only
    #: ``ranker``; the regression then hits all traffic (issue 11)
    single_ranker: bool = False

    # --- the daily cycle of the query mix (issue 11) ---
    #: how far the query mix swings over a day: the queries whose candidates are richer in
    #: relevant documents (above the median) have their popularity scaled by
    #: ``1 + a·sin(2π·(t/day + phase))``, the others by ``1 - a·sin(…)``; each query's own lists
    #: do not change, but the mean NDCG moves by several per cent with no regression. 0 = off.
    daily_amplitude: float = 0.0
    #: the cycle's length, and where in it the simulation starts (a share of the day)
    day_ms: int = 86_400_000
    daily_phase: float = 0.0

    # --- the click model (position-based: examine, then click if attractive) ---
    #: P(examine rank i) = 1 / i**examination_decay
    examination_decay: float = 1.0
    #: P(click | examined, true grade)
    click_given_grade: PerGrade = (0.02, 0.15, 0.4, 0.7)
    #: median dwell time after a click, by true grade (log-normal around it)
    dwell_median_ms: PerGrade = (5_000.0, 15_000.0, 40_000.0, 80_000.0)
    #: P(purchase | click, true grade); a purchase follows an add_to_cart
    purchase_given_grade: PerGrade = (0.0, 0.01, 0.05, 0.15)
    #: no interaction is later than this after its impression (keep it inside the pipeline's
    #: attribution window, default 5 min, less the allowed lateness)
    max_interaction_delay_ms: int = 240_000

    # --- explicit judgments ---
    #: share of (query, doc) pairs judged at the start (exact per query: round(share * candidates))
    judged_share: float = 0.5
    #: further judgments of not yet judged pairs, per event second, after the start
    judgment_rate: float = 0.1
    #: probability that a rater's grade is off by one from the true grade
    rater_noise: float = 0.1
    raters: int = 5

    # --- an LLM judge beside the raters (issue 31; off by default: logs stay as they were) ---
    #: the model of an LLM judge, whose judgments name ``llm:<model>``; "" = no LLM judge. It
    #: grades every pair the raters judge at the start, then re-grades judged pairs at
    #: ``llm_rate`` (its own random stream: the rest of the traffic does not change)
    llm_judge: str = ""
    #: LLM re-grades of pairs judged at the start, per event second
    llm_rate: float = 1.0
    #: probability that the LLM's grade is off by one from the true grade (as ``rater_noise``)
    llm_noise: float = 0.1
    #: the LLM's bias, growing with event time: this many grade points added per event hour
    #: (a fractional part rounds up at random, so the expected shift is exact), clipped to 0..3
    llm_drift: float = 0.0

    # --- interleaving (DESIGN §10) ---
    #: serve every request one team-draft interleaved page of control and treatment (each
    #: result naming its ranker as its ``team``) instead of splitting requests between the arms;
    #: the same click model and the same regression (of the treatment's own ranking)
    interleaving: bool = False
    #: with ``interleaving``, the share of requests served interleaved; the rest are split
    #: between the arms as without it (a team trying interleaving on part of its traffic)
    interleaving_share: float = 1.0

    # --- noise records, for demos of the intake accounting ---
    #: probability, per impression or click, of an extra noise record after it: half exact
    #: duplicates, half truncated (invalid JSON) records
    noise_share: float = 0.0

    def __post_init__(self) -> None:
        _positive("rate", self.rate)
        if self.duration_ms is not None and self.duration_ms < 0:
            raise ConfigError(f"duration_ms: must be >= 0, got {self.duration_ms}")
        for name in ("queries", "candidates", "page_size", "raters"):
            value = getattr(self, name)
            if value < 1:
                raise ConfigError(f"{name}: must be >= 1, got {value}")
        if self.queries < 2:
            raise ConfigError("queries: at least 2 (off-topic documents come from other queries)")
        if self.page_size > self.candidates:
            raise ConfigError(
                f"page_size: {self.page_size} is more than the candidates per query "
                f"({self.candidates})"
            )
        _non_negative("zipf_exponent", self.zipf_exponent)
        _non_negative("examination_decay", self.examination_decay)
        _non_negative("judgment_rate", self.judgment_rate)
        _non_negative("llm_rate", self.llm_rate)
        if not math.isfinite(self.llm_drift):
            raise ConfigError(f"llm_drift: must be finite, got {self.llm_drift}")
        for name in (
            "treatment_share",
            "regression_size",
            "judged_share",
            "rater_noise",
            "llm_noise",
            "noise_share",
            "daily_amplitude",
            "daily_phase",
            "interleaving_share",
        ):
            _probability(name, getattr(self, name))
        for name in ("click_given_grade", "purchase_given_grade"):
            values = getattr(self, name)
            _per_grade(name, values)
            for v in values:
                _probability(name, v)
        _per_grade("grade_weights", self.grade_weights)
        if any(w < 0 or not math.isfinite(w) for w in self.grade_weights) or not sum(
            self.grade_weights
        ):
            raise ConfigError("grade_weights: non-negative, not all zero")
        _per_grade("dwell_median_ms", self.dwell_median_ms)
        for v in self.dwell_median_ms:
            _positive("dwell_median_ms", v)
        if self.max_interaction_delay_ms < 1:
            raise ConfigError("max_interaction_delay_ms: must be >= 1")
        if self.regression_at_ms is not None and self.regression_at_ms < 0:
            raise ConfigError(f"regression_at_ms: must be >= 0, got {self.regression_at_ms}")
        if self.day_ms < 1:
            raise ConfigError(f"day_ms: must be >= 1, got {self.day_ms}")
        if self.control.name == self.treatment.name:
            raise ConfigError("control and treatment rankers need different names")


def _positive(name: str, value: float) -> None:
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name}: must be > 0, got {value}")


def _non_negative(name: str, value: float) -> None:
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name}: must be >= 0, got {value}")


def _probability(name: str, value: float) -> None:
    if not (0.0 <= value <= 1.0):
        raise ConfigError(f"{name}: must be within [0, 1], got {value}")


def _per_grade(name: str, values: tuple[float, ...]) -> None:
    if len(values) != GRADES:
        raise ConfigError(f"{name}: one value per grade 0..3 ({GRADES} values), got {len(values)}")
