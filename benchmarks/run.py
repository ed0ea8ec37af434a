"""The benchmark suite: every benchmark, one table (name, measured, baseline, ratio, target, met?).

    .venv/bin/python benchmarks/run.py [--quick] [--json FILE] [--only NAME[,NAME…]]

Benchmarks (each also runs alone: ``benchmarks/bench_<name>.py --help``):

* ``scoring``  lists/s of streameval's Scorer ÷ pytrec_eval on the same lists (target ≥ 2.0)
* ``replay``   events/s of the whole pipeline ÷ a bare json.loads loop (target ≥ 1.0)
* ``decode``   ``decode.mapped``: a team's own JSON shape through its mapping ÷ native decode per
  record (target ≤ 1.5); ``decode.avro``: the same shape as Confluent wire-format Avro
* ``memory``   bytes per open 10-result list (target ≤ 1 KB), peak RSS with 100k open lists
* ``join_memory``  bytes per open 10-result list held by the native join, whole process
  (target ≤ 256 B, issue 32), beside the Python pipeline's (no row without the native module)
* ``soak``     RSS drift over a long replay after warm-up (target ≤ 5 %)
* ``daemon``   ``streameval run`` through a real broker ÷ a bare KafkaConsumer (target ≥ 0.75)
* ``rebuild``  records/s rebuilding after a kill ÷ the first run (target ≥ 0.9; with daemon)
* ``consumer`` ``consumer.confluent``: a bare confluent-kafka consumer ÷ the bare KafkaConsumer
  (with daemon, which also measures ``daemon.confluent``: the daemon with that consumer)
* ``scaling``  replay and scrape cost against list length, segments and windows (no target)
* ``load``     twice the design rate live through a broker (lag not growing, RSS drift ≤ 5 %), a
  flood of segment values (≤ max_segments + 1) and of never-clicked impressions (≤ the cap)
* ``restart``  seconds from a SIGKILLed daemon's restart to /readyz 200 with the window state topic
  ÷ without it, both clients, extrapolated to the design rate (target ≤ 30 s with it)
* ``interleaving``  ``interleaving.sensitivity``: impressions until a 3 % NDCG@10 regression is
  detected, team-draft interleaving ÷ an A/B split on implicit (click-based) NDCG@10 with the
  same always-valid test, medians over 20 seeds (target ≤ 0.1); ``….judged``: the same ÷ the A/B
  split on judged NDCG@10 (no target)
* ``judges``   ``judges.native``: µs per finalized list of the native judge tracker's ``fold``
  ÷ the Python ``JudgeTracker.fold``; ``judges.native.changed``: its listener per judgment
  change (no target; no rows without the native module)

Each benchmark runs in its own process (a clean heap and RSS); ratios are always against a
baseline measured in the same run, CPU-time medians of interleaved repeats where the machine is
shared (``restart`` times wall clock: what a restart costs is elapsed time). ``daemon``,
``rebuild``, ``load`` and ``restart`` need a broker: ``KAFKA_BOOTSTRAP_SERVERS``, else one is
started with ``scripts/kafka-broker`` for the run. Exit status: 0 when every benchmark ran
(targets missed or not), 1 when one failed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Result, environment, read_results, results_table

HERE = Path(__file__).resolve().parent
#: benchmark name -> the script that measures it (daemon, rebuild and consumer: one run)
SCRIPTS = {
    "scoring": "bench_scoring.py",
    "replay": "bench_replay.py",
    "decode": "bench_decode.py",
    "memory": "bench_memory.py",
    "join_memory": "bench_join_memory.py",
    "soak": "bench_soak.py",
    "daemon": "bench_daemon.py",
    "rebuild": "bench_daemon.py",
    "consumer": "bench_daemon.py",
    "scaling": "bench_scaling.py",
    "load": "bench_load.py",
    "restart": "bench_restart.py",
    "interleaving": "bench_interleaving.py",
    "judges": "bench_judge_tracker.py",
}


def parse_only(text: str | None) -> list[str]:
    if not text:
        return list(SCRIPTS)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SCRIPTS]
    if unknown:
        raise SystemExit(f"unknown benchmark {unknown}; known: {', '.join(SCRIPTS)}")
    return names


def run_script(script: str, quick: bool, out: Path, log: Path) -> tuple[int, float]:
    """Run one benchmark script; its own output goes to ``log``. (exit status, seconds)"""
    command = [sys.executable, str(HERE / script), "--json", str(out)]
    if quick:
        command.append("--quick")
    start = time.monotonic()
    with log.open("w") as fh:
        status = subprocess.run(command, stdout=fh, stderr=subprocess.STDOUT, check=False)
    return status.returncode, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (about 4 minutes)")
    parser.add_argument("--json", type=Path, default=None, help="also write the table to FILE")
    parser.add_argument(
        "--only", default=None, metavar="NAME[,NAME…]", help=f"some of: {', '.join(SCRIPTS)}"
    )
    parser.add_argument(
        "--logs", type=Path, default=None, help="keep each benchmark's own output in DIR"
    )
    args = parser.parse_args()
    names = parse_only(args.only)
    scripts = list(dict.fromkeys(SCRIPTS[n] for n in names))

    results: list[Result] = []
    failures: dict[str, str] = {}
    timings: dict[str, float] = {}
    details: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="streameval-bench-") as tmp:
        logs = args.logs or Path(tmp)
        logs.mkdir(parents=True, exist_ok=True)
        for script in scripts:
            stem = script.removesuffix(".py")
            out, log = Path(tmp) / f"{stem}.json", logs / f"{stem}.log"
            print(f"running {script} …", file=sys.stderr, flush=True)
            status, seconds = run_script(script, args.quick, out, log)
            timings[stem] = seconds
            if status != 0 or not out.exists():
                tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
                failures[stem] = f"exit status {status}\n{tail}"
                print(f"  FAILED ({seconds:.0f} s):\n{tail}", file=sys.stderr)
                continue
            print(f"  done in {seconds:.0f} s", file=sys.stderr)
            details[stem] = json.loads(out.read_text())
            # a script may measure more than was asked (bench_daemon: daemon and rebuild)
            results += [r for r in read_results(out) if r.name.split(".")[0] in names]

    print()
    print(results_table(results))
    total = sum(timings.values())
    print(
        f"\n{'quick' if args.quick else 'full'} suite in {total:.0f} s: "
        + ", ".join(f"{k.removeprefix('bench_')} {v:.0f} s" for k, v in timings.items())
    )
    for stem, why in failures.items():
        print(f"FAILED {stem}: {why}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "environment": environment(),
                    "quick": args.quick,
                    "seconds": timings,
                    "failures": failures,
                    "results": [r.as_dict() for r in results],
                    "details": details,
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
