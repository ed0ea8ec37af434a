"""SnapshotCollector: exact samples for a hand-built Snapshot (every field exercised)."""

from __future__ import annotations

import math

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics_latest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families

from streameval.errors import ConfigError, StreamevalError
from streameval.export import names
from streameval.export.collector import (
    KNOWN_EVENT_TYPES,
    SnapshotCollector,
    validate_segment_labels,
)
from streameval.snapshot import (
    CumulativeRow,
    DetectionRow,
    EngagementRow,
    Intake,
    InterleavingRow,
    Moments,
    NdcgRow,
    PairTestRow,
    PropensityRow,
    Snapshot,
    SrmArmRow,
    SrmRow,
)
from tests.unit.export.judges_view import JUDGES_VIEW

CONTROL = ("bm25", "control")
TREATMENT = ("ltr", "treatment")
OTHER = ("", "__other__")


def full_snapshot() -> Snapshot:
    return Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("1m", "5m", "1h"),
        ks=(1, 3, 10),
        ndcg=(
            # NDCG values 1.0, 0.5, 0.0: n = 3, sum = 1.5, sum of squares = 1 + 0.25 + 0 = 1.25.
            # Coverage 1.0, 0.8, 0.6: n = 3, sum = 2.4, squares = 1 + 0.64 + 0.36 = 2.0.
            NdcgRow("5m", "judged", CONTROL, 10, Moments(3, 1.5, 1.25), Moments(3, 2.4, 2.0)),
            # One list with NDCG 0.75: a mean but no standard error (n < 2).
            NdcgRow("1m", "implicit", TREATMENT, 3, Moments(1, 0.75, 0.5625)),
            # No scored list in the window: no mean, no stderr, but the sums (0) are exposed.
            NdcgRow("1h", "implicit", OTHER, 1, Moments()),
        ),
        engagement=(
            # Four lists, first clicks at ranks 1, 2, 3 and none: RR = 1, 1/2, 1/3, 0.
            EngagementRow("5m", CONTROL, 4, 3, Moments(4, 1 + 1 / 2 + 1 / 3, 1 + 1 / 4 + 1 / 9), 1),
            EngagementRow("1m", TREATMENT, 0, 0, Moments(), 0),
        ),
        cumulative=(CumulativeRow("judged", CONTROL, 10, 12.5, 20),),
        lists_total={("judged", "scored"): 20, ("judged", "no_relevance"): 2},
        intake=Intake(
            records_read=100,
            accepted={"impression": 40, "click": 30},
            invalid={"bad_json": 5, "missing_field": 2},
            duplicate={"click": 3},
            late={"click": 4},
            unmatched_clicks=14,
            pending_clicks=2,
        ),
        open_lists=7,
        judgments=11,
        watermark_ms=1_700_000_012_345,
        horizon_ms=None,
        consumer_lag={("search-clicks", 1): 42, ("search-impressions", 0): 0},
        ready=False,
        propensity=(PropensityRow(1, 1.0, 0.0, 500.0), PropensityRow(2, 0.5, 0.01, 200.0)),
        propensity_entries=40,
        detection=(
            # alarmed: statistic 13.5 over threshold 12.47, first at the bucket 1_700_000_000_000
            DetectionRow(
                "vs_control",
                "judged",
                TREATMENT,
                10,
                13.5,
                12.47,
                True,
                1_700_000_000_000,
                shift=-0.02,
                shift_stderr=0.005,
                bucket_ms=1_700_000_010_000,
            ),
            # quiet and still warming up: no shift yet, never fired
            DetectionRow("vs_baseline", "implicit", CONTROL, 10, 0.0, 12.47, False, None),
        ),
        interleaving=(InterleavingRow("5m", "ltr", "bm25", 3, 1, 1),),
        interleaving_outcomes={("ltr", "bm25", "win"): 3},
        interleaving_tests=(PairTestRow("ltr", "bm25", 3, 1, -0.2, 4.6, None),),
        srm=SrmRow(
            (SrmArmRow("control", 60, 0.6, 0.5), SrmArmRow("treatment", 40, 0.4, 0.5)),
            3,
            1.2,
            6.9,
            1_700_000_000_000,
            1_699_999_990_000,
        ),
        judges=JUDGES_VIEW,
    )


def registry_for(snapshot: Snapshot, version: str = "1.2.3") -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(lambda: snapshot, version=version))
    return registry


def wl(k: int, window: str, relevance: str, segment: tuple[str, str]) -> dict[str, str]:
    return {
        "k": str(k),
        "window": window,
        "relevance": relevance,
        "ranker": segment[0],
        "arm": segment[1],
    }


