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
import math
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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


def per_line(fn: Callable[[bytes], object], lines: Sequence[bytes]) -> Callable[[], object]:
    """A contender that calls ``fn`` on every line (a decoder, say), for :func:`measure`."""

    def run() -> object:
        for line in lines:
            fn(line)
        return None

    return run


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


# --- the suite: one result row per figure, with its target ----------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """What a figure must reach: ``ratio`` (measured ÷ baseline) or the ``measured`` value itself,
    at least (default) or at most ``value``."""

    value: float
    at_most: bool = False
    on: str = "ratio"  # "ratio" or "measured"

    def met(self, measured: float, ratio: float | None) -> bool | None:
        """Whether the figure meets the target (None when it cannot be told: no baseline)."""
        figure = ratio if self.on == "ratio" else measured
        if figure is None:
            return None
        return figure <= self.value if self.at_most else figure >= self.value

    def describe(self, unit: str) -> str:
        op = "<=" if self.at_most else ">="
        if self.on == "ratio":
            return f"ratio {op} {self.value:g}"
        return f"{op} {_number(self.value)} {unit}".rstrip()

    def as_dict(self) -> dict[str, object]:
        return {"value": self.value, "at_most": self.at_most, "on": self.on}


@dataclass(frozen=True, slots=True)
class Result:
    """One row of the suite's table: a measured figure, its baseline in the same run, a target."""

    name: str
    measured: float
    unit: str
    baseline: float | None = None
    baseline_name: str = ""
    target: Target | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.measured / self.baseline

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.target.met(self.measured, self.ratio)

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "measured": self.measured,
            "unit": self.unit,
            "baseline": self.baseline,
            "baseline_name": self.baseline_name,
            "ratio": self.ratio,
            "target": None if self.target is None else self.target.as_dict(),
            "met": self.met,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Result:
        target = data.get("target")
        return cls(
            name=str(data["name"]),
            measured=float(data["measured"]),  # type: ignore[arg-type]
            unit=str(data.get("unit", "")),
            baseline=None if data.get("baseline") is None else float(data["baseline"]),  # type: ignore[arg-type]
            baseline_name=str(data.get("baseline_name", "")),
            target=None if not isinstance(target, dict) else Target(**target),
            note=str(data.get("note", "")),
        )


def _number(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def results_table(results: Sequence[Result]) -> str:
    """The suite's one table: name, measured, baseline, ratio, target, met?"""
    header = ("name", "measured", "baseline", "ratio", "target", "met?")
    rows = [header]
    for r in results:
        base = "-"
        if r.baseline is not None:
            base = f"{_number(r.baseline)} {r.unit}".rstrip()
            if r.baseline_name:
                base += f" ({r.baseline_name})"
        ratio = r.ratio
        met = r.met
        rows.append(
            (
                r.name,
                f"{_number(r.measured)} {r.unit}".rstrip(),
                base,
                "-" if ratio is None else f"{ratio:.2f}",
                "-" if r.target is None else r.target.describe(r.unit),
                "-" if met is None else ("yes" if met else "NO"),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {1, 2, 3}
    lines = []
    for n, row in enumerate(rows):
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    notes = [f"  {r.name}: {r.note}" for r in results if r.note]
    if notes:
        lines += ["", "notes:", *notes]
    return "\n".join(lines)


def write_results(
    path: Path | None, benchmark: str, results: Sequence[Result], **extra: object
) -> None:
    """Write a benchmark's rows (and any ``extra`` details) as JSON; nothing when None."""
    write_json(path, {"benchmark": benchmark, "results": [r.as_dict() for r in results], **extra})


def read_results(path: Path) -> list[Result]:
    data = json.loads(path.read_text())
    return [Result.from_dict(row) for row in data.get("results", [])]


def suite_parser(description: str, *, repeats: int = 5) -> argparse.ArgumentParser:
    """:func:`benchmark_parser` plus ``--quick`` (smaller sizes, for a fast look)."""
    parser = benchmark_parser(description)
    parser.set_defaults(repeats=repeats)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    return parser


# --- process memory ---------------------------------------------------------------------------


def rss_bytes() -> int:
    """Resident set size of this process now (Linux /proc)."""
    with open("/proc/self/statm") as fh:
        resident_pages = int(fh.read().split()[1])
    return resident_pages * _PAGE_SIZE


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (VmHWM: unlike ``ru_maxrss`` it is not
    inherited from the parent across fork and exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    raise RuntimeError("no VmHWM in /proc/self/status")


def _page_size() -> int:
    import os

    return os.sysconf("SC_PAGE_SIZE")


_PAGE_SIZE = _page_size()


# --- realistic input --------------------------------------------------------------------------

#: event time of the simulated traffic's start (2026-01-01T00:00:00Z)
SIM_START_MS = 1_767_225_600_000


def sim_records(n: int, *, seed: int = 7, **config: object) -> list[object]:
    """The first ``n`` records of the traffic simulator (``SimRecord``: time, kind, key, raw),
    from ``start_ms`` of event time (a ``config`` key; default ``SIM_START_MS``)."""
    from itertools import islice

    from streameval.sim import SimConfig, traffic

    start_ms = int(config.pop("start_ms", SIM_START_MS))  # type: ignore[call-overload]
    return list(islice(traffic(SimConfig(seed=seed, **config), start_ms), n))  # type: ignore[arg-type]


def sim_lines(n: int, *, seed: int = 7, **config: object) -> list[bytes]:
    """The raw bytes of the first ``n`` simulated records, as a replay or Kafka would see them."""
    return [r.raw for r in sim_records(n, seed=seed, **config)]  # type: ignore[attr-defined]


def ratio_interval(
    num: Sequence[float], den: Sequence[float], *, draws: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """A 95 % percentile-bootstrap interval of median(num) / median(den), the samples of each
    side resampled independently (Efron & Tibshirani 1993, ch. 13): how far the ratio of two
    medians of skewed samples (stopping times, one per seed; CPU times of runs on a shared
    machine) may be from the population's."""
    rng = random.Random(seed)
    ratios = sorted(
        statistics.median(rng.choices(num, k=len(num)))
        / statistics.median(rng.choices(den, k=len(den)))
        for _ in range(draws)
    )
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]


def offer_log(engine: Any, lines: Sequence[bytes], source: str) -> None:
    """Every line through ``engine`` as ``streameval replay`` offers one log: ``offer_batch``
    of chunks of ``CHUNK_LINES`` ``(line, offset, -1)``, then ``set_idle`` and ``finish``."""
    from streameval.runtime.replay import CHUNK_LINES

    offer_batch = engine.offer_batch
    for start in range(0, len(lines), CHUNK_LINES):
        chunk = lines[start : start + CHUNK_LINES]
        offer_batch([(line, start + i, -1) for i, line in enumerate(chunk)], source)
    engine.set_idle(source)
    engine.finish()
