"""Fuzzing the intake: the decoder never raises and always names a known reason (checked against
an independent classification with Python's own ``json``), and the Pipeline's accounting identity
``records_read == accepted + invalid + duplicate + late + unmatched + pending`` holds exactly after
every record of random sequences (duplicates, reordering, late, unmatched, invalid, idle sources,
rebuilds), with ``pending == 0`` at the end.

The decoder's own example-based tests are in ``tests/unit/events``; this file adds mutation of
valid records and the whole-pipeline identity.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streameval.engine import Pipeline
from streameval.events.decode import INVALID_REASONS, MAX_DETAIL_CHARS, Invalid, decode
from streameval.events.models import Click, Impression, Judgment
from streameval.snapshot import Intake
from streameval.values import Outcome
from tests.unit.pipeline_helpers import settings as eval_settings

_FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --- the decoder ----------------------------------------------------------------------------

_ids = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12
)
_ts = st.integers(min_value=0, max_value=253_402_300_799_999)


@st.composite
def _valid_records(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["impression", "click", "judgment", "ubi_query", "ubi_event"]))
    if kind == "impression":
        return {
            "type": "impression",
            "request_id": draw(_ids),
            "timestamp": draw(_ts),
            "results": draw(st.lists(_ids, min_size=1, max_size=5)),
            "query": draw(_ids),
            "labels": {"ranker": draw(_ids)},
        }
    if kind == "click":
        return {
            "type": "click",
            "request_id": draw(_ids),
            "doc_id": draw(_ids),
            "timestamp": draw(_ts),
            "action": draw(st.sampled_from(["click", "dwell", "purchase"])),
        }
    if kind == "judgment":
        return {
            "type": "judgment",
            "query_id": draw(_ids),
            "doc_id": draw(_ids),
            "grade": draw(st.integers(min_value=0, max_value=3)),
            "timestamp": draw(_ts),
        }
    if kind == "ubi_query":
        return {
            "query_id": draw(_ids),
            "user_query": draw(_ids),
            "query_response_hit_ids": draw(st.lists(_ids, min_size=1, max_size=5)),
            "timestamp": draw(_ts),
        }
    return {
        "action_name": "click",
        "query_id": draw(_ids),
        "timestamp": draw(_ts),
        "event_attributes": {"object": {"object_id": draw(_ids)}, "position": {"ordinal": 0}},
    }


def _check_invalid(result: Invalid) -> None:
    assert result.reason in INVALID_REASONS
    assert len(result.detail) <= MAX_DETAIL_CHARS
    assert result.detail.isprintable()


@_FUZZ
@given(_valid_records())
def test_well_formed_records_are_events(record: dict[str, Any]) -> None:
    """The generator's records are valid by the contract: the positive control of the mutations
    below (a decoder refusing everything would pass a never-raises test)."""
    result = decode(json.dumps(record).encode())
    assert isinstance(result, Impression | Click | Judgment), result


def _python_json(raw: bytes) -> tuple[bool, Any]:
    """(is JSON, value) by the standard library: an oracle independent of pydantic-core."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False, None
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _mutate(raw: bytes, data: st.DataObject) -> bytes:
    ops = data.draw(
        st.lists(st.sampled_from(["flip", "cut", "insert", "truncate", "dup"]), max_size=3)
    )
    buf = bytearray(raw)
    for op in ops:
        if not buf:
            break
        i = data.draw(st.integers(0, len(buf) - 1))
        if op == "flip":
            buf[i] = data.draw(st.integers(0, 255))
        elif op == "cut":
            del buf[i : i + data.draw(st.integers(1, 8))]
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(min_size=1, max_size=6))
        elif op == "truncate":
            del buf[i:]
        else:
            buf[i:i] = buf[i : i + data.draw(st.integers(1, 16))]
    return bytes(buf)


