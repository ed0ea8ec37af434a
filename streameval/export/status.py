"""The live status page: its JSON payload (``/api/status``) and its HTML (``/``).

``status_payload`` turns one snapshot and the sparkline history into plain JSON data (no NaN, no
infinity: those become ``null``). The decisions the page shows are made here, not in its
JavaScript: each arm against the control arm (:mod:`streameval.export.compare`) and each
detector's state in words (:mod:`streameval.export.status_words`). The page itself is
``static/status.html``, self-contained (inline CSS and JavaScript, no CDN), polling
``/api/status``.

Wiring, e.g. in the daemon::

    history = History.last_hour()
    server = MetricsServer(registry, host=..., port=..., ready=...,
                           status=status_source(box.get, history, evaluation=settings.evaluation))

and ``history.record(snapshot)`` each time a snapshot is published: the history is the
publisher's to keep, so the page's first look shows the last hour even if nobody watched it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from importlib import resources
from typing import Any

from streameval.config import EvaluationSettings
from streameval.durations import format_duration
from streameval.export.compare import Z95, compare_to_control
from streameval.export.history import History
from streameval.export.status_words import (
    BROKEN_SPLIT,
    STATES,
    arm_name,
    broken_split,
    detector_words,
    srm_words,
)
from streameval.report import interleaving_json, judges_json, propensity_json, srm_json
from streameval.snapshot import Snapshot
from streameval.values import Segment

__all__ = [
    "Z95",
    "interleaving_payload",
    "srm_payload",
    "status_page_html",
    "status_payload",
    "status_source",
]

#: the evaluation settings of a payload built without any (the configuration's defaults)
_DEFAULT_EVALUATION = EvaluationSettings()


def _num(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _segment(labels: tuple[str, ...], segment: Segment) -> dict[str, str]:
    return dict(zip(labels, segment, strict=False))


def _counts(mapping: Mapping[str, int]) -> dict[str, int]:
    return {key: mapping[key] for key in sorted(mapping)}


def status_payload(
    snapshot: Snapshot, history: History, *, evaluation: EvaluationSettings | None = None
) -> dict[str, Any]:
    """JSON-ready state for the status page: progress, intake, current windows and history.

    Each ``ndcg`` entry carries the window's mean NDCG@k, its standard error and the 95 % band
    ``[mean - 1.96·stderr, mean + 1.96·stderr]`` (``null`` where undefined), and its comparison
    with the control arm of ``evaluation.control`` (``role``, ``delta``, ``delta_ci95``,
    ``verdict``); ``panels`` says per (window, relevance, k) what the control is, whether an arm
    is below it, and the rule. Each ``detection`` entry carries its state and words (alarms
    first). ``evaluation`` defaults to the configuration's defaults.
    """
    evaluation = evaluation or _DEFAULT_EVALUATION
    labels = snapshot.segment_labels
    verdicts, panels = compare_to_control(labels, snapshot.ndcg, evaluation.control)
    ndcg = []
    for row, verdict in zip(snapshot.ndcg, verdicts, strict=True):
        mean = _num(row.ndcg.mean)
        stderr = _num(row.ndcg.stderr)
        low = high = None
        if mean is not None and stderr is not None:
            low, high = mean - Z95 * stderr, mean + Z95 * stderr
        coverage = row.coverage.mean if row.coverage is not None else None
        ndcg.append(
            {
                "window": row.window,
                "relevance": row.relevance,
                "segment": list(row.segment),
                "labels": _segment(labels, row.segment),
                "name": arm_name(row.segment),
                "k": row.k,
                "n": row.ndcg.n,
                "mean": mean,
                "stderr": stderr,
                "low": low,
                "high": high,
                "coverage": _num(coverage),
                "role": "control" if verdict.verdict == "control" else "arm",
                "delta": _num(verdict.delta),
                "delta_ci95": _num(verdict.delta_ci95),
                "verdict": verdict.verdict,
            }
        )
    engagement = [
        {
            "window": row.window,
            "segment": list(row.segment),
            "labels": _segment(labels, row.segment),
            "lists": row.lists,
            "clicked_lists": row.clicked_lists,
            "click_through_rate": _num(row.click_through_rate),
            "mrr": _num(row.reciprocal_rank.mean),
            "zero_click_rate": _num(row.zero_click_rate),
        }
        for row in snapshot.engagement
    ]
    intake = snapshot.intake
    attribution_ms = evaluation.attribution_window
    # alarms first, then cleared ones: what needs a look
    detection = sorted(
        ((row, detector_words(row, snapshot.horizon_ms)) for row in snapshot.detection),
        key=lambda pair: STATES.index(pair[1]["state"]),
    )
    return {
        "segment_labels": list(labels),
        "windows": list(snapshot.windows),
        "ks": list(snapshot.ks),
        "ready": snapshot.ready,
        "watermark_ms": snapshot.watermark_ms,
        "horizon_ms": snapshot.horizon_ms,
        "attribution_window_ms": attribution_ms,
        "trail_note": (
            f"Windows end at the evaluation horizon, {format_duration(attribution_ms)} (the "
            "attribution window) behind the watermark: a list is scored only once every click "
            "it may still get has had time to arrive, so the newest "
            f"{format_duration(attribution_ms)} of traffic is in no window yet."
        ),
        "open_lists": snapshot.open_lists,
        "judgments": snapshot.judgments,
        "intake": {
            "records_read": intake.records_read,
            "accepted": _counts(intake.accepted),
            "invalid": _counts(intake.invalid),
            "duplicate": _counts(intake.duplicate),
            "late": _counts(intake.late),
            "unmatched_clicks": intake.unmatched_clicks,
        },
        "lists_total": [
            {"relevance": relevance, "outcome": outcome, "count": count}
            for (relevance, outcome), count in sorted(snapshot.lists_total.items())
        ],
        "consumer_lag": [
            {"topic": topic, "partition": partition, "lag": lag}
            for (topic, partition), lag in sorted(snapshot.consumer_lag.items())
        ],
        "ndcg": ndcg,
        "panels": panels,
        "engagement": engagement,
        "detection": [
            {
                "detector": row.detector,
                "relevance": row.relevance,
                "k": row.k,
                "segment": list(row.segment),
                "labels": _segment(labels, row.segment),
                "statistic": _num(row.statistic),
                "threshold": _num(row.threshold),
                "alarm": row.alarm,
                "first_alarm_ms": row.first_alarm_ms,
                "shift": _num(row.shift),
                "shift_stderr": _num(row.shift_stderr),
                "alarm_since_ms": row.alarm_since_ms,
                "cleared_ms": row.cleared_ms,
                **words,
                "broken_split": broken_split(row, snapshot.srm),
            }
            for row, words in detection
        ],
        "interleaving": interleaving_payload(snapshot),
        "judges": judges_payload(snapshot),
        # the examination propensity per position (None unless [propensity] enabled)
        "propensity": propensity_json(snapshot) if snapshot.propensity else None,
        "history": history.to_json(),
        "srm": srm_payload(snapshot),
    }


def srm_payload(snapshot: Snapshot) -> dict[str, Any] | None:
    """The sample-ratio test (``replay``'s ``"srm"`` object) with its words; None when it
    does not run. A ``detection`` entry of ``vs_control`` whose alarm holds while it alarms
    says ``broken_split`` (the page then says the comparison rests on a broken split)."""
    row = snapshot.srm
    if row is None:
        return None
    out = srm_json(row)
    for arm in out["arms"]:  # (NaN is not JSON)
        arm["observed_share"] = _num(arm["observed_share"])
    return {**out, **srm_words(row, snapshot.horizon_ms), "broken_split_note": BROKEN_SPLIT}


def judges_payload(snapshot: Snapshot) -> dict[str, Any] | None:
    """The judges' section (DESIGN §12): ``replay``'s ``"judges"`` object, each agreement row
    marked ``low`` as StreamevalJudgeAgreementLow's expression would be (below the floor, with
    enough pairs, on a window other than ``all``); None without judgments."""
    if snapshot.judges is None or not snapshot.judgments:
        return None
    out = judges_json(snapshot.judges)
    floor, min_pairs = out["agreement_floor"], out["agreement_min_pairs"]
    for row in out["agreement"]:
        alpha = _num(row["alpha"])
        row["alpha"] = alpha
        row["low"] = (
            row["window"] != "all"
            and alpha is not None
            and alpha < floor
            and row["pairs"] >= min_pairs
        )
    return out


def interleaving_payload(snapshot: Snapshot) -> list[dict[str, Any]]:
    """The ``"interleaving"`` rows of ``replay --output json`` (preference per window and
    ordered ranker pair), each with its 95 % band (clipped to [−1, 1]) and the state of that
    pair's ``interleaving`` detector (DESIGN §10)."""
    tests = {(t.ranker, t.opponent): t for t in snapshot.interleaving_tests}
    out = []
    for entry in interleaving_json(snapshot):
        preference, stderr = _num(entry["preference"]), _num(entry["stderr"])
        low = high = None
        if preference is not None and stderr is not None:
            low, high = max(-1.0, preference - Z95 * stderr), min(1.0, preference + Z95 * stderr)
        test = tests.get((entry["ranker"], entry["opponent"]))
        out.append(
            {
                **entry,
                "preference": preference,
                "stderr": stderr,
                "low": low,
                "high": high,
                "alarm": bool(test and test.alarm),
                "statistic": None if test is None else _num(test.statistic),
                "threshold": None if test is None else _num(test.threshold),
            }
        )
    return out


def status_source(
    source: Callable[[], Snapshot],
    history: History,
    *,
    evaluation: EvaluationSettings | None = None,
) -> Callable[[], dict[str, Any]]:
    """A ``status`` callable for :class:`~streameval.export.server.MetricsServer`: the payload
    of the snapshot ``source`` gives, with ``history`` as it stands.

    It does not record: a history recorded only while a browser polls starts empty at the
    first look, so the publisher of the snapshots records it (``history.record``).
    """

    def status() -> dict[str, Any]:
        return status_payload(source(), history, evaluation=evaluation)

    return status


def status_page_html() -> bytes:
    """The status page (``static/status.html``, shipped as package data)."""
    return resources.files("streameval.export").joinpath("static", "status.html").read_bytes()
