"""Mapped formats field by field: JSON Pointers, the type field, timestamp units, results, labels,
actions, and a reason naming the field for every record that does not map."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from streameval.config import MappingSettings, load_settings
from streameval.errors import ConfigError
from streameval.events.decode import Invalid
from streameval.events.formats import Formats
from streameval.events.mapping import MappedJsonDecoder, Mapper
from streameval.events.models import Click, Impression, Judgment
from streameval.events.pointer import compile_pointer, tokens
from streameval.kafka.dlq import FIELD_HEADER, REASON_HEADER, dead_letter
from streameval.kafka.records import RawRecord
from streameval.log_limits import InvalidRecordLog

T = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def test_json_pointers_follow_rfc_6901() -> None:
    doc: dict[str, Any] = {
        "foo": ["bar", "baz"],
        "": 0,
        "a/b": 1,
        "m~n": 8,
        "7": "seven",
        "nested": {"list": [{"id": "x"}]},
    }
    # the examples of RFC 6901 §5
    assert compile_pointer("")(doc) is doc
    assert compile_pointer("/foo")(doc) == ["bar", "baz"]
    assert compile_pointer("/foo/0")(doc) == "bar"
    assert compile_pointer("/")(doc) == 0
    assert compile_pointer("/a~1b")(doc) == 1
    assert compile_pointer("/m~0n")(doc) == 8
    # a digit token on an object is a member name; on an array an index
    assert compile_pointer("/7")(doc) == "seven"
    assert compile_pointer("/nested/list/0/id")(doc) == "x"
    # whatever is not there is None (as null is), never an exception
    for absent in ("/foo/2", "/foo/-", "/foo/01", "/foo/0/0", "/nested/list/x", "/no", "/7/0"):
        assert compile_pointer(absent)(doc) is None, absent
    assert tokens("/a~01/b~10") == ["a~1", "b/0"]
    with pytest.raises(ValueError):
        tokens("a/b")
    with pytest.raises(ValueError):
        tokens("/a~2")


def test_a_pointer_cannot_inject_code() -> None:
    get = compile_pointer("/x'] or __import__('os').system('false') or r['")
    assert get({"x": 1}) is None
    assert get({"x'] or __import__('os').system('false') or r['": 5}) == 5


SHOP = {
    "type_field": "/kind",
    "timestamp_unit": "s",
    "impression": {
        "when": ["search"],
        "request_id": "/req",
        "timestamp": "/at",
        "query": "/q",
        "results": "/hits",
        "result_doc_id": "/item/id",
        "labels": {"ranker": "/model", "arm": "/exp/arm"},
        "constant_labels": {"site": "shop"},
    },
    "click": {
        "when": ["tap", "buy"],
        "request_id": "/req",
        "doc_id": "/item",
        "timestamp": "/at",
        "action": "/kind",
        "actions": {"tap": "click", "buy": "purchase"},
        "position": "/rank",
        "position_base": 0,
    },
    "judgment": {
        "when": ["grade"],
        "query_id": "/qid",
        "doc_id": "/item",
        "grade": "/g",
        "timestamp": "/at",
        "judge": "/who",
    },
}


def shop() -> MappedJsonDecoder:
    return MappedJsonDecoder(Mapper(MappingSettings.model_validate(SHOP)))


def dec(record: dict[str, Any] | bytes) -> Any:
    raw = record if isinstance(record, bytes) else json.dumps(record).encode()
    return shop()(raw)


def test_each_type_maps_to_its_native_event() -> None:
    imp = dec(
        {
            "kind": "search",
            "req": 42,  # an integer id is read as its text
            "at": 1_767_225_600.5,  # epoch seconds
            "q": "Red  Shoes ",
            "hits": [{"item": {"id": "a"}}, {"item": {"id": 7}}],
            "model": "m1",
            "exp": {"arm": "control"},
        }
    )
    assert isinstance(imp, Impression)
    assert (imp.request_id, imp.timestamp, imp.doc_ids) == ("42", T + 500, ("a", "7"))
    assert imp.query_id == "red shoes"
    assert imp.labels == {"site": "shop", "ranker": "m1", "arm": "control"}
    clk = dec({"kind": "buy", "req": "r", "item": "a", "at": 1_767_225_601, "rank": 0})
    assert isinstance(clk, Click)
    assert (clk.action, clk.position, clk.timestamp) == ("purchase", 1, T + 1000)
    assert dec({"kind": "tap", "req": "r", "item": "a", "at": 1_767_225_601}).action == "click"
    jdg = dec({"kind": "grade", "qid": "Q1", "item": "a", "g": 2, "at": 1_767_225_600, "who": "x"})
    assert isinstance(jdg, Judgment)
    assert (jdg.query_id, jdg.grade, jdg.judge) == ("Q1", 2.0, "x")


@pytest.mark.parametrize(
    ("record", "reason", "field"),
    [
        ({"req": "r"}, "mapping", "/kind"),  # no type field
        ({"kind": ["search"]}, "unknown_type", ""),  # not a type value the mapping reads
        ({"kind": "page_view"}, "unknown_type", ""),  # another event of the topic
        ({"kind": "tap", "item": "a", "at": 1}, "mapping", "/req"),  # missing
        ({"kind": "tap", "req": None, "item": "a", "at": 1}, "mapping", "/req"),  # null
        ({"kind": "tap", "req": "r", "item": "a", "at": "noon"}, "mapping", "/at"),  # unit
        ({"kind": "tap", "req": "r", "item": "a", "at": 1e300}, "mapping", "/at"),  # range
        ({"kind": "tap", "req": "r" * 300, "item": "a", "at": 1}, "mapping", "/req"),  # bound
        ({"kind": "tap", "req": "r", "item": {"id": 1}, "at": 1}, "mapping", "/item"),  # type
        ({"kind": "search", "req": "r", "at": 1, "hits": {}}, "mapping", "/hits"),
        ({"kind": "search", "req": "r", "at": 1, "hits": []}, "mapping", "/hits"),
        ({"kind": "search", "req": "r", "at": 1, "hits": [{"x": 1}]}, "mapping", "/hits/0"),
        (
            {"kind": "search", "req": "r", "at": 1, "hits": [{"item": {"id": "a"}}], "model": {}},
            "mapping",
            "/model",
        ),
        ({"kind": "grade", "qid": "q", "item": "a", "g": "good", "at": 1}, "mapping", "/g"),
        ({"kind": "grade", "qid": "q", "item": "a", "g": 1e9, "at": 1}, "mapping", "/g"),
        (b"[1, 2]", "mapping", ""),
        (b'{"kind": "grade", "qid": "q", "item": "a", "g": NaN, "at": 1}', "mapping", "/g"),
        (b"\xff\xfe", "bad_encoding", ""),
        (b"[" * 5000, "bad_json", ""),
        (b"{" + b" " * 2_000_000 + b"}", "too_large", ""),
    ],
)
def test_a_record_that_does_not_map_names_its_field(
    record: dict[str, Any] | bytes, reason: str, field: str
) -> None:
    got = dec(record)
    assert isinstance(got, Invalid)
    assert (got.reason, got.field) == (reason, field), got.detail
    if field:
        assert got.detail.startswith(field)
    assert len(got.detail) <= 300


def test_timestamp_units() -> None:
    def at(unit: str, value: object) -> Any:
        m = MappingSettings.model_validate(
            {
                "click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"},
                "timestamp_unit": unit,
            }
        )
        return Mapper(m)({"r": "r", "d": "d", "t": value})

    assert at("ms", T).timestamp == T
    assert at("ms", "2026-01-01T00:00:00Z").timestamp == T  # as native events
    assert at("s", 1_767_225_600).timestamp == T
    assert at("us", 1_767_225_600_123_456).timestamp == T + 123  # floored to the millisecond
    assert at("rfc3339", "2026-01-01 00:00:01.5").timestamp == T + 1500  # no zone: UTC
    assert at("rfc3339", str(T)).field == "/t"  # digits are not RFC 3339
    assert at("s", True).field == "/t"
    assert at("s", "1767225600").field == "/t"


def test_one_event_type_without_a_type_field_reads_every_record_as_it() -> None:
    m = Mapper(
        MappingSettings.model_validate(
            {"click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"}}
        )
    )
    assert isinstance(m({"r": "r", "d": "d", "t": T, "type": "whatever"}), Click)


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"default": {"format": "mapped"}}, "mapping names the mapping"),
        ({"default": {"format": "mapped", "mapping": "nope"}}, "'nope' is not in input.mappings"),
        ({"topics": {"t": {"encoding": "avro"}}}, 'needs format = "mapped"'),
        (
            {
                "topics": {"t": {"format": "mapped", "mapping": "m", "encoding": "avro"}},
                "mappings": {
                    "m": {"click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"}}
                },
            },
            "topics.t.encoding: Avro needs schema_registry_url or avro_schemas",
        ),
        ({"mappings": {"m": {}}}, "at least one of impression, click, judgment"),
        (
            {"mappings": {"m": {"click": {"request_id": "r", "doc_id": "/d", "timestamp": "/t"}}}},
            "input.mappings.m.click.request_id",
        ),
        (
            {
                "mappings": {
                    "m": {"click": {"request_id": "/~2", "doc_id": "/d", "timestamp": "/t"}}
                }
            },
            "'~' must be followed by 0 or 1",
        ),
        (
            {
                "mappings": {
                    "m": {
                        "click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"},
                        "judgment": {
                            "doc_id": "/d",
                            "grade": "/g",
                            "timestamp": "/t",
                            "query": "/q",
                        },
                    }
                }
            },
            "type_field is needed",
        ),
        (
            {
                "mappings": {
                    "m": {
                        "type_field": "/k",
                        "click": {
                            "when": ["x"],
                            "request_id": "/r",
                            "doc_id": "/d",
                            "timestamp": "/t",
                        },
                        "judgment": {
                            "when": ["x"],
                            "doc_id": "/d",
                            "grade": "/g",
                            "timestamp": "/t",
                            "query": "/q",
                        },
                    }
                }
            },
            "'x' is also click.when",
        ),
        ({"avro_schemas": {"1": "/no/such.avsc"}}, "avro_schemas.1: no such file"),
    ],
)
def test_a_wrong_input_section_fails_at_start_naming_the_key(
    section: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(input=section)
    assert message in str(err.value)
    assert "input" in str(err.value)


def test_declared_native_and_ubi_formats_do_not_guess() -> None:
    settings = load_settings(input={"topics": {"n": {"format": "native"}, "u": {"format": "ubi"}}})
    formats = Formats(settings.input)
    ubi_query = json.dumps(
        {"query_id": "r1", "user_query": "q", "query_response_hit_ids": ["a"], "timestamp": T}
    ).encode()
    assert isinstance(formats.for_topic("auto")(ubi_query), Impression)  # detected by shape
    assert isinstance(formats.for_topic("u")(ubi_query), Impression)
    refused = formats.for_topic("n")(ubi_query)
    assert isinstance(refused, Invalid) and refused.reason == "schema"
    native = json.dumps({"type": "click", "request_id": "r", "doc_id": "a", "timestamp": T})
    assert isinstance(formats.for_topic("n")(native.encode()), Click)
    assert formats.by_topic_source("n/3") is formats.for_topic("n")


def test_files_are_matched_by_path_name_or_glob() -> None:
    m = {"click": {"request_id": "/r", "doc_id": "/d", "timestamp": "/t"}}
    settings = load_settings(
        input={
            "mappings": {"m": m},
            "files": {
                "logs/a.jsonl": {"format": "ubi"},
                "b.jsonl": {"format": "native"},
                "*.seg.jsonl": {"format": "mapped", "mapping": "m"},
            },
        }
    )
    formats = Formats(settings.input)
    assert formats.file_format("logs/a.jsonl").format == "ubi"
    assert formats.file_format("/x/y/b.jsonl").format == "native"
    assert formats.file_format("/x/c.seg.jsonl").format == "mapped"
    assert formats.file_format("other.jsonl").format == "auto"


def test_the_field_that_did_not_map_is_in_the_dead_letter_header() -> None:
    invalid = dec({"kind": "tap", "item": "a", "at": 1})
    record = RawRecord("clicks", 2, 9, b"k", b"{}", 0, ())
    _, _, headers = dead_letter(record, invalid.reason, invalid.field)
    assert dict(headers)[REASON_HEADER] == b"mapping"
    assert dict(headers)[FIELD_HEADER] == b"/req"
    _, _, plain = dead_letter(record, "bad_json")
    assert FIELD_HEADER not in dict(plain)


def test_invalid_records_are_logged_sampled_with_their_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    log = InvalidRecordLog(interval_s=30, clock=lambda: now[0])
    missing = Invalid("mapping", "/req: missing (the click's request_id)", "/req")
    with caplog.at_level(logging.WARNING, logger="streameval.intake"):
        for _ in range(5):
            log.note(missing, "clicks/0")
        log.note(Invalid("bad_json", "expected value"), "clicks/1")
        now[0] = 31.0
        log.note(missing, "clicks/0")
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "invalid record (mapping, field /req) from clicks/0: /req: missing (the click's"
        " request_id)",
        "invalid record (bad_json) from clicks/1: expected value",
        "invalid record (mapping, field /req) from clicks/0: /req: missing (the click's"
        " request_id) (+4 more like it in the last 30 s)",
    ]


def test_results_that_are_the_ids_themselves() -> None:
    m = Mapper(
        MappingSettings.model_validate(
            {"impression": {"request_id": "/r", "timestamp": "/t", "results": "/hits"}}
        )
    )
    imp = m({"r": "r1", "t": T, "hits": ["a", 7, "c"]})
    assert isinstance(imp, Impression)
    assert imp.doc_ids == ("a", "7", "c")  # an integer id is read as its text
    bad = m({"r": "r1", "t": T, "hits": ["a", {"id": "b"}]})
    assert isinstance(bad, Invalid)
    assert (bad.reason, bad.field) == ("mapping", "/hits/1")
    over = m({"r": "r1", "t": T, "hits": ["a"] * 1001})
    assert isinstance(over, Invalid) and over.field == "/hits"
