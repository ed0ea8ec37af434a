"""The record path in batches (``offer_batch``, docs/native.md "The record path in batches"):
for each engine, a batch is exactly ``offer`` per record. Each log of the whole-engine
differential test (tests/unit/test_native_engine.py, whose harness this reuses) is played four
times: the Python and the native engine, each record by record (``offer``) and in batches
(``offer_batch``: the runs of consecutive records of one source cut at random, chunks of one
record, of a few, and whole runs; an empty value sometimes as None), and the four traces
compared by ``repr``: every scored list as scored, every dead letter, at each look the whole
snapshot (intake with its keys' order, windows, totals, detectors...), horizon, watermark and
checkpoints. Then the same after a restore (a previous run's checkpoint: records it counted
rebuild the state without being counted), and with ``on_seconds`` beside dead letters (their
order). Without the extension module the tests skip, except in CI (``CI=true``).
"""

from __future__ import annotations

import json
import random
import threading
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks._common import sim_records
from streameval.config import Settings
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from streameval.windows.persisted import decode_bucket, encode_bucket
from tests.ci import require_native
from tests.unit.test_native_engine import (
    FORMATS,
    SOURCES,
    Run,
    Step,
    _first_difference,
    as_shop,
    as_ubi,
    evaluations,
    sim_steps,
    steps,
)
from tests.unit.test_native_join import T0

require_native("native engine in batches")

ENGINES = ("python", "native")


def chunked(log: list[Step], rnd: random.Random, whole: bool = False) -> list[Step]:
    """``log`` with each run of consecutive ``offer`` steps of one source cut into
    ``("offer_batch", rows, source)`` steps of random sizes (``whole``: each run one batch)."""
    out: list[Step] = []
    run: list[Step] = []

    def flush() -> None:
        i = 0
        while i < len(run):
            size = len(run) if whole else rnd.choice((1, 1, 2, 3, 7, len(run)))
            rows = []
            for _, raw, _, offset, record_ms in run[i : i + size]:
                value = None if raw == b"" and rnd.random() < 0.5 else raw
                rows.append((value, offset, record_ms))
            out.append(("offer_batch", rows, run[0][2]))
            i += size
        run.clear()

    for step in log:
        if step[0] == "offer" and (not run or run[0][2] == step[2]):
            run.append(step)
            continue
        flush()
        if step[0] == "offer":
            run.append(step)
        else:
            out.append(step)
    flush()
    return out


def play(run: Run, step: Step, batch: bool) -> None:
    """One step; a batch offered at once (``batch``), else record by record, a marker traced."""
    if step[0] != "offer_batch":
        run.step(step)
        return
    _, rows, source = step
    if batch:
        assert run.p.offer_batch(iter(rows) if len(rows) % 2 else rows, source) is None
    else:
        for value, offset, record_ms in rows:
            run.p.offer(value or b"", source, offset, record_ms)
    run.trace.append(f"batch {len(rows)}")


def play_all(config: dict[str, Any], log: list[Step]) -> list[Run]:
    """The four runs of ``log``, compared after every step."""
    runs = [Run(config, engine) for engine in ENGINES for _ in (0, 1)]
    for n, step in enumerate(log):
        for i, run in enumerate(runs):
            play(run, step, batch=bool(i % 2))
        for run in runs[1:]:
            assert run.trace == runs[0].trace, (n, _first_difference(runs[0].trace, run.trace))
        for run in runs[2:]:  # the native core keeps no early score of a list gone (evicted)
            core = getattr(run.p, "_core", None)
            assert core is None or core.early_kept <= core.open_lists, n
    assert [type(r.p) for r in runs] == [Pipeline, Pipeline, NativePipeline, NativePipeline]
    return runs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps(), seed=st.integers(0, 2**32), whole=st.booleans())
def test_generated_logs_in_batches_evaluate_as_record_by_record(
    evaluation: dict[str, Any], log: list[Step], seed: int, whole: bool
) -> None:
    play_all({"evaluation": evaluation}, chunked(log, random.Random(seed), whole))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps(), seed=st.integers(0, 2**32))
def test_every_native_source_format_in_batches(
    evaluation: dict[str, Any], log: list[Step], seed: int
) -> None:
    """The formats' sources of test_native_engine (s2 UBI, s3 mapped JSON), in batches."""
    by_source = {"s2": as_ubi, "s3": as_shop}
    log = [
        (s[0], by_source[s[2]](s[1]), *s[2:]) if s[0] == "offer" and s[2] in by_source else s
        for s in log
    ]
    play_all({"evaluation": evaluation, **FORMATS}, chunked(log, random.Random(seed)))


