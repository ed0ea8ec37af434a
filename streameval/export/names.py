"""Metric names and labels of DESIGN §5: the public contract, in one place.

Names are the *family* names; counters are exposed with a ``_total`` suffix (these constants
already include it, as they appear in the exposition and in PromQL).
"""

from __future__ import annotations

# Window figures (gauges), labels: k, window, relevance, + segment labels
NDCG = "streameval_ndcg"
NDCG_STDERR = "streameval_ndcg_stderr"
# (Not `streameval_ndcg_sum`: in OpenMetrics that is the family of the counter
# streameval_ndcg_sum_total, and a gauge may not share it.)
WINDOW_NDCG_SUM = "streameval_window_ndcg_sum"
WINDOW_NDCG_SUM_SQUARES = "streameval_window_ndcg_sum_squares"
WINDOW_LISTS = "streameval_window_lists"
JUDGED_COVERAGE = "streameval_judged_coverage"
# Window figures that do not depend on k or relevance (gauges), labels: window + segment labels
CLICK_THROUGH_RATE = "streameval_click_through_rate"
MRR = "streameval_mrr"
ZERO_CLICK_RATE = "streameval_zero_click_rate"  # extension: share of lists with no interaction
ENGAGEMENT_LISTS = "streameval_engagement_lists"  # extension: lists behind CTR/MRR (for sum/sum)
CLICKED_LISTS = "streameval_clicked_lists"  # extension: numerator of CTR (for sum/sum)

# Cumulative (counters), labels: k, relevance, + segment labels
NDCG_SUM_TOTAL = "streameval_ndcg_sum_total"
LISTS_SCORED_TOTAL = "streameval_lists_scored_total"
# Finalized lists by outcome (counter), labels: relevance, outcome
LISTS_TOTAL = "streameval_lists_total"

# Intake accounting (counters): read == events + invalid + late + duplicate + unmatched
RECORDS_READ_TOTAL = "streameval_records_read_total"
EVENTS_TOTAL = "streameval_events_total"  # label: type
INVALID_EVENTS_TOTAL = "streameval_invalid_events_total"  # label: reason
LATE_EVENTS_TOTAL = "streameval_late_events_total"  # label: type
DUPLICATE_EVENTS_TOTAL = "streameval_duplicate_events_total"  # label: type
UNMATCHED_CLICKS_TOTAL = "streameval_unmatched_clicks_total"

# State and progress (gauges)
OPEN_LISTS = "streameval_open_lists"
PENDING_CLICKS = "streameval_pending_clicks"  # extension: clicks waiting for their impression
JUDGMENTS = "streameval_judgments"
WATERMARK = "streameval_watermark_timestamp_seconds"
HORIZON = "streameval_evaluation_horizon_timestamp_seconds"
CONSUMER_LAG = "streameval_consumer_lag"  # labels: topic, partition
BUILD_INFO = "streameval_build_info"  # label: version; value 1
# The window state changelog (DESIGN §6)
STATE_RECORDS_INVALID_TOTAL = "streameval_state_records_invalid_total"
# extension: records a re-read needed that the topic's retention had deleted
REREAD_RECORDS_DELETED_TOTAL = "streameval_reread_records_deleted_total"
# extension: remembered identities forgotten over their caps before their time; label: kind
FORGOTTEN_IDS_TOTAL = "streameval_forgotten_ids_total"
# extension: dead letters the dead-letter topic did not take (refused, or not delivered in time)
DEAD_LETTERS_FAILED_TOTAL = "streameval_dead_letters_failed_total"

# Interleaving (DESIGN §10), gauges, labels: window, ranker, opponent
INTERLEAVING_LISTS = "streameval_interleaving_lists"
INTERLEAVING_WINS = "streameval_interleaving_wins"
INTERLEAVING_TIES = "streameval_interleaving_ties"
INTERLEAVING_PREFERENCE = "streameval_interleaving_preference"
INTERLEAVING_PREFERENCE_STDERR = "streameval_interleaving_preference_stderr"
# counter, labels: ranker, opponent, outcome (win | loss | tie | no_click)
INTERLEAVING_OUTCOMES_TOTAL = "streameval_interleaving_outcomes_total"
# Regression detection (DESIGN §9), gauges. Labels: detector, k, relevance + the segment labels
# (vs_control, vs_baseline); detector, ranker, opponent (the interleaving detector)
REGRESSION_STATISTIC = "streameval_regression_statistic"
REGRESSION_THRESHOLD = "streameval_regression_threshold"
REGRESSION_ALARM = "streameval_regression_alarm"
REGRESSION_SHIFT = "streameval_regression_shift"  # extension: estimated shift of NDCG@k
REGRESSION_SHIFT_STDERR = "streameval_regression_shift_stderr"  # extension: its standard error
#: extension: event time (Unix seconds) of the bucket at which the alarm first held
REGRESSION_FIRST_ALARM = "streameval_regression_first_alarm_timestamp_seconds"
# Judges (DESIGN §12), gauges. Agreement between two judge families, labels: window, family,
# other; judgment freshness, label: window; judged coverage by query frequency, labels: window,
# query_class (head | tail), k; the configured floor, minimum pairs and maximum age, no label
JUDGE_AGREEMENT = "streameval_judge_agreement"
JUDGE_AGREEMENT_PAIRS = "streameval_judge_agreement_pairs"
JUDGE_AGREEMENT_FLOOR = "streameval_judge_agreement_floor"
JUDGE_AGREEMENT_MIN_PAIRS = "streameval_judge_agreement_min_pairs"
JUDGMENT_STALE_SHARE = "streameval_judgment_stale_share"
JUDGMENT_STALE_DOCS = "streameval_judgment_stale_docs"
JUDGMENT_JUDGED_DOCS = "streameval_judgment_judged_docs"
JUDGMENT_MAX_AGE = "streameval_judgment_max_age_seconds"
JUDGED_COVERAGE_BY_QUERY_CLASS = "streameval_judged_coverage_by_query_class"
QUERY_CLASS_LISTS = "streameval_query_class_lists"
JUDGE_AGREEMENT_LABELS = ("window", "family", "other")
QUERY_CLASS_LABELS = ("window", "query_class", "k")
INTERLEAVING_DETECTOR = "interleaving"
INTERLEAVING_LABELS = ("window", "ranker", "opponent")

