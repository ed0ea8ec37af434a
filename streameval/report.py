"""Plain renderings of a snapshot and of scored lists: JSON objects and a text table.

Used by ``replay`` (``--output table|json|lists``) and by tests that compare the daemon's
figures with replay's.
"""

from __future__ import annotations

import math
from typing import Any

from streameval.snapshot import DetectionRow, Intake, JudgesView, Snapshot, SrmRow
from streameval.values import ScoredList


def _segment(labels: tuple[str, ...], values: tuple[str, ...]) -> dict[str, str]:
    return dict(zip(labels, values, strict=True))


def intake_json(intake: Intake) -> dict[str, Any]:
    return {
        "read": intake.records_read,
        "accepted": sum(intake.accepted.values()),
        "accepted_by_type": dict(sorted(intake.accepted.items())),
        "invalid": dict(sorted(intake.invalid.items())),
        "duplicate": sum(intake.duplicate.values()),
        "late": sum(intake.late.values()),
        "unmatched": intake.unmatched_clicks,
        "pending": intake.pending_clicks,
    }


def windows_json(snapshot: Snapshot) -> list[dict[str, Any]]:
    """One object per (window, relevance, segment, k), with its engagement figures."""
    labels = snapshot.segment_labels
    engagement = {(e.window, e.segment): e for e in snapshot.engagement}
    rows = []
    for row in snapshot.ndcg:
        eng = engagement.get((row.window, row.segment))
        rows.append(
            {
                "window": row.window,
                "relevance": row.relevance,
                "k": row.k,
                "segment": _segment(labels, row.segment),
                "lists": row.ndcg.n,
                "ndcg": row.ndcg.mean,
                "stderr": row.ndcg.stderr,
                "ndcg_sum": row.ndcg.total,
                "ndcg_sum_squares": row.ndcg.total_sq,
                "judged_coverage": row.coverage.mean if row.coverage is not None else None,
                "click_through_rate": eng.click_through_rate if eng else None,
                "mrr": eng.reciprocal_rank.mean if eng else None,
                "zero_click_rate": eng.zero_click_rate if eng else None,
            }
        )
    return rows


def detection_json(labels: tuple[str, ...], rows: tuple[DetectionRow, ...]) -> list[dict[str, Any]]:
    """DESIGN §7's ``"detection"`` rows: one per detector and series."""
    return [
        {
            "detector": row.detector,
            "k": row.k,
            "relevance": row.relevance,
            "segment": _segment(labels, row.segment),
            "statistic": row.statistic,
            "threshold": row.threshold,
            "alarm": row.alarm,
            "first_alarm": row.first_alarm_ms,
        }
        for row in rows
    ]


def interleaving_json(snapshot: Snapshot) -> list[dict[str, Any]]:
    """DESIGN §7: one row per window and ordered pair of rankers."""
    return [
        {
            "window": row.window,
            "ranker": row.ranker,
            "opponent": row.opponent,
            "lists": row.lists,
            "wins": row.wins,
            "losses": row.losses,
            "ties": row.ties,
            "preference": row.preference,
            "stderr": row.stderr,
        }
        for row in snapshot.interleaving
    ]


def interleaving_detection_json(snapshot: Snapshot) -> list[dict[str, Any]]:
    """DESIGN §7 ``"detection"`` rows of the ``interleaving`` detector, one per ordered pair
    (k does not apply; the credit is the implicit one; the pair is the segment)."""
    return [
        {
            "detector": "interleaving",
            "k": None,
            "relevance": "implicit",
            "segment": {"ranker": test.ranker, "opponent": test.opponent},
            "statistic": test.statistic,
            "threshold": test.threshold,
            "alarm": test.alarm,
            "first_alarm": test.first_alarm_ms,
        }
        for test in snapshot.interleaving_tests
    ]


def srm_json(row: SrmRow) -> dict[str, Any]:
    """The ``"srm"`` object: the sample-ratio test of the A/B (DESIGN §12), per arm its lists
    and observed and expected shares since the test began, and the test's state."""
    return {
        "arms": [
            {
                "arm": arm.arm,
                "lists": arm.lists,
                "observed_share": None if math.isnan(arm.observed_share) else arm.observed_share,
                "expected_share": arm.expected_share,
            }
            for arm in row.arms
        ],
        "excluded": row.excluded,
        "statistic": row.statistic,
        "threshold": row.threshold,
        "alarm": row.alarm,
        "first_alarm": row.first_alarm_ms,
        "since": row.since_ms,
    }


def snapshot_json(snapshot: Snapshot) -> dict[str, Any]:
    """``replay --output json``: the final windows and the intake accounting; with detectors,
    their ``"detection"`` rows; with interleaved lists the ``"interleaving"`` rows and their
    detector's ``"detection"`` rows too; with an A/B, its sample-ratio test (``"srm"``); with
    judgments, the ``"judges"`` object; with ``[propensity] enabled``, a ``"propensity"``
    object."""
    out = _snapshot_json(snapshot)
    if snapshot.detection:
        out["detection"] = detection_json(snapshot.segment_labels, snapshot.detection)
    if snapshot.interleaving or snapshot.interleaving_tests:
        out["interleaving"] = interleaving_json(snapshot)
        out["detection"] = [*out.get("detection", []), *interleaving_detection_json(snapshot)]
    if snapshot.srm is not None:
        out["srm"] = srm_json(snapshot.srm)
    if snapshot.judges is not None and snapshot.judgments:
        out["judges"] = judges_json(snapshot.judges)
    if snapshot.propensity:
        out["propensity"] = propensity_json(snapshot)
    return out


