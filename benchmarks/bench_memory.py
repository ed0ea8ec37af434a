"""Memory of open lists: bytes per open 10-result list, and the peak RSS with 100k of them.

    .venv/bin/python benchmarks/bench_memory.py [--lists 100000] [--quick] [--json FILE]

The impressions are the traffic simulator's (10 results, a query, ranker/arm labels), at a rate
high enough (1000/s of event time) that all of them fall inside one attribution window: every
one is still open in the pipeline's join when the measurement is taken. Figures:

* ``memory``: bytes allocated per open list, by ``tracemalloc`` (the Python heap the lists
  hold after a full GC, pipeline and decoded strings included, the input lines excluded).
* ``memory.rss``: the same as an RSS delta (what the OS sees: allocator slack and arenas too),
  measured in a child process without tracemalloc.
* ``memory.peak_rss``: the child's peak RSS with the lists open (interpreter, streameval's
  imports and the input lines included), and how much of it the lists are.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

from _common import (
    Result,
    Target,
    peak_rss_bytes,
    rss_bytes,
    sim_records,
    suite_parser,
    write_json,
)

from streameval.config import EvaluationSettings
from streameval.engine import Pipeline

#: bytes per open 10-result list, at most (issue 6)
TARGET_BYTES = 1024
SOURCE = "input"


def impressions(n: int, seed: int) -> list[bytes]:
    """``n`` simulated impression lines, all within one attribution window of event time."""
    lines: list[bytes] = []
    # 1000 impressions per event second: 100k span 100 s, inside the 5 min attribution window
    for record in sim_records(n * 3, seed=seed, rate=1000.0):
        if record.kind == "impression":  # type: ignore[attr-defined]
            lines.append(record.raw)  # type: ignore[attr-defined]
            if len(lines) == n:
                return lines
    raise RuntimeError(f"the simulator gave fewer than {n} impressions")


def open_lists(lines: list[bytes]) -> Pipeline:
    pipeline = Pipeline(EvaluationSettings())
    pipeline.add_source(SOURCE)
    for offset, line in enumerate(lines):
        pipeline.offer(line, SOURCE, offset)
    return pipeline


def measure_rss(path: Path, n: int) -> dict[str, float]:
    """In this (fresh) process: RSS before and after opening the ``n`` lists of the lines in
    ``path``, and the peak (the simulator never ran here: no freed arenas blur the delta)."""
    lines = path.read_bytes().splitlines()
    gc.collect()
    before = rss_bytes()
    pipeline = open_lists(lines)
    gc.collect()
    after = rss_bytes()
    if pipeline.snapshot().open_lists != n:
        raise RuntimeError("not every list is open")
    return {"rss_before": before, "rss_after": after, "peak_rss": peak_rss_bytes()}


def measure_traced(lines: list[bytes]) -> float:
    """Bytes per open list traced by tracemalloc."""
    n = len(lines)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    pipeline = open_lists(lines)
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    if pipeline.snapshot().open_lists != n:
        raise RuntimeError("not every list is open")
    return (after - before) / n


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--lists", type=int, default=None, help="open lists to hold")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = args.lists or (30_000 if args.quick else 100_000)
    if args.child is not None:
        print(json.dumps(measure_rss(args.child, n)))
        return 0

    lines = impressions(n, args.seed)
    per_list = measure_traced(lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "impressions.jsonl"
        path.write_bytes(b"\n".join(lines) + b"\n")
        child = subprocess.run(
            [sys.executable, str(Path(__file__)), "--child", str(path), "--lists", str(n)],
            check=True,
            capture_output=True,
            text=True,
        )
    rss = json.loads(child.stdout)
    rss_per_list = (rss["rss_after"] - rss["rss_before"]) / n
    mib = 1024 * 1024
    print(f"{n} open lists: {per_list:,.0f} B/list traced, {rss_per_list:,.0f} B/list RSS delta")
    print(
        f"peak RSS {rss['peak_rss'] / mib:,.1f} MiB "
        f"(before the lists {rss['rss_before'] / mib:,.1f} MiB)"
    )
    results = [
        Result(
            "memory",
            per_list,
            "B/list",
            target=Target(TARGET_BYTES, at_most=True, on="measured"),
            note=f"tracemalloc, {n} open 10-result lists held in the Pipeline's join",
        ),
        Result("memory.rss", rss_per_list, "B/list", note="RSS delta per open list (child)"),
        Result(
            "memory.peak_rss",
            rss["peak_rss"] / mib,
            "MiB",
            baseline=rss["rss_before"] / mib,
            baseline_name="before the lists",
            note=f"peak RSS of a process holding {n} open lists (and their input lines)",
        ),
    ]
    write_json(
        args.json,
        {
            "benchmark": "memory",
            "lists": n,
            "bytes_per_list_traced": per_list,
            **rss,
            "results": [r.as_dict() for r in results],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