def test_window_gauges_mean_stderr_sums_and_coverage() -> None:
    registry = registry_for(full_snapshot())
    labels = wl(10, "5m", "judged", CONTROL)
    assert registry.get_sample_value(names.NDCG, labels) == pytest.approx(0.5)  # 1.5 / 3
    # Sample variance: ((1-.5)^2 + 0 + (0-.5)^2) / 2 = 0.25; stderr = sqrt(0.25 / 3) = 0.288675...
    assert registry.get_sample_value(names.NDCG_STDERR, labels) == pytest.approx(0.2886751346)
    assert registry.get_sample_value(names.WINDOW_NDCG_SUM, labels) == 1.5
    assert registry.get_sample_value(names.WINDOW_NDCG_SUM_SQUARES, labels) == 1.25
    assert registry.get_sample_value(names.WINDOW_LISTS, labels) == 3
    assert registry.get_sample_value(names.JUDGED_COVERAGE, labels) == pytest.approx(0.8)


def test_single_list_has_mean_but_no_stderr_and_implicit_has_no_coverage() -> None:
    registry = registry_for(full_snapshot())
    labels = wl(3, "1m", "implicit", TREATMENT)
    assert registry.get_sample_value(names.NDCG, labels) == 0.75
    assert registry.get_sample_value(names.NDCG_STDERR, labels) is None
    assert registry.get_sample_value(names.JUDGED_COVERAGE, labels) is None
    assert registry.get_sample_value(names.WINDOW_LISTS, labels) == 1


def test_empty_window_row_omits_mean_and_stderr_but_keeps_sums() -> None:
    registry = registry_for(full_snapshot())
    labels = wl(1, "1h", "implicit", OTHER)
    assert registry.get_sample_value(names.NDCG, labels) is None
    assert registry.get_sample_value(names.NDCG_STDERR, labels) is None
    assert registry.get_sample_value(names.WINDOW_NDCG_SUM, labels) == 0
    assert registry.get_sample_value(names.WINDOW_NDCG_SUM_SQUARES, labels) == 0
    assert registry.get_sample_value(names.WINDOW_LISTS, labels) == 0


def test_engagement_gauges() -> None:
    registry = registry_for(full_snapshot())
    labels = {"window": "5m", "ranker": "bm25", "arm": "control"}
    assert registry.get_sample_value(names.CLICK_THROUGH_RATE, labels) == 0.75  # 3 / 4
    assert registry.get_sample_value(names.ZERO_CLICK_RATE, labels) == 0.25  # 1 / 4
    # MRR = (1 + 1/2 + 1/3 + 0) / 4 = (11/6) / 4 = 11/24
    assert registry.get_sample_value(names.MRR, labels) == pytest.approx(11 / 24)
    assert registry.get_sample_value(names.ENGAGEMENT_LISTS, labels) == 4
    assert registry.get_sample_value(names.CLICKED_LISTS, labels) == 3
    empty = {"window": "1m", "ranker": "ltr", "arm": "treatment"}
    assert registry.get_sample_value(names.CLICK_THROUGH_RATE, empty) is None
    assert registry.get_sample_value(names.ZERO_CLICK_RATE, empty) is None
    assert registry.get_sample_value(names.MRR, empty) is None
    assert registry.get_sample_value(names.ENGAGEMENT_LISTS, empty) == 0


def test_counters() -> None:
    registry = registry_for(full_snapshot())
    cumulative = {"k": "10", "relevance": "judged", "ranker": "bm25", "arm": "control"}
    assert registry.get_sample_value(names.NDCG_SUM_TOTAL, cumulative) == 12.5
    assert registry.get_sample_value(names.LISTS_SCORED_TOTAL, cumulative) == 20
    outcome = {"relevance": "judged", "outcome": "no_relevance"}
    assert registry.get_sample_value(names.LISTS_TOTAL, outcome) == 2
    assert registry.get_sample_value(names.RECORDS_READ_TOTAL) == 100
    assert registry.get_sample_value(names.EVENTS_TOTAL, {"type": "impression"}) == 40
    assert registry.get_sample_value(names.EVENTS_TOTAL, {"type": "click"}) == 30
    assert registry.get_sample_value(names.EVENTS_TOTAL, {"type": "judgment"}) == 0
    assert registry.get_sample_value(names.INVALID_EVENTS_TOTAL, {"reason": "bad_json"}) == 5
    assert registry.get_sample_value(names.DUPLICATE_EVENTS_TOTAL, {"type": "click"}) == 3
    assert registry.get_sample_value(names.LATE_EVENTS_TOTAL, {"type": "click"}) == 4
    assert registry.get_sample_value(names.UNMATCHED_CLICKS_TOTAL) == 14
    assert registry.get_sample_value(names.PENDING_CLICKS) == 2


