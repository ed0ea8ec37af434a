"""The daemon's evaluator in process, without Kafka: lines/s and the native batch's stops.

    .venv/bin/python benchmarks/bench_collector.py [--events 100000] [--repeats 3]
        [--engine native|python] [--restored]

The evaluator is built as the daemon builds it with its default state topic
(``runtime.compose.evaluation_for``: the :class:`~streameval.group.collector.PartitionCollector`
as the feed, ``persist`` on), the simulator's lines offered as ``replay`` offers one log
(``offer_batch`` of ``CHUNK_LINES``), then ``set_idle`` and ``finish``; the collector's ready
buckets are taken and marked written at the end. Printed per repeat: the CPU seconds, lines/s,
and (native engine) ``batch_stops`` and whether the batch ran inline (docs/native.md "The
daemon's collector fed by sums"). ``--restored``: the source restored first with progress
points a minute into the log, as a restart with a state topic does (judged floors on).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from _common import offer_log, sim_lines

from streameval.config import Settings
from streameval.detect.persisted import PAIRS, SRM, Progress
from streameval.runtime.compose import evaluation_for

SOURCE = "input"


def run_once(lines: list[bytes], engine: str, restored: bool) -> tuple[float, int, bool]:
    settings = Settings.model_validate({"evaluation": {"engine": engine}})
    built = evaluation_for(settings, lambda raw, why, source, offset: None)
    collector, pipeline = built.collector, built.evaluator.pipeline
    if collector is None:
        raise SystemExit("kafka.state_topic is off: no collector")
    pipeline.add_source(SOURCE)
    t0 = time.process_time()
    if restored:  # a minute past the first impression's bucket is in the state topic already
        ts = next(int(json.loads(line)["timestamp"]) for line in lines if b'"impression"' in line)
        point = ts - ts % settings.evaluation.bucket + 60_000
        collector.assign(SOURCE, Progress(point, point, point, point))
        pipeline.restore_source(SOURCE, None, 0, None)
    offer_log(pipeline, lines, SOURCE)
    written = [(s, r, b) for s, r, b, _ in collector.ready()]
    written += [(s, PAIRS, b) for s, b, _ in collector.ready_pairs()]
    written += [(s, SRM, b) for s, b, _ in collector.ready_srm()]
    collector.written(written)
    seconds = time.process_time() - t0
    stops = int(getattr(pipeline, "batch_stops", 0))
    inline = bool(getattr(pipeline, "_batch_inline", lambda: False)())
    return seconds, stops, inline


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--engine", choices=("native", "python"), default="native")
    parser.add_argument("--restored", action="store_true")
    args = parser.parse_args()
    lines = sim_lines(args.events, noise_share=0.01)
    times = []
    for _ in range(args.repeats):
        seconds, stops, inline = run_once(lines, args.engine, args.restored)
        times.append(seconds)
        print(
            f"{args.engine}: {seconds:.2f} s CPU, {len(lines) / seconds:,.0f} lines/s, "
            f"batch_stops {stops}, inline {inline}"
        )
    median = statistics.median(times)
    print(f"median: {median:.2f} s, {len(lines) / median:,.0f} lines/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
