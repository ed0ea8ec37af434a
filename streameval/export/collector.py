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

from prometheus_client.core import Metric

from streameval.errors import ConfigError, StreamevalError
from streameval.events.decode import INVALID_REASONS
from streameval.export import names
from streameval.export.judges import judges_families
from streameval.export.metric_help import COUNTERS, GAUGES, counter, gauge
from streameval.snapshot import Snapshot
from streameval.values import Segment

#: Event types that always have an intake series (at 0 before any record), so ``rate()`` and
#: ``increase()`` work from the first scrape.
KNOWN_EVENT_TYPES: tuple[str, ...] = ("impression", "click", "judgment")

_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
#: Label names the collector uses itself next to the segment labels.
_OWN_LABELS = frozenset((*names.WINDOW_LABELS, *names.DETECTION_LABELS))


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
        families: list[Metric] = [gauge(name) for name in GAUGES]
        families.extend(counter(name) for name in COUNTERS)
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
    families.extend(_srm_families(snapshot))
    families.extend(judges_families(snapshot))
    families.extend(_propensity_families(snapshot))
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
    mean = gauge(names.NDCG, labels)
    stderr = gauge(names.NDCG_STDERR, labels)
    total = gauge(names.WINDOW_NDCG_SUM, labels)
    total_sq = gauge(names.WINDOW_NDCG_SUM_SQUARES, labels)
    lists = gauge(names.WINDOW_LISTS, labels)
    coverage = gauge(names.JUDGED_COVERAGE, labels)
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
    ctr = gauge(names.CLICK_THROUGH_RATE, labels)
    mrr = gauge(names.MRR, labels)
    zero = gauge(names.ZERO_CLICK_RATE, labels)
    lists = gauge(names.ENGAGEMENT_LISTS, labels)
    clicked = gauge(names.CLICKED_LISTS, labels)
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
    ndcg_sum = counter(names.NDCG_SUM_TOTAL, labels)
    scored = counter(names.LISTS_SCORED_TOTAL, labels)
    for row in snapshot.cumulative:
        values = [
            str(row.k),
            row.relevance,
            *_segment_values(row.segment, snapshot.segment_labels, "cumulative"),
        ]
        ndcg_sum.add_metric(values, row.ndcg_sum)
        scored.add_metric(values, row.lists_scored)
    outcomes = counter(names.LISTS_TOTAL, ["relevance", "outcome"])
    for (relevance, outcome), count in sorted(snapshot.lists_total.items()):
        outcomes.add_metric([relevance, outcome], count)
    return [ndcg_sum, scored, outcomes]


def _by_type(name: str, label: str, counts: dict[str, int], known: Iterable[str]) -> Metric:
    family = counter(name, [label])
    merged = dict.fromkeys(known, 0)
    merged.update(counts)
    for key, count in sorted(merged.items()):
        family.add_metric([key], count)
    return family


def _intake_families(snapshot: Snapshot) -> list[Metric]:
    intake = snapshot.intake
    read = counter(names.RECORDS_READ_TOTAL)
    read.add_metric([], intake.records_read)
    unmatched = counter(names.UNMATCHED_CLICKS_TOTAL)
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
    open_lists = gauge(names.OPEN_LISTS)
    open_lists.add_metric([], snapshot.open_lists)
    pending = gauge(names.PENDING_CLICKS)
    pending.add_metric([], snapshot.intake.pending_clicks)
    judgments = gauge(names.JUDGMENTS)
    judgments.add_metric([], snapshot.judgments)
    families += [open_lists, pending, judgments]
    watermark = gauge(names.WATERMARK)
    if snapshot.watermark_ms is not None:
        watermark.add_metric([], _seconds(snapshot.watermark_ms))
    horizon = gauge(names.HORIZON)
    if snapshot.horizon_ms is not None:
        horizon.add_metric([], _seconds(snapshot.horizon_ms))
    lag = gauge(names.CONSUMER_LAG, ["topic", "partition"])
    for (topic, partition), behind in sorted(snapshot.consumer_lag.items()):
        lag.add_metric([topic, str(partition)], behind)
    build = gauge(names.BUILD_INFO, ["version"])
    build.add_metric([version], 1)
    families += [watermark, horizon, lag, build]
    invalid_state = counter(names.STATE_RECORDS_INVALID_TOTAL)
    invalid_state.add_metric([], snapshot.state_records_invalid)
    deleted = counter(names.REREAD_RECORDS_DELETED_TOTAL)
    deleted.add_metric([], snapshot.reread_records_deleted)
    forgotten = counter(names.FORGOTTEN_IDS_TOTAL, ["kind"])
    for kind in ("judgment", "list"):
        forgotten.add_metric([kind], snapshot.forgotten_ids.get(kind, 0))
    failed = counter(names.DEAD_LETTERS_FAILED_TOTAL)
    failed.add_metric([], snapshot.dead_letters_failed)
    families += [invalid_state, deleted, forgotten, failed]
    return families


