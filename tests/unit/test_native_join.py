"""The native join (native/src/join/, ``streameval._native.JoinCore``) against the Python one,
the reference: the real classes (``decode_native``, ``dedup_key``, ``WatermarkTracker``,
``SegmentCapper``, ``InteractionGrades``, ``Joiner``) wired as ``Pipeline.offer``, ``_advance``
and ``engine/progress.py`` wire them, without what is not the join (judgments, scoring, windows,
recovery offsets, the early judged pass, the trust signals): :class:`PyJoin`.

Both are fed the same records one by one (hypothesis-generated logs over several sources and
config variants: duplicates by ``event_id`` and by identical bytes, late and unmatched clicks,
clicks before their impression, caps under pressure, idle sources, ``follow``, judgments and
invalid records; and a simulator log), and after every step every output is compared: the
record's outcome, the lists finalized or evicted (every field, grades bit for bit, in order),
the waiting clicks resolved and expired, the watermark and the sizes of the join's state.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks._common import sim_lines
from streameval import native
from streameval.config import DwellGrade, EvaluationSettings
from streameval.events.decode import Invalid, decode_native, dedup_key
from streameval.events.models import Impression, Judgment
from streameval.join import InteractionGrades, Joiner, OpenList, SegmentCapper
from streameval.values import ACCEPTED, PENDING
from streameval.windows import WatermarkTracker, bucket_start
from tests.ci import require_native

require_native("native join")

T0 = 1_767_225_600_000


def list_row(kind: str, lst: OpenList) -> tuple[object, ...]:
    """A finalized or evicted list in the shape of ``JoinCore.drain_finalized``."""
    grades = None if lst.grades is None else tuple(lst.grades.items())
    keys = None if lst.interaction_keys is None else tuple(lst.interaction_keys)
    clicked = None if lst.clicked_docs is None else tuple(lst.clicked_docs)
    return (
        kind,
        lst.request_id,
        lst.timestamp,
        lst.query_id,
        lst.doc_ids,
        dict(lst.labels),
        lst.segment,
        grades,
        keys,
        lst.clicked,
        lst.first_click_rank,
        lst.teams,
        clicked,
        lst.counted_before,
        lst.source,
    )


class PyJoin:
    """The Python join, wired as the pipeline wires it (the reference of ``JoinCore``)."""

    def __init__(self, s: EvaluationSettings) -> None:
        self._s = s
        self._segments = SegmentCapper(s.segment_labels, s.max_segments)
        grades = InteractionGrades(
            by_action=dict(s.implicit_grades),
            dwell_min_ms=s.dwell_grade.min_ms,
            dwell_grade=s.dwell_grade.grade,
        )
        self.joiner = Joiner(
            attribution_ms=s.attribution_window,
            grades=grades,
            segment_of=self._segments.segment_of,
            max_open_lists=s.max_open_lists,
            max_pending_clicks=s.max_pending_clicks,
        )
        self.tracker = WatermarkTracker(s.allowed_lateness)
        self._due: float = math.inf
        self._finished = False
        self.notes: list[tuple[object, ...]] = []
        self.last_invalid: tuple[str, str] | None = None

    def offer(
        self,
        raw: bytes,
        source: str,
        record_ms: int = -1,
        counted_before: bool = False,
        counted: bool = True,
    ) -> str:
        """``Pipeline.offer`` for the join."""
        event = decode_native(raw, self._s.max_record_bytes)
        if record_ms > 0 and type(event) is not Invalid:
            ahead = event.timestamp - record_ms
            if ahead > self._s.max_future_skew:
                event = Invalid(
                    "future_timestamp",
                    f"event time {ahead} ms after its record's timestamp"
                    f" (max_future_skew {self._s.max_future_skew} ms)",
                )
        if type(event) is Invalid:
            self.last_invalid = (event.reason, event.detail)
            return "invalid"
        if type(event) is Judgment:
            return "judgment"
        ts = event.timestamp
        before, watermark = self.tracker.observe(source, ts)
        if type(event) is Impression:
            outcome, resolved = self.joiner.add_impression(
                event, before, counted_before=counted_before, source=source
            )
            self.notes += [("resolved", o.value, c) for o, c in resolved]
            if outcome is ACCEPTED:  # Pipeline._opened
                self._due = min(self._due, ts + self._s.attribution_window)
                self.notes += [list_row("evicted", lst) for lst in self.joiner.evict_over_cap()]
        else:
            outcome = self.joiner.add_click(event, dedup_key(event, raw), before, counted=counted)
            if outcome is PENDING and ts + 1 < self._due:
                self._due = ts + 1
        if watermark is not None and watermark >= self._due:
            self._advance(watermark)
        return outcome.value

    def _advance(self, watermark: int) -> None:
        self.notes += [list_row("final", lst) for lst in self.joiner.finalize(watermark)]
        expired = self.joiner.expire_pending(watermark)
        if expired:
            self.notes.append(("expired", expired))
        self._due = self.joiner.next_due()

    def add_source(self, source: str) -> None:
        self.tracker.register(source)

    def forget_source(self, source: str) -> None:  # Checkpoints.forget_source, for the join
        self.tracker.forget(source)

    def set_idle(self, source: str, idle: bool = True) -> None:
        self.tracker.set_idle(source, idle)
        self.advance()

    def advance(self) -> None:
        watermark = self.tracker.watermark
        if watermark is not None:
            self._advance(watermark)

    def follow(self, watermark_ms: int) -> bool:
        if not self.tracker.all_idle:
            return False
        before = self.tracker.watermark
        if before is not None and before >= watermark_ms:
            return False
        self.tracker.advance_to(watermark_ms)
        self.advance()
        return True

    def finish(self) -> None:
        if self._finished:
            return
        self._finished = True
        newest = self.tracker.newest
        end = None if newest is None else bucket_start(newest, self._s.bucket) + self._s.bucket
        self.notes += [list_row("final", lst) for lst in self.joiner.finalize_all()]
        expired = self.joiner.expire_pending(None)
        if expired:
            self.notes.append(("expired", expired))
        if end is not None:
            self.tracker.advance_to(end + self._s.attribution_window)

    def drain_finalized(self) -> list[tuple[object, ...]]:
        notes, self.notes = self.notes, []
        return notes

    @property
    def state(self) -> tuple[object, ...]:
        j = self.joiner
        return (
            self.tracker.watermark,
            j.open_lists,
            j.pending_clicks,
            j.pending_clicks_counted,
            j.closed_ids_dropped,
            len(self._segments),
        )


def native_state(core: Any) -> tuple[object, ...]:
    return (
        core.watermark,
        core.open_lists,
        core.pending_clicks,
        core.pending_clicks_counted,
        core.closed_ids_dropped,
        core.segments,
    )


def comparable(note: tuple[object, ...]) -> tuple[object, ...]:
    """A note with its grades' floats as their bits (hex) and its sets as frozensets."""
    if note[0] not in ("final", "evicted"):
        return note
    row = list(note)
    if row[7] is not None:
        row[7] = tuple((doc, float(g).hex()) for doc, g in row[7])  # type: ignore[attr-defined]
    for i in (8, 12):  # interaction keys, clicked docs: sets
        if row[i] is not None:
            row[i] = frozenset(row[i])  # type: ignore[call-overload]
    return tuple(row)


