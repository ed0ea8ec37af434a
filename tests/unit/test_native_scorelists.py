"""Lists scored inside the native engine's core (docs/native.md "Lists scored in the core")
against the Python engine: every early judged score handed out and every finalized scored list
compared by ``repr`` (floats bit for bit), over logs where judgments change between a list's
early judged pass and its finalization (judges, keyed judgments and tombstones), under every
scoring variant; and the core's copy of the judgment table equal to the Python table, versions
included, after every record. ``tests/unit/test_native_engine.py`` compares the whole engines;
this file aims at the scoring step."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval.config import EvaluationSettings
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from streameval.values import ScoredList
from tests.ci import require_native

require_native("lists scored in the core")

T0 = 1_767_225_600_000
QUERIES = ("q1", "q2", "q3", "")
DOCS = ("a", "b", "c", "d")


class Recorder:
    """A consumer of finalized lists that takes judged scores early: what it is told, in order."""

    def __init__(self) -> None:
        self.trace: list[tuple[str, str]] = []

    def add(self, scored: ScoredList) -> None:
        self.trace.append(("add", repr(scored)))

    def advance(self, horizon_ms: int) -> None:
        self.trace.append(("advance", repr(horizon_ms)))

    def add_judged(self, scored: ScoredList) -> None:
        self.trace.append(("judged", repr(scored)))

    def advance_judged(self, watermark_ms: int) -> None:
        self.trace.append(("advance_judged", repr(watermark_ms)))

    def reset(self) -> None:
        self.trace.append(("reset", ""))


def engines(evaluation: dict[str, Any]) -> list[tuple[Coordinator, Recorder]]:
    settings = EvaluationSettings.model_validate(evaluation)
    out: list[tuple[Coordinator, Recorder]] = []
    for kind in (Pipeline, NativePipeline):
        recorder = Recorder()
        out.append((kind(settings, consumers=[recorder], windowed=[]), recorder))
    return out


def mirrored(engine: Coordinator, query_id: str) -> tuple[int, list[Any]]:
    """The Python table's (version, judges_of) of ``query_id`` as the core's copy shows it."""
    store = engine._judgments
    docs = [
        (doc, [(judge, ts, grade) for judge, (ts, grade) in judges.items()])
        for doc, judges in store.judges_of(query_id).items()
    ]
    return store.version(query_id), docs


def impression(rid: int, ts: int, query_id: str, docs: list[str]) -> bytes:
    return json.dumps(
        {
            "type": "impression",
            "request_id": f"r{rid}",
            "query_id": query_id,
            "results": docs,
            "timestamp": ts,
        }
    ).encode()


def click(rid: int, ts: int, doc: str, action: str) -> bytes:
    event = {"type": "click", "request_id": f"r{rid}", "doc_id": doc, "timestamp": ts}
    return json.dumps(event | {"action": action}).encode()


def judgment(query_id: str, doc: str, judge: str, grade: float, ts: int) -> bytes:
    event = {"type": "judgment", "query_id": query_id, "doc_id": doc, "grade": grade}
    return json.dumps(event | {"judge": judge, "timestamp": ts}).encode()


@st.composite
def logs(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = [("add_source", "s")]
    now, rid = T0, 0
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(("imp", "imp", "click", "jud", "jud", "key", "ctl")))
        if kind == "imp":
            now += draw(st.sampled_from((0, 100, 700, 1_500)))
            rid += 1
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=5))
            query = draw(st.sampled_from(QUERIES))
            out.append(("offer", impression(rid, now, query, docs), "s"))
        elif kind == "click" and rid:
            target = draw(st.integers(max(1, rid - 3), rid))
            action = draw(st.sampled_from(("click", "click", "add_to_cart", "view")))
            doc = draw(st.sampled_from((*DOCS, "zz")))
            out.append(("offer", click(target, now, doc, action), "s"))
        elif kind in ("jud", "key"):
            query = draw(st.sampled_from(QUERIES))
            raw = judgment(
                query,
                draw(st.sampled_from(DOCS)),
                draw(st.sampled_from(("r1", "r2", "r3"))),
                draw(st.sampled_from((0.0, 1.0, 2.0, 3.0, 0.1, 2.5))),
                now + draw(st.sampled_from((0, -50, 50))),
            )
            if kind == "jud":
                out.append(("offer", raw, "judgments"))
            else:  # a keyed topic: a value or a tombstone
                key = draw(st.sampled_from((b"k1", b"k2", b"k3")))
                value = draw(st.sampled_from((raw, raw, None)))
                out.append(("offer_judgment", value, key, "judgments"))
        elif kind == "ctl":
            op = draw(st.sampled_from(("advance", "follow", "reset")))
            args: tuple[object, ...] = (
                (now + draw(st.integers(0, 3_000)),) if op == "follow" else ()
            )
            out.append((op, *args))
    out.append(("finish",))
    return out


variants = st.fixed_dictionaries(
    {
        "ks": st.sampled_from(((1, 3), (10, 1, 5), (2,))),
        "attribution_window": st.sampled_from((500, 2_000, 5_000)),
        "allowed_lateness": st.sampled_from((0, 1_000)),
        "bucket": st.just(1_000),
        "windows": st.just((4_000,)),
        "max_open_lists": st.sampled_from((2, 1_000)),
        "ideal": st.sampled_from(("pool", "list")),
        "unjudged": st.sampled_from(("zero", "condensed")),
        "no_relevance": st.sampled_from(("skip", "zero")),
        "gain": st.sampled_from(("linear", "exponential")),
        "discount": st.sampled_from(("log2", "jarvelin")),
        "discount_base": st.sampled_from((2.0, 3.0)),
    }
)


def replay(evaluation: dict[str, Any], log: list[tuple[Any, ...]]) -> list[tuple[str, str]]:
    """Both engines through ``log``, compared after every step; the Python engine's trace."""
    (py, py_seen), (rs, rs_seen) = engines(evaluation)
    assert isinstance(rs, NativePipeline)
    core = rs._core
    for n, (op, *args) in enumerate(log):
        answers = [repr(getattr(engine, op)(*args)) for engine in (py, rs)]
        assert answers[0] == answers[1], (n, op)
        assert rs_seen.trace == py_seen.trace, (n, op)
        for query_id in QUERIES:
            assert core.mirrored_judgments(query_id) == mirrored(py, query_id), (n, query_id)
        assert core.early_kept <= core.open_lists  # none kept for a list gone
    assert core.early_kept == 0
    return py_seen.trace


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=variants, log=logs())
def test_scored_in_the_core_as_in_python(evaluation: dict[str, Any], log: list[Any]) -> None:
    replay(evaluation, log)


