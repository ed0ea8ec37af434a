"""The engine's state as a :class:`~streameval.snapshot.Snapshot`: plain data, built on request."""

from __future__ import annotations

from collections.abc import Sequence

from streameval.config import EvaluationSettings
from streameval.engine.consumers import WindowedConsumer
from streameval.engine.intake import IntakeCounters
from streameval.snapshot import JudgesView, Snapshot
from streameval.windows import Totals, WindowStore


def build_snapshot(
    settings: EvaluationSettings,
    horizon: int | None,
    *,
    windows: WindowStore,
    totals: Totals,
    intake: IntakeCounters,
    forgotten_ids: dict[str, int],
    open_lists: int,
    judgments: int,
    watermark_ms: int | None,
    consumer_lag: dict[tuple[str, int], int],
    windowed: Sequence[WindowedConsumer],
    judges: JudgesView | None = None,
) -> Snapshot:
    """The snapshot of the windows and counters, with the rows of each windowed consumer."""
    ndcg, engagement = windows.rows(horizon)
    snapshot = Snapshot(
        segment_labels=settings.segment_labels,
        windows=settings.window_names,
        ks=tuple(sorted(settings.ks)),
        ndcg=ndcg,
        engagement=engagement,
        cumulative=totals.cumulative(),
        lists_total=totals.lists_total(),
        intake=intake.snapshot(),
        forgotten_ids=forgotten_ids,
        open_lists=open_lists,
        judgments=judgments,
        watermark_ms=watermark_ms,
        horizon_ms=horizon,
        consumer_lag=consumer_lag,
        judges=judges,
    )
    for consumer in windowed:
        snapshot = consumer.into_snapshot(snapshot, horizon)
    return snapshot
