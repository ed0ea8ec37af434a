"""Finalized buckets per source partition, as the window state changelog keeps them (DESIGN §6).

A bucket of one source is *complete* once the evaluation horizon has passed its end: every list
with an impression in it has been finalized and folded. Complete buckets are written to the
compacted state topic in step with the offset commits, so that a restart or a rebalance loads
them instead of re-reading the longest window from Kafka.

:class:`SourceBuckets` holds the buckets of each source that are not yet persisted;
:func:`encode_bucket` / :func:`decode_bucket` are the value format of a state-topic record (JSON,
floats written with ``repr`` so that a bucket read back equals the one written, to the bit).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, NamedTuple

from streameval.values import ScoredList, Segment
from streameval.windows.store import Bucket

#: the version of the value format; a record of another version is foreign
FORMAT_VERSION = 1


class BadState(NamedTuple):
    """A state-topic value that is not a bucket of ours: why."""

    reason: str


class SourceBuckets:
    """Per source and bucket start: the sufficient statistics folded since the last persist."""

    __slots__ = ("_bucket_ms", "_by_source")

    def __init__(self, bucket_ms: int) -> None:
        self._bucket_ms = bucket_ms
        self._by_source: dict[str, dict[int, Bucket]] = {}

    def add(self, source: str, scored: ScoredList) -> None:
        ts = scored.timestamp
        start = ts - ts % self._bucket_ms
        buckets = self._by_source.get(source)
        if buckets is None:
            buckets = self._by_source[source] = {}
        bucket = buckets.get(start)
        if bucket is None:
            bucket = buckets[start] = Bucket()
        bucket.fold(scored)

    def complete(self, before: int) -> Iterator[tuple[str, int, Bucket]]:
        """(source, start, bucket) of every bucket that starts before ``before`` (kept until
        :meth:`persisted` drops them)."""
        for source, buckets in sorted(self._by_source.items()):
            for start in sorted(s for s in buckets if s < before):
                yield source, start, buckets[start]

    def persisted(self, before: int) -> None:
        """The buckets starting before ``before`` are in the state topic: drop them."""
        for source in list(self._by_source):
            buckets = self._by_source[source]
            for start in [s for s in buckets if s < before]:
                del buckets[start]
            if not buckets:
                del self._by_source[source]

    def forget(self, source: str) -> None:
        self._by_source.pop(source, None)


class EncodedBucket(Bucket):
    """A bucket held as its state-topic value (``raw``), decoded only when a field is read.

    The native core hands its complete buckets already encoded (the same bytes
    :func:`encode_bucket` writes for them: ``tests/unit/test_native_engine.py`` compares the
    two engines' records byte for byte), and a bucket read back from the state topic arrives
    as bytes: held so, the commit writes ``raw`` as it is (:func:`encode_bucket`), the native
    core loads it as it is (``EngineCore.load_bucket``), and only a Python reader of its fields
    (the Python engine's windows, interleaving's store) pays for the decoding, once. Not to be
    changed: its fields are the decoded value's."""

    __slots__ = ("_decoded", "raw")

    def __init__(self, raw: bytes, decoded: Bucket | None = None) -> None:
        # (no Bucket.__init__: the fields are the decoded bucket's, see _bucket)
        self.raw = raw
        self._decoded = decoded

    def _bucket(self) -> Bucket:
        decoded = self._decoded
        if decoded is None:
            got = decode_bucket(self.raw)
            if isinstance(got, BadState):  # (held only once known to decode: never reached)
                raise ValueError(f"state bucket: {got.reason}")
            decoded = self._decoded = got
        return decoded

    @property
    def ndcg(self) -> dict[Any, list[float]]:  # type: ignore[override]
        return self._bucket().ndcg

    @property
    def coverage(self) -> dict[Any, list[float]]:  # type: ignore[override]
        return self._bucket().coverage

    @property
    def engagement(self) -> dict[Any, list[float]]:  # type: ignore[override]
        return self._bucket().engagement

    @property
    def interleaving(self) -> dict[tuple[str, str], list[int]]:  # type: ignore[override]
        return self._bucket().interleaving

    def fold(self, scored: ScoredList) -> None:
        raise TypeError("an EncodedBucket is not folded into: it is a complete bucket")

    def merge(self, other: Bucket) -> None:
        raise TypeError("an EncodedBucket is not merged into: it is a complete bucket")


def encode_bucket(bucket: Bucket) -> bytes:
    """A bucket's state-topic value (an :class:`EncodedBucket`'s is the bytes it holds)."""
    if isinstance(bucket, EncodedBucket):
        return bucket.raw
    return _encode_fields(bucket)


def _encode_fields(bucket: Bucket) -> bytes:
    data = {
        "v": FORMAT_VERSION,
        "n": [[rel, list(seg), list(ks), acc] for (rel, seg, ks), acc in bucket.ndcg.items()],
        "c": [[rel, list(seg), list(ks), acc] for (rel, seg, ks), acc in bucket.coverage.items()],
        "e": [[list(seg), acc] for seg, acc in bucket.engagement.items()],
    }
    if bucket.interleaving:  # interleaved lists (DESIGN §10): [ranker, opponent, counts]
        data["i"] = [[r, o, acc] for (r, o), acc in bucket.interleaving.items()]
    return json.dumps(data, separators=(",", ":"), allow_nan=False).encode()


def decode_bucket(raw: bytes) -> Bucket | BadState:
    """The bucket a state-topic value holds, or why it holds none (never raises)."""
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: deep nesting
        return BadState("not JSON")
    if not isinstance(data, dict) or data.get("v") != FORMAT_VERSION:
        return BadState("not a bucket of this format version")
    try:
        bucket = Bucket()
        for table, field in ((bucket.ndcg, "n"), (bucket.coverage, "c")):
            for rel, seg, ks, acc in _list(data.get(field)):
                key = (_str(rel), _segment(seg), tuple(_int(k) for k in _list(ks)))
                values = _numbers(acc)
                if len(values) != 3 * len(key[2]) or not key[2]:
                    raise ValueError("accumulators do not match the cutoffs")
                table[key] = values
        for seg, acc in _list(data.get("e")):
            values = _numbers(acc)
            if len(values) != 5:
                raise ValueError("engagement needs five values")
            bucket.engagement[_segment(seg)] = values
        for ranker, opponent, acc in _list(data.get("i", [])):
            counts = [_int(v) for v in _list(acc)]
            if len(counts) != 4 or min(counts) < 0:
                raise ValueError("interleaving needs four counts")
            bucket.interleaving[_str(ranker), _str(opponent)] = counts
    except (ValueError, TypeError, OverflowError):  # OverflowError: an int past the floats
        return BadState("malformed bucket")
    return bucket


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("a list was expected")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a string was expected")
    return value


def _int(value: Any) -> int:
    if type(value) is not int:
        raise TypeError("an integer was expected")
    return value


def _segment(value: Any) -> Segment:
    return tuple(_str(v) for v in _list(value))


def _numbers(value: Any) -> list[float]:
    out: list[float] = []
    for v in _list(value):
        if type(v) not in (int, float) or not math.isfinite(v):
            raise TypeError("a finite number was expected")
        out.append(v)
    return out
