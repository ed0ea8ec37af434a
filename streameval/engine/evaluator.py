"""The evaluator: the engine and its consumers built from the settings, and the full snapshot.

Every driver (``replay``, ``demo``, the daemon) evaluates the same way: a :class:`Pipeline` whose
finalized lists reach the windows, interleaving (a
:class:`~streameval.engine.consumers.WindowedConsumer`) and the regression detectors (a
:class:`~streameval.engine.consumers.JudgedEarlyConsumer`), and one snapshot with all their
figures. :meth:`Evaluator.snapshot` is that snapshot: no driver merges the detectors back by hand.
"""

from __future__ import annotations

from collections.abc import Callable

from streameval.config import Settings
from streameval.detect import Detectors, detectors_for, with_detection
from streameval.engine.consumers import ListConsumer
from streameval.engine.coordinator import Coordinator
from streameval.engine.hooks import DeadLetter, DecoderFor, OnScored
from streameval.engine.interface import Engine
from streameval.engine.pipeline import Pipeline
from streameval.engine.select import FormatOf, build_engine
from streameval.interleave import InterleavingStore
from streameval.snapshot import Snapshot
from streameval.srm import SrmCounter, srm_counter_for


class _Unset:
    """The default of ``detectors``: those the settings configure."""


#: the default of ``Evaluator(detectors=...)``: the detectors the settings configure
FROM_SETTINGS = _Unset()


class Evaluator:
    """The pipeline, interleaving and the detectors of ``settings``.

    ``detectors``: the detectors, when the driver has built them already (the daemon does: its
    per-partition collector is made from their spec); else those the settings configure.
    ``feed``: what takes the finalized lists in the detectors' place (the daemon's collector,
    whose group-wide feed drives the detectors); by default the detectors themselves.
    ``format_of``: each source's ``[input]`` format, beside ``decoder_for`` (the native engine
    decodes by it: :mod:`.select`). The other options are the :class:`Pipeline`'s.
    ``srm``: the sample-ratio test's counter of this process's lists; by default the one the
    settings configure (the daemon with a state topic passes None: its collector counts per
    partition and the group's test runs on the group feed).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        detectors: Detectors | _Unset | None = FROM_SETTINGS,
        feed: ListConsumer | None = None,
        srm: SrmCounter | _Unset | None = FROM_SETTINGS,
        dead_letter: DeadLetter | None = None,
        on_scored: OnScored | None = None,
        persist: bool = False,
        decoder_for: DecoderFor | None = None,
        format_of: FormatOf | None = None,
        on_seconds: Callable[[int, str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.detectors = detectors_for(settings) if isinstance(detectors, _Unset) else detectors
        self.interleaving = InterleavingStore.of(settings.evaluation)
        consumer = feed if feed is not None else self.detectors
        self.srm = srm_counter_for(settings) if isinstance(srm, _Unset) else srm
        consumers: list[ListConsumer] = [] if consumer is None else [consumer]
        if self.srm is not None:
            consumers.append(self.srm)
        self.pipeline = build_engine(
            settings,
            format_of=format_of,
            dead_letter=dead_letter,
            on_scored=on_scored,
            consumers=consumers,
            windowed=(self.interleaving,),
            persist=persist,
            decoder_for=decoder_for,
            on_seconds=on_seconds,
            judges=settings.judges,
            propensity=settings.propensity,
        )

    def snapshot(self, *, consumer_lag: dict[tuple[str, int], int] | None = None) -> Snapshot:
        """The pipeline's snapshot (windows, counters, interleaving) with the detectors' rows
        and the sample-ratio test's."""
        snapshot = with_detection(self.pipeline.snapshot(consumer_lag=consumer_lag), self.detectors)
        return snapshot if self.srm is None else self.srm.into_snapshot(snapshot)


def _implements(pipeline: Pipeline, engine: Coordinator) -> tuple[Engine, Engine]:
    return pipeline, engine  # (checked by mypy: the Python engine implements the engine interface)
