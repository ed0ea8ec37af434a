"""A hand-built :class:`JudgesView` with every field set (shared by the export tests)."""

from __future__ import annotations

from streameval.snapshot import (
    AgreementRow,
    FreshnessRow,
    JudgesView,
    QueryClassCoverageRow,
)

JUDGES_VIEW = JudgesView(
    families=("human", "llm:gpt-4o"),
    agreement=(
        AgreementRow("1h", "human", "llm:gpt-4o", 120, 0.42),
        AgreementRow("all", "human", "llm:gpt-4o", 300, 0.71),
        AgreementRow("all", "human", "llm:tiny", 1, None),  # undefined: no alpha sample
    ),
    agreement_floor=0.667,
    agreement_min_pairs=50,
    newest_judgment_ms=1_700_000_000_000,
    max_age_ms=2_592_000_000,
    freshness=(FreshnessRow("5m", 40, 10), FreshnessRow("1h", 0, 0)),
    coverage_by_class=(
        QueryClassCoverageRow("5m", "head", 10, 4, 3.0),
        QueryClassCoverageRow("5m", "tail", 10, 2, 0.5),
    ),
    head_queries=100,
)
