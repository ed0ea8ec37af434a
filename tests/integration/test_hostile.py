"""Hostile input against the real broker: more than 10,000 bad records (invalid UTF-8 and JSON,
wrong types, NaN and huge numbers, 10 MB records, deep nesting, 100k-result lists, empty and
absurd ids, out-of-range times, unicode confusables) mixed with valid traffic.

The daemon must not crash; every bad record is counted by its reason and is in the dead-letter
topic with that reason; every valid neighbour is scored exactly as without the noise (the window
figures equal `streameval replay` over the clean log, produced to topics of its own); no query
text, doc id or user id ever reaches a label value on /metrics or the daemon's log. Valid events
with far-past and far-future times follow in phases of their own (see hostile_corpus.py).
"""

from __future__ import annotations

import json
import tomllib
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer

from streameval.kafka.dlq import (
    FIELD_HEADER,
    MAX_DEAD_LETTER_BYTES,
    MAX_TRUNCATED_KEY_BYTES,
    REASON_HEADER,
    SOURCE_HEADER,
    TRUNCATED_HEADER,
    DeadLetterSink,
)
from streameval.kafka.records import RawRecord
from tests.foreign_shapes import SEGMENT_TOML, rewrite
from tests.integration import hostile_corpus as hc
from tests.integration.conftest import TopicFactory
from tests.integration.daemon_support import (
    T0,
    DaemonProcess,
    Log,
    Topics,
    assert_windows_match,
    dump_partitions,
    free_port,
    make_log,
    produce,
    replay_json,
    samples,
    sentinels,
    value,
)

pytestmark = pytest.mark.kafka

SEED = 10
HOSTILE = 11_500  # of which about 10,350 invalid (the rest valid but strange)
MAX_EPOCH_MS = 253_402_300_799_000  # 9999-12-31T23:59:59Z


def _topics(topic_factory: TopicFactory, big: bool) -> Topics:
    # the dead-letter topic keeps the default size limit: dead letters must fit it
    return Topics.made_by(topic_factory, hc.TOPIC_CONFIG if big else None)


Where = tuple[str, int, int]  # topic, partition, offset


def _produce(
    bootstrap: str, topics: Topics, rows: list[tuple[hc.Row, hc.Hostile | None]]
) -> list[tuple[Where, hc.Row, hc.Hostile | None]]:
    """Produces the rows in order; returns where each landed."""
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        linger_ms=20,
        max_request_size=hc.MAX_BYTES,
    )
    futures = []
    for row, h in rows:
        role, key, raw, partition = row
        topic = getattr(topics, role)
        futures.append((producer.send(topic, key=key, value=raw, partition=partition), row, h))
    producer.flush()
    out = []
    for future, row, h in futures:
        meta = future.get(timeout=60)
        out.append(((meta.topic, meta.partition, meta.offset), row, h))
    producer.close()
    return out


def _num(metrics: dict[Any, float], name: str, **labels: str) -> float:
    v = value(metrics, name, **labels)
    return -1.0 if v is None else v


def _intake(metrics: dict[Any, float]) -> dict[str, Any]:
    def by(name: str, label: str) -> dict[str, int]:
        return {lbl[label]: int(v) for lbl, v in samples(metrics, name) if v}

    return {
        "read": int(_num(metrics, "streameval_records_read_total")),
        "accepted": by("streameval_events_total", "type"),
        "invalid": by("streameval_invalid_events_total", "reason"),
        "duplicate": by("streameval_duplicate_events_total", "type"),
        "late": by("streameval_late_events_total", "type"),
        "unmatched": int(_num(metrics, "streameval_unmatched_clicks_total")),
    }


def _accounted(intake: dict[str, Any]) -> int:
    return (
        sum(intake["accepted"].values())
        + sum(intake["invalid"].values())
        + sum(intake["duplicate"].values())
        + sum(intake["late"].values())
        + intake["unmatched"]
    )