# the sample-ratio test of the A/B (DESIGN §12; docs/srm.md): label arm on the per-arm ones
SRM_STATISTIC = "streameval_srm_statistic"
SRM_THRESHOLD = "streameval_srm_threshold"
SRM_ALARM = "streameval_srm_alarm"
SRM_FIRST_ALARM = "streameval_srm_first_alarm_timestamp_seconds"
SRM_LISTS = "streameval_srm_lists"
SRM_OBSERVED_SHARE = "streameval_srm_observed_share"
SRM_EXPECTED_SHARE = "streameval_srm_expected_share"
SRM_EXCLUDED_LISTS = "streameval_srm_excluded_lists"
SRM_LABELS = ("arm",)
# Position bias (DESIGN §12, ``[propensity]``), gauges, label: position (1-based rank)
EXAMINATION_PROPENSITY = "streameval_examination_propensity"
EXAMINATION_PROPENSITY_STDERR = "streameval_examination_propensity_stderr"
PROPENSITY_HARVESTED_CLICKS = "streameval_propensity_harvested_clicks"
# gauge, no label: (query, doc) entries of the estimator's table; counter: results not recorded
PROPENSITY_ENTRIES = "streameval_propensity_entries"
PROPENSITY_DROPPED_TOTAL = "streameval_propensity_dropped_total"

WINDOW_LABELS = ("k", "window", "relevance")
DETECTION_LABELS = ("detector", "k", "relevance")

#: The standard process metrics the daemon and the demo expose beside these
#: (:mod:`streameval.export.process`; ``process_*`` on Linux only)
PROCESS: frozenset[str] = frozenset(
    {
        "process_virtual_memory_bytes",
        "process_resident_memory_bytes",
        "process_start_time_seconds",
        "process_cpu_seconds_total",
        "process_open_fds",
        "process_max_fds",
        "python_info",
    }
)

#: Every sample name streameval's own collector exposes (what dashboards and rules may refer to,
#: with :data:`PROCESS`).
ALL: frozenset[str] = frozenset(
    {
        NDCG,
        NDCG_STDERR,
        WINDOW_NDCG_SUM,
        WINDOW_NDCG_SUM_SQUARES,
        WINDOW_LISTS,
        JUDGED_COVERAGE,
        CLICK_THROUGH_RATE,
        MRR,
        ZERO_CLICK_RATE,
        ENGAGEMENT_LISTS,
        CLICKED_LISTS,
        NDCG_SUM_TOTAL,
        LISTS_SCORED_TOTAL,
        LISTS_TOTAL,
        RECORDS_READ_TOTAL,
        EVENTS_TOTAL,
        INVALID_EVENTS_TOTAL,
        LATE_EVENTS_TOTAL,
        DUPLICATE_EVENTS_TOTAL,
        UNMATCHED_CLICKS_TOTAL,
        OPEN_LISTS,
        PENDING_CLICKS,
        JUDGMENTS,
        WATERMARK,
        HORIZON,
        CONSUMER_LAG,
        BUILD_INFO,
        INTERLEAVING_LISTS,
        INTERLEAVING_WINS,
        INTERLEAVING_TIES,
        INTERLEAVING_PREFERENCE,
        INTERLEAVING_PREFERENCE_STDERR,
        INTERLEAVING_OUTCOMES_TOTAL,
        REGRESSION_STATISTIC,
        REGRESSION_THRESHOLD,
        REGRESSION_ALARM,
        STATE_RECORDS_INVALID_TOTAL,
        REREAD_RECORDS_DELETED_TOTAL,
        FORGOTTEN_IDS_TOTAL,
        DEAD_LETTERS_FAILED_TOTAL,
        REGRESSION_SHIFT,
        REGRESSION_SHIFT_STDERR,
        REGRESSION_FIRST_ALARM,
        SRM_STATISTIC,
        SRM_THRESHOLD,
        SRM_ALARM,
        SRM_FIRST_ALARM,
        SRM_LISTS,
        SRM_OBSERVED_SHARE,
        SRM_EXPECTED_SHARE,
        SRM_EXCLUDED_LISTS,
        JUDGE_AGREEMENT,
        JUDGE_AGREEMENT_PAIRS,
        JUDGE_AGREEMENT_FLOOR,
        JUDGE_AGREEMENT_MIN_PAIRS,
        JUDGMENT_STALE_SHARE,
        JUDGMENT_STALE_DOCS,
        JUDGMENT_JUDGED_DOCS,
        JUDGMENT_MAX_AGE,
        JUDGED_COVERAGE_BY_QUERY_CLASS,
        QUERY_CLASS_LISTS,
        EXAMINATION_PROPENSITY,
        EXAMINATION_PROPENSITY_STDERR,
        PROPENSITY_HARVESTED_CLICKS,
        PROPENSITY_ENTRIES,
        PROPENSITY_DROPPED_TOTAL,
    }
)
