"""Judge families: the prefix rules as a table, and the cap."""

from __future__ import annotations

import pytest

from streameval.judges import HUMAN, OTHER, Families, family_of


@pytest.mark.parametrize(
    ("judge", "prefixes", "family"),
    [
        ("alice", ("llm:",), HUMAN),
        ("", ("llm:",), HUMAN),  # an empty judge is human
        ("llm:gpt-4o", ("llm:",), "llm:gpt-4o"),  # a prefix ending in ":": one family per judge
        ("llm:", ("llm:",), "llm:"),
        ("LLM:gpt-4o", ("llm:",), HUMAN),  # prefixes are case-sensitive
        ("vendor-a/r1", ("vendor-a/", "llm:"), "vendor-a/"),  # any other prefix: one family
        ("vendor-a/r2", ("vendor-a/",), "vendor-a/"),
        ("llm:gpt-4o-mini", ("llm:", "llm:gpt-4o"), "llm:gpt-4o"),  # the longest prefix wins
        ("llm:claude", ("llm:", "llm:gpt-4o"), "llm:claude"),
        ("anyone", (), HUMAN),
    ],
)
def test_family_of(judge: str, prefixes: tuple[str, ...], family: str) -> None:
    assert family_of(judge, prefixes) == family


def test_the_first_max_families_keep_their_names_in_input_order() -> None:
    families = Families(("llm:",), 3)
    seen = [families.of(j) for j in ("llm:a", "bob", "llm:b", "llm:c", "llm:d", "llm:a", "eve")]
    assert seen == ["llm:a", HUMAN, "llm:b", OTHER, OTHER, "llm:a", HUMAN]
    assert families.names == ["llm:a", HUMAN, "llm:b", OTHER]
