"""The consumer of finalized lists that scores interleaving (DESIGN §10).

Fed through :class:`~streameval.engine.consumers.WindowedConsumer`: every finalized list is
handed to :meth:`InterleavingStore.add`; a list whose results name no team is ignored at the cost
of one attribute test. An interleaved list's outcomes (:mod:`streameval.score.credit`) go
into the bucket of its impression (``windows.spec.bucket_start``), and into the since-start
counter (once: not when the list is re-read while the state is rebuilt).

:meth:`InterleavingStore.advance` closes every complete bucket once, in event-time order (a
bucket is complete once the horizon is at or past its end), and feeds the closed bucket's wins
and losses to the sequential test of each pair (:mod:`streameval.interleave.detector`): so the
test, like the windows, depends on the events only, never on when ``advance`` is called.

The outcomes come with the list (computed when it is scored, team names capped there: see
:class:`~streameval.score.credit.TeamCap`). The window counts are also folded into the
windows' buckets (``windows.store.Bucket.interleaving``), which the window state changelog
persists; :meth:`InterleavingStore.load_bucket` takes them back after a restart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from streameval.config import EvaluationSettings, InterleavingSettings
from streameval.interleave.detector import Pair, PairTests
from streameval.snapshot import InterleavingRow, PairTestRow, Snapshot
from streameval.values import ScoredList
from streameval.windows.spec import WindowSpec, bucket_start, window_buckets
from streameval.windows.store import Bucket, add_sums, fold_outcomes


class InterleavingStore:
    """Windowed outcome counts per ordered pair, the since-start counter, and the tests."""

    def __init__(self, settings: InterleavingSettings, windows: Sequence[WindowSpec]) -> None:
        self._windows = tuple(windows)
        self._bucket_ms = windows[0].bucket_ms
        self._keep_ms = max(w.size_ms for w in windows)
        # bucket start -> pair -> [wins, losses, ties, no_click]
        self._buckets: dict[int, dict[Pair, list[int]]] = {}
        self._closed_through: int | None = None  # end of the last closed bucket
        self._outcomes: dict[tuple[str, str, str], int] = {}
        #: this instance's tests, fed its own closed buckets (a group's instances are fed the
        #: group's buckets instead: :mod:`streameval.group.feed`)
        self.local_tests = PairTests(settings.mixture_scale, settings.alpha)

    @classmethod
    def of(cls, settings: EvaluationSettings) -> InterleavingStore:
        """The store of the evaluation's interleaving settings and windows."""
        windows = [WindowSpec(w, settings.bucket) for w in settings.windows]
        return cls(settings.interleaving, windows)

    # --- ListConsumer -------------------------------------------------------------------------

    def add(self, scored: ScoredList) -> None:
        interleaved = scored.interleaved
        if interleaved is None or not interleaved.outcomes:
            return
        b = bucket_start(scored.timestamp, self._bucket_ms)
        counts = self._buckets.get(b)
        if counts is None:
            counts = self._buckets[b] = {}
        fold_outcomes(counts, interleaved.outcomes)
        if not interleaved.counted_before:
            for key in interleaved.outcomes:
                self._outcomes[key] = self._outcomes.get(key, 0) + 1

    def advance(self, horizon_ms: int) -> None:
        end = bucket_start(horizon_ms, self._bucket_ms)  # buckets before it are complete
        if self._closed_through is not None and end <= self._closed_through:
            return
        for b in sorted(self._buckets):
            if b >= end:
                break
            if self._closed_through is not None and b < self._closed_through:
                continue  # closed already (a list for it can no longer arrive)
            self.local_tests.close(b, self._buckets[b].items())
        self._closed_through = end
        for b in [b for b in self._buckets if b < end - self._keep_ms]:
            del self._buckets[b]

    # --- reading --------------------------------------------------------------------------------

    def rows(self, horizon_ms: int | None) -> tuple[InterleavingRow, ...]:
        """Every window's figures per ordered pair, as of ``horizon_ms`` (like the NDCG rows)."""
        if horizon_ms is None:
            return ()
        out: list[InterleavingRow] = []
        for spec in self._windows:
            totals: dict[Pair, list[int]] = {}
            for b in window_buckets(horizon_ms, spec.size_ms, spec.bucket_ms):
                add_sums(totals, self._buckets.get(b, {}))
            for (ranker, opponent), total in sorted(totals.items()):
                if total[0] + total[1] + total[2]:
                    row = InterleavingRow(spec.name, ranker, opponent, *total[:3])
                    out.append(row)
        return tuple(out)

    def outcomes_total(self) -> dict[tuple[str, str, str], int]:
        return dict(self._outcomes)

    def tests(self) -> tuple[PairTestRow, ...]:
        return self.local_tests.rows()

    def into_snapshot(self, snapshot: Snapshot, horizon_ms: int | None) -> Snapshot:
        """``snapshot`` with the interleaving rows, outcomes and tests as of ``horizon_ms``."""
        return replace(
            snapshot,
            interleaving=self.rows(horizon_ms),
            interleaving_outcomes=self.outcomes_total(),
            interleaving_tests=self.tests(),
        )

    def load_bucket(self, start: int, bucket: Bucket) -> None:
        """A bucket's counts read back from the window state changelog (DESIGN §6)."""
        counts = bucket.interleaving
        if not counts:
            return
        add_sums(self._buckets.setdefault(start, {}), counts)

    def reset(self) -> None:
        """Before the streams are re-read (a rebalance): drop the windows' buckets. The counter
        and the tests carry on; buckets they already took in are not taken in again."""
        self._buckets.clear()
