"""How replay throughput and the scrape cost grow with list length, segments and windows.

    .venv/bin/python benchmarks/bench_scaling.py [--events 50000] [--quick] [--json FILE]

One dimension varies at a time, the others at the base (10 results per list, the simulator's
2 segments, the default 3 windows 1m/5m/1h):

* list length 10 / 50 / 200 (the simulator's ``page_size``, with enough candidates);
* segments 1 / 10 / 100: the simulator's lines with their labels rewritten to that many
  distinct ``ranker`` values (one ``arm``), so every segment holds lists (cap: 100);
* windows 1 / 3 / 6: ``1h``; ``1m, 5m, 1h``; ``1m, 2m, 5m, 10m, 30m, 1h`` (the longest stays 1h).

The judgments of the simulator's start are read first, untimed (as the daemon reads the judgment
table before the streams); then ``--events`` impression/click/judgment records are timed.
Per configuration: replay events/s (median of interleaved repeats, like ``bench_replay``) and
the cost of one scrape of the caught-up state (no ``finish``: as the daemon holds it):
``pipeline.snapshot()`` plus ``generate_latest`` of a registry with the ``SnapshotCollector``,
in milliseconds, with the number of exposed samples.
"""

from __future__ import annotations

import gc
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from _common import SIM_START_MS, Result, sim_records, suite_parser, write_json
from prometheus_client import CollectorRegistry, generate_latest

from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.export.collector import SnapshotCollector

SOURCE = "input"
WINDOWS = {1: ("1h",), 3: ("1m", "5m", "1h"), 6: ("1m", "2m", "5m", "10m", "30m", "1h")}
_LABELS = re.compile(rb'"labels":\{[^}]*\}')


@dataclass(frozen=True)
class Config:
    dimension: str
    value: int
    list_length: int = 10
    segments: int | None = None  # None: the simulator's own labels
    windows: int = 3

    @property
    def name(self) -> str:
        return f"scaling.{self.dimension}={self.value}"


def configs() -> list[Config]:
    return [
        Config("list", 10),
        Config("list", 50, list_length=50),
        Config("list", 200, list_length=200),
        Config("segments", 1, segments=1),
        Config("segments", 10, segments=10),
        Config("segments", 100, segments=100),
        Config("windows", 1, windows=1),
        Config("windows", 3, windows=3),
        Config("windows", 6, windows=6),
    ]


def lines_for(config: Config, n: int, seed: int) -> tuple[list[bytes], list[bytes]]:
    """The judgments of the start (loaded untimed) and the next ``n`` records."""
    candidates = max(25, config.list_length * 5 // 4)
    records = sim_records(
        n + 1000 * candidates,  # the start's judgments come first: half the pairs of 1000 queries
        seed=seed,
        page_size=config.list_length,
        candidates=candidates,
        noise_share=0.01,
    )
    start = [r.raw for r in records if r.time_ms == SIM_START_MS and r.kind == "judgment"]  # type: ignore[attr-defined]
    lines = [r.raw for r in records[len(start) : len(start) + n]]  # type: ignore[attr-defined]
    if len(lines) != n:
        raise RuntimeError("the simulator gave too few records")
    if config.segments is None:
        return start, lines
    out = []
    for i, line in enumerate(lines):
        labels = b'"labels":{"ranker":"r%d","arm":"a"}' % (i % config.segments)
        out.append(_LABELS.sub(labels, line, count=1))
    return start, out


def settings_for(config: Config) -> EvaluationSettings:
    return EvaluationSettings.model_validate({"windows": WINDOWS[config.windows]})


def loaded(judgments: Sequence[bytes], settings: EvaluationSettings) -> Pipeline:
    """A pipeline with the judgment table read (as the daemon does before the streams)."""
    pipeline = Pipeline(settings)
    for line in judgments:
        pipeline.offer(line, "judgments")
    pipeline.add_source(SOURCE)
    return pipeline


def replay(pipeline: Pipeline, lines: Sequence[bytes], finish: bool) -> Pipeline:
    offer = pipeline.offer
    for offset, line in enumerate(lines):
        offer(line, SOURCE, offset)
    pipeline.set_idle(SOURCE)
    if finish:
        pipeline.finish()
    return pipeline


def measure(config: Config, n: int, seed: int, repeats: int) -> dict[str, float]:
    judgments, lines = lines_for(config, n, seed)
    settings = settings_for(config)
    gc.collect()
    gc.freeze()
    times = []
    for _ in range(repeats):
        pipeline = loaded(judgments, settings)
        start = time.process_time()
        replay(pipeline, lines, finish=True)
        times.append(time.process_time() - start)
    pipeline = replay(loaded(judgments, settings), lines, finish=False)
    registry = CollectorRegistry()
    registry.register(SnapshotCollector(pipeline.snapshot, version="bench"))
    text = generate_latest(registry)
    scrapes = []
    for _ in range(max(5, repeats * 4)):
        start = time.process_time()
        generate_latest(registry)
        scrapes.append(time.process_time() - start)
    gc.unfreeze()
    samples = sum(1 for line in text.decode().splitlines() if line and not line.startswith("#"))
    return {
        "events_per_second": n / statistics.median(times),
        "scrape_ms": 1000 * statistics.median(scrapes),
        "samples": samples,
    }


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "", repeats=3)
    parser.add_argument("--events", type=int, default=None, help="simulated lines per config")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    n = args.events or (15_000 if args.quick else 50_000)
    repeats = 1 if args.quick else args.repeats
    figures: dict[str, dict[str, float]] = {}
    base: dict[str, dict[str, float]] = {}
    results: list[Result] = []
    print(f"{'':22}  {'events/s':>10}  {'x first':>8}  {'scrape ms':>10}  {'x first':>8}  samples")
    for config in configs():
        f = measure(config, n, args.seed, repeats)
        figures[config.name] = f
        first = base.setdefault(config.dimension, f)
        print(
            f"{config.name:22}  {f['events_per_second']:10,.0f}  "
            f"{f['events_per_second'] / first['events_per_second']:8.2f}  "
            f"{f['scrape_ms']:10.2f}  {f['scrape_ms'] / first['scrape_ms']:8.2f}  "
            f"{f['samples']:.0f}"
        )
        results.append(
            Result(
                config.name,
                f["events_per_second"],
                "events/s",
                baseline=first["events_per_second"],
                baseline_name=f"{config.dimension}={configs_first(config.dimension)}",
            )
        )
        results.append(
            Result(
                config.name + " scrape",
                f["scrape_ms"],
                "ms",
                baseline=first["scrape_ms"],
                baseline_name=f"{config.dimension}={configs_first(config.dimension)}",
                note=f"{f['samples']:.0f} samples exposed",
            )
        )
    write_json(
        args.json,
        {
            "benchmark": "scaling",
            "events": n,
            "repeats": repeats,
            "figures": figures,
            "results": [r.as_dict() for r in results],
        },
    )
    return 0


def configs_first(dimension: str) -> int:
    return next(c.value for c in configs() if c.dimension == dimension)


if __name__ == "__main__":
    raise SystemExit(main())
