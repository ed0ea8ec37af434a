"""Soak: RSS drift of the pipeline over a long replay of simulated traffic, after warm-up.

    .venv/bin/python benchmarks/bench_soak.py [--seconds 150] [--quick] [--json FILE]

A child process (fresh RSS) feeds the traffic simulator's records (default config: 10
impressions per event second, clicks, judgments, 1 % noise) to one pipeline for ``--seconds``
of wall time, as the daemon does: ``offer`` per record and, every 10,000 records, a
``snapshot()`` and ``commit_offsets()``. RSS is sampled at each of those points.

Warm-up ends when both a quarter of the time budget has passed and the event time has run
past the longest window, the attribution window and the lateness (every bucket, open-list and
finalized-id structure at its steady size). Drift = (the last sample − the sample at the end of
warm-up) ÷ the sample at the end of warm-up; the largest sample after warm-up is reported too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from _common import SIM_START_MS, Result, Target, rss_bytes, suite_parser, write_json

from streameval.config import EvaluationSettings
from streameval.pipeline import Pipeline
from streameval.sim import SimConfig, traffic

#: RSS growth after warm-up, at most, in percent (issue 6)
TARGET_PERCENT = 5.0
SAMPLE_EVERY = 10_000
SOURCE = "input"


def soak(seconds: float, seed: int) -> dict[str, object]:
    settings = EvaluationSettings()
    steady_after_ms = (
        max(settings.windows) + settings.attribution_window + settings.allowed_lateness + 60_000
    )
    pipeline = Pipeline(settings)
    pipeline.add_source(SOURCE)
    offer = pipeline.offer
    start = time.monotonic()
    warm_until = start + seconds / 4
    deadline = start + seconds
    samples: list[tuple[float, int, int]] = []  # (elapsed s, records, rss)
    warm_index: int | None = None
    n = 0
    for record in traffic(SimConfig(seed=seed, noise_share=0.01), SIM_START_MS):
        offer(record.raw, SOURCE, n)
        n += 1
        if n % SAMPLE_EVERY:
            continue
        pipeline.snapshot()
        pipeline.commit_offsets()
        now = time.monotonic()
        samples.append((now - start, n, rss_bytes()))
        if (
            warm_index is None
            and now >= warm_until
            and (record.time_ms - SIM_START_MS >= steady_after_ms)
        ):
            warm_index = len(samples) - 1
        if now >= deadline and warm_index is not None and len(samples) > warm_index + 1:
            break
    snap = pipeline.snapshot()
    if warm_index is None:
        raise RuntimeError("the soak ended before its warm-up (give it more --seconds)")
    return {
        "records": n,
        "event_time_hours": (record.time_ms - SIM_START_MS) / 3_600_000,
        "warm_index": warm_index,
        "samples": samples,
        "open_lists": snap.open_lists,
        "judgments": snap.judgments,
    }


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, default=None, help="wall time of the soak")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--child", action="store_true", help="run the soak in this process")
    args = parser.parse_args()
    seconds = args.seconds or (20.0 if args.quick else 150.0)
    if args.child:
        print(json.dumps(soak(seconds, args.seed)))
        return 0

    command = [sys.executable, str(Path(__file__)), "--child", "--seconds", str(seconds)]
    child = subprocess.run(
        [*command, "--seed", str(args.seed)],
        check=True,
        capture_output=True,
        text=True,
    )
    data = json.loads(child.stdout)
    samples = data["samples"]
    warm = samples[data["warm_index"]]
    last = samples[-1]
    peak = max(s[2] for s in samples[data["warm_index"] :])
    drift = 100.0 * (last[2] - warm[2]) / warm[2]
    mib = 1024 * 1024
    print(
        f"{data['records']:,} records ({data['event_time_hours']:.1f} h of event time) "
        f"in {last[0]:.0f} s; warm-up ended at {warm[0]:.0f} s ({warm[1]:,} records)"
    )
    print(
        f"RSS after warm-up {warm[2] / mib:.1f} MiB, at the end {last[2] / mib:.1f} MiB, "
        f"largest {peak / mib:.1f} MiB: drift {drift:+.2f} %"
    )
    result = Result(
        "soak",
        drift,
        "%",
        target=Target(TARGET_PERCENT, at_most=True, on="measured"),
        note=f"RSS {warm[2] / mib:.1f} -> {last[2] / mib:.1f} MiB (largest {peak / mib:.1f}) "
        f"over {last[1] - warm[1]:,} records after warm-up; {data['records']:,} records, "
        f"{data['event_time_hours']:.1f} h of event time in {last[0]:.0f} s",
    )
    write_json(
        args.json,
        {
            "benchmark": "soak",
            "seconds": seconds,
            **{k: v for k, v in data.items() if k != "samples"},
            "samples": samples,
            "results": [result.as_dict()],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
