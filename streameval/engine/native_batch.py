"""The native engine's record path in batches (docs/native.md "The record path in batches"):
:meth:`NativeBatches.offer_batch`, the records of one source run by ``EngineCore.offer_batch``
(native/src/join/batch.rs) in as few calls as the stream allows, the GIL released while they
run; what Python does for them in between comes back as effects, applied here in record order.
The base of :class:`~.native_pipeline.NativePipeline` (whose per-record path it mirrors).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from streameval.engine.coordinator import Coordinator
from streameval.engine.interface import Row
from streameval.epoch import SECONDS_BELOW_MS
from streameval.events.decode import Invalid
from streameval.values import EVICTED, RELEVANCE_SOURCES

if TYPE_CHECKING:
    from streameval.engine.intake import Offered
    from streameval.engine.native_join import NativeJoin

#: the effects of ``EngineCore.offer_batch`` (native/src/python_batch.rs), by their first field
_INVALID, _JUDGMENT, _SECONDS, _NOTE, _EVICTED, _TOUCH = range(6)
#: an intake counter's key by the kind of a touch effect
_KINDS = ("impression", "click")
#: Python's -infinity and infinity as the core's due points take them
_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


class NativeBatches(Coordinator):
    """``offer_batch`` of the native engine, over what :class:`.native_pipeline.NativePipeline`
    provides (its core, its join, its answers to a judgment the core applied and to an invalid
    record)."""

    if TYPE_CHECKING:
        _core: Any
        _native_join: NativeJoin
        _formats_told: set[str]

        def _tell_format(self, source: str) -> None: ...

        def _judgment_applied(self, answer: str, change: Any, count: bool) -> Offered: ...

        def _judgment(
            self, raw: bytes, source: str, offset: int, count: bool, judgment_key: bytes | None
        ) -> Offered: ...

        def _invalid(
            self, raw: bytes, invalid: Invalid, source: str, offset: int, count: bool
        ) -> Offered: ...

        def _sums_inline(self) -> bool: ...

    def offer_batch(self, rows: Iterable[Row], source: str) -> None:
        """As :meth:`.coordinator.Coordinator.offer_batch` (``offer`` per row), the records
        run by ``EngineCore.offer_batch`` with the GIL released, in as few calls as the stream
        allows: the core stops after a record whose watermark reaches ``_early_due`` or
        ``_due`` (the early judged pass and :meth:`_advance` run here, then the core goes on);
        what Python does for the records in between (what a judgment applied in the core
        changed, dead letters, ``on_seconds``, recovery notes, evictions) comes back as effects
        in record order, applied before that;
        their intake counts once at the end (docs/native.md "The record path in batches")."""
        rows = rows if type(rows) is list else list(rows)
        if not rows:
            return
        if source not in self._formats_told:
            self._tell_format(source)
        from streameval._native import RecordBatch  # (built: the engine runs)

        counted_before = self._counted.get(source) if self._counted else None
        recovery = self._recovery
        batch = RecordBatch(
            rows,
            source,
            horizon_before=None if counted_before is None else counted_before[0],
            counted_from=None if counted_before is None else counted_before[1],
            seconds_below=None if self._on_seconds is None else SECONDS_BELOW_MS,
            early=bool(self._early),
            noted=(recovery.noted_start, recovery.noted_end)
            if recovery.noted_source == source
            else None,
        )
        try:
            self._run_batch(batch, rows, source)
        finally:  # (also when a callback raised: the records the core ran are counted)
            self._end_batch(batch, source)

    #: the times a batch stopped for Python, since start (docs/native.md "A batch that stops
    #: per bucket")
    batch_stops = 0

    def _batch_inline(self) -> bool:
        """Whether the batch loop finalizes and folds at due points itself (the one place that
        decides): the sums inline (:meth:`.native_fold.CoreFolds._sums_inline`: the fold in the
        core, every consumer fed by its sums, no ``on_scored``, no judged floor) and no source
        beside the relevance sources (judge families: the Python back half)."""
        return self._sums_inline() and not self._signals.extra_sources

    def _inline_args(self) -> dict[str, Any]:
        """``EngineCore.offer_batch``'s ``inline`` and ``persisted``: where the loop must stop
        for Python (the consumers' next bucket, the judge tracker's eviction in Python, a due
        point after a judgment record the core did not apply: none, as it applies those read
        outside keyed topics, docs/native.md "Judgments applied in the core")."""
        consumers_due = self._consumers_due
        signals_due = self._signals.judges.evict_due
        return {
            "inline": (
                _I64_MIN if consumers_due == -math.inf else int(consumers_due),
                _I64_MAX if signals_due == math.inf else int(signals_due),
            ),
            "persisted": self._persisted_before or None,
        }

    def _run_batch(self, batch: Any, rows: list[Row], source: str) -> None:
        """The core runs the batch; at each stop, its effects, then the early pass and
        :meth:`_advance` as ``offer`` runs them. With :meth:`_batch_inline`, the core finalizes
        and folds at due points itself and stops only where Python acts: the horizon entering
        a bucket (the consumers), the early judged pass (once per bucket), lists that need the
        Python back half, and a due point after a judgment record the core did not apply
        (Python applies it before lists are scored)."""
        run, inf = self._core.offer_batch, math.inf
        inline = self._batch_inline()
        while True:
            at, early_at = self._due, self._early_due  # (ints, or infinity: never)
            options = self._inline_args() if inline else {}
            watermark, due, early_due, effects = run(
                batch,
                None if at == inf else int(at),
                None if early_at == inf else int(early_at),
                **options,
            )
            self._due = inf if due is None else due
            self._early_due = inf if early_due is None else early_due
            if effects is not None:
                self._effects(effects, rows, source)
            if watermark is None:
                return
            self.batch_stops += 1
            if inline and not self._batch_inline():  # (a judgment made two families)
                inline = False
            if watermark >= self._early_due:
                self._early_due = self._judged.pass_judged(self._joiner, watermark)
            if watermark >= self._due:
                self._advance(watermark)

    def _end_batch(self, batch: Any, source: str) -> None:
        """The read position and the intake counts of the records the core ran."""
        next_offset = batch.next_offset
        if next_offset is not None:
            self._next_offset[source] = next_offset
        read, acc_i, acc_c, dup_i, dup_c, late_i, late_c, unmatched, pending = batch.intake()
        intake = self._intake
        intake.read += read
        for counter, impressions, clicks in (
            (intake.accepted, acc_i, acc_c),
            (intake.duplicate, dup_i, dup_c),
            (intake.late, late_i, late_c),
        ):
            if impressions:
                counter["impression"] += impressions
            if clicks:
                counter["click"] += clicks
        intake.unmatched += unmatched
        intake.pending += pending

    def _effects(self, effects: list[tuple[Any, ...]], rows: list[Row], source: str) -> None:
        """What ``offer`` does in Python for the records a batch ran, in their order
        (``python_batch.rs``: ``effect``)."""
        intake = self._intake
        for effect in effects:
            what = effect[0]
            if what == _NOTE:
                self._recovery.note_offset(source, effect[1], effect[2])
            elif what == _EVICTED:
                # (the core dropped their kept early scores itself: EngineCore.offer_batch)
                for _ in effect[1]:
                    for relevance in (*RELEVANCE_SOURCES, *self._signals.extra_sources):
                        self._totals.count_outcome(relevance, EVICTED)
            elif what == _TOUCH:  # an intake key first counted here: made in the same order
                counter = (intake.accepted, intake.duplicate, intake.late)[effect[1]]
                counter[_KINDS[effect[2]]] += 0
            elif what == _JUDGMENT:  # (1, index, counted, outcome, change)
                if effect[3] is None:  # not applied in the core: the Python rules apply it
                    value, offset, _ = rows[effect[1]]
                    self._judgment(value or b"", source, offset, effect[2], None)
                else:
                    self._judgment_applied(effect[3], effect[4], effect[2])
            elif what == _INVALID:
                value, offset, _ = rows[effect[1]]
                invalid = Invalid(effect[2], effect[3], effect[4])
                self._invalid(value or b"", invalid, source, offset, True)
            elif self._on_seconds is not None:  # _SECONDS
                self._on_seconds(effect[1], source)
