"""The native engine (issue 32): the per-record path compiled, the per-list back half shared.

:class:`NativePipeline` is an :class:`~streameval.engine.interface.Engine` whose record path runs
in ``streameval._native.EngineCore``: decode in the source's format, the future-skew check, the
watermark and idleness, the join, evictions, finalization and the early judged pass, and the
scoring of each list (both relevance sources, against a copy of the judgment table:
docs/native.md "Lists scored in the core"). What follows per scored list is the Python reference
code of :mod:`.coordinator`, the same objects and calls as :class:`~.pipeline.Pipeline` (trust
signals, interleaving, windows, totals, consumers, recovery), so the two engines agree there by
construction; ``tests/unit/test_native_engine.py`` checks the whole. A judgment read outside a
keyed topic is applied in the core (its table and judge tracker), and what it changed set in the
Python table, which snapshots, checkpoints and the Python judge tracker read; a record of a
keyed judgment topic is decoded once more by the source's Python decoder and applied by the
Python rules, each change copied into the core (docs/native.md "Judgments applied in the core").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from streameval.config import EvaluationSettings
from streameval.engine.early import JudgedEarly
from streameval.engine.intake import OFFERED, Offered
from streameval.engine.native_batch import NativeBatches
from streameval.engine.native_fold import CoreFolds
from streameval.engine.native_join import NativeJoin, NativeJudgedEarly, NativeList
from streameval.engine.recovery import Recovery
from streameval.epoch import SECONDS_BELOW_MS
from streameval.events.decode import Invalid
from streameval.events.models import Judgment
from streameval.join import OpenList
from streameval.score.lists import judged_only
from streameval.values import ACCEPTED, INVALID, PENDING, Outcome, ScoredList, SourceScore

#: a source's format as the native decoders take it: ("native" | "auto" | "ubi" | "mapped", the
#: mapping's settings as JSON for "mapped", else None)
NativeFormat = tuple[str, str | None]
FormatFor = Callable[[str], NativeFormat]

_OUTCOMES = {o.value: o for o in Outcome}
#: what a judgment applied in the core changed: ``JudgmentStore.mirror``'s arguments
Change = tuple[str, str, dict[str, tuple[int, float]], int]


class CoreIdentities:
    """The identities of the judgments the core applies (``EngineCore.judgment_ids``), where
    the Python rules' :class:`~streameval.join.JudgmentIds` is read (the snapshot's
    ``forgotten_ids``)."""

    __slots__ = ("_core",)

    def __init__(self, core: Any) -> None:
        self._core = core

    @property
    def forgotten(self) -> int:
        return int(self._core.judgment_ids[1])

    def add(self, identity: str | bytes) -> bool:
        raise RuntimeError("judgments read outside keyed topics are applied in the core")

    def __len__(self) -> int:
        return int(self._core.judgment_ids[0])


class NativePipeline(NativeBatches, CoreFolds):
    """The native engine: :class:`~.pipeline.Pipeline`'s options, and ``format_for``: each
    source's format (``NativeFormat``; default ``("auto", None)``, as the Python default)."""

    def __init__(
        self, settings: EvaluationSettings, *, format_for: FormatFor | None = None, **options: Any
    ) -> None:
        self._format_for = format_for
        super().__init__(settings, **options)

    def _judged_early(self) -> JudgedEarly:
        return NativeJudgedEarly(self._early, self._scorer, self._judgments, self._settings.bucket)

    def _fold(self, lst: OpenList) -> None:
        """As :meth:`.coordinator.Coordinator._fold`, the list scored in the core; folded
        there too when ``NativeJoin.finalize`` gives (handed, scored): then the consumers only
        (docs/native.md "The fold in the core")."""
        row: Any = lst
        if type(row) is tuple:
            self._folded_in_core(*row)
            return
        native = cast(NativeList, lst)  # (NativeJoin.finalize's)
        scored = native.scored
        if self._early and not native.handed and not self._judged.below_floor(lst):
            # finalized before the watermark completed its bucket: its judged score now
            self._judged.hand_scored(judged_only(scored))
        if lst.teams is not None:
            scored = scored._replace(interleaved=self._scorer.interleaved(lst))
        self._fold_scored(lst, scored)

    def _start_join(self) -> None:
        core = getattr(self, "_core", None)
        if core is not None:  # a reset: the segments seen outlive it, as the Python engine's
            core.restart()  # (the core's windows, state-topic buckets, tracker buckets too)
            self._joiner = self._native_join = NativeJoin(core, self._fold_recovery)
            return
        from streameval import _native, native  # (built: the caller checked, engine.select)

        core = _native.EngineCore(
            **native.join_options(self._settings),
            pass_bucket=self._settings.bucket if self._early else None,
        )
        self._score_in(core)
        self._core = self._watermark = core
        self._core_folds = self._fold_in(core)
        self._fold_recovery: Recovery | None = self._recovery if self._core_folds else None
        self._joiner = self._native_join = NativeJoin(core, self._fold_recovery)
        self._formats_told: set[str] = set()

    def _score_in(self, core: Any) -> None:
        """The core scores the lists (``ListScorer``'s settings) against its judgment table,
        kept equal to the Python one, versions included (so the reuse of early judged scores
        agrees): the judgments read outside keyed topics are applied there (``offer``,
        ``offer_batch``; what each changed is set in the Python table:
        :meth:`_judgment_applied`), and each change the Python rules make (keyed topics,
        tombstones) is copied there (``copy_to``). The Python table stays the one snapshots,
        checkpoints and the Python judge tracker read."""
        from streameval import native  # (built: the caller checked, engine.select)

        no_interaction, unjudged = self._scorer.shared_sources
        core.set_scoring(
            **native.scoring_options(self._settings),
            source_score=SourceScore,
            scored_list=ScoredList,
            no_interaction=no_interaction,
            unjudged_source=unjudged,
        )
        core.apply_judgments(self._settings.max_judgment_ids)
        self._rules.ids = CoreIdentities(core)
        store = self._judgments
        judges_of, version, mirror = store.judges_of, store.version, core.mirror_judgment

        def changed(query_id: str, doc_id: str) -> None:
            judges = judges_of(query_id).get(doc_id)
            entries = [] if judges is None else [(j, t, g) for j, (t, g) in judges.items()]
            mirror(query_id, doc_id, entries, version(query_id))

        store.copy_to = changed

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
            raw,
            source,
            record_ms,
            None if counted_before is None else counted_before[0],
            count,
            judgment_key is not None,
        )
        if offset >= 0:
            self._next_offset[source] = offset + 1
        if answer == "invalid":  # (ts: the field of a mapped record)
            return self._invalid(raw, Invalid(kind, extra, ts), source, offset, count)
        if kind == "judgment":
            if answer == "judgment":  # a keyed topic's record: the Python rules apply it
                return self._judgment(raw, source, offset, count, judgment_key)
            return self._judgment_applied(answer, extra, count)
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

    def _judgment_applied(self, answer: str, change: Change | None, count: bool) -> Offered:
        """A judgment the core applied: ``answer`` its outcome, ``change`` what it changed
        (set in the Python table, whose listener, the judge tracker, is told)."""
        if change is not None:
            self._judgments.mirror(*change)
        outcome = _OUTCOMES[answer]
        self._intake.count(outcome, "judgment", count)
        return OFFERED[outcome, "judgment"]

    def _judgment(
        self, raw: bytes, source: str, offset: int, count: bool, judgment_key: bytes | None
    ) -> Offered:
        """A record of a keyed judgment topic the core found a judgment: applied by the Python
        rules (each change copied into the core)."""
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
