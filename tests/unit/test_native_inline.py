"""The native engine's batch that finalizes inline and stops per bucket (docs/native.md "A batch
that stops per bucket") against the Python engine, the reference.

Both engines built as ``replay`` builds them (``Evaluator``: the default detectors, the
sample-ratio counter, interleaving; no ``on_scored``, so the native core keeps the consumers'
sums and its batch loop finalizes, folds, expires and evicts at due points itself), fed the same
records through ``offer_batch`` (the Python engine: ``offer`` per row), compared after every step
by ``repr`` (floats bit for bit, so the order-sensitive sums too): every snapshot (windows,
totals, intake, detectors' rows, SRM, interleaving, judges), horizon, watermark, offsets,
state-topic buckets, and the detectors' and counter's ignored lists. Logs: hypothesis (several
sources, late and unmatched clicks, caps under pressure, resets, judgments between impressions,
attribution windows shorter than the bucket) and the simulator's (also with judge families and
interleaving: batches that need the Python back half, their lists held for it). And the stops:
far fewer than the due points.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks._common import sim_records
from streameval.engine.native_pipeline import NativePipeline
from tests.ci import require_native
from tests.unit.test_native_engine import SOURCES, T0, Step, evaluations, run_both, steps
from tests.unit.test_native_sums import QuietRun

require_native("native batch inline")


def batched(log: list[Step], cuts: list[int]) -> list[Step]:
    """``log`` with each run of ``offer`` steps of one source as ``offer_batch`` steps, cut
    after the offers whose index is in ``cuts``."""
    out: list[Step] = []
    rows: list[tuple[bytes, int, int]] = []
    source: str | None = None
    n = 0

    def flush() -> None:
        nonlocal rows
        if rows:
            out.append(("offer_batch", rows, source))
            rows = []

    for step in log:
        if step[0] != "offer":
            flush()
            out.append(step)
            continue
        _, raw, src, offset, record_ms = step
        if src != source:
            flush()
            source = src
        rows.append((raw, offset, record_ms))
        n += 1
        if n in cuts:
            flush()
    flush()
    return out


def inline_both(config: dict[str, Any], log: list[Step]) -> tuple[QuietRun, QuietRun]:
    py, rs = run_both(config, log, QuietRun)
    assert isinstance(rs.p, NativePipeline)
    return py, rs


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    evaluation=evaluations,
    log=steps(),
    cuts=st.lists(st.integers(1, 70), max_size=6),
    min_lists=st.sampled_from((2, 3)),
)
def test_generated_logs_in_batches_evaluate_alike(
    evaluation: dict[str, Any], log: list[Step], cuts: list[int], min_lists: int
) -> None:
    control = {"control": {"arm": "x"}} if "arm" in evaluation["segment_labels"] else {}
    config = {"evaluation": {**evaluation, **control}, "detection": {"min_lists": min_lists}}
    if not control:
        config["detection"]["detectors"] = ["vs_baseline"]
    inline_both(config, batched(log, cuts))


def sim_batches(n: int, chunk: int, **sim: object) -> list[Step]:
    """``n`` simulator records on one source, as ``replay`` offers a log: in chunks of
    ``chunk`` lines, a look every 4 chunks, then idle and the end."""
    out: list[Step] = [("add_source", "s0")]
    rows: list[tuple[bytes, int, int]] = []
    for i, r in enumerate(sim_records(n, start_ms=T0, queries=100, **sim)):
        rows.append((r.raw, i, -1))  # type: ignore[attr-defined]
        if len(rows) == chunk:
            out.append(("offer_batch", rows, "s0"))
            rows = []
            if i // chunk % 4 == 3:
                out.append(("look",))
    if rows:
        out.append(("offer_batch", rows, "s0"))
    out += [("set_idle", s) for s in SOURCES]
    out += [("look",), ("finish",), ("look",)]
    return out


@pytest.mark.parametrize(
    ("config", "sim", "inline"),
    [
        ({"detection": {"min_lists": 5}}, {}, True),  # the shipped defaults (but warm-up)
        # windows of one bucket, attribution shorter than the bucket
        (
            {"evaluation": {"attribution_window": 500, "bucket": 5_000, "windows": [5_000]}},
            {},
            True,
        ),
        # caps under pressure: lists evicted inline
        ({"evaluation": {"max_open_lists": 40, "max_pending_clicks": 30}}, {}, True),
        # judge families: the Python back half once two are seen
        ({}, {"llm_judge": "gpt", "llm_rate": 5.0}, False),
        # teams: the lists finalized with one held for the Python back half (a stop each)
        (
            {"evaluation": {"attribution_window": 5_000, "bucket": 2_000}},
            {"interleaving": True},
            False,
        ),
    ],
)
def test_simulator_logs_in_batches_evaluate_alike(
    config: dict[str, Any], sim: dict[str, object], inline: bool
) -> None:
    log = sim_batches(8_000, 500, **sim)
    py, rs = inline_both(config, log)
    p = rs.p
    assert isinstance(p, NativePipeline)
    totals = py.p.snapshot().lists_total
    lists = sum(n for (r, o), n in totals.items() if o != "evicted" and r == "implicit")
    evicted = totals.get(("implicit", "evicted"), 0)
    assert lists + evicted > 500
    if "max_open_lists" in config.get("evaluation", {}):
        assert evicted > 100  # caps under pressure: evicted (counted in the loop)
    if inline:
        # the loop handled most due points itself: far fewer stops than lists finalized
        assert p.batch_stops * 3 < lists + evicted, (p.batch_stops, lists, evicted)
    det = py.ev.detectors
    assert det is not None and len(det.rows()) >= 2


def test_the_batch_stops_per_bucket_not_per_list() -> None:
    """6,000 simulator records, an attribution window of 2 s, buckets of 60 s: a stop per due
    point without the loop's own finalization (about one per impression), a few per bucket
    with it."""
    log = sim_batches(6_000, 1_000)
    counts = {}
    for inline in (False, True):
        run = QuietRun({"evaluation": {"attribution_window": 2_000}}, "native")
        p = run.p
        assert isinstance(p, NativePipeline)
        if not inline:
            p._batch_inline = lambda: False  # type: ignore[method-assign]
        for step in log:
            run.step(step)
        counts[inline] = (p.batch_stops, run.trace[-1])
    (off, look_off), (on, look_on) = counts[False], counts[True]
    assert look_off == look_on  # the same figures either way
    impressions = sum(
        json.loads(raw).get("type") == "impression"
        for step in log
        if step[0] == "offer_batch"
        for raw, _, _ in step[1]
        if raw.startswith(b"{")
    )
    assert off > impressions // 2  # about one stop per impression's finalization
    assert on * 20 < off, (on, off)
