"""The window buckets' bytes path to and from the state topic (docs/native.md "The restart's
fixed costs"): the native core's encoded buckets handed to the producer as they are (the same
bytes the Python engine's encoder writes for the same buckets), its own writes read back without
decoding (the table then holds what decoding would give), and the core loading them as bytes."""

from __future__ import annotations

from typing import Any

import pytest

from streameval.kafka.partition import Partition
from streameval.kafka.state import StateTopic
from streameval.kafka.state_table import StateTable, state_key
from streameval.runtime.committer import Committer
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.windows import persisted
from streameval.windows.persisted import EncodedBucket, decode_bucket, encode_bucket
from streameval.windows.store import Bucket
from tests.ci import require_native
from tests.unit.test_native_engine import Run, sim_steps

require_native("native engine")


def _steps() -> list[tuple[Any, ...]]:
    """A simulator log without its looks (a look persists the buckets in the test's Run)."""
    return [s for s in sim_steps(6_000, llm_judge="gpt")[:-3] if s[0] != "look"]


CONFIG = {"evaluation": {"attribution_window": 5_000, "bucket": 5_000, "windows": [60_000]}}


class _Sent:
    """A producer's future, acknowledged at once."""

    failed = staticmethod(lambda: False)
    is_done = True
    exception = None


class _Producer:
    """What the state topic sends, in order."""

    def __init__(self) -> None:
        self.sent: list[tuple[bytes, bytes | None]] = []

    def send(self, topic: str, *, key: bytes, value: bytes | None) -> _Sent:
        self.sent.append((key, value))
        return _Sent()

    def flush(self, timeout: float) -> None:
        pass


def _state_topic() -> tuple[StateTopic[Any, Any], _Producer]:
    """A state topic with no broker: its table, its codecs, a recording producer."""
    topic: StateTopic[Any, Any] = StateTopic.__new__(StateTopic)
    producer = _Producer()
    topic._topic = "state"
    topic._group = "g"
    topic._codecs = STATE_CODECS
    topic.table = StateTable("g", 5_000, codecs=STATE_CODECS)
    topic._producer = producer
    topic._futures = []
    topic._flush_timeout_s = 1.0
    return topic, producer


def _committed(engine: str) -> tuple[list[tuple[bytes, bytes | None]], Run]:
    """What the committer hands the producer after a simulator log, with ``engine``."""
    run = Run(CONFIG, engine)
    for step in _steps():
        run.step(step)
    dead = type("NoDeadLetters", (), {"flush": lambda self: None})()
    committer = Committer(
        run.p,
        dead,  # type: ignore[arg-type]
        clock=lambda: 0.0,
        longest_ms=60_000,
        bucket_ms=5_000,
    )
    topic, producer = _state_topic()
    committer.state = topic
    committer._persist({Partition("s", 0)})
    return producer.sent, run


def test_the_committer_hands_the_producer_the_same_bytes_with_either_engine() -> None:
    python, _ = _committed("python")
    native, run = _committed("native")
    assert len(python) > 5  # buckets really written
    assert native == python  # keys and values, byte for byte, in the same order
    # the native engine's values are the core's bytes, handed through: no Python encoding
    calls: list[Bucket] = []
    encode = persisted._encode_fields

    def counting(bucket: Bucket) -> bytes:
        calls.append(bucket)
        return encode(bucket)

    persisted._encode_fields = counting  # type: ignore[assignment]
    try:
        again = Run(CONFIG, "native")
        for step in _steps():
            again.step(step)
        before, buckets = again.p.unpersisted_buckets()
        assert before is not None and buckets
        assert all(type(b) is EncodedBucket for _, _, b in buckets)
        assert [encode_bucket(b) for _, _, b in buckets] == [v for _, v in native]
        assert calls == []
    finally:
        persisted._encode_fields = encode  # type: ignore[assignment]
    assert run.p.persisted_before("s0") is not None  # marked persisted after the flush


def test_an_encoded_bucket_reads_as_its_decoded_value() -> None:
    (_, raw), *_ = _committed("native")[0]
    assert raw is not None
    held = EncodedBucket(raw)
    decoded = decode_bucket(raw)
    assert isinstance(decoded, Bucket)
    for field in ("ndcg", "coverage", "engagement", "interleaving"):
        assert getattr(held, field) == getattr(decoded, field)
    assert encode_bucket(held) == raw == encode_bucket(decoded)
    with pytest.raises(TypeError):
        held.merge(decoded)


def test_own_writes_read_back_are_not_decoded_and_hold_the_same() -> None:
    sent, _ = _committed("native")
    decoded: list[bytes] = []

    def counting(raw: bytes) -> Any:
        decoded.append(raw)
        return STATE_CODECS.decode_bucket(raw)

    codecs = type(STATE_CODECS)(
        **{f: getattr(STATE_CODECS, f) for f in STATE_CODECS.__dataclass_fields__}
        | {"decode_bucket": counting}
    )
    mine: StateTable[Any, Any] = StateTable("g", 5_000, codecs=codecs)
    other: StateTable[Any, Any] = StateTable("g", 5_000, codecs=codecs)
    for key, value in sent:
        assert value is not None
        _, source, start = key.decode().split("\x1f")
        mine.written(source, int(start), EncodedBucket(value), value)
    for key, value in sent:  # each instance reads the whole topic, its own writes too
        mine.apply(key, value)
    assert decoded == []  # its own: not decoded
    for key, value in sent:
        other.apply(key, value)
    assert len(decoded) == len(sent)  # another instance's: decoded (and validated)
    view_mine, view_other = mine.view(), other.view()
    assert view_mine.keys() == view_other.keys()
    for source, buckets in view_other.items():
        assert buckets.keys() == view_mine[source].keys()
        for start, bucket in buckets.items():
            assert encode_bucket(view_mine[source][start]) == encode_bucket(bucket)
            assert repr(view_mine[source][start].ndcg) == repr(bucket.ndcg)


def test_a_changed_or_dropped_key_is_decoded_as_before() -> None:
    sent, _ = _committed("native")
    key, value = sent[0]
    assert value is not None
    _, source, start = key.decode().split("\x1f")
    table: StateTable[Any, Any] = StateTable("g", 5_000, codecs=STATE_CODECS)
    table.written(source, int(start), EncodedBucket(value), value)
    table.drop(source, int(start))  # tombstoned before the read-back: decoded again
    table.apply(key, value)
    (got,) = (b for _, b in table.buckets(source, int(start), int(start) + 1))
    assert type(got) is Bucket
    table.written(source, int(start), EncodedBucket(value), value)
    table.apply(state_key("g", source, int(start)), b"not json")  # another value: decoded
    assert table.is_bad(source)
    assert table.invalid == 1


def test_the_core_loads_an_encoded_bucket_as_the_python_engine_loads_its_decoding() -> None:
    sent, _ = _committed("native")
    figures = []
    for engine, hold in (("python", decode_bucket), ("native", EncodedBucket)):
        run = Run(CONFIG, engine)
        for key, value in sent:
            assert value is not None
            _, source, start = key.decode().split("\x1f")
            run.p.add_source(source)
            run.p.load_bucket(int(start), hold(value))  # type: ignore[arg-type]
        newest = max(int(k.decode().split("\x1f")[2]) for k, _ in sent)
        figures.append(repr(run.p._windows.rows(newest + 5_000)))  # as of the last bucket's end
    assert figures[0] == figures[1]
    assert "NdcgRow" in figures[0]  # figures really loaded
