"""The fold of a finalized list inside the native core (docs/native.md "The fold in the core").

In the default configuration the native engine's core folds each finalized list itself (window
buckets, since-start totals, the buckets for the state topic, the judge tracker) and Python
builds no ``OpenList`` for it; a batch with a list with teams, or once two judge families are
seen, reaches the Python back half per list and is folded in the core after; ``[propensity]
enabled`` and windowed consumers other than interleaving keep the whole Python back half. Each
case here is checked against the Python engine by ``repr`` (snapshot, judges rows included,
every scored list, the unpersisted buckets' bytes). ``tests/unit/test_native_engine.py`` is the
differential test over generated logs (it goes through all three paths).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from streameval.config import EvaluationSettings, JudgesSettings, PropensitySettings
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_fold import CoreWindows
from streameval.engine.native_join import NativeJoin
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from streameval.interleave import InterleavingStore
from streameval.windows import WindowStore
from streameval.windows.persisted import encode_bucket
from tests.ci import require_native

require_native("the fold in the core")

T0 = 1_767_225_600_000
EVALUATION = {"attribution_window": 5_000, "allowed_lateness": 0, "bucket": 1_000}


def impression(rid: int, ts: int, query_id: str, docs: list[Any]) -> bytes:
    event = {"type": "impression", "request_id": f"r{rid}", "query_id": query_id}
    return json.dumps(event | {"results": docs, "timestamp": ts}).encode()


def click(rid: int, ts: int, doc: str) -> bytes:
    event = {"type": "click", "request_id": f"r{rid}", "doc_id": doc, "timestamp": ts}
    return json.dumps(event).encode()


def judgment(query_id: str, doc: str, judge: str, grade: float, ts: int) -> bytes:
    event = {"type": "judgment", "query_id": query_id, "doc_id": doc, "grade": grade}
    return json.dumps(event | {"judge": judge, "timestamp": ts}).encode()


class Seen:
    def __init__(self) -> None:
        self.trace: list[str] = []

    def __call__(self, scored: object) -> None:
        self.trace.append(repr(scored))


def engine(kind: type[Coordinator], **options: Any) -> tuple[Coordinator, Seen]:
    settings = EvaluationSettings.model_validate({**EVALUATION, "windows": [4_000, 8_000]})
    seen = Seen()
    options = {"windowed": [InterleavingStore.of(settings)], "persist": True, **options}
    return kind(settings, on_scored=seen, judges=JudgesSettings(), **options), seen


def both(log: list[tuple[Any, ...]], **options: Any) -> tuple[NativePipeline, list[int]]:
    """Both engines through ``log`` (a step: method and arguments), the same answered; the
    native engine, and per step how many lists reached its Python back half as an OpenList."""
    py, py_seen = engine(Pipeline, **options)
    rs, rs_seen = engine(NativePipeline, **options)
    assert isinstance(rs, NativePipeline)
    as_open_lists: list[int] = []
    built = [0]
    make = NativeJoin._list

    def counted(row: tuple[Any, ...]) -> Any:
        built[0] += 1
        return make(row)

    mp = pytest.MonkeyPatch()
    mp.setattr(NativeJoin, "_list", staticmethod(counted))
    try:
        for offset, (op, *given) in enumerate(log):
            args = [*given, offset] if op == "offer" else given
            built[0] = 0
            assert repr(getattr(py, op)(*args)) == repr(getattr(rs, op)(*args)), offset
            as_open_lists.append(built[0])
    finally:
        mp.undo()
    py.finish()
    rs.finish()
    assert rs_seen.trace == py_seen.trace
    assert repr(rs.snapshot()) == repr(py.snapshot())
    states = []
    for p in (py, rs):
        before, buckets = p.unpersisted_buckets()
        states.append((before, [(s, start, encode_bucket(b)) for s, start, b in buckets]))
    assert states[0] == states[1]
    assert states[0][1], "buckets for the state topic"
    return rs, as_open_lists


def test_default_configuration_folds_every_list_in_the_core() -> None:
    log: list[tuple[Any, ...]] = [
        ("offer", judgment("q1", "a", "alice", 2.0, T0), "judgments"),
        ("offer", impression(1, T0, "q1", ["a", "b"]), "s0"),
        ("offer", impression(2, T0 + 10, "q2", ["b", "c"]), "s1"),
        ("offer", click(1, T0 + 20, "b"), "s0"),
        ("offer", impression(3, T0 + 2_500, "q1", ["c", "a"]), "s0"),
        ("offer", impression(4, T0 + 9_000, "q1", ["a"]), "s0"),  # finalizes r1, r2, r3
        ("offer", impression(5, T0 + 30_000, "q2", ["b"]), "s1"),  # evicts buckets
    ]
    rs, as_open_lists = both(log)
    assert rs._core_folds and type(rs._windows) is CoreWindows
    assert as_open_lists == [0] * len(log), "no OpenList built for any list"
    snapshot = rs.snapshot()
    assert sum(n for (_, outcome), n in snapshot.lists_total.items() if outcome == "scored") > 0
    assert snapshot.judges is not None and snapshot.judges.freshness


def test_a_second_judge_family_sends_the_next_lists_to_the_python_back_half() -> None:
    log: list[tuple[Any, ...]] = [
        ("offer", judgment("q1", "a", "alice", 2.0, T0), "judgments"),
        ("offer", impression(1, T0, "q1", ["a", "b"]), "s0"),
        ("offer", impression(2, T0 + 6_000, "q1", ["b", "a"]), "s0"),  # finalizes r1: core
        ("offer", judgment("q1", "b", "llm:gpt", 1.0, T0 + 6_000), "judgments"),
        ("offer", impression(3, T0 + 12_000, "q1", ["a"]), "s0"),  # r2: judged:<family>
    ]
    rs, as_open_lists = both(log)
    assert as_open_lists == [0, 0, 0, 0, 1]
    judges = rs.snapshot().judges
    assert judges is not None and judges.families == ("human", "llm:gpt")


def test_a_list_with_teams_reaches_the_python_back_half() -> None:
    teams = [{"doc_id": "a", "team": "A"}, {"doc_id": "b", "team": "B"}]
    log: list[tuple[Any, ...]] = [
        ("offer", impression(1, T0, "q1", ["a", "b"]), "s0"),
        ("offer", impression(2, T0 + 100, "q1", teams), "s0"),
        ("offer", click(2, T0 + 200, "a"), "s0"),
        ("offer", impression(3, T0 + 9_000, "q2", ["c"]), "s0"),  # finalizes r1 and r2
    ]
    _, as_open_lists = both(log)
    assert as_open_lists[-1] == 2, "the batch with teams: both lists through Python"


def test_configurations_that_keep_the_python_back_half() -> None:
    settings = EvaluationSettings.model_validate(EVALUATION)
    on = NativePipeline(settings, propensity=PropensitySettings(enabled=True))
    assert not on._core_folds and type(on._windows) is WindowStore

    class Other:  # a windowed consumer of one's own: it is told every list in Python
        def add(self, scored: object) -> None: ...

    other = NativePipeline(settings, windowed=[Other()])  # type: ignore[list-item]
    assert not other._core_folds
    assert NativePipeline(settings)._core_folds
