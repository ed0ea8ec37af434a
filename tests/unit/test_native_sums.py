"""The detectors' per-query sums kept in the native engine's core (docs/native.md "Detector
sums in the core") against the Python reference, :class:`~streameval.detect.stash.Stash`.

Two levels. The stash alone: ``CoreStash`` (an ``EngineCore``'s ``QuerySums``) and ``Stash``
driven by the same calls as ``Detectors`` makes them (add, take, clear, a state loaded, a
bucket ingested), every bucket taken compared by ``repr`` (floats bit for bit: both add each
list's value in the order given). The whole engine: both engines built as ``replay`` builds them
but without ``on_scored`` (so the native core adds each list to the sums itself and builds no
``ScoredList``, ``CoreFolds._sums_inline``), over hypothesis logs (resets, caps under pressure,
several sources) and simulator logs (also with judge families and interleaving, whose batches
take the Python back half between inline ones), snapshots (the detectors' rows among them)
compared by ``repr`` at every look; a restore round trip; the judged floor of a restored source
(the Python path while it is set); ``Detectors.ingest`` into the core's stashes.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tests.unit.test_native_engine as engine_test
from streameval import native
from streameval.config import Settings
from streameval.detect import Detectors
from streameval.detect.spec import DetectionSpec
from streameval.detect.stash import Stash
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.native_sums import CoreStash
from streameval.values import IMPLICIT, JUDGED
from tests.ci import require_native
from tests.unit.test_native_engine import Step, evaluations, run_both, sim_steps, steps

require_native("native detector sums")

from streameval import _native  # noqa: E402  (after the guard)

B = 1_000
SEGMENTS = (("x", "a"), ("y", "a"), ("__other__", "__other__"), ())
VALUES = st.none() | st.sampled_from((0.0, 1.0, 0.5, 1 / 3, 0.1, 2 / 7, 0.123456789))


# --- the stash alone --------------------------------------------------------------------------


@st.composite
def stash_calls(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 80))):
        op = draw(st.sampled_from(("add", "add", "add", "add", "take", "clear", "load", "ingest")))
        if op == "add":
            ts = draw(st.integers(-1_500, 6_000))
            ndcg = tuple(draw(st.lists(VALUES, min_size=3, max_size=3)))
            calls.append(("add", ts, draw(st.sampled_from(SEGMENTS)), draw(QUERIES), ndcg))
        elif op == "take":
            calls.append(("take", draw(st.integers(-2_000, 8_000))))
        elif op == "clear":
            calls.append(("clear",))
        elif op == "load":
            calls.append(("load", draw(st.none() | st.integers(-2, 6).map(lambda b: b * B))))
        else:
            parts = draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(SEGMENTS),
                        st.integers(0, 1),
                        st.dictionaries(
                            QUERIES, st.tuples(st.integers(1, 4), VALUES_SET, VALUES_SET)
                        ),
                    ),
                    max_size=3,
                )
            )
            calls.append(("ingest", draw(st.integers(-1, 6)) * B, parts))
    return calls


QUERIES = st.sampled_from(("q1", "q2", "q3", "é"))
VALUES_SET = st.sampled_from((0.0, 0.75, 1 / 3, 2.5))


def _apply(stash: Any, call: tuple[Any, ...]) -> object:
    """One call as ``Detectors`` makes it (``load``: ``Detectors.load``; ``ingest``:
    ``Detectors.ingest``'s stash part)."""
    op, *args = call
    if op == "add":
        stash.add(*args)
        return None
    if op == "take":
        return stash.take(*args)
    if op == "clear":
        stash.clear()
        return None
    if op == "load":
        stash.clear()
        stash.closed = args[0]
        return None
    bucket_ms, parts = args
    if stash.closed is not None and bucket_ms < stash.closed:
        stash.ignored += sum(int(a[0]) for _, _, pq in parts for a in pq.values())
        return None
    for segment, j, per_query in parts:
        if j < len(stash_positions(stash)):
            stash.merge(bucket_ms, segment, j, per_query)
    stash.leave()
    return None


def stash_positions(stash: Any) -> tuple[int, ...]:
    return stash.positions if isinstance(stash, Stash) else stash.watched


class _Noted(CoreStash):
    __slots__ = ("watched",)


def _core_stash(positions: tuple[int, ...]) -> _Noted:
    core = _native.EngineCore(**native.join_options(Settings().evaluation))
    assert core.watch_sums(JUDGED, B, list(positions))
    stash = _Noted(core, JUDGED)
    stash.watched = positions
    return stash


@settings(max_examples=60, deadline=None)
@given(calls=stash_calls(), positions=st.sampled_from(((2,), (0, 2), (1,))))
def test_the_core_stash_answers_as_the_python_stash(
    calls: list[tuple[Any, ...]], positions: tuple[int, ...]
) -> None:
    py, rs = Stash(B, positions), _core_stash(positions)
    for n, call in enumerate(calls):
        want, got = _apply(py, call), _apply(rs, call)
        # repr: floats bit for bit, counts as ints, segments and queries in first-seen order
        assert repr(got) == repr(want), (n, call)
        assert (rs.ignored, rs.closed) == (py.ignored, py.closed), (n, call)
    assert repr(rs.take(10**9)) == repr(py.take(10**9))


def test_a_query_sums_in_the_order_its_lists_came() -> None:
    """Golden value: 0.1 + 0.2 + 0.3 in that order is 0.6000000000000001 (not 0.6)."""
    rs = _core_stash((0,))
    for x in (0.1, 0.2, 0.3):
        rs.add(5, ("s",), "q", (x,))
    rs.add(2_500, ("s",), "q", (None,))  # no NDCG@k: no bucket opened
    [(b, data)] = rs.take(2_000)
    assert b == 0
    (count, total, squares) = data[("s",)][0]["q"]
    assert (count, total) == (3, 0.6000000000000001)
    assert squares == 0.1 * 0.1 + 0.2 * 0.2 + 0.3 * 0.3
    rs.add(500, ("s",), "q", (1.0,))  # a closed bucket: ignored
    assert rs.ignored == 1 and rs.take(10**9) == []


# --- the whole engine -------------------------------------------------------------------------


class QuietRun(engine_test.Run):
    """``Run`` of test_native_engine without ``on_scored`` (what ``replay`` builds): the native
    core then keeps the detectors' sums and builds no ``ScoredList`` for them."""

    def __init__(
        self, config: dict[str, Any], engine: str, detectors: type[Detectors] | None = None
    ) -> None:
        spec = DetectionSpec.from_settings(engine_test.settings_for(config, engine))
        options: dict[str, Any] = {}
        if detectors is not None and spec is not None:
            options["detectors"] = detectors(spec)
        super().__init__(config, engine, on_scored=False, **options)

    def look(self) -> tuple[object, ...]:
        det, srm = self.ev.detectors, self.ev.srm
        ignored = (None if det is None else det.ignored, None if srm is None else srm.ignored)
        return (*super().look(), ignored)


def quiet_both(config: dict[str, Any], log: list[Step]) -> tuple[QuietRun, QuietRun]:
    py, rs = run_both(config, log, QuietRun)
    assert isinstance(rs.p, NativePipeline)
    det = rs.ev.detectors
    if det is not None and rs.p._core_folds:
        # the core keeps the sums and adds each list itself
        assert rs.p._sums_inline()
        assert all(isinstance(det._stash[r], CoreStash) for r in det._stash)
    return py, rs


DETECTION = st.fixed_dictionaries(
    {
        "min_lists": st.sampled_from((2, 3)),
        "ks": st.sampled_from(((1,), (1, 3), (3, 10))),
        "relevance": st.sampled_from((("judged", "implicit"), ("implicit",), ("judged",))),
        "detectors": st.sampled_from((("vs_control", "vs_baseline"), ("vs_baseline",))),
    }
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, detection=DETECTION, log=steps())
def test_generated_logs_detect_alike(
    evaluation: dict[str, Any], detection: dict[str, Any], log: list[Step]
) -> None:
    if "arm" in evaluation["segment_labels"]:  # vs_control, and the sample-ratio counter
        evaluation = {**evaluation, "control": {"arm": "x"}}
    else:
        detection = {**detection, "detectors": ("vs_baseline",)}
    quiet_both({"evaluation": evaluation, "detection": detection}, log)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the lists handed to the native engine's detectors one by one (a ``ScoredList``
    built for them: ``Detectors.add`` of detectors fed by the core)."""
    calls = [0]
    original = Detectors.add

    def counted(self: Detectors, scored: Any) -> None:
        if any(isinstance(stash, CoreStash) for stash in self._stash.values()):
            calls[0] += 1
        original(self, scored)

    monkeypatch.setattr(Detectors, "add", counted)
    return calls


SMALL = {"detection": {"min_lists": 5}, "evaluation": {"control": {"arm": "control"}}}


@pytest.mark.parametrize(
    ("config", "sim", "inline_only"),
    [
        (SMALL, {}, True),  # the shipped defaults (but warm-up): no ScoredList to Python
        (SMALL, {"llm_judge": "gpt", "llm_rate": 5.0}, False),  # families: the Python half
        (
            {"evaluation": {"attribution_window": 5_000, "max_open_lists": 300, "bucket": 2_000}},
            {"interleaving": True},
            False,
        ),  # teams, caps under pressure, attribution longer than the bucket
        ({"evaluation": {"attribution_window": 500, "bucket": 5_000}}, {}, True),
    ],
)
def test_simulator_logs_detect_alike(
    monkeypatch: pytest.MonkeyPatch,
    config: dict[str, Any],
    sim: dict[str, object],
    inline_only: bool,
) -> None:
    calls = _counting(monkeypatch)
    py, _ = quiet_both(config, sim_steps(8_000, **sim))
    det = py.ev.detectors
    assert det is not None
    rows = det.rows()
    assert len(rows) >= 2 and any(r.statistic > 0 for r in rows)  # series really stepped
    lists = sum(
        n for (_, outcome), n in py.p.snapshot().lists_total.items() if outcome != "evicted"
    )
    assert lists > 500
    if inline_only:
        assert calls[0] == 0  # the native core built no ScoredList for the detectors
    else:
        assert calls[0] > 0  # some batches took the Python back half


def test_a_restore_round_trip_with_the_sums_in_the_core() -> None:
    log = sim_steps(8_000)
    config = {
        "evaluation": {"attribution_window": 5_000, "bucket": 5_000, "windows": [60_000]},
        **{"detection": {"min_lists": 5}},
    }
    commit, buckets = engine_test.restore_round_trip(config, log[:-3], len(log) * 2 // 3, QuietRun)
    assert min(commit.values()) > 1_000 and buckets > 5


class FloorDetectors(Detectors):
    """Detectors that say they hold the judged scores of every bucket before 5 s past T0
    (``HoldsJudgedFloor``, as the group collector does): the early pass skips those lists."""

    def judged_floor(self, source: str) -> int | None:
        return engine_test.T0 + 5_000


def test_a_judged_floor_keeps_the_python_path_and_the_same_figures() -> None:
    config = {"evaluation": {"attribution_window": 3_000, "bucket": 1_000}}
    log = sim_steps(6_000)
    runs = []
    for engine in ("python", "native"):
        run = QuietRun(config, engine, FloorDetectors)
        for source in engine_test.SOURCES:
            run.p.restore_source(source, None, 0)
        for step in log:
            run.step(step)
        runs.append(run)
    py, rs = runs
    assert rs.trace == py.trace
    assert isinstance(rs.p, NativePipeline)
    assert rs.p._judged.has_floors and not rs.p._sums_inline()
    assert rs.p._core_folds


def test_ingest_into_the_core_stashes_as_into_the_python_ones() -> None:
    s = Settings.model_validate(
        {"evaluation": {"segment_labels": ["arm"]}, "detection": {"min_lists": 2, "ks": [1, 10]}}
    )
    spec = DetectionSpec.from_settings(s)
    assert spec is not None
    py, fed = Detectors(spec), Detectors(spec)
    core = _native.EngineCore(**native.join_options(s.evaluation))
    for relevance in (IMPLICIT, JUDGED):
        bucket_ms, positions = fed.summed()[relevance]
        assert core.watch_sums(relevance, bucket_ms, list(positions))
    fed.feed_from({r: CoreStash(core, r) for r in (IMPLICIT, JUDGED)})
    bucket = spec.bucket_ms
    seg_a, seg_b = ("control",), ("b",)  # vs_control: b against the control arm
    for det in (py, fed):
        for i in range(6):
            data = {
                (seg_a, 10): {"q1": (3, 1.5 - i / 10, 0.9), "q2": (1, 0.25, 0.0625)},
                (seg_b, 10): {"q1": (2, 1.0 + i / 7, 0.75)},
                (seg_a, 5): {"q9": (1, 1.0, 1.0)},  # a k not watched: skipped
            }
            det.ingest(IMPLICIT, i * bucket, data)
            det.ingest(JUDGED, i * bucket, data)
        det.advance(6 * bucket)
        det.advance_judged(3 * bucket)
        det.ingest(JUDGED, 0, {(seg_a, 10): {"q1": (4, 1.0, 1.0)}})  # closed: 4 ignored
    assert fed.ignored == py.ignored == 4
    assert repr(fed.rows()) == repr(py.rows())
    assert len(py.rows()) >= 4
    fed.reset()
    py.reset()
    fed.advance_judged(9 * bucket)
    py.advance_judged(9 * bucket)
    assert repr(fed.rows()) == repr(py.rows())
    assert fed.dump() == py.dump()
