"""Query normalization: the one definition of "the same query" (DESIGN §2).

The normalized text is the default ``query_id`` of an impression, and a judgment given with a
``query`` is normalized the same way, so ``"Red  Shoes "`` and ``"red shoes"`` share judgments.
"""

from __future__ import annotations

import unicodedata

__all__ = ["normalize_query"]


def normalize_query(text: str) -> str:
    """Return ``text`` in Unicode NFKC, case-folded, white space runs collapsed, trimmed.

    NFKC first folds compatibility forms (full-width letters, ligatures such as "ﬁ"); casefold
    then maps case variants together, including "ß" -> "ss", so "Straße" and "STRASSE" agree.
    NFKC is applied again after case folding because casefold can produce text that is not in
    NFKC (the Unicode "NFKC_Casefold" idea), which keeps the function idempotent.
    ``str.split()`` without arguments splits on every Unicode white space run (tabs, newlines,
    no-break and ideographic spaces) and drops leading and trailing white space. ASCII text
    (the common case) takes a shortcut with the same result.
    """
    if text.isascii():  # NFKC is the identity on ASCII, and casefold is lower()
        return " ".join(text.lower().split())
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return " ".join(folded.split())
