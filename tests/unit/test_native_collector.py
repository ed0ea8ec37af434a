"""The daemon's collector fed by the native core's sums (docs/native.md "The daemon's collector
fed by sums") against the Python engine, the reference: both evaluators built as the daemon
builds them with its state topic (``runtime.compose.evaluation_for``: a
:class:`~streameval.group.collector.PartitionCollector` as the feed, no SRM counter, ``persist``
on), fed the same records and told the same, the collector assigned sources with progress
points (some restored, as a restart does: ``assign`` then ``restore_source``, whose judged floor
the native core then keeps), sources forgotten, the stream reset.

Compared after every step (by ``repr``: floats bit for bit) as in ``test_native_engine``: every
answer, and at each look the evaluator's snapshot, the horizon and watermark, the commit offsets,
and the collector's ``ready``, ``ready_pairs``, ``ready_srm``, ``progress``, ``sources``,
``ignored`` and ``judged_floor`` of every source; then what is ready is ``written``.

And the point of it: with the daemon's defaults the native engine's batch finalizes inline
(``NativeBatches._batch_inline``), so the collector's lists build no ``ScoredList``.
"""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks._common import sim_records
from streameval.detect.persisted import PAIRS, SRM, Progress
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from streameval.group.collector import PartitionCollector
from streameval.runtime.compose import evaluation_for
from tests.ci import require_native
from tests.unit.test_native_batch import chunked
from tests.unit.test_native_engine import SOURCES, T0, Step, settings_for, sim_steps, steps
from tests.unit.test_native_engine import run_both as engine_run_both

require_native("native collector")

B = 1_000  # the bucket of the generated configurations


class Run:
    """One evaluator built as the daemon builds it with a state topic, and its trace."""

    def __init__(self, config: dict[str, Any], engine: str) -> None:
        self.trace: list[str] = []
        #: every bucket written, as (source, kind, start)
        self.written: list[tuple[str, str, int]] = []
        s = settings_for(config, engine)
        assert s.kafka.state_topic  # (the default: the collector is the feed)
        built = evaluation_for(
            s, lambda raw, why, source, offset: self.trace.append(repr(("dead", raw, why)))
        )
        assert built.collector is not None
        self.c: PartitionCollector = built.collector
        self.ev = built.evaluator
        self.p = self.ev.pipeline
        assert type(self.p) is (NativePipeline if engine == "native" else Pipeline)

    def step(self, step: Step) -> None:
        op, *args = step
        if op == "look":
            self.trace.append(repr(self.look()))
        elif op == "restore":  # a restart: the collector's progress, then the checkpoint
            source, progress = args
            self.c.assign(source, progress)
            self.p.restore_source(source, None, 0, None)
        elif op == "assign":
            self.c.assign(*args)
        elif op == "forget_source":  # a revoked partition: the collector forgets it too
            self.p.forget_source(*args)
            self.c.forget(*args)
        else:
            self.trace.append(repr((op, getattr(self.p, op)(*args))))

    def look(self) -> tuple[object, ...]:
        p, c = self.p, self.c
        before, buckets = p.unpersisted_buckets()
        if before is not None:
            p.mark_persisted(before)
        out = (
            self.ev.snapshot(),
            p.horizon,
            p.watermark,
            p.commit_offsets(),
            len(buckets),
            c.ready(),
            c.ready_pairs(),
            c.ready_srm(),
            c.progress(),
            sorted(c.sources),
            c.ignored,
            [c.judged_floor(s) for s in SOURCES],
        )
        written = [(s, r, b) for s, r, b, _ in c.ready()]
        written += [(s, PAIRS, b) for s, b, _ in c.ready_pairs()]
        written += [(s, SRM, b) for s, b, _ in c.ready_srm()]
        c.written(written)
        self.written += written
        return out


def run_both(config: dict[str, Any], steps: list[Step]) -> tuple[Run, Run]:
    """Both engines as the daemon builds them, compared after each step
    (test_native_engine's ``run_both`` over this file's ``Run``)."""
    return engine_run_both(config, steps, Run)


def _config(evaluation: dict[str, Any]) -> dict[str, Any]:
    # (the sample-ratio test is on by default: with segment labels, the lists per arm)
    return {"evaluation": evaluation}


progress_points = st.none() | st.sampled_from([T0 - T0 % B + i * B for i in range(-1, 4)])


@st.composite
def collector_steps(draw: st.DrawFn) -> list[Step]:
    """The engine test's generated log, the collector told around it: some sources restored
    first with progress points, assignments with progress along the way."""
    out: list[Step] = []
    for source in draw(st.sets(st.sampled_from(SOURCES), max_size=2)):
        progress = Progress(*(draw(progress_points) for _ in range(4)))
        out.append(("restore", source, progress))
    for step in draw(steps()):
        if draw(st.integers(0, 9)) == 0:
            progress = Progress(*(draw(progress_points) for _ in range(4)))
            out.append(("assign", draw(st.sampled_from(SOURCES)), progress))
        out.append(step)
    return out


