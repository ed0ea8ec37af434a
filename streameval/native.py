"""The native engine (DESIGN §13, issue 32; docs/native.md): whether it is built, and its parts.

``pip install .`` builds the extension module ``streameval._native`` from ``native/`` (Rust,
PyO3, setuptools-rust) where a Rust toolchain exists, and otherwise installs the Python package
alone (the build is optional). Its stages (decoders, join, scoring, windows, the detectors'
sums) are each checked against the Python reference by a ``tests/unit/test_native_*.py``; the
first assembly, :class:`~streameval.engine.native_pipeline.NativePipeline`, runs when
``evaluation.engine = "native"`` (the default). That selection (:mod:`streameval.engine.select`)
calls :func:`unavailable_reason` to decide, and logs its answer as the one WARNING at start when
the native engine is selected but not built.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import TYPE_CHECKING, Any

from streameval.events.decode import Invalid
from streameval.events.decode import decode_native as python_decode_native

if TYPE_CHECKING:
    from streameval._native import JoinCore
    from streameval.config import EvaluationSettings

__all__ = [
    "available",
    "decode_native",
    "join_core",
    "join_options",
    "reference_answer",
    "same_answer",
    "unavailable_reason",
]


def _load() -> tuple[ModuleType | None, str | None]:
    try:
        from streameval import _native
    except ImportError as exc:  # not built (no Rust toolchain at install time), or broken
        return None, (
            f"the native engine is not built ({exc}); install with a Rust toolchain "
            "(https://rustup.rs) on PATH: pip install --force-reinstall --no-deps streameval"
        )
    return _native, None


_MODULE, _REASON = _load()


def available() -> bool:
    """Whether the extension module ``streameval._native`` was built and imports."""
    return _MODULE is not None


def unavailable_reason() -> str | None:
    """``None`` when the native engine is available, else one line saying why and the fix (the
    text of the start-up WARNING of :mod:`streameval.engine.select`)."""
    return _REASON


def decode_native(raw: bytes, max_bytes: int) -> tuple[object, ...]:
    """The native decoder of one record of a native source: the event's fields in its pydantic
    model's field order (``type`` first), or ``(reason, detail)`` for an invalid record (the
    reasons of :data:`streameval.events.decode.INVALID_REASONS`). ``RuntimeError`` when the
    native engine is not built."""
    if _MODULE is None:
        raise RuntimeError(_REASON)
    result: tuple[object, ...] = _MODULE.decode_native(raw, max_bytes)
    return result


def join_options(settings: EvaluationSettings) -> dict[str, Any]:
    """The evaluation settings the native join reads, as the keyword arguments of its bindings
    (``JoinCore``, and ``EngineCore`` of the native engine)."""
    return {
        "attribution_window": settings.attribution_window,
        "allowed_lateness": settings.allowed_lateness,
        "max_open_lists": settings.max_open_lists,
        "max_pending_clicks": settings.max_pending_clicks,
        "segment_labels": list(settings.segment_labels),
        "max_segments": settings.max_segments,
        "implicit_grades": dict(settings.implicit_grades),
        "dwell_min_ms": settings.dwell_grade.min_ms,
        "dwell_grade": settings.dwell_grade.grade,
        "max_record_bytes": settings.max_record_bytes,
        "max_future_skew": settings.max_future_skew,
        "bucket": settings.bucket,
    }


def scoring_options(settings: EvaluationSettings) -> dict[str, Any]:
    """The evaluation settings a list's score reads (those of ``ListScorer(settings)``), as the
    keyword arguments of the native bindings (``ListScorer``, ``EngineCore.set_scoring``)."""
    return {
        "ks": sorted(settings.ks),
        "gain": settings.gain,
        "discount": settings.discount,
        "discount_base": settings.discount_base,
        "ideal": settings.ideal,
        "unjudged": settings.unjudged,
        "no_relevance": settings.no_relevance,
    }


def join_core(settings: EvaluationSettings) -> JoinCore:
    """The native join (native/src/join/, docs/native.md "The join") built from the evaluation
    settings it reads: records in by ``offer``, finalized and evicted lists out by
    ``drain_finalized``, as the Python pipeline's join. ``RuntimeError`` when the native engine
    is not built."""
    if _MODULE is None:
        raise RuntimeError(_REASON)
    core: JoinCore = _MODULE.JoinCore(**join_options(settings))
    return core


def reference_answer(raw: bytes, max_bytes: int) -> tuple[object, ...]:
    """The Python decoder's answer to ``raw`` (:func:`streameval.events.decode.decode_native`,
    the reference) in the shape of :func:`decode_native`'s, which the differential test and the
    fuzzing harness compare it with: ``(reason, detail)`` or the event's fields in its model's
    field order."""
    event = python_decode_native(raw, max_bytes)
    if isinstance(event, Invalid):
        return (event.reason, event.detail)
    return tuple(getattr(event, name) for name in type(event).model_fields)


def same_answer(want: tuple[object, ...], got: tuple[object, ...]) -> bool:
    """Whether two answers of the decoders are the same: as many fields, each equal and of the
    same type (the int ``1`` is not the float ``1.0``; NaN equals NaN)."""
    return len(want) == len(got) and all(map(_same_field, want, got))


def _same_field(want: object, got: object) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        return want == got or (math.isnan(want) and math.isnan(got))
    return type(want) is type(got) and want == got
