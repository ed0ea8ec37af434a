"""Every metric family streameval exposes: its HELP text, whether it is a gauge or a counter, and
an empty family of it (what the collector fills, and describes to the registry)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from streameval.export import names

HELP: dict[str, str] = {
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
    names.SRM_STATISTIC: "Sample-ratio test of the A/B: log of the Dirichlet-multinomial Bayes "
    "factor of the lists per arm against the expected split (Lindon & Malek 2022), since "
    "the test began.",
    names.SRM_THRESHOLD: "The sample-ratio statistic's alarm threshold, log(1/srm.alpha).",
    names.SRM_ALARM: "1 while the sample-ratio statistic is at or beyond its threshold (the "
    "A/B's split is not the expected one: its comparisons rest on a broken split), else 0.",
    names.SRM_FIRST_ALARM: "Event time of the bucket at which the sample-ratio alarm first "
    "held, in Unix seconds (absent until it has).",
    names.SRM_LISTS: "Finalized lists of each arm since the sample-ratio test began.",
    names.SRM_OBSERVED_SHARE: "Each arm's share of the tested lists since the test began.",
    names.SRM_EXPECTED_SHARE: "Each arm's expected share (srm.expected, else equal shares).",
    names.SRM_EXCLUDED_LISTS: "Finalized lists since the sample-ratio test began that name no "
    "arm (or one not in srm.expected): not tested.",
    names.STATE_RECORDS_INVALID_TOTAL: "Records of the state topic that were not a bucket of "
    "ours (corrupt or foreign): skipped; their partition is re-read in full.",
    names.REREAD_RECORDS_DELETED_TOTAL: "Records a re-read after a restart or rebalance needed "
    "but the topic no longer held (deleted by retention since the commit).",
    names.DEAD_LETTERS_FAILED_TOTAL: "Dead letters the dead-letter topic did not take (refused, "
    "or not delivered in time); each is also a warning in the log naming its record.",
    names.FORGOTTEN_IDS_TOTAL: "Remembered identities forgotten over their cap before their "
    "time, by kind (judgment: a re-sent judgment may then count again; list: a click for that "
    "list then counts unmatched instead of late).",
    names.JUDGE_AGREEMENT: "Krippendorff's alpha (interval metric) between two judge families "
    "over the (query, doc) pairs both graded (each family's grade the mean of its judges' "
    "latest) whose newer grade is within the window of judgment time ('all': every shared "
    "pair); 1 = perfect, 0 = chance; omitted when undefined.",
    names.JUDGE_AGREEMENT_PAIRS: "Shared (query, doc) pairs behind streameval_judge_agreement.",
    names.JUDGE_AGREEMENT_FLOOR: "judges.agreement_floor: the agreement below which "
    "StreamevalJudgeAgreementLow fires.",
    names.JUDGE_AGREEMENT_MIN_PAIRS: "judges.agreement_min_pairs: the shared pairs a window "
    "needs before StreamevalJudgeAgreementLow considers it.",
    names.JUDGMENT_STALE_SHARE: "Share of the judged docs shown in the top max(k) of the "
    "window's lists whose newest grade was older than judges.max_age at the impression.",
    names.JUDGMENT_STALE_DOCS: "Numerator of streameval_judgment_stale_share (for sum/sum).",
    names.JUDGMENT_JUDGED_DOCS: "Denominator of streameval_judgment_stale_share: judged docs "
    "shown in the top max(k) of the window's lists.",
    names.JUDGMENT_MAX_AGE: "judges.max_age in seconds: a judgment older than this is stale.",
    names.JUDGED_COVERAGE_BY_QUERY_CLASS: "Mean judged coverage@k of the window's lists of "
    "head queries (the judges.head_queries most frequent since start) or tail queries.",
    names.QUERY_CLASS_LISTS: "Lists behind streameval_judged_coverage_by_query_class.",
    names.EXAMINATION_PROPENSITY: "Estimated probability that a result at this position is "
    "examined, relative to position 1 (intervention harvesting; [propensity]).",
    names.EXAMINATION_PROPENSITY_STDERR: "Standard error of the examination propensity "
    "(delta method).",
    names.PROPENSITY_HARVESTED_CLICKS: "Clicks harvested at this position from (query, doc) "
    "pairs shown at other positions too (the estimate's evidence).",
    names.PROPENSITY_ENTRIES: "(query, doc) entries in the propensity estimator's table.",
    names.PROPENSITY_DROPPED_TOTAL: "Results not recorded by the propensity estimator because "
    "its table was full (propensity.max_entries).",
}

GAUGES: tuple[str, ...] = (
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
    names.SRM_STATISTIC,
    names.SRM_THRESHOLD,
    names.SRM_ALARM,
    names.SRM_FIRST_ALARM,
    names.SRM_LISTS,
    names.SRM_OBSERVED_SHARE,
    names.SRM_EXPECTED_SHARE,
    names.SRM_EXCLUDED_LISTS,
    names.JUDGE_AGREEMENT,
    names.JUDGE_AGREEMENT_PAIRS,
    names.JUDGE_AGREEMENT_FLOOR,
    names.JUDGE_AGREEMENT_MIN_PAIRS,
    names.JUDGMENT_STALE_SHARE,
    names.JUDGMENT_STALE_DOCS,
    names.JUDGMENT_JUDGED_DOCS,
    names.JUDGMENT_MAX_AGE,
    names.JUDGED_COVERAGE_BY_QUERY_CLASS,
    names.QUERY_CLASS_LISTS,
    names.EXAMINATION_PROPENSITY,
    names.EXAMINATION_PROPENSITY_STDERR,
    names.PROPENSITY_HARVESTED_CLICKS,
    names.PROPENSITY_ENTRIES,
)
COUNTERS: tuple[str, ...] = (
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
    names.PROPENSITY_DROPPED_TOTAL,
)


def gauge(name: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, HELP[name], labels=list(labels))


def counter(name: str, labels: Sequence[str] = ()) -> CounterMetricFamily:
    return CounterMetricFamily(name, HELP[name], labels=list(labels))