Step = tuple[Any, ...]


def run_both(s: EvaluationSettings, steps: list[Step]) -> int:
    """Drive both joins through ``steps`` and compare after each. Returns the lists compared."""
    py, rs = PyJoin(s), native.join_core(s)
    lists = 0
    for n, step in enumerate(steps):
        op = step[0]
        if op == "offer":
            _, raw, source, record_ms, counted_before, counted = step
            want = py.offer(raw, source, record_ms, counted_before, counted)
            got = rs.offer(raw, source, record_ms, counted_before, counted)
            assert got == want, (n, raw)
            if want == "invalid":
                assert py.last_invalid is not None and rs.last_invalid is not None
                assert rs.last_invalid[0] == py.last_invalid[0], (n, raw)
                if py.last_invalid[0] == "future_timestamp":
                    assert rs.last_invalid == py.last_invalid
        else:  # add_source, forget_source, set_idle, advance, follow (answers if it moved), finish
            assert getattr(rs, op)(*step[1:]) == getattr(py, op)(*step[1:]), (n, step)
        want_notes = [comparable(x) for x in py.drain_finalized()]
        got_notes = [comparable(x) for x in rs.drain_finalized()]
        assert got_notes == want_notes, (n, step)
        assert native_state(rs) == py.state, (n, step)
        lists += sum(1 for x in want_notes if x[0] in ("final", "evicted"))
    return lists


# --- generated logs ----------------------------------------------------------------------------

