"""Coverage-guided fuzzing of the intake (atheris, libFuzzer): every input goes through the
decoder and a long-lived Pipeline, and through the same two for a mapped format
(docs/input-formats.md's Segment-like mapping, tests/fixtures/input/segment.toml: the input as its
JSON, and as the Avro payload of a wire-format record under its schema); a crash is any exception,
an Invalid with an unknown reason, an over-long detail or field, or a broken accounting identity.

Where the native engine is built (streameval._native, docs/native.md), every input also goes
through its decoder, the binding included: a crash is also an exception or a Rust panic
(PanicException), an answer not of the documented shape, or one that differs from the Python
decoder's (``decode_native``: the same reason and detail, or the same fields); and through the
native engine's record path in batches (``NativePipeline.offer_batch``, the GIL released): a
crash is also an intake that differs from the Python pipeline's over the same inputs. The harness
says on stderr whether it fuzzed it ("native decoder: fuzzed").

Run by tests/unit/test_fuzz_atheris.py; by hand (an empty CORPUS_DIR works, seeds help):
    .venv/bin/python tests/fuzz/atheris_intake.py CORPUS_DIR -runs=1000000 \
        -use_value_profile=1 -dict=tests/fuzz/events.dict
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["streameval"]):
    from streameval import native
    from streameval.config import EvaluationSettings, load_settings
    from streameval.engine import Pipeline
    from streameval.engine.native_pipeline import NativePipeline
    from streameval.events.avro import AvroDecoder, SchemaStore, wire_format
    from streameval.events.decode import INVALID_REASONS, MAX_DETAIL_CHARS, Invalid, decode
    from streameval.events.formats import Formats
    from streameval.events.mapping import MappedJsonDecoder
    from streameval.events.models import Click, Impression, Judgment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "input"

MAX_BYTES = 4096
#: the record timestamp handed to offer: inputs alternate with and without one
RECORD_MS = 1_767_225_600_000

_EVALUATION = EvaluationSettings(max_record_bytes=MAX_BYTES, max_open_lists=10_000)
_pipeline = Pipeline(_EVALUATION)
_pipeline.add_source("fuzz")
_segment = load_settings(FIXTURES / "segment.toml").input
_formats = Formats(_segment, MAX_BYTES)
_mapped_json = _formats.decoder(_segment.default)
if not isinstance(_mapped_json, MappedJsonDecoder):  # pragma: no cover - the fixture's format
    raise SystemExit("segment.toml must be a mapped JSON format")
_avro = AvroDecoder(SchemaStore({7: FIXTURES / "segment.avsc"}), _mapped_json.mapper, MAX_BYTES)
#: the mapped format's pipeline: its JSON source and its Avro source
_mapped = Pipeline(_EVALUATION, decoder_for={"json": _mapped_json, "avro": _avro}.__getitem__)
for _source in ("json", "avro"):
    _mapped.add_source(_source)
_offered = [0]  # inputs offered so far (to each pipeline: each source of _mapped in turn)
#: the length of a native answer per event type: ``type`` then the model's fields
_NATIVE_LENGTH = {
    "impression": len(Impression.model_fields),
    "click": len(Click.model_fields),
    "judgment": len(Judgment.model_fields),
}


def _check(result: object) -> None:
    if isinstance(result, Invalid):
        if result.reason not in INVALID_REASONS:
            raise AssertionError(f"unknown reason {result.reason!r}")
        if len(result.detail) > MAX_DETAIL_CHARS or not result.detail.isprintable():
            raise AssertionError(f"detail not log-safe: {result.detail!r}")
        if len(result.field) > 200 or (result.field and result.reason != "mapping"):
            raise AssertionError(f"field {result.field!r} with reason {result.reason!r}")


def _check_native(data: bytes) -> None:
    """The native decoder, through its binding: never raises, answers a tuple of the documented
    shape, the Python decoder's answer (streameval.native.reference_answer)."""
    got = native.decode_native(data, MAX_BYTES)
    if type(got) is not tuple:
        raise AssertionError(f"native answer not a tuple: {got!r}")
    if len(got) == 2:
        reason, detail = got
        if reason not in INVALID_REASONS or type(detail) is not str:
            raise AssertionError(f"native invalid answer {got!r}")
        if len(detail) > MAX_DETAIL_CHARS or not detail.isprintable():
            raise AssertionError(f"native detail not log-safe: {detail!r}")
    elif not got or not isinstance(got[0], str) or _NATIVE_LENGTH.get(got[0]) != len(got):
        raise AssertionError(f"native event answer of a wrong shape: {got!r}")
    want = native.reference_answer(data, MAX_BYTES)
    if not native.same_answer(want, got):
        raise AssertionError(f"native {got!r} != python {want!r}")


def one_input(data: bytes) -> None:
    _check(decode(data, MAX_BYTES))
    if _NATIVE:
        _check_native(data)
    _check(_mapped_json(data))
    avro = wire_format(7, data)
    _check(_avro(avro))
    n = _offered[0]
    record_ms = RECORD_MS if n % 2 else -1
    _pipeline.offer(data, "fuzz", n, record_ms)
    if n % 2:
        _mapped.offer(avro, "avro", n, record_ms)
    else:
        _mapped.offer(data, "json", n, record_ms)
    if _batched is not None:
        _batched.offer_batch([(data, n, record_ms)], "fuzz")
    _offered[0] = n = n + 1
    if n % 256 == 0:
        for pipeline in (_pipeline, _mapped):
            intake = pipeline.snapshot().intake
            if intake.records_read != n or intake.accounted != n:
                raise AssertionError(f"{n} offered, {intake}")
        if _batched is not None and _batched.snapshot().intake != _pipeline.snapshot().intake:
            raise AssertionError(f"native in batches {_batched.snapshot().intake}")


_NATIVE = native.available()
#: the native engine fed the inputs of _pipeline in batches (of one: each input as it comes)
_batched = NativePipeline(_EVALUATION) if _NATIVE else None
if _batched is not None:
    _batched.add_source("fuzz")


def main() -> None:
    if _NATIVE:
        print("native decoder: fuzzed", file=sys.stderr)
    else:
        print(f"native decoder: not fuzzed ({native.unavailable_reason()})", file=sys.stderr)
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
