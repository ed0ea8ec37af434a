//! A finalized list's fold inside the native engine's core (issue 32, docs/native.md "The fold
//! in the core"): what `streameval/engine/coordinator.py` `Coordinator._fold_scored` does after
//! scoring, on the native stages: the judge tracker's fold (`JudgeTracker.fold`), the window
//! buckets (`WindowStore.add`), the source's unpersisted bucket for the state topic
//! (`SourceBuckets.add`), the since-start totals (`Totals.count_list`); and the same state's
//! eviction (`WindowStore.evict`, then the tracker's, as `Coordinator._advance` orders them),
//! reset and restore.

use crate::judges::tracker::{Finalized, JudgeTracker};
use crate::judgments::JudgmentStore;
use crate::scored::{ScoredList, EVICTED, JUDGED};
use crate::windows::source_buckets::SourceBuckets;
use crate::windows::spec::WindowSpec;
use crate::windows::store::WindowStore;
use crate::windows::totals::Totals;

/// The per-list state the core folds into.
#[derive(Debug)]
pub struct CoreFold {
    specs: Vec<WindowSpec>,
    bucket_ms: i64,
    persist: bool,
    pub store: WindowStore,
    /// since start: outlive a reset
    pub totals: Totals,
    /// the buckets not in the state topic yet (`None`: no state topic)
    pub unpersisted: Option<SourceBuckets>,
    pub tracker: JudgeTracker,
    /// the relevance sources an evicted list counts `evicted` in
    sources: Vec<String>,
}

impl CoreFold {
    pub fn new(
        specs: Vec<WindowSpec>,
        bucket_ms: i64,
        persist: bool,
        tracker: JudgeTracker,
        sources: Vec<String>,
    ) -> Result<Self, String> {
        let store = WindowStore::new(specs.clone())?;
        Ok(CoreFold {
            specs,
            bucket_ms,
            persist,
            store,
            totals: Totals::new(),
            unpersisted: persist.then(|| SourceBuckets::new(bucket_ms)),
            tracker,
            sources,
        })
    }

    /// A finalized list, scored: `doc_ids` its documents, `counted_before` read before (a
    /// re-read: not counted again), `folded` the windows take it (not a bucket restored from
    /// the state topic). As `Coordinator._fold_scored` (the judge tracker first).
    pub fn fold<D: AsRef<str>>(
        &mut self,
        judgments: &JudgmentStore,
        scored: &ScoredList,
        doc_ids: &[D],
        counted_before: bool,
        folded: bool,
    ) {
        let coverage = scored
            .sources
            .iter()
            .find(|s| s.relevance == JUDGED)
            .and_then(|s| s.coverage.as_deref());
        let list = Finalized {
            query_id: &scored.query_id,
            timestamp: scored.timestamp,
            doc_ids,
            counted_before,
            coverage,
            windowed: folded,
        };
        self.tracker.fold(judgments, &list);
        if folded {
            self.store.add(scored);
            if let Some(unpersisted) = &mut self.unpersisted {
                unpersisted.add(&scored.source, scored);
            }
        }
        if !counted_before {
            self.totals.count_list(scored);
        }
    }

    /// An open list evicted over the cap: `evicted` in every relevance source.
    pub fn count_evicted(&mut self) {
        for relevance in &self.sources {
            self.totals.count_outcome(relevance, EVICTED);
        }
    }

    /// The horizon moved: the window buckets no window covers go, then the tracker's (once the
    /// horizon reaches its `evict_due`, as `ListSignals.advance`).
    pub fn evict(&mut self, horizon_ms: i64) {
        self.store.evict(horizon_ms);
        if self
            .tracker
            .evict_due()
            .is_some_and(|due| horizon_ms >= due)
        {
            self.tracker.evict(horizon_ms);
        }
    }

