"""The sample-ratio test across a group (DESIGN §6, §12): each instance reduces the lists of its
partitions to lists per arm and bucket (kind ``srm``), writes them to (a log standing for) the
state topic, and every instance feeds the group's counts to its test: every instance reports the
test of one pipeline fed every list, whatever the split; a new instance restores it from the
snapshot; a restarted one counts no bucket twice; old records stay readable."""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Iterable
from functools import cache

import pytest

from streameval.config import EvaluationSettings
from streameval.detect.persisted import SRM, Progress, decode_progress, encode_progress
from streameval.engine import Pipeline
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.kafka.state_table import StateTable, detector_key
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.sim import SimConfig, traffic
from streameval.snapshot import SrmRow
from streameval.srm.arms import ArmOf, arm_reader
from streameval.srm.counter import SrmCounter
from streameval.srm.partitioned import decode_arm_bucket, encode_arm_bucket
from streameval.srm.sequential import SrmTest
from tests.unit.detect.group_member import GroupMember, read_split, read_whole_log

B = 10_000
START = 1_700_000_000_000
PARTITIONS = tuple(f"search-impressions/{p}" for p in range(4))
JUDGMENTS = "search-judgments/0"


def _settings() -> EvaluationSettings:
    return EvaluationSettings(ks=(10,), attribution_window=60_000, windows=(60_000,))


def _arm_of() -> ArmOf:
    ev = _settings()
    return arm_reader(ev.segment_labels, ev.control)


def _test() -> SrmTest:
    return SrmTest(None, 0.01, 100.0)


@cache
def _records() -> tuple[tuple[str, bytes], ...]:
    """12 minutes of an A/B at 10 pages a second where 15 % of the treatment's impressions
    (and their clicks) are lost, each record on the partition its request id hashes to."""
    rng = random.Random(3)
    lost: set[bytes] = set()
    out = []
    for r in traffic(SimConfig(seed=6, duration_ms=12 * 60_000), START):
        if r.kind == "judgment":
            out.append((JUDGMENTS, r.raw))
            continue
        request_id = r.raw.split(b'"request_id":"', 1)[1].split(b'"', 1)[0]
        if r.kind == "impression" and b'"arm":"treatment"' in r.raw and rng.random() < 0.15:
            lost.add(request_id)
        if request_id in lost:
            continue
        out.append((PARTITIONS[zlib.crc32(request_id) % 4], r.raw))
    return tuple(out)


class Topic:
    """The state topic's srm and progress records: one ordered log, encoded."""

    def __init__(self) -> None:
        self.log: list[tuple[bytes, bytes | None]] = []

    def write(self, collector: PartitionCollector) -> None:
        ready = collector.ready_srm()
        for source, start, counts in ready:
            self.log.append((detector_key("g", source, start, SRM), encode_arm_bucket(counts)))
        for source, progress in collector.progress().items():
            self.log.append((detector_key("g", source, 0, "progress"), encode_progress(progress)))
        collector.written([(s, SRM, b) for s, b, _ in ready])


class Instance(GroupMember):
    """One daemon's share with no NDCG detector: its pipeline over its partitions, the
    collector (interleaving and srm counts) and the group's srm test."""

    def __init__(self, sources: Iterable[str], topic: Topic) -> None:
        collector = PartitionCollector(None, bucket_ms=B, arm_of=_arm_of())
        self.test = _test()
        super().__init__(
            sources,
            log=topic.log,
            partitions=PARTITIONS,
            pipeline=Pipeline(_settings(), consumers=(collector,)),
            collector=collector,
            make_feed=lambda table: GroupFeed(None, table, history_ms=3_600_000, srm=self.test),
        )
        self.topic = topic

    def offer(self, source: str, raw: bytes) -> None:
        if source == JUDGMENTS:
            self.pipeline.offer_judgment(raw, None, source)
        else:
            self.pipeline.offer(raw, source)

    def persist(self) -> None:
        self.topic.write(self.collector)
        self.poll()
        self.write_snapshot()


@cache
def _single() -> SrmRow | None:
    """One pipeline fed every list through the one-process consumer (what `replay` reports)."""
    counter = SrmCounter(_test(), _arm_of(), B)
    read_whole_log(Pipeline(_settings(), consumers=(counter,)), _records(), PARTITIONS)
    return counter.test.row()


def _group(split: list[tuple[str, ...]], seed: int) -> tuple[list[Instance], Topic]:
    topic = Topic()
    instances = [Instance(part, topic) for part in split]
    read_split(instances, _records(), seed)
    return instances, topic