def reread(config: dict[str, Any], log: list[Step], cut: int, engine: str, batch: bool) -> Run:
    """The state one run committed after ``log[:cut]`` restored into a fresh engine, which
    re-reads ``log`` from the committed offsets (as test_native_engine.restore_round_trip)."""
    first = Run(config, engine)
    for step in log[:cut]:
        play(first, step, batch)
    p = first.p
    before, buckets = p.unpersisted_buckets()
    if before is not None:
        p.mark_persisted(before)
    state = [(start, encode_bucket(b)) for _, start, b in buckets]
    checkpoint = {s: (*p.counted_through(s), p.persisted_before(s)) for s in SOURCES}
    commit = p.commit_offsets()
    again = Run(config, engine)
    for source in SOURCES:
        again.p.restore_source(source, *checkpoint[source])
    for start, raw in state:
        again.p.load_bucket(start, decode_bucket(raw))  # type: ignore[arg-type]
    for step in log:
        if step[0] == "forget_source":
            continue
        if step[0] == "offer_batch":  # (committed: not read again)
            keep = [r for r in step[1] if r[1] < 0 or r[1] >= commit.get(step[2], 0)]
            play(again, (step[0], keep, step[2]), batch)
        else:
            play(again, step, batch)
    again.step(("look",))
    return again


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps(), cut=st.floats(0.2, 0.9), seed=st.integers(0, 2**32))
def test_a_restore_reread_in_batches_counts_as_record_by_record(
    evaluation: dict[str, Any], log: list[Step], cut: float, seed: int
) -> None:
    batched = chunked(log[:-3], random.Random(seed))
    at = int(len(batched) * cut)
    traces = [
        reread({"evaluation": evaluation}, batched, at, engine, batch).trace
        for engine in ENGINES
        for batch in (False, True)
    ]
    for trace in traces[1:]:
        assert trace == traces[0], _first_difference(traces[0], trace)


def one_source_sim_steps(n: int, **config: object) -> list[Step]:
    """``n`` simulator records of one source, as ``replay`` reads one log (judgments, noise
    and all in it), every 2,000 a look, then idle and the end."""
    out: list[Step] = [("add_source", "s0")]
    for i, r in enumerate(sim_records(n, start_ms=T0, queries=100, **config)):
        out.append(("offer", r.raw, "s0", i, -1))  # type: ignore[attr-defined]
        if i % 2_000 == 1_999:
            out.append(("look",))
    return [*out, ("set_idle", "s0"), ("look",), ("finish",), ("look",)]


SIM_CASES: list[tuple[dict[str, Any], list[Step]]] = [
    ({}, one_source_sim_steps(6_000)),  # the shipped defaults, as replay reads one log
    ({}, one_source_sim_steps(6_000, llm_judge="gpt", llm_rate=5.0)),  # judge families
    (  # lists evicted over the cap, interleaving
        {"evaluation": {"attribution_window": 5_000, "max_open_lists": 300}},
        one_source_sim_steps(6_000, interleaving=True),
    ),
    ({}, sim_steps(6_000)),  # impressions, clicks and judgments each a source
]


@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize(("config", "log"), SIM_CASES)
def test_simulator_logs_in_batches_evaluate_as_record_by_record(
    config: dict[str, Any], log: list[Step], whole: bool
) -> None:
    runs = play_all(config, chunked(log, random.Random(7), whole))
    assert sum(t.startswith("ScoredList(") for t in runs[0].trace) > 300  # lists scored
    if whole and log[1][0] == "offer":  # (one source: a batch of 2,000 records at once)
        assert "batch 2000" in runs[0].trace


def test_evictions_in_a_batch_count_as_record_by_record() -> None:
    config = {"evaluation": {"attribution_window": 5_000, "max_open_lists": 20}}
    runs = play_all(config, chunked(one_source_sim_steps(3_000), random.Random(1), True))
    evicted = runs[0].p.snapshot().lists_total
    assert any(key[1] == "evicted" and n > 100 for key, n in evicted.items()), evicted


