"""The simulator's daily cycle of the query mix and its single-ranker mode (issue 11)."""

from __future__ import annotations

import json
import random

import pytest

from streameval.errors import ConfigError
from streameval.sim import SimConfig, catalogue_of, traffic
from streameval.sim.traffic import DailyMix

START = 1_700_000_000_000
HOUR = 3_600_000


def impressions(config: SimConfig) -> list[dict[str, object]]:
    return [json.loads(r.raw) for r in traffic(config, START) if r.kind == "impression"]


def test_the_daily_cycle_swings_the_share_of_the_rich_half_of_the_catalogue() -> None:
    config = SimConfig(queries=200, daily_amplitude=0.6, day_ms=4 * HOUR, seed=1)
    mix = DailyMix(catalogue_of(config), config, START)
    rng = random.Random(0)
    # a quarter into the day sin = 1: the rich half's weights x1.6, the others' x0.4;
    # three quarters in, the other way round
    peak = [mix.rich[mix.pick(START + HOUR, rng)] for _ in range(20_000)]
    trough = [mix.rich[mix.pick(START + 3 * HOUR, rng)] for _ in range(20_000)]
    rich_weight = sum(
        catalogue_of(config).popularity(i) for i, r in enumerate(mix.rich) if r
    )  # the rich half's Zipf share, w
    expected_peak = 1.6 * rich_weight / (1.6 * rich_weight + 0.4 * (1 - rich_weight))
    expected_trough = 0.4 * rich_weight / (0.4 * rich_weight + 1.6 * (1 - rich_weight))
    assert sum(peak) / len(peak) == pytest.approx(expected_peak, abs=0.015)
    assert sum(trough) / len(trough) == pytest.approx(expected_trough, abs=0.015)
    assert mix.swing(START + HOUR) == pytest.approx(0.6)
    assert mix.swing(START) == pytest.approx(0.0, abs=1e-12)
    assert mix.swing(START + 3 * HOUR) == pytest.approx(-0.6)


def test_half_the_catalogue_is_rich() -> None:
    config = SimConfig(queries=300, daily_amplitude=0.5, seed=4)
    mix = DailyMix(catalogue_of(config), config, START)
    # split above the median count of grade >= 2 candidates: at most half are "rich"
    assert 0 < sum(mix.rich) <= 150


def test_without_the_cycle_the_stream_is_unchanged() -> None:
    base = SimConfig(rate=20, duration_ms=60_000, seed=3)
    assert impressions(base) == impressions(SimConfig(rate=20, duration_ms=60_000, seed=3,
                                                      day_ms=1000, daily_phase=0.3))  # fmt: skip


def test_single_ranker_serves_everything_with_the_control_ranker_and_regresses_it() -> None:
    config = SimConfig(
        rate=20, duration_ms=120_000, seed=5, single_ranker=True,
        regression_at_ms=60_000, regression_size=1.0,
    )  # fmt: skip
    imps = impressions(config)
    assert {json.dumps(i["labels"]) for i in imps} == {json.dumps({"ranker": "bm25-v1"})}
    # size 1.0: every result after the regression is an off-topic document (of another query)
    after = [i for i in imps if int(i["timestamp"]) >= START + 60_000]  # type: ignore[call-overload]
    before = [i for i in imps if int(i["timestamp"]) < START + 60_000]  # type: ignore[call-overload]
    assert after and before

    def own(i: dict[str, object]) -> bool:
        prefix = f"d{int(str(i['query_id'])[1:])}-"
        return any(str(d).startswith(prefix) for d in i["results"])  # type: ignore[attr-defined]

    assert all(own(i) for i in before)
    assert not any(own(i) for i in after)


@pytest.mark.parametrize(
    ("field", "value"), [("daily_amplitude", 1.5), ("daily_phase", -0.1), ("day_ms", 0)]
)
def test_bad_cycle_settings_name_the_field(field: str, value: float) -> None:
    with pytest.raises(ConfigError, match=field):
        SimConfig(**{field: value})  # type: ignore[arg-type]
