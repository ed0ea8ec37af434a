"""The Prometheus collector: one :class:`~streameval.snapshot.Snapshot` per scrape, as DESIGN §5.

The collector owns no metric objects and no state besides the snapshot source: every scrape asks
``source()`` for one snapshot and formats it, so all the families of one scrape agree with each
other (a window's ``streameval_ndcg`` is exactly its ``streameval_window_ndcg_sum`` over its
``streameval_window_lists``). Formatting is all it does — no arithmetic beyond a division per row —
because it runs on the HTTP thread while intake goes on.

The caller registers it in a :class:`prometheus_client.CollectorRegistry` it owns::

    registry = CollectorRegistry()
    registry.register(SnapshotCollector(pipeline.snapshot, version=streameval.__version__))

No ``_created`` samples are emitted: the snapshot carries no start time, and a collector that
reads a snapshot cannot know when a series was born.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from streameval.errors import ConfigError, StreamevalError
from streameval.events.decode import INVALID_REASONS
from streameval.export import names
from streameval.snapshot import Snapshot
from streameval.values import Segment

#: Event types that always have an intake series (at 0 before any record), so ``rate()`` and
#: ``increase()`` work from the first scrape.
KNOWN_EVENT_TYPES: tuple[str, ...] = ("impression", "click", "judgment")

_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
#: Label names the collector uses itself next to the segment labels.
_OWN_LABELS = frozenset((*names.WINDOW_LABELS, *names.DETECTION_LABELS))

_HELP: dict[str, str] = {
    names.NDCG: "Mean NDCG@k of the lists whose impression falls in the window, as of the "
    "evaluation horizon (omitted while the window has no scored list).",
    names.NDCG_STDERR: "Standard error of streameval_ndcg (95% band = mean +/- 1.96 * stderr); "
    "omitted below 2 lists.",
    names.WINDOW_NDCG_SUM: "Sum of NDCG@k over the window's scored lists (sum this and "
    "streameval_window_lists across instances, then divide, for the exact mean).",
    names.WINDOW_NDCG_SUM_SQUARES: "Sum of squared NDCG@k over the window's scored lists (for the "
    "standard error across instances).",
    names.WINDOW_LISTS: "Number of lists behind streameval_ndcg in the window.",
    names.JUDGED_COVERAGE: "Mean share of the top k results that have an explicit judgment "
    "(judged relevance only).",
    names.CLICK_THROUGH_RATE: "Share of the window's lists with at least one click.",
    names.MRR: "Mean reciprocal rank of the first click per list (0 for a list without click).",
    names.ZERO_CLICK_RATE: "Share of the window's lists with no interaction of any kind.",
    names.ENGAGEMENT_LISTS: "Number of finalized lists behind the window's click figures.",
    names.CLICKED_LISTS: "Number of the window's lists with at least one click.",
    names.NDCG_SUM_TOTAL: "Sum of NDCG@k over every list scored since start "
    "(rate() of it over rate() of streameval_lists_scored_total is the mean over any range).",
    names.LISTS_SCORED_TOTAL: "Number of lists with an NDCG@k value since start.",
    names.LISTS_TOTAL: "Finalized lists since start, by relevance source and outcome "
    "(scored, no_relevance, ...).",
    names.RECORDS_READ_TOTAL: "Records taken from the input; each lands in exactly one of "
    "events, invalid, late, duplicate or unmatched clicks.",
    names.EVENTS_TOTAL: "Events accepted, by event type.",
    names.INVALID_EVENTS_TOTAL: "Records rejected as invalid, by reason.",
    names.LATE_EVENTS_TOTAL: "Events that arrived after their list or window was final, by type.",
    names.DUPLICATE_EVENTS_TOTAL: "Events dropped as duplicates of one already counted, by type.",
    names.UNMATCHED_CLICKS_TOTAL: "Clicks whose impression was never seen.",
    names.OPEN_LISTS: "Lists waiting for their attribution window to close.",
    names.PENDING_CLICKS: "Clicks read before their impression, waiting for it; each later "
    "ends as an accepted event or an unmatched click (add it to the intake outcomes for an "
    "exact sum at any moment).",
    names.JUDGMENTS: "Explicit judgments held, one per (query_id, doc_id).",
    names.WATERMARK: "Event-time watermark (newest event time over the partitions read, less "
    "the allowed lateness), in Unix seconds.",
    names.HORIZON: "Evaluation horizon (watermark less the attribution window): the windows are "
    "reported as of this event time, in Unix seconds.",
    names.CONSUMER_LAG: "Records behind the end of the log, by topic and partition.",
    names.BUILD_INFO: "Always 1; the label carries the streameval version.",
    names.INTERLEAVING_LISTS: "Interleaved lists in the window where both rankers were shown "
    "and a team earned credit (wins + losses + ties).",
    names.INTERLEAVING_WINS: "Of those lists, the ones where the ranker's results earned more "
    "credit than the opponent's.",
    names.INTERLEAVING_TIES: "Of those lists, the ones where both earned the same credit.",
    names.INTERLEAVING_PREFERENCE: "(wins - losses) / lists, in [-1, 1]: above 0 the ranker is "
    "preferred to the opponent.",
    names.INTERLEAVING_PREFERENCE_STDERR: "Standard error of streameval_interleaving_preference "
    "(95% band = preference +/- 1.96 * stderr); omitted below 2 lists.",
    names.INTERLEAVING_OUTCOMES_TOTAL: "Interleaved lists since start by ranker, opponent and "
    "outcome (win, loss, tie, no_click).",
    names.REGRESSION_STATISTIC: "Sequential detector statistic: vs_control and vs_baseline, "
    "the CUSUM of the log-likelihood ratio of a drop of detection.min_relative_drop against "
    "none, per bucket; interleaving, the log of the mixture likelihood ratio that the ranker "
    "is worse than the opponent.",
    names.REGRESSION_THRESHOLD: "The statistic's alarm threshold (vs_control, vs_baseline: "
    "log of the false-alarm period in buckets, Lorden 1971; interleaving: log(1/alpha)).",
    names.REGRESSION_ALARM: "1 while the regression detector's statistic is at or beyond its "
    "threshold, else 0.",
    names.REGRESSION_SHIFT: "Estimated shift of NDCG@k behind the detector (negative = a drop; "
    "vs_control: against the control arm, vs_baseline: against its own past), over the "
    "current excursion of the statistic.",
    names.REGRESSION_SHIFT_STDERR: "Standard error of streameval_regression_shift.",
    names.REGRESSION_FIRST_ALARM: "Event time of the bucket at which the detector's alarm "
    "first held, in Unix seconds (absent until it has).",
    names.STATE_RECORDS_INVALID_TOTAL: "Records of the state topic that were not a bucket of "
    "ours (corrupt or foreign): skipped; their partition is re-read in full.",
    names.REREAD_RECORDS_DELETED_TOTAL: "Records a re-read after a restart or rebalance needed "
    "but the topic no longer held (deleted by retention since the commit).",
    names.DEAD_LETTERS_FAILED_TOTAL: "Dead letters the dead-letter topic did not take (refused, "
    "or not delivered in time); each is also a warning in the log naming its record.",
    names.FORGOTTEN_IDS_TOTAL: "Remembered identities forgotten over their cap before their "
    "time, by kind (judgment: a re-sent judgment may then count again; list: a click for that "
    "list then counts unmatched instead of late).",
}

_GAUGES: tuple[str, ...] = (
    names.NDCG,
    names.NDCG_STDERR,
    names.WINDOW_NDCG_SUM,
    names.WINDOW_NDCG_SUM_SQUARES,
    names.WINDOW_LISTS,
    names.JUDGED_COVERAGE,
    names.CLICK_THROUGH_RATE,
    names.MRR,
    names.ZERO_CLICK_RATE,
    names.ENGAGEMENT_LISTS,
    names.CLICKED_LISTS,
    names.OPEN_LISTS,
    names.PENDING_CLICKS,
    names.JUDGMENTS,
    names.WATERMARK,
    names.HORIZON,
    names.CONSUMER_LAG,
    names.BUILD_INFO,
    names.INTERLEAVING_LISTS,
    names.INTERLEAVING_WINS,
    names.INTERLEAVING_TIES,
    names.INTERLEAVING_PREFERENCE,
    names.INTERLEAVING_PREFERENCE_STDERR,
    names.REGRESSION_STATISTIC,
    names.REGRESSION_THRESHOLD,
    names.REGRESSION_ALARM,
    names.REGRESSION_SHIFT,
    names.REGRESSION_SHIFT_STDERR,
    names.REGRESSION_FIRST_ALARM,
)
_COUNTERS: tuple[str, ...] = (
    names.NDCG_SUM_TOTAL,
    names.LISTS_SCORED_TOTAL,
    names.LISTS_TOTAL,
    names.RECORDS_READ_TOTAL,
    names.EVENTS_TOTAL,
    names.INVALID_EVENTS_TOTAL,
    names.LATE_EVENTS_TOTAL,
    names.DUPLICATE_EVENTS_TOTAL,
    names.UNMATCHED_CLICKS_TOTAL,
    names.INTERLEAVING_OUTCOMES_TOTAL,
    names.STATE_RECORDS_INVALID_TOTAL,
    names.REREAD_RECORDS_DELETED_TOTAL,
    names.FORGOTTEN_IDS_TOTAL,
    names.DEAD_LETTERS_FAILED_TOTAL,
)


def validate_segment_labels(segment_labels: Sequence[str]) -> None:
    """Raise :class:`ConfigError` unless ``segment_labels`` can be Prometheus label names.

    A segment label must match ``[a-zA-Z_][a-zA-Z0-9_]*``, must not start with ``__`` (reserved by
    Prometheus), must not repeat, and must not be one of the labels streameval puts next to them
    (``k``, ``window``, ``relevance``).
    """
    seen: set[str] = set()
    for label in segment_labels:
        if not _LABEL_NAME.match(label) or label.startswith("__"):
            raise ConfigError(
                f"evaluation.segment_labels: {label!r} is not a valid Prometheus label name "
                "(letters, digits and _, not starting with a digit or __)"
            )
        if label in _OWN_LABELS:
            raise ConfigError(
                f"evaluation.segment_labels: {label!r} clashes with a label streameval sets "
                f"itself ({', '.join(sorted(_OWN_LABELS))})"
            )
        if label in seen:
            raise ConfigError(f"evaluation.segment_labels: {label!r} is listed twice")
        seen.add(label)


def _gauge(name: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, _HELP[name], labels=list(labels))


def _counter(name: str, labels: Sequence[str] = ()) -> CounterMetricFamily:
    return CounterMetricFamily(name, _HELP[name], labels=list(labels))


def _seconds(ms: int) -> float:
    return ms / 1000.0


class SnapshotCollector:
    """A prometheus_client custom collector exposing one :class:`Snapshot` per scrape."""

    def __init__(self, source: Callable[[], Snapshot], *, version: str) -> None:
        self._source = source
        self._version = version

    def describe(self) -> Iterable[Metric]:
        """The families this collector may expose, without samples (does not call ``source``).

        Lets the registry detect a clash of names at ``register`` time.
        """
        families: list[Metric] = [_gauge(name) for name in _GAUGES]
        families.extend(_counter(name) for name in _COUNTERS)
        return families

    def collect(self) -> Iterator[Metric]:
        snapshot = self._source()
        return iter(format_snapshot(snapshot, version=self._version))


def format_snapshot(snapshot: Snapshot, *, version: str) -> list[Metric]:
    """Every metric family of DESIGN §5 for one snapshot (pure; what a scrape returns)."""
    segment_labels = snapshot.segment_labels
    validate_segment_labels(segment_labels)
    families: list[Metric] = []
    families.extend(_window_families(snapshot))
    families.extend(_engagement_families(snapshot))
    families.extend(_cumulative_families(snapshot))
    families.extend(_intake_families(snapshot))
    families.extend(_state_families(snapshot, version))
    families.extend(_interleaving_families(snapshot))
    families.extend(_detection_families(snapshot))
    # A family without samples would only add HELP/TYPE lines: leave it out.
    return [family for family in families if family.samples]


def _segment_values(segment: Segment, segment_labels: tuple[str, ...], what: str) -> list[str]:
    if len(segment) != len(segment_labels):
        raise StreamevalError(
            f"snapshot {what} row has segment {segment!r} but segment_labels are "
            f"{segment_labels!r}: one value per label is required"
        )
    return list(segment)


def _window_families(snapshot: Snapshot) -> list[Metric]:
    labels = [*names.WINDOW_LABELS, *snapshot.segment_labels]
    mean = _gauge(names.NDCG, labels)
    stderr = _gauge(names.NDCG_STDERR, labels)
    total = _gauge(names.WINDOW_NDCG_SUM, labels)
    total_sq = _gauge(names.WINDOW_NDCG_SUM_SQUARES, labels)
    lists = _gauge(names.WINDOW_LISTS, labels)
    coverage = _gauge(names.JUDGED_COVERAGE, labels)
    for row in snapshot.ndcg:
        values = [
            str(row.k),
            row.window,
            row.relevance,
            *_segment_values(row.segment, snapshot.segment_labels, "ndcg"),
        ]
        moments = row.ndcg
        if moments.n:
            mean.add_metric(values, moments.total / moments.n)
        err = moments.stderr
        if err is not None:
            stderr.add_metric(values, err)
        total.add_metric(values, moments.total)
        total_sq.add_metric(values, moments.total_sq)
        lists.add_metric(values, moments.n)
        if row.coverage is not None and row.coverage.n:
            coverage.add_metric(values, row.coverage.total / row.coverage.n)
    return [mean, stderr, total, total_sq, lists, coverage]


def _engagement_families(snapshot: Snapshot) -> list[Metric]:
    labels = ["window", *snapshot.segment_labels]
    ctr = _gauge(names.CLICK_THROUGH_RATE, labels)
    mrr = _gauge(names.MRR, labels)
    zero = _gauge(names.ZERO_CLICK_RATE, labels)
    lists = _gauge(names.ENGAGEMENT_LISTS, labels)
    clicked = _gauge(names.CLICKED_LISTS, labels)
    for row in snapshot.engagement:
        values = [row.window, *_segment_values(row.segment, snapshot.segment_labels, "engagement")]
        if row.lists:
            ctr.add_metric(values, row.clicked_lists / row.lists)
            zero.add_metric(values, row.zero_click_lists / row.lists)
        rr = row.reciprocal_rank
        if rr.n:
            mrr.add_metric(values, rr.total / rr.n)
        lists.add_metric(values, row.lists)
        clicked.add_metric(values, row.clicked_lists)
    return [ctr, mrr, zero, lists, clicked]


def _cumulative_families(snapshot: Snapshot) -> list[Metric]:
    labels = ["k", "relevance", *snapshot.segment_labels]
    ndcg_sum = _counter(names.NDCG_SUM_TOTAL, labels)
    scored = _counter(names.LISTS_SCORED_TOTAL, labels)
    for row in snapshot.cumulative:
        values = [
            str(row.k),
            row.relevance,
            *_segment_values(row.segment, snapshot.segment_labels, "cumulative"),
        ]
        ndcg_sum.add_metric(values, row.ndcg_sum)
        scored.add_metric(values, row.lists_scored)
    outcomes = _counter(names.LISTS_TOTAL, ["relevance", "outcome"])
    for (relevance, outcome), count in sorted(snapshot.lists_total.items()):
        outcomes.add_metric([relevance, outcome], count)
    return [ndcg_sum, scored, outcomes]


def _by_type(name: str, label: str, counts: dict[str, int], known: Iterable[str]) -> Metric:
    family = _counter(name, [label])
    merged = dict.fromkeys(known, 0)
    merged.update(counts)
    for key, count in sorted(merged.items()):
        family.add_metric([key], count)
    return family


def _intake_families(snapshot: Snapshot) -> list[Metric]:
    intake = snapshot.intake
    read = _counter(names.RECORDS_READ_TOTAL)
    read.add_metric([], intake.records_read)
    unmatched = _counter(names.UNMATCHED_CLICKS_TOTAL)
    unmatched.add_metric([], intake.unmatched_clicks)
    return [
        read,
        _by_type(names.EVENTS_TOTAL, "type", dict(intake.accepted), KNOWN_EVENT_TYPES),
        _by_type(names.INVALID_EVENTS_TOTAL, "reason", dict(intake.invalid), INVALID_REASONS),
        _by_type(names.LATE_EVENTS_TOTAL, "type", dict(intake.late), KNOWN_EVENT_TYPES),
        _by_type(names.DUPLICATE_EVENTS_TOTAL, "type", dict(intake.duplicate), KNOWN_EVENT_TYPES),
        unmatched,
    ]


def _state_families(snapshot: Snapshot, version: str) -> list[Metric]:
    families: list[Metric] = []
    open_lists = _gauge(names.OPEN_LISTS)
    open_lists.add_metric([], snapshot.open_lists)
    pending = _gauge(names.PENDING_CLICKS)
    pending.add_metric([], snapshot.intake.pending_clicks)
    judgments = _gauge(names.JUDGMENTS)
    judgments.add_metric([], snapshot.judgments)
    families += [open_lists, pending, judgments]
    watermark = _gauge(names.WATERMARK)
    if snapshot.watermark_ms is not None:
        watermark.add_metric([], _seconds(snapshot.watermark_ms))
    horizon = _gauge(names.HORIZON)
    if snapshot.horizon_ms is not None:
        horizon.add_metric([], _seconds(snapshot.horizon_ms))
    lag = _gauge(names.CONSUMER_LAG, ["topic", "partition"])
    for (topic, partition), behind in sorted(snapshot.consumer_lag.items()):
        lag.add_metric([topic, str(partition)], behind)
    build = _gauge(names.BUILD_INFO, ["version"])
    build.add_metric([version], 1)
    families += [watermark, horizon, lag, build]
    invalid_state = _counter(names.STATE_RECORDS_INVALID_TOTAL)
    invalid_state.add_metric([], snapshot.state_records_invalid)
    deleted = _counter(names.REREAD_RECORDS_DELETED_TOTAL)
    deleted.add_metric([], snapshot.reread_records_deleted)
    forgotten = _counter(names.FORGOTTEN_IDS_TOTAL, ["kind"])
    for kind in ("judgment", "list"):
        forgotten.add_metric([kind], snapshot.forgotten_ids.get(kind, 0))
    failed = _counter(names.DEAD_LETTERS_FAILED_TOTAL)
    failed.add_metric([], snapshot.dead_letters_failed)
    families += [invalid_state, deleted, forgotten, failed]
    return families


def _detection_families(snapshot: Snapshot) -> list[Metric]:
    """DESIGN §9: every detector's state, one family per name. The NDCG detectors
    (``vs_control``, ``vs_baseline``) label by detector, k, relevance and the segment labels;
    the ``interleaving`` detector by detector, ranker and opponent (a family's samples may
    carry different label names)."""
    statistic = _gauge(names.REGRESSION_STATISTIC)
    threshold = _gauge(names.REGRESSION_THRESHOLD)
    alarm = _gauge(names.REGRESSION_ALARM)
    shift = _gauge(names.REGRESSION_SHIFT)
    stderr = _gauge(names.REGRESSION_SHIFT_STDERR)
    first = _gauge(names.REGRESSION_FIRST_ALARM)
    seg = snapshot.segment_labels
    for row in snapshot.detection:
        values = _segment_values(row.segment, seg, "detection")
        labels = {"detector": row.detector, "k": str(row.k), "relevance": row.relevance}
        labels.update(zip(seg, values, strict=True))
        statistic.add_sample(names.REGRESSION_STATISTIC, labels, row.statistic)
        threshold.add_sample(names.REGRESSION_THRESHOLD, labels, row.threshold)
        alarm.add_sample(names.REGRESSION_ALARM, labels, 1.0 if row.alarm else 0.0)
        if row.shift is not None:
            shift.add_sample(names.REGRESSION_SHIFT, labels, row.shift)
        if row.shift_stderr is not None:
            stderr.add_sample(names.REGRESSION_SHIFT_STDERR, labels, row.shift_stderr)
        if row.first_alarm_ms is not None:
            first.add_sample(names.REGRESSION_FIRST_ALARM, labels, _seconds(row.first_alarm_ms))
    for test in snapshot.interleaving_tests:
        pair = {
            "detector": names.INTERLEAVING_DETECTOR,
            "ranker": test.ranker,
            "opponent": test.opponent,
        }
        statistic.add_sample(names.REGRESSION_STATISTIC, pair, test.statistic)
        threshold.add_sample(names.REGRESSION_THRESHOLD, pair, test.threshold)
        alarm.add_sample(names.REGRESSION_ALARM, pair, 1.0 if test.alarm else 0.0)
    return [statistic, threshold, alarm, shift, stderr, first]


def _interleaving_families(snapshot: Snapshot) -> list[Metric]:
    """DESIGN §10: the window figures per ordered ranker pair and the outcomes counter (the
    ``interleaving`` detector's state is in :func:`_detection_families`)."""
    labels = list(names.INTERLEAVING_LABELS)
    lists = _gauge(names.INTERLEAVING_LISTS, labels)
    wins = _gauge(names.INTERLEAVING_WINS, labels)
    ties = _gauge(names.INTERLEAVING_TIES, labels)
    preference = _gauge(names.INTERLEAVING_PREFERENCE, labels)
    stderr = _gauge(names.INTERLEAVING_PREFERENCE_STDERR, labels)
    for row in snapshot.interleaving:
        values = [row.window, row.ranker, row.opponent]
        lists.add_metric(values, row.lists)
        wins.add_metric(values, row.wins)
        ties.add_metric(values, row.ties)
        pref = row.preference
        if pref is not None:
            preference.add_metric(values, pref)
        err = row.stderr
        if err is not None:
            stderr.add_metric(values, err)
    outcomes = _counter(names.INTERLEAVING_OUTCOMES_TOTAL, ["ranker", "opponent", "outcome"])
    for (ranker, opponent, outcome), count in sorted(snapshot.interleaving_outcomes.items()):
        outcomes.add_metric([ranker, opponent, outcome], count)
    return [lists, wins, ties, preference, stderr, outcomes]
