"""Small helpers shared by the benchmarks: timing, a ratio table, optional JSON output.

Typical use::

    parser = benchmark_parser("what this measures")
    parser.add_argument("--lists", type=int, default=100_000)
    args = parser.parse_args()
    rows = measure_interleaved(
        [("mine", lambda: run_mine(data)), ("theirs", lambda: run_theirs(data))],
        items=n, repeats=args.repeats,
    )
    print(ratio_table(rows, baseline="theirs"))
    write_json(args.json, {"rows": [r.as_dict() for r in rows]})
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Measurement:
    """The timings of one contender: ``items`` processed per call, one time per repeat."""

    name: str
    items: int
    seconds: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def rate(self) -> float:
        """Items per second at the median time."""
        return self.items / self.median if self.median > 0 else float("inf")

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "items": self.items,
            "seconds": list(self.seconds),
            "median_seconds": self.median,
            "items_per_second": self.rate,
        }


#: the clocks a benchmark may time with: "process" (CPU time of this process, steady on a
#: shared machine where other jobs steal the cores) and "wall" (what a user waits)
TIMERS: dict[str, Callable[[], float]] = {
    "process": time.process_time,
    "wall": time.perf_counter,
}


def time_repeats(
    fn: Callable[[], object], repeats: int, timer: Callable[[], float] = time.perf_counter
) -> tuple[float, ...]:
    """Time of ``repeats`` calls of ``fn`` (wall time unless another ``timer`` is given)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times = []
    for _ in range(repeats):
        start = timer()
        fn()
        times.append(timer() - start)
    return tuple(times)


def measure(
    name: str,
    fn: Callable[[], object],
    *,
    items: int,
    repeats: int,
    timer: Callable[[], float] = time.perf_counter,
) -> Measurement:
    """Time ``fn`` (which processes ``items`` items) ``repeats`` times."""
    return Measurement(name, items, time_repeats(fn, repeats, timer))


def measure_interleaved(
    contenders: Sequence[tuple[str, Callable[[], object]]],
    *,
    items: int,
    repeats: int,
    timer: Callable[[], float] = time.perf_counter,
) -> list[Measurement]:
    """Time several contenders round-robin (A, B, C, A, B, C, …).

    On a shared machine the load drifts; interleaving gives every contender the same share of
    good and bad moments, so their ratio is steadier than with back-to-back blocks.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    times: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for _ in range(repeats):
        for name, fn in contenders:
            times[name].extend(time_repeats(fn, 1, timer))
    return [Measurement(name, items, tuple(times[name])) for name, _ in contenders]


def ratio_table(rows: Sequence[Measurement], baseline: str, unit: str = "items/s") -> str:
    """A text table: median time, rate and rate relative to the row named ``baseline``."""
    base = next((r for r in rows if r.name == baseline), None)
    if base is None:
        raise ValueError(f"no row named {baseline!r}")
    width = max(len(r.name) for r in rows)
    lines = [f"{'':{width}}  {'median s':>10}  {unit:>14}  {'x ' + baseline:>14}"]
    for r in rows:
        ratio = r.rate / base.rate
        lines.append(f"{r.name:{width}}  {r.median:10.4f}  {r.rate:14,.0f}  {ratio:14.2f}")
    return "\n".join(lines)


def benchmark_parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark shares: --repeats and --json."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats (median is kept)")
    parser.add_argument("--json", type=Path, default=None, help="also write results to FILE")
    parser.add_argument(
        "--timer",
        choices=sorted(TIMERS),
        default="process",
        help="process: CPU time of this process (default; steady when the machine is shared); "
        "wall: elapsed time",
    )
    return parser


def environment() -> dict[str, str]:
    """What the numbers were measured on."""
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "platform": platform.platform(),
    }


def write_json(path: Path | None, payload: dict[str, object]) -> None:
    """Write ``payload`` (plus the environment) as JSON to ``path``; nothing when None."""
    if path is None:
        return
    path.write_text(json.dumps({"environment": environment(), **payload}, indent=2) + "\n")
