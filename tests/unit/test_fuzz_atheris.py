"""Coverage-guided fuzzing of the intake with atheris (libFuzzer), beside the hypothesis fuzz
tests in test_fuzz_decode.py: libFuzzer mutates toward inputs that reach new branches of our
Python (the UBI reader, the error classification, the join), seeded with one valid record of
each kind (native, UBI, and the Segment-like mapped shape of docs/input-formats.md, which the
harness also reads as the payload of a wire-format Avro record) and a dictionary of the schema's
keys. A crash fails the test with the input libFuzzer saved. The harness is
tests/fuzz/atheris_intake.py.

Where the native engine is built, the harness also runs every input through its decoder
(``streameval._native.decode_native``) and compares it with the Python decoder's answer; in CI
(``CI=true``) a native engine that was not built is a failure, as in test_native_decode.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from streameval import native
from tests.ci import in_ci

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
RUNS = 200_000
T0 = 1_767_225_600_000

SEEDS = [
    {
        "type": "impression",
        "request_id": "r1",
        "timestamp": T0,
        "query": "red shoes",
        "results": ["a", "b", "c"],
        "labels": {"ranker": "x", "arm": "control"},
    },
    {"type": "click", "request_id": "r1", "doc_id": "b", "timestamp": T0 + 1, "position": 2},
    {"type": "judgment", "query": "red shoes", "doc_id": "a", "grade": 2, "timestamp": T0},
    {
        "query_id": "q-1",
        "client_id": "c",
        "user_query": "red shoes",
        "query_response_hit_ids": ["a", "b"],
        "timestamp": T0,
    },
    {
        "action_name": "click",
        "query_id": "q-1",
        "client_id": "c",
        "timestamp": "2026-01-01T00:00:01Z",
        "event_attributes": {"object": {"object_id": "b"}, "position": {"ordinal": 1}},
    },
    # the Segment-like mapped shape (tests/fixtures/input/segment.toml)
    {
        "type": "track",
        "event": "Products Searched",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "properties": {
            "search_id": "r1",
            "query": "red shoes",
            "products": [{"product_id": "a"}, {"product_id": "b"}],
            "experiment_arm": "control",
        },
        "context": {"traits": {"ranker": "x"}},
    },
    {
        "type": "track",
        "event": "Product Viewed",
        "timestamp": "2026-01-01T00:00:01.000Z",
        "properties": {"search_id": "r1", "product_id": "b", "view_ms": 45000},
    },
    {
        "type": "track",
        "event": "Product Rated",
        "timestamp": "2026-01-01T00:00:00.000Z",
        "properties": {"query": "red shoes", "product_id": "a", "rating": 2.0},
    },
]


def test_libfuzzer_finds_no_crash_in_the_intake(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(SEEDS):
        (corpus / f"seed-{i}").write_bytes(json.dumps(seed).encode())
    run = subprocess.run(
        [
            sys.executable,
            str(FUZZ / "atheris_intake.py"),
            str(corpus),
            f"-runs={RUNS}",
            "-max_len=2048",
            "-seed=20261126",
            "-timeout=20",
            "-use_value_profile=1",
            f"-dict={FUZZ / 'events.dict'}",
            f"-artifact_prefix={tmp_path}/",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=tmp_path,
    )
    out = run.stdout + run.stderr
    crashes = [p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-"))]
    assert run.returncode == 0 and not crashes, f"{crashes}\n{out[-3000:]}"
    assert f"Done {RUNS} runs" in out, out[-2000:]
    # it explored: libFuzzer kept inputs that reached new code, beyond the five seeds
    assert len(list(corpus.iterdir())) > len(SEEDS) + 20
    # the native decoder went through the same inputs where it is built (a must in CI)
    if native.available() or in_ci():
        assert "native decoder: fuzzed" in out, out[-2000:]
