"""docs/configuration.md is generated from the settings model and cannot drift from it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from streameval.config import KafkaSettings, Settings
from streameval.config_reference import REGENERATE, field_meaning, reference_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def test_the_configuration_reference_is_the_generated_one() -> None:
    assert DOC.read_text() == reference_markdown(), (
        f"docs/configuration.md is stale (streameval/config.py changed): run `{REGENERATE}`"
    )


def _keys(model: type[BaseModel], prefix: str) -> list[str]:
    keys: list[str] = []
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        if isinstance(default, BaseModel):
            keys += _keys(type(default), f"{prefix}{name}.")
        else:
            keys.append(f"{prefix}{name}")
    return keys


def test_every_key_of_every_section_has_a_row() -> None:
    text = reference_markdown()
    rows = {line.split("`")[1] for line in text.splitlines() if line.startswith("| `")}
    keys = _keys(Settings, "")
    assert len(keys) > 60
    assert set(keys) <= rows, sorted(set(keys) - rows)
    # the entries of tables of sub-tables are documented under a placeholder
    assert "input.mappings.<mapping>.click.position_base" in rows
    assert "input.topics.<topic>.format" in rows


def test_meanings_come_from_the_comments_and_defaults_from_the_model() -> None:
    # a multi-line #: comment is one meaning, in Markdown's back-quotes
    consumer = field_meaning(KafkaSettings, "consumer")
    assert consumer.startswith("the client that reads `topics` in the consumer group")
    assert consumer.endswith("always use kafka-python.")
    text = reference_markdown()
    assert '| `evaluation.windows` | list of durations | `["1m", "5m", "1h"]` |' in text
    assert "| `kafka.sasl_password` | secret string | not set |" in text
    assert "| `input.mappings.<mapping>.impression.request_id` | JSON Pointer | required |" in text
    assert '| `detection.false_alarm_every` | duration | `"30d"` |' in text
