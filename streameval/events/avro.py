"""Avro in the Confluent wire format (DESIGN §11): magic byte 0, a 4-byte big-endian schema id,
then the Avro binary encoding of one record under that schema.

Schemas come from :class:`SchemaStore`: the files of ``input.avro_schemas`` (read and parsed at
start), then a Confluent-compatible schema registry (``input.schema_registry_url``:
``GET {url}/schemas/ids/{id}``), each id asked for once and cached; an id the registry does not
know is remembered too (at most :data:`MAX_UNKNOWN_IDS` of them), so a stream of records with
garbage ids costs the registry one request per id, not one per record. fastavro decodes; the
decoded record goes through the same :class:`~streameval.events.mapping.Mapper` as a JSON one.

Outcomes: a record not in the wire format, under a schema id nobody knows, or whose bytes do
not decode under its schema (truncated, trailing bytes, bad UTF-8 in a string) is
``bad_encoding``; a decoded record that does not map is ``mapping``. A registry that cannot be
reached is retried at the next record that needs the id (the record that found it down is
``bad_encoding``, counted and dead-lettered, so it can be replayed from the dead-letter topic).
"""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO, Final

from streameval.errors import ConfigError, InputError
from streameval.events.decode import DEFAULT_MAX_BYTES, Invalid, safe_detail, too_large
from streameval.events.mapping import Mapper
from streameval.events.models import Event

__all__ = [
    "MAX_UNKNOWN_IDS",
    "AvroDecoder",
    "SchemaStore",
    "SchemaUnavailable",
    "container_records",
    "wire_format",
]

MAX_UNKNOWN_IDS: Final = 10_000
_HEADER: Final = 5


class SchemaUnavailable(Exception):
    """No schema for an id: unknown to every source, or the registry could not be asked."""


def wire_format(schema_id: int, payload: bytes) -> bytes:
    """A Confluent wire-format record: magic byte, schema id, Avro payload (for producers and
    tests)."""
    return b"\x00" + schema_id.to_bytes(4, "big") + payload


def _parse(schema: Any) -> Any:
    from fastavro import parse_schema

    return parse_schema(schema)


