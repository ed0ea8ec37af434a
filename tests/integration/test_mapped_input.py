"""`streameval run` over topics in a team's own shape (DESIGN §11): the daemon's log rewritten
into the Snowplow-like and Segment-like JSON shapes of the worked mappings of docs/input-formats.md,
and the Segment-like shape in Avro (Confluent wire format; the schema from ``input.avro_schemas``,
and registered in a real schema registry that the daemon asks through ``input.schema_registry_url``)
gives exactly the figures `streameval replay` gives for the native log laid out in the same
partitions; records that do not map reach the dead-letter topic with the field that did not map;
`streameval inspect --topic` shows what the first records map to."""

from __future__ import annotations

import io
import json
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest
from fastavro import parse_schema, schemaless_writer
from kafka import KafkaConsumer

from streameval.cli import main
from streameval.kafka.dlq import FIELD_HEADER, REASON_HEADER
from tests.foreign_shapes import (
    SEGMENT_AVSC,
    SEGMENT_TOML,
    SNOWPLOW_TOML,
    SegmentAvro,
    _segment,
    rewrite,
)
from tests.integration.conftest import TopicFactory, register_schema
from tests.integration.daemon_support import (
    T0,
    DaemonProcess,
    Log,
    Topics,
    assert_windows_match,
    dump_partitions,
    free_port,
    make_log,
    produce,
    replay_json,
    samples,
    sentinels,
    value,
)

pytestmark = pytest.mark.kafka

#: the schema id of the Avro topics read with ``input.avro_schemas`` (a registry picks its own)
SCHEMA_ID = 1001
#: shape -> (the TOML of its mapping, encoding: json, avro (schema file) or avro-registry)
CASES = {
    "snowplow": (SNOWPLOW_TOML, "json"),
    "segment": (SEGMENT_TOML, "json"),
    "segment-avro": (SEGMENT_TOML, "avro"),
    "segment-avro-registry": (SEGMENT_TOML, "avro-registry"),
}
#: a click whose request id is missing: native, and in each foreign shape (same place in the log)
UNMAPPABLE_NATIVE = {"type": "click", "doc_id": "d-unmappable", "timestamp": T0 + 1}


@pytest.fixture
def topics(topic_factory: TopicFactory) -> Topics:
    return Topics.made_by(topic_factory)


def _avro(case: str) -> bool:
    return CASES[case][1].startswith("avro")


def _input_env(case: str, registry_url: str | None) -> dict[str, Any]:
    toml, encoding = CASES[case]
    section: dict[str, Any] = tomllib.loads(toml.read_text())["input"]
    if encoding == "avro":
        section["default"]["encoding"] = "avro"
        section["avro_schemas"] = {str(SCHEMA_ID): str(SEGMENT_AVSC)}
    elif encoding == "avro-registry":  # no schema file: every schema comes from the registry
        section["default"]["encoding"] = "avro"
        section["schema_registry_url"] = registry_url
    return section


def _schema(case: str, request: pytest.FixtureRequest, topics: Topics) -> tuple[int, str | None]:
    """The schema id the case's producers write, and the registry's URL if it has one. Fixed for
    a schema file; for the registry, the id it gives the Segment-like schema, registered as a
    producer would (subject ``<topic>-value``, Confluent's default naming) for the three topics."""
    if CASES[case][1] != "avro-registry":
        return SCHEMA_ID, None
    url: str = request.getfixturevalue("schema_registry_url")
    text = SEGMENT_AVSC.read_text()
    ids = {
        register_schema(url, f"{topic}-value", text)
        for topic in (topics.impressions, topics.clicks, topics.judgments)
    }
    assert len(ids) == 1, ids  # one schema, one id, whatever the subject
    return ids.pop(), url


def _foreign(case: str, schema_id: int) -> Any:
    if _avro(case):
        return SegmentAvro(schema_id).encode
    shape = case
    return lambda raw: rewrite(raw, shape)


def _unmappable(case: str, raw: bytes, schema_id: int) -> bytes:
    """The foreign form of a native click without a request id: rewritten as if it had one,
    then without."""
    native = json.dumps({**json.loads(raw), "request_id": "gone"}).encode()
    if _avro(case):
        record = _segment(json.loads(native))
        record["properties"]["search_id"] = None
        buf = io.BytesIO()
        schemaless_writer(buf, parse_schema(json.loads(SEGMENT_AVSC.read_text())), record)
        return b"\x00" + schema_id.to_bytes(4, "big") + buf.getvalue()
    foreign = json.loads(rewrite(native, case))
    if case == "snowplow":
        del foreign["unstruct_event"]["data"]["data"]["searchId"]
    else:
        del foreign["properties"]["search_id"]
    return json.dumps(foreign).encode()