def test_intake_counters_sum_to_records_read() -> None:
    registry = registry_for(full_snapshot())
    families = {f.name: f for f in registry.collect() if f.type == "counter"}
    parts = [
        names.EVENTS_TOTAL,
        names.INVALID_EVENTS_TOTAL,
        names.LATE_EVENTS_TOTAL,
        names.DUPLICATE_EVENTS_TOTAL,
        names.UNMATCHED_CLICKS_TOTAL,
    ]
    total = sum(s.value for p in parts for s in families[p.removesuffix("_total")].samples)
    # clicks still waiting for their impression complete the sum at any moment
    total += registry.get_sample_value(names.PENDING_CLICKS) or 0
    assert total == registry.get_sample_value(names.RECORDS_READ_TOTAL) == 100


def test_state_gauges() -> None:
    registry = registry_for(full_snapshot())
    assert registry.get_sample_value(names.OPEN_LISTS) == 7
    assert registry.get_sample_value(names.JUDGMENTS) == 11
    assert registry.get_sample_value(names.WATERMARK) == pytest.approx(1_700_000_012.345)
    assert registry.get_sample_value(names.HORIZON) is None  # horizon_ms is None
    lag = {"topic": "search-clicks", "partition": "1"}
    assert registry.get_sample_value(names.CONSUMER_LAG, lag) == 42
    zero_lag = {"topic": "search-impressions", "partition": "0"}
    assert registry.get_sample_value(names.CONSUMER_LAG, zero_lag) == 0
    assert registry.get_sample_value(names.BUILD_INFO, {"version": "1.2.3"}) == 1


def test_horizon_in_seconds_when_known() -> None:
    snapshot = Snapshot(segment_labels=(), windows=(), ks=(), horizon_ms=1_000_500)
    assert registry_for(snapshot).get_sample_value(names.HORIZON) == 1000.5


def test_intake_counters_exist_at_zero_before_any_record() -> None:
    registry = registry_for(Snapshot(segment_labels=("arm",), windows=("5m",), ks=(10,)))
    assert registry.get_sample_value(names.RECORDS_READ_TOTAL) == 0
    assert registry.get_sample_value(names.UNMATCHED_CLICKS_TOTAL) == 0
    for event_type in ("impression", "click", "judgment"):
        for name in (names.EVENTS_TOTAL, names.LATE_EVENTS_TOTAL, names.DUPLICATE_EVENTS_TOTAL):
            assert registry.get_sample_value(name, {"type": event_type}) == 0, (name, event_type)
    assert set(KNOWN_EVENT_TYPES) == {"impression", "click", "judgment"}
    for reason in ("too_large", "bad_encoding", "bad_json", "schema", "unknown_type"):
        assert registry.get_sample_value(names.INVALID_EVENTS_TOTAL, {"reason": reason}) == 0
    assert registry.get_sample_value(names.PENDING_CLICKS) == 0
    assert registry.get_sample_value(names.WATERMARK) is None
    assert registry.get_sample_value(names.HORIZON) is None


def test_window_labels_in_contract_order_then_segment_labels() -> None:
    snapshot = full_snapshot()
    families = {
        (f.name, f.type): f for f in SnapshotCollector(lambda: snapshot, version="x").collect()
    }
    sample = families[names.NDCG, "gauge"].samples[0]
    assert list(sample.labels) == ["k", "window", "relevance", "ranker", "arm"]
    engagement = families[names.MRR, "gauge"].samples[0]
    assert list(engagement.labels) == ["window", "ranker", "arm"]
    cumulative = families[names.NDCG_SUM_TOTAL.removesuffix("_total"), "counter"].samples[0]
    assert list(cumulative.labels) == ["k", "relevance", "ranker", "arm"]


def test_mean_equals_sum_over_lists_in_every_exposed_row() -> None:
    registry = registry_for(full_snapshot())
    families = {f.name: f for f in registry.collect() if f.type == "gauge"}
    sums = {tuple(s.labels.items()): s.value for s in families[names.WINDOW_NDCG_SUM].samples}
    lists = {tuple(s.labels.items()): s.value for s in families[names.WINDOW_LISTS].samples}
    means = families[names.NDCG].samples
    assert len(means) == 2
    for sample in means:
        key = tuple(sample.labels.items())
        assert sample.value == pytest.approx(sums[key] / lists[key])