RIDS = ("r0", "r1", "r2", "r3", "r4", "r5", "r6", "r-" + "é" * 70)
DOCS = ("a", "b", "c", "d", "e", "x" * 130)
SOURCES = ("s0", "s1", "s2")


@st.composite
def impressions(draw: st.DrawFn, ts: int) -> bytes:
    docs = draw(st.lists(st.sampled_from(DOCS), max_size=6))
    teams = draw(
        st.none()
        | st.lists(st.sampled_from(("A", "B", None)), min_size=len(docs), max_size=len(docs))
    )
    results: list[object] = list(docs)
    if teams is not None:
        results = [
            d if t is None else {"doc_id": d, "team": t} for d, t in zip(docs, teams, strict=True)
        ]
    record: dict[str, object] = {
        "type": "impression",
        "request_id": draw(st.sampled_from(RIDS)),
        "timestamp": ts,
        "query_id": draw(st.sampled_from(("q1", "q2"))),
        "results": results,
        "labels": draw(
            st.dictionaries(
                st.sampled_from(("ranker", "arm", "other")),
                st.sampled_from(("x", "y", "z", "")),
                max_size=3,
            )
        ),
    }
    if draw(st.booleans()):
        record["event_id"] = draw(st.sampled_from(("e1", "e2")))
    return json.dumps(record).encode()


