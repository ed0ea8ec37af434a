"""replay A/B: ``streameval replay`` end to end, this checkout against another revision,
alternating, in one run.

    .venv/bin/python benchmarks/ab_replay.py --base REV [--events 400000] [--repeats 5]
        [--config FILE] [--head-config FILE] [--instructions] [--json FILE]

The project's rule for a capability on the hot path: ``replay`` keeps at least 0.9x its events/s
*before the change*, measured A/B in one run. ``bench_replay.py`` compares the pipeline with
and without a consumer in the same code; this compares the command a user runs, as shipped at
two revisions. ``--base`` is checked out in a temporary git worktree (removed at the end; its
native module built when this checkout's is, so both arms run the engine they ship); both
arms run ``python -m streameval.cli replay --output json --no-progress LOG`` in a process of
their own, with this interpreter and its packages, on one simulated log (this checkout's
simulator, ``sim_lines``: the judgments of the start, then impressions, clicks, dwell and
purchases, 1 % noise records), base and head in turn, ``--repeats`` times each. Timed: each
child's CPU time (user + system, ``RUSAGE_CHILDREN``: steady when the machine is shared), wall
time beside it; both include the interpreter's start and imports (~0.3 s, the same for both).
Checked: both arms account for the same records (the JSON output's ``intake``).

Row ``replay.ab``: head's events/s over base's (medians of CPU time); target >= 0.9.

The native engine: a git worktree holds no extension module (``streameval/_native*.so`` is built,
not tracked), so its arm would run the Python engine (one WARNING, in stderr) against a native
head. The base's git worktree gets its module built (:func:`build_native`); ``--base-tree DIR``
takes a checkout of the base revision with its module built instead (e.g. ``git archive REV |
tar -x -C DIR``, then ``scripts/native-check`` there); a head with the module and a base without
one is refused.

``--instructions``: instead of CPU time, the instructions each arm executes, counted by
valgrind's callgrind (``valgrind`` on the PATH; ~60x slower, so use ``--events 60000``), with
``PYTHONHASHSEED=0``: the count is the same from run to run and does not move with the load of
a shared machine, so it can tell steps of a per cent that CPU time (±15 % per run here) cannot.
Per event: the arm's count on the log less its count on an empty log (start and imports).
Row ``replay.ab.instructions``: base's instructions per event over head's. Instructions are not
time (cache misses and allocation cost are not in them), so this says where a difference comes
from; the CPU-time row says how large it is.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import Result, Target, benchmark_parser, ratio_interval, sim_lines, write_json

REPO = Path(__file__).resolve().parent.parent
TARGET = 0.9


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def replay_once(
    tree: Path, log: Path, config: Path | None = None
) -> tuple[float, float, dict[str, Any]]:
    """(CPU seconds, wall seconds, the JSON output) of one ``streameval replay`` of ``log``
    with the code of ``tree`` (and ``--config config``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    env["PYTHONPATH"] = str(tree)
    cpu, wall = _child_cpu(), time.perf_counter()
    command = [sys.executable, "-m", "streameval.cli", "replay", "--output", "json"]
    done = subprocess.run(
        [*command, "--no-progress", *(["--config", str(config)] if config else []), str(log)],
        cwd=tree,
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - wall
    cpu = _child_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"replay at {tree} failed: {done.stderr.decode()[-2000:]}")
    return cpu, wall, json.loads(done.stdout)


def instructions_once(tree: Path, log: Path, config: Path | None = None) -> int:
    """Instructions executed by one ``streameval replay`` of ``log`` with the code of ``tree``
    (callgrind's total, hash seed fixed: the same count each time)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    env["PYTHONPATH"] = str(tree)
    env["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={tmp}/callgrind.out",
                sys.executable,
                "-m",
                "streameval.cli",
                "replay",
                "--output",
                "json",
                "--no-progress",
                *(["--config", str(config)] if config else []),
                str(log),
            ],
            cwd=tree,
            env=env,
            capture_output=True,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"replay at {tree} failed: {done.stderr.decode()[-2000:]}")
    found = re.search(rb"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count from callgrind: {done.stderr.decode()[-500:]}")
    return int(found.group(1))


def instructions_ab(
    arms: dict[str, Path],
    log: Path,
    events: int,
    head_config: Path | None,
    base_config: Path | None,
) -> dict[str, float]:
    """Per arm: instructions per event (the log's count less an empty log's)."""
    empty = log.with_name("empty.jsonl")
    empty.write_bytes(b"")
    out = {}
    for name, tree in arms.items():
        config = head_config if tree == REPO else base_config
        start = instructions_once(tree, empty, config)
        total = instructions_once(tree, log, config)
        out[name] = (total - start) / events
        print(f"{name}: {total:,} instructions, {start:,} of them start-up", flush=True)
    return out


def worktree(rev: str, into: Path) -> Path:
    path = into / "base"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(path), rev], check=True
    )
    build_native(path)
    return path


def _has_native(tree: Path) -> bool:
    return any((tree / "streameval").glob("_native*.so"))


def _forget(base: Path, made: bool) -> None:
    if made:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False
        )


def build_native(tree: Path) -> None:
    """The extension module of ``tree``'s native crate, built (release, as scripts/native-check
    builds it) into ``tree``'s package when this checkout's is built: else the base arm would
    run the Python engine (a fresh worktree has no module), comparing engines, not revisions.
    Its target directory is kept under this checkout's (``native/target/ab-base``), so a second
    A/B builds only what changed."""
    if not list((REPO / "streameval").glob("_native*.so")) or not (tree / "native").is_dir():
        return
    target = REPO / "native" / "target" / "ab-base"
    env = {
        **os.environ,
        "CARGO_TARGET_DIR": str(target),
        "PYO3_PYTHON": sys.executable,
        "PYTHON_SYS_EXECUTABLE": sys.executable,
        "PYO3_BUILD_EXTENSION_MODULE": "1",
    }
    command = ["cargo", "rustc", "--locked", "--quiet", "--release", "--lib"]
    command += ["--features", "python pyo3/extension-module", "--crate-type", "cdylib"]
    print(f"building the native module of {tree.name}...", flush=True)
    subprocess.run(command, cwd=tree / "native", env=env, check=True)
    shutil.copy(target / "release" / "libstreameval_native.so", tree / "streameval/_native.abi3.so")


def main() -> int:
    parser = benchmark_parser(__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--base", required=True, help="the revision before the change")
    parser.add_argument("--events", type=int, default=400_000, help="simulated lines")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--head-config",
        type=Path,
        default=None,
        help="a TOML configuration for this checkout's arm only (e.g. one that turns a new "
        "capability off, to split a difference between it and the rest)",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="a TOML configuration for both arms (the base must know its keys)",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind's callgrind instead of timing (deterministic)",
    )
    parser.add_argument(
        "--base-tree",
        type=Path,
        default=None,
        help="a checkout of --base with its extension module built (a git worktree has none)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        log.write_bytes(b"\n".join(sim_lines(args.events, seed=args.seed, noise_share=0.01)))
        made = args.base_tree is None
        base = worktree(args.base, Path(tmp)) if made else args.base_tree.resolve()
        if _has_native(REPO) and not _has_native(base):
            _forget(base, made)
            print(
                f"ab_replay: the base at {base} has no streameval._native, so its arm would run"
                " the Python engine; give --base-tree a checkout of the base with its module built"
            )
            return 2
        if args.instructions:
            try:
                per_event = instructions_ab(
                    {"base": base, "head": REPO},
                    log,
                    args.events,
                    args.head_config or args.config,
                    args.config,
                )
            finally:
                _forget(base, made)
            return _report_instructions(args, per_event)
        try:
            arms = {"base": base, "head": REPO}
            cpu: dict[str, list[float]] = {name: [] for name in arms}
            wall: dict[str, list[float]] = {name: [] for name in arms}
            intake: dict[str, Any] = {}
            for repeat in range(args.repeats):
                for name, tree in arms.items():
                    config = (args.head_config or args.config) if tree == REPO else args.config
                    c, w, out = replay_once(tree, log, config)
                    cpu[name].append(c)
                    wall[name].append(w)
                    intake.setdefault(name, out["intake"])
                    print(f"{name} {repeat}: cpu {c:.2f} s, wall {w:.2f} s", flush=True)
        finally:
            _forget(base, made)
    if intake["base"] != intake["head"]:
        print(f"the arms account differently: {intake}")
        return 1
    rate = {name: args.events / statistics.median(cpu[name]) for name in arms}
    ratio = rate["head"] / rate["base"]
    for name in arms:
        print(
            f"{name}: {rate[name]:,.0f} events/s (median CPU {statistics.median(cpu[name]):.2f} s,"
            f" wall {statistics.median(wall[name]):.2f} s; CPU {[round(c, 2) for c in cpu[name]]})"
        )
    # runs of one pair ran minutes apart at most: their ratio cancels the machine's slow drift
    paired = sorted(b / h for b, h in zip(cpu["base"], cpu["head"], strict=True))
    low, high = ratio_interval(cpu["base"], cpu["head"])
    print(
        f"head / base = {ratio:.3f} (target >= {TARGET:g}), 95 % bootstrap interval "
        f"[{low:.3f}, {high:.3f}]; per pair: median {statistics.median(paired):.3f}, "
        f"range {paired[0]:.3f}-{paired[-1]:.3f}"
    )
    result = Result(
        "replay.ab",
        rate["head"],
        "events/s",
        baseline=rate["base"],
        baseline_name=f"replay at {args.base}",
        target=Target(TARGET),
        note=f"`streameval replay` end to end on {args.events:,} simulated lines"
        + (f" (this checkout with {args.head_config.name})" if args.head_config else "")
        + (f" (both with {args.config.name})" if args.config else "")
        + ", median CPU time "
        f"of {args.repeats} alternating runs each (95 % bootstrap interval {low:.3f}-{high:.3f}, "
        f"per-pair median {statistics.median(paired):.3f}); intake equal "
        f"({intake['head']['read']:,} read)",
    )
    write_json(
        args.json,
        {
            "benchmark": "ab_replay",
            "base": args.base,
            "events": args.events,
            "cpu_seconds": cpu,
            "wall_seconds": wall,
            "results": [result.as_dict()],
        },
    )
    return 0


def _report_instructions(args: Any, per_event: dict[str, float]) -> int:
    ratio = per_event["base"] / per_event["head"]
    for name, n in per_event.items():
        print(f"{name}: {n:,.0f} instructions per event")
    print(f"base / head = {ratio:.3f} (events per instruction, head over base)")
    result = Result(
        "replay.ab.instructions",
        1e6 / per_event["head"],
        "events per million instructions",
        baseline=1e6 / per_event["base"],
        baseline_name=f"replay at {args.base}",
        target=Target(TARGET),
        note=f"`streameval replay` on {args.events:,} simulated lines under callgrind"
        + (f" (this checkout with {args.head_config.name})" if args.head_config else "")
        + (f" (both with {args.config.name})" if args.config else "")
        + "; start-up (an empty log's count) subtracted; deterministic",
    )
    write_json(
        args.json,
        {
            "benchmark": "ab_replay",
            "base": args.base,
            "events": args.events,
            "instructions_per_event": per_event,
            "results": [result.as_dict()],
        },
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
