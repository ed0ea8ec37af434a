"""Idleness and group event time: a partition read up to its log end does not hold the
watermark back, and an instance whose every partition is idle follows the group's event time."""

from __future__ import annotations

import logging

from streameval.engine.interface import Engine
from streameval.group.collector import PartitionCollector
from streameval.group.feed import GroupFeed
from streameval.kafka.partition import source_of
from streameval.kafka.records import Fetched
from streameval.kafka.source import Stream
from streameval.runtime.health import Health

_LOG = logging.getLogger("streameval.daemon")  # the daemon's log lines keep their name


class Idleness:
    def __init__(
        self,
        pipeline: Engine,
        health: Health,
        *,
        attribution_window_ms: int,
        collector: PartitionCollector | None,
        feed: GroupFeed | None,
    ) -> None:
        self._pipeline = pipeline
        self._health = health
        self._attribution_window_ms = attribution_window_ms
        self._collector = collector
        self._feed = feed

    def wake(self, stream: Stream, batches: list[Fetched]) -> None:
        """Before a batch is offered: every partition with records in it, or whose log end the
        fetch moved, is no longer idle. Otherwise a partition still marked idle from before the
        burst would not hold the watermark back while another partition's newer records are
        offered first, and its own records would then be late."""
        self.update(stream, check_ready=False)
        for fetched in batches:
            self._pipeline.set_idle(source_of(fetched.topic, fetched.partition), False)

    def update(self, stream: Stream, *, check_ready: bool = True) -> None:
        """A partition read up to its log end does not hold the watermark back; then (once the
        poll's records were offered) see whether the rebuild has caught up."""
        positions = self._pipeline.read_positions()
        for tp in stream.assignment():
            source = tp.source
            pos = positions.get(source)
            if pos is None:
                pos = stream.position(tp)
            hw = stream.highwater(tp)
            self._pipeline.set_idle(source, hw is not None and pos is not None and pos >= hw)
        if check_ready:
            self._health.check_ready(stream, positions)

    def follow_group(self) -> None:
        """With every partition read here idle (read to its end), event time here moves with
        the rest of the group's, as far as the other partitions' progress records show it has
        passed: an instance whose partitions are silent, or were never written to, would
        otherwise hold the group frontier, and with it every instance's group-wide detectors,
        where its own last record left it (or, with no record at all, for good)."""
        feed, collector = self._feed, self._collector
        if feed is None or collector is None:
            return
        point = feed.passed_elsewhere(collector.sources, self._attribution_window_ms)
        if point is not None and self._pipeline.follow(point):
            _LOG.debug("every partition here is idle: event time follows the group to %d", point)
