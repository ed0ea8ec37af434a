"""The per-list work of the trust signals inside the engine (DESIGN §12), in one collaborator.

The :class:`~streameval.score.lists.ListScorer` scores a finalized list's two relevance sources,
implicit then judged. :class:`ListSignals` adds what the trust signals need of the same list,
before the windows fold it:

* ``implicit_debiased`` (``[propensity] enabled``, :mod:`streameval.propensity`): appended
  third, scored with the examination propensities as estimated so far, then the list is added
  to the estimator's table;
* ``judged:<family>`` per judge family once two families have graded (:mod:`streameval.judges`),
  appended after; and the judge bookkeeping each finalized list feeds (freshness, head/tail
  coverage), whose rows join the snapshot.

The consumers after the engine (windows, detectors, collector) read each source by name
(:func:`streameval.values.source_named`), so the order above is a convenience, not a contract.
"""

from __future__ import annotations

from streameval.config import EvaluationSettings, JudgesSettings, PropensitySettings
from streameval.join import OpenList
from streameval.join.judgments import JudgmentStore
from streameval.judges import JudgeTracker
from streameval.propensity import IMPLICIT_DEBIASED, DebiasedSource, with_propensity
from streameval.score.lists import ListScorer
from streameval.snapshot import Snapshot
from streameval.values import ScoredList
from streameval.windows.spec import WindowSpec


class ListSignals:
    __slots__ = ("debiased", "extra_sources", "judges")

    def __init__(
        self,
        settings: EvaluationSettings,
        judges: JudgesSettings | None,
        propensity: PropensitySettings | None,
        judgments: JudgmentStore,
        scorer: ListScorer,
    ) -> None:
        #: the third relevance source, implicit_debiased (None unless ``[propensity] enabled``)
        self.debiased = (
            DebiasedSource(settings, propensity) if propensity and propensity.enabled else None
        )
        #: the relevance sources scored here for every list (an evicted list counts in each)
        self.extra_sources: tuple[str, ...] = () if self.debiased is None else (IMPLICIT_DEBIASED,)
        #: judge families, their agreement, freshness, head/tail coverage
        self.judges = JudgeTracker(
            JudgesSettings() if judges is None else judges,
            judgments,
            scorer,
            [WindowSpec(w, settings.bucket) for w in settings.windows],
            settings.ks,
        )

    def score(self, lst: OpenList, scored: ScoredList) -> ScoredList:
        """``scored`` (implicit, judged) with the trust signals' sources appended."""
        debiased = self.debiased
        if debiased is not None:
            scored = scored._replace(sources=(*scored.sources, debiased.score(lst)))
        judges = self.judges
        if judges.active:  # two judge families or more: a judged source per family
            scored = judges.score(lst, scored)
        return scored

    def fold(self, lst: OpenList, scored: ScoredList, folded: bool) -> None:
        """A finalized list, scored; ``folded``: the windows take it (not a bucket restored
        from the state topic)."""
        self.judges.fold(lst, scored, folded)

    def advance(self, horizon_ms: int) -> None:
        """The evaluation horizon moved: the judge bookkeeping drops what left every window."""
        judges = self.judges
        if horizon_ms >= judges.evict_due:
            judges.evict(horizon_ms)

    def start_stream(self) -> None:
        """The streams are (re-)read from the last commit: the propensity estimate is rebuilt
        from the re-read, as the windows are (docs/propensity.md, limits)."""
        if self.debiased is not None:
            self.debiased.reset()

    def reset(self) -> None:
        """A rebalance: the judge bookkeeping of the stream starts again (judgments stay)."""
        self.judges.reset()

    def into_snapshot(self, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` with the propensity rows (``[propensity] enabled``)."""
        return snapshot if self.debiased is None else with_propensity(snapshot, self.debiased)