@_FUZZ
@given(_valid_records(), st.data())
def test_mutated_records_never_raise_and_name_the_right_class_of_reason(
    record: dict[str, Any], data: st.DataObject
) -> None:
    raw = _mutate(json.dumps(record, ensure_ascii=data.draw(st.booleans())).encode(), data)
    result = decode(raw)
    body = raw.removeprefix(b"\xef\xbb\xbf")
    try:
        body.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    if not isinstance(result, Invalid):
        # accepted: it must be JSON by the standard library too
        assert utf8
        assert _python_json(body)[0], raw
        return
    _check_invalid(result)
    if not utf8:
        # bytes that are not UTF-8 can still be refused as bad JSON first, never as schema
        assert result.reason in {"bad_encoding", "bad_json"}, (raw, result)
        return
    is_json, value = _python_json(body)
    if not is_json:
        assert result.reason == "bad_json", (raw, result)
    elif result.reason == "bad_json":
        # pydantic-core is stricter than Python on two points only: lone surrogate escapes and
        # nesting (about 200 levels; a mutated record is nowhere near)
        assert "\\ud" in body.decode().lower(), (raw, result)
    elif isinstance(value, dict) and isinstance(value.get("type"), str):
        known = value["type"] in {"impression", "click", "judgment"}
        assert (result.reason == "unknown_type") == (not known), (raw, result)


@_FUZZ
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(raw: bytes) -> None:
    result = decode(raw)
    if isinstance(result, Invalid):
        _check_invalid(result)
        if not _python_json(raw.removeprefix(b"\xef\xbb\xbf"))[0]:
            assert result.reason in {"bad_json", "bad_encoding"}


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@_FUZZ
@given(_json, st.sampled_from(["impression", "click", "judgment", "unknown", None]))
def test_arbitrary_json_never_raises(value: Any, tag: str | None) -> None:
    if tag is not None:
        value = (
            {"type": tag, "payload": value}
            if not isinstance(value, dict)
            else value | {"type": tag}
        )
    raw = json.dumps(value).encode()  # NaN and Infinity as Python writes them
    result = decode(raw)
    if isinstance(result, Invalid):
        _check_invalid(result)
        assert result.reason != "bad_encoding"
        if tag == "unknown":
            assert result.reason == "unknown_type"
    else:
        assert tag in {"impression", "click", "judgment"} or tag is None
        if isinstance(result, Judgment):
            assert math.isfinite(result.grade)


# --- the pipeline's accounting identity -----------------------------------------------------

_SOURCES = ("a", "b", "c")
_RIDS = [f"r{i}" for i in range(8)]
_DOCS = [f"d{i}" for i in range(5)]


def _impression(data: st.DataObject, t: int) -> bytes:
    rec = {
        "type": "impression",
        "request_id": data.draw(st.sampled_from(_RIDS)),
        "timestamp": t,
        "results": data.draw(st.lists(st.sampled_from(_DOCS), min_size=1, max_size=4)),
        "query": data.draw(st.sampled_from(["q1", "q2"])),
        "labels": {"ranker": data.draw(st.sampled_from(["x", "y"]))},
    }
    if data.draw(st.booleans()):
        rec["event_id"] = data.draw(st.sampled_from(["e1", "e2", "e3"]))
    return json.dumps(rec).encode()


def _click(data: st.DataObject, t: int) -> bytes:
    rec: dict[str, Any] = {
        "type": "click",
        "request_id": data.draw(st.sampled_from([*_RIDS, "unknown"])),
        "doc_id": data.draw(st.sampled_from(_DOCS)),
        "timestamp": t,
        "action": data.draw(st.sampled_from(["click", "purchase", "dwell"])),
    }
    if data.draw(st.booleans()):
        rec["event_id"] = data.draw(st.sampled_from(["c1", "c2", "c3"]))
    return json.dumps(rec).encode()


def _judgment(data: st.DataObject, t: int) -> bytes:
    rec = {
        "type": "judgment",
        "query": data.draw(st.sampled_from(["q1", "q2"])),
        "doc_id": data.draw(st.sampled_from(_DOCS)),
        "grade": data.draw(st.integers(0, 3)),
        "timestamp": t,
    }
    return json.dumps(rec).encode()


_INVALID = [b"", b"{", b"\xff\xfe", b'{"type": "nope"}', b"[1, 2]", b'{"type": "click"}']


