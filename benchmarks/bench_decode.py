"""Decoding a team's own shape (DESIGN §11) against decoding native events, per record.

    .venv/bin/python benchmarks/bench_decode.py [--events 100000] [--repeats 5] [--quick]
        [--json FILE]

The records are the traffic simulator's (``streameval.sim.traffic``: impressions of 10 results,
clicks, dwell and purchases, judgments), each also rewritten into docs/input-formats.md's
Segment-like shape (tests/fixtures/input/segment.toml) and into its Avro encoding (Confluent wire
format, tests/fixtures/input/segment.avsc). Rows, each a median of interleaved repeats:

* ``native``: the native decoder (pydantic-core ``validate_json`` into the event models) on the
  same events with the same timestamps as the Segment-like records (RFC 3339 text, a native
  form too), so the ratio is the mapping's own cost, not that of parsing a date. The baseline.
* ``native.epoch_ms``: the native decoder on the simulator's own lines (epoch-ms timestamps,
  the cheapest form), for reference.
* ``decode.mapped``: the same events as Segment-like JSON through the mapping: one pydantic-core
  pass (parse, dispatch on the type field, each field read at its alias path, validation by
  the native models' schemas). Target: ≤ 1.5 × native per record.
* ``decode.avro``: the same events as wire-format Avro through fastavro and the same mapping
  (schema cached by id). Reported, no target.
* ``json.loads``: a bare ``json.loads`` of the simulator's lines (no validation), the yardstick
  of issue 32; ``rust.epoch_ms`` and ``rust``: the native engine's decoder
  (``streameval._native``, docs/native.md) on the same lines as ``native.epoch_ms`` and
  ``native``, returning the same fields (checked on every line first). Reported, no target;
  left out, with a notice, when the native engine is not built.

Before timing, every rewritten record is checked to decode to the native record's event.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable
from pathlib import Path

from _common import (
    TIMERS,
    Result,
    Target,
    measure_interleaved,
    per_line,
    sim_lines,
    suite_parser,
    write_json,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' worked shapes

from streameval import native as native_engine
from streameval.config import load_settings
from streameval.events.avro import AvroDecoder, SchemaStore
from streameval.events.decode import DEFAULT_MAX_BYTES, Invalid, decode_ubi, decoder
from streameval.events.formats import Formats
from streameval.events.mapping import Mapper
from tests.foreign_shapes import (
    SEGMENT_AVSC,
    SEGMENT_TOML,
    SegmentAvro,
    rewrite,
    segment_time,
)

#: mapped JSON decode+validate per record ÷ native decode per record (issue 14)
TARGET = 1.5
SCHEMA_ID = 1


def _rfc3339_line(line: bytes) -> bytes:
    """The native line with its timestamp as RFC 3339 text (Segment's form)."""
    event = json.loads(line)
    event["timestamp"] = segment_time(event["timestamp"])
    return json.dumps(event, separators=(",", ":")).encode()


def _rust_rows(
    python_decoder: Callable[[bytes], object], *line_sets: list[bytes]
) -> list[tuple[str, Callable[[], object]]] | None:
    """The native engine's decoder on the lines of ``native.epoch_ms`` and ``native``, after
    checking that it answers every line with the Python decoder's fields; ``[]`` when it is not
    built, ``None`` on a mismatch."""
    if not native_engine.available():
        print(f"rust rows left out: {native_engine.unavailable_reason()}")
        return []
    for lines in line_sets:
        for i, line in enumerate(lines):
            event = python_decoder(line)
            want = (
                (event.reason, event.detail)
                if isinstance(event, Invalid)
                else tuple(getattr(event, f) for f in type(event).model_fields)
            )
            got = native_engine.decode_native(line, DEFAULT_MAX_BYTES)
            if got != want:
                print(f"MISMATCH at {i} (rust): {want!r} != {got!r}", file=sys.stderr)
                return None
    print(f"{n_lines(line_sets)} lines: the native decoder answers the Python decoder's fields")
    from streameval import _native  # the extension module itself: no wrapper per call

    rust = _native.decode_native
    return [
        ("rust.epoch_ms", per_line(lambda line: rust(line, DEFAULT_MAX_BYTES), line_sets[0])),
        ("rust", per_line(lambda line: rust(line, DEFAULT_MAX_BYTES), line_sets[1])),
    ]


def _ubi_line(line: bytes) -> bytes | None:
    """The native impression or click as the UBI query or event it stands for (None for the
    rest: judgments have no UBI form)."""
    ev = json.loads(line)
    if ev.get("type") == "impression":
        ubi = {
            "query_id": ev["request_id"],
            "user_query": ev.get("query"),
            "query_response_hit_ids": [
                r if isinstance(r, str) else r["doc_id"] for r in ev["results"]
            ],
            "timestamp": ev["timestamp"],
            "query_attributes": ev.get("labels") or {},
        }
    elif ev.get("type") == "click":
        target: dict[str, object] = {"object": {"object_id": ev["doc_id"]}}
        if ev.get("position") is not None:
            target["position"] = {"ordinal": ev["position"] - 1}
        ubi = {
            "action_name": ev.get("action") or "click",
            "query_id": ev["request_id"],
            "event_attributes": target,
            "timestamp": ev["timestamp"],
        }
    else:
        return None
    return json.dumps(ubi, separators=(",", ":")).encode()


def _rust_format_rows(
    ubi: list[bytes], segment: list[bytes], mapped_decoder: Callable[[bytes], object]
) -> list[tuple[str, Callable[[], object]]] | None:
    """The native engine's UBI and mapped decoders (and the Python UBI decoder), after checking
    that they answer every line with the Python decoders' fields; None on a mismatch."""
    if not native_engine.available():
        return []
    from streameval import _native

    python_ubi = decoder(DEFAULT_MAX_BYTES, decode_ubi)
    rust_mapped = _native.MappedDecoder(
        load_settings(SEGMENT_TOML).input.mappings["segment"].model_dump_json(), DEFAULT_MAX_BYTES
    )
    for name, lines, want_of, got_of in (
        ("ubi", ubi, python_ubi, lambda line: _native.decode_ubi(line, DEFAULT_MAX_BYTES)),
        ("mapped", segment, mapped_decoder, rust_mapped.decode),
    ):
        for i, line in enumerate(lines):
            event = want_of(line)
            want = (
                (event.reason, event.detail)
                if isinstance(event, Invalid)
                else tuple(getattr(event, f) for f in type(event).model_fields)
            )
            if got_of(line) != want:
                print(
                    f"MISMATCH at {i} (rust {name}): {want!r} != {got_of(line)!r}", file=sys.stderr
                )
                return None
    print(f"{len(ubi)} UBI and {len(segment)} Segment-like lines: the native decoders agree")
    rust_ubi = _native.decode_ubi
    return [
        ("python.ubi", per_line(python_ubi, ubi)),
        ("rust.ubi", per_line(lambda line: rust_ubi(line, DEFAULT_MAX_BYTES), ubi)),
        ("rust.mapped", per_line(rust_mapped.decode, segment)),
        ("json.loads.ubi", per_line(json.loads, ubi)),
        ("json.loads.mapped", per_line(json.loads, segment)),
    ]


def n_lines(line_sets: tuple[list[bytes], ...]) -> int:
    return sum(map(len, line_sets))


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--events", type=int, default=None, help="simulated records")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    n = args.events or (20_000 if args.quick else 100_000)
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    epoch_ms = sim_lines(n, seed=args.seed, noise_share=0.0)
    native = [_rfc3339_line(line) for line in epoch_ms]
    segment = [rewrite(line, "segment") for line in epoch_ms]
    avro = [SegmentAvro(SCHEMA_ID).encode(line) for line in epoch_ms]
    settings = load_settings(SEGMENT_TOML)
    native_decoder = decoder()
    mapped_decoder = Formats(settings.input).decoder(settings.input.default)
    avro_decoder = AvroDecoder(
        SchemaStore({SCHEMA_ID: SEGMENT_AVSC}), Mapper(settings.input.mappings["segment"])
    )
    for i in range(n):
        want = native_decoder(native[i])
        if want != native_decoder(epoch_ms[i]):
            print(f"MISMATCH at {i}: the RFC 3339 line is another event", file=sys.stderr)
            return 1
        for name, got in (("mapped", mapped_decoder(segment[i])), ("avro", avro_decoder(avro[i]))):
            if isinstance(want, Invalid) or got != want:
                print(f"MISMATCH at {i} ({name}): {want!r} != {got!r}", file=sys.stderr)
                return 1
    print(f"{n} records: every Segment-like and Avro record decodes to its native event")
    rust = _rust_rows(native_decoder, epoch_ms, native)
    ubi = [u for u in map(_ubi_line, epoch_ms) if u is not None]
    rust_formats = _rust_format_rows(ubi, segment, mapped_decoder)
    if rust is None or rust_formats is None:
        return 1
    mean = {
        name: sum(map(len, lines)) / n
        for name, lines in (
            ("native", native),
            ("epoch_ms", epoch_ms),
            ("mapped", segment),
            ("avro", avro),
        )
    }
    print("mean record bytes: " + ", ".join(f"{k} {v:.0f}" for k, v in mean.items()))

    gc.collect()
    gc.freeze()
    rows = measure_interleaved(
        [
            ("native", per_line(native_decoder, native)),
            ("native.epoch_ms", per_line(native_decoder, epoch_ms)),
            ("decode.mapped", per_line(mapped_decoder, segment)),
            ("decode.avro", per_line(avro_decoder, avro)),
            ("json.loads", per_line(json.loads, epoch_ms)),
            *rust,
            *rust_formats,
        ],
        items=n,
        repeats=repeats,
        timer=TIMERS[args.timer],
    )
    us = {r.name: 1e6 / r.rate for r in rows}
    for name, value in us.items():
        print(
            f"{name:16} {value:6.2f} µs/record  {value / us['native']:.2f} x native"
            f"  {us['json.loads'] / value:.2f} x json.loads speed"
        )
    results = [
        Result(
            "decode.mapped",
            us["decode.mapped"],
            "µs/record",
            baseline=us["native"],
            baseline_name="native decode",
            target=Target(TARGET, at_most=True),
            note=f"Segment-like JSON ({mean['mapped']:.0f} B) vs the same events native with the"
            f" same RFC 3339 timestamps ({mean['native']:.0f} B), {n} simulated records, median"
            f" of {repeats} ({args.timer} time); vs native with epoch-ms timestamps:"
            f" {us['decode.mapped'] / us['native.epoch_ms']:.2f}",
        ),
        Result(
            "decode.avro",
            us["decode.avro"],
            "µs/record",
            baseline=us["native"],
            baseline_name="native decode",
            note=f"Segment-like Avro, wire format ({mean['avro']:.0f} B), fastavro + mapping",
        ),
    ]
    if "rust.epoch_ms" in us:
        results.append(
            Result(
                "decode.rust",
                us["rust.epoch_ms"],
                "µs/record",
                baseline=us["json.loads"],
                baseline_name="json.loads",
                note=f"the native engine's decoder (docs/native.md) on the simulator's lines;"
                f" the Python decoder on them: {us['native.epoch_ms']:.2f} µs/record,"
                f" {us['native.epoch_ms'] / us['rust.epoch_ms']:.1f} x the native's time",
            )
        )
    if "rust.ubi" in us:
        results += [
            Result(
                "decode.rust.ubi",
                us["rust.ubi"],
                "µs/record",
                baseline=us["json.loads.ubi"],
                baseline_name="json.loads",
                note=f"the native engine's UBI decoder on {len(ubi)} UBI records (the simulator's"
                f" impressions and clicks); the Python decode_ubi: {us['python.ubi']:.2f}"
                f" µs/record; json.loads on the same lines: {us['json.loads.ubi']:.2f}",
            ),
            Result(
                "decode.rust.mapped",
                us["rust.mapped"],
                "µs/record",
                baseline=us["json.loads.mapped"],
                baseline_name="json.loads",
                note=f"the native engine's mapped decoder on the Segment-like lines (json.loads"
                f" on the same lines); the Python one: {us['decode.mapped']:.2f} µs/record",
            ),
        ]
    write_json(
        args.json,
        {
            "benchmark": "decode",
            "events": n,
            "repeats": repeats,
            "timer": args.timer,
            "results": [r.as_dict() for r in results],
            "rows": [r.as_dict() for r in rows],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
