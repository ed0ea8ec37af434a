"""Avro in the Confluent wire format: schemas by id from files and from a registry (each asked
for once), and every malformed record an outcome, never an exception.

The registry here is a few lines of http.server speaking the one call the client makes
(``GET /schemas/ids/{id}``, Confluent's REST API): it checks the client's caching and failure
handling. It does not stand in for a real registry server; see the README on what was tried.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from fastavro import parse_schema, schemaless_writer
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.config import load_settings
from streameval.errors import ConfigError
from streameval.events.avro import AvroDecoder, SchemaStore, SchemaUnavailable, wire_format
from streameval.events.decode import Invalid
from streameval.events.mapping import Mapper
from streameval.events.models import Click
from tests.foreign_shapes import SEGMENT_AVSC, SEGMENT_TOML

T = 1_767_225_600_000
SCHEMA = parse_schema(json.loads(SEGMENT_AVSC.read_text()))


def click_record() -> dict[str, object]:
    return {
        "type": "track",
        "event": "Product Clicked",
        "timestamp": T,
        "properties": {"search_id": "r1", "product_id": "a"},
        "context": {"traits": {}},
    }


def encode(record: dict[str, object], schema_id: int = 7) -> bytes:
    buf = io.BytesIO()
    schemaless_writer(buf, SCHEMA, record)
    return wire_format(schema_id, buf.getvalue())


def mapper() -> Mapper:
    return Mapper(load_settings(SEGMENT_TOML).input.mappings["segment"])


class _Registry(BaseHTTPRequestHandler):
    schemas: ClassVar[dict[int, str]] = {}
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        prefix = "/schemas/ids/"
        if self.path.startswith(prefix) and int(self.path[len(prefix) :]) in self.schemas:
            body = json.dumps({"schema": self.schemas[int(self.path[len(prefix) :])]}).encode()
            self.send_response(200)
        else:
            body = b'{"error_code": 40403, "message": "Schema not found"}'
            self.send_response(404)
        self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def registry() -> Iterator[tuple[str, list[str]]]:
    _Registry.schemas = {7: SEGMENT_AVSC.read_text()}
    _Registry.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", _Registry.asked
    finally:
        server.shutdown()
        server.server_close()


def test_schemas_come_from_the_registry_once_per_id(registry: tuple[str, list[str]]) -> None:
    url, asked = registry
    decoder = AvroDecoder(SchemaStore(registry_url=url), mapper())
    for _ in range(50):
        event = decoder(encode(click_record()))
        assert isinstance(event, Click)
        assert (event.request_id, event.doc_id, event.timestamp) == ("r1", "a", T)
    assert asked == ["/schemas/ids/7"]
    for _ in range(3):  # an id the registry does not know: asked once, remembered
        unknown = decoder(encode(click_record(), schema_id=99))
        assert isinstance(unknown, Invalid) and unknown.reason == "bad_encoding"
        assert "99" in unknown.detail
    assert asked == ["/schemas/ids/7", "/schemas/ids/99"]


def test_an_unreachable_registry_is_asked_again_at_the_next_record(tmp_path: Path) -> None:
    store = SchemaStore(registry_url="http://127.0.0.1:9/", timeout_s=0.5)  # discard port
    decoder = AvroDecoder(store, mapper())
    for _ in range(2):
        out = decoder(encode(click_record()))
        assert isinstance(out, Invalid) and out.reason == "bad_encoding"
        assert "unreachable" in out.detail
    assert store.requests == 2


def test_schema_files_are_read_at_start_and_a_bad_one_fails_naming_the_key(
    tmp_path: Path,
) -> None:
    store = SchemaStore({7: SEGMENT_AVSC})
    assert store.get(7) is not None
    with pytest.raises(SchemaUnavailable):
        store.get(8)
    bad = tmp_path / "bad.avsc"
    bad.write_text('{"type": "record", "name": "x", "fields": [{"name": "a", "type": "nope"}]}')
    with pytest.raises(ConfigError, match=r"input\.avro_schemas\.3: "):
        SchemaStore({3: bad})


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"", "wire format"),
        (b"\x01\x00\x00\x00\x07abc", "wire format"),  # wrong magic byte
        (b'{"event": "x"}', "wire format"),  # JSON on an Avro topic
        (encode(click_record())[:-3], "not Avro"),  # truncated
        (encode(click_record()) + b"\x00", "bytes after the record"),
        (wire_format(7, b"\x02\xff\xfe"), "not Avro"),  # a string that is not UTF-8
    ],
)
def test_malformed_avro_is_bad_encoding(raw: bytes, why: str) -> None:
    out = AvroDecoder(SchemaStore({7: SEGMENT_AVSC}), mapper())(raw)
    assert isinstance(out, Invalid) and out.reason == "bad_encoding"
    assert why in out.detail


def test_a_decoded_record_that_does_not_map_names_its_field() -> None:
    record = click_record()
    record["properties"] = {"product_id": "a"}
    out = AvroDecoder(SchemaStore({7: SEGMENT_AVSC}), mapper())(encode(record))
    assert isinstance(out, Invalid)
    assert (out.reason, out.field) == ("mapping", "/properties/search_id")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_after_a_known_schema_id_are_an_outcome(payload: bytes) -> None:
    out = AvroDecoder(SchemaStore({7: SEGMENT_AVSC}), mapper())(wire_format(7, payload))
    assert isinstance(out, Invalid | Click) or out.type in ("impression", "judgment")
