"""The worked mappings of docs/input-formats.md ("Point it at your topics") are the test fixtures,
verbatim (they were the README's until the README moved its detail to docs/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streameval.config import load_settings
from tests.foreign_shapes import SEGMENT_TOML, SNOWPLOW_TOML

INPUT_FORMATS = Path(__file__).resolve().parents[2] / "docs" / "input-formats.md"


@pytest.mark.parametrize("fixture", [SNOWPLOW_TOML, SEGMENT_TOML])
def test_the_docs_show_each_worked_mapping_as_the_tests_use_it(fixture: Path) -> None:
    text = INPUT_FORMATS.read_text()
    section = text[text.index("## Point it at your topics") :]
    assert f"```toml\n{fixture.read_text().rstrip()}\n```" in section
    assert load_settings(fixture).input.default.format == "mapped"