evaluations = st.fixed_dictionaries(
    {
        "attribution_window": st.sampled_from((200, 1_000, 3_000)),
        "allowed_lateness": st.sampled_from((0, 200)),
        "bucket": st.just(B),
        "windows": st.just((2_000, 6_000)),
        "max_open_lists": st.sampled_from((2, 1_000_000)),
        "segment_labels": st.sampled_from((("ranker", "arm"), ())),
        "no_relevance": st.sampled_from(("skip", "zero")),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=collector_steps(), seed=st.integers(0, 2**16))
def test_generated_logs_collect_alike(
    evaluation: dict[str, Any], log: list[Step], seed: int
) -> None:
    # (the records in batches of random sizes: ``offer_batch``, which the native engine runs
    # inline in its core, stopping per bucket)
    run_both(_config(evaluation), chunked(log, random.Random(seed)))


def _restarted(steps: list[Step]) -> list[Step]:
    """A simulator log read by a restarted daemon: its sources restored first with the
    detector buckets of the first minutes written (so the judged floors are on)."""
    first = T0 - T0 % 60_000 + 120_000
    restored: list[Step] = [
        ("restore", s, Progress(first, first, first, first)) for s in ("s0", "s1")
    ]
    return restored + steps


def test_simulator_logs_collect_alike() -> None:
    config = {"evaluation": {"attribution_window": 5_000, "bucket": 5_000, "windows": [60_000]}}
    log = chunked(_restarted(sim_steps(10_000, llm_judge="gpt")), random.Random(0), whole=True)
    py, rs = run_both(config, log)
    assert any("'judged'" in t for t in py.trace)  # judged buckets collected
    assert py.c.ignored == rs.c.ignored > 0  # lists of the written buckets, not collected again
    # the native core collected those lists itself (with the judged floors of the restore)
    native: Any = rs.p
    assert native._judged.has_floors and native._batch_inline()


def test_interleaved_simulator_logs_collect_alike() -> None:
    config = {"evaluation": {"attribution_window": 5_000, "max_open_lists": 300}}
    py, _ = run_both(config, chunked(sim_steps(8_000, interleaving=True), random.Random(1)))
    kinds = {kind for _, kind, _ in py.written}
    assert {PAIRS, SRM, "implicit", "judged"} <= kinds, kinds  # every kind collected


def test_the_daemons_default_build_finalizes_inline() -> None:
    """With the daemon's default settings (state topic on), every consumer is fed by the core's
    sums: the batch loop finalizes inline, before and after a restore with judged floors."""
    run = Run({}, "native")
    p: Any = run.p
    assert p._batch_inline()
    run.step(("restore", "s0", Progress(T0, T0, T0, T0)))
    assert run.c.judged_floor("s0") == T0
    assert p._judged.has_floors and p._batch_inline()
    # the Python engine's collector is its own (no sums kept elsewhere)
    assert Run({}, "python").c._sums is None and run.c._sums is not None


def test_a_batch_of_the_daemons_default_build_stops_per_bucket() -> None:
    """20,000 simulator records of one partition in batches of 5,000: the core stops per
    bucket (about 100 times here), not per finalized list (over 2,000 times with the
    collector fed a ``ScoredList`` per list: the figure before it was fed by sums)."""
    run = Run({}, "native")
    p: Any = run.p
    rows = [(r.raw, i, -1) for i, r in enumerate(sim_records(20_000, start_ms=T0, queries=100))]
    p.add_source("s0")
    for i in range(0, len(rows), 5_000):
        p.offer_batch(rows[i : i + 5_000], "s0")
    p.finish()
    assert 0 < p.batch_stops < 200, p.batch_stops
    run.step(("look",))
    assert {kind for _, kind, _ in run.written} >= {"implicit", "judged", SRM}


def _impression(rid: str, ts: int) -> bytes:
    record = {"type": "impression", "request_id": rid, "timestamp": ts, "query_id": "q1"}
    return json.dumps({**record, "results": ["a", "b"]}).encode()


def test_sources_first_seen_together_keep_their_order() -> None:
    """Lists of s3, then s1, then s2 finalized between two looks of the collector: its sources
    (``progress()``'s order, written to the state topic) are in that order with either engine,
    whatever order the core's sums are named in."""
    config = {"evaluation": {"attribution_window": 200, "bucket": B}}
    log: list[Step] = [("add_source", s) for s in ("s1", "s2", "s3")]
    for n, source in enumerate(("s3", "s1", "s2")):
        log.append(("offer", _impression(f"r{n}", T0 + n), source, 0, -1))
    log += [("finish",), ("look",)]
    py, rs = run_both(config, log)
    assert list(py.c.progress()) == list(rs.c.progress()) == ["s3", "s1", "s2"]
