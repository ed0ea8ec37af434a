"""The simulated log the detector tests share: 12 minutes of an A/B test at 40 queries/s, the
treatment losing 30 % of its NDCG half-way."""

from __future__ import annotations

from streameval.sim import SimConfig, SimRecord, traffic

T0 = 1_700_000_000_000


def regression_log() -> list[SimRecord]:
    sim = SimConfig(
        rate=40,
        queries=200,
        seed=11,
        duration_ms=12 * 60_000,
        regression_at_ms=6 * 60_000,
        regression_size=0.3,
        max_interaction_delay_ms=40_000,
    )
    return list(traffic(sim, T0))
