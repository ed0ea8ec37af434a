"""The state topic's records as a table (pure: records in, buckets out; no I/O), and their keys.

The table knows the keys (``group␟topic/partition␟bucket start``, and a fourth field, the kind,
for the detectors' records); what the values are (a window bucket, the detectors' buckets,
progress and snapshots) it learns from the :class:`StateCodecs` the runtime builds: this package
imports none of windows/, detect/ or interleave/.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

# the state topic's log lines keep their logger
_LOG = logging.getLogger("streameval.kafka.state")
_SEP = "\x1f"


class DetectionTable(Protocol):
    """What the state topic asks of the detectors' table (:class:`~streameval.group.feed.
    DetectorTable`)."""

    #: records that could not be decoded when fed
    invalid: int

    def apply(self, source: str, start: int, kind: str, value: bytes | None) -> str | None: ...

    def put(self, source: str, relevance: str, start: int, data: Any) -> None: ...

    def put_progress(self, source: str, progress: Any) -> None: ...

    def drop(self, source: str, relevance: str, start: int) -> None: ...

    def older(self, source: str, before: int) -> list[tuple[str, int]]: ...

    def chunk_positions(self, slot: str) -> list[int]: ...

    def snapshot_point(self) -> int | None: ...


B = TypeVar("B")
D = TypeVar("D", bound=DetectionTable)


@dataclass(frozen=True, slots=True)
class StateCodecs(Generic[B, D]):
    """What the state topic's values are: the codecs of a window bucket (``B``) and of the
    detectors' records, and the detectors' table (``D``) they are kept in."""

    #: a window bucket's value
    encode_bucket: Callable[[B], bytes]
    #: a window bucket, or (a string) why the value is not one of ours
    decode_bucket: Callable[[bytes], B | str]
    #: a new, empty table of the detectors' records
    detection: Callable[[], D]
    #: the kinds of the detectors' records (the key's fourth field)
    kinds: Collection[str]
    #: the kinds of interleaving counts, progress and snapshot chunks
    pairs_kind: str
    progress_kind: str
    snapshot_kind: str
    encode_detector_bucket: Callable[[Any], bytes]
    encode_pair_bucket: Callable[[Any], bytes]
    encode_progress: Callable[[Any], bytes]
    #: the kind of the sample-ratio test's lists per arm, and their values
    srm_kind: str
    encode_srm_bucket: Callable[[Any], bytes]


def state_key(group: str, source: str, start: int) -> bytes:
    return f"{group}{_SEP}{source}{_SEP}{start}".encode()


def detector_key(group: str, source: str, start: int, kind: str) -> bytes:
    """The key of a detector record (:mod:`streameval.group.feed`): a fourth field, the kind
    (``judged`` / ``implicit`` / ``pairs`` / ``srm`` bucket, ``progress`` with start 0, or
    ``snapshot`` with the chunk's index)."""
    return f"{group}{_SEP}{source}{_SEP}{start}{_SEP}{kind}".encode()


def parse_state_key(key: bytes | None) -> tuple[str, str, int] | None:
    """(group, source, bucket start) of a key, or None when it is not one of ours."""
    parsed = _parse_key(key)
    if parsed is None or parsed[3]:
        return None
    return parsed[0], parsed[1], parsed[2]


def _parse_key(key: bytes | None, kinds: Collection[str] = ()) -> tuple[str, str, int, str] | None:
    """(group, source, start, kind) of a key (kind "" for a window bucket, else one of
    ``kinds``), or None."""
    if key is None:
        return None
    try:
        parts = key.decode().split(_SEP)
        if len(parts) == 3:
            return parts[0], parts[1], int(parts[2]), ""
        if len(parts) == 4 and parts[3] in kinds:
            return parts[0], parts[1], int(parts[2]), parts[3]
    except ValueError:  # also UnicodeDecodeError
        pass
    return None


class StateTable(Generic[B, D]):
    """This group's finalized buckets as the state topic holds them: per source partition and
    bucket start. Pure: records in, buckets out; no I/O. What a bucket and the detectors'
    records are is the ``codecs``' business."""

    def __init__(self, group: str, bucket_ms: int = 10_000, *, codecs: StateCodecs[B, D]) -> None:
        self._group = group
        self._bucket_ms = bucket_ms
        self._codecs = codecs
        self._buckets: dict[str, dict[int, B]] = {}
        #: per (source, start): the value this instance wrote last and the bucket it encodes,
        #: until the record is read back (:meth:`written`)
        self._written: dict[tuple[str, int], tuple[bytes, B]] = {}
        self._bad: set[str] = set()
        self._invalid_here = 0
        #: the detectors' records (group-wide detection, DESIGN §9)
        self.detection: D = codecs.detection()

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """One state-topic record: a bucket, a tombstone, or something to count and skip."""
        parsed = _parse_key(key, self._codecs.kinds)
        if parsed is None:
            self._invalid(None, "a key that is not group␟topic/partition␟bucket[␟kind]")
            return
        group, source, start, kind = parsed
        if group != self._group:
            return  # another group's state: not ours to read, not wrong
        if kind:
            why = self.detection.apply(source, start, kind, value)
            if why is not None:  # the detectors lack that part: counted, the windows unharmed
                self._invalid(None, f"{kind} record of {source}: {why}")
            return
        if value is None:
            buckets = self._buckets.get(source)
            if buckets is not None:
                buckets.pop(start, None)
            return
        mine = self._written.get((source, start))
        if mine is not None and mine[0] == value:
            # this instance's own write read back: the same bytes decode to the bucket it wrote
            # (the codec's round trip is exact), so it is put as decoding would, undecoded
            del self._written[source, start]
            self.put(source, start, mine[1])
            return
        bucket = self._codecs.decode_bucket(value)
        if isinstance(bucket, str):  # why it is not a bucket of ours
            self._invalid(source, bucket)
            return
        self.put(source, start, bucket)

    def put(self, source: str, start: int, bucket: B) -> None:
        self._buckets.setdefault(source, {})[start] = bucket

    def written(self, source: str, start: int, bucket: B, value: bytes) -> None:
        """This instance wrote ``bucket`` as ``value``: held, and when the record is read back
        (every instance reads the whole topic, its own writes too) it is not decoded again."""
        self.put(source, start, bucket)
        self._written[source, start] = (value, bucket)

    def drop(self, source: str, start: int) -> None:
        self._written.pop((source, start), None)
        buckets = self._buckets.get(source)
        if buckets is not None:
            buckets.pop(start, None)

    @property
    def invalid(self) -> int:
        """Records that were not a bucket of ours (``streameval_state_records_invalid_total``):
        found when read, or, for a detector bucket (decoded when fed), when fed."""
        return self._invalid_here + self.detection.invalid

    def _invalid(self, source: str | None, reason: str) -> None:
        self._invalid_here += 1
        if source is not None:
            self._bad.add(source)
        _LOG.warning(
            "state topic: skipped a record (%s)%s",
            reason,
            "" if source is None else f"; {source} will be re-read in full",
        )

    def is_bad(self, source: str) -> bool:
        """A record of ``source`` could not be read: its buckets are not to be trusted."""
        return source in self._bad

    def clear_bad(self, source: str) -> None:
        self._bad.discard(source)

    def buckets(self, source: str, since: int, before: int) -> Iterator[tuple[int, B]]:
        """The buckets of ``source`` starting in ``[since, before)``, oldest first."""
        buckets = self._buckets.get(source, {})
        for start in sorted(s for s in buckets if since <= s < before):
            yield start, buckets[start]

    def older(self, source: str, before: int) -> list[int]:
        return sorted(s for s in self._buckets.get(source, {}) if s < before)

    def view(self) -> Mapping[str, Mapping[int, B]]:
        """The group's finalized buckets per partition (read-only: do not change them). Each
        partition's buckets are complete up to the horizon its owner last persisted
        (:meth:`complete_before`)."""
        return self._buckets

    def complete_before(self, source: str) -> int | None:
        """The start of the bucket after the newest one the state holds for ``source``: as far
        as the group-wide view of that partition goes (None: nothing held)."""
        buckets = self._buckets.get(source)
        if not buckets:
            return None
        return max(buckets) + self._bucket_ms
