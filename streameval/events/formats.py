"""Which decoder reads which source (DESIGN §11): ``[input]`` names a format per topic (the
daemon) and per file (``replay``); everything not named is read as ``input.default`` (native or
UBI told apart by shape, unless configured otherwise).

:class:`Formats` builds each decoder once (a mapping is compiled once, however many topics use
it) and hands :class:`~streameval.engine.Pipeline` a ``decoder_for(source)``.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from streameval.config import InputSettings, SourceFormat
from streameval.events.decode import (
    DEFAULT_MAX_BYTES,
    Invalid,
    decode_native,
    decode_ubi,
    decoder,
)
from streameval.events.mapping import MappedJsonDecoder, Mapper
from streameval.events.models import Event

if TYPE_CHECKING:  # imported where used: fastavro costs every start ~30 ms, Avro input is rare
    from streameval.events.avro import SchemaStore

__all__ = ["Formats", "RecordDecoder"]

RecordDecoder = Callable[[bytes], Event | Invalid]
"""Bytes of one record -> event or Invalid; never raises."""


class Formats:
    """The decoders of ``[input]``: per topic, per file, and the default."""

    def __init__(self, settings: InputSettings, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.settings = settings
        self.max_bytes = max_bytes
        self._mappers: dict[str, Mapper] = {}
        self._schemas: SchemaStore | None = None
        self._decoders: dict[SourceFormat, RecordDecoder] = {}

    def mapper(self, name: str) -> Mapper:
        mapper = self._mappers.get(name)
        if mapper is None:
            mapper = self._mappers[name] = Mapper(self.settings.mappings[name])
        return mapper

    def decoder(self, fmt: SourceFormat) -> RecordDecoder:
        """The decoder of one format (built once per distinct format)."""
        decoder = self._decoders.get(fmt)
        if decoder is None:
            decoder = self._decoders[fmt] = self._build(fmt)
        return decoder

    def _build(self, fmt: SourceFormat) -> RecordDecoder:
        if fmt.format == "auto":
            return decoder(self.max_bytes)
        if fmt.format == "native":
            return decoder(self.max_bytes, decode_native)
        if fmt.format == "ubi":
            return decoder(self.max_bytes, decode_ubi)
        mapper = self.mapper(fmt.mapping or "")
        if fmt.encoding == "avro":
            from streameval.events.avro import AvroDecoder

            return AvroDecoder(self.schemas(), mapper, self.max_bytes)
        return MappedJsonDecoder(mapper, self.max_bytes)

    def schemas(self) -> SchemaStore:
        """The Avro schemas (files read at the first call; the registry asked per id)."""
        if self._schemas is None:
            from streameval.events.avro import SchemaStore

            s = self.settings
            self._schemas = SchemaStore(
                s.avro_schemas, s.schema_registry_url, s.schema_registry_timeout / 1000
            )
        return self._schemas

    def topic_format(self, topic: str) -> SourceFormat:
        return self.settings.topics.get(topic, self.settings.default)

    def file_format(self, path: str) -> SourceFormat:
        """The format of a file: listed by its path as given, by its name, or by a glob pattern
        of its name or path (the first listed that matches); else the default."""
        files = self.settings.files
        if path in files:
            return files[path]
        name = os.path.basename(path)
        if name in files:
            return files[name]
        for pattern, fmt in files.items():
            if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(path, pattern):
                return fmt
        return self.settings.default

    def for_topic(self, topic: str) -> RecordDecoder:
        return self.decoder(self.topic_format(topic))

    def for_file(self, path: str) -> RecordDecoder:
        return self.decoder(self.file_format(path))

    def by_topic_source(self, source: str) -> RecordDecoder:
        """``decoder_for`` of the daemon: sources are ``topic/partition``."""
        return self.decoder(self.format_by_topic_source(source))

    def format_by_topic_source(self, source: str) -> SourceFormat:
        """The format of a daemon's source (``topic/partition``): the native engine decodes by
        it, the Python engine through :meth:`by_topic_source`."""
        return self.topic_format(source.rpartition("/")[0] or source)

    def check(self) -> None:
        """Build every configured decoder now (schema files parsed, mappings compiled), so a
        wrong one fails at start, naming its key."""
        s = self.settings
        for fmt in (s.default, *s.topics.values(), *s.files.values()):
            self.decoder(fmt)
