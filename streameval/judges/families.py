"""Judge families: which family a judgment's ``judge`` belongs to (DESIGN §12).

``[judges] families`` lists judge-id prefixes. The longest prefix a judge starts with decides:

* a prefix ending in ``:`` makes each judge under it a family of its own, named by the whole
  judge id: with the default ``["llm:"]``, ``llm:gpt-4o`` and ``llm:claude-3`` are two families;
* any other prefix is one family named by the prefix: ``"vendor-a/"`` groups ``vendor-a/r1`` and
  ``vendor-a/r2`` into the family ``vendor-a/``;
* a judge matching no prefix, an empty judge too, is the family ``human``.

The first ``max_families`` families seen keep their names, in the order their first judgment
was read (an order the input decides); a later family folds into ``__other__``.
"""

from __future__ import annotations

from collections.abc import Sequence

HUMAN = "human"
OTHER = "__other__"


def family_of(judge: str, prefixes: Sequence[str]) -> str:
    """The family of ``judge`` under ``prefixes`` (uncapped; see the module's rules)."""
    best = ""
    for prefix in prefixes:
        if len(prefix) > len(best) and judge.startswith(prefix):
            best = prefix
    if not best:
        return HUMAN
    return judge if best.endswith(":") else best


class Families:
    """The families seen so far, capped, and each judge's (remembered once decided)."""

    __slots__ = ("_cap", "_of", "_prefixes", "names")

    def __init__(self, prefixes: Sequence[str], max_families: int) -> None:
        self._prefixes = tuple(prefixes)
        self._cap = max_families
        self._of: dict[str, str] = {}
        #: the families in the order first seen (``__other__`` among them once anything folded)
        self.names: list[str] = []

    def of(self, judge: str) -> str:
        """The (capped) family of ``judge``; a new family is registered here."""
        family = self._of.get(judge)
        if family is not None:
            return family
        family = family_of(judge, self._prefixes)
        if family not in self.names:
            if len(self.names) - (OTHER in self.names) >= self._cap:
                family = OTHER  # the first max_families keep their names
            if family not in self.names:
                self.names.append(family)
        self._of[judge] = family
        return family