def _identity(intake: Intake) -> None:
    assert intake.records_read == intake.accounted, intake
    assert intake.pending_clicks >= 0
    assert intake.unmatched_clicks >= 0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_offer_accounts_for_every_record_exactly(data: st.DataObject) -> None:
    lateness = data.draw(st.sampled_from([0, 5_000]))
    pipeline = Pipeline(eval_settings(allowed_lateness=lateness))
    for s in _SOURCES:
        pipeline.add_source(s)
    offsets = dict.fromkeys(_SOURCES, 0)
    sent: list[tuple[bytes, str]] = []
    clock = 1_000_000
    steps = data.draw(st.integers(1, 60))
    for _ in range(steps):
        action = data.draw(
            st.sampled_from(
                ["impression", "click", "click", "judgment", "invalid", "dup", "idle", "reset"]
            )
        )
        # event time jitters forwards and backwards (reordering and lateness), mostly forwards
        clock += data.draw(st.integers(-90_000, 60_000))
        t = max(0, clock)
        if action == "idle":
            pipeline.set_idle(data.draw(st.sampled_from(_SOURCES)), data.draw(st.booleans()))
            _identity(pipeline.snapshot().intake)
            continue
        if action == "reset":
            pipeline.reset()
            for s in _SOURCES:
                pipeline.add_source(s)
            _identity(pipeline.snapshot().intake)
            continue
        if action == "dup" and sent:
            raw, source = data.draw(st.sampled_from(sent))
        else:
            source = data.draw(st.sampled_from(_SOURCES))
            if action == "impression":
                raw = _impression(data, t)
            elif action == "judgment":
                raw = _judgment(data, t)
            elif action == "invalid":
                raw = data.draw(st.sampled_from(_INVALID))
            else:
                raw = _click(data, t)
        before = pipeline.snapshot().intake
        offered = pipeline.offer(raw, source, offsets[source])
        offsets[source] += 1
        sent.append((raw, source))
        after = pipeline.snapshot().intake
        _identity(after)
        assert after.records_read == before.records_read + 1
        invalid_delta = sum(after.invalid.values()) - sum(before.invalid.values())
        assert invalid_delta == (1 if offered.outcome is Outcome.INVALID else 0)
    pipeline.finish()
    final = pipeline.snapshot().intake
    _identity(final)
    assert final.pending_clicks == 0
    assert final.records_read == sum(offsets.values())


def _state(pipeline: Pipeline) -> tuple[object, ...]:
    snap = pipeline.snapshot()
    return (
        snap.ndcg,
        snap.engagement,
        snap.cumulative,
        snap.lists_total,
        snap.intake,
        snap.open_lists,
        snap.watermark_ms,
        pipeline.commit_offsets(),
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_advancing_only_when_due_gives_what_advancing_after_every_record_gives(
    data: st.DataObject,
) -> None:
    """``offer`` runs the finalize/expire/evict step only when the watermark reaches the next
    point where it has work. A twin pipeline that runs it after every record must agree on every
    record's outcome, every scored list (and its order) and the whole state, at every step."""
    lateness = data.draw(st.sampled_from([0, 10_000]))
    scored: tuple[list[object], list[object]] = ([], [])
    gated, eager = (
        Pipeline(eval_settings(allowed_lateness=lateness), on_scored=out.append) for out in scored
    )
    for p in (gated, eager):
        for s in _SOURCES:
            p.add_source(s)
    offsets = dict.fromkeys(_SOURCES, 0)
    clock = 1_000_000
    for _ in range(data.draw(st.integers(1, 80))):
        action = data.draw(st.sampled_from(["impression", "click", "click", "judgment", "idle"]))
        # on the grid of the windows (10 s buckets, 60 s attribution), give or take 1 ms: so
        # that the watermark often lands exactly on, or next to, a point where work is due
        clock += data.draw(st.integers(-3, 6)) * 10_000 + data.draw(st.sampled_from([0, 0, 1, -1]))
        t = max(0, clock)
        source = data.draw(st.sampled_from(_SOURCES))
        if action == "idle":
            idle = data.draw(st.booleans())
            gated.set_idle(source, idle)
            eager.set_idle(source, idle)
        else:
            make = {"impression": _impression, "judgment": _judgment}.get(action, _click)
            raw = make(data, t)
            a = gated.offer(raw, source, offsets[source])
            b = eager.offer(raw, source, offsets[source])
            eager.advance()
            offsets[source] += 1
            assert a == b
        assert scored[0] == scored[1]
        assert _state(gated) == _state(eager)
    gated.finish()
    eager.finish()
    assert scored[0] == scored[1]
    assert _state(gated) == _state(eager)
