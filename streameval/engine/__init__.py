"""The engine: records in by batch per source, finalized scored lists out to consumers, snapshot,
checkpoint and restore (docs/design.md §13). :class:`Pipeline` is its Python implementation."""

from streameval.engine.hooks import DeadLetter, DecoderFor, OnScored, RecordDecoder
from streameval.engine.intake import Offered
from streameval.engine.pipeline import Pipeline

__all__ = ["DeadLetter", "DecoderFor", "Offered", "OnScored", "Pipeline", "RecordDecoder"]
