"""Judgments applied in the native engine's core (docs/native.md "Judgments applied in the
core") against the Python engine, the reference.

A judgment read outside a keyed topic is applied by the core (``EngineCore.offer`` and the batch
loop) with the native rules, and what it changed is set in the Python table; a keyed topic's
record stays with the Python rules, each change copied into the core. Both engines, built as
``replay`` builds them (the harness of ``tests/unit/test_native_engine.py``), are fed
hypothesis-generated logs of judgments between impressions and clicks (so that scores depend on
the order), with duplicates by ``event_id`` and by exact record (a line end or spaces around),
the identity cap under pressure (``max_judgment_ids`` 1 to 3), grades changing, several judges
(one family, or several so that judge families are active), keyed values and tombstones on the
same (query, doc, judge) as unkeyed records, invalid judgment records, and resets; per record
(``offer``) and in batches (``offer_batch``). Compared by ``repr`` after every step: each answer,
every scored list, every dead letter, at each look the whole snapshot (intake, windows, totals,
judges' families and agreement, ``forgotten_ids``, ``judgments``); and the judgment tables: the
Python engine's, the native engine's Python table and its core's, versions included, and the
identities remembered and forgotten. Without the extension module the tests skip, except in CI
(``CI=true``).
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval.config import Settings
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_pipeline import NativePipeline
from streameval.values import ACCEPTED, DUPLICATE, INVALID
from tests.ci import require_native
from tests.unit.test_native_batch import chunked
from tests.unit.test_native_engine import Run, Step, _first_difference
from tests.unit.test_native_join import T0

require_native("judgments applied in the core")

QUERIES = ("q1", "q2")
DOCS = ("a", "b", "c")


def judgment(
    query: str, doc: str, judge: str, grade: float, ts: int, *, event_id: str | None = None
) -> bytes:
    event: dict[str, Any] = {"type": "judgment", "query_id": query, "doc_id": doc}
    event |= {"grade": grade, "timestamp": ts, "judge": judge}
    if event_id is not None:
        event["event_id"] = event_id
    return json.dumps(event).encode()


def impression(rid: int, ts: int) -> bytes:
    event = {"type": "impression", "request_id": f"r{rid}", "timestamp": ts}
    return json.dumps(event | {"query_id": QUERIES[rid % 2], "results": list(DOCS)}).encode()


def click(rid: int, ts: int, doc: str) -> bytes:
    event = {"type": "click", "request_id": f"r{rid}", "doc_id": doc, "timestamp": ts}
    return json.dumps(event).encode()


#: judgment records each engine refuses alike (the decoders' reasons and details)
INVALID_JUDGMENTS = (
    b'{"type":"judgment","query_id":"q1","doc_id":"a","grade":"high","timestamp":1}',
    b'{"type":"judgment","query_id":"q1","grade":1,"timestamp":1}',
    b'{"type":"judgment","query_id":"q1","doc_id":"a","grade":1e9,"timestamp":1}',
    b'{"type":"judgment","doc_id":"a","grade":1,"timestamp":1}',
)


@st.composite
def logs(draw: st.DrawFn) -> list[Step]:
    """Records of one source ``s0`` (impressions, clicks, judgments: in batches they run
    together) and a keyed judgment topic's, with looks, resets and an end."""
    judges = draw(st.sampled_from((("r1", "r2", ""), ("r1", "llm:a", "llm:b"))))
    out: list[Step] = [("add_source", "s0")]
    sent: list[bytes] = []
    now, rid, offset = T0, 0, 0
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(
            st.sampled_from(("imp", "imp", "click", "jud", "jud", "jud", "again", "key", "ctl"))
        )
        if kind == "ctl":
            op = draw(st.sampled_from(("look", "look", "reset", "advance")))
            out.append((op,))
            continue
        if kind == "imp":
            now += draw(st.sampled_from((0, 300, 1_500)))
            rid += 1
            raw = impression(rid, now)
        elif kind == "click" and rid:
            raw = click(
                draw(st.integers(max(1, rid - 2), rid)), now + 10, draw(st.sampled_from(DOCS))
            )
        elif kind == "again" and sent:
            # the same record again: exact, with a line end, or with spaces around (one digest)
            raw = draw(st.sampled_from(sent)) + draw(st.sampled_from((b"", b"\r\n", b"  ")))
        elif draw(st.integers(0, 9)) == 0:
            raw = draw(st.sampled_from(INVALID_JUDGMENTS))
        else:
            raw = judgment(
                draw(st.sampled_from(QUERIES)),
                draw(st.sampled_from(DOCS)),
                draw(st.sampled_from(judges)),
                draw(st.sampled_from((0.0, 1.0, 2.0, 3.0, 2.5))),
                now + draw(st.sampled_from((0, -400, 400))),
                event_id=draw(st.sampled_from((None, None, "e1", "e2", "e3"))),
            )
            if kind == "key":  # a keyed topic's value or tombstone, on the same judgments
                key = draw(st.sampled_from((b"k1", b"k2")))
                out.append(("offer_judgment", draw(st.sampled_from((raw, raw, None))), key, "j"))
                continue
            sent.append(raw)
        out.append(("offer", raw, "s0", offset, -1))
        offset += 1
    out += [("look",), ("finish",), ("look",)]
    return out


