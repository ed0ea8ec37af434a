"""Issue 28 §4: output piped into a reader that stops early (``streameval schema | head``) ends
the command quietly with 141 (128 + SIGPIPE, as a shell reports any tool a closed pipe stops),
never a ``BrokenPipeError`` traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from streameval.cli import EXIT_BROKEN_PIPE

T0 = 1_700_000_000_000


def _pipe_into_head(args: list[str]) -> tuple[int, str, str]:
    """``streameval ARGS | head -1``: (streameval's exit code, its stderr, what head printed)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("STREAMEVAL_")}
    writer = subprocess.Popen(
        [sys.executable, "-m", "streameval.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean,
    )
    assert writer.stdout is not None and writer.stderr is not None
    head = subprocess.run(
        ["head", "-1"], stdin=writer.stdout, capture_output=True, check=True, timeout=60
    )
    writer.stdout.close()  # head's end only: streameval now writes into a closed pipe
    stderr = writer.stderr.read().decode()
    return writer.wait(timeout=60), stderr, head.stdout.decode()


def _log(path: Path, n: int) -> Path:
    lines = []
    for i in range(n):
        t = T0 + i * 100
        lines.append(
            {
                "type": "impression",
                "request_id": f"r{i}",
                "timestamp": t,
                "query_id": f"q{i % 50}",
                "results": ["a", "b", "c"],
            }
        )
        lines.append({"type": "click", "request_id": f"r{i}", "doc_id": "b", "timestamp": t + 1000})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_schema_into_head_exits_quietly() -> None:
    rc, stderr, first = _pipe_into_head(["schema"])
    assert first.strip() == "{"
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr
    # the schema is a few kB: it may fit in the pipe before head closes it (then 0)
    assert rc in (0, EXIT_BROKEN_PIPE)


@pytest.mark.parametrize("n", [20_000])
def test_replay_lists_into_head_exits_quietly_with_141(tmp_path: Path, n: int) -> None:
    log = _log(tmp_path / "log.jsonl", n)
    rc, stderr, first = _pipe_into_head(["replay", "--output", "lists", str(log)])
    assert json.loads(first)["relevance"] == "implicit"
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    # 20 000 lists are megabytes: far more than a pipe holds, so the pipe did break
    assert rc == EXIT_BROKEN_PIPE
