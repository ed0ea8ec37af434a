"""Group-wide detection (DESIGN §9): the lists of each partition, reduced to detector buckets,
written to (a table standing for) the state topic and fed back in frontier order, give the
detectors of every instance the same state, and the state of one detector fed every list."""

from __future__ import annotations

import json
import random
import zlib
from collections.abc import Iterable

import pytest

from streameval.config import EvaluationSettings, Settings
from streameval.detect import Detectors, detectors_for
from streameval.detect.persisted import (
    BadRecord,
    DetectorBucket,
    Progress,
    decode_detector_bucket,
    decode_progress,
    encode_detector_bucket,
    encode_progress,
    encode_snapshot,
)
from streameval.engine import Pipeline
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.kafka.state_table import StateTable, detector_key, parse_state_key, state_key
from streameval.runtime.state_codecs import STATE_CODECS
from streameval.snapshot import DetectionRow
from streameval.values import IMPLICIT, JUDGED, ScoredList
from tests.unit.detect.group_member import GroupMember, read_split, read_whole_log
from tests.unit.detect.scenario import regression_log

B = 10_000
PARTITIONS = tuple(f"search-impressions/{p}" for p in range(4))
JUDGMENTS = "search-judgments/0"


def _settings() -> Settings:
    return Settings(
        evaluation=EvaluationSettings(ks=(10,), attribution_window=60_000, windows=(60_000,)),
        detection={
            "min_relative_drop": 0.05,
            "half_life": "5m",
            "min_lists": 100,
            "relevance": ["judged", "implicit"],
        },
    )


def _records() -> list[tuple[str, bytes]]:
    """A 30 % drop of the treatment half-way, each record on the partition its request id
    hashes to (an impression and its clicks together, as a keyed producer puts them)."""
    out = []
    for r in regression_log():
        if r.kind == "judgment":  # every instance reads every judgment
            out.append((JUDGMENTS, r.raw))
            continue
        request_id = json.loads(r.raw)["request_id"]
        out.append((PARTITIONS[zlib.crc32(request_id.encode()) % 4], r.raw))
    return out


class Topic:
    """What the state topic does for the detectors' records: one ordered log, encoded and
    decoded, every reader applying it in order."""

    def __init__(self) -> None:
        self.log: list[tuple[bytes, bytes | None]] = []

    def write(self, collector: PartitionCollector, table: StateTable) -> None:
        ready = collector.ready()
        for source, relevance, start, data in ready:
            key = detector_key("g", source, start, relevance)
            self.log.append((key, encode_detector_bucket(data)))
            table.detection.put(source, relevance, start, data)
        for source, progress in collector.progress().items():
            self.log.append((detector_key("g", source, 0, "progress"), encode_progress(progress)))
        collector.written([(s, r, b) for s, r, b, _ in ready])


class Instance(GroupMember):
    """One daemon's share: a pipeline over its partitions, its collector, its own reading of
    the topic and its detectors fed by the group feed."""

    def __init__(
        self,
        settings: Settings,
        sources: Iterable[str],
        topic: Topic,
        partitions: tuple[str, ...] = PARTITIONS,
    ) -> None:
        det = detectors_for(settings)
        assert det is not None
        self.detectors: Detectors = det
        collector = PartitionCollector(det.spec)
        super().__init__(
            sources,
            log=topic.log,
            partitions=partitions,
            pipeline=Pipeline(settings.evaluation, consumers=(collector,)),
            collector=collector,
            make_feed=lambda table: GroupFeed(det, table, history_ms=3_600_000),
            attribution_ms=settings.evaluation.attribution_window,
        )
        self.topic = topic

    def persist(self) -> None:
        self.topic.write(self.collector, self.table)
        self.poll()
        self.write_snapshot()


def _single() -> tuple[DetectionRow, ...]:
    settings = _settings()
    det = detectors_for(settings)
    assert det is not None
    pipeline = Pipeline(settings.evaluation, consumers=(det,))
    read_whole_log(pipeline, _records(), PARTITIONS)
    return det.rows()


def _group(split: list[tuple[str, ...]], seed: int) -> list[tuple[DetectionRow, ...]]:
    """The records read by one instance per part of ``split``, interleaved at random; each
    instance persists and polls at random moments."""
    settings = _settings()
    topic = Topic()
    instances = [Instance(settings, part, topic) for part in split]
    read_split(instances, _records(), seed)
    return [inst.detectors.rows() for inst in instances]