def _detection_families(snapshot: Snapshot) -> list[Metric]:
    """DESIGN §9: every detector's state, one family per name. The NDCG detectors
    (``vs_control``, ``vs_baseline``) label by detector, k, relevance and the segment labels;
    the ``interleaving`` detector by detector, ranker and opponent (a family's samples may
    carry different label names)."""
    statistic = gauge(names.REGRESSION_STATISTIC)
    threshold = gauge(names.REGRESSION_THRESHOLD)
    alarm = gauge(names.REGRESSION_ALARM)
    shift = gauge(names.REGRESSION_SHIFT)
    stderr = gauge(names.REGRESSION_SHIFT_STDERR)
    first = gauge(names.REGRESSION_FIRST_ALARM)
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
    lists = gauge(names.INTERLEAVING_LISTS, labels)
    wins = gauge(names.INTERLEAVING_WINS, labels)
    ties = gauge(names.INTERLEAVING_TIES, labels)
    preference = gauge(names.INTERLEAVING_PREFERENCE, labels)
    stderr = gauge(names.INTERLEAVING_PREFERENCE_STDERR, labels)
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
    outcomes = counter(names.INTERLEAVING_OUTCOMES_TOTAL, ["ranker", "opponent", "outcome"])
    for (ranker, opponent, outcome), count in sorted(snapshot.interleaving_outcomes.items()):
        outcomes.add_metric([ranker, opponent, outcome], count)
    return [lists, wins, ties, preference, stderr, outcomes]


def _srm_families(snapshot: Snapshot) -> list[Metric]:
    """DESIGN §12: the sample-ratio test of the A/B (no samples while it does not run)."""
    row = snapshot.srm
    if row is None:
        return []
    labels = list(names.SRM_LABELS)
    lists = gauge(names.SRM_LISTS, labels)
    observed = gauge(names.SRM_OBSERVED_SHARE, labels)
    expected = gauge(names.SRM_EXPECTED_SHARE, labels)
    for arm in row.arms:
        lists.add_metric([arm.arm], arm.lists)
        if arm.observed_share == arm.observed_share:  # (NaN before any list)
            observed.add_metric([arm.arm], arm.observed_share)
        expected.add_metric([arm.arm], arm.expected_share)
    statistic = gauge(names.SRM_STATISTIC)
    statistic.add_metric([], row.statistic)
    threshold = gauge(names.SRM_THRESHOLD)
    threshold.add_metric([], row.threshold)
    alarm = gauge(names.SRM_ALARM)
    alarm.add_metric([], 1.0 if row.alarm else 0.0)
    excluded = gauge(names.SRM_EXCLUDED_LISTS)
    excluded.add_metric([], row.excluded)
    first = gauge(names.SRM_FIRST_ALARM)
    if row.first_alarm_ms is not None:
        first.add_metric([], _seconds(row.first_alarm_ms))
    return [statistic, threshold, alarm, first, lists, observed, expected, excluded]


def _propensity_families(snapshot: Snapshot) -> list[Metric]:
    """DESIGN §12: the examination propensity per position, its standard error and evidence,
    and the estimator's table (only with ``[propensity] enabled``: no rows otherwise)."""
    propensity = gauge(names.EXAMINATION_PROPENSITY, ["position"])
    stderr = gauge(names.EXAMINATION_PROPENSITY_STDERR, ["position"])
    harvested = gauge(names.PROPENSITY_HARVESTED_CLICKS, ["position"])
    for row in snapshot.propensity:
        position = [str(row.position)]
        harvested.add_metric(position, row.harvested_clicks)
        if row.propensity is not None:
            propensity.add_metric(position, row.propensity)
        if row.stderr is not None:
            stderr.add_metric(position, row.stderr)
    families: list[Metric] = [propensity, stderr, harvested]
    if snapshot.propensity:
        entries = gauge(names.PROPENSITY_ENTRIES)
        entries.add_metric([], snapshot.propensity_entries)
        dropped = counter(names.PROPENSITY_DROPPED_TOTAL)
        dropped.add_metric([], snapshot.propensity_dropped)
        families += [entries, dropped]
    return families
