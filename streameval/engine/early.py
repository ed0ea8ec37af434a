"""Judged scores handed out early (DESIGN §9): no attribution wait for what clicks cannot change.

A judged score does not depend on clicks, so a list's judged source is scored once the watermark
has completed the bucket of its impression, a whole bucket at a time, and handed to every
:class:`~streameval.engine.consumers.JudgedEarlyConsumer` that takes judged scores. After a
restore, the lists of a source before the bucket start where every such consumer already holds
its judged scores (``judged_floor``) are not scored early only to be ignored.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from streameval.engine.consumers import HoldsJudgedFloor, JudgedEarlyConsumer
from streameval.engine.stages import JoinStage
from streameval.join import JudgmentStore, OpenList
from streameval.score.lists import ListScorer
from streameval.values import ScoredList


class JudgedEarly:
    def __init__(
        self,
        consumers: Sequence[JudgedEarlyConsumer],
        scorer: ListScorer,
        judgments: JudgmentStore,
        bucket_ms: int,
    ) -> None:
        self._early = tuple(consumers)
        self._score = scorer.score_judged
        self._judgments = judgments
        self._bucket_ms = bucket_ms
        self.start_stream()

    def start_stream(self) -> None:
        # per restored source: impressions before it get no early judged score (every early
        # consumer has those buckets already: ``judged_floor``)
        self._floor: dict[str, int] = {}
        self._floor_max = -math.inf

    def note_floor(self, source: str) -> None:
        """The bucket start before which every early consumer already holds the judged scores
        of ``source`` (:class:`~streameval.engine.consumers.HoldsJudgedFloor`): the re-read's
        impressions before it are not scored early only to be ignored. After a restart with the
        state topic that is nearly every list re-read: they are open lists, and the judged
        detector buckets were written up to the watermark."""
        floors = [
            c.judged_floor(source) if isinstance(c, HoldsJudgedFloor) else None for c in self._early
        ]
        if floors and all(f is not None for f in floors):
            floor = min(f for f in floors if f is not None)
            self._floor[source] = floor
            self._floor_max = max(self._floor_max, floor)

    @property
    def has_floors(self) -> bool:
        """Some restored source has a floor (:meth:`note_floor`)."""
        return bool(self._floor)

    def floors(self) -> list[tuple[str, int]]:
        """Each restored source's floor (:meth:`note_floor`)."""
        return list(self._floor.items())

    def below_floor(self, lst: OpenList) -> bool:
        floor = self._floor.get(lst.source) if self._floor else None
        return floor is not None and lst.timestamp < floor

    def hand(self, lst: OpenList) -> None:
        """The judged score of ``lst`` to every early consumer."""
        self.hand_scored(self._score(lst, self._judgments))

    def hand_scored(self, judged: ScoredList) -> None:
        """A list's judged score (``ListScorer.score_judged``) to every early consumer."""
        for early in self._early:
            early.add_judged(judged)

    def _scored_passed(self, joiner: JoinStage, cut: float, floored: bool) -> list[ScoredList]:
        """The judged scores of the lists of every bucket before ``cut`` not handed out yet
        (``floored``: but those below their source's floor, not scored). The native engine's
        join scores them itself (:class:`~.native_pipeline.NativeJudgedEarly`)."""
        score, judgments = self._score, self._judgments
        if floored:  # a re-read: skip what they hold already
            floors = self._floor
            return [
                score(lst, judgments)
                for lst in joiner.passed(cut)
                if (floor := floors.get(lst.source)) is None or lst.timestamp >= floor
            ]
        return [score(lst, judgments) for lst in joiner.passed(cut)]

    def pass_judged(self, joiner: JoinStage, watermark: int) -> float:
        """Hand out the judged score of every list in a bucket the watermark completed (whole
        buckets at a time: one call per bucket, not per impression). Returns the watermark at
        which there is a bucket to hand out next."""
        bucket = self._bucket_ms
        cut = watermark - watermark % bucket
        early = self._early
        scored = self._scored_passed(joiner, cut, cut <= self._floor_max + bucket)
        if len(early) == 1:  # the usual case (the detectors): no inner loop per list
            add_judged = early[0].add_judged
            for judged in scored:
                add_judged(judged)
        else:
            for judged in scored:
                for consumer in early:
                    consumer.add_judged(judged)
        nxt = joiner.next_passed()  # the earliest impression not handed out, + 1
        for consumer in early:
            consumer.advance_judged(cut)
        return nxt if nxt == math.inf else (nxt - 1) - (nxt - 1) % bucket + bucket

    def finish(self, joiner: JoinStage, end: int | None) -> None:
        """End of input: every list not handed out yet, then every bucket before ``end``."""
        for judged in self._scored_passed(joiner, math.inf, False):
            self.hand_scored(judged)
        if end is not None:
            for early in self._early:
                early.advance_judged(end)