def _alarms(rows: tuple[DetectionRow, ...]) -> dict[tuple[str, str, tuple[str, ...]], int | None]:
    return {(r.detector, r.relevance, r.segment): r.first_alarm_ms for r in rows}


def test_every_instance_reports_the_same_state_whatever_the_split() -> None:
    halves = _group([PARTITIONS[:2], PARTITIONS[2:]], seed=1)
    odd_even = _group([PARTITIONS[0::2], PARTITIONS[1::2]], seed=2)
    uneven = _group([PARTITIONS[:1], PARTITIONS[1:]], seed=3)
    one = _group([PARTITIONS], seed=4)
    reference = one[0]
    # bit for bit: the same buckets, merged in the same order, whoever read them
    for rows in (*halves, *odd_even, *uneven):
        assert rows == reference
    # and they found the regression, as one detector fed every list does
    fired = {(d, r, seg[1]) for (d, r, seg), at in _alarms(reference).items() if at is not None}
    assert ("vs_control", "judged", "treatment") in fired
    assert ("vs_control", "implicit", "treatment") in fired
    assert ("vs_baseline", "judged", "control") not in fired
    single = _single()
    assert _alarms(reference) == _alarms(single)
    for grouped, alone in zip(reference, single, strict=True):
        assert grouped.statistic == pytest.approx(alone.statistic, rel=1e-9, abs=1e-9)


def test_an_instance_whose_partition_never_gets_a_record_does_not_stall_the_group() -> None:
    """A fifth partition that nobody writes to, held by an instance of its own: read to its
    (empty) end, it follows the group's event time, so the frontier moves and both instances
    reach, bit for bit, the state of the four busy partitions read by a group alone."""
    settings = _settings()
    topic = Topic()
    empty = "search-impressions/4"
    group = (*PARTITIONS, empty)
    busy = Instance(settings, PARTITIONS, topic, partitions=group)
    idle = Instance(settings, (empty,), topic, partitions=group)
    idle.pipeline.set_idle(empty)
    read_split([busy, idle], _records(), seed=5)
    for inst in (idle, busy, idle, busy):  # its last following is written, then fed
        inst.persist()
        inst.poll()
    reference = _group([PARTITIONS], seed=4)[0]
    assert busy.detectors.rows() == reference
    assert idle.detectors.rows() == reference
    assert any(row.first_alarm_ms is not None for row in reference)
    # and the idle one never read a list of its own (only the judgments every instance reads)
    assert set(idle.pipeline.snapshot().intake.accepted) == {"judgment"}


@pytest.mark.parametrize("checkpointed", [False, True])
def test_a_restarted_instance_collects_nothing_twice_and_reaches_the_same_state(
    checkpointed: bool,
) -> None:
    """An instance killed half-way, its partitions re-read from the start by a new one: the
    buckets before each partition's progress are not collected again, and the new instance's
    detectors, fed from the topic, equal an uninterrupted run's. Restored from a checkpoint
    (as the daemon does), the pipeline does not even score early the judged lists of the
    buckets the collector holds already."""
    settings = _settings()
    records = _records()
    topic = Topic()
    first = Instance(settings, PARTITIONS, topic)
    half = len(records) // 2
    for source, raw in records[:half]:
        if source == JUDGMENTS:
            first.pipeline.offer_judgment(raw, None, source)
        else:
            first.pipeline.offer(raw, source)
    first.persist()
    written = len(topic.log)
    # killed: what it collected since its last write is lost with it
    second = Instance(settings, (), topic)
    second.poll()
    floors = {}
    for source in PARTITIONS:
        second.pipeline.add_source(source)
        second.collector.assign(source, second.table.detection.progress(source))
        floors[source] = second.collector.judged_floor(source)
        if checkpointed:
            second.pipeline.restore_source(source, None, 0)
    assert all(floors.values())
    handed: list[ScoredList] = []
    add_judged = second.collector.add_judged

    def counting(scored: ScoredList) -> None:
        handed.append(scored)
        add_judged(scored)

    second.collector.add_judged = counting  # type: ignore[method-assign]
    for source, raw in records:  # the re-read (from the start: a superset of the commit's)
        if source == JUDGMENTS:
            second.pipeline.offer_judgment(raw, None, source)
        else:
            second.pipeline.offer(raw, source)
    second.pipeline.finish()
    assert second.collector.ignored > 0
    below = [s for s in handed if s.timestamp < (floors[s.source] or 0)]
    if checkpointed:
        assert below == []
        assert handed  # the lists after the floors still are
    else:
        assert len(below) > 1000
    second.persist()
    second.poll()
    # nothing written twice: each (partition, bucket, relevance) once in the log
    keys = [key for key, _ in topic.log if key.endswith((b"judged", b"implicit"))]
    assert len(keys) == len(set(keys))
    assert len(topic.log) > written
    assert second.detectors.rows() == _group([PARTITIONS], seed=9)[0]


