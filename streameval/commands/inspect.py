"""``streameval inspect (--topic T | FILE) [--config C] [-n N]``: the first records of a topic or
file, each with the event it maps to or why it is invalid, and a summary (DESIGN §11)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streameval.config import KafkaSettings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "inspect",
        help="show what the first records of a topic or file map to, or why they are invalid",
        description=(
            "Read the first N records of a Kafka topic (from the beginning of each partition) "
            "or of a file, in the format [input] gives it, and print for each the event it maps "
            "to or the reason (and field) it is invalid; then a summary: the types found, the "
            "fields never present, the share invalid. Nothing is committed or produced."
        ),
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--topic", metavar="T", help="a Kafka topic ([kafka] connection settings)")
    where.add_argument("file", nargs="?", metavar="FILE", help="a JSON-lines log (- = stdin)")
    p.add_argument("--config", metavar="FILE", help="TOML configuration ([input], [kafka])")
    p.add_argument("-n", type=int, default=10, metavar="N", help="records to read (default 10)")
    p.add_argument("--json", action="store_true", help="one JSON object: lines and summary")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from streameval.config import load_settings
    from streameval.errors import InputError
    from streameval.events.avro import AvroDecoder, container_records
    from streameval.events.formats import Formats
    from streameval.events.inspection import Inspection
    from streameval.events.mapping import MappedJsonDecoder
    from streameval.runtime.replay import lines

    if args.n < 1:
        raise InputError("-n must be at least 1")
    settings = load_settings(args.config)
    formats = Formats(settings.input, settings.evaluation.max_record_bytes)
    fmt = formats.topic_format(args.topic) if args.topic else formats.file_format(args.file)
    decode = formats.decoder(fmt)
    mapped = decode if isinstance(decode, MappedJsonDecoder | AvroDecoder) else None
    inspection = Inspection(
        mapper=None if mapped is None else mapped.mapper,
        parse=None if mapped is None else mapped.parse,
    )
    out = sys.stdout
    with ExitStack() as stack:
        records: Iterator[bytes]
        if args.topic:
            records = _topic_records(settings.kafka, args.topic, args.n)
        else:
            if args.file == "-":
                fh = sys.stdin.buffer
            else:
                try:
                    fh = stack.enter_context(open(args.file, "rb"))
                except OSError as exc:
                    raise InputError(f"cannot read {args.file}: {exc.strerror or exc}") from exc
            if fmt.encoding == "avro":
                records = container_records(fh, formats.schemas())
            else:
                records = (line for _, line in lines(fh))
        for i, raw in enumerate(records):
            if i >= args.n:
                break
            line = inspection.add(raw, decode)
            if not args.json:
                out.write(line.text() + "\n")
    if args.json:
        shown = [line.as_json() for line in inspection.lines]
        json.dump({"lines": shown, "summary": inspection.as_json()}, out, indent=2)
        out.write("\n")
    else:
        out.write(inspection.summary() + "\n")
    return 0


def _topic_records(kafka: KafkaSettings, topic: str, n: int) -> Iterator[bytes]:
    """Up to ``n`` records of ``topic``: from the beginning, partition by partition (no group,
    nothing committed)."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError

    from streameval.errors import InputError, KafkaUnavailableError
    from streameval.kafka.admin import BOOTSTRAP_KEY
    from streameval.kafka.client import client_config
    from streameval.kafka.reach import require_brokers

    config = client_config(kafka.model_dump())
    require_brokers(kafka.bootstrap_servers, kafka.security_protocol)
    try:
        consumer = KafkaConsumer(enable_auto_commit=False, **config)
    except KafkaError as exc:
        raise KafkaUnavailableError(
            f"cannot connect to read {topic!r}: {exc} ({BOOTSTRAP_KEY})"
        ) from exc
    try:
        partitions = sorted(consumer.partitions_for_topic(topic) or ())
        if not partitions:
            raise InputError(f"topic {topic!r} does not exist (or has no partitions)")
        taken = 0
        for p in partitions:
            tp = TopicPartition(topic, p)
            consumer.assign([tp])
            consumer.seek_to_beginning(tp)
            end = consumer.end_offsets([tp])[tp]
            while taken < n and consumer.position(tp) < end:
                for batch in consumer.poll(timeout_ms=1000, max_records=n - taken).values():
                    for record in batch:
                        taken += 1
                        yield record.value or b""
            if taken >= n:
                return
    finally:
        consumer.close()
