"""Which engine evaluates (``evaluation.engine``): the one place that decides, for ``replay``,
``demo`` and the daemon alike (:class:`~streameval.engine.evaluator.Evaluator` asks it).

"native" (the default) builds a :class:`~.native_pipeline.NativePipeline` when the extension
module is built and every configured source format is one it decodes (native, auto, UBI, mapped
JSON); else the Python :class:`~.pipeline.Pipeline`, with one WARNING saying why (Avro stays
decoded by fastavro in Python: the native engine does not take it in this slice; when "native"
is only the default, that one is an INFO line: nothing needs fixing).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from streameval import native
from streameval.config import InputSettings, Settings, SourceFormat
from streameval.engine.coordinator import Coordinator
from streameval.engine.native_pipeline import NativeFormat, NativePipeline
from streameval.engine.pipeline import Pipeline

_log = logging.getLogger("streameval.engine")

#: the format of each source (``[input]``: by file for ``replay``, by topic for the daemon)
FormatOf = Callable[[str], SourceFormat]


def refusal(settings: Settings) -> str | None:
    """Why ``evaluation.engine = "native"`` cannot run here (one line), or None."""
    reason = native.unavailable_reason()
    if reason is not None:
        return f'evaluation.engine = "native": {reason}; evaluating with the Python engine'
    if _has_avro(settings.input):
        return (
            'evaluation.engine = "native" does not decode Avro sources ([input] encoding ='
            ' "avro"); evaluating with the Python engine (set evaluation.engine = "python"'
            " to silence this)"
        )
    return None


def _has_avro(inp: InputSettings) -> bool:
    return any(
        fmt.encoding == "avro" for fmt in (inp.default, *inp.topics.values(), *inp.files.values())
    )


def native_format(inp: InputSettings, fmt: SourceFormat) -> NativeFormat:
    """A source's format as the native decoders take it."""
    if fmt.format == "mapped":
        return "mapped", inp.mappings[fmt.mapping or ""].model_dump_json()
    return fmt.format, None


def build_engine(settings: Settings, *, format_of: FormatOf | None, **options: Any) -> Coordinator:
    """The engine ``evaluation.engine`` asks for, with the :class:`~.pipeline.Pipeline`'s
    ``options``; ``format_of``: each source's format, told with ``options["decoder_for"]``
    (None: "auto" for all, as the Python engine's default decoder)."""
    ev = settings.evaluation
    if ev.engine == "native":
        why = refusal(settings)
        if why is None:
            inp = settings.input

            def format_for(source: str) -> NativeFormat:
                return (
                    ("auto", None) if format_of is None else native_format(inp, format_of(source))
                )

            return NativePipeline(ev, format_for=format_for, **options)
        asked = "engine" in ev.model_fields_set
        if not asked and native.available() and _has_avro(settings.input):
            # the default met an Avro source: nothing to fix, so said once as INFO
            _log.info("%s", why.removesuffix(' (set evaluation.engine = "python" to silence this)'))
        else:
            _log.warning(why)
    return Pipeline(ev, **options)
