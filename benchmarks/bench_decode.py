"""Decoding a team's own shape (DESIGN §11) against decoding native events, per record.

    .venv/bin/python benchmarks/bench_decode.py [--events 100000] [--repeats 5] [--quick]
        [--json FILE]

The records are the traffic simulator's (``streameval.sim.traffic``: impressions of 10 results,
clicks, dwell and purchases, judgments), each also rewritten into the README's Segment-like
shape (tests/fixtures/input/segment.toml) and into its Avro encoding (Confluent wire format,
tests/fixtures/input/segment.avsc). Rows, each a median of interleaved repeats:

* ``native``: the native decoder (pydantic-core ``validate_json`` into the event models). The
  baseline.
* ``decode.mapped``: the same events as Segment-like JSON through the mapping: parse, one
  compiled accessor per field, validation by the same models. Target: ≤ 1.5 × native per record.
* ``decode.avro``: the same events as wire-format Avro through fastavro and the same mapping
  (schema cached by id). Reported, no target.

Before timing, every rewritten record is checked to decode to the native record's event.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import TIMERS, Result, Target, measure_interleaved, sim_lines, suite_parser, write_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' worked shapes

from streameval.config import load_settings  # noqa: E402
from streameval.events.avro import AvroDecoder, SchemaStore  # noqa: E402
from streameval.events.decode import Decoder, Invalid  # noqa: E402
from streameval.events.mapping import Mapper  # noqa: E402
from streameval.events.formats import Formats  # noqa: E402
from tests.foreign_shapes import SEGMENT_AVSC, SEGMENT_TOML, SegmentAvro, rewrite  # noqa: E402

#: mapped JSON decode+validate per record ÷ native decode per record (issue 14)
TARGET = 1.5
SCHEMA_ID = 1


def loop(decode: Callable[[bytes], object], lines: Sequence[bytes]) -> Callable[[], object]:
    def run() -> object:
        for line in lines:
            decode(line)
        return None

    return run


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--events", type=int, default=None, help="simulated records")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    n = args.events or (20_000 if args.quick else 100_000)
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    native = sim_lines(n, seed=args.seed, noise_share=0.0)
    segment = [rewrite(line, "segment") for line in native]
    avro = [SegmentAvro(SCHEMA_ID).encode(line) for line in native]
    settings = load_settings(SEGMENT_TOML)
    native_decoder = Decoder()
    mapped_decoder = Formats(settings.input).decoder(settings.input.default)
    avro_decoder = AvroDecoder(
        SchemaStore({SCHEMA_ID: SEGMENT_AVSC}), Mapper(settings.input.mappings["segment"])
    )
    for i in range(n):
        want = native_decoder(native[i])
        for name, got in (("mapped", mapped_decoder(segment[i])), ("avro", avro_decoder(avro[i]))):
            if isinstance(want, Invalid) or got != want:
                print(f"MISMATCH at {i} ({name}): {want!r} != {got!r}", file=sys.stderr)
                return 1
    print(f"{n} records: every Segment-like and Avro record decodes to its native event")
    mean = {
        name: sum(map(len, lines)) / n
        for name, lines in (("native", native), ("mapped", segment), ("avro", avro))
    }
    print("mean record bytes: " + ", ".join(f"{k} {v:.0f}" for k, v in mean.items()))

    gc.collect()
    gc.freeze()
    rows = measure_interleaved(
        [
            ("native", loop(native_decoder, native)),
            ("decode.mapped", loop(mapped_decoder, segment)),
            ("decode.avro", loop(avro_decoder, avro)),
        ],
        items=n,
        repeats=repeats,
        timer=TIMERS[args.timer],
    )
    base, mapped, avro_row = rows
    us = {r.name: 1e6 / r.rate for r in rows}
    for name, value in us.items():
        print(f"{name:14} {value:6.2f} µs/record  {value / us['native']:.2f} x native")
    results = [
        Result(
            "decode.mapped",
            us["decode.mapped"],
            "µs/record",
            baseline=us["native"],
            baseline_name="native decode",
            target=Target(TARGET, at_most=True),
            note=f"Segment-like JSON ({mean['mapped']:.0f} B) vs native ({mean['native']:.0f} B),"
            f" {n} simulated records, median of {repeats} ({args.timer} time)",
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
    write_json(
        args.json,
        {
            "benchmark": "decode",
            "events": n,
            "repeats": repeats,
            "timer": args.timer,
            "results": [r.as_dict() for r in results],
            "rows": [r.as_dict() for r in (base, mapped, avro_row)],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
