"""Memory of open lists in the native join: bytes per open 10-result list, whole process.

    .venv/bin/python benchmarks/bench_join_memory.py [--lists 100000] [--quick] [--json FILE]

The impressions of ``bench_memory.py`` (the traffic simulator's: 10 results, a query, ranker and
arm labels; 1000 per event second, so all inside one attribution window and all still open),
held by the native join (``streameval.native.join_core``, docs/native.md "The join") and, in the
same run, by the Python pipeline's join. Each side runs in a fresh child process that reads the
lines first, then measures its RSS before and after opening every list: the RSS delta per list
is what the OS sees (allocator headers, rounding and slack included). Issue 32's target: ≤ 256 B
per open 10-result list, whole process (the Python engine: 798-1,309 B).

Row ``join_memory.engine``: the same lines through the whole engine as ``replay`` builds it
(``Evaluator``, the default settings: the native engine, the default detectors, SRM and
interleaving), against the Python engine built the same way. The default detectors take judged
scores early, so a list whose bucket the watermark completed is handed to Python as an
``OpenList`` and held until it is finalized: this row says what that costs.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import Result, Target, rss_bytes, suite_parser, write_json
from bench_memory import SOURCE, impressions, open_lists

from streameval import native
from streameval.config import EvaluationSettings, Settings
from streameval.engine.evaluator import Evaluator

#: bytes per open 10-result list, whole process, at most (issue 32)
TARGET_BYTES = 256


def measure(path: Path, n: int, engine: str) -> dict[str, float]:
    """In this fresh process: RSS before and after opening the lists of the lines in ``path``."""
    lines = path.read_bytes().splitlines()
    gc.collect()
    before = rss_bytes()
    counted = 0.0
    if engine == "native":
        core = native.join_core(EvaluationSettings())
        core.add_source(SOURCE)
        for line in lines:
            core.offer(line, SOURCE)
        open_count, counted = core.open_lists, core.open_bytes / n
    elif engine.startswith("engine."):  # the whole engine, as replay builds it
        evaluator = Evaluator(
            Settings.model_validate({"evaluation": {"engine": engine.removeprefix("engine.")}})
        )
        pipeline = evaluator.pipeline
        pipeline.add_source(SOURCE)
        for offset, line in enumerate(lines):
            pipeline.offer(line, SOURCE, offset)
        open_count = pipeline.snapshot().open_lists
    else:
        pipeline = open_lists(lines)
        open_count = pipeline.snapshot().open_lists
    gc.collect()
    after = rss_bytes()
    if open_count != n:
        raise RuntimeError(f"{open_count} lists open, not {n}")
    return {"rss_per_list": (after - before) / n, "counted_per_list": counted}


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--lists", type=int, default=None, help="open lists to hold")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="native", help=argparse.SUPPRESS)
    args = parser.parse_args()
    n = args.lists or (30_000 if args.quick else 100_000)
    if args.child is not None:
        print(json.dumps(measure(args.child, n, args.engine)))
        return 0
    if not native.available():  # no row, and no failure of the suite: the Python engine alone
        print(f"bench_join_memory: skipped, {native.unavailable_reason()}")
        write_json(args.json, {"benchmark": "join_memory", "lists": n, "results": []})
        return 0

    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "impressions.jsonl"
        path.write_bytes(b"\n".join(impressions(n, args.seed)) + b"\n")
        for engine in ("native", "python", "engine.native", "engine.python"):
            child = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(path),
                    "--lists",
                    str(n),
                    "--engine",
                    engine,
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            figures[engine] = json.loads(child.stdout)
    nat, py = figures["native"], figures["python"]
    eng_nat, eng_py = figures["engine.native"], figures["engine.python"]
    print(
        f"{n} open lists: native {nat['rss_per_list']:,.0f} B/list RSS delta "
        f"({nat['counted_per_list']:,.0f} B/list by the join's own capacities), "
        f"Python pipeline {py['rss_per_list']:,.0f} B/list; the whole engine as replay builds it:"
        f" native {eng_nat['rss_per_list']:,.0f} B/list, Python {eng_py['rss_per_list']:,.0f}"
    )
    results = [
        Result(
            "join_memory.native",
            nat["rss_per_list"],
            "B/list",
            target=Target(TARGET_BYTES, at_most=True, on="measured"),
            baseline=py["rss_per_list"],
            baseline_name="Python pipeline",
            note=f"RSS delta per open 10-result list, {n} held by the native join (child)",
        ),
        Result(
            "join_memory.engine",
            eng_nat["rss_per_list"],
            "B/list",
            baseline=eng_py["rss_per_list"],
            baseline_name="Python engine, same build",
            note=f"RSS delta per open list, {n} held by the engine replay builds (defaults)",
        ),
    ]
    write_json(
        args.json,
        {
            "benchmark": "join_memory",
            "lists": n,
            **figures,
            "results": [r.as_dict() for r in results],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
