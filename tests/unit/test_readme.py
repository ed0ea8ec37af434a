"""The README stays a short, true overview: its links resolve, its connect example is a valid
configuration (as a file and as environment variables, the same settings), and the rules on its
size and content hold."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from streameval.config import load_settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
#: [text](target) of Markdown, not images' sources nor code spans' contents
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks."""
    return re.sub(r"(?ms)^```.*?^```", "", text)


def _blocks(text: str, lang: str, after: str) -> list[str]:
    section = text[text.index(after) :]
    section = section[: section.find("\n## ", 1)]
    return re.findall(rf"(?ms)^```{lang}\n(.*?)^```", section)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("STREAMEVAL_"):
            monkeypatch.delenv(name)


def test_every_relative_link_of_the_readme_resolves_to_a_file_of_the_repository() -> None:
    targets = _LINK.findall(_prose(README.read_text()))
    relative = [t for t in targets if not re.match(r"[a-z]+:", t) and not t.startswith("#")]
    assert len(relative) >= 10
    missing = [t for t in relative if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_readme_is_short_and_free_of_archaeology() -> None:
    text = README.read_text()
    assert "streameval demo" in text
    assert len(text.splitlines()) <= 300
    assert not re.findall(r"[0-9a-f]{7} ?\)", text), "commit hashes belong in docs/performance.md"
    assert "py-spy" not in text
    assert "callgrind" not in text


def test_the_two_commands_are_the_ones_ci_and_a_fresh_machine_run() -> None:
    (block,) = _blocks(README.read_text(), "sh", "## Two commands")
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert commands == [
        "python3 -m venv .venv && .venv/bin/pip install . && .venv/bin/streameval demo",
        "scripts/test",
    ]
    assert "exec scripts/test" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("page", [README, ROOT / "docs" / "operations.md"])
def test_the_connect_example_is_one_configuration_as_a_file_and_as_the_environment(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = page.read_text()
    (toml,) = _blocks(text, "toml", "## Connect to your Kafka")
    (sh,) = _blocks(text, "sh", "## Connect to your Kafka")
    cfg = tmp_path / "streameval.toml"
    cfg.write_text(toml)
    from_file = load_settings(cfg)
    assert from_file.kafka.topics == ("search-impressions", "search-clicks")
    assert from_file.kafka.judgment_topics == ("search-judgments",)
    assert from_file.kafka.group_id == "streameval-search"
    assert from_file.kafka.security_protocol == "SASL_SSL"
    assert from_file.kafka.sasl_password is not None
    assert from_file.evaluation.control == {"arm": "control"}
    for line in sh.splitlines():
        if line.startswith("export ") and "$" not in line:
            name, _, value = shlex.split(line[len("export ") :])[0].partition("=")
            monkeypatch.setenv(name, value)
    assert load_settings() == from_file
