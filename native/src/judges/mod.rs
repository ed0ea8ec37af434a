//! The judge tracker (`streameval/judges/`, DESIGN §12, docs/judges.md) in Rust: the per-list
//! bookkeeping of `JudgeTracker` (the head/tail query classes through the Space-Saving sketch,
//! freshness and judged coverage per bucket of impression time, eviction) and its listener of
//! the judgment table (families, grade times, the pairs two families graded, agreement), over
//! the native judgment table (`crate::judgments`). The per-family judged scoring
//! (`JudgeTracker.family_sources`) stays in Python. Bound by `python_judges`; checked against the
//! Python tracker by `tests/unit/test_native_judges.py`.

pub mod agreement;
pub mod buckets;
pub mod families;
pub mod frequency;
pub mod listener;
pub mod tracker;
