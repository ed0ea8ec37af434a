"""``streameval schema`` prints the JSON Schema of the events (DESIGN §7)."""

from __future__ import annotations

import json

import pytest

from streameval.cli import main


def test_schema_command_prints_the_three_event_types(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert set(schema["$defs"]) >= {"Impression", "Click", "Judgment"}
    assert schema["discriminator"]["propertyName"] == "type"
    assert set(schema["discriminator"]["mapping"]) == {"impression", "click", "judgment"}
    impression = schema["$defs"]["Impression"]
    # The wire names: "results" (stored as doc_ids), with the bounds that make input safe.
    assert impression["required"] == ["type", "request_id", "timestamp", "results"]
    assert impression["properties"]["results"]["maxItems"] == 1000
    assert schema["$defs"]["Judgment"]["required"] == ["type", "doc_id", "grade", "timestamp"]
    timestamp = schema["$defs"]["Click"]["properties"]["timestamp"]
    assert {"type": "string", "format": "date-time"} in timestamp["anyOf"]


def test_schema_command_ubi(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--ubi", "--indent", "0"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # compact: one line
    schema = json.loads(out)
    assert set(schema["$defs"]) >= {"UbiQuery", "UbiEvent"}
    assert "query_response_hit_ids" in schema["$defs"]["UbiQuery"]["required"]
    assert "action_name" in schema["$defs"]["UbiEvent"]["required"]
