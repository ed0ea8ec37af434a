"""The native windows stage (native/src/windows/, ``streameval._native.WindowsCore`` and
``IntakeCore``) against the Python one, the reference: ``WindowStore``, ``Totals``,
``SourceBuckets``, ``IntakeCounters`` and the state topic's bucket codec.

Hypothesis drives both with the same stream of operations over several window configurations:
scored lists (several segments, relevance sources and cutoffs, ``None`` values of skipped
lists, coverage, interleaved outcomes, lists folded into the windows or the totals only), a
horizon moving with evictions, rows asked for, buckets persisted per source and loaded back from
Python-written state records. Every row of every window is compared with its floats **bit for
bit** (the native sums add in Python's order), and so are the eviction answers, the totals, the
intake counters and the codec: the bytes the native side writes are Python's, and what it reads
of Python's bytes (and of damaged ones) is Python's bucket or Python's reason.

Without the extension module the tests skip, except in CI (``CI=true``), where a native engine
that was not built is a failure.
"""

from __future__ import annotations

import json
import math
import os
from itertools import islice
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.engine.intake import IntakeCounters
from streameval.sim import SimConfig, traffic
from streameval.snapshot import EngagementRow, Moments, NdcgRow
from streameval.values import (
    EVICTED,
    IMPLICIT,
    IMPLICIT_DEBIASED,
    JUDGED,
    NO_RELEVANCE,
    SCORED,
    Interleaved,
    Outcome,
    ScoredList,
    SourceScore,
)
from streameval.windows.persisted import BadState, SourceBuckets, decode_bucket, encode_bucket
from streameval.windows.spec import WindowSpec
from streameval.windows.store import Bucket, WindowStore
from streameval.windows.totals import Totals
from tests.ci import require_native

_native = require_native("native windows")

T0 = 1_700_000_000_000
#: examples per hypothesis test: NATIVE_WINDOWS_EXAMPLES=3000 for a long run (the stream test's
#: default takes about 2 s here, the damaged records' about 3 s)
EXAMPLES = int(os.environ.get("NATIVE_WINDOWS_EXAMPLES", "0"))
Config = tuple[list[int], int, tuple[int, ...], list[str]]
SEGMENTS = [(), ("",), ("mobile",), ("desktop",), ("__other__",), ("é", "日本"), ('a"\\\n', "")]
BOM = b"\xef\xbb\xbf"
RANKERS = ["A", "B", "ctrl", "é"]
SOURCES = ["t/0", "t/1", ""]
#: values that make float sums differ by order: thirds, tenths, tiny and huge magnitudes
NASTY = [0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1e-17, 1e-5, 0.7, 0.9999999999999999, 5e-324, 1.0, 0.0]


def bits(value: object) -> object:
    """``value`` with every float as its exact bits (``float.hex``): equal only to the bit."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return ("float", value.hex())
    if isinstance(value, (tuple, list)):
        return tuple(bits(v) for v in value)
    if isinstance(value, dict):
        return tuple((bits(k), bits(v)) for k, v in value.items())
    return value


def numbers(values: Any) -> tuple[str, ...]:
    """Accumulators as the bits of floats (counts are Python ints, native f64)."""
    return tuple(float(v).hex() for v in values)


def moments(m: Moments) -> tuple[int, float, float]:
    return (m.n, m.total, m.total_sq)


def python_rows(store: WindowStore, horizon: int | None) -> tuple[object, object]:
    ndcg, eng = store.rows(horizon)
    return (
        tuple(_ndcg_row(r) for r in ndcg),
        tuple(_engagement_row(r) for r in eng),
    )


def _ndcg_row(r: NdcgRow) -> tuple[object, ...]:
    cov = None if r.coverage is None else moments(r.coverage)
    return (r.window, r.relevance, r.segment, r.k, moments(r.ndcg), cov)


def _engagement_row(r: EngagementRow) -> tuple[object, ...]:
    return (
        r.window,
        r.segment,
        r.lists,
        r.clicked_lists,
        moments(r.reciprocal_rank),
        r.zero_click_lists,
    )


def python_bucket(b: Bucket) -> tuple[object, ...]:
    """A Python bucket in the shape of ``WindowsCore.decode_bucket``'s answer."""

    def table(t: dict[Any, list[float]]) -> tuple[object, ...]:
        return tuple((key, numbers(acc)) for key, acc in t.items())

    return (
        table(b.ndcg),
        table(b.coverage),
        table(b.engagement),
        tuple((key, tuple(acc)) for key, acc in b.interleaving.items()),
    )