def _expected_intake(clean: dict[str, Any], corpus: list[hc.Hostile]) -> dict[str, Any]:
    """replay's intake of the clean log plus what the corpus promises."""
    c = clean["intake"]
    invalid = Counter(c["invalid"])
    invalid.update(h.reason for h in corpus if h.reason is not None)
    accepted = Counter(c.get("accepted_by_type") or {})
    valid = Counter((h.outcome, h.event) for h in corpus if h.reason is None)
    for (outcome, event), n in valid.items():
        if outcome == "accepted" and event is not None:
            accepted[event] += n
    return {
        "invalid": dict(invalid),
        "accepted": dict(accepted),
        "unmatched": c["unmatched"] + valid[("unmatched", "click")],
        # make_log repeats clicks only, and has nothing late
        "duplicate": {"click": c["duplicate"]},
        "late": {"click": c["late"]},
    }


def _substrings(text: str) -> set[str]:
    return {text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)}


def _label_values(metrics: dict[Any, float], topics: Topics) -> set[str]:
    """Every label value on /metrics but the ``topic`` of the lag, which must be ours."""
    ours = {topics.impressions, topics.clicks, topics.judgments}
    values = set()
    for _, labels in metrics:
        for name, v in labels:
            if name == "topic":
                assert v in ours
            else:
                values.add(v)
    return values


def _read_dlq(bootstrap: str, topic: str, expected: int) -> dict[str, Any]:
    consumer = KafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=10_000,
        max_partition_fetch_bytes=2 * 1024 * 1024,
    )
    out = {}
    for record in consumer:
        headers = dict(record.headers)
        out[headers[SOURCE_HEADER].decode()] = record
        if len(out) >= expected:
            break
    consumer.close()
    return out