def tables(p: Coordinator) -> list[object]:
    """The engine's judgment table(s): the Python one's (version, judges) per query, its size,
    the identities (remembered, forgotten); for the native engine the core's beside."""
    store = p._judgments
    python = [
        (store.version(q), [(d, list(j.items())) for d, j in store.judges_of(q).items()])
        for q in QUERIES
    ]
    out: list[object] = [python, len(store), len(p._rules.ids), p._rules.ids.forgotten]
    if isinstance(p, NativePipeline):
        core = [p._core.mirrored_judgments(q) for q in QUERIES]
        flat = [(v, [(d, [(j, (t, g)) for j, t, g in js]) for d, js in docs]) for v, docs in core]
        out.append(flat)
    return out


def run_both(config: dict[str, Any], steps: list[Step]) -> Run:
    """Both engines through ``steps``, compared after each; the Python engine's run."""
    py, rs = Run(config, "python"), Run(config, "native")
    assert isinstance(rs.p, NativePipeline) and rs.p._core.judgments_in_core
    for n, step in enumerate(steps):
        py.step(step)
        rs.step(step)
        assert rs.trace == py.trace, (n, step, _first_difference(py.trace, rs.trace))
        want, got = tables(py.p), tables(rs.p)
        assert got[:4] == want, (n, step)
        assert got[4] == want[0], (n, step)  # the core's table: the same, versions included
    return py


def config(max_ids: int, attribution: int) -> dict[str, Any]:
    evaluation = {"max_judgment_ids": max_ids, "attribution_window": attribution}
    return {"evaluation": evaluation | {"bucket": 1_000, "windows": [2_000, 6_000]}}


caps = st.sampled_from((1, 2, 3, 1_000))
attributions = st.sampled_from((500, 3_000))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(max_ids=caps, attribution=attributions, log=logs())
def test_judgments_applied_per_record_as_in_python(
    max_ids: int, attribution: int, log: list[Step]
) -> None:
    run_both(config(max_ids, attribution), log)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(max_ids=caps, attribution=attributions, log=logs(), seed=st.integers(0, 2**16))
def test_judgments_applied_in_batches_as_in_python(
    max_ids: int, attribution: int, log: list[Step], seed: int
) -> None:
    """The same logs, the runs of ``s0`` records offered in batches of random sizes."""
    run_both(config(max_ids, attribution), chunked(log, random.Random(seed)))