def test_a_judgment_between_the_early_pass_and_finalization_scores_the_list_again() -> None:
    """r1 (q1) passes early unjudged, then q1's b is judged 3: scored again at finalization;
    r2 (q2, judged before) keeps its early score (q2 unchanged); q3's judgment comes after r3
    passed too. Both engines hand out the same."""
    log: list[tuple[Any, ...]] = [
        ("add_source", "s"),
        ("offer", judgment("q2", "a", "r1", 2.0, T0), "judgments"),
        ("offer", impression(1, T0, "q1", ["a", "b"]), "s"),
        ("offer", impression(2, T0 + 10, "q2", ["a", "b"]), "s"),
        ("offer", impression(3, T0 + 1_500, "q3", ["c"]), "s"),  # bucket 1 complete: passed
        ("offer", judgment("q1", "b", "r1", 3.0, T0), "judgments"),
        ("offer", judgment("q3", "c", "r1", 1.0, T0), "judgments"),
        ("offer", impression(4, T0 + 9_000, "q3", ["c"]), "s"),  # finalizes the first three
        ("finish",),
    ]
    evaluation = {"attribution_window": 5_000, "allowed_lateness": 0, "bucket": 1_000}
    trace = replay({**evaluation, "windows": [4_000]}, log)
    judged = [s for kind, s in trace if kind == "judged"]
    final = [s for kind, s in trace if kind == "add"]
    assert [s.count("request_id='r") for s in judged] == [1, 1, 1, 1]
    # r1 early: q1 unjudged (no NDCG); final: b judged 3 at rank 2
    assert "request_id='r1'" in judged[0] and "no_relevance" in judged[0]
    r1 = next(s for s in final if "request_id='r1'" in s)
    assert r1.count("outcome='scored'") == 1  # the judged source (implicit: no interaction)
    assert "coverage=(0.0, 0.5, 0.5, 0.5)" in r1
    # r2 (q2 unchanged since its early pass): the same judged source early and final; r1's
    # changed with q1's judgment
    early = {rid: judged_part(s) for rid in ("r1", "r2") for s in judged if f"'{rid}'" in s}
    late = {rid: judged_part(s) for rid in ("r1", "r2") for s in final if f"'{rid}'" in s}
    assert early["r2"] == late["r2"]
    assert early["r1"] != late["r1"]


def judged_part(scored: str) -> str:
    """The judged source's repr in a scored list's repr (early: the only source; final: the
    second)."""
    start = scored.index("SourceScore(relevance='judged'")
    return scored[start : scored.index(", clicked=")].rstrip(",)")


def test_an_evicted_list_leaves_no_early_score() -> None:
    evaluation = {"max_open_lists": 2, "allowed_lateness": 0, "bucket": 1_000}
    (_, _), (rs, _) = engines({**evaluation, "windows": [4_000]})
    assert isinstance(rs, NativePipeline)
    rs.add_source("s")
    rs.offer(judgment("q1", "a", "r1", 2.0, T0), "judgments")
    for i in range(4):
        rs.offer(impression(i, T0 + 10 * i, "q1", ["a"]), "s")
    rs.offer(impression(9, T0 + 1_500, "q1", ["a"]), "s")  # passes the first bucket's lists
    core = rs._core
    assert (core.open_lists, core.early_kept) == (2, 1)  # r3 passed and kept, r9 not passed
    for i in range(10, 13):
        rs.offer(impression(i, T0 + 1_600 + i, "q1", ["a"]), "s")  # evicts r3 (and r9, r10)
    assert (core.open_lists, core.early_kept) == (2, 0)
    rs.reset()
    assert (core.open_lists, core.early_kept) == (0, 0)
