"""The native engine (issue 32): the per-record path compiled, the per-list back half shared.

:class:`NativePipeline` is an :class:`~streameval.engine.interface.Engine` whose record path runs
in ``streameval._native.EngineCore``: decode in the source's format, the future-skew check, the
watermark and idleness, the join, evictions, finalization and the early judged pass. What
follows per list is the Python reference code of :mod:`.coordinator`, the same objects and calls
as :class:`~.pipeline.Pipeline` (scoring, trust signals, windows, totals, consumers, recovery),
so the two engines agree there by construction; ``tests/unit/test_native_engine.py`` checks the
whole. A judgment is recognised natively and applied by the Python rules (its record decoded
once more by the source's Python decoder: the judge tracker listens to the Python table).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from streameval.config import EvaluationSettings
from streameval.engine.intake import OFFERED, Offered
from streameval.engine.native_batch import NativeBatches
from streameval.epoch import SECONDS_BELOW_MS
from streameval.events.decode import Invalid
from streameval.events.models import Judgment
from streameval.join import OpenList
from streameval.values import ACCEPTED, INVALID, PENDING, Outcome

#: a source's format as the native decoders take it: ("native" | "auto" | "ubi" | "mapped", the
#: mapping's settings as JSON for "mapped", else None)
NativeFormat = tuple[str, str | None]
FormatFor = Callable[[str], NativeFormat]

_OUTCOMES = {o.value: o for o in Outcome}


class NativeJoin:
    """The join of an ``EngineCore`` as the coordinator reads a :class:`~streameval.join.Joiner`
    (:class:`~.stages.JoinStage`). A list reaches Python as an
    :class:`~streameval.join.OpenList` when the early judged pass takes it, and again when it is
    finalized; in between only its early judged score (``OpenList.early``, reused at
    finalization exactly as in Python) is kept here, not the object: the list itself stays in
    the core (a Python ``OpenList`` with its strings per open list would cost several times the
    core's bytes)."""

    __slots__ = ("_core", "_early", "_fresh")

    def __init__(self, core: Any) -> None:
        self._core = core
        #: the early judged score of each list handed to the early pass and not finalized yet,
        #: by the list's sequence number in the core
        self._early: dict[int, Any] = {}
        #: the lists the last early pass handed out, whose ``early`` the pass sets after
        self._fresh: list[tuple[int, OpenList]] = []

    def _settle(self) -> None:
        """Keep the early judged scores the last pass set, and let its lists go."""
        for seq, lst in self._fresh:
            if lst.early is not None:
                self._early[seq] = lst.early
        self._fresh = []

    def _list(self, row: tuple[Any, ...], passed: bool = False) -> OpenList:
        (_, rid, ts, qid, docs, labels, segment, grades, keys, clicked, rank, teams, clicked_docs,
         counted_before, source, seq) = row  # fmt: skip
        lst = OpenList.__new__(OpenList)
        if passed:
            lst.early = None
            self._fresh.append((seq, lst))
        else:
            lst.early = self._early.pop(seq, None)
        lst.request_id, lst.timestamp, lst.query_id, lst.doc_ids = rid, ts, qid, docs
        lst.labels, lst.segment, lst.teams = labels, segment, teams
        lst.grades = None if grades is None else dict(grades)
        lst.interaction_keys = None if keys is None else set(keys)
        lst.clicked, lst.first_click_rank = clicked, rank
        lst.clicked_docs = None if clicked_docs is None else set(clicked_docs)
        lst.counted_before, lst.source = counted_before, source
        return lst

    def finalize(self, watermark: int) -> list[OpenList]:
        self._settle()
        return [self._list(row) for row in self._core.finalize(watermark)]

    def finalize_all(self) -> list[OpenList]:
        self._settle()
        return [self._list(row) for row in self._core.finalize_all()]

    def evict_over_cap(self) -> list[int]:
        self._settle()
        evicted: list[int] = self._core.evict_over_cap()
        for seq in evicted:
            self._early.pop(seq, None)
        return evicted

    def drop_evicted(self, seqs: list[int]) -> None:
        """Lists the core evicted over the cap by itself (``EngineCore.offer_batch``, by
        sequence number): what :meth:`evict_over_cap` keeps of them goes, as there."""
        self._settle()
        for seq in seqs:
            self._early.pop(seq, None)

    def expire_pending(self, watermark: int | None) -> int:
        expired: int = self._core.expire_pending(watermark)
        return expired

    def next_due(self) -> float:
        due: int | None = self._core.next_due()
        return math.inf if due is None else due

    def passed(self, cut: float) -> list[OpenList]:
        self._settle()
        rows = self._core.passed(None if cut == math.inf else int(cut))
        return [self._list(row, passed=True) for row in rows]

    def next_passed(self) -> float:
        self._settle()
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


class NativePipeline(NativeBatches):
    """The native engine: :class:`~.pipeline.Pipeline`'s options, and ``format_for``: each
    source's format (``NativeFormat``; default ``("auto", None)``, as the Python default)."""

    def __init__(
        self, settings: EvaluationSettings, *, format_for: FormatFor | None = None, **options: Any
    ) -> None:
        self._format_for = format_for
        super().__init__(settings, **options)

    def _start_join(self) -> None:
        core = getattr(self, "_core", None)
        if core is not None:  # a reset: the segments seen outlive it, as the Python engine's
            core.restart()
            self._joiner = self._native_join = NativeJoin(core)
            return
        from streameval import _native, native  # (built: the caller checked, engine.select)

        core = _native.EngineCore(
            **native.join_options(self._settings),
            pass_bucket=self._settings.bucket if self._early else None,
        )
        self._core = self._watermark = core
        self._joiner = self._native_join = NativeJoin(core)
        self._formats_told: set[str] = set()

    def _tell_format(self, source: str) -> None:
        fmt, mapping = ("auto", None) if self._format_for is None else self._format_for(source)
        self._core.set_format(source, fmt, mapping)
        self._formats_told.add(source)

    def offer(
        self,
        raw: bytes,
        source: str = "input",
        offset: int = -1,
        record_ms: int = -1,
        judgment_key: bytes | None = None,
    ) -> Offered:
        """As :meth:`.pipeline.Pipeline.offer`, the record's path native."""
        counted_before = self._counted.get(source) if self._counted else None
        count = counted_before is None or offset >= counted_before[1]
        if source not in self._formats_told:
            self._tell_format(source)
        answer, kind, ts, watermark, extra = self._core.offer(
            raw, source, record_ms, None if counted_before is None else counted_before[0], count
        )
        if offset >= 0:
            self._next_offset[source] = offset + 1
        if answer == "invalid":  # (ts: the field of a mapped record)
            return self._invalid(raw, Invalid(kind, extra, ts), source, offset, count)
        if kind == "judgment":
            return self._judgment(raw, source, offset, count, judgment_key)
        outcome = _OUTCOMES[answer]
        if ts < SECONDS_BELOW_MS and self._on_seconds is not None and ts >= 0:
            self._on_seconds(ts, source)
        recovery = self._recovery
        if offset >= 0 and not (
            recovery.noted_start <= ts < recovery.noted_end and source == recovery.noted_source
        ):
            recovery.note_offset(source, ts, offset)
        intake = self._intake
        if kind == "impression":
            if extra is not None:
                for click_answer, click_counted in extra:
                    if click_counted:  # read (and counted pending) earlier: now its final outcome
                        intake.pending -= 1
                        intake.count(_OUTCOMES[click_answer], "click", True, new_record=False)
            intake.count(outcome, "impression", count)
            if outcome is ACCEPTED:
                self._opened(ts)
        else:
            intake.count(outcome, "click", count)
            if outcome is PENDING and ts + 1 < self._due:
                self._due = ts + 1
        if watermark is not None:
            if watermark >= self._early_due:
                self._early_due = self._judged.pass_judged(self._joiner, watermark)
            if watermark >= self._due:
                self._advance(watermark)
        return OFFERED[outcome, kind]

    def _judgment(
        self, raw: bytes, source: str, offset: int, count: bool, judgment_key: bytes | None
    ) -> Offered:
        """A record the core found a judgment: applied by the Python rules."""
        event = self._decoders[source](raw)  # the rules take the Python model
        if type(event) is not Judgment:  # (the decoders agree: tests/unit/test_native_*)
            # were they ever to differ, the Python decoder's answer is the reference
            invalid = event if type(event) is Invalid else Invalid("schema", "not a judgment")
            return self._invalid(raw, invalid, source, offset, count)
        outcome = self._rules.apply(event, raw, judgment_key)
        self._intake.count(outcome, "judgment", count)
        return OFFERED[outcome, "judgment"]

    def _invalid(
        self, raw: bytes, invalid: Invalid, source: str, offset: int, count: bool
    ) -> Offered:
        if count:
            self._intake.count_invalid(invalid.reason)
            if self._dead_letter is not None:
                self._dead_letter(raw, invalid, source, offset)
        return Offered(INVALID, None, invalid)
