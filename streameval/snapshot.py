"""The read-only picture of the pipeline that exporters read.

The pipeline builds a :class:`Snapshot` (immutable, plain data) whenever it is asked; the Prometheus
collector, the status page and ``replay``'s printers only ever read snapshots, so a scrape never
touches live state and never stalls intake.

Everything needed to export DESIGN §5 is here, as *sufficient statistics* (counts, sums, sums of
squares): means and standard errors are derived, never stored, so partial figures from several
instances combine exactly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from streameval.values import Segment


@dataclass(frozen=True, slots=True)
class Moments:
    """Count, sum and sum of squares of a sample: enough for its mean and standard error."""

    n: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    @property
    def stderr(self) -> float | None:
        """Standard error of the mean (sample standard deviation / sqrt(n)); None below n = 2."""
        if self.n < 2:
            return None
        mean = self.total / self.n
        var = (self.total_sq - self.n * mean * mean) / (self.n - 1)
        return math.sqrt(max(var, 0.0) / self.n)

    def add(self, value: float) -> Moments:
        return Moments(self.n + 1, self.total + value, self.total_sq + value * value)

    def __add__(self, other: Moments) -> Moments:
        return Moments(self.n + other.n, self.total + other.total, self.total_sq + other.total_sq)


@dataclass(frozen=True, slots=True)
class NdcgRow:
    """NDCG@k over one window for one relevance source and segment."""

    window: str  # the window's name as configured, e.g. "5m"
    relevance: str  # "implicit" or "judged"
    segment: Segment
    k: int
    ndcg: Moments  # over the lists that had an NDCG value (or counted 0, per `no_relevance`)
    coverage: Moments | None = None  # judged coverage@k over the same lists (judged source only)


@dataclass(frozen=True, slots=True)
class EngagementRow:
    """Click figures over one window and segment (they do not depend on k or relevance)."""

    window: str
    segment: Segment
    lists: int  # finalized lists whose impression falls in the window
    clicked_lists: int  # lists with at least one `click` interaction
    reciprocal_rank: Moments  # 1/rank of the first click per list (0 for none) -> MRR
    zero_click_lists: int  # lists with no interaction of any kind

    @property
    def click_through_rate(self) -> float | None:
        return self.clicked_lists / self.lists if self.lists else None

    @property
    def zero_click_rate(self) -> float | None:
        return self.zero_click_lists / self.lists if self.lists else None


@dataclass(frozen=True, slots=True)
class CumulativeRow:
    """Since-start sums for `rate()`: `streameval_ndcg_sum_total`, `..._lists_scored_total`."""

    relevance: str
    segment: Segment
    k: int
    ndcg_sum: float
    lists_scored: int


@dataclass(frozen=True, slots=True)
class InterleavingRow:
    """Interleaving outcomes of one ordered pair of rankers over one window (DESIGN §10).

    ``lists``: the window's lists where both were shown and a team earned credit (wins + losses
    + ties); lists without credit are not in it (they are counted in the outcomes counter).
    """

    window: str
    ranker: str
    opponent: str
    wins: int
    losses: int
    ties: int

    @property
    def lists(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def preference(self) -> float | None:
        """(wins − losses) / lists, in [−1, 1]: the mean of +1 (win), −1 (loss), 0 (tie)."""
        n = self.lists
        return (self.wins - self.losses) / n if n else None

    @property
    def stderr(self) -> float | None:
        """Standard error of :attr:`preference` (sample standard deviation of the per-list
        ±1/0 over √n, as for NDCG); None below 2 lists."""
        n = self.lists
        if n < 2:
            return None
        mean = (self.wins - self.losses) / n
        var = (self.wins + self.losses - n * mean * mean) / (n - 1)
        return math.sqrt(max(var, 0.0) / n)


@dataclass(frozen=True, slots=True)
class PairTestRow:
    """The sequential test of one ordered pair (``detector = "interleaving"``): is ``ranker``
    worse than ``opponent``? Since the first list of the pair, in event time."""

    ranker: str
    opponent: str
    wins: int
    losses: int
    statistic: float  # log of the mixture likelihood ratio
    threshold: float  # log(1 / alpha)
    first_alarm_ms: int | None  # start of the bucket at which the alarm first held

    @property
    def alarm(self) -> bool:
        return self.statistic >= self.threshold


@dataclass(frozen=True, slots=True)
class SrmArmRow:
    """One arm of the sample-ratio test (DESIGN §12): its lists since the test began."""

    arm: str
    lists: int
    observed_share: float  # lists / the tested arms' lists (NaN before any)
    expected_share: float


@dataclass(frozen=True, slots=True)
class SrmRow:
    """The sample-ratio test of the A/B (DESIGN §12): the lists per arm against the expected
    split, since ``since_ms`` (the test's first bucket; it restarts when the arms change)."""

    arms: tuple[SrmArmRow, ...]
    excluded: int  # lists without an arm, or of an arm not expected, since the test began
    statistic: float  # log of the Dirichlet-multinomial Bayes factor
    threshold: float  # log(1 / alpha)
    first_alarm_ms: int | None  # start of the bucket at which the alarm first held
    since_ms: int | None

    @property
    def alarm(self) -> bool:
        return self.statistic >= self.threshold


@dataclass(frozen=True, slots=True)
class Intake:
    """Where every record read went.

    Invariant: read == accepted + invalid + duplicate + late + unmatched + pending.
    """

    records_read: int = 0
    accepted: Mapping[str, int] = field(default_factory=dict)  # by event type
    invalid: Mapping[str, int] = field(default_factory=dict)  # by reason
    duplicate: Mapping[str, int] = field(default_factory=dict)  # by event type
    late: Mapping[str, int] = field(default_factory=dict)  # by event type
    unmatched_clicks: int = 0
    #: clicks read before their impression, still waiting for it (each later ends as accepted or
    #: unmatched); zero at end of input
    pending_clicks: int = 0

    @property
    def accounted(self) -> int:
        return (
            sum(self.accepted.values())
            + sum(self.invalid.values())
            + sum(self.duplicate.values())
            + sum(self.late.values())
            + self.unmatched_clicks
            + self.pending_clicks
        )


@dataclass(frozen=True, slots=True)
class DetectionRow:
    """The state of one sequential regression detector series (DESIGN §9)."""

    detector: str  # "vs_control" or "vs_baseline"
    relevance: str
    segment: Segment
    k: int
    statistic: float  # the CUSUM statistic W
    threshold: float  # h: alarm while statistic >= threshold
    alarm: bool
    first_alarm_ms: int | None  # start of the bucket at which the alarm first held
    #: estimated shift of NDCG@k (negative = a drop) over the current CUSUM excursion (the last
    #: bucket when the statistic is 0) and its standard error; None before the first step
    shift: float | None = None
    shift_stderr: float | None = None
    #: start of the last bucket the series stepped on (None while warming up)
    bucket_ms: int | None = None
    #: start of the bucket at which the current alarm (or, when cleared, the last one) began to
    #: hold; None before any alarm
    alarm_since_ms: int | None = None
    #: start of the bucket at which the last alarm stopped holding, in event time; None while
    #: it holds or before any alarm
    cleared_ms: int | None = None


@dataclass(frozen=True, slots=True)
class AgreementRow:
    """Agreement between two judge families over the (query, doc) pairs both graded whose newer
    grade falls in the window of judgment time (``"all"``: every shared pair held)."""

    window: str
    family: str
    other: str
    pairs: int
    alpha: float | None  # Krippendorff's alpha, interval metric; None: undefined


@dataclass(frozen=True, slots=True)
class FreshnessRow:
    """Judged docs shown in the top max(ks) of the window's lists, and those of them whose
    newest grade was older than ``[judges] max_age`` at the list's impression."""

    window: str
    judged_docs: int
    stale_docs: int

    @property
    def stale_share(self) -> float | None:
        return self.stale_docs / self.judged_docs if self.judged_docs else None


@dataclass(frozen=True, slots=True)
class QueryClassCoverageRow:
    """Judged coverage@k over the window's lists of head or tail queries (by frequency)."""

    window: str
    query_class: str  # "head" or "tail"
    k: int
    lists: int
    coverage_sum: float  # judged coverage@k summed over the lists

    @property
    def coverage(self) -> float | None:
        """Mean judged coverage@k of the lists."""
        return self.coverage_sum / self.lists if self.lists else None


@dataclass(frozen=True, slots=True)
class JudgesView:
    """Judge families, their agreement, freshness and coverage by query frequency (DESIGN §12)."""

    families: tuple[str, ...] = ()
    agreement: tuple[AgreementRow, ...] = ()
    agreement_floor: float = 0.0
    agreement_min_pairs: int = 0
    #: the newest judgment time seen (the agreement windows end there); None: no judgment
    newest_judgment_ms: int | None = None
    max_age_ms: int = 0
    freshness: tuple[FreshnessRow, ...] = ()
    coverage_by_class: tuple[QueryClassCoverageRow, ...] = ()
    head_queries: int = 0


@dataclass(frozen=True, slots=True)
class PropensityRow:
    """The examination propensity of one rank, relative to rank 1 (docs/propensity.md)."""

    position: int  # 1-based rank
    propensity: float | None  # None: not estimated yet (too few clicks harvested)
    stderr: float | None
    harvested_clicks: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything the exporters show, as of one moment of the pipeline."""

    segment_labels: tuple[str, ...]
    windows: tuple[str, ...]
    ks: tuple[int, ...]
    ndcg: tuple[NdcgRow, ...] = ()
    engagement: tuple[EngagementRow, ...] = ()
    cumulative: tuple[CumulativeRow, ...] = ()
    #: finalized lists by (relevance, outcome): outcomes "scored", "no_relevance", "evicted", …
    lists_total: Mapping[tuple[str, str], int] = field(default_factory=dict)
    intake: Intake = field(default_factory=Intake)
    #: identities forgotten over their caps before their time, by kind: "judgment" (judgment
    #: identities over ``max_judgment_ids``), "list" (ids of closed lists over ``max_open_lists``)
    forgotten_ids: Mapping[str, int] = field(default_factory=dict)
    open_lists: int = 0
    judgments: int = 0
    watermark_ms: int | None = None
    horizon_ms: int | None = None
    #: records behind the log end, by (topic, partition); empty outside the Kafka daemon
    consumer_lag: Mapping[tuple[str, int], int] = field(default_factory=dict)
    ready: bool = True
    #: interleaving (DESIGN §10): window rows per ordered ranker pair, since-start outcomes by
    #: (ranker, opponent, outcome), and the sequential test per ordered pair
    interleaving: tuple[InterleavingRow, ...] = ()
    interleaving_outcomes: Mapping[tuple[str, str, str], int] = field(default_factory=dict)
    interleaving_tests: tuple[PairTestRow, ...] = ()
    #: state-topic records skipped as not ours (corrupt, foreign), since start
    state_records_invalid: int = 0
    #: records a re-read needed that retention had deleted, since start
    reread_records_deleted: int = 0
    #: dead letters the broker did not take (each also a WARNING naming its record), since start
    dead_letters_failed: int = 0
    #: regression detectors, one row per detector and series (empty when none run)
    detection: tuple[DetectionRow, ...] = ()
    #: the sample-ratio test of the A/B (None: off, or fewer than two arms seen)
    srm: SrmRow | None = None
    #: judge families, agreement, freshness, coverage by query frequency (None: not tracked)
    judges: JudgesView | None = None
    #: the examination propensity per rank (``[propensity]``; empty when it is off)
    propensity: tuple[PropensityRow, ...] = ()
    #: the estimator's table: (query, doc) entries held, and results not recorded (table full)
    propensity_entries: int = 0
    propensity_dropped: int = 0
