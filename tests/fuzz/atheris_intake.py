"""Coverage-guided fuzzing of the intake (atheris, libFuzzer): every input goes through the
decoder and a long-lived Pipeline; a crash is any exception, an Invalid with an unknown reason or
an over-long detail, or a broken accounting identity.

Run by tests/unit/test_fuzz_atheris.py; by hand (an empty CORPUS_DIR works, seeds help):
    .venv/bin/python tests/fuzz/atheris_intake.py CORPUS_DIR -runs=1000000 \
        -use_value_profile=1 -dict=tests/fuzz/events.dict
"""

from __future__ import annotations

import sys

import atheris

with atheris.instrument_imports(include=["streameval"]):
    from streameval.config import EvaluationSettings
    from streameval.events.decode import INVALID_REASONS, MAX_DETAIL_CHARS, Invalid, decode
    from streameval.pipeline import Pipeline

MAX_BYTES = 4096
#: the record timestamp handed to offer: inputs alternate with and without one
RECORD_MS = 1_767_225_600_000

_pipeline = Pipeline(EvaluationSettings(max_record_bytes=MAX_BYTES, max_open_lists=10_000))
_pipeline.add_source("fuzz")
_offered = [0]  # inputs offered so far


def one_input(data: bytes) -> None:
    result = decode(data, MAX_BYTES)
    if isinstance(result, Invalid):
        if result.reason not in INVALID_REASONS:
            raise AssertionError(f"unknown reason {result.reason!r}")
        if len(result.detail) > MAX_DETAIL_CHARS or not result.detail.isprintable():
            raise AssertionError(f"detail not log-safe: {result.detail!r}")
    n = _offered[0]
    _pipeline.offer(data, "fuzz", n, RECORD_MS if n % 2 else -1)
    _offered[0] = n = n + 1
    if n % 256 == 0:
        intake = _pipeline.snapshot().intake
        if intake.records_read != n or intake.accounted != n:
            raise AssertionError(f"{n} offered, {intake}")


def main() -> None:
    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