def _fed_table() -> tuple[Detectors, StateTable, GroupFeed]:
    """Detectors fed by a group feed over an empty state table of the 4 partitions."""
    det = detectors_for(_settings())
    assert det is not None
    table = StateTable("g", codecs=STATE_CODECS)
    feed = GroupFeed(det, table.detection, history_ms=3_600_000)
    feed.set_sources(PARTITIONS)
    return det, table, feed


def test_the_frontier_waits_for_every_partition() -> None:
    _, table, feed = _fed_table()
    seg = ("ltr", "control")
    for p in PARTITIONS[:3]:
        table.detection.put(p, JUDGED, 0, {(seg, 10): {"q": (1, 0.5, 0.25)}})
        table.detection.put_progress(p, Progress(B, None))
    assert feed.frontier(JUDGED) is None
    assert feed.step() == 0
    table.detection.put_progress(PARTITIONS[3], Progress(2 * B, None))  # silent, but past
    assert feed.frontier(JUDGED) == B
    assert feed.frontier(IMPLICIT) is None
    assert feed.step() == 1
    assert feed.step() == 0  # once


@pytest.mark.parametrize(
    ("progress", "passed"),
    [
        # per partition not read here: (judged, implicit, pairs) points; attribution 60 s
        ({}, None),  # every partition is read here: nothing to follow
        ({PARTITIONS[1]: None}, None),  # one has not reported
        ({PARTITIONS[1]: (None, None, None)}, None),  # reported, but no point yet
        ({PARTITIONS[1]: (5 * B, None, None)}, 5 * B),  # judged: at or before its watermark
        ({PARTITIONS[1]: (None, 2 * B, None)}, 2 * B + 60_000),  # implicit: at its horizon
        ({PARTITIONS[1]: (5 * B, 2 * B, 3 * B)}, 3 * B + 60_000),  # the furthest of the three
        ({PARTITIONS[1]: (5 * B, None, None), PARTITIONS[2]: (3 * B, None, None)}, 3 * B),
        ({PARTITIONS[1]: (5 * B, None, None), PARTITIONS[2]: None}, None),
    ],
)
def test_the_watermark_passed_elsewhere_is_the_slowest_other_partitions(
    progress: dict[str, tuple[int | None, int | None, int | None] | None], passed: int | None
) -> None:
    """What an instance whose partitions are all idle follows (``Pipeline.follow``): the least
    watermark that the partitions read elsewhere show, by their progress, to have passed."""
    _, table, feed = _fed_table()
    here = {PARTITIONS[0]} | (set(PARTITIONS[1:]) - set(progress))
    table.detection.put_progress(PARTITIONS[0], Progress(9 * B, 9 * B, 9 * B))  # ignored
    for source, points in progress.items():
        if points is not None:
            table.detection.put_progress(source, Progress(*points))
    assert feed.passed_elsewhere(here, 60_000) == passed


def test_detector_records_round_trip_to_the_bit() -> None:
    seg: tuple[str, ...] = ("ltr", "treatment")
    data: DetectorBucket = {
        (seg, 10): {"q1": (3, 0.1 + 0.2, 0.3**2), "q2": (1, 1 / 3, 1 / 9)},
        (seg, 5): {},
    }
    back = decode_detector_bucket(encode_detector_bucket(data))
    assert back == data
    assert decode_progress(encode_progress(Progress(10_000, None))) == Progress(10_000, None)


