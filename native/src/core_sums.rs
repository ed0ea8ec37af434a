//! The detectors' per-query sums owned by the native engine's core (docs/native.md "Detector
//! sums in the core"): one [`QuerySums`] per relevance source a consumer sums (`FedBySums` in
//! `streameval/engine/consumers.py`: the regression detectors' `Stash`es), fed by the core
//! itself when it folds a finalized list (its implicit NDCG@k, and its judged one when the early
//! pass did not take it) and when the early judged pass takes a list (its judged NDCG@k), in
//! the order the Python calls (`Detectors.add_judged`, then `Detectors.add`) would make them,
//! so that the sums are the Python stash's bit for bit. Beside them, [`LISTS`]: every finalized
//! list counted per bucket and segment (the sample-ratio counter's `SrmCounter.add`, which maps
//! segments to arms when it takes a bucket). The segments are interned here, in the order first
//! seen (the sums key them by that number).

use crate::hash::Map;

use crate::query_sums::QuerySums;
use crate::scored::{IMPLICIT, JUDGED};

/// The name of the lists counted per bucket and segment: a [`QuerySums`] of one value, 0.0,
/// under the query [`ANY_QUERY`] (its count is the lists').
pub const LISTS: &str = "lists";
pub const ANY_QUERY: &str = "";

/// A segment's label values.
pub type Labels = Box<[Box<str>]>;

#[derive(Debug, Default)]
pub struct CoreSums {
    pub implicit: Option<QuerySums>,
    pub judged: Option<QuerySums>,
    pub lists: Option<QuerySums>,
    segments: Vec<Labels>,
    ids: Map<Labels, u32>,
    /// the core adds each list itself and builds no `ScoredList` (nobody else reads one: the
    /// engine's predicate, `CoreFolds._sums_inline`)
    pub inline: bool,
}

impl CoreSums {
    /// The sums of `relevance` (None: not summed here).
    pub fn of(&mut self, relevance: &str) -> Option<&mut QuerySums> {
        match relevance {
            IMPLICIT => self.implicit.as_mut(),
            JUDGED => self.judged.as_mut(),
            LISTS => self.lists.as_mut(),
            _ => None,
        }
    }

    /// Sum `relevance` here: its buckets of `bucket_ms`, the watched cutoffs at `positions`.
    pub fn watch(&mut self, relevance: &str, bucket_ms: i64, positions: Vec<usize>) -> bool {
        let sums = Some(QuerySums::new(bucket_ms, positions));
        match relevance {
            IMPLICIT => self.implicit = sums,
            JUDGED => self.judged = sums,
            LISTS => self.lists = sums,
            _ => return false,
        }
        true
    }

    /// The number the sums key segment `labels` by (given in first-seen order).
    pub fn segment_id<S: AsRef<str>>(&mut self, labels: &[S]) -> u32 {
        let key: Labels = labels.iter().map(|s| s.as_ref().into()).collect();
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = u32::try_from(self.segments.len()).expect("fewer than 2^32 segments");
        self.segments.push(key.clone());
        self.ids.insert(key, id);
        id
    }

    /// The labels of segment `id`.
    pub fn segment(&self, id: u32) -> &[Box<str>] {
        &self.segments[id as usize]
    }

    /// A finalized list folded in the core: first its judged NDCG (`judged`: when the early
    /// pass did not take it, `NativePipeline._fold`'s `hand_scored`), then its implicit one
    /// (`Detectors.add`), then the list counted (`SrmCounter.add`).
    pub fn finalized<S: AsRef<str>>(
        &mut self,
        ts: i64,
        segment: &[S],
        query_id: &str,
        implicit: &[Option<f64>],
        judged: Option<&[Option<f64>]>,
    ) {
        if self.implicit.is_none()
            && self.lists.is_none()
            && (judged.is_none() || self.judged.is_none())
        {
            return;
        }
        let id = self.segment_id(segment);
        if let (Some(sums), Some(ndcg)) = (self.judged.as_mut(), judged) {
            sums.add(ts, id, query_id, ndcg);
        }
        if let Some(sums) = self.implicit.as_mut() {
            sums.add(ts, id, query_id, implicit);
        }
        if let Some(lists) = self.lists.as_mut() {
            lists.add(ts, id, ANY_QUERY, &[Some(0.0)]);
        }
    }

    /// A list the early judged pass took: its judged NDCG (`Detectors.add_judged`).
    pub fn passed<S: AsRef<str>>(
        &mut self,
        ts: i64,
        segment: &[S],
        query_id: &str,
        judged: &[Option<f64>],
    ) {
        if self.judged.is_none() {
            return;
        }
        let id = self.segment_id(segment);
        if let Some(sums) = self.judged.as_mut() {
            sums.add(ts, id, query_id, judged);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: i64 = 60_000;

    fn sums() -> CoreSums {
        let mut s = CoreSums::default();
        assert!(s.watch(IMPLICIT, B, vec![0]));
        assert!(s.watch(JUDGED, B, vec![0]));
        assert!(!s.watch("implicit_debiased", B, vec![0]));
        assert!(s.watch(LISTS, B, vec![0]));
        s
    }

    #[test]
    fn a_finalized_list_adds_its_judged_score_only_when_not_passed() {
        let mut s = sums();
        s.passed(1, &["web"], "q", &[Some(0.25)]);
        s.finalized(2, &["web"], "q", &[Some(0.5)], None);
        s.finalized(3, &["web"], "q", &[Some(1.0)], Some(&[Some(0.75)]));
        let judged = s.judged.as_mut().unwrap().take(B);
        let implicit = s.implicit.as_mut().unwrap().take(B);
        // judged: 0.25 (passed), then 0.75 (finalized unpassed); implicit: 0.5 then 1.0
        assert_eq!(judged[0].1[&0][0]["q"], (2, 1.0, 0.0625 + 0.5625));
        assert_eq!(implicit[0].1[&0][0]["q"], (2, 1.5, 0.25 + 1.0));
        // two lists finalized (the passed one is not counted until finalized)
        let lists = s.lists.as_mut().unwrap().take(B);
        assert_eq!(lists[0].1[&0][0][ANY_QUERY], (2, 0.0, 0.0));
    }

    #[test]
    fn segments_are_numbered_in_first_seen_order() {
        let mut s = sums();
        s.finalized(1, &["b"], "q", &[Some(0.5)], None);
        s.finalized(1, &["a"], "q", &[Some(0.5)], None);
        assert_eq!(s.segment_id(&["b"]), 0);
        assert_eq!(&*s.segment(1)[0], "a");
        let taken = s.implicit.as_mut().unwrap().take(B);
        assert!(taken[0].1.keys().copied().eq([0, 1]));
    }

    #[test]
    fn nothing_is_summed_for_a_source_not_watched() {
        let mut s = CoreSums::default();
        s.watch(JUDGED, B, vec![0]);
        s.finalized(1, &["a"], "q", &[Some(0.5)], None);
        assert!(s.of(IMPLICIT).is_none());
        assert!(s.segments.is_empty()); // (nothing added: no segment interned)
        assert_eq!(s.of(JUDGED).unwrap().open_buckets(), 0);
    }
}
