"""Soak: RSS drift of the pipeline over a long replay of simulated traffic, after warm-up.

    .venv/bin/python benchmarks/bench_soak.py [--seconds 100] [--trickle-seconds 50] [--quick]
        [--json FILE]

A child process (fresh RSS) feeds the traffic simulator's records (10 impressions per event
second, clicks, dwell, purchases, 1 % noise) to one pipeline for ``--seconds`` of wall time, as
the daemon does: ``offer`` per record and, every 10,000 records, a ``snapshot()`` and
``commit_offsets()``, with the collector's thresholds the daemon sets
(:mod:`streameval.gc_policy`). RSS is sampled at each of those points.

Warm-up ends when both a quarter of the time budget has passed and the event time has run past
the longest window, the attribution window and the lateness (every bucket, open-list and
finalized-id structure at its steady size). Drift = (the last sample − the sample at the end of
warm-up) ÷ the sample at the end of warm-up; the largest sample after warm-up is reported too.

* ``soak`` (the target, ≤ 5 %): the judgment table is the one read at the start
  (``--judgment-rate 0``), so all state is at its steady size after warm-up: growth is a leak.
* ``soak.judgments`` (not with ``--quick``): the simulator's default trickle of new judgments
  (0.1 per event second, each a (query, doc) pair not judged yet). The judgment table is state
  that grows with every pair ever judged (a global table, never evicted); this row is the RSS
  growth per judgment gained.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import SIM_START_MS, Result, Target, rss_bytes, suite_parser, write_json

from streameval import gc_policy
from streameval.config import EvaluationSettings
from streameval.engine import Pipeline
from streameval.sim import SimConfig, traffic

#: RSS growth after warm-up, at most, in percent (issue 6)
TARGET_PERCENT = 5.0
SAMPLE_EVERY = 10_000
#: the simulator's default rate of new judgments (per event second)
TRICKLE_RATE = SimConfig().judgment_rate
SOURCE = "input"


def soak(seconds: float, seed: int, judgment_rate: float) -> dict[str, object]:
    settings = EvaluationSettings()
    steady_after_ms = (
        max(settings.windows) + settings.attribution_window + settings.allowed_lateness + 60_000
    )
    pipeline = Pipeline(settings)
    pipeline.add_source(SOURCE)
    offer = pipeline.offer
    gc_policy.tune()  # the collector's thresholds of `streameval run`
    start = time.monotonic()
    warm_until = start + seconds / 4
    deadline = start + seconds
    samples: list[tuple[float, int, int, int]] = []  # (elapsed s, records, rss, judgments)
    warm_index: int | None = None
    n = 0
    config = SimConfig(seed=seed, noise_share=0.01, judgment_rate=judgment_rate)
    for record in traffic(config, SIM_START_MS):
        offer(record.raw, SOURCE, n)
        n += 1
        if n % SAMPLE_EVERY:
            continue
        judgments = pipeline.snapshot().judgments
        pipeline.commit_offsets()
        now = time.monotonic()
        samples.append((now - start, n, rss_bytes(), judgments))
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


def run_child(seconds: float, seed: int, judgment_rate: float) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__)), "--child", "--seconds", str(seconds)]
    child = subprocess.run(
        [*command, "--seed", str(seed), "--judgment-rate", str(judgment_rate)],
        check=True,
        capture_output=True,
        text=True,
    )
    data: dict[str, Any] = json.loads(child.stdout)
    return data


def summary(data: dict[str, Any]) -> dict[str, float]:
    samples = data["samples"]
    warm, last = samples[data["warm_index"]], samples[-1]
    return {
        "warm_s": warm[0],
        "warm_records": warm[1],
        "warm_rss": warm[2],
        "warm_judgments": warm[3],
        "last_s": last[0],
        "last_records": last[1],
        "last_rss": last[2],
        "last_judgments": last[3],
        "peak_rss": max(s[2] for s in samples[data["warm_index"] :]),
        "drift_percent": 100.0 * (last[2] - warm[2]) / warm[2],
    }


def describe(data: dict[str, Any], f: dict[str, float]) -> str:
    mib = 1024 * 1024
    return (
        f"RSS {f['warm_rss'] / mib:.1f} -> {f['last_rss'] / mib:.1f} MiB "
        f"(largest {f['peak_rss'] / mib:.1f}) over {f['last_records'] - f['warm_records']:,.0f} "
        f"records after warm-up; {data['records']:,} records, "
        f"{data['event_time_hours']:.1f} h of event time in {f['last_s']:.0f} s"
    )


def main() -> int:
    parser = suite_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--seconds", type=float, default=None, help="wall time of the soak")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--judgment-rate",
        type=float,
        default=0.0,
        help="new judgments per event second after the start (the simulator's default is 0.1)",
    )
    parser.add_argument(
        "--trickle-seconds",
        type=float,
        default=50.0,
        help="a second soak with the simulator's judgment trickle (not with --quick; 0: none)",
    )
    parser.add_argument("--child", action="store_true", help="run the soak in this process")
    args = parser.parse_args()
    seconds = args.seconds or (20.0 if args.quick else 100.0)
    if args.child:
        print(json.dumps(soak(seconds, args.seed, args.judgment_rate)))
        return 0

    # the target: a judgment table that stays as read at the start, so every structure has
    # reached its steady size after warm-up and any growth is a leak
    data = run_child(seconds, args.seed, args.judgment_rate)
    f = summary(data)
    print(f"soak, judgment rate {args.judgment_rate:g}/s: {describe(data, f)}")
    print(f"drift {f['drift_percent']:+.2f} %")
    results = [
        Result(
            "soak",
            f["drift_percent"],
            "%",
            target=Target(TARGET_PERCENT, at_most=True, on="measured"),
            note=describe(data, f)
            + f"; judgment table fixed at {f['last_judgments']:,.0f} after the start",
        )
    ]
    runs = {"soak": {**data, "summary": f}}
    if not args.quick and args.trickle_seconds > 0:
        # the simulator's default trickle of new judgments: the judgment table is state that
        # grows with every newly judged (query, doc) pair; measure what each one costs
        trickle = run_child(args.trickle_seconds, args.seed, TRICKLE_RATE)
        t = summary(trickle)
        gained = t["last_judgments"] - t["warm_judgments"]
        per_judgment = (t["last_rss"] - t["warm_rss"]) / gained if gained else float("nan")
        print(f"soak, judgment rate {TRICKLE_RATE:g}/s: {describe(trickle, t)}")
        print(f"drift {t['drift_percent']:+.2f} %, {gained:,.0f} judgments gained")
        results.append(
            Result(
                "soak.judgments",
                per_judgment,
                "B/judgment",
                note=f"RSS growth per new judgment with the simulator's {TRICKLE_RATE:g}/s "
                f"trickle: drift {t['drift_percent']:+.2f} % as the table grew "
                f"{t['warm_judgments']:,.0f} -> {t['last_judgments']:,.0f}; "
                + describe(trickle, t),
            )
        )
        runs["soak.judgments"] = {**trickle, "summary": t}
    write_json(
        args.json,
        {
            "benchmark": "soak",
            "seconds": seconds,
            "runs": runs,
            "results": [r.as_dict() for r in results],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
