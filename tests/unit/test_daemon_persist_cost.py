"""What a commit's persist costs the daemon's loop (docs/native.md "The daemon and the re-read"):
the group feed's step skipped while no progress record changed, and the state producer's
partitioner, which hashes no key for a one-partition topic and places keys as kafka-python's
default otherwise."""

from __future__ import annotations

from typing import Any

from kafka.partitioner import DefaultPartitioner

from streameval.detect import detectors_for
from streameval.detect.persisted import Progress, encode_progress
from streameval.group.feed import GroupFeed
from streameval.kafka.state import STATE_BATCH_BYTES, _StatePartitioner
from streameval.kafka.state_table import StateTable
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.values import JUDGED
from tests.unit.detect.test_group import PARTITIONS, _settings

B = 10_000
SEG = ("ltr", "control")


def _feed() -> tuple[StateTable[Any, Any], GroupFeed, list[int]]:
    """A feed over the 4 partitions whose detectors note each point they are closed at."""
    det = detectors_for(_settings())
    assert det is not None
    fed: list[int] = []
    close = det.close

    def counting_close(kind: str, point: int) -> None:
        fed.append(point)
        close(kind, point)

    det.close = counting_close  # type: ignore[method-assign]
    table: StateTable[Any, Any] = StateTable("g", codecs=STATE_CODECS)
    feed = GroupFeed(det, table.detection, history_ms=3_600_000)
    feed.set_sources(PARTITIONS)
    return table, feed, fed


def test_a_step_without_a_progress_change_reads_no_frontier() -> None:
    table, feed, closed = _feed()
    for p in PARTITIONS:
        table.detection.put(p, JUDGED, 0, {(SEG, 10): {"q": (1, 0.5, 0.25)}})
        table.detection.put_progress(p, Progress(B, None))
    frontiers: list[str] = []
    frontier = feed.frontier

    def counting_frontier(kind: str) -> int | None:
        frontiers.append(kind)
        return frontier(kind)

    feed.frontier = counting_frontier  # type: ignore[method-assign]
    assert feed.step() == 1
    asked = len(frontiers)
    assert asked > 0
    # the table calls step before every bucket it drops: with no progress changed since, the
    # frontiers are the ones of the last step, and none is looked for again
    table.detection.put(PARTITIONS[0], JUDGED, 5 * B, {(SEG, 10): {"q": (1, 0.5, 0.25)}})
    table.detection.drop(PARTITIONS[0], JUDGED, 5 * B)
    assert feed.step() == 0
    assert len(frontiers) == asked
    assert closed == [B]


def test_a_progress_change_by_any_path_steps_again() -> None:
    table, feed, closed = _feed()
    for p in PARTITIONS:
        table.detection.put(p, JUDGED, 0, {(SEG, 10): {"q": (1, 0.5, 0.25)}})
        table.detection.put(p, JUDGED, B, {(SEG, 10): {"q": (2, 1.0, 0.5)}})
        table.detection.put_progress(p, Progress(B, None))
    assert feed.step() == 1
    # three partitions move on as this instance writes them (put_progress), the fourth as its
    # record is read from the topic (apply): only then does the frontier pass the second bucket
    for p in PARTITIONS[:3]:
        table.detection.put_progress(p, Progress(2 * B, None))
    assert feed.step() == 0
    table.detection.apply(PARTITIONS[3], 0, "progress", encode_progress(Progress(2 * B, None)))
    assert feed.step() == 1
    assert closed == [B, 2 * B]
    # and new sources (partitions added) are a change too
    feed.set_sources(PARTITIONS[:3])
    assert feed.step() == 0
    assert closed == [B, 2 * B]  # the frontier is where it was: nothing closed twice


class _Cluster:
    """The part of kafka-python's ClusterMetadata a partitioner reads."""

    def __init__(self, partitions: int) -> None:
        self._partitions = set(range(partitions))

    def topics(self) -> set[str]:
        return {"state"}

    def partitions_for_topic(self, topic: str) -> set[int]:
        return self._partitions

    def available_partitions_for_topic(self, topic: str) -> set[int]:
        return self._partitions


def test_the_state_partitioner_places_keys_as_kafka_pythons_default() -> None:
    ours, theirs = _StatePartitioner(), DefaultPartitioner()
    keys = [f"g\x1fsearch-impressions/{p}\x1f{s}".encode() for p in range(4) for s in range(50)]
    for partitions in (1, 3, 8):
        cluster = _Cluster(partitions)
        placed = [ours.partition("state", k, k, b"v", b"v", cluster) for k in keys]
        assert placed == [theirs.partition("state", k, k, b"v", b"v", cluster) for k in keys]
        assert set(placed) == set(range(partitions))  # (200 keys reach every partition)


def test_a_one_partition_topic_hashes_no_key(monkeypatch: Any) -> None:
    from kafka.partitioner import default

    def refused(data: bytes) -> int:
        raise AssertionError("murmur2 called for a one-partition topic")

    monkeypatch.setattr(default, "murmur2", refused)
    assert _StatePartitioner().partition("state", b"k", b"k", b"v", b"v", _Cluster(1)) == 0


def test_a_commits_writes_fit_one_batch() -> None:
    # ~1,000 state records of ~400 B per commit in a catch-up (docs/native.md): one batch,
    # within kafka-python's default max_request_size (1 MiB)
    assert 1_000 * 400 <= STATE_BATCH_BYTES <= 1_048_576
