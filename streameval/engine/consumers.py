"""The one narrow interface through which finalized, scored lists reach their consumers.

The windows are one consumer of the stream of finalized lists; regression detectors and
interleaving credit are others, each a package of its own beside :mod:`streameval.windows`. The
:class:`~streameval.engine.Pipeline` hands every consumer the same :class:`ScoredList` values,
in the order it finalizes them, and tells each when the evaluation horizon moves. Every member
a consumer may have is declared here: :class:`ListConsumer` (all of them), and the kinds the
engine tells apart once, when it is built: :class:`WindowedConsumer` (window state beside the
windows, e.g. interleaving), :class:`JudgedEarlyConsumer` (judged scores early, e.g. the
detectors) with its two capabilities :class:`DeclinesJudged` and :class:`HoldsJudgedFloor`, and
:class:`FedBySums` (a consumer whose per-list work is per-query sums the engine may keep for it).

A consumer must give the same result whatever the moments at which :meth:`advance` is called:
the daemon calls it when its polls happen to land, replay when its lines do. The way to be so is
to act per *bucket* (``windows.spec.bucket_start``): a bucket is complete once the horizon is at
or past its end, since every list whose impression falls in it has then been handed out; close
each complete bucket once, in order, and never act on an incomplete one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from streameval.detect.stash import SourceSums, SumsStash
from streameval.snapshot import Snapshot
from streameval.values import ScoredList
from streameval.windows.store import Bucket


class ListConsumer(Protocol):
    def add(self, scored: ScoredList) -> None:
        """One finalized list, scored (handed out once, before the horizon passes its bucket)."""
        ...

    def advance(self, horizon_ms: int) -> None:
        """The evaluation horizon is now ``horizon_ms``: every list with an impression before
        it has been handed to :meth:`add`. Called at least once whenever the horizon enters a
        new bucket (and at the end of input), not on every move of the horizon."""
        ...


@runtime_checkable
class JudgedEarlyConsumer(ListConsumer, Protocol):
    """A consumer that also takes judged scores without the attribution wait (DESIGN §9).

    A judged score does not depend on clicks, so the pipeline scores a list's judged source once
    the watermark has passed its impression (no impression can then still arrive before it), a
    whole bucket at a time: when the watermark completes the bucket of its impression, it hands
    each list to :meth:`add_judged` (a :class:`ScoredList` with the judged source only); then
    it calls :meth:`advance_judged` with that bucket boundary: every impression before it has
    been handed out. Buckets of judged scores complete on the watermark as the others do on the
    horizon. The same list still reaches :meth:`add` when finalized; the windows keep their
    horizon.

    :meth:`reset`: the stream is about to be re-read from the last commit (a rebalance): what the
    consumer holds for buckets it has not closed will be handed to it again.

    A consumer may also be a :class:`DeclinesJudged` and a :class:`HoldsJudgedFloor`.

    Cost: one :class:`ScoredList` per list (built with ``tuple.__new__``, see
    :func:`streameval.score.lists._scored`); its judged :class:`SourceScore` is the one the list
    keeps and reuses at finalization, so nothing is scored twice.
    """

    def add_judged(self, scored: ScoredList) -> None: ...

    def advance_judged(self, watermark_ms: int) -> None: ...

    def reset(self) -> None: ...


@runtime_checkable
class DeclinesJudged(Protocol):
    """A :class:`JudgedEarlyConsumer` that says whether it takes judged scores early: one with
    ``takes_judged = False`` (e.g. detectors that watch implicit relevance only) is still reset,
    but gets no judged score early: the pipeline then neither keeps the lists for it nor scores
    them before finalization. (A consumer that does not say takes them.)"""

    takes_judged: bool


@runtime_checkable
class HoldsJudgedFloor(Protocol):
    """A :class:`JudgedEarlyConsumer` that may hold judged scores from before a restart."""

    def judged_floor(self, source: str) -> int | None:
        """The bucket start before which the consumer already holds the judged scores of
        ``source`` (None: it holds none). Asked when a source is restored for a re-read; when
        every early consumer has a floor, the pipeline does not score early the lists of that
        source before it (they would be ignored), only at finalization."""
        ...


@runtime_checkable
class WindowedConsumer(ListConsumer, Protocol):
    """A consumer whose figures are window state, like the windows' (e.g. interleaving, DESIGN
    §10): it is handed only the lists the windows fold (not those of a bucket already in the
    state topic: it takes that bucket's figures back with :meth:`load_bucket`), it is reset
    before a re-read, and its rows are part of every snapshot (:meth:`into_snapshot`)."""

    def load_bucket(self, start: int, bucket: Bucket) -> None:
        """A finalized bucket of a restored source, read back from the state topic."""
        ...

    def reset(self) -> None:
        """The streams are about to be re-read from the last commit (a rebalance)."""
        ...

    def into_snapshot(self, snapshot: Snapshot, horizon_ms: int | None) -> Snapshot:
        """``snapshot`` with this consumer's rows as of ``horizon_ms``."""
        ...


#: what a :class:`FedBySums` consumer sums beside relevance sources: every finalized list
#: counted per bucket and segment (one value, 0.0, per list under the query ``""``: its count
#: is the lists'), e.g. the sample-ratio counter
LISTS = "lists"


@runtime_checkable
class FedBySums(Protocol):
    """A consumer whose per-list work is only per-query sums of NDCG@k per relevance source
    (the regression detectors): :meth:`summed` says which sources, their bucket and the
    positions of the watched ks in a ``SourceScore``'s tuples; :meth:`feed_from` hands it
    stashes kept by the engine to read instead of its own (the native engine's core adds each
    list there itself, in the order its own ``add`` and ``add_judged`` calls would, and builds
    no :class:`ScoredList` when nobody else reads one: docs/native.md "Detector sums in the
    core"). Once fed, its ``add``/``add_judged`` still add to those stashes
    (:class:`~streameval.detect.stash.SumsStash`)."""

    def summed(self) -> dict[str, tuple[int, tuple[int, ...]]]:
        """Per relevance source summed (or :data:`LISTS`): (bucket_ms, the watched ks'
        positions)."""
        ...

    def feed_from(self, stashes: Mapping[str, SumsStash]) -> None:
        """Read and add to ``stashes`` (some of the summed sources) instead of its own."""
        ...


@runtime_checkable
class FedBySourceSums(Protocol):
    """A :class:`FedBySums` consumer that keeps its sums per source partition (the daemon's
    ``PartitionCollector``): :meth:`summed` as there, each source summed apart;
    :meth:`feed_per_source` hands it the engine's sums per source to read and add to instead
    of its own (docs/native.md "The daemon's collector fed by sums"). Told apart from
    :class:`FedBySums` by :meth:`feed_per_source` (it has no ``feed_from``)."""

    def summed(self) -> dict[str, tuple[int, tuple[int, ...]]]: ...

    def feed_per_source(self, sums: SourceSums) -> None: ...


__all__ = ["LISTS", "FedBySourceSums", "FedBySums", "SourceSums", "SumsStash"]
