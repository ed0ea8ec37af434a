"""``evaluation.engine``: the one place that builds the engine (streameval/engine/select.py).

"native" (the default) builds the native engine where the module is built; where it is not, or
with an Avro source, the Python engine with exactly one WARNING naming the key (an INFO line
when the default met an Avro source); "python" builds the Python engine without a word."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from streameval import native
from streameval.config import Settings
from streameval.engine import select
from streameval.engine.evaluator import Evaluator
from streameval.engine.native_pipeline import NativePipeline
from streameval.engine.pipeline import Pipeline
from tests.ci import require_native

AVRO_INPUT = {
    "topics": {"t": {"format": "mapped", "mapping": "m", "encoding": "avro"}},
    "mappings": {"m": {"click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"}}},
    "schema_registry_url": "http://localhost:8081",
}


def _settings(engine: str | None, **sections: Any) -> Settings:
    evaluation = {} if engine is None else {"engine": engine}
    return Settings.model_validate({"evaluation": evaluation, **sections})


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_python_builds_the_python_engine_without_a_word(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        assert type(Evaluator(_settings("python")).pipeline) is Pipeline
    assert _warnings(caplog) == []


def test_the_default_is_the_native_engine_without_a_word(caplog: pytest.LogCaptureFixture) -> None:
    require_native("native engine")
    assert Settings().evaluation.engine == "native"
    with caplog.at_level(logging.INFO):
        assert type(Evaluator(_settings(None)).pipeline) is NativePipeline
    assert _warnings(caplog) == []


def test_the_default_without_the_module_warns_once_and_runs_python(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "unavailable_reason", lambda: "the native engine is not built (x)")
    with caplog.at_level(logging.INFO):
        assert type(Evaluator(_settings(None)).pipeline) is Pipeline
    (warning,) = _warnings(caplog)
    assert warning.startswith('evaluation.engine = "native": the native engine is not built (x)')


def test_the_default_with_an_avro_source_says_so_once_as_info(
    caplog: pytest.LogCaptureFixture,
) -> None:
    require_native("native engine")
    with caplog.at_level(logging.INFO, logger="streameval.engine"):
        engine = select.build_engine(_settings(None, input=AVRO_INPUT), format_of=None)
    assert type(engine) is Pipeline
    assert _warnings(caplog) == []
    (info,) = [r.getMessage() for r in caplog.records if r.name == "streameval.engine"]
    assert 'evaluation.engine = "native" does not decode Avro sources' in info
    assert "to silence this" not in info


def test_native_builds_the_native_engine(caplog: pytest.LogCaptureFixture) -> None:
    require_native("native engine")
    with caplog.at_level(logging.INFO):
        pipeline = Evaluator(_settings("native")).pipeline
    assert type(pipeline) is NativePipeline
    assert _warnings(caplog) == []
    # and it evaluates: an impression scored once the input ends
    imp = b'{"type":"impression","request_id":"r","timestamp":1767225600000,"query_id":"q",'
    pipeline.offer(imp + b'"results":["a"]}', "input")
    pipeline.finish()
    assert pipeline.snapshot().intake.accepted == {"impression": 1}


def test_native_without_the_module_warns_once_and_runs_python(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "unavailable_reason", lambda: "the native engine is not built (x)")
    with caplog.at_level(logging.INFO):
        assert type(Evaluator(_settings("native")).pipeline) is Pipeline
    (warning,) = _warnings(caplog)
    assert warning.startswith('evaluation.engine = "native": the native engine is not built (x)')
    assert warning.endswith("evaluating with the Python engine")


def test_native_with_an_avro_source_warns_once_and_runs_python(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "unavailable_reason", lambda: None)  # (built or not: Avro refuses)
    with caplog.at_level(logging.INFO):
        engine = select.build_engine(_settings("native", input=AVRO_INPUT), format_of=None)
    assert type(engine) is Pipeline
    (warning,) = _warnings(caplog)
    assert 'evaluation.engine = "native" does not decode Avro sources' in warning
    assert 'set evaluation.engine = "python"' in warning
