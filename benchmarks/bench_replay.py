"""Throughput of the whole replay pipeline against a bare ``json.loads`` loop on the same lines.

    .venv/bin/python benchmarks/bench_replay.py [--events 200000] [--repeats 5] [--quick]
        [--json FILE]

The lines are the traffic simulator's (``streameval.sim.traffic``: the judgments of the start,
then impressions of 10 results, position-biased clicks, dwell and purchases, a trickle of new
judgments, 1 % noise records), as ``streameval replay`` would read them from one log. Rows:

* ``json.loads``: ``json.loads(line)`` per line (a ``ValueError`` caught), nothing else. The
  baseline of the ratio.
* ``decode``: streameval's decoder alone (pydantic-core ``validate_json`` into the event models).
* ``pipeline``: a fresh :class:`~streameval.engine.Pipeline` with the default evaluation
  settings, the lines offered as ``replay`` offers one log (``offer_batch`` of chunks of
  2,000 ``(line, offset, -1)``: for the Python engine ``offer`` per line), then ``set_idle`` and
  ``finish`` (every open list finalized, scored for both relevance sources, folded into the
  windows).
* ``pipeline+detect``: the same with the default regression detectors as a consumer (what
  ``streameval replay`` runs): judged scores handed out once the watermark passes each
  impression, every list into the detectors' buckets. Row ``replay.detect``: its events/s over
  ``pipeline``'s, same run (target ≥ 0.9).
* ``pipeline.native``, ``pipeline.native+detect``: the same two with the native engine
  (:class:`~streameval.engine.native_pipeline.NativePipeline`, ``evaluation.engine =
  "native"``: the record path in Rust, each chunk run in one call with the GIL released
  between the points where Python acts, docs/native.md "The record path in batches"; the
  per-list back half the Python one), when the extension module is built. Row
  ``replay.native``: ``pipeline.native+detect`` over ``json.loads`` (issue 32's figure: ≥ 2.0
  once every stage is native), and its ratio to ``pipeline+detect`` in the note.

Before timing, the pipeline's intake is checked: every line read lands in one outcome. The
collector runs with the thresholds ``streameval replay`` sets (:mod:`streameval.gc_policy`;
``--default-gc``: the interpreter's own).
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Sequence

from _common import (
    TIMERS,
    Result,
    Target,
    measure_interleaved,
    offer_log,
    per_line,
    ratio_table,
    sim_lines,
    suite_parser,
    write_json,
)

from streameval import gc_policy, native
from streameval.config import EvaluationSettings, Settings
from streameval.detect import detectors_for
from streameval.engine import Pipeline
from streameval.engine.consumers import ListConsumer
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_pipeline import NativePipeline
from streameval.events.decode import decoder

#: events/s of the pipeline over events/s of json.loads (issue 6)
TARGET = 1.0
#: events/s with the detectors over events/s without (issue 11)
DETECT_TARGET = 0.9
SOURCE = "input"


def replay_lines(
    lines: Sequence[bytes],
    settings: EvaluationSettings,
    *,
    detect: bool = False,
    engine: type[Coordinator] = Pipeline,
) -> Coordinator:
    """Every line through a fresh pipeline, as ``streameval replay`` does with one log (with the
    default detectors when ``detect``; ``engine``: the Python one, or the native one): in
    chunks of ``CHUNK_LINES`` lines, each offered at once (``offer_batch``)."""
    consumers: tuple[ListConsumer, ...] = ()
    if detect:
        detectors = detectors_for(Settings(evaluation=settings))
        consumers = () if detectors is None else (detectors,)
    pipeline = engine(settings, consumers=consumers)
    pipeline.add_source(SOURCE)
    offer_log(pipeline, lines, SOURCE)
    return pipeline


def json_loop(lines: Sequence[bytes]) -> Callable[[], object]:
    def run() -> object:
        loads = json.loads
        for line in lines:
            try:
                loads(line)
            except ValueError:  # the noise records (truncated JSON)
                continue
        return None

    return run


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--events", type=int, default=None, help="simulated lines to replay")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--default-gc",
        action="store_true",
        help="keep the interpreter's GC thresholds, not those `streameval replay` sets",
    )
    args = parser.parse_args()
    n = args.events or (50_000 if args.quick else 200_000)
    repeats = min(args.repeats, 3) if args.quick else args.repeats
    lines = sim_lines(n, seed=args.seed, noise_share=0.01)
    settings = EvaluationSettings()

    intake = replay_lines(lines, settings).snapshot().intake
    accounted = (
        sum(intake.accepted.values())
        + sum(intake.invalid.values())
        + sum(intake.duplicate.values())
        + sum(intake.late.values())
        + intake.unmatched_clicks
        + intake.pending_clicks
    )
    print(f"{n} lines: read {intake.records_read}, accepted {dict(intake.accepted)}")
    if intake.records_read != n or accounted != n:
        print(
            f"INTAKE MISMATCH: read {intake.records_read}, accounted {accounted}", file=sys.stderr
        )
        return 1

    gc.collect()
    gc.freeze()  # the input lines live for the whole run: keep them out of every GC pass
    if not args.default_gc:
        gc_policy.tune()  # the collector's thresholds of the `replay` command
    native_rows: list[tuple[str, Callable[[], object]]] = []
    if native.available():
        got = replay_lines(lines, settings, engine=NativePipeline).snapshot()
        if repr(got) != repr(replay_lines(lines, settings).snapshot()):  # (floats by bits)
            print("NATIVE MISMATCH: the engines' snapshots differ", file=sys.stderr)
            return 1
        native_rows = [
            ("pipeline.native", lambda: replay_lines(lines, settings, engine=NativePipeline)),
            (
                "pipeline.native+detect",
                lambda: replay_lines(lines, settings, detect=True, engine=NativePipeline),
            ),
        ]
    rows = measure_interleaved(
        [
            ("json.loads", json_loop(lines)),
            ("decode", per_line(decoder(settings.max_record_bytes), lines)),
            ("pipeline", lambda: replay_lines(lines, settings)),
            ("pipeline+detect", lambda: replay_lines(lines, settings, detect=True)),
            *native_rows,
        ],
        items=n,
        repeats=repeats,
        timer=TIMERS[args.timer],
    )
    print(f"timer: {args.timer}, median of {repeats} interleaved repeats")
    print(ratio_table(rows, baseline="json.loads", unit="events/s"))
    base, decode, pipe, detect = rows[:4]
    result = Result(
        "replay",
        pipe.rate,
        "events/s",
        baseline=base.rate,
        baseline_name="json.loads",
        target=Target(TARGET),
        note=f"Pipeline.offer+finish over {n} simulated lines, median of {repeats} "
        f"({args.timer} time); the decoder alone: {decode.rate / base.rate:.2f} x json.loads",
    )
    with_detect = Result(
        "replay.detect",
        detect.rate,
        "events/s",
        baseline=pipe.rate,
        baseline_name="pipeline without detectors",
        target=Target(DETECT_TARGET),
        note="the same replay with the default regression detectors, same run",
    )
    results = [result.as_dict(), with_detect.as_dict()]
    if native_rows:
        nat, nat_detect = rows[4:]
        native_result = Result(
            "replay.native",
            nat_detect.rate,
            "events/s",
            baseline=base.rate,
            baseline_name="json.loads",
            note=f"the native engine with the default detectors, same run: "
            f"{nat_detect.rate / detect.rate:.2f} x the Python engine's "
            f"({nat.rate / pipe.rate:.2f} x without detectors)",
        )
        results.append(native_result.as_dict())
        print(f"native+detect / json.loads = {native_result.ratio:.2f}; {native_result.note}")
    print(f"pipeline / json.loads = {result.ratio:.2f} (target >= {TARGET:g})")
    print(f"with detectors / without = {with_detect.ratio:.2f} (target >= {DETECT_TARGET:g})")
    write_json(
        args.json,
        {
            "benchmark": "replay",
            "events": n,
            "repeats": repeats,
            "timer": args.timer,
            "results": results,
            "rows": [row.as_dict() for row in rows],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
