"""The simulator's lines as one JSONL file, for the Rust-only measurement of the engine.

    .venv/bin/python benchmarks/write_sim_jsonl.py FILE [--events 100000] [--seed 7]

The lines ``bench_replay.py`` replays (``sim_lines(n, seed=7, noise_share=0.01)``: judgments,
impressions of 10 results, clicks, dwell, purchases, 1 % noise records), one per line, for
``cargo run --release --example replay_core -- FILE`` (native/examples/replay_core.rs,
docs/native.md "Where the Rust time goes").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from _common import sim_lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="the JSONL file to write")
    parser.add_argument("--events", type=int, default=100_000, help="records (default 100000)")
    parser.add_argument("--seed", type=int, default=7, help="the simulator's seed (default 7)")
    args = parser.parse_args(argv)
    lines = sim_lines(args.events, seed=args.seed, noise_share=0.01)
    if any(b"\n" in line for line in lines):
        print("write_sim_jsonl: a simulated record holds a newline", file=sys.stderr)
        return 1
    args.file.write_bytes(b"".join(line + b"\n" for line in lines))
    print(f"{len(lines)} lines to {args.file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
