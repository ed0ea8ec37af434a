"""The hand-built logs of the existing tests, rewritten into the Snowplow-like and Segment-like
shapes of the worked mappings of docs/input-formats.md (and the Segment-like one into Avro), give
through ``replay`` exactly the figures of the native log: every window row, every scored list, every
intake count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastavro import parse_schema, writer

from streameval.config import Settings, load_settings
from streameval.engine import Pipeline
from streameval.events.avro import AvroDecoder, SchemaStore
from streameval.events.formats import Formats
from streameval.events.mapping import Mapper
from streameval.report import scored_list_json, snapshot_json
from streameval.runtime.replay import file_decoders, replay
from streameval.values import ScoredList
from tests.foreign_shapes import (
    SEGMENT_AVSC,
    SEGMENT_TOML,
    SHAPES,
    SNOWPLOW_TOML,
    SegmentAvro,
    _segment,
    rewrite,
)
from tests.integration.daemon_support import T0, make_log, sentinels
from tests.unit.pipeline_helpers import click, imp, judgment

TOML = {"snowplow": SNOWPLOW_TOML, "segment": SEGMENT_TOML}
EVALUATION = {"attribution_window": "60s", "allowed_lateness": "0s", "windows": ["1m", "5m"]}


def _figures(
    settings: Settings, paths: list[Path], *, finish: bool = True
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(replay --output json, replay --output lists) of ``paths`` in-process."""
    scored: list[ScoredList] = []
    formats = Formats(settings.input, settings.evaluation.max_record_bytes)
    strs = [str(p) for p in paths]
    pipeline = Pipeline(
        settings.evaluation, on_scored=scored.append, decoder_for=file_decoders(formats, strs)
    )
    replay(pipeline, strs, progress=False, finish=finish, formats=formats)
    lists = [obj for s in scored for obj in scored_list_json(s)]
    return snapshot_json(pipeline.snapshot()), lists


def _integration_log(tmp: Path) -> dict[str, list[bytes]]:
    """tests/integration's log (two arms, clicks, dwell, purchases, judgments, duplicates, broken
    records), one file per topic role."""
    log = make_log(3, 300)
    sentinels(log, T0 + 30 * 60_000)
    by_role: dict[str, list[bytes]] = {"judgments": [], "impressions": [], "clicks": []}
    for role, _key, value, _p in log.records:
        by_role[role].append(value)
    return by_role


def _pipeline_log() -> dict[str, list[bytes]]:
    """tests/unit/test_pipeline.py's scenarios in one log: implicit grades, dwell, purchase, a
    click after the attribution window (late), a click before its impression (pending, then
    matched), an unmatched click, duplicates by event_id and by identical record, a repeated
    doc, judgments by query."""
    return {
        "judgments": [judgment("q", "a", 3), judgment("q", "b", 1), judgment("other", "z", 2)],
        "impressions": [
            imp("r1", 0, ["a", "b", "c"], labels={"ranker": "x", "arm": "control"}),
            imp("r2", 5_000, ["b", "a", "b"], labels={"ranker": "y", "arm": "treatment"}),
            imp("r3", 20_000, ["c", "a"], query="Other"),
            imp("r1", 21_000, ["z"]),  # duplicate impression of an open list
            imp("r4", 200_000, ["x"]),  # moves the watermark: r1..r3 are finalized
        ],
        "clicks": [
            click("r1", "b", 1_000),
            click("r9", "a", 30_000),  # read in time, its impression never comes: unmatched
            click("r1", "c", 2_000, action="purchase"),
            click("r2", "a", 6_000, action="dwell", dwell_ms=45_000),
            click("r2", "a", 6_000, action="dwell", dwell_ms=45_000),  # identical: duplicate
            click("r3", "a", 21_000, event_id="e1"),
            click("r3", "a", 22_000, event_id="e1"),  # same event_id: duplicate
            click("r1", "a", 61_000),  # after r1's attribution window: late
            click("r4", "x", 200_500),
        ],
    }


def _write(tmp: Path, name: str, records: dict[str, list[bytes]], shape: str | None) -> list[Path]:
    paths = []
    for role, values in records.items():
        path = tmp / f"{name}-{role}.jsonl"
        lines = values if shape is None else [rewrite(v, shape) for v in values]
        path.write_bytes(b"".join(v + b"\n" for v in lines))
        paths.append(path)
    return paths