def test_the_python_decoder_and_rules_are_off_the_path_of_an_unkeyed_judgment() -> None:
    """The core decodes and applies it; Python sets what changed (no second decode, no
    ``JudgmentIds``), per record and in a batch; a keyed record still takes the Python path."""
    asked: list[bytes] = []

    def decoder(source: str) -> Any:
        from streameval.events.decode import decode

        def read(raw: bytes) -> Any:
            asked.append(raw)
            return decode(raw, 1 << 20)

        return read

    p = NativePipeline(Settings().evaluation, decoder_for=decoder)
    ja = judgment("q1", "a", "r1", 2.0, T0)
    jb = judgment("q1", "b", "r1", 1.0, T0, event_id="e1")
    assert [p.offer(ja, "s", 0).outcome, p.offer(ja + b"\n", "s", 1).outcome] == [
        ACCEPTED,
        DUPLICATE,
    ]
    p.offer_batch([(jb, 2, -1), (jb.replace(b"1.0", b"3.0"), 3, -1)], "s")
    assert asked == []
    assert p._judgments.grades("q1") == {"a": 2.0, "b": 1.0}
    assert p._core.judgment_ids == (2, 0) and len(p._rules.ids) == 2
    intake = p.snapshot().intake
    assert (intake.accepted, intake.duplicate) == ({"judgment": 2}, {"judgment": 2})
    keyed = judgment("q1", "a", "r1", 0.0, T0 - 1)
    assert p.offer_judgment(keyed, b"k", "j").outcome is ACCEPTED  # (replace: the key's value)
    assert asked == [keyed]
    table = (3, [("a", [("r1", T0 - 1, 0.0)]), ("b", [("r1", T0, 1.0)])])
    assert p._core.mirrored_judgments("q1") == table  # (versions: a, b, then the key's value)


def test_keyed_and_unkeyed_records_on_one_judgment_keep_one_table() -> None:
    """Unkeyed records (the core's rules) and a keyed topic's values and tombstone (the Python
    rules) on the same (query, doc, judge): both engines' tables equal after each, versions
    included, and the identities outlive a reset."""
    steps: list[Step] = [
        ("offer", judgment("q1", "a", "x", 1.0, T0 + 5), "s0", 0, -1),
        ("offer_judgment", judgment("q1", "a", "x", 2.0, T0 + 1), b"k", "j"),
        ("offer", judgment("q1", "a", "x", 3.0, T0 + 3, event_id="e1"), "s0", 1, -1),
        ("offer", judgment("q1", "a", "y", 1.0, T0 + 3), "s0", 2, -1),
        ("offer_judgment", None, b"k", "j"),  # deletes x's grade: y's stays
        ("offer_judgment", None, b"k", "j"),  # nothing left under the key: a duplicate
        ("offer", judgment("q1", "a", "x", 3.0, T0 + 3, event_id="e1"), "s0", 3, -1),  # a duplicate
        ("offer", judgment("q2", "b", "y", 1.0, T0), "s0", 4, -1),
        ("offer_judgment", judgment("q2", "b", "y", 1.0, T0), b"k2", "j"),
        ("offer_judgment", None, b"k2", "j"),  # q2 emptied: the next versions still agree
        ("reset",),
        ("offer", judgment("q1", "a", "y", 1.0, T0 + 3), "s0", 5, -1),  # remembered
        ("offer", judgment("q2", "c", "x", 2.0, T0), "s0", 6, -1),
        ("look",),
    ]
    py = run_both(config(1_000, 500), steps)
    outcomes = [t.split("outcome=<Outcome.")[1].split(":")[0] for t in py.trace if "Offered(" in t]
    want = "ACCEPTED ACCEPTED ACCEPTED ACCEPTED ACCEPTED DUPLICATE DUPLICATE ACCEPTED"
    assert outcomes == [*want.split(), "DUPLICATE", "ACCEPTED", "DUPLICATE", "ACCEPTED"]
    assert py.p._judgments.judges_of("q1") == {"a": {"y": (T0 + 3, 1.0)}}


def test_invalid_judgment_records_are_dead_lettered_as_python_says() -> None:
    """Reasons and details of the native decoder, per record and in a batch: the Python
    engine's, counted and dead-lettered alike."""
    rows = [(raw, i, -1) for i, raw in enumerate(INVALID_JUDGMENTS)]
    per_record: list[Step] = [("offer", raw, "s0", i, -1) for raw, i, _ in rows]
    py = run_both(config(1_000, 500), [*per_record, ("look",)])
    assert sum(t.startswith("('dead'") for t in py.trace) == len(INVALID_JUDGMENTS)
    assert str(INVALID) in "".join(py.trace)
    run_both(config(1_000, 500), [("offer_batch", rows, "s0"), ("look",)])