def test_the_single_pipelines_test_found_the_lost_impressions() -> None:
    row = _single()
    assert row is not None and row.alarm and row.first_alarm_ms is not None
    control, treatment = row.arms
    assert control.lists > treatment.lists > 1000


@pytest.mark.parametrize(
    ("split", "seed"),
    [
        ([PARTITIONS[:2], PARTITIONS[2:]], 1),
        ([PARTITIONS[:1], PARTITIONS[1:2], PARTITIONS[2:3], PARTITIONS[3:]], 4),
        ([PARTITIONS], 5),
    ],
)
def test_every_instance_reports_the_test_of_one_pipeline_whatever_the_split(
    split: list[tuple[str, ...]], seed: int
) -> None:
    instances, _ = _group(split, seed)
    for inst in instances:
        assert inst.test.row() == _single()  # bit for bit: counts, statistic, first alarm


def test_a_new_instance_restores_the_test_from_the_snapshot() -> None:
    """The srm buckets before the snapshot are tombstoned: a new instance reaches the group's
    test only through the snapshot."""
    instances, topic = _group([PARTITIONS[:2], PARTITIONS[2:]], seed=7)
    point = instances[0].table.detection.snapshot_point()
    assert point is not None
    gone = [(k, v) for k, v in topic.log if k.endswith(b"srm") and int(k.split(b"\x1f")[2]) < point]
    assert gone
    log = [(k, None if (k, v) in gone else v) for k, v in topic.log]

    def start(restore: bool, test: SrmTest) -> SrmRow | None:
        table = StateTable("g", codecs=STATE_CODECS)
        for key, value in log:
            table.apply(key, value)
        feed = GroupFeed(None, table.detection, history_ms=3_600_000, srm=test)
        feed.set_sources(PARTITIONS)
        assert feed.restore() == restore
        feed.step()
        return test.row()

    assert start(True, _test()) == _single()
    # another configuration of the test does not take the snapshot: the buckets kept only
    other = SrmTest(None, 0.01, 99.0)
    row = start(False, other)
    assert row is not None and sum(a.lists for a in row.arms) < sum(
        a.lists for a in (_single() or row).arms
    )


def test_a_restarted_instance_collects_no_srm_bucket_twice_and_a_reset_re_collects() -> None:
    """Killed half-way and re-read from the start by a new instance: the buckets before each
    partition's progress are ignored; a reset (a rebalance) mid-way drops the open buckets,
    handed again; each (partition, bucket) is written once; the test equals the reference."""
    records = _records()
    topic = Topic()
    first = Instance(PARTITIONS, topic)
    for source, raw in records[: len(records) // 2]:
        first.offer(source, raw)
    first.persist()
    second = Instance((), topic)
    second.poll()
    for source in PARTITIONS:
        second.pipeline.add_source(source)
        progress = second.table.detection.progress(source)
        assert progress is not None and progress.srm is not None
        second.collector.assign(source, progress)
    for source, raw in records[: len(records) * 3 // 4]:
        second.offer(source, raw)
    second.collector.reset()
    second.pipeline.reset()
    for source in PARTITIONS:
        second.collector.assign(source, second.table.detection.progress(source))
    for source, raw in records:
        second.offer(source, raw)
    second.pipeline.finish()
    assert second.collector.ignored > 0
    second.persist()
    second.poll()
    keys = [key for key, _ in topic.log if key.endswith(b"srm")]
    assert len(keys) == len(set(keys))
    assert second.test.row() == _single()


# --- the values, pure ------------------------------------------------------------------------


def test_arm_bucket_values_round_trip_and_bad_ones_say_why() -> None:
    counts = {"control": 12, "treatment": 9, "": 2}
    assert decode_arm_bucket(encode_arm_bucket(counts)) == counts
    assert decode_arm_bucket(b"{") == "not JSON"
    assert decode_arm_bucket(b'{"v":2,"a":[]}') == "not an arm bucket of this format version"
    assert decode_arm_bucket(b'{"v":1,"a":[["x",-1]]}') == (
        "an arm count that is not a non-negative integer"
    )
    assert decode_arm_bucket(b'{"v":1,"a":[[1,1]]}') == "an arm row that is not [arm, count]"


def test_progress_records_of_before_srm_still_read() -> None:
    old = json.dumps({"v": 1, "judged": 10_000, "implicit": 20_000, "pairs": 20_000}).encode()
    assert decode_progress(old) == Progress(10_000, 20_000, 20_000, None)
    new = Progress(10_000, 20_000, 20_000, 30_000)
    assert decode_progress(encode_progress(new)) == new
    assert new.of(SRM) == 30_000