def test_exposition_round_trip_names_are_the_contract() -> None:
    text = generate_latest(registry_for(full_snapshot())).decode()
    families = list(text_string_to_metric_families(text))
    sample_names = {s.name for f in families for s in f.samples}
    assert all(f.name.startswith("streameval_") for f in families)
    assert sample_names <= names.ALL, sample_names - names.ALL
    # No _created samples: custom families carry no creation time.
    assert not any(n.endswith("_created") for n in sample_names)
    # Every contract name except the omitted horizon shows up for this snapshot.
    assert names.ALL - sample_names == {names.HORIZON}
    counters = {f.name for f in families if f.type == "counter"}
    assert {f"{c}_total" for c in counters} == {n for n in names.ALL if n.endswith("_total")}


def test_regression_metrics_carry_detector_k_relevance_and_segment_labels() -> None:
    families = {f.name: f for f in registry_for(full_snapshot()).collect()}

    def by_detector(name: str) -> dict[str, float]:
        return {s.labels["detector"]: s.value for s in families[name].samples}

    # the interleaving detector's pair test shares the families (its own labels)
    assert by_detector(names.REGRESSION_STATISTIC) == {
        "vs_control": 13.5,
        "vs_baseline": 0.0,
        "interleaving": -0.2,
    }
    assert by_detector(names.REGRESSION_THRESHOLD) == {
        "vs_control": 12.47,
        "vs_baseline": 12.47,
        "interleaving": 4.6,
    }
    assert by_detector(names.REGRESSION_ALARM) == {
        "vs_control": 1.0,
        "vs_baseline": 0.0,
        "interleaving": 0.0,
    }
    # shift, its stderr and the first alarm only where known
    assert by_detector(names.REGRESSION_SHIFT) == {"vs_control": -0.02}
    assert by_detector(names.REGRESSION_SHIFT_STDERR) == {"vs_control": 0.005}
    assert by_detector(names.REGRESSION_FIRST_ALARM) == {"vs_control": 1_700_000_000.0}
    (sample,) = [
        s for s in families[names.REGRESSION_ALARM].samples if s.labels["detector"] == "vs_control"
    ]
    assert sample.labels == {
        "detector": "vs_control",
        "k": "10",
        "relevance": "judged",
        "ranker": "ltr",
        "arm": "treatment",
    }


def test_openmetrics_exposition_parses_and_has_every_contract_name() -> None:
    # prometheus_client's OpenMetrics parser is strict: it refuses two families of one name
    # (a gauge X next to the counter X_total), a missing # EOF, a counter sample without _total.
    registry = registry_for(full_snapshot())
    text = openmetrics_latest(registry).decode()
    families = list(parse_openmetrics(text))
    family_names = [f.name for f in families]
    assert len(family_names) == len(set(family_names))
    sample_names = {s.name for f in families for s in f.samples}
    assert names.ALL - sample_names == {names.HORIZON}  # as in the text format
    # and the same samples, value for value, as the text format
    text_samples = {
        (s.name, tuple(sorted(s.labels.items())), s.value)
        for f in text_string_to_metric_families(generate_latest(registry).decode())
        for s in f.samples
    }
    om_samples = {
        (s.name, tuple(sorted(s.labels.items())), s.value) for f in families for s in f.samples
    }
    assert om_samples == text_samples


def test_no_gauge_shares_a_family_name_with_a_counter() -> None:
    # OpenMetrics names a counter's family without `_total`; no other family may take that name
    # (the rename of streameval_ndcg_sum to streameval_window_ndcg_sum, DESIGN §5).
    counter_families = {n.removesuffix("_total") for n in names.ALL if n.endswith("_total")}
    others = {n for n in names.ALL if not n.endswith("_total")}
    assert not counter_families & others
    assert names.WINDOW_NDCG_SUM == "streameval_window_ndcg_sum"
    assert names.WINDOW_NDCG_SUM_SQUARES == "streameval_window_ndcg_sum_squares"


def test_one_snapshot_per_scrape_and_describe_does_not_call_source() -> None:
    calls: list[int] = []

    def source() -> Snapshot:
        calls.append(1)
        return full_snapshot()

    registry = CollectorRegistry()
    registry.register(SnapshotCollector(source, version="x"))
    assert calls == []  # register() used describe(), not the source
    generate_latest(registry)
    assert len(calls) == 1


def test_registering_twice_is_refused_by_describe() -> None:
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(full_snapshot, version="x"))
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        registry.register(SnapshotCollector(full_snapshot, version="y"))


