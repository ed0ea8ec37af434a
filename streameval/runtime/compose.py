"""What the daemon evaluates: the pipeline and the consumers of its finalized lists, built from
the settings, and the full snapshot of them (the pipeline's, with the detectors' rows and the
group's interleaving tests merged in).

The regression detectors are one more consumer of finalized lists (DESIGN §9). With the state
topic they are group-wide: the lists of this instance's partitions are reduced to detector
buckets per partition (the collector), written to the state topic, and the detectors fed the
whole group's (the group feed, once the state topic is open). The interleaving tests (DESIGN
§10) go the same way: the collector also reduces the interleaved lists to outcome counts per
partition, and the group's feed the tests; so does the sample-ratio test (DESIGN §12), with
the lists per arm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from streameval.config import Settings
from streameval.detect import Detectors, detectors_for
from streameval.engine.coordinator import Coordinator
from streameval.engine.evaluator import FROM_SETTINGS, Evaluator
from streameval.errors import ConfigError
from streameval.events.decode import Invalid
from streameval.events.formats import Formats
from streameval.group.collector import PartitionCollector
from streameval.interleave.detector import PairTests
from streameval.log_limits import SecondsTimestampLog
from streameval.snapshot import Snapshot
from streameval.srm import SrmTest, arm_reader, srm_test_for
from streameval.values import IMPLICIT_DEBIASED


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The engine's evaluator and the group-wide parts the daemon adds to it."""

    evaluator: Evaluator
    #: with the state topic: this instance's lists reduced per partition (else None)
    collector: PartitionCollector | None
    #: with the state topic: the group's interleaving tests (else None)
    pair_tests: PairTests | None
    #: with the state topic: the group's sample-ratio test (else None: the evaluator's own)
    srm_test: SrmTest | None = None

    @property
    def pipeline(self) -> Coordinator:
        return self.evaluator.pipeline

    @property
    def detectors(self) -> Detectors | None:
        return self.evaluator.detectors

    def snapshot(self, consumer_lag: dict[tuple[str, int], int]) -> Snapshot:
        """The evaluator's snapshot, with the group's interleaving tests where there are."""
        snapshot = self.evaluator.snapshot(consumer_lag=consumer_lag)
        if self.pair_tests is not None:  # the group's tests, not this instance's partial ones
            snapshot = replace(snapshot, interleaving_tests=self.pair_tests.rows())
        if self.srm_test is not None:
            snapshot = replace(snapshot, srm=self.srm_test.row())
        return snapshot


def evaluation_for(
    settings: Settings, dead_letter: Callable[[bytes, Invalid, str, int], None]
) -> Evaluation:
    """Build the evaluator and the group-wide parts (a wrong mapping or schema file fails here)."""
    detectors = detectors_for(settings)
    collector: PartitionCollector | None = None
    pair_tests: PairTests | None = None
    srm_test: SrmTest | None = None
    if settings.kafka.state_topic:
        ev = settings.evaluation
        srm_test = srm_test_for(settings)
        if detectors is not None and IMPLICIT_DEBIASED in detectors.spec.relevance:
            # the state topic's detector buckets know judged and implicit only (so far)
            raise ConfigError(
                "detection.relevance: implicit_debiased is not detected through the state topic "
                'yet: leave it out, or set kafka.state_topic = ""'
            )
        collector = PartitionCollector(
            None if detectors is None else detectors.spec,
            bucket_ms=settings.evaluation.bucket,
            arm_of=None if srm_test is None else arm_reader(ev.segment_labels, ev.control),
        )
        il = settings.evaluation.interleaving
        pair_tests = PairTests(il.mixture_scale, il.alpha)
    formats = Formats(settings.input, settings.evaluation.max_record_bytes)
    formats.check()  # a wrong mapping or schema file fails at start
    evaluator = Evaluator(
        settings,
        detectors=detectors,
        feed=collector or detectors,
        # with the state topic the group's test runs on the group feed instead
        srm=FROM_SETTINGS if collector is None else None,
        dead_letter=dead_letter,
        persist=bool(settings.kafka.state_topic),
        decoder_for=formats.by_topic_source,
        format_of=formats.format_by_topic_source,
        on_seconds=SecondsTimestampLog(),
    )
    return Evaluation(evaluator, collector, pair_tests, srm_test)
