"""The Kafka clients' repeated log lines are held to one of a kind per interval."""

from __future__ import annotations

import logging

from streameval.log_limits import RepeatLimiter


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(name: str, msg: str, *args: object, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_one_of_a_kind_per_interval_and_the_next_one_says_how_many_were_held() -> None:
    clock = _Clock()
    limiter = RepeatLimiter(interval_s=30.0, clock=clock)
    passed = []
    for i in range(100):  # a reconnect failure every 50 ms, its port changing
        clock.now = i * 0.05
        r = _record("kafka.net.connection", "Connect to 127.0.0.1:%d failed", 30_000 + i)
        if limiter.filter(r):
            passed.append(r.getMessage())
    assert passed == ["Connect to 127.0.0.1:30000 failed"]
    clock.now = 31.0
    r = _record("kafka.net.connection", "Connect to 127.0.0.1:%d failed", 31_000)
    assert limiter.filter(r)
    assert r.getMessage() == "Connect to 127.0.0.1:31000 failed (and 99 more like it in 31 s)"


def test_other_kinds_levels_and_loggers_pass() -> None:
    clock = _Clock()
    limiter = RepeatLimiter(interval_s=30.0, clock=clock)
    assert limiter.filter(_record("streameval.kafka.librdkafka", "FAIL: broker down"))
    assert not limiter.filter(_record("streameval.kafka.librdkafka", "FAIL: broker down"))
    assert limiter.filter(_record("streameval.kafka.librdkafka", "SESSTMOUT: session timed out"))
    assert limiter.filter(_record("streameval.kafka.librdkafka", "FAIL: broker down", level=30))
    assert limiter.filter(_record("kafka.cluster", "FAIL: broker down"))
    # the daemon's own lines are never held back, however often they repeat
    for _ in range(5):
        assert limiter.filter(_record("streameval.daemon", "8 partitions lost"))
    # a logger that only shares a prefix of the name is not a Kafka client's
    assert limiter.filter(_record("kafkaesque", "x")) and limiter.filter(_record("kafkaesque", "x"))


def test_the_table_of_kinds_is_bounded() -> None:
    clock = _Clock()
    limiter = RepeatLimiter(interval_s=30.0, clock=clock, max_kinds=3)
    for word in ("a", "b", "c", "d"):
        assert limiter.filter(_record("kafka", f"error {word}"))
    assert limiter.filter(_record("kafka", "error a"))  # forgotten when the table started over


def test_hex_addresses_and_member_ids_are_blanked_but_hex_looking_words_are_not() -> None:
    clock = _Clock()
    limiter = RepeatLimiter(interval_s=30.0, clock=clock)
    first = "Heartbeat failed for <Coordinator at 0x7f3a2b1c9d10> member kafka-python-9b4d2c0e-1f3a"
    again = "Heartbeat failed for <Coordinator at 0x7f3a2b1c0a20> member kafka-python-77aa00ff-9e1b"
    assert limiter.filter(_record("kafka.coordinator", first))
    assert not limiter.filter(_record("kafka.coordinator", again))  # the same kind
    # words made of hex letters only are words: two different messages stay two kinds
    assert limiter.filter(_record("kafka.coordinator", "partitions added"))
    assert limiter.filter(_record("kafka.coordinator", "partitions faced"))