def test_segment_of_wrong_length_is_an_error() -> None:
    bad = Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("5m",),
        ks=(1,),
        ndcg=(NdcgRow("5m", "implicit", ("only-one",), 1, Moments(1, 1.0, 1.0)),),
    )
    with pytest.raises(StreamevalError, match="segment"):
        list(SnapshotCollector(lambda: bad, version="x").collect())


@pytest.mark.parametrize(
    "labels",
    [("k",), ("window",), ("relevance",), ("arm", "arm"), ("bad-name",), ("1st",), ("__x",), ("",)],
)
def test_invalid_segment_labels_are_config_errors(labels: tuple[str, ...]) -> None:
    with pytest.raises(ConfigError, match="segment_labels"):
        validate_segment_labels(labels)


def test_valid_segment_labels_pass() -> None:
    validate_segment_labels(("ranker", "arm", "locale", "type", "_x1"))


def test_stderr_of_large_window_matches_textbook_formula() -> None:
    values = [0.1 * i for i in range(11)]  # 0.0 .. 1.0
    moments = Moments(len(values), sum(values), sum(v * v for v in values))
    snapshot = Snapshot(
        segment_labels=(),
        windows=("5m",),
        ks=(5,),
        ndcg=(NdcgRow("5m", "implicit", (), 5, moments),),
    )
    # mean 0.5; sample variance = sum((0.1 i - 0.5)^2) / 10 = 0.01 * 110 / 10 = 0.11
    expected = math.sqrt(0.11 / 11)
    labels = {"k": "5", "window": "5m", "relevance": "implicit"}
    assert registry_for(snapshot).get_sample_value(names.NDCG_STDERR, labels) == pytest.approx(
        expected
    )


def test_state_and_memory_counters() -> None:
    """The state topic's skipped records, the records retention took from a re-read, the
    identities forgotten over their caps and the dead letters the broker did not take: counters
    with exactly the snapshot's values."""
    registry = CollectorRegistry()
    snapshot = Snapshot(
        segment_labels=("ranker", "arm"),
        windows=("1m",),
        ks=(1,),
        state_records_invalid=3,
        reread_records_deleted=1_234,
        forgotten_ids={"list": 2},
        dead_letters_failed=7,
    )
    registry.register(SnapshotCollector(lambda: snapshot, version="t"))
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
    }
    assert got[(names.STATE_RECORDS_INVALID_TOTAL, ())] == 3
    assert got[(names.REREAD_RECORDS_DELETED_TOTAL, ())] == 1_234
    assert got[(names.FORGOTTEN_IDS_TOTAL, (("kind", "list"),))] == 2
    assert got[(names.FORGOTTEN_IDS_TOTAL, (("kind", "judgment"),))] == 0
    assert got[(names.DEAD_LETTERS_FAILED_TOTAL, ())] == 7


def test_interleaving_families() -> None:
    families = {f.name: f for f in registry_for(full_snapshot()).collect()}
    labels = {"window": "5m", "ranker": "ltr", "opponent": "bm25"}

    def value(name: str) -> float:
        (sample,) = families[name].samples
        return sample.value

    (lists,) = families[names.INTERLEAVING_LISTS].samples
    assert lists.labels == labels
    # wins 3, losses 1, ties 1: lists 5, preference (3 - 1) / 5 = 0.4;
    # var = (4 - 5 * 0.16) / 4 = 0.8, stderr = sqrt(0.8 / 5) = 0.4
    assert (lists.value, value(names.INTERLEAVING_WINS), value(names.INTERLEAVING_TIES)) == (
        5,
        3,
        1,
    )
    assert value(names.INTERLEAVING_PREFERENCE) == pytest.approx(0.4)
    assert value(names.INTERLEAVING_PREFERENCE_STDERR) == pytest.approx(0.4)
    (outcome,) = families[names.INTERLEAVING_OUTCOMES_TOTAL.removesuffix("_total")].samples
    assert outcome.labels == {"ranker": "ltr", "opponent": "bm25", "outcome": "win"}
    # the regression families also hold the NDCG detectors' rows: pick the interleaving one
    (alarm,) = [
        s
        for s in families[names.REGRESSION_ALARM].samples
        if s.labels["detector"] == "interleaving"
    ]
    assert alarm.labels == {"detector": "interleaving", "ranker": "ltr", "opponent": "bm25"}
    assert alarm.value == 0.0  # statistic -0.2 below its threshold 4.6
    (threshold,) = [
        s
        for s in families[names.REGRESSION_THRESHOLD].samples
        if s.labels["detector"] == "interleaving"
    ]
    assert threshold.value == pytest.approx(4.6)
