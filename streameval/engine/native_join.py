"""The join of the native engine as the coordinator reads it (:class:`NativeJoin`, over an
``EngineCore``), the lists it hands out (:class:`NativeList`) and its early judged pass
(:class:`NativeJudgedEarly`): :class:`~.native_pipeline.NativePipeline`'s join stage."""

from __future__ import annotations

import math
from typing import Any, cast

from streameval.engine.early import JudgedEarly
from streameval.engine.recovery import Recovery
from streameval.engine.stages import JoinStage
from streameval.join import OpenList
from streameval.values import ScoredList


class NativeList(OpenList):
    """A list finalized by the native join, scored there: ``scored`` its
    :class:`~streameval.values.ScoredList` (implicit, judged; ``interleaved`` is the
    coordinator's to set), ``handed`` whether the early judged pass took it."""

    __slots__ = ("handed", "scored")

    handed: bool
    scored: ScoredList


class NativeJoin:
    """The join of an ``EngineCore`` as the coordinator reads a :class:`~streameval.join.Joiner`
    (:class:`~.stages.JoinStage`). The core scores its lists (docs/native.md "Lists scored in
    the core"): the early judged pass gets each list's judged ``ScoredList`` (the core keeps
    that score until the list is finalized, reused then when its query's judgments did not
    change, as ``ListScorer.score`` reuses ``OpenList.early``); a finalized list reaches Python
    as a :class:`NativeList`, its scores with it (the back half reads the list: the judge
    tracker, propensity, interleaving)."""

    __slots__ = ("_core", "_recovery")

    def __init__(self, core: Any, recovery: Recovery | None = None) -> None:
        self._core = core
        #: the fold is the core's (docs/native.md "The fold in the core"): the recovery
        #: bookkeeping whose ``persisted_before`` says which lists the windows take
        self._recovery = recovery

    @staticmethod
    def _list(row: tuple[Any, ...]) -> NativeList:
        (_, rid, ts, qid, docs, labels, segment, grades, keys, clicked, rank, teams, clicked_docs,
         counted_before, source, _, handed, scored) = row  # fmt: skip
        lst = NativeList.__new__(NativeList)
        lst.early = None
        lst.request_id, lst.timestamp, lst.query_id, lst.doc_ids = rid, ts, qid, docs
        lst.labels, lst.segment, lst.teams = labels, segment, teams
        lst.grades = None if grades is None else dict(grades)
        lst.interaction_keys = None if keys is None else set(keys)
        lst.clicked, lst.first_click_rank = clicked, rank
        lst.clicked_docs = None if clicked_docs is None else set(clicked_docs)
        lst.counted_before, lst.source = counted_before, source
        lst.handed, lst.scored = handed, scored
        return lst

    def finalize(self, watermark: int) -> list[Any]:
        """The lists finalized as of ``watermark``: each a :class:`NativeList`, or, folded in
        the core, (handed, ``ScoredList``) (see :meth:`NativePipeline._fold`)."""
        if self._recovery is not None:
            return self._folded(watermark)
        _list = self._list
        return [_list(row) for row in self._core.finalize(watermark)]

    def finalize_all(self) -> list[Any]:
        if self._recovery is not None:
            return self._folded(None)
        _list = self._list
        return [_list(row) for row in self._core.finalize_all()]

    def _folded(self, watermark: int | None) -> list[Any]:
        persisted = cast(Recovery, self._recovery).persisted_before
        folded, rows = self._core.finalize_folded(watermark, persisted or None)
        if folded:
            return cast(list[Any], rows)
        _list = self._list
        return [_list(row) for row in rows]

    def evict_over_cap(self) -> list[int]:
        """The sequence numbers of the lists evicted (the core drops their early scores)."""
        evicted: list[int] = self._core.evict_over_cap()
        return evicted

    def expire_pending(self, watermark: int | None) -> int:
        expired: int = self._core.expire_pending(watermark)
        return expired

    def next_due(self) -> float:
        due: int | None = self._core.next_due()
        return math.inf if due is None else due

    def passed(self, cut: float) -> list[ScoredList]:
        """The judged ``ScoredList`` of each list the early judged pass takes."""
        scored: list[ScoredList] = self._core.passed(None if cut == math.inf else int(cut))
        return scored

    def next_passed(self) -> float:
        nxt: int | None = self._core.next_passed()
        return math.inf if nxt is None else nxt

    @property
    def open_lists(self) -> int:
        n: int = self._core.open_lists
        return n

    @property
    def pending_clicks_counted(self) -> int:
        n: int = self._core.pending_clicks_counted
        return n

    @property
    def closed_ids_dropped(self) -> int:
        n: int = self._core.closed_ids_dropped
        return n


class NativeJudgedEarly(JudgedEarly):
    """The early judged pass of the native engine: its join hands the lists scored."""

    def _scored_passed(self, joiner: JoinStage, cut: float, floored: bool) -> list[ScoredList]:
        scored = cast(NativeJoin, joiner).passed(cut)
        if floored:  # a re-read: what every early consumer holds already is not handed out
            floors = self._floor
            return [
                s for s in scored if (floor := floors.get(s.source)) is None or s.timestamp >= floor
            ]
        return scored
