"""The schema registry client (``streameval.events.avro.SchemaStore``) against a real registry
server: Apicurio Registry's Confluent-compatible API, started by ``scripts/schema-registry``.
What the registry assigns is read back from it, never assumed (ids are the registry's to pick)."""

from __future__ import annotations

import io
import json
import uuid

from fastavro import schemaless_writer

from streameval.config import load_settings
from streameval.events.avro import AvroDecoder, SchemaStore, wire_format
from streameval.events.decode import Invalid
from streameval.events.mapping import Mapper
from streameval.events.models import Click
from tests.foreign_shapes import SEGMENT_AVSC, SEGMENT_TOML
from tests.integration.conftest import register_schema

T = 1_767_225_600_000  # 2026-01-01T00:00:00Z in ms


def _click(schema: object, schema_id: int) -> bytes:
    buf = io.BytesIO()
    record = {
        "type": "track",
        "event": "Product Clicked",
        "timestamp": T,
        "properties": {"search_id": "r1", "product_id": "a"},
        "context": {"traits": {}},
    }
    schemaless_writer(buf, schema, record)  # type: ignore[arg-type]
    return wire_format(schema_id, buf.getvalue())


def test_a_registered_schema_is_fetched_once_and_decodes_records(schema_registry_url: str) -> None:
    text = SEGMENT_AVSC.read_text()
    schema_id = register_schema(schema_registry_url, f"clicks-{uuid.uuid4().hex}-value", text)
    store = SchemaStore(registry_url=schema_registry_url, timeout_s=10)
    decoder = AvroDecoder(store, Mapper(load_settings(SEGMENT_TOML).input.mappings["segment"]))
    # what the registry serves for the id is the schema registered (fastavro's parsed form)
    fields = [f["name"] for f in store.get(schema_id)["fields"]]
    assert fields == [f["name"] for f in json.loads(text)["fields"]]
    raw = _click(store.get(schema_id), schema_id)
    events = [decoder(raw) for _ in range(5)]
    assert all(isinstance(e, Click) for e in events)
    click = events[0]
    assert isinstance(click, Click)
    assert (click.request_id, click.doc_id, click.timestamp) == ("r1", "a", T)
    assert store.requests == 1  # 1 get above + 5 records: the registry was asked once


def test_an_id_the_registry_does_not_know_is_bad_encoding_and_asked_once(
    schema_registry_url: str,
) -> None:
    text = SEGMENT_AVSC.read_text()
    known = register_schema(schema_registry_url, f"clicks-{uuid.uuid4().hex}-value", text)
    unknown = known + 1_000_000  # far past every id this session's registry has handed out
    store = SchemaStore(registry_url=schema_registry_url, timeout_s=10)
    decoder = AvroDecoder(store, Mapper(load_settings(SEGMENT_TOML).input.mappings["segment"]))
    raw = _click(store.get(known), unknown)
    outcomes = [decoder(raw) for _ in range(3)]
    for outcome in outcomes:
        assert isinstance(outcome, Invalid)
        assert outcome.reason == "bad_encoding"
        assert f"schema id {unknown}" in outcome.detail
    assert store.requests == 2  # the known id once, the unknown one once (then remembered)