    /// A new stream (`Pipeline.reset`): the windows, the unpersisted buckets and the tracker's
    /// buckets go; the totals stay.
    pub fn restart(&mut self) {
        self.store = WindowStore::new(self.specs.clone()).expect("valid at construction");
        self.unpersisted = self.persist.then(|| SourceBuckets::new(self.bucket_ms));
        self.tracker.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judges::tracker::Settings;
    use crate::scored::{SourceScore, IMPLICIT, SCORED};

    const MIN: i64 = 60_000;

    fn fold(persist: bool) -> CoreFold {
        let tracker = JudgeTracker::new(Settings {
            families: Vec::new(),
            max_families: 8,
            agreement_windows: Vec::new(),
            max_age: 86_400_000,
            head_queries: 10,
            windows: vec![("5m".to_owned(), 5 * MIN)],
            bucket_ms: MIN,
            ks: vec![1],
        });
        let specs = vec![WindowSpec::new(5 * MIN, MIN).unwrap()];
        let sources = vec![IMPLICIT.to_owned(), JUDGED.to_owned()];
        CoreFold::new(specs, MIN, persist, tracker, sources).unwrap()
    }

    fn source(relevance: &str, ndcg: f64, coverage: Option<f64>) -> SourceScore {
        SourceScore {
            relevance: relevance.to_owned(),
            outcome: SCORED.to_owned(),
            ks: vec![1],
            ndcg: vec![Some(ndcg)],
            dcg: vec![ndcg],
            idcg: vec![1.0],
            coverage: coverage.map(|c| vec![c]),
        }
    }

    fn list(ts: i64, from: &str) -> ScoredList {
        ScoredList {
            request_id: "r".to_owned(),
            query_id: "q".to_owned(),
            timestamp: ts,
            labels: Vec::new(),
            segment: Vec::new(),
            sources: vec![source_named(IMPLICIT, 0.5), source(JUDGED, 1.0, Some(1.0))],
            clicked: true,
            first_click_rank: Some(1),
            interacted: true,
            interleaved: None,
            source: from.to_owned(),
        }
    }

    fn source_named(relevance: &str, ndcg: f64) -> SourceScore {
        source(relevance, ndcg, None)
    }

    fn lists_scored(f: &CoreFold, relevance: &str) -> u64 {
        f.totals
            .lists_total()
            .iter()
            .find(|((r, o), _)| r == relevance && o == SCORED)
            .map_or(0, |(_, n)| *n)
    }

    #[test]
    fn a_list_goes_to_the_windows_the_totals_the_state_topic_and_the_tracker() {
        let mut f = fold(true);
        let table = JudgmentStore::new();
        f.fold(&table, &list(MIN, "p0"), &["a"], false, true);
        assert_eq!(f.store.starts().collect::<Vec<_>>(), vec![MIN]);
        assert_eq!(lists_scored(&f, IMPLICIT), 1);
        let complete = f.unpersisted.as_ref().unwrap().complete(2 * MIN);
        assert_eq!(complete.len(), 1);
        assert_eq!((complete[0].0, complete[0].1), ("p0", MIN));
        // the tracker counted one judged doc in the window of the list
        let view = f.tracker.view(2 * MIN);
        assert_eq!(view[0].figures.judged_docs, 1);
        assert_eq!(f.tracker.evict_due(), Some(7 * MIN));
    }

    #[test]
    fn restored_and_re_read_lists_are_not_folded_twice() {
        let mut f = fold(true);
        let table = JudgmentStore::new();
        // a list of a bucket loaded from the state topic: counted, not in the windows
        f.fold(&table, &list(MIN, "p0"), &["a"], false, false);
        assert_eq!(f.store.starts().count(), 0);
        assert!(f
            .unpersisted
            .as_ref()
            .unwrap()
            .complete(i64::MAX)
            .is_empty());
        assert_eq!(lists_scored(&f, JUDGED), 1);
        assert_eq!(f.tracker.view(2 * MIN)[0].figures.judged_docs, 0);
        // a list re-read (counted before): in the windows, not in the totals again
        f.fold(&table, &list(MIN, "p0"), &["a"], true, true);
        assert_eq!(f.store.starts().count(), 1);
        assert_eq!(lists_scored(&f, JUDGED), 1);
        // no state topic: nothing kept for it
        let mut f = fold(false);
        f.fold(&table, &list(MIN, "p0"), &["a"], false, true);
        assert!(f.unpersisted.is_none());
    }

    #[test]
    fn evictions_counted_and_buckets_evicted_then_reset() {
        let mut f = fold(false);
        let table = JudgmentStore::new();
        f.count_evicted();
        let total = f.totals.lists_total();
        assert_eq!(total.len(), 2);
        assert!(total.iter().all(|((_, o), n)| o == EVICTED && *n == 1));
        f.fold(&table, &list(MIN, "p0"), &["a"], false, true);
        let due = f.store.next_eviction().unwrap();
        assert_eq!(due, 7 * MIN);
        f.evict(due - 1);
        assert_eq!(f.store.starts().count(), 1);
        assert_eq!(f.tracker.evict_due(), Some(due));
        f.evict(due);
        assert_eq!(f.store.starts().count(), 0);
        assert_eq!(f.tracker.evict_due(), None, "the tracker's bucket went too");
        f.fold(&table, &list(10 * MIN, "p0"), &["a"], false, true);
        f.restart();
        assert_eq!(f.store.starts().count(), 0);
        assert_eq!(f.tracker.evict_due(), None);
        assert_eq!(lists_scored(&f, IMPLICIT), 2, "the totals outlive a reset");
    }
}
