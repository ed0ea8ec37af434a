"""The judgment table: explicit graded labels by (query_id, doc_id), one latest grade per judge.

A doc's judged grade is the mean over judges of each judge's latest grade (latest by event time;
on a tie, the one read last). The pool of a query, every judged doc's grade sorted descending,
is cached until the query's judgments change: it is the ideal ordering of ``ideal = "pool"``.

A judgment's identity (DESIGN §2) is its ``event_id``, or without one its exact record: a record
seen again is a duplicate even when a newer grade has replaced it since. :class:`JudgmentIds`
remembers the identities seen, within a cap. (In a keyed, compacted judgment topic the key is the
identity instead: see ``Pipeline.offer_judgment``.)
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Mapping

from streameval.events.models import Judgment

_NO_DOCS: Mapping[str, Mapping[str, tuple[int, float]]] = {}


class _Query:
    __slots__ = ("docs", "means", "pool", "version")

    def __init__(self, version: int) -> None:
        #: the store's change stamp when this query's judgments last changed
        self.version = version
        # doc_id -> judge -> (timestamp, grade)
        self.docs: dict[str, dict[str, tuple[int, float]]] = {}
        self.means: dict[str, float] | None = None
        self.pool: list[float] | None = None


class JudgmentStore:
    __slots__ = ("_entries", "_queries", "_stamp", "copy_to", "listener")

    def __init__(self) -> None:
        self._queries: dict[str, _Query] = {}
        self._entries = 0
        self._stamp = 0  # grows with every change of any query's judgments
        #: told (query_id, doc_id) after every change of that doc's grades (the judge
        #: families' bookkeeping, :mod:`streameval.judges`); None: nobody listens
        self.listener: Callable[[str, str], None] | None = None
        #: told (query_id, doc_id) after ``listener`` of every change made here (``apply``,
        #: ``delete``), not of one copied in (:meth:`mirror`): a copy of this table kept
        #: elsewhere (the native engine's core); None: none
        self.copy_to: Callable[[str, str], None] | None = None

    def apply(self, judgment: Judgment, *, replace: bool = False) -> bool:
        """Record a judgment; False when it changes nothing (the same grade and time again).

        The judge's later grade (by event time) wins; with ``replace`` this one wins whatever
        its time (the latest value of a key in a compacted topic, as compaction keeps it)."""
        query = self._queries.get(judgment.query_id)
        if query is None:
            query = self._queries[sys.intern(judgment.query_id)] = _Query(self._stamp)
        judges = query.docs.get(judgment.doc_id)
        if judges is None:
            judges = query.docs[sys.intern(judgment.doc_id)] = {}
        previous = judges.get(judgment.judge)
        entry = (judgment.timestamp, judgment.grade)
        if previous is not None:
            if previous == entry:
                return False
            if judgment.timestamp < previous[0] and not replace:
                return True  # an older grade by the same judge: superseded, nothing changes
        else:
            self._entries += 1
        judges[judgment.judge] = entry
        query.means = None
        query.pool = None
        self._stamp += 1
        query.version = self._stamp
        if self.listener is not None:
            self.listener(judgment.query_id, judgment.doc_id)
        if self.copy_to is not None:
            self.copy_to(judgment.query_id, judgment.doc_id)
        return True

    def mirror(
        self, query_id: str, doc_id: str, judges: dict[str, tuple[int, float]], version: int
    ) -> None:
        """Make ``doc_id`` of ``query_id`` hold exactly ``judges`` (judge -> (timestamp, grade),
        in the order the judges were first read, as :meth:`judges_of` gives them; taken as it
        is, not copied; empty: the doc is no longer judged) and give the query ``version`` (-1:
        it has no judgment left): a change made in the table ``copy_to`` keeps (the native
        engine's core applies the judgments read outside keyed topics: docs/native.md
        "Judgments applied in the core"), so this table equals that one, its versions
        included. A doc judged anew goes last, as ``apply`` puts it. One change at a time: the
        change stamp becomes ``version``, or grows by one for a query emptied (as ``delete``
        makes it grow), so the versions the two tables give next are the same. Tells
        ``listener``, not ``copy_to`` (the change comes from there)."""
        query = self._queries.get(query_id)
        if query is None:
            query = self._queries[sys.intern(query_id)] = _Query(version)
        docs = query.docs
        before = docs.get(doc_id)
        if before is not None:
            self._entries -= len(before)
        if judges:
            docs[doc_id if before is not None else sys.intern(doc_id)] = judges
            self._entries += len(judges)
        elif before is not None:
            del docs[doc_id]
        if version < 0 or not docs:
            del self._queries[query_id]
            self._stamp += 1
        else:
            query.means = None
            query.pool = None
            query.version = version
            self._stamp = max(self._stamp, version)
        if self.listener is not None:
            self.listener(query_id, doc_id)

    def version(self, query_id: str) -> int:
        """A stamp that changes whenever ``query_id``'s judgments change (-1: it has none), so a
        score computed earlier can be told still valid."""
        query = self._queries.get(query_id)
        return -1 if query is None else query.version

    def grades(self, query_id: str) -> Mapping[str, float]:
        """Judged grade of each judged doc of ``query_id`` (empty when none)."""
        query = self._queries.get(query_id)
        if query is None:
            return {}
        if query.means is None:
            query.means = {
                doc: sum(g for _, g in judges.values()) / len(judges)
                for doc, judges in query.docs.items()
            }
        return query.means

    def pool(self, query_id: str) -> list[float]:
        """Grades of every judged doc of ``query_id``, best first (the qrels pool)."""
        query = self._queries.get(query_id)
        if query is None:
            return []
        if query.pool is None:
            query.pool = sorted(self.grades(query_id).values(), reverse=True)
        return query.pool

    def delete(self, query_id: str, doc_id: str, judge: str) -> bool:
        """Forget ``judge``'s grade of ``doc_id`` for ``query_id`` (a tombstone in a compacted
        judgment topic); False when there was none."""
        query = self._queries.get(query_id)
        judges = None if query is None else query.docs.get(doc_id)
        if query is None or judges is None or judges.pop(judge, None) is None:
            return False
        self._entries -= 1
        if not judges:
            del query.docs[doc_id]
            if not query.docs:
                del self._queries[query_id]
        query.means = None
        query.pool = None
        self._stamp += 1
        query.version = self._stamp
        if self.listener is not None:
            self.listener(query_id, doc_id)
        if self.copy_to is not None:
            self.copy_to(query_id, doc_id)
        return True

    def judges_of(self, query_id: str) -> Mapping[str, Mapping[str, tuple[int, float]]]:
        """Per judged doc of ``query_id``, each judge's latest (timestamp, grade); read-only."""
        query = self._queries.get(query_id)
        return _NO_DOCS if query is None else query.docs

    def __len__(self) -> int:
        """Number of (query, doc, judge) grades held."""
        return self._entries


class JudgmentIds:
    """The identities of the last ``cap`` distinct judgments read, as 64-bit hashes (~90 B each),
    the oldest forgotten first and counted in :attr:`forgotten`: a record re-sent after its
    identity was forgotten is taken as new (accepted; it changes nothing when it is the judge's
    latest grade or older)."""

    __slots__ = ("_cap", "_order", "_seen", "forgotten")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._seen: set[int] = set()
        self._order: deque[int] = deque()
        #: identities forgotten over the cap
        self.forgotten = 0

    def add(self, identity: str | bytes) -> bool:
        """Remember ``identity`` (an ``event_id``, or the digest of a record); False when it was
        already remembered (a duplicate)."""
        h = hash((type(identity) is str, identity))  # an event id never equals a digest
        seen = self._seen
        if h in seen:
            return False
        seen.add(h)
        order = self._order
        order.append(h)
        if len(order) > self._cap:
            seen.discard(order.popleft())
            self.forgotten += 1
        return True

    def __len__(self) -> int:
        return len(self._order)
