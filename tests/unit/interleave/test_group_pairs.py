"""The interleaving test across a group (DESIGN §6, §10): each instance reduces the interleaved
lists of its partitions to outcome counts per bucket and pair, writes them to (a log standing
for) the state topic, and every instance feeds the group's counts to its tests, so that every
instance reports the test of one pipeline fed every list, whatever the split, and a new
instance restores it from the snapshot."""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from functools import cache

import pytest

from streameval.config import EvaluationSettings
from streameval.detect.persisted import (
    PAIRS,
    Progress,
    decode_progress,
    encode_progress,
)
from streameval.engine import Pipeline
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.interleave.detector import PairTests, log_mixture_ratio
from streameval.interleave.partitioned import decode_pair_bucket, encode_pair_bucket
from streameval.kafka.state_table import StateTable, detector_key
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.sim import SimConfig, traffic
from streameval.snapshot import PairTestRow
from tests.unit.detect.group_member import GroupMember, read_split, read_whole_log

B = 10_000
START = 1_700_000_000_000
PARTITIONS = tuple(f"search-impressions/{p}" for p in range(4))
JUDGMENTS = "search-judgments/0"


def _settings() -> EvaluationSettings:
    return EvaluationSettings(
        ks=(10,),
        attribution_window=60_000,
        windows=(60_000,),
        interleaving={"alpha": 0.05, "mixture_scale": 0.1},
    )


def _tests() -> PairTests:
    il = _settings().interleaving
    return PairTests(il.mixture_scale, il.alpha)


@cache
def _records() -> tuple[tuple[str, bytes], ...]:
    """12 minutes of team-draft pages between control and a treatment that regressed by 40 %
    from the start, each impression and its clicks on the partition its request id hashes to."""
    config = SimConfig(
        seed=5,
        interleaving=True,
        regression_at_ms=0,
        regression_size=0.4,
        duration_ms=12 * 60_000,
        noise_share=0.0,
    )
    out = []
    for r in traffic(config, START):
        if r.kind == "judgment":
            out.append((JUDGMENTS, r.raw))
        else:
            request_id = r.raw.split(b'"request_id":"', 1)[1].split(b'"', 1)[0]
            out.append((PARTITIONS[zlib.crc32(request_id) % 4], r.raw))
    return tuple(out)


class Topic:
    """The state topic's detector records: one ordered log, encoded, applied in order."""

    def __init__(self) -> None:
        self.log: list[tuple[bytes, bytes | None]] = []

    def write(self, collector: PartitionCollector) -> None:
        ready = collector.ready_pairs()
        for source, start, counts in ready:
            self.log.append((detector_key("g", source, start, PAIRS), encode_pair_bucket(counts)))
        for source, progress in collector.progress().items():
            self.log.append((detector_key("g", source, 0, "progress"), encode_progress(progress)))
        collector.written([(s, PAIRS, b) for s, b, _ in ready])


