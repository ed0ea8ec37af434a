"""The keyed-judgment rules: which judgment records change the judgment table (DESIGN §2).

A judgment read outside a keyed topic is identified by its ``event_id``, else by the exact record;
a record of a compacted judgment topic by its key: its latest value is what the key says, as
compaction keeps it, and a tombstone deletes what the key's latest value set.
"""

from __future__ import annotations

from typing import Protocol

from streameval.events.decode import dedup_key
from streameval.events.models import Judgment
from streameval.join import JudgmentIds, JudgmentStore
from streameval.values import ACCEPTED, DUPLICATE, Outcome


class Identities(Protocol):
    """The identities of the judgments read outside keyed topics (:class:`JudgmentIds`; the
    native engine's are its core's: ``native_pipeline.CoreIdentities``)."""

    @property
    def forgotten(self) -> int: ...

    def add(self, identity: str | bytes) -> bool: ...

    def __len__(self) -> int: ...


class JudgmentRules:
    """The judgment table (``store``, outlives a rebuild) and the identities it was built from."""

    __slots__ = ("_keys", "ids", "store")

    def __init__(self, max_judgment_ids: int) -> None:
        self.store = JudgmentStore()
        # identities of the judgments read outside keyed judgment topics (DESIGN §2)
        self.ids: Identities = JudgmentIds(max_judgment_ids)
        # per key of a compacted judgment topic: the judgment its latest value set
        self._keys: dict[bytes, tuple[str, str, str]] = {}

    def apply(self, judgment: Judgment, raw: bytes, key: bytes | None) -> Outcome:
        """The outcome of one judgment record (``key``: its key, on a keyed judgment topic)."""
        if key is None:  # its identity: its event_id, else the exact record (DESIGN §2)
            if not self.ids.add(dedup_key(judgment, raw)):
                return DUPLICATE
            self.store.apply(judgment)
            return ACCEPTED
        # a keyed topic: the key is the identity, and its latest value is what it says, as
        # compaction keeps it (even dated before the value it replaces)
        self._key_judgment(key, judgment)
        changed = self.store.apply(judgment, replace=True)
        return ACCEPTED if changed else DUPLICATE

    def tombstone(self, key: bytes) -> Outcome:
        """A tombstone deletes what its key's latest value set, as compaction will: accepted as
        a judgment when it deleted one, duplicate when there was nothing to delete (e.g. its
        value was already compacted away)."""
        forgotten = self._keys.pop(key, None)
        deleted = forgotten is not None and self.store.delete(*forgotten)
        return ACCEPTED if deleted else DUPLICATE

    def _key_judgment(self, key: bytes, judgment: Judgment) -> None:
        """Remember what ``key``'s latest value set; compaction keeps only that value, so what
        the key said before, if it named another judgment, goes."""
        now = (judgment.query_id, judgment.doc_id, judgment.judge)
        before = self._keys.get(key)
        if before is not None and before != now:
            self.store.delete(*before)
        self._keys[key] = now
