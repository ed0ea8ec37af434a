"""What a test's stand-in for one daemon of a group does with the state topic's log (one
ordered list of encoded records): read what it has not read yet and feed its detectors, and, when
it reads the group's first partition, write the detectors' snapshot."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence

from streameval.engine import Pipeline
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.group.table import DetectorTable
from streameval.kafka.state_table import StateTable, detector_key
from streameval.runtime.state_codecs import STATE_CODECS


class GroupMember:
    """One instance: ``pipeline`` over ``sources`` with ``collector`` as its consumer, reading
    ``log`` into its own state table, whose detector records ``make_feed`` feeds on."""

    def __init__(
        self,
        sources: Iterable[str],
        *,
        log: list[tuple[bytes, bytes | None]],
        partitions: tuple[str, ...],
        pipeline: Pipeline,
        collector: PartitionCollector,
        make_feed: Callable[[DetectorTable], GroupFeed],
        attribution_ms: int | None = None,
    ) -> None:
        self.sources = tuple(sources)
        self.pipeline = pipeline
        self.collector = collector
        for source in self.sources:
            pipeline.add_source(source)
            collector.assign(source, None)
        self.log = log
        self.partitions = partitions  # every partition of the group
        self.table = StateTable("g", codecs=STATE_CODECS)
        self.feed = make_feed(self.table.detection)
        self.feed.set_sources(partitions)
        self.read = 0  # records of the log applied
        #: with it, :meth:`poll` follows the group's event time as the daemon does
        #: (``Pipeline.follow``; a no-op while a source here is not idle)
        self.attribution_ms = attribution_ms

    def persist(self) -> None:
        """Write what the collector has ready (and, when due, the snapshot) to the log."""
        raise NotImplementedError

    def poll(self) -> None:
        for key, value in self.log[self.read :]:
            self.table.apply(key, value)
        self.read = len(self.log)
        if self.attribution_ms is not None:
            point = self.feed.passed_elsewhere(self.collector.sources, self.attribution_ms)
            if point is not None:
                self.pipeline.follow(point)
        self.feed.step()

    def write_snapshot(self) -> None:
        if min(self.partitions) in self.collector.sources:  # the snapshot writer
            snapshot = self.feed.snapshot()
            if snapshot is not None:
                slot, chunks = snapshot
                for i, value in enumerate(chunks):
                    self.log.append((detector_key("g", slot, i, "snapshot"), value))


def read_whole_log(
    pipeline: Pipeline, records: Iterable[tuple[str, bytes]], partitions: Iterable[str]
) -> Pipeline:
    """``pipeline`` (one instance alone) fed every record, a judgment topic's as judgments
    (sources named ``…judgments/…``), then finished."""
    for source in partitions:
        pipeline.add_source(source)
    for source, raw in records:
        if "judgments/" in source:
            pipeline.offer_judgment(raw, None, source)
        else:
            pipeline.offer(raw, source)
    pipeline.finish()
    return pipeline


def read_split(
    instances: Sequence[GroupMember], records: Iterable[tuple[str, bytes]], seed: int
) -> None:
    """The group reads ``records``: a judgment topic's by every instance, the others by the
    instance holding their partition; each instance persists and polls at random moments, and
    all of them once more at the end."""
    owner = {s: i for i in instances for s in i.sources}
    rng = random.Random(seed)
    for source, raw in records:
        if "judgments/" in source:
            for inst in instances:
                inst.pipeline.offer_judgment(raw, None, source)
            continue
        inst = owner[source]
        inst.pipeline.offer(raw, source)
        if rng.random() < 0.01:
            inst.persist()
        if rng.random() < 0.01:
            inst.poll()
    for inst in instances:
        inst.pipeline.finish()
        inst.persist()
    for inst in instances:
        inst.poll()