class Instance(GroupMember):
    """One daemon's share with no NDCG detector configured: its pipeline over its partitions,
    the collector (interleaving counts only) and the tests fed by the group feed."""

    def __init__(self, sources: Iterable[str], topic: Topic) -> None:
        collector = PartitionCollector(None, bucket_ms=B)
        self.tests = _tests()
        super().__init__(
            sources,
            log=topic.log,
            partitions=PARTITIONS,
            pipeline=Pipeline(_settings(), consumers=(collector,)),
            collector=collector,
            make_feed=lambda table: GroupFeed(None, table, history_ms=3_600_000, pairs=self.tests),
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
def _single() -> tuple[PairTestRow, ...]:
    """One pipeline fed every list: its own tests (what `replay` reports)."""
    pipeline = Pipeline(_settings())
    read_whole_log(pipeline, _records(), PARTITIONS)
    return pipeline.snapshot().interleaving_tests


def _group(split: list[tuple[str, ...]], seed: int) -> tuple[list[Instance], Topic]:
    topic = Topic()
    instances = [Instance(part, topic) for part in split]
    read_split(instances, _records(), seed)
    return instances, topic


def test_the_single_pipelines_test_found_the_regression() -> None:
    """The reference is not trivial: the regressed treatment loses, and its test alarmed."""
    rows = {(r.ranker, r.opponent): r for r in _single()}
    worse = rows["ltr-v2", "bm25-v1"]
    assert worse.losses > worse.wins > 100
    assert worse.first_alarm_ms is not None and worse.alarm
    # the statistic is the closed form of its counts
    assert worse.statistic == log_mixture_ratio(worse.wins, worse.losses, 0.1)
    assert rows["bm25-v1", "ltr-v2"].first_alarm_ms is None


@pytest.mark.parametrize(
    ("split", "seed"),
    [
        ([PARTITIONS[:2], PARTITIONS[2:]], 1),
        ([PARTITIONS[0::2], PARTITIONS[1::2]], 2),
        ([PARTITIONS[:1], PARTITIONS[1:]], 3),
        ([PARTITIONS[:1], PARTITIONS[1:2], PARTITIONS[2:3], PARTITIONS[3:]], 4),
        ([PARTITIONS], 5),
    ],
)
def test_every_instance_reports_the_test_of_one_pipeline_whatever_the_split(
    split: list[tuple[str, ...]], seed: int
) -> None:
    instances, _ = _group(split, seed)
    reference = _single()
    for inst in instances:
        assert inst.tests.rows() == reference  # bit for bit: counts, statistic, first alarm
        # the instance's own (partial) tests are not the group's
        own = inst.pipeline.snapshot().interleaving_tests
        if len(split) > 1:
            assert own != reference


def test_a_new_instance_restores_the_tests_from_the_snapshot() -> None:
    """The pair buckets before the snapshot are tombstoned (as the daemon's ``expire`` does):
    a new instance reaches the group's tests only through the snapshot."""
    instances, topic = _group([PARTITIONS[:2], PARTITIONS[2:]], seed=7)
    snapshots = [k for k, _ in topic.log if k.endswith(b"snapshot")]
    assert snapshots  # 12 minutes: the frontier crossed at least one 5-minute period
    first = instances[0]
    point = first.table.detection.snapshot_point()
    assert point is not None
    gone = [
        (k, v) for k, v in topic.log if k.endswith(b"pairs") and int(k.split(b"\x1f")[2]) < point
    ]
    assert gone
    log = [(k, None if (k, v) in gone else v) for k, v in topic.log]

    def start(restore: bool) -> PairTests:
        table = StateTable("g", codecs=STATE_CODECS)
        for key, value in log:
            table.apply(key, value)
        tests = _tests()
        feed = GroupFeed(None, table.detection, history_ms=3_600_000, pairs=tests)
        feed.set_sources(PARTITIONS)
        if restore:
            assert feed.restore()
        feed.step()
        return tests

    assert start(restore=True).rows() == _single()
    # without the snapshot, the buckets kept are not the whole run
    assert start(restore=False).rows() != _single()


def test_a_snapshot_without_the_tests_leaves_them_to_the_buckets_kept() -> None:
    """A snapshot of another scale (or written before the tests were in it) restores the
    detectors' part only; the tests start from the buckets kept."""
    _, topic = _group([PARTITIONS], seed=8)
    table = StateTable("g", codecs=STATE_CODECS)
    for key, value in topic.log:
        table.apply(key, value)
    tests = PairTests(0.2, 0.05)  # another mixture scale
    feed = GroupFeed(None, table.detection, history_ms=3_600_000, pairs=tests)
    feed.set_sources(PARTITIONS)
    assert not feed.restore()  # nothing else to restore without detectors
    feed.step()
    rows = {(r.ranker, r.opponent): r for r in tests.rows()}
    reference = {(r.ranker, r.opponent): r for r in _single()}
    for pair, row in rows.items():  # every bucket is still kept here: the same counts
        assert (row.wins, row.losses) == (reference[pair].wins, reference[pair].losses)
        assert row.statistic == log_mixture_ratio(row.wins, row.losses, 0.2)


def test_a_restarted_instance_collects_no_pair_bucket_twice() -> None:
    """Killed half-way and re-read from the start by a new instance: the buckets before each
    partition's progress are ignored, each (partition, bucket) is written once, and the tests
    equal an uninterrupted run's."""
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
        assert progress is not None and progress.pairs is not None
        second.collector.assign(source, progress)
    for source, raw in records:
        second.offer(source, raw)
    second.pipeline.finish()
    assert second.collector.ignored > 0
    second.persist()
    second.poll()
    keys = [key for key, _ in topic.log if key.endswith(b"pairs")]
    assert len(keys) == len(set(keys))
    assert second.tests.rows() == _single()


# --- the values, pure ------------------------------------------------------------------------


def test_pair_tests_dump_and_load_go_on_as_if_never_stopped() -> None:
    a, b = _tests(), _tests()
    a.close(0, [(("x", "y"), [3, 9, 1, 0]), (("y", "x"), [9, 3, 1, 0])])
    b.load(a.dump())
    for tests in (a, b):
        tests.close(B, [(("x", "y"), [1, 7, 0, 2])])
    assert a.rows() == b.rows()
    (xy, yx) = a.rows()
    assert (xy.wins, xy.losses) == (4, 16)
    assert xy.statistic == log_mixture_ratio(4, 16, 0.1)
    assert (yx.wins, yx.losses) == (9, 3)


@pytest.mark.parametrize(
    "state",
    [
        [["x", "y", -1, 2, None]],
        [["x", "y", 1.5, 2, None]],
        [["x", 7, 1, 2, None]],
        [["x", "y", 1, 2, "soon"]],
        [["x", "y", 1, 2]],
        {"x": 1},
        None,
    ],
)
def test_pair_tests_refuse_a_state_that_is_not_theirs(state: object) -> None:
    tests = _tests()
    tests.close(0, [(("x", "y"), [1, 0, 0, 0])])
    before = tests.rows()
    with pytest.raises(ValueError, match="not the interleaving tests' state"):
        tests.load(state)
    assert tests.rows() == before


def test_pair_buckets_round_trip_and_bad_ones_are_values() -> None:
    counts = {("a", "b"): [3, 1, 2, 0], ("b", "a"): [1, 3, 2, 0]}
    assert decode_pair_bucket(encode_pair_bucket(counts)) == counts
    for bad in (
        b"",
        b"[]",
        b'{"v":2,"p":[]}',
        b'{"v":1}',
        b'{"v":1,"p":[["a","b",[1,2,3]]]}',
        b'{"v":1,"p":[["a","b",[1,2,3,-4]]]}',
        b'{"v":1,"p":[["a",null,[1,2,3,4]]]}',
        b'{"v":1,"p":[["a","b",[1,2,3,true]]]}',
    ):
        assert isinstance(decode_pair_bucket(bad), str)


def test_progress_carries_the_pairs_point_and_reads_older_records() -> None:
    progress = Progress(B, 2 * B, 3 * B)
    assert decode_progress(encode_progress(progress)) == progress
    assert progress.of(PAIRS) == 3 * B
    # a record of a version before the pairs: no pairs point (the frontier waits for one)
    assert decode_progress(b'{"v":1,"judged":10000,"implicit":20000}') == Progress(B, 2 * B)


def test_a_bad_pair_bucket_is_counted_and_skipped_when_fed() -> None:
    table = StateTable("g", codecs=STATE_CODECS)
    tests = _tests()
    feed = GroupFeed(None, table.detection, history_ms=3_600_000, pairs=tests)
    feed.set_sources(PARTITIONS[:2])
    good = encode_pair_bucket({("a", "b"): [0, 5, 0, 0]})
    table.apply(detector_key("g", PARTITIONS[0], 0, PAIRS), good)
    table.apply(detector_key("g", PARTITIONS[1], 0, PAIRS), b"{not json")
    for source in PARTITIONS[:2]:
        table.apply(
            detector_key("g", source, 0, "progress"), encode_progress(Progress(None, None, B))
        )
    feed.step()
    assert table.invalid == 1
    ((row),) = tests.rows()
    assert (row.ranker, row.opponent, row.wins, row.losses) == ("a", "b", 0, 5)