def test_hostile_records_are_counted_dead_lettered_and_change_no_figure(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    # the clean log, and its figures by replay (produced to topics of its own)
    clean_log = make_log(1, 400)
    clean_rows: list[hc.Row] = list(clean_log.records)
    decoded = hc.decoded(clean_rows)  # None for make_log's own broken records
    placed = hc.build(SEED, HOSTILE, decoded)
    corpus = [h for _, h in placed]
    tail = Log()
    sentinels(tail, T0 + 30 * 60_000)

    clean_topics = _topics(topic_factory, big=False)
    clean_log.records.extend(tail.records)
    produce(kafka_bootstrap, clean_topics, clean_log)
    expected = replay_json(dump_partitions(kafka_bootstrap, clean_topics, tmp_path))
    assert expected["intake"]["invalid"] == {"bad_json": 5}

    # the same log with the corpus scattered through it
    topics = _topics(topic_factory, big=True)
    rows = hc.mix(clean_rows, placed) + [(row, None) for row in tail.records]
    landed = _produce(kafka_bootstrap, topics, rows)
    total = len(landed)
    want = _expected_intake(expected, corpus)
    assert sum(want["invalid"].values()) - 5 >= 10_000

    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port())
    log_path = tmp_path / "daemon.log"
    daemon = DaemonProcess(env, log_path)
    try:
        horizon_s = expected["horizon_ms"] / 1000
        metrics = daemon.wait_for(
            lambda m: (
                _num(m, "streameval_records_read_total") == total
                and _num(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            timeout_s=420,
            what="the daemon to read the hostile log and be ready",
            ready=True,
        )

        # every record counted once, the bad ones by the reason the corpus promises
        intake = _intake(metrics)
        assert intake["read"] == total
        assert _accounted(intake) == total
        assert intake["invalid"] == want["invalid"]
        # impressions and judgments exactly; a click still waiting for its impression when the
        # group rebalanced (kafka-python often rejoins once right after the first join) is
        # counted unmatched by Pipeline.reset and not recounted when read again
        assert intake["accepted"]["impression"] == want["accepted"]["impression"]
        assert intake["accepted"]["judgment"] == want["accepted"]["judgment"]

        def clicks(counts: dict[str, Any]) -> int:
            return (
                counts["accepted"].get("click", 0)
                + counts["unmatched"]
                + counts["duplicate"].get("click", 0)
                + counts["late"].get("click", 0)
            )

        def unjoined(counts: dict[str, Any]) -> int:
            return counts["unmatched"] + counts["late"].get("click", 0)

        assert clicks(intake) == clicks(want), (intake, want)
        # a confusable click is never joined: unmatched when read in time, late when read behind
        # the watermark (DESIGN §3), which depends on how far the daemon read the other partitions
        # ahead (docs/operations.md, What is not promised); the replay of the clean log has nothing
        # late
        assert unjoined(intake) >= unjoined(want), (intake, want)
        assert intake["duplicate"].get("impression", 0) == 0
        assert intake["late"].get("impression", 0) == 0

        # the valid neighbours: exactly the clean figures
        assert assert_windows_match(metrics, expected, extra_segment="noise") > 20

        # no id, query text or user id in any label value
        ids = hc.identifiers(corpus, decoded) - {""}
        assert len(ids) > 1000
        long_ids = {i for i in ids if len(i) >= 6}  # a short one may be in a topic's uuid
        values = _label_values(metrics, topics)
        assert {"noise", "r-control", "treatment", "bad_json", "too_large"} <= values
        leaked = {v for v in values if v in ids or long_ids & _substrings(v)}
        assert leaked == set()

        # the far past: valid events read far behind the watermark, counted late, impressions
        # and clicks alike (DESIGN §3: a click read behind the watermark without an open list is
        # late; unmatched is for one read in time whose impression never came)
        unmatched_before = intake["unmatched"]
        late_before = sum(intake["late"].values())
        past = Log()
        for i in range(20):
            ts = 1_000 + i * 86_400_000 * 30
            past.add("impressions", f"past-{i}", hc._impression(f"past-{i}", ts))
            past.add("clicks", f"past-click-{i}", hc._click(f"past-click-{i}", ts))
        produce(kafka_bootstrap, topics, past)
        total += len(past.records)
        metrics = daemon.wait_for(
            lambda m: _num(m, "streameval_records_read_total") == total,
            what="the far-past records",
        )
        intake = _intake(metrics)
        assert sum(intake["late"].values()) == late_before + 40
        assert intake["late"].get("impression", 0) >= 20
        assert intake["late"].get("click", 0) >= 20
        assert intake["unmatched"] == unmatched_before
        assert _accounted(intake) == total
        assert _num(metrics, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
        assert_windows_match(metrics, expected, extra_segment="noise")

        # the far future: events dated thousands of years after their Kafka record (a wrong
        # clock) are invalid, future_timestamp, and dead-lettered; accepted, one of them would
        # have moved the watermark to 9999 for good and every in-time event after it would be
        # late. In-time events after them are accepted as usual.
        future = Log()
        future.add("impressions", "future-0", hc._impression("future-0", MAX_EPOCH_MS - 500))
        future.add("clicks", "future-0", hc._click("future-0", MAX_EPOCH_MS))
        accepted_before = sum(intake["accepted"].values())
        late_before = sum(intake["late"].values())
        invalid_before = dict(intake["invalid"])
        landed += _produce(
            kafka_bootstrap,
            topics,
            [
                (row, hc.Hostile(row[0], row[1], row[2], "far future", reason="future_timestamp"))
                for row in future.records
            ],
        )
        total += len(future.records)
        after = Log()
        for i in range(10):
            rid = f"after-future-{i}"
            after.add("impressions", rid, hc._impression(rid, T0 + 40 * 60_000))
        produce(kafka_bootstrap, topics, after)
        total += len(after.records)
        metrics = daemon.wait_for(
            lambda m: _num(m, "streameval_records_read_total") == total,
            what="the far-future records and in-time ones after them",
        )
        intake = _intake(metrics)
        assert intake["invalid"] == {
            **invalid_before,
            "future_timestamp": invalid_before.get("future_timestamp", 0) + 2,
        }
        assert sum(intake["accepted"].values()) == accepted_before + 10
        assert sum(intake["late"].values()) == late_before
        assert _accounted(intake) == total
        assert _num(metrics, "streameval_evaluation_horizon_timestamp_seconds") < 4e9
        assert daemon.proc.poll() is None
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()

    # every bad record is in the dead-letter topic, with its reason, as it was (or cut)
    bad = [(where, row, h) for where, row, h in landed if h is None or h.reason is not None]
    invalid_clean = [(w, r) for w, r, h in bad if h is None and not r[2].endswith(b"}")]
    assert len(invalid_clean) == 5
    bad = [(w, r, h) for w, r, h in bad if h is not None] + [(w, r, None) for w, r in invalid_clean]
    dead = _read_dlq(kafka_bootstrap, topics.dlq, len(bad))
    assert len(dead) == len(bad)
    cut = 0
    for (topic, partition, offset), row, h in bad:
        record = dead.get(f"{topic}/{partition}/{offset}")
        assert record is not None, (topic, partition, offset, h)
        headers = dict(record.headers)
        assert headers[REASON_HEADER] == (b"bad_json" if h is None else h.reason.encode())
        original = row[2] or b""
        if TRUNCATED_HEADER in headers:
            cut += 1
            assert headers[TRUNCATED_HEADER] == str(len(original)).encode()
            assert original.startswith(record.value)
            assert len(record.value) > MAX_DEAD_LETTER_BYTES // 2
        else:
            assert (record.value or b"") == original
            assert record.key == row[1]
    assert cut == sum(1 for _, _, h in bad if h is not None and h.reason == "too_large")

    # nothing of the records' contents in the daemon's log
    text = log_path.read_text(errors="replace")
    for h in corpus:
        if h.reason is None and h.key is not None:
            assert h.key.decode() not in text
    assert "user-" not in text and "hostile query" not in text


# --- the dead-letter sink itself: what Kafka would refuse -------------------------------------


def _raw(value: bytes | None, key: bytes | None, headers: Any = ()) -> RawRecord:
    return RawRecord("in", 3, 77, key, value, 0, tuple(headers))


def test_a_record_too_large_for_kafka_is_dead_lettered_cut_not_raised(
    kafka_bootstrap: str, topic_factory: TopicFactory
) -> None:
    """Before the fix, send() raised MessageSizeTooLargeError inside the intake loop: a 10 MB
    record crashed the daemon, and the restart read it again (a crash loop)."""
    dlq = topic_factory(1, prefix="dlq")
    big = b"{" + b"x" * hc.BIG_BYTES
    key = b"k" * 5000
    with DeadLetterSink(dlq, {"bootstrap_servers": kafka_bootstrap}) as sink:
        sink.send(_raw(big, key, [("trace", b"t")]), "too_large")
        sink.flush(30)
        assert (sink.sent, sink.failed) == (1, 0)
    got = _read_dlq(kafka_bootstrap, dlq, 1)["in/3/77"]
    headers = dict(got.headers)
    assert headers[REASON_HEADER] == b"too_large"
    assert headers[TRUNCATED_HEADER] == str(len(big)).encode()
    assert "trace" not in headers  # the original headers are dropped from a cut record
    assert got.key == key[:MAX_TRUNCATED_KEY_BYTES]
    assert big.startswith(got.value)
    size = len(got.key) + len(got.value) + sum(len(k) + len(v) for k, v in got.headers)
    assert MAX_DEAD_LETTER_BYTES - 100 <= size <= MAX_DEAD_LETTER_BYTES


def test_records_the_producer_would_refuse_are_dead_lettered(
    kafka_bootstrap: str, topic_factory: TopicFactory
) -> None:
    """Neither key nor value (a keyless tombstone), and a null header value: kafka-python's
    send() raised ValueError / TypeError for these before the fix."""
    dlq = topic_factory(1, prefix="dlq")
    with DeadLetterSink(dlq, {"bootstrap_servers": kafka_bootstrap}) as sink:
        sink.send(_raw(None, None), "bad_json")
        sink.send(RawRecord("in", 0, 5, b"k", b"{", 0, (("h", None),)), "bad_json")
        sink.flush(30)
        assert (sink.sent, sink.failed) == (2, 0)
    got = _read_dlq(kafka_bootstrap, dlq, 2)
    assert got["in/3/77"].value == b""
    assert got["in/3/77"].key is None
    assert dict(got["in/0/5"].headers)["h"] == b""
    assert got["in/0/5"].value == b"{"


# --- a mapped format: the same guarantees for records in a team's own shape -------------------

HOSTILE_MAPPED = 2_000


def test_hostile_records_of_a_mapped_format_are_counted_dead_lettered_and_change_no_figure(
    kafka_bootstrap: str, topic_factory: TopicFactory, tmp_path: Path
) -> None:
    """The daemon's log in the Segment-like shape of docs/input-formats.md, with 2,000 records that
    do not map scattered through it (missing and ill-typed fields, wrong timestamps, 5,000-result
    lists, labels that are objects, events the mapping does not read, NaN, deep nesting, bad UTF-8,
    records over 1 MiB): each counted by its reason, dead-lettered with it (and, for
    ``mapping``, with the field), and the clean figures unchanged."""
    clean_log = make_log(4, 200)
    sentinels(clean_log, T0 + 30 * 60_000)
    native_rows: list[hc.Row] = list(clean_log.records)
    # placed among the rows before the sentinels, which stay last (they move the watermark)
    placed = hc.build_mapped(SEED, HOSTILE_MAPPED, hc.decoded(native_rows[:-8]))
    corpus = [h for _, h in placed]
    foreign_rows = [(r, k, rewrite(v or b"", "segment"), p) for r, k, v, p in native_rows]
    # the clean log alone, in the same shape: its figures by replay through the mapping
    clean_topics = _topics(topic_factory, big=False)
    produce(kafka_bootstrap, clean_topics, Log(list(foreign_rows)))
    expected = replay_json(
        dump_partitions(kafka_bootstrap, clean_topics, tmp_path), config=SEGMENT_TOML
    )
    assert expected["intake"]["invalid"] == {"bad_json": 3}  # make_log's own broken clicks
    assert expected["intake"]["accepted"] > 400

    topics = _topics(topic_factory, big=True)
    rows = hc.mix(foreign_rows[:-8], placed) + [(row, None) for row in foreign_rows[-8:]]
    landed = _produce(kafka_bootstrap, topics, rows)
    total = len(landed)
    assert total == len(native_rows) + HOSTILE_MAPPED
    want_invalid = Counter(expected["intake"]["invalid"])
    want_invalid.update(h.reason for h in corpus if h.reason is not None)
    assert want_invalid["mapping"] > 1500
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port())
    env["STREAMEVAL_INPUT"] = json.dumps(tomllib.loads(SEGMENT_TOML.read_text())["input"])
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        metrics = daemon.wait_for(
            lambda m: (
                _num(m, "streameval_records_read_total") == total
                and _num(m, "streameval_evaluation_horizon_timestamp_seconds")
                == expected["horizon_ms"] / 1000
            ),
            timeout_s=300,
            what="the daemon to read the hostile mapped log and be ready",
            ready=True,
        )
        intake = _intake(metrics)
        assert intake["read"] == total == _accounted(intake)
        assert intake["invalid"] == dict(want_invalid)
        assert (
            intake["accepted"]["impression"] == expected["intake"]["accepted_by_type"]["impression"]
        )
        assert assert_windows_match(metrics, expected) > 10
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
    bad = [(where, h) for where, _row, h in landed if h is not None]
    dead = _read_dlq(kafka_bootstrap, topics.dlq, len(bad) + 3)
    assert len(dead) == len(bad) + 3  # and make_log's broken clicks
    fields = Counter()
    for (topic, partition, offset), h in bad:
        headers = dict(dead[f"{topic}/{partition}/{offset}"].headers)
        assert headers[REASON_HEADER] == (h.reason or "").encode(), h.kind
        assert headers.get(FIELD_HEADER) == (None if h.field is None else h.field.encode() or None)
        fields[h.field] += 1
    assert len(fields) >= 12  # the dead letters name a dozen different fields
