"""``streameval simulate``: the traffic simulator's records, produced into Kafka.

Impressions go to ``kafka.topics[0]`` and clicks to ``kafka.topics[1]`` (to ``topics[0]`` when
only one is configured), both keyed by ``request_id``, so with the default partitioner an
impression and its clicks land on the same partition number of equally partitioned topics.
Judgments go to ``kafka.judgment_topics[0]`` keyed by ``query_id + "\\x1f" + doc_id`` (the ASCII
unit separator). Every Kafka record's timestamp is the event's time.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (every command's start imports this module: the simulator only when run)
    from streameval.sim.records import SimRecord

DEFAULT_RATE = 10.0
DEFAULT_SPEED = 1.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from streameval.sim.arguments import add_traffic_arguments

    p = sub.add_parser(
        "simulate",
        help="produce realistic synthetic search traffic into Kafka",
        description=(
            "Produce simulated search traffic into Kafka: impressions of an A/B test of two "
            "rankers, position-biased clicks, explicit judgments, and optionally a ranking "
            "regression of the treatment arm at a chosen event time. Impressions go to "
            "kafka.topics[0], clicks to kafka.topics[1] (or topics[0]), both keyed by "
            "request_id; judgments to kafka.judgment_topics[0], keyed by query_id + '\\x1f' + "
            "doc_id. Each record's Kafka timestamp is its event time."
        ),
    )
    p.add_argument("--config", metavar="FILE", help="TOML configuration (kafka section)")
    p.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT[,…]",
        help="Kafka brokers (overrides kafka.bootstrap_servers)",
    )
    p.add_argument(
        "--speed",
        type=_speed,
        default=DEFAULT_SPEED,
        help="event seconds per wall second (default 1: real time); 0 produces as fast as "
        "possible (backfills, tests)",
    )
    p.add_argument(
        "--start",
        type=_start,
        default=None,
        metavar="TIME",
        help="event time of the start: RFC 3339 or epoch milliseconds (default: now)",
    )
    add_traffic_arguments(p, rate=DEFAULT_RATE, regression_at=None)
    p.set_defaults(handler=run)


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _start(text: str) -> int:
    from streameval.events.event_time import to_epoch_ms

    try:
        return to_epoch_ms(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def routes(kafka: Any) -> dict[str, str | None]:
    """Topic of each record kind: impressions, clicks and judgments (None: not produced)."""
    topics = tuple(kafka.topics)
    judgments = tuple(kafka.judgment_topics)
    return {
        "impression": topics[0],
        "click": topics[1] if len(topics) > 1 else topics[0],
        "judgment": judgments[0] if judgments else None,
    }


def produce(
    producer: Any,
    records: Iterable[SimRecord],
    routes: Mapping[str, str | None],
    pace: Any,
) -> dict[str, int]:
    """Send every record (paced by event time) and return the count sent per topic."""
    sent: dict[str, int] = {}
    for record in records:
        topic = routes[record.kind]
        if topic is None:
            continue
        if not pace(record.time_ms):
            break
        producer.send(topic, value=record.raw, key=record.key.encode(), timestamp_ms=record.time_ms)
        sent[topic] = sent.get(topic, 0) + 1
    return sent


def run(args: argparse.Namespace) -> int:
    import signal
    import threading
    import time

    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    from streameval.config import load_settings
    from streameval.errors import KafkaUnavailableError
    from streameval.kafka.client import client_config
    from streameval.kafka.reach import require_brokers
    from streameval.sim import traffic
    from streameval.sim.arguments import sim_config
    from streameval.sim.pacing import no_pacing, wall_pacer

    overrides: dict[str, Any] = {}
    if args.bootstrap_servers:
        overrides["kafka"] = {"bootstrap_servers": args.bootstrap_servers}
    settings = load_settings(args.config, **overrides)
    sim = sim_config(args)
    start_ms = args.start if args.start is not None else int(time.time() * 1000)
    config = client_config(settings.kafka.model_dump())
    require_brokers(settings.kafka.bootstrap_servers, settings.kafka.security_protocol)
    try:
        producer = KafkaProducer(**config, acks="all", linger_ms=20)
    except KafkaError as exc:
        raise KafkaUnavailableError(
            f"cannot connect to Kafka at {settings.kafka.bootstrap_servers}: {exc} "
            "(kafka.bootstrap_servers, or --bootstrap-servers)"
        ) from exc
    topics = routes(settings.kafka)
    _warn_if_not_copartitioned(producer, topics["impression"], topics["click"])
    if topics["judgment"] is None:
        print("streameval simulate: no judgment topic configured: judgments are not produced",
              file=sys.stderr)  # fmt: skip
    stop = threading.Event()
    pace = no_pacing(stop) if args.speed == 0 else wall_pacer(start_ms, args.speed, stop)

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        sent = produce(producer, traffic(sim, start_ms), topics, pace)
        producer.flush()
    except KafkaError as exc:
        raise KafkaUnavailableError(f"producing to Kafka failed: {exc}") from exc
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        producer.close()
    summary = ", ".join(f"{n} to {topic}" for topic, n in sent.items()) or "nothing"
    print(f"streameval simulate: sent {summary}", file=sys.stderr)
    return 0


def _warn_if_not_copartitioned(producer: Any, impressions: str | None, clicks: str | None) -> None:
    if impressions is None or clicks is None or impressions == clicks:
        return
    from kafka.errors import KafkaError

    try:
        counts = {topic: producer.partitions_for(topic) for topic in (impressions, clicks)}
    except KafkaError:  # no metadata yet (e.g. topics created on first write): nothing to check
        return
    sizes = {topic: len(parts) for topic, parts in counts.items() if parts}
    if len(sizes) == 2 and len(set(sizes.values())) > 1:
        print(
            f"streameval simulate: warning: {impressions} and {clicks} have different partition "
            f"counts {sizes}: an impression and its clicks will not share a partition number",
            file=sys.stderr,
        )