def native_bucket(b: Any) -> tuple[object, ...]:
    ndcg, cov, eng, inter = b
    return (
        tuple((key, numbers(acc)) for key, acc in ndcg),
        tuple((key, numbers(acc)) for key, acc in cov),
        tuple((key, numbers(acc)) for key, acc in eng),
        tuple(inter),
    )


# --- strategies -----------------------------------------------------------------------------

values_st = st.one_of(
    st.sampled_from(NASTY), st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=True)
)


@st.composite
def configs(draw: st.DrawFn) -> Config:
    bucket = draw(st.sampled_from([1_000, 10_000, 60_000]))
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    ks = tuple(sorted(draw(st.sets(st.integers(1, 10), min_size=1, max_size=3))))
    sources = [IMPLICIT, JUDGED] + ([IMPLICIT_DEBIASED] if draw(st.booleans()) else [])
    return [n * bucket for n in sizes], bucket, ks, sources


@st.composite
def scored_lists(
    draw: st.DrawFn, bucket: int, ks: tuple[int, ...], relevances: list[str]
) -> ScoredList:
    ts = T0 + draw(st.integers(-bucket, 12 * bucket))
    sources = []
    for rel in draw(st.lists(st.sampled_from(relevances), unique=True, max_size=3)):
        skipped = draw(st.booleans())
        ndcg = tuple(None if skipped else draw(st.none() | values_st) for _ in ks)
        coverage = tuple(draw(values_st) for _ in ks) if rel == JUDGED else None
        sources.append(
            SourceScore(
                rel,
                NO_RELEVANCE if skipped else SCORED,
                ks,
                ndcg,
                tuple(0.0 for _ in ks),
                tuple(0.0 for _ in ks),
                coverage,
            )
        )
    interleaved = None
    if draw(st.booleans()):
        pairs = st.tuples(
            st.sampled_from(RANKERS),
            st.sampled_from(RANKERS),
            st.sampled_from(["win", "loss", "tie", "no_click"]),
        )
        interleaved = Interleaved(
            ("d1", "d2"),
            ("A", None),
            frozenset({"d1"}),
            {"d1": 1.0},
            draw(st.booleans()),
            tuple(draw(st.lists(pairs, max_size=4))),
        )
    clicked = draw(st.booleans())
    return ScoredList(
        request_id="r",
        query_id="q",
        timestamp=ts,
        labels={"device": "x"},
        segment=draw(st.sampled_from(SEGMENTS)),
        sources=tuple(sources),
        clicked=clicked,
        first_click_rank=draw(st.none() | st.integers(0, 12)),
        interacted=clicked or draw(st.booleans()),
        interleaved=interleaved,
        source=draw(st.sampled_from(SOURCES)),
    )


@st.composite
def streams(
    draw: st.DrawFn,
) -> tuple[tuple[list[int], int, tuple[int, ...], list[str]], list[tuple[Any, ...]]]:
    config = draw(configs())
    _, bucket, ks, sources = config
    lists = scored_lists(bucket, ks, [*sources, "judged:llm"])
    fold = st.tuples(st.just("fold"), lists, st.booleans(), st.booleans())
    op = st.one_of(
        fold,
        fold,
        fold,
        st.tuples(st.just("batch"), st.lists(lists, max_size=6), st.booleans(), st.booleans()),
        st.tuples(st.just("advance"), st.integers(0, 3 * bucket)),
        st.tuples(st.just("rows"), st.integers(-bucket, 20 * bucket)),
        st.tuples(st.just("outcome"), st.sampled_from(sources), st.sampled_from([EVICTED, SCORED])),
        st.tuples(st.just("evicted")),
        st.tuples(st.just("persist"), st.integers(0, 14)),
        st.tuples(st.just("load"), st.integers(-2, 14), st.lists(lists, min_size=1, max_size=4)),
    )
    return config, draw(st.lists(op, min_size=1, max_size=40))


# --- the stream -----------------------------------------------------------------------------


class Reference:
    """The Python side, fed as Pipeline._fold feeds it."""

    def __init__(self, windows: list[int], bucket: int, sources: list[str]) -> None:
        self.store = WindowStore([WindowSpec(w, bucket) for w in windows])
        self.totals = Totals()
        self.unpersisted = SourceBuckets(bucket)
        self.sources = sources

    def fold(self, scored: ScoredList, window: bool, count: bool) -> None:
        if window:
            self.store.add(scored)
            self.unpersisted.add(scored.source, scored)
        if count:
            self.totals.count_list(scored)