@st.composite
def clicks(draw: st.DrawFn, ts: int) -> bytes:
    record: dict[str, object] = {
        "type": "click",
        "request_id": draw(st.sampled_from(RIDS)),
        "timestamp": ts,
        "doc_id": draw(st.sampled_from((*DOCS, "unlisted"))),
    }
    optional = {
        "action": st.sampled_from(("click", "dwell", "purchase", "hover")),
        "dwell_ms": st.sampled_from((0, 99.5, 100, 30_000, 1e6)),
        "position": st.integers(1, 12),
        "event_id": st.sampled_from(("e1", "e2", "e3")),
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            record[key] = draw(values)
    return json.dumps(record).encode()


OTHER_RECORDS = (
    b'{"type":"judgment","query_id":"q1","doc_id":"a","grade":2,"timestamp":1767225600000}',
    b"{",
    b'{"type":"click","request_id":"r1"}',
    b'{"type":"view","request_id":"r1"}',
)


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    out: list[Step] = []
    offered: list[bytes] = []
    now = T0  # event time goes forward with jitter: some records in order, some late
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(
            st.sampled_from(("imp", "imp", "click", "click", "click", "again", "other", "control"))
        )
        if kind == "control":
            op = draw(
                st.sampled_from(("set_idle", "advance", "follow", "add_source", "forget_source"))
            )
            source = draw(st.sampled_from(SOURCES))
            args: tuple[object, ...] = {
                "set_idle": (source, draw(st.booleans())),
                "advance": (),
                "follow": (now + draw(st.integers(-500, 500)),),
                "add_source": (source,),
                "forget_source": (source,),
            }[op]
            out.append((op, *args))
            continue
        if kind == "again" and offered:
            # the same record again: identical bytes, or with white space the digest strips
            raw = draw(st.sampled_from(offered)) + draw(st.sampled_from((b"", b"\r\n", b" ")))
        elif kind == "other":
            raw = draw(st.sampled_from(OTHER_RECORDS))
        else:
            now += draw(st.integers(0, 120))
            ts = max(0, now + draw(st.sampled_from((0, 0, -20, -150, 60, -600))))
            raw = draw(impressions(ts) if kind == "imp" else clicks(ts))
        offered.append(raw)
        record_ms = draw(st.sampled_from((-1, -1, -1, -1, -1, now, now - 150)))
        out.append(
            (
                "offer",
                raw,
                draw(st.sampled_from(SOURCES)),
                record_ms,
                draw(st.booleans()),
                draw(st.booleans()),
            )
        )
    out.append(("finish",))
    return out


configs = st.builds(
    EvaluationSettings,
    attribution_window=st.sampled_from((50, 200, 1_000)),
    allowed_lateness=st.sampled_from((0, 30, 200)),
    bucket=st.sampled_from((1_000, 10_000)),
    max_open_lists=st.sampled_from((1, 2, 3, 1_000_000)),
    max_pending_clicks=st.sampled_from((0, 1, 2, 100_000)),
    max_segments=st.sampled_from((1, 2, 100)),
    segment_labels=st.sampled_from((("ranker", "arm"), (), ("arm",))),
    implicit_grades=st.sampled_from(
        ({"click": 1.0, "purchase": 3.0}, {"click": 1.0, "dwell": 0.5, "hover": -0.0})
    ),
    dwell_grade=st.sampled_from(
        (
            {"min_ms": 30_000, "grade": 2.0},
            {"min_ms": 100, "grade": 2.5},
            {"min_ms": 0, "grade": 0.0},
        )
    ),
    max_future_skew=st.sampled_from((0, 100, 300_000)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=configs, log=steps())
def test_generated_logs_join_alike(s: EvaluationSettings, log: list[Step]) -> None:
    run_both(s, log)


def test_simulator_log_joins_alike() -> None:
    """A simulator log (20,000 records, two sources by kind, small caps under pressure then the
    defaults' windows): every outcome and list alike, and lists actually finalized."""
    lines = sim_lines(20_000, start_ms=T0)
    for s in (
        EvaluationSettings(attribution_window=5_000, allowed_lateness=1_000, bucket=1_000),
        EvaluationSettings(
            attribution_window=30_000,
            max_open_lists=50,
            max_pending_clicks=5,
            max_segments=2,
            segment_labels=("arm", "ranker"),
        ),
    ):
        log: list[Step] = [
            ("offer", raw, "clicks" if b'"click"' in raw[:20] else "impressions", -1, False, True)
            for raw in lines
        ]
        log.append(("finish",))
        assert run_both(s, log) > 1_000


def test_a_hand_made_log_golden() -> None:
    """Golden outcomes of a small log, derived by hand from DESIGN §3 (not from either join)."""
    s = EvaluationSettings(attribution_window=100, allowed_lateness=0, max_open_lists=2)
    core = native.join_core(s)
    core.add_source("i")  # the impressions' source holds the watermark until it speaks
    imp = (
        b'{"type":"impression","request_id":"%s","timestamp":%d,"query_id":"q","results":["a","b"]}'
    )
    clk = b'{"type":"click","request_id":"%s","timestamp":%d,"doc_id":"b","event_id":"%s"}'
    # (record, source, outcome, watermark after it)
    table = [
        (clk % (b"r1", T0 + 5, b"c1"), "c", "pending", None),  # before its impression
        (imp % (b"r1", T0), "i", "accepted", T0),  # the waiting click attached
        (imp % (b"r1", T0), "i", "duplicate", T0),
        (clk % (b"r1", T0 + 6, b"c1"), "c", "duplicate", T0),  # its event_id attached already
        (imp % (b"r2", T0 + 150), "i", "accepted", T0 + 6),
        (clk % (b"r1", T0 + 160, b"c2"), "c", "late", T0 + 150),  # after r1's window; closes r1
        (clk % (b"r1", T0 + 170, b"c3"), "c", "late", T0 + 150),  # r1 closed
        (imp % (b"r3", T0 + 149), "i", "late", T0 + 150),  # behind the watermark
    ]
    for raw, source, want, watermark in table:
        assert (core.offer(raw, source), core.watermark) == (want, watermark), raw
    notes = core.drain_finalized()
    assert [n[:2] for n in notes] == [("resolved", "accepted"), ("final", "r1")]
    assert notes[1][7] == (("b", 1.0),) and notes[1][10] == 2  # grade 1.0, first click at rank 2
    assert notes[1][8] == ("c1",) and notes[1][14] == "i"


def test_signed_zero_grades_alike() -> None:
    """Python's ``max`` keeps the first of equal floats: a ``hover`` graded ``-0.0`` with a dwell
    grade ``0.0`` stays ``-0.0`` (by its bits), on both joins."""
    s = EvaluationSettings(
        implicit_grades={"hover": -0.0}, dwell_grade=DwellGrade(min_ms=0, grade=0.0)
    )
    imp = b'{"type":"impression","request_id":"r","timestamp":%d,"query_id":"q","results":["a"]}'
    hover = (
        b'{"type":"click","request_id":"r","timestamp":%d,"doc_id":"a","action":"hover",'
        b'"dwell_ms":5}'
    )
    log: list[Step] = [
        ("offer", imp % T0, "i", -1, False, True),
        ("offer", hover % (T0 + 1), "i", -1, False, True),
        ("finish",),
    ]
    assert run_both(s, log) == 1
    core = native.join_core(s)
    for step in log[:2]:
        core.offer(step[1], "i")
    core.finish()
    ((_, doc, grade),) = [(n[0], *n[7][0]) for n in core.drain_finalized()]  # type: ignore[index]
    assert (doc, math.copysign(1.0, grade)) == ("a", -1.0)