def judges_json(view: JudgesView) -> dict[str, Any]:
    """DESIGN §12's ``"judges"`` object: the judge families, the agreement between them, the
    freshness of the judgments behind judged NDCG, and judged coverage of head and tail
    queries (judged NDCG per family is in ``"windows"``, ``relevance = "judged:<family>"``)."""
    return {
        "families": list(view.families),
        "agreement": [
            {
                "window": r.window,
                "family": r.family,
                "other": r.other,
                "pairs": r.pairs,
                "alpha": r.alpha,
            }
            for r in view.agreement
        ],
        "agreement_floor": view.agreement_floor,
        "agreement_min_pairs": view.agreement_min_pairs,
        "newest_judgment_ms": view.newest_judgment_ms,
        "max_age_ms": view.max_age_ms,
        "freshness": [
            {
                "window": r.window,
                "judged_docs": r.judged_docs,
                "stale_docs": r.stale_docs,
                "stale_share": r.stale_share,
            }
            for r in view.freshness
        ],
        "head_queries": view.head_queries,
        "coverage_by_query_class": [
            {
                "window": r.window,
                "query_class": r.query_class,
                "k": r.k,
                "lists": r.lists,
                "coverage": r.coverage,
            }
            for r in view.coverage_by_class
        ],
    }


def propensity_json(snapshot: Snapshot) -> dict[str, Any]:
    """``replay --output json``'s ``"propensity"`` object (``[propensity] enabled``): the
    examination propensity per position (null: not estimated yet) and the estimator's table."""
    return {
        "positions": [
            {
                "position": row.position,
                "propensity": row.propensity,
                "stderr": row.stderr,
                "harvested_clicks": row.harvested_clicks,
            }
            for row in snapshot.propensity
        ],
        "entries": snapshot.propensity_entries,
        "dropped": snapshot.propensity_dropped,
    }


def _snapshot_json(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "windows": windows_json(snapshot),
        "intake": intake_json(snapshot.intake),
        "horizon_ms": snapshot.horizon_ms,
        "lists_total": [
            {"relevance": rel, "outcome": outcome, "lists": n}
            for (rel, outcome), n in sorted(snapshot.lists_total.items())
        ],
        "forgotten_ids": dict(sorted(snapshot.forgotten_ids.items())),
    }


def scored_list_json(scored: ScoredList) -> list[dict[str, Any]]:
    """``replay --output lists``: one object per relevance source of one scored list."""
    out = []
    for source in scored.sources:
        ks = [str(k) for k in source.ks]
        obj: dict[str, Any] = {
            "request_id": scored.request_id,
            "query_id": scored.query_id,
            "timestamp": scored.timestamp,
            "labels": dict(scored.labels),
            "relevance": source.relevance,
            "outcome": source.outcome,
            "ndcg": dict(zip(ks, source.ndcg, strict=True)),
            "dcg": dict(zip(ks, source.dcg, strict=True)),
            "idcg": dict(zip(ks, source.idcg, strict=True)),
        }
        if source.coverage is not None:
            obj["judged_coverage"] = dict(zip(ks, source.coverage, strict=True))
        out.append(obj)
    return out


def _fmt(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def snapshot_table(snapshot: Snapshot) -> str:
    """A fixed-width text table of the windows, then the intake accounting."""
    labels = snapshot.segment_labels
    header = ["window", "relevance", *labels, "k", "lists", "ndcg", "±95%", "coverage"]
    body: list[list[str]] = []
    for row in snapshot.ndcg:
        se = row.ndcg.stderr
        body.append(
            [
                row.window,
                row.relevance,
                *row.segment,
                str(row.k),
                str(row.ndcg.n),
                _fmt(row.ndcg.mean),
                _fmt(None if se is None else 1.96 * se),
                _fmt(row.coverage.mean if row.coverage is not None else None, 3),
            ]
        )
    eng_header = ["window", *labels, "lists", "ctr", "mrr", "zero-click"]
    eng_body = [
        [
            e.window,
            *e.segment,
            str(e.lists),
            _fmt(e.click_through_rate, 3),
            _fmt(e.reciprocal_rank.mean, 3),
            _fmt(e.zero_click_rate, 3),
        ]
        for e in snapshot.engagement
    ]
    intake = intake_json(snapshot.intake)
    lines = [_table(header, body), "", _table(eng_header, eng_body), ""]
    invalid = ", ".join(f"{k}={v}" for k, v in intake["invalid"].items()) or "0"
    lines.append(
        f"records read {intake['read']}: accepted {intake['accepted']}, invalid {invalid}, "
        f"duplicate {intake['duplicate']}, late {intake['late']}, "
        f"unmatched {intake['unmatched']}"
    )
    if snapshot.srm is not None:
        lines.append(srm_line(snapshot.srm))
    return "\n".join(lines)


def srm_line(row: SrmRow) -> str:
    """The sample-ratio test in one line of the text table."""
    arms = ", ".join(
        f"{a.arm} {a.lists} ({_fmt(None if math.isnan(a.observed_share) else a.observed_share)}"
        f" vs {a.expected_share:.4f})"
        for a in row.arms
    )
    verdict = "MISMATCH" if row.alarm else "no mismatch"
    return (
        f"sample ratio: {verdict}: lists {arms}; log Bayes factor {row.statistic:.2f} "
        f"(threshold {row.threshold:.2f}); {row.excluded} without an arm"
    )


def _table(header: list[str], body: list[list[str]]) -> str:
    if not body:
        return "(no finalized lists in any window)"
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join(fmt.format(*r) for r in [header, *body])
