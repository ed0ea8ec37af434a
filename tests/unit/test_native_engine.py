"""The native engine (``NativePipeline``, docs/native.md "The engine assembled") against the
Python engine (``Pipeline``), the reference, whole: both built as ``replay`` builds them
(:class:`~streameval.engine.evaluator.Evaluator`: the default detectors, the SRM counter,
interleaving; ``persist`` on, as with a state topic), fed the same records and told the same.

Compared after every step: each ``Offered`` answer (its invalid reason, detail and field), every
scored list as it is scored (``on_scored``), every dead letter; at each look, the evaluator's
whole snapshot (windows, totals, intake, detectors' rows, SRM, interleaving, judges), the
horizon and watermark, ``commit_offsets``, ``counted_through`` and ``read_positions`` of every
source, and the buckets of ``unpersisted_buckets`` through the state topic's codec (then marked
persisted). Everything is compared by ``repr``, so floats compare bit for bit (``repr`` of a
float round-trips its bits; ``-0.0`` differs from ``0.0``). Then a restore round trip: the state
one run committed restored into a fresh engine of each kind, the log re-read from the committed
offsets, the same figures.

Logs: hypothesis-generated (several sources with offsets, duplicates, late and unmatched clicks,
clicks before impressions, caps under pressure, idle sources, ``follow``, judgments and keyed
judgments with tombstones, invalid records, record timestamps for the future-skew check) over
config variants, and simulator logs (also with an LLM judge, so judge families are active; also
interleaved). Without the extension module the tests skip, except in CI (``CI=true``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks._common import sim_records
from streameval.config import Settings, SourceFormat
from streameval.engine.evaluator import Evaluator
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from streameval.events.decode import Invalid
from streameval.events.formats import Formats
from streameval.values import ACCEPTED, INVALID
from streameval.windows.persisted import decode_bucket, encode_bucket
from tests.ci import require_native
from tests.unit.events.test_mapping import SHOP
from tests.unit.test_native_join import OTHER_RECORDS, T0, clicks, impressions

require_native("native engine")

SOURCES = ("s0", "s1", "s2", "s3")
Step = tuple[Any, ...]


class Run:
    """One engine built as ``replay`` builds it, and the trace of everything it answered."""

    def __init__(
        self, config: dict[str, Any], engine: str, *, on_scored: bool = True, **options: Any
    ) -> None:
        """``on_scored``: every scored list traced (else none, as ``replay`` builds it: the
        native core then keeps the consumers' sums); ``options``: the ``Evaluator``'s."""
        self.trace: list[str] = []
        s = settings_for(config, engine)
        formats = Formats(s.input, s.evaluation.max_record_bytes)

        def format_of(source: str) -> SourceFormat:
            return s.input.topics.get(source, s.input.default)

        self.ev = Evaluator(
            s,
            decoder_for=lambda source: formats.decoder(format_of(source)),
            format_of=format_of,
            on_scored=(lambda scored: self.trace.append(repr(scored))) if on_scored else None,
            dead_letter=lambda raw, why, source, offset: self.trace.append(
                repr(("dead", raw, why, source, offset))
            ),
            persist=True,
            **options,
        )
        self.p = self.ev.pipeline
        want = NativePipeline if engine == "native" else Pipeline
        assert type(self.p) is want

    def step(self, step: Step) -> None:
        op, *args = step
        if op == "look":
            self.trace.append(repr(self.look()))
            return
        self.trace.append(repr((op, getattr(self.p, op)(*args))))

    def look(self) -> tuple[object, ...]:
        p = self.p
        before, buckets = p.unpersisted_buckets()
        if before is not None:
            p.mark_persisted(before)
        return (
            self.ev.snapshot(),
            p.horizon,
            p.watermark,
            p.commit_offsets(),
            p.read_positions(),
            {s: (p.counted_through(s), p.persisted_before(s)) for s in SOURCES},
            before,
            [(s, start, encode_bucket(b)) for s, start, b in buckets],
        )


def settings_for(config: dict[str, Any], engine: str) -> Settings:
    """``config`` with ``evaluation.engine = engine``."""
    cfg = {**config, "evaluation": {**config.get("evaluation", {}), "engine": engine}}
    return Settings.model_validate(cfg)


class Traced(Protocol):
    """An engine run step by step, everything it answered in ``trace`` (:class:`Run`)."""

    trace: list[str]

    def step(self, step: Step) -> None: ...


R = TypeVar("R", bound=Traced)


def run_both(
    config: dict[str, Any], steps: list[Step], run: Callable[[dict[str, Any], str], R] = Run
) -> tuple[R, R]:
    """Both engines (``run``: how each is built and traced) through ``steps``, their traces
    compared after each."""
    py, rs = run(config, "python"), run(config, "native")
    for n, step in enumerate(steps):
        py.step(step)
        rs.step(step)
        assert rs.trace == py.trace, (n, step, _first_difference(py.trace, rs.trace))
    return py, rs


def _first_difference(want: list[str], got: list[str]) -> tuple[str, str]:
    for a, b in zip(want, got, strict=False):
        if a != b:
            return a, b
    return str(len(want)), str(len(got))


def restore_round_trip(
    config: dict[str, Any],
    steps: list[Step],
    cut: int,
    run: Callable[[dict[str, Any], str], Run] = Run,
) -> tuple[dict[str, int], int]:
    """The state each engine committed after ``steps[:cut]`` (its checkpoints and its buckets
    through the codec), restored into a fresh engine of each kind, the records re-read from the
    committed offsets (judgments from the start, as a restart re-reads its judgment topics):
    the same figures whichever engine committed and whichever restores (``run``: how each
    engine is built and traced)."""
    states = []
    for engine in ("python", "native"):
        first = run(config, engine)
        for step in steps[:cut]:
            first.step(step)
        p = first.p
        before, buckets = p.unpersisted_buckets()
        if before is not None:
            p.mark_persisted(before)
        state = [(s, start, encode_bucket(b)) for s, start, b in buckets]
        checkpoint = {s: (*p.counted_through(s), p.persisted_before(s)) for s in SOURCES}
        states.append((p.commit_offsets(), checkpoint, state))
    assert repr(states[0]) == repr(states[1])
    commit, checkpoint, state = states[0]
    traces = []
    for engine in ("python", "native"):
        again = run(config, engine)
        for source in SOURCES:
            again.p.restore_source(source, *checkpoint[source])
        for _, start, raw in state:
            bucket = decode_bucket(raw)
            again.p.load_bucket(start, bucket)  # type: ignore[arg-type]
        for step in steps:
            if step[0] == "offer" and step[3] >= 0 and step[3] < commit.get(step[2], 0):
                continue  # committed: not read again
            if step[0] == "forget_source":
                continue
            again.step(step)
        again.step(("look",))
        traces.append(again.trace)
    assert traces[0] == traces[1], _first_difference(traces[0], traces[1])
    return commit, len(state)


# --- generated logs -------------------------------------------------------------------------

JUDGMENTS = (
    b'{"type":"judgment","query_id":"q1","doc_id":"a","grade":2,"timestamp":1767225600000}',
    b'{"type":"judgment","query_id":"q2","doc_id":"b","grade":3,"judge":"llm:m",'
    b'"timestamp":1767225600100}',
    b'{"type":"judgment","query_id":"q1","doc_id":"c","grade":1,"judge":"r1",'
    b'"timestamp":1767225600200}',
)


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    out: list[Step] = [("add_source", s) for s in draw(st.sets(st.sampled_from(SOURCES)))]
    offered: list[bytes] = []
    offsets = dict.fromkeys(SOURCES, 0)
    now = T0
    for _ in range(draw(st.integers(1, 70))):
        kind = draw(
            st.sampled_from(
                ("imp", "imp", "click", "click", "click", "again", "other", "jud", "key", "ctl")
            )
        )
        source = draw(st.sampled_from(SOURCES))
        if kind == "ctl":
            op = draw(
                st.sampled_from(("set_idle", "advance", "follow", "look", "forget_source", "reset"))
            )
            args: tuple[object, ...] = {
                "set_idle": (source, draw(st.booleans())),
                "advance": (),
                "follow": (now + draw(st.integers(-500, 3_000)),),
                "look": (),
                "forget_source": (source,),
                "reset": (),
            }[op]
            out.append((op, *args))
            continue
        if kind == "key":
            key = draw(st.sampled_from((b"k1", b"k2")))
            raw = draw(st.none() | st.sampled_from(JUDGMENTS))
            out.append(("offer_judgment", raw, key, "judgments"))
            continue
        if kind == "again" and offered:
            raw = draw(st.sampled_from(offered)) + draw(st.sampled_from((b"", b"\r\n", b" ")))
        elif kind == "other":
            raw = draw(st.sampled_from(OTHER_RECORDS))
        elif kind == "jud":
            raw = draw(st.sampled_from(JUDGMENTS))
        else:
            now += draw(st.integers(0, 400))
            ts = max(0, now + draw(st.sampled_from((0, 0, -20, -150, 60, -600))))
            raw = draw(impressions(ts) if kind in ("imp", "again") else clicks(ts))
        offered.append(raw)
        record_ms = draw(st.sampled_from((-1, -1, -1, now, now - 150)))
        out.append(("offer", raw, source, offsets[source], record_ms))
        offsets[source] += 1
    out.append(("look",))
    out.append(("finish",))
    out.append(("look",))
    return out


evaluations = st.fixed_dictionaries(
    {
        "attribution_window": st.sampled_from((200, 1_000, 3_000)),
        "allowed_lateness": st.sampled_from((0, 200)),
        "bucket": st.just(1_000),
        "windows": st.just((2_000, 6_000)),
        "max_open_lists": st.sampled_from((2, 1_000_000)),
        "max_pending_clicks": st.sampled_from((1, 100_000)),
        "max_segments": st.sampled_from((1, 2, 100)),
        "segment_labels": st.sampled_from((("ranker", "arm"), ())),
        "ideal": st.sampled_from(("pool", "list")),
        "no_relevance": st.sampled_from(("skip", "zero")),
        "gain": st.sampled_from(("linear", "exponential")),
        "unjudged": st.sampled_from(("zero", "condensed")),
        "discount": st.sampled_from(("log2", "jarvelin")),
        "max_future_skew": st.sampled_from((100, 300_000)),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps())
def test_generated_logs_evaluate_alike(evaluation: dict[str, Any], log: list[Step]) -> None:
    run_both({"evaluation": evaluation}, log)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps(), cut=st.floats(0.2, 0.9))
def test_generated_logs_restore_alike(
    evaluation: dict[str, Any], log: list[Step], cut: float
) -> None:
    restore_round_trip({"evaluation": evaluation}, log[:-3], int(len(log) * cut))


# --- source formats ---------------------------------------------------------------------------

#: one source per format the native engine decodes (``[input]`` by topic: here by source)
FORMATS = {
    "input": {
        "topics": {
            "s0": {"format": "native"},
            "s2": {"format": "ubi"},
            "s3": {"format": "mapped", "mapping": "shop"},
        },
        "mappings": {"shop": {**SHOP, "timestamp_unit": "ms"}},
    }
}


def as_shop(raw: bytes) -> bytes:
    """A native impression or click as the shop mapping's record (tests/unit/events)."""
    try:
        e = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(e, dict) or e.get("type") not in ("impression", "click") or len(e) < 4:
        return raw  # (not a whole event: as it is)
    if e["type"] == "impression":
        hits = [{"item": {"id": d if isinstance(d, str) else d["doc_id"]}} for d in e["results"]]
        labels = e.get("labels", {})
        shop = {"kind": "search", "req": e["request_id"], "at": e["timestamp"], "hits": hits}
        shop |= {
            "q": e["query_id"],
            "model": labels.get("ranker"),
            "exp": {"arm": labels.get("arm")},
        }
    else:
        kind = "tap" if e.get("action", "click") == "click" else "buy"
        shop = {"kind": kind, "req": e["request_id"], "item": e["doc_id"], "at": e["timestamp"]}
        if "position" in e:
            shop["rank"] = e["position"]
    return json.dumps(shop).encode()


def as_ubi(raw: bytes) -> bytes:
    """A native impression as a UBI query (its request id the query id); else as it is."""
    try:
        e = json.loads(raw)
    except ValueError:
        return raw
    if not isinstance(e, dict) or e.get("type") != "impression":
        return raw
    hits = [d if isinstance(d, str) else d["doc_id"] for d in e["results"]]
    ubi = {"query_id": e["request_id"], "query_response_hit_ids": hits, "timestamp": e["timestamp"]}
    return json.dumps(ubi | {"user_query": e["query_id"]}).encode()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(evaluation=evaluations, log=steps())
def test_every_native_source_format_evaluates_alike(
    evaluation: dict[str, Any], log: list[Step]
) -> None:
    """The same logs with sources s0 native, s1 auto, s2 UBI (impressions as UBI queries) and
    s3 mapped JSON (the records as the shop mapping's)."""
    by_source = {"s2": as_ubi, "s3": as_shop}
    steps = []
    for original in log:
        step = original
        if step[0] == "offer" and step[2] in ("s2", "s0") and step[3] % 3 == 0:
            step = (step[0], step[1], "s3" if step[2] == "s0" else "s2", *step[3:])
        if step[0] == "offer" and step[2] in by_source:
            step = (step[0], by_source[step[2]](step[1]), *step[2:])
        steps.append(step)
    run_both({"evaluation": evaluation, **FORMATS}, steps)


# --- simulator logs -------------------------------------------------------------------------


def sim_steps(n: int, **config: object) -> list[Step]:
    """``n`` simulator records over three sources with offsets (impressions, clicks and
    judgments each their own), every 2,000 a look, then the sources idle and the end."""
    source_of = {"impression": "s0", "click": "s1", "judgment": "s2"}
    offsets = dict.fromkeys(SOURCES, 0)
    out: list[Step] = [("add_source", s) for s in SOURCES[:2]]  # (judgments: no event time)
    for i, r in enumerate(sim_records(n, start_ms=T0, queries=100, **config)):
        kind = json.loads(r.raw).get("type")  # type: ignore[attr-defined]
        source = source_of.get(kind, "s0")
        out.append(("offer", r.raw, source, offsets[source], -1))  # type: ignore[attr-defined]
        offsets[source] += 1
        if i % 2_000 == 1_999:
            out.append(("look",))
    out += [("set_idle", s) for s in SOURCES]
    out += [("look",), ("finish",), ("look",)]
    return out


SIM_CONFIGS: list[tuple[dict[str, Any], dict[str, object]]] = [
    ({}, {}),  # the shipped defaults
    ({}, {"llm_judge": "gpt", "llm_rate": 5.0}),  # judge families
    ({"evaluation": {"attribution_window": 5_000, "max_open_lists": 300}}, {"interleaving": True}),
]


@pytest.mark.parametrize(("config", "sim"), SIM_CONFIGS)
def test_simulator_logs_evaluate_alike(config: dict[str, Any], sim: dict[str, object]) -> None:
    steps = sim_steps(12_000, **sim)
    py, _ = run_both(config, steps)
    assert sum(t.startswith("ScoredList(") for t in py.trace) > 1_000  # lists really scored


def test_a_simulator_restore_round_trip_gives_the_same_figures() -> None:
    steps = sim_steps(8_000, llm_judge="gpt")
    config = {"evaluation": {"attribution_window": 5_000, "bucket": 5_000, "windows": [60_000]}}
    commit, buckets = restore_round_trip(config, steps[:-3], len(steps) * 2 // 3)
    assert min(commit.values()) > 1_000 and buckets > 5  # records skipped, buckets loaded


def test_a_judgment_the_python_decoder_refuses_is_invalid_as_python_says() -> None:
    """A record of a keyed judgment topic is applied through the source's Python decoder (by
    the Python rules): were it ever to refuse what the native one took, its answer is the one
    given (counted, dead-lettered), never a crash. A judgment read outside a keyed topic is
    decoded once, natively, and applied in the core (docs/native.md "Judgments applied in the
    core"): the Python decoder is not asked (the decoders agree: test_native_decode*.py)."""
    dead: list[object] = []
    asked: list[bytes] = []
    refused = Invalid("schema", "refused by the Python decoder")

    def refuse(raw: bytes) -> Invalid:
        asked.append(raw)
        return refused

    p = NativePipeline(
        Settings().evaluation,
        decoder_for=lambda source: refuse,
        dead_letter=lambda raw, why, source, offset: dead.append((why, source, offset)),
    )
    answer = p.offer(JUDGMENTS[0], "j", 3, judgment_key=b"k")
    assert (answer.outcome, answer.invalid) == (INVALID, refused)
    assert dead == [(refused, "j", 3)]
    assert p.snapshot().intake.invalid == {"schema": 1}
    assert p.offer(JUDGMENTS[0], "j", 4).outcome is ACCEPTED
    assert asked == [JUDGMENTS[0]]  # (the keyed record's only)