@pytest.mark.parametrize(
    "value",
    [
        b"\xff",
        b"[]",
        b'{"v": 2, "d": []}',
        b'{"v": 1}',
        b'{"v": 1, "d": [["ltr", 10, []]]}',
        b'{"v": 1, "d": [[["ltr"], 0, []]]}',
        b'{"v": 1, "d": [[["ltr"], 10, [["q", 0, 1.0, 1.0]]]]}',
        b'{"v": 1, "d": [[["ltr"], 10, [["q", 1, NaN, 1.0]]]]}',
        b'{"v": 1, "d": [[["ltr"], 10, [[1, 1, 1.0, 1.0]]]]}',
    ],
)
def test_a_bad_detector_record_is_a_value_not_an_exception(value: bytes) -> None:
    assert isinstance(decode_detector_bucket(value), BadRecord)


def test_the_state_table_routes_detector_records_and_counts_bad_ones() -> None:
    table = StateTable("g", codecs=STATE_CODECS)
    seg = ("ltr", "treatment")
    good = encode_detector_bucket({(seg, 10): {"q": (1, 0.5, 0.25)}})
    table.apply(detector_key("g", "t/0", 0, JUDGED), good)
    table.apply(detector_key("g", "t/0", 0, "progress"), encode_progress(Progress(B, B)))
    table.apply(detector_key("other", "t/0", 10_000, JUDGED), b"not ours")  # another group
    assert table.invalid == 0
    assert table.detection.progress("t/0") == Progress(B, B)
    assert [s for s, _ in table.detection.buckets(JUDGED, 0, B)] == [0]
    assert table.view() == {}  # not a window bucket
    table.apply(detector_key("g", "t/1", 0, IMPLICIT), b'{"v": 1, "d": 3}')
    table.apply(detector_key("g", "t/1", 0, "progress"), b'{"v": 1, "judged": "x"}')
    table.apply(b"g\x1ft/1\x1f0\x1fsomething-else", good)
    assert table.invalid == 2
    # a detector bucket is decoded when fed (a start reads many only to read their tombstones)
    assert [parts for _, parts in table.detection.buckets(IMPLICIT, 0, B)] == [[]]
    assert table.invalid == 3
    assert not table.is_bad("t/1")  # the windows' buckets of t/1 are not in doubt
    assert parse_state_key(detector_key("g", "t/0", 0, JUDGED)) is None
    assert parse_state_key(state_key("g", "t/0", 0)) == ("g", "t/0", 0)
    table.apply(detector_key("g", "t/0", 0, JUDGED), None)  # tombstone
    assert list(table.detection.buckets(JUDGED, 0, B)) == []


def test_detectors_dumped_and_loaded_go_on_as_if_never_stopped() -> None:
    settings = _settings()
    records = _records()
    topic = Topic()
    inst = Instance(settings, PARTITIONS, topic)
    for i, (source, raw) in enumerate(records):
        if source == JUDGMENTS:
            inst.pipeline.offer_judgment(raw, None, source)
        else:
            inst.pipeline.offer(raw, source)
        if i == len(records) // 2:
            inst.persist()
            halfway = json.loads(json.dumps(inst.detectors.dump()))  # through JSON, as written
            fed = dict(inst.feed._fed)
    inst.pipeline.finish()
    inst.persist()
    later = detectors_for(settings)
    assert later is not None
    later.load(halfway)
    rest = GroupFeed(later, inst.table.detection, history_ms=3_600_000)
    rest.set_sources(PARTITIONS)
    rest._fed = fed
    rest.step()
    assert later.rows() == inst.detectors.rows()
    with pytest.raises(ValueError):
        later.load({"tracks": [["not", "a", "track"]], "series": [], "controls": [], "closed": {}})
    assert later.rows() == inst.detectors.rows()  # unchanged by a failed load


def _expire(topic: Topic, before: int) -> None:
    """What the daemon's tombstones and compaction leave: buckets before ``before`` gone."""
    kept = []
    for key, value in topic.log:
        parsed = key.decode().split("\x1f")
        if parsed[3] in (JUDGED, IMPLICIT) and int(parsed[2]) < before:
            continue
        kept.append((key, value))
    topic.log = kept


