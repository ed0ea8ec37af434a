"""``streameval simulate`` without a broker: routing, keys, timestamps, pacing, flags."""

from __future__ import annotations

import argparse
import itertools
from typing import Any

import pytest

from streameval.cli import build_parser
from streameval.commands.simulate import produce, routes
from streameval.config import KafkaSettings
from streameval.sim import SimConfig, traffic
from streameval.sim.arguments import sim_config
from streameval.sim.pacing import no_pacing
from tests.unit.sim.helpers import START_MS


class FakeProducer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bytes, int]] = []

    def send(self, topic: str, *, value: bytes, key: bytes, timestamp_ms: int) -> Any:
        self.sent.append((topic, key, value, timestamp_ms))


SIM = SimConfig(queries=20, candidates=10, rate=5.0, duration_ms=30_000)


def test_two_topics_split_impressions_from_clicks_and_judgments_go_to_their_own() -> None:
    kafka = KafkaSettings(topics=("imp", "clk"), judgment_topics=("jud", "other"))
    assert routes(kafka) == {"impression": "imp", "click": "clk", "judgment": "jud"}
    producer = FakeProducer()
    records = list(traffic(SIM, START_MS))
    sent = produce(producer, records, routes(kafka), no_pacing())
    assert [(t, k, v, ts) for t, k, v, ts in producer.sent] == [
        ({"impression": "imp", "click": "clk", "judgment": "jud"}[r.kind], r.key.encode(), r.raw,
         r.time_ms)
        for r in records
    ]  # fmt: skip
    assert sent == {
        topic: sum(1 for r in records if r.kind == kind)
        for kind, topic in (("impression", "imp"), ("click", "clk"), ("judgment", "jud"))
    }


def test_one_topic_takes_both_and_no_judgment_topic_drops_judgments() -> None:
    kafka = KafkaSettings(topics=("events",), judgment_topics=())
    assert routes(kafka) == {"impression": "events", "click": "events", "judgment": None}
    producer = FakeProducer()
    records = list(traffic(SIM, START_MS))
    produce(producer, records, routes(kafka), no_pacing())
    assert len(producer.sent) == sum(1 for r in records if r.kind != "judgment")
    assert {topic for topic, *_ in producer.sent} == {"events"}


def test_pacing_can_stop_the_production() -> None:
    producer = FakeProducer()
    calls = itertools.count()
    produce(
        producer,
        traffic(SimConfig(queries=20, candidates=10), START_MS),  # endless
        routes(KafkaSettings()),
        lambda _ms: next(calls) < 50,
    )
    assert len(producer.sent) == 50


def _parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["simulate", *argv])


def test_flags_make_the_sim_config() -> None:
    args = _parse(
        *("--rate", "12.5", "--duration", "1h", "--queries", "300", "--split", "0.3"),
        *("--regression-at", "20m", "--regression-size", "0.1", "--seed", "4"),
        *("--start", "2024-01-02T03:04:05Z", "--speed", "0"),
    )
    sim = sim_config(args)
    assert (sim.rate, sim.duration_ms, sim.queries, sim.treatment_share) == (
        12.5,
        3_600_000,
        300,
        0.3,
    )
    assert (sim.regression_at_ms, sim.regression_size, sim.seed) == (1_200_000, 0.1, 4)
    assert args.start == 1_704_164_645_000  # 2024-01-02T03:04:05Z, by `date -d ... +%s`
    assert args.speed == 0.0
    defaults = sim_config(_parse())
    assert defaults.regression_at_ms is None
    assert defaults.duration_ms is None


@pytest.mark.parametrize(
    "argv",
    [
        ("--split", "1.5"),
        ("--rate", "0"),
        ("--speed", "-1"),
        ("--start", "yesterday"),
        ("--duration", "5 minutes"),
        ("--regression-size", "nan"),
    ],
)
def test_a_bad_flag_is_refused(argv: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _parse(*argv)
    assert argv[0] in capsys.readouterr().err