@pytest.mark.parametrize("case", CASES)
def test_the_daemon_reads_a_foreign_shape_to_the_native_figures(
    kafka_bootstrap: str,
    topics: Topics,
    tmp_path: Path,
    *,
    case: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    schema_id, registry_url = _schema(case, request, topics)
    native_log = make_log(2, 200)
    for i in range(3):  # three clicks without a request id
        native_log.add("clicks", f"gone-{i}", {**UNMAPPABLE_NATIVE, "timestamp": T0 + i})
    sentinels(native_log, T0 + 30 * 60_000)
    convert = _foreign(case, schema_id)
    foreign_log, back = Log(), {}
    for role, key, raw, partition in native_log.records:
        foreign = _unmappable(case, raw, schema_id) if b"d-unmappable" in raw else convert(raw)
        back[foreign] = raw
        foreign_log.records.append((role, key, foreign, partition))
    produce(kafka_bootstrap, topics, foreign_log)
    # the native records the foreign ones were made from, laid out as the broker holds those
    expected = replay_json(dump_partitions(kafka_bootstrap, topics, tmp_path, back.__getitem__))
    # 200 requests: clicks of requests 5, 102, 199 are broken JSON; 3 clicks lack a request id
    assert expected["intake"]["invalid"] == {"bad_json": 3, "schema": 3}
    total = len(foreign_log.records)
    horizon_s = expected["horizon_ms"] / 1000
    env = topics.env(kafka_bootstrap, f"g-{uuid.uuid4().hex}", free_port())
    env["STREAMEVAL_INPUT"] = json.dumps(_input_env(case, registry_url))
    daemon = DaemonProcess(env, tmp_path / "daemon.log")
    try:
        metrics = daemon.wait_for(
            lambda m: (
                value(m, "streameval_records_read_total") == total
                and value(m, "streameval_evaluation_horizon_timestamp_seconds") == horizon_s
            ),
            what="the daemon to read the whole log and be ready",
            ready=True,
        )
        assert assert_windows_match(metrics, expected) >= 16  # 2 arms x 4 k x 2 relevance, ...
        accepted = {
            lbl["type"]: int(v) for lbl, v in samples(metrics, "streameval_events_total") if v
        }
        assert accepted == expected["intake"]["accepted_by_type"]
        invalid = {
            lbl["reason"]: int(v)
            for lbl, v in samples(metrics, "streameval_invalid_events_total")
            if v
        }
        # the same records are invalid; a foreign record says why in its own terms: broken
        # JSON stays bad_json (in Avro: not the wire format), a missing request id is mapping
        broken = "bad_encoding" if _avro(case) else "bad_json"
        assert invalid == {broken: 3, "mapping": 3}
        for name in ("duplicate", "late"):
            got = sum(v for _, v in samples(metrics, f"streameval_{name}_events_total"))
            assert got == expected["intake"][name], name
        assert (
            value(metrics, "streameval_unmatched_clicks_total") == expected["intake"]["unmatched"]
        )
        assert daemon.terminate() == 0
    finally:
        if daemon.proc.poll() is None:
            daemon.kill()
    log_text = (tmp_path / "daemon.log").read_text()
    assert "invalid record (mapping, field /" in log_text  # the sampled log names the field
    dlq = KafkaConsumer(
        topics.dlq,
        bootstrap_servers=kafka_bootstrap,
        auto_offset_reset="earliest",
        consumer_timeout_ms=5_000,
    )
    dead = list(dlq)
    dlq.close()
    reasons = sorted(dict(r.headers)[REASON_HEADER].decode() for r in dead)
    assert reasons == sorted([broken] * 3 + ["mapping"] * 3)
    pointer = (
        "/unstruct_event/data/data/searchId" if case == "snowplow" else "/properties/search_id"
    )
    for record in dead:
        headers = dict(record.headers)
        if headers[REASON_HEADER] == b"mapping":
            assert headers[FIELD_HEADER] == pointer.encode()
            assert back[record.value].startswith(b'{"type": "click", "doc_id": "d-unmappable"')
    if _avro(case):  # inspect --topic on the Avro topic: what each record maps to
        monkeypatch.setenv("STREAMEVAL_KAFKA__BOOTSTRAP_SERVERS", kafka_bootstrap)
        monkeypatch.setenv("STREAMEVAL_INPUT", env["STREAMEVAL_INPUT"])
        capsys.readouterr()
        assert main(["inspect", "--topic", topics.judgments, "-n", "3"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert [line.split(":")[0] for line in out[:3]] == [f"#{i} judgment" for i in (1, 2, 3)]
        assert out[3] == "3 records: judgment 3; invalid 0 (0.0 %)"