def test_a_new_instance_restores_the_snapshot_and_reaches_the_group_state() -> None:
    """The buckets older than the state topic keeps are gone: a new instance that restores the
    last snapshot and feeds the buckets since reaches the state of one that never stopped; one
    that starts from the buckets kept does not."""
    settings = _settings()
    topic = Topic()
    running = Instance(settings, PARTITIONS, topic)
    rng = random.Random(3)
    for source, raw in _records():
        if source == JUDGMENTS:
            running.pipeline.offer_judgment(raw, None, source)
        else:
            running.pipeline.offer(raw, source)
        if rng.random() < 0.01:
            running.persist()
    running.pipeline.finish()
    running.persist()
    snapshots = [key for key, _ in topic.log if key.endswith(b"snapshot")]
    assert snapshots  # one per 5 minutes of event time, at least
    end = max(running.feed._fed.values())
    _expire(topic, end - 4 * 60_000)  # the snapshots are at most 5 minutes apart
    restored = Instance(settings, (), topic)
    restored.read = 0
    for key, value in topic.log:
        restored.table.apply(key, value)
    restored.read = len(topic.log)
    assert restored.feed.restore()
    restored.feed.step()
    assert restored.detectors.rows() == running.detectors.rows()
    # without the snapshot: only the buckets kept, another state
    fresh = Instance(settings, (), Topic())
    for key, value in topic.log:
        if not key.endswith(b"snapshot"):
            fresh.table.apply(key, value)
    assert not fresh.feed.restore()
    fresh.feed.step()
    assert fresh.detectors.rows() != running.detectors.rows()


def test_a_half_written_snapshot_is_not_restored() -> None:
    table = StateTable("g", codecs=STATE_CODECS)
    big = {"spec": "x", "fed": {"judged": 1}, "state": {"big": "y" * 600_000}}
    chunks = encode_snapshot(big, 1)
    assert len(chunks) == 2
    table.apply(detector_key("g", "~detectors/a", 0, "snapshot"), chunks[0])
    assert table.detection.snapshots() == []  # its second chunk never came
    table.apply(detector_key("g", "~detectors/a", 1, "snapshot"), chunks[1])
    (whole,) = table.detection.snapshots()
    assert whole["fed"] == {"judged": 1}
    other = encode_snapshot({"spec": "x", "fed": {"judged": 2}, "state": {}}, 2)
    table.apply(detector_key("g", "~detectors/a", 0, "snapshot"), other[0])  # one chunk now
    (whole,) = table.detection.snapshots()
    assert whole["fed"] == {"judged": 2}
    assert table.detection.snapshot_point() == 2
    # the next one, half-written in the other slot: not restorable, and the older one is not
    # either (it is not the newest begun: once the newer one is whole, the buckets before its
    # point go)
    newer = encode_snapshot(big, 3)
    table.apply(detector_key("g", "~detectors/b", 0, "snapshot"), newer[0])
    assert table.detection.snapshots() == []
    assert table.detection.snapshot_point() == 2
    table.apply(detector_key("g", "~detectors/b", 1, "snapshot"), newer[1])
    assert [w["fed"] for w in table.detection.snapshots()] == [{"judged": 1}]
    assert table.detection.snapshot_point() == 3
    table.apply(detector_key("g", "~detectors/a", 0, "snapshot"), b'{"v": 1}\nxx')
    assert table.invalid == 1


def test_a_bucket_is_fed_before_its_tombstone_is_applied() -> None:
    """One poll may bring a bucket, the progress past it, and its tombstone: the feed feeds it
    before the table drops it."""
    det, table, feed = _fed_table()
    feed.step()  # nothing yet
    seg = ("ltr", "control")
    value = encode_detector_bucket({(seg, 10): {"q": (2, 1.0, 0.5)}})
    batch = [(detector_key("g", p, 0, JUDGED), value) for p in PARTITIONS]
    progress = encode_progress(Progress(B, None))
    batch += [(detector_key("g", p, 0, "progress"), progress) for p in PARTITIONS]
    batch += [(detector_key("g", p, 0, JUDGED), None) for p in PARTITIONS]
    for key, v in batch:
        table.apply(key, v)
    (track,) = det.dump()["tracks"]
    assert track[3] == [["q", 8, 0.5, 0]]  # the query's reference: 4 parts x 2 lists, mean 0.5
