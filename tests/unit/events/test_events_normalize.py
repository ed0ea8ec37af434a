"""normalize_query: NFKC, case folding, white space collapsed and trimmed (DESIGN §2)."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.events.normalize import normalize_query


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # DESIGN §2's own example: both spellings share judgments.
        ("Red  Shoes ", "red shoes"),
        ("red shoes", "red shoes"),
        # Full-width Latin letters (U+FF32 U+FF45 U+FF44) are NFKC-compatible with ASCII.
        ("\uff32\uff45\uff44 shoes", "red shoes"),
        # Ligatures: "ﬁ" (U+FB01) and "ﬀ" (U+FB00) decompose to "fi" and "ff" under NFKC.
        ("\ufb01sh o\ufb00er", "fish offer"),
        # casefold, not lower: "ß" folds to "ss", so both spellings meet.
        ("Straße", "strasse"),
        ("STRASSE", "strasse"),
        # Greek final sigma folds like the other sigma: "ΟΔΟΣ" and "οδος" agree.
        ("ΟΔΟΣ", "οδοσ"),
        ("οδος", "οδοσ"),
        # Tabs, newlines, carriage returns, no-break and ideographic spaces are white space.
        ("\tred\n\r shoes\u00a0\u3000size  42\n", "red shoes size 42"),
        # Superscript two is NFKC "2"; the Kelvin sign (U+212A) is "K", case-folded to "k".
        ("m\u00b2 \u212a", "m2 k"),
        ("", ""),
        (" \t\n ", ""),
    ],
)
def test_normalize_query_table(text: str, expected: str) -> None:
    assert normalize_query(text) == expected


def _reference(text: str) -> str:
    """An independent spelling of the rule: regex white space instead of str.split."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = unicodedata.normalize("NFKC", folded)
    return re.sub(r"\s+", " ", folded).strip()


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(st.text())
def test_matches_reference_and_is_idempotent(text: str) -> None:
    once = normalize_query(text)
    assert once == _reference(text)
    assert normalize_query(once) == once


@settings(deadline=None)  # no timing in tests: the machine is shared
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_shortcut_agrees_with_full_rule(text: str) -> None:
    assert normalize_query(text) == _reference(text)