def check_same_state(ref: Reference, core: Any, horizon: int | None) -> None:
    assert bits(core.rows(horizon)) == bits(python_rows(ref.store, horizon))
    assert core.next_eviction() == ref.store.next_eviction()
    assert core.starts() == sorted(ref.store._buckets)
    for start, bucket in ref.store._buckets.items():
        assert core.encode_bucket(start) == encode_bucket(bucket)
    assert bits(core.cumulative()) == bits(
        [(r.relevance, r.segment, r.k, r.ndcg_sum, r.lists_scored) for r in ref.totals.cumulative()]
    )
    assert list(core.lists_total().items()) == list(ref.totals.lists_total().items())


@settings(
    max_examples=EXAMPLES or 100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(streams())
def test_a_stream_gives_the_same_windows_totals_and_state_records(
    stream: tuple[Config, list[tuple[Any, ...]]],
) -> None:
    (windows, bucket, ks, sources), ops = stream
    ref = Reference(windows, bucket, sources)
    core = _native.WindowsCore(windows, bucket, list(ks), sources)
    horizon: int | None = None
    for op in ops:
        kind = op[0]
        if kind == "fold":
            _, scored, window, count = op
            ref.fold(scored, window, count)
            core.fold(scored, window, count)
        elif kind == "batch":
            _, batch, window, count = op
            for scored in batch:
                ref.fold(scored, window, count)
            core.fold_batch(batch, window, count)
        elif kind == "advance":  # the horizon only moves forward, evicting as it goes
            horizon = (T0 if horizon is None else horizon) + op[1]
            ref.store.evict(horizon)
            core.evict(horizon)
        elif kind == "rows":  # rows at any horizon, past ones included
            rows = python_rows(ref.store, T0 + op[1])
            assert bits(core.rows(T0 + op[1])) == bits(rows)
            event(f"ndcg rows: {min(len(rows[0]), 10)}")
        elif kind == "outcome":
            ref.totals.count_outcome(op[1], op[2])
            core.count_outcome(op[1], op[2])
        elif kind == "evicted":
            for relevance in sources:
                ref.totals.count_outcome(relevance, EVICTED)
            core.count_evicted()
        elif kind == "persist":
            before = T0 + op[1] * bucket
            expected = [(s, b, encode_bucket(bk)) for s, b, bk in ref.unpersisted.complete(before)]
            assert core.complete(before) == expected
            ref.unpersisted.persisted(before)
            core.persisted(before)
        elif kind == "load":  # a Python-written state record, merged on both sides
            _, at, batch = op
            written = Bucket()
            for scored in batch:
                written.fold(scored)
            raw = encode_bucket(written)
            start = T0 + at * bucket
            decoded = decode_bucket(raw)
            assert isinstance(decoded, Bucket)
            assert native_bucket(_native.WindowsCore.decode_bucket(raw)) == python_bucket(decoded)
            ref.store.merge(start, decoded)
            assert core.load_bucket(start, raw) is None
        check_same_state(ref, core, horizon)
    for at in range(-1, 20, 2):  # every bucket in some window's rows
        h = T0 + at * bucket
        assert bits(core.rows(h)) == bits(python_rows(ref.store, h))
    for s in SOURCES:
        ref.unpersisted.forget(s)
        core.forget(s)
    assert core.complete(2**62) == []


# --- the engine's own scored lists ----------------------------------------------------------


def test_the_engines_scored_lists_of_a_simulator_log_give_the_engines_snapshot() -> None:
    """A simulator log (interleaving, noise) through the Python pipeline: its scored lists folded
    natively give the rows, totals and state records of the pipeline's own snapshot, to the bit."""
    scored: list[ScoredList] = []
    pipeline = Pipeline(
        EvaluationSettings(
            ks=(1, 3, 10), windows=(60_000, 300_000), bucket=10_000, attribution_window=60_000
        ),
        on_scored=scored.append,
    )
    pipeline.add_source("sim")
    # 100 queries: fewer judgments up front, so 10,000 records hold ~2,000 lists over 4 minutes
    config = SimConfig(
        seed=5, queries=100, noise_share=0.1, interleaving=True, interleaving_share=0.3
    )
    for i, record in enumerate(islice(traffic(config, T0), 10_000)):
        pipeline.offer(record.raw, "sim", i)
    snapshot = pipeline.snapshot()
    assert snapshot.horizon_ms is not None and len(snapshot.ndcg) > 20 and len(scored) > 1500
    assert any(s.interleaved is not None and s.interleaved.outcomes for s in scored)
    core = _native.WindowsCore([60_000, 300_000], 10_000, [1, 3, 10], [IMPLICIT, JUDGED])
    core.fold_batch(scored)
    expected = (
        tuple(_ndcg_row(r) for r in snapshot.ndcg),
        tuple(_engagement_row(r) for r in snapshot.engagement),
    )
    assert bits(core.rows(snapshot.horizon_ms)) == bits(expected)
    assert bits(core.cumulative()) == bits(
        [(r.relevance, r.segment, r.k, r.ndcg_sum, r.lists_scored) for r in snapshot.cumulative]
    )
    assert core.lists_total() == snapshot.lists_total
    python = Bucket()
    for lst in scored:
        python.fold(lst)
    one = _native.WindowsCore([2**40], 2**40, [1, 3, 10], [IMPLICIT, JUDGED])
    one.fold_batch(scored)
    (start,) = one.starts()
    assert one.encode_bucket(start) == encode_bucket(python)


# --- the codec on damaged records ------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)


def _mutate(data: Any, draw: st.DrawFn) -> Any:
    """One change somewhere in the JSON tree: a value replaced, dropped, duplicated."""
    if isinstance(data, dict) and data and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(data)))
        out = dict(data)
        action = draw(st.sampled_from(["replace", "drop", "descend"]))
        if action == "drop":
            del out[key]
        elif action == "replace":
            out[key] = draw(json_scalars | st.lists(json_scalars, max_size=3))
        else:
            out[key] = _mutate(out[key], draw)
        return out
    if isinstance(data, list) and data and draw(st.booleans()):
        i = draw(st.integers(0, len(data) - 1))
        out_list = list(data)
        action = draw(st.sampled_from(["replace", "drop", "repeat", "descend"]))
        if action == "drop":
            del out_list[i]
        elif action == "repeat":
            out_list.insert(i, out_list[i])
        elif action == "replace":
            out_list[i] = draw(json_scalars | st.lists(json_scalars, max_size=3))
        else:
            out_list[i] = _mutate(out_list[i], draw)
        return out_list
    return draw(json_scalars)


