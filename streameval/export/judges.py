"""The judges' metric families (DESIGN §12): agreement between judge families, judgment
freshness, judged coverage by query frequency, and the configured floor, pairs and age.

Judged NDCG per family needs nothing here: its rows are NDCG rows with ``relevance =
"judged:<family>"``, exported with the others."""

from __future__ import annotations

from prometheus_client.core import Metric

from streameval.export import names
from streameval.export.metric_help import gauge
from streameval.snapshot import Snapshot


def judges_families(snapshot: Snapshot) -> list[Metric]:
    view = snapshot.judges
    if view is None:
        return []
    labels = list(names.JUDGE_AGREEMENT_LABELS)
    alpha = gauge(names.JUDGE_AGREEMENT, labels)
    pairs = gauge(names.JUDGE_AGREEMENT_PAIRS, labels)
    for row in view.agreement:
        values = [row.window, row.family, row.other]
        pairs.add_metric(values, row.pairs)
        if row.alpha is not None:
            alpha.add_metric(values, row.alpha)
    floor = gauge(names.JUDGE_AGREEMENT_FLOOR)
    min_pairs = gauge(names.JUDGE_AGREEMENT_MIN_PAIRS)
    if len(view.families) >= 2:  # the configuration matters once there is something to agree
        floor.add_metric([], view.agreement_floor)
        min_pairs.add_metric([], view.agreement_min_pairs)
    share = gauge(names.JUDGMENT_STALE_SHARE, ["window"])
    stale = gauge(names.JUDGMENT_STALE_DOCS, ["window"])
    judged = gauge(names.JUDGMENT_JUDGED_DOCS, ["window"])
    max_age = gauge(names.JUDGMENT_MAX_AGE)
    if snapshot.judgments:
        max_age.add_metric([], view.max_age_ms / 1000.0)
        for fresh in view.freshness:
            stale.add_metric([fresh.window], fresh.stale_docs)
            judged.add_metric([fresh.window], fresh.judged_docs)
            if fresh.stale_share is not None:
                share.add_metric([fresh.window], fresh.stale_share)
    class_labels = list(names.QUERY_CLASS_LABELS)
    coverage = gauge(names.JUDGED_COVERAGE_BY_QUERY_CLASS, class_labels)
    lists = gauge(names.QUERY_CLASS_LISTS, class_labels)
    for cov in view.coverage_by_class:
        values = [cov.window, cov.query_class, str(cov.k)]
        lists.add_metric(values, cov.lists)
        mean = cov.coverage
        if mean is not None:
            coverage.add_metric(values, mean)
    return [alpha, pairs, floor, min_pairs, share, stale, judged, max_age, coverage, lists]