def test_on_seconds_and_dead_letters_keep_their_order_in_a_batch() -> None:
    """Event times in epoch seconds are told (``on_seconds``) in record order with the dead
    letters of invalid records, whichever engine and however offered."""
    t0 = T0 // 1000
    records = [
        json.dumps(
            {"type": "impression", "request_id": f"r{i}", "timestamp": t0 + i, "query_id": "q"}
            | {"results": ["a", "b"]}
        ).encode()
        if i % 3
        else b"{" + str(i).encode()
        for i in range(30)
    ]
    rows = [(raw, i, -1) for i, raw in enumerate(records)]
    traces = []
    for cls in (Pipeline, NativePipeline):
        for batch in (False, True):
            trace: list[object] = []

            def dead(raw: bytes, why: object, source: str, offset: int, t: Any = trace) -> None:
                t.append(("dead", raw, why, source, offset))

            def seconds(ts: int, source: str, t: Any = trace) -> None:
                t.append(("s", ts, source))

            p = cls(Settings().evaluation, on_seconds=seconds, dead_letter=dead)
            if batch:
                p.offer_batch(rows, "in")
            else:
                for raw, offset, ms in rows:
                    p.offer(raw, "in", offset, ms)
            trace.append(repr(p.snapshot().intake))
            traces.append(trace)
    assert traces[0][0][0] == "dead"  # type: ignore[index]
    assert traces[0][1:3] == [("s", t0 + 1, "in"), ("s", t0 + 2, "in")]
    assert len(traces[0]) == 31  # (20 told, 10 dead letters, the intake)
    assert traces[1:] == [traces[0]] * 3


def test_the_gil_is_released_while_a_batch_runs() -> None:
    """Another thread runs while the core runs a batch: woken just before the call, it gets
    the GIL long before the call returns (held, it would get it only after)."""
    from streameval import _native

    p = NativePipeline(Settings().evaluation)
    imp = '{"type":"impression","request_id":"r%d","timestamp":%d,"query_id":"q","results":["a"]}'
    # one event time: no list comes due, the whole batch runs in one call (~0.3 s)
    rows = [((imp % (i, T0)).encode(), i, -1) for i in range(200_000)]
    batch = _native.RecordBatch(rows, "s")
    go, ran = threading.Event(), []
    thread = threading.Thread(target=lambda: (go.wait(), ran.append(time.perf_counter())))
    thread.start()
    start = time.perf_counter()
    go.set()
    watermark, _, _, effects = p._core.offer_batch(batch, None, None)
    end = time.perf_counter()
    thread.join()
    assert (watermark, batch.done, batch.intake()[:2]) == (None, True, (200_000, 200_000))
    assert effects == [(3, T0, 0), (5, 0, 0)]  # its bucket noted; "accepted" "impression" made
    assert ran[0] - start < (end - start) / 2, (ran[0] - start, end - start)


def test_a_callback_that_raises_mid_batch_leaves_the_records_run_counted() -> None:
    """A dead letter that cannot be written propagates, as from ``offer``; the records the core
    ran in that call (here all four: no list came due) are counted, and read."""

    def dead(raw: bytes, why: object, source: str, offset: int) -> None:
        raise RuntimeError("the dead-letter topic is gone")

    p = NativePipeline(Settings().evaluation, dead_letter=dead)
    imp = '{"type":"impression","request_id":"r%d","timestamp":%d,"query_id":"q","results":["a"]}'
    rows = [((imp % (i, T0)).encode() if i != 1 else b"{", i, -1) for i in range(4)]
    with pytest.raises(RuntimeError, match="dead-letter"):
        p.offer_batch(rows, "s")
    intake = p.snapshot().intake
    assert (intake.records_read, intake.accepted, intake.invalid) == (
        4,
        {"impression": 3},
        {"bad_json": 1},
    )
    assert p.read_positions() == {"s": 4}


def test_a_list_evicted_in_a_batch_leaves_no_early_score() -> None:
    """As test_native_scorelists' eviction case, the records offered in one batch: the core
    evicts inside the batch and drops the evicted list's kept early judged score itself."""
    from tests.unit.test_native_scorelists import T0 as S0
    from tests.unit.test_native_scorelists import engines, impression, judgment

    evaluation = {"max_open_lists": 2, "allowed_lateness": 0, "bucket": 1_000}
    (_, _), (rs, _) = engines({**evaluation, "windows": [4_000]})
    assert isinstance(rs, NativePipeline)
    rs.add_source("s")
    rs.offer(judgment("q1", "a", "r1", 2.0, S0), "judgments")
    rows = [(impression(i, S0 + 10 * i, "q1", ["a"]), i, -1) for i in range(4)]
    rs.offer_batch([*rows, (impression(9, S0 + 1_500, "q1", ["a"]), 4, -1)], "s")
    core = rs._core
    assert (core.open_lists, core.early_kept) == (2, 1)  # r3 passed and kept, r9 not passed
    rows = [(impression(i, S0 + 1_600 + i, "q1", ["a"]), i, -1) for i in range(10, 13)]
    rs.offer_batch(rows, "s")  # evicts r3 (and r9, r10) inside the batch
    assert (core.open_lists, core.early_kept) == (2, 0)