@st.composite
def damaged_records(draw: st.DrawFn) -> bytes:
    _, bucket, ks, sources = draw(configs())
    written = Bucket()
    for scored in draw(st.lists(scored_lists(bucket, ks, sources), min_size=1, max_size=4)):
        written.fold(scored)
    raw = encode_bucket(written)
    how = draw(st.sampled_from(["tree", "tree", "tree", "truncate", "insert", "version", "keep"]))
    if how == "tree":
        text = json.dumps(_mutate(json.loads(raw), draw), separators=(",", ":"))
        return text.encode()
    if how == "truncate":
        return raw[: draw(st.integers(0, len(raw)))]
    if how == "insert":
        at = draw(st.integers(0, len(raw)))
        junk = draw(
            st.sampled_from([b"x", b",", b"]", b"NaN", b" ", b"\xff", b"\xef\xbb\xbf", b'"'])
        )
        return raw[:at] + junk + raw[at:]
    if how == "version":
        version = draw(st.sampled_from([b"2", b"1.0", b"true", b'"1"', b"null", b"0"]))
        return raw.replace(b'"v":1', b'"v":' + version, 1)
    return raw


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(damaged_records())
def test_a_damaged_record_reads_as_python_reads_it(raw: bytes) -> None:
    expected = decode_bucket(raw)
    got = _native.WindowsCore.decode_bucket(raw)
    if isinstance(expected, BadState):
        assert got == expected.reason
    else:
        assert not isinstance(got, str), got
        assert native_bucket(got) == python_bucket(expected)


#: m × 2^e: floats with a short exact decimal expansion, where two shortest digit strings can be
#: as close (Python writes the even one: 2^46 + 0.625 is 70368744177664.62)
ties = st.builds(math.ldexp, st.integers(1, 2**53), st.integers(-80, 80))
finite = st.floats(allow_nan=False, allow_infinity=False) | ties
counts = st.integers(-(2**53), 2**53)
any_text = st.text(max_size=5)