class SchemaStore:
    """Avro schemas by id: from files, then from a registry; each parsed once."""

    def __init__(
        self,
        files: Mapping[int, Path] | None = None,
        registry_url: str | None = None,
        timeout_s: float = 5.0,
    ) -> None:
        self._parsed: dict[int, Any] = {}
        self._unknown: set[int] = set()
        self._lock = threading.Lock()
        self._url = registry_url.rstrip("/") if registry_url else None
        self._timeout_s = timeout_s
        self.requests = 0  # registry requests made (each id at most once when it answers)
        for schema_id, path in (files or {}).items():
            try:
                self._parsed[schema_id] = _parse(json.loads(Path(path).read_text()))
            except (OSError, ValueError, TypeError) as exc:
                raise ConfigError(f"input.avro_schemas.{schema_id}: {path}: {exc}") from None
            except Exception as exc:  # fastavro's SchemaParseException and kin
                raise ConfigError(
                    f"input.avro_schemas.{schema_id}: {path}: not an Avro schema: {exc}"
                ) from None

    def add_local(self, schema: Any) -> int:
        """Register a parsed schema under a fresh local id (an Avro container file's)."""
        with self._lock:
            schema_id = LOCAL_IDS_FROM - sum(1 for i in self._parsed if i > 0x7FFF_FFFF)
            self._parsed[schema_id] = schema
            return schema_id

    def get(self, schema_id: int) -> Any:
        """The parsed schema of ``schema_id``; :class:`SchemaUnavailable` when there is none."""
        parsed = self._parsed.get(schema_id)
        if parsed is not None:
            return parsed
        with self._lock:
            if schema_id in self._unknown or self._url is None:
                raise SchemaUnavailable(f"unknown schema id {schema_id}")
            text = self._fetch(schema_id)
            if text is None:
                if len(self._unknown) >= MAX_UNKNOWN_IDS:
                    self._unknown.clear()
                self._unknown.add(schema_id)
                raise SchemaUnavailable(f"schema id {schema_id} is not in the registry")
            try:
                parsed = _parse(json.loads(text))
            except Exception as exc:
                self._unknown.add(schema_id)
                raise SchemaUnavailable(f"schema id {schema_id}: not Avro: {exc}") from None
            self._parsed[schema_id] = parsed
            return parsed

    def _fetch(self, schema_id: int) -> str | None:
        """The schema's text from the registry; None when it says the id does not exist."""
        url = f"{self._url}/schemas/ids/{schema_id}"
        self.requests += 1
        request = urllib.request.Request(
            url, headers={"Accept": "application/vnd.schemaregistry.v1+json, application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise SchemaUnavailable(
                f"schema registry answered {exc.code} for id {schema_id}"
            ) from None
        except (OSError, ValueError) as exc:
            raise SchemaUnavailable(f"schema registry unreachable: {exc}") from None
        schema_type = body.get("schemaType", "AVRO") if isinstance(body, dict) else None
        text = body.get("schema") if isinstance(body, dict) else None
        if schema_type != "AVRO" or not isinstance(text, str):
            raise SchemaUnavailable(f"schema id {schema_id} is not an Avro schema")
        return text


class AvroDecoder:
    """An Avro topic: wire-format bytes -> event or Invalid (mapped). Never raises."""

    def __init__(
        self, schemas: SchemaStore, mapper: Mapper, max_bytes: int = DEFAULT_MAX_BYTES
    ) -> None:
        from fastavro import schemaless_reader

        self._read = schemaless_reader
        self.schemas = schemas
        self.mapper = mapper
        self.max_bytes = max_bytes

    def parse(self, raw: bytes) -> object | Invalid:
        """The decoded record, or why it is not one."""
        try:
            if len(raw) > self.max_bytes:
                return too_large(len(raw), self.max_bytes)
            if len(raw) < _HEADER or raw[0] != 0:
                return Invalid(
                    "bad_encoding", "not the Confluent Avro wire format (magic byte 0, schema id)"
                )
            schema_id = int.from_bytes(raw[1:_HEADER], "big")
            try:
                schema = self.schemas.get(schema_id)
            except SchemaUnavailable as exc:
                return Invalid("bad_encoding", safe_detail(str(exc)))
            stream = io.BytesIO(raw)
            stream.seek(_HEADER)
            try:
                record = self._read(stream, schema, None)
            except Exception as exc:  # EOFError, UnicodeDecodeError, struct errors, ...
                return Invalid(
                    "bad_encoding",
                    safe_detail(f"not Avro under schema {schema_id}: {type(exc).__name__}"),
                )
            if stream.tell() != len(raw):
                return Invalid(
                    "bad_encoding",
                    f"{len(raw) - stream.tell()} bytes after the record (schema {schema_id})",
                )
            return record
        except Exception as exc:
            return Invalid("bad_encoding", safe_detail(f"unexpected {type(exc).__name__}"))

    def __call__(self, raw: bytes) -> Event | Invalid:
        record = self.parse(raw)
        if isinstance(record, Invalid):
            return record
        return self.mapper(record)


#: schema ids given to the writer schemas of Avro container files read by ``replay`` (the top of
#: the 4-byte range, downwards; a registry hands out small ids)
LOCAL_IDS_FROM: Final = 0xFFFF_FFFF


def container_records(fh: BinaryIO, schemas: SchemaStore) -> Iterator[bytes]:
    """The records of an Avro object container file (``.avro``: its writer schema in its
    header), each as a Confluent wire-format record under a local schema id registered in
    ``schemas``: so ``replay`` reads a container file through the same decoder as a topic."""
    from fastavro import reader, schemaless_writer

    try:
        records = reader(fh)
        schema = records.writer_schema
        schema_id = schemas.add_local(schema)
        prefix = wire_format(schema_id, b"")
        for record in records:
            buf = io.BytesIO()
            buf.write(prefix)
            schemaless_writer(buf, schema, record)
            yield buf.getvalue()
    except Exception as exc:  # not a container file, or a corrupt block
        raise InputError(f"not a readable Avro container file: {exc}") from None