def _write_avro(tmp: Path, name: str, records: dict[str, list[bytes]]) -> tuple[list[Path], int]:
    """Avro container files of the Segment-like shape. A container file holds only records of
    its schema, so a broken record becomes a click without its search id (which does not map),
    in the same place: replay's order, and so what is late, stays the native log's. Returns how
    many there were."""
    schema = parse_schema(json.loads(SEGMENT_AVSC.read_text()))
    paths, broken = [], 0
    for role, values in records.items():
        rows = []
        for v in values:
            try:
                rows.append(_segment(json.loads(v)))
            except ValueError:
                broken += 1
                rows.append(
                    _segment({"type": "click", "request_id": "", "doc_id": "", "timestamp": 0})
                )
                rows[-1]["properties"]["search_id"] = None
        path = tmp / f"{name}-{role}.avro"
        with path.open("wb") as fh:
            writer(fh, schema, rows)
        paths.append(path)
    return paths, broken


LOGS = {"integration": _integration_log, "pipeline": lambda _tmp: _pipeline_log()}


@pytest.mark.parametrize("log_name", LOGS)
@pytest.mark.parametrize("shape", SHAPES)
def test_a_foreign_json_shape_replays_to_the_native_figures(
    tmp_path: Path, log_name: str, shape: str
) -> None:
    records = LOGS[log_name](tmp_path)
    native = _figures(
        load_settings(evaluation=EVALUATION), _write(tmp_path, "native", records, None)
    )
    # without its [input] the foreign shape is not read (the control of this test) ...
    unread = _figures(load_settings(evaluation=EVALUATION), _write(tmp_path, shape, records, shape))
    assert unread[0]["intake"]["accepted"] == 0
    # ... and with it, exactly the native figures
    mapped = _figures(
        load_settings(TOML[shape], evaluation=EVALUATION), _write(tmp_path, shape, records, shape)
    )
    assert native[0]["windows"], "the log must give window figures"
    assert len(native[1]) > 4
    if log_name == "pipeline":  # every intake outcome is exercised
        intake = native[0]["intake"]
        assert (intake["accepted"], intake["duplicate"], intake["late"]) == (12, 3, 1)
        assert intake["unmatched"] == 1
    assert mapped == native


@pytest.mark.parametrize("log_name", LOGS)
def test_the_segment_shape_in_avro_container_files_replays_to_the_native_figures(
    tmp_path: Path, log_name: str
) -> None:
    records = LOGS[log_name](tmp_path)
    native = _figures(
        load_settings(evaluation=EVALUATION), _write(tmp_path, "native", records, None)
    )
    paths, broken = _write_avro(tmp_path, "segment", records)
    settings = load_settings(
        SEGMENT_TOML,
        evaluation=EVALUATION,
        input={"files": {"*.avro": {"format": "mapped", "mapping": "segment", "encoding": "avro"}}},
    )
    mapped = _figures(settings, paths)
    assert mapped[1] == native[1]
    assert mapped[0]["windows"] == native[0]["windows"]
    want = native[0]["intake"]
    if broken:  # the broken records: bad JSON in the native log, unmappable clicks in Avro
        want["invalid"] = {"mapping": want["invalid"].pop("bad_json")}
    assert mapped[0]["intake"] == want
    # make_log breaks a click of requests i ≡ 5 (mod 97): 5, 102, 199, 296 of 300
    assert broken == (4 if log_name == "integration" else 0)


def test_wire_format_avro_from_schema_files_maps_like_json(tmp_path: Path) -> None:
    """A topic's Confluent wire-format records, schemas from ``input.avro_schemas``: each record
    decodes to the same event as its Segment-like JSON."""
    settings = load_settings(SEGMENT_TOML)
    json_decoder = Formats(settings.input).decoder(settings.input.default)
    avro = SegmentAvro(schema_id=7)
    decoder = AvroDecoder(
        SchemaStore({7: SEGMENT_AVSC}), Mapper(settings.input.mappings["segment"])
    )
    records = _pipeline_log()
    n = 0
    for values in records.values():
        for v in values:
            assert decoder(avro.encode(v)) == json_decoder(rewrite(v, "segment"))
            n += 1
    assert n == 17