@st.composite
def written_buckets(draw: st.DrawFn) -> Bucket:
    """A bucket with any finite float where a sum goes, any count (as a loaded record may)."""
    b = Bucket()
    for _ in range(draw(st.integers(0, 3))):
        ks = tuple(draw(st.lists(st.integers(-5, 10**6), min_size=1, max_size=3)))
        acc: list[float] = []
        for _ in ks:
            acc += [draw(counts), draw(finite), draw(finite)]
        table = b.ndcg if draw(st.booleans()) else b.coverage
        table[draw(any_text), tuple(draw(st.lists(any_text, max_size=2))), ks] = acc
    for _ in range(draw(st.integers(0, 2))):
        seg = tuple(draw(st.lists(any_text, max_size=2)))
        b.engagement[seg] = [draw(counts), draw(counts), draw(finite), draw(finite), draw(counts)]
    for _ in range(draw(st.integers(0, 2))):
        b.interleaving[draw(any_text), draw(any_text)] = draw(
            st.lists(st.integers(0, 2**53), min_size=4, max_size=4)
        )
    return b


@settings(max_examples=EXAMPLES or 200, deadline=None)
@given(written_buckets())
def test_every_finite_float_and_string_is_written_back_as_python_writes_it(b: Bucket) -> None:
    """A Python-written record loaded into an empty bucket is written back byte for byte: floats
    of every magnitude (``float.__repr__``), counts, unicode (``ensure_ascii``), key order."""
    raw = encode_bucket(b)
    core = _native.WindowsCore([60_000], 60_000, [1], [IMPLICIT])
    assert native_bucket(_native.WindowsCore.decode_bucket(raw)) == python_bucket(b)
    assert core.load_bucket(0, raw) is None
    assert core.encode_bucket(0) == raw


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "not JSON"),
        (b"\xef\xbb\xbf{}", "not a bucket of this format version"),
        (b'{"v":1,"n":[],"c":[],"e":[]}', None),
        (b'{"v":1,"n":[],"c":[],"e":[],"i":[["a","b",[0,0,0,1]]]}', None),
        (b'{"v":1,"n":[["r",[],[1],[1,Infinity,0]]],"c":[],"e":[]}', "malformed bucket"),
    ],
)
def test_golden_records_read_alike(raw: bytes, reason: str | None) -> None:
    expected = decode_bucket(raw)
    assert (expected.reason if isinstance(expected, BadState) else None) == reason
    got = _native.WindowsCore.decode_bucket(raw)
    assert (got if isinstance(got, str) else None) == reason


def test_a_bad_state_record_is_not_merged() -> None:
    core = _native.WindowsCore([60_000], 60_000, [1], [IMPLICIT])
    assert core.load_bucket(0, b"{}") == "not a bucket of this format version"
    assert core.starts() == []


def test_a_malformed_scored_list_is_one_error_not_a_crash() -> None:
    core = _native.WindowsCore([60_000], 60_000, [1, 3], [IMPLICIT])
    short = SourceScore(IMPLICIT, SCORED, (1, 3), (0.5,), (0.0,), (0.0,))
    lst = ScoredList("r", "q", T0, {}, (), (short,), False, None, False)
    with pytest.raises(ValueError, match="one ndcg"):
        core.fold(lst)
    with pytest.raises(ValueError, match="positive multiple"):
        _native.WindowsCore([90_000], 60_000, [1], [IMPLICIT])
    with pytest.raises(ValueError, match="at least one window"):
        _native.WindowsCore([], 60_000, [1], [IMPLICIT])


# --- the intake counters --------------------------------------------------------------------

intake_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("count"),
            st.sampled_from(list(Outcome)),
            st.sampled_from(["impression", "click", "judgment"]),
            st.booleans(),
            st.booleans(),
        ),
        st.tuples(st.just("invalid"), st.sampled_from(["bad_json", "schema", "too_large"])),
        st.tuples(st.just("unmatched"), st.integers(0, 3)),
    ),
    max_size=40,
)


@settings(max_examples=100, deadline=None)
@given(intake_ops)
def test_intake_counters_count_as_python(ops: list[tuple[Any, ...]]) -> None:
    ref = IntakeCounters()
    core = _native.IntakeCore()
    for op in ops:
        if op[0] == "count":
            _, outcome, kind, count, new_record = op
            ref.count(outcome, kind, count, new_record=new_record)
            core.count(outcome.value, kind, count, new_record)
        elif op[0] == "invalid":
            ref.count_invalid(op[1])
            core.count_invalid(op[1])
        else:
            ref.unmatched_from_pending(op[1])
            core.unmatched_from_pending(op[1])
    s = ref.snapshot()
    expected = (
        s.records_read,
        s.accepted,
        s.invalid,
        s.duplicate,
        s.late,
        s.unmatched_clicks,
        s.pending_clicks,
    )
    got = core.snapshot()
    assert got == expected
    # the counters' order too (dicts compare without it)
    assert [list(d) for d in got[1:5]] == [list(d) for d in expected[1:5]]
