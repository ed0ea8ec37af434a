//! The detectors' open buckets (`streameval/detect/stash.py`, `Stash`): per bucket of impression
//! time, segment and watched cutoff, the sufficient statistics of NDCG@k **per query** (count,
//! sum, sum of squares), until the horizon completes the bucket. The regression detectors take a
//! completed bucket whole (`Detectors.ingest`): computed here, their per-list work leaves the
//! interpreter, and what crosses into Python is one map per bucket, as large as the queries seen
//! in it, not one object per list.
//!
//! The same answers as the Python stash, bit for bit: a query's sums add each list's value in
//! the order the lists came (`t + x`, `tt + x * x`), segments and queries keep the order they
//! were first seen in (Python dicts keep insertion order, and the detectors' sums over segments
//! and queries run in that order), a bucket already closed counts its list as ignored.

use std::collections::BTreeMap;

use indexmap::IndexMap;

/// Per query: (count, sum, sum of squares) of NDCG@k in one bucket.
pub type Agg = (u64, f64, f64);
/// One bucket, segment and watched k: per query id, its sums (in first-seen order).
pub type PerQuery = IndexMap<String, Agg>;
/// One bucket: per segment (an id given by the caller, in first-seen order), one [`PerQuery`]
/// per watched k.
pub type BucketSums = IndexMap<u32, Vec<PerQuery>>;

/// The open buckets of one relevance source. Buckets before `closed` are closed.
#[derive(Debug, Clone)]
pub struct QuerySums {
    bucket_ms: i64,
    /// where each watched k sits in a list's tuple of NDCG values (one per cutoff of the spec)
    positions: Vec<usize>,
    pending: BTreeMap<i64, BucketSums>,
    closed: Option<i64>,
    /// lists handed for a bucket already closed (a re-read after a reset): not counted twice
    ignored: u64,
}

impl QuerySums {
    /// `bucket_ms` > 0; `positions`: the watched cutoffs' indexes into a list's NDCG values.
    pub fn new(bucket_ms: i64, positions: Vec<usize>) -> Self {
        assert!(bucket_ms > 0, "a bucket is at least 1 ms"); // (the settings' own rule)
        QuerySums {
            bucket_ms,
            positions,
            pending: BTreeMap::new(),
            closed: None,
            ignored: 0,
        }
    }

    pub fn ignored(&self) -> u64 {
        self.ignored
    }

    pub fn closed(&self) -> Option<i64> {
        self.closed
    }

    /// The buckets still open (started, not yet taken).
    pub fn open_buckets(&self) -> usize {
        self.pending.len()
    }

    /// One list: impression time `ts`, its segment, query, and NDCG per cutoff (`None`: no
    /// NDCG@k, e.g. no interaction with `no_relevance = "skip"`). A value at a watched position
    /// past the end of `ndcg` is read as `None`.
    pub fn add(&mut self, ts: i64, segment: u32, query_id: &str, ndcg: &[Option<f64>]) {
        let value = |i: usize| ndcg.get(i).copied().flatten();
        if let [only] = self.positions[..] {
            if value(only).is_none() {
                return; // (Python's one-k path returns before looking the bucket up)
            }
        }
        let b = ts - ts.rem_euclid(self.bucket_ms);
        if let Some(closed) = self.closed {
            if b < closed {
                self.ignored += 1;
                return;
            }
        }
        let per_k = per_k(&mut self.pending, b, segment, self.positions.len());
        for (per_query, &i) in per_k.iter_mut().zip(&self.positions) {
            if let Some(x) = value(i) {
                fold(per_query, query_id, x);
            }
        }
    }

    /// The buckets the horizon completed since the last call, oldest first (removed).
    pub fn take(&mut self, horizon_ms: i64) -> Vec<(i64, BucketSums)> {
        if let Some(closed) = self.closed {
            if horizon_ms < closed + self.bucket_ms {
                return Vec::new(); // no bucket completed since the last call (most calls)
            }
        }
        let end = horizon_ms - horizon_ms.rem_euclid(self.bucket_ms);
        self.closed = Some(end);
        let kept = self.pending.split_off(&end);
        std::mem::replace(&mut self.pending, kept)
            .into_iter()
            .collect()
    }

    /// Forget every open bucket (a re-read after a reset hands their lists again).
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// `Stash.closed = closed` (the detectors' state loaded, `Detectors.load`).
    pub fn set_closed(&mut self, closed: Option<i64>) {
        self.closed = closed;
    }

    /// Buckets before `point` are closed (in the state topic already: a restored progress,
    /// `PartitionCollector.assign`): `closed` moves up to `point`, never down, and the open
    /// buckets before it are dropped.
    pub fn close_before(&mut self, point: i64) {
        if self.closed.is_none_or(|closed| point > closed) {
            self.closed = Some(point);
            self.pending = self.pending.split_off(&point);
        }
    }

    /// `Stash.ignored += n` (a bucket handed whole for a closed bucket, `Detectors.ingest`).
    pub fn add_ignored(&mut self, n: u64) {
        self.ignored += n;
    }

    /// The number of watched cutoffs.
    pub fn watched(&self) -> usize {
        self.positions.len()
    }

    /// A whole bucket's sums of one segment and watched cutoff (the `j`-th) merged into bucket
    /// `b` (`Detectors.ingest`: `merge((per_k[j], per_query))`: the queries already there keep
    /// their place and add, the others follow in the order given). No check of `closed`: the
    /// caller's (as `Detectors.ingest`).
    pub fn merge(&mut self, b: i64, segment: u32, j: usize, per_query: &[(String, Agg)]) {
        let n = self.positions.len();
        let Some(into) = per_k(&mut self.pending, b, segment, n).get_mut(j) else {
            return; // (a cutoff not watched: the caller skips it)
        };
        for (query_id, (c, s, ss)) in per_query {
            match into.get_mut(query_id) {
                None => {
                    into.insert(query_id.clone(), (*c, *s, *ss));
                }
                Some(agg) => *agg = (agg.0 + c, agg.1 + s, agg.2 + ss),
            }
        }
    }
}

/// The sums per watched cutoff of `segment` in bucket `b` (`n` cutoffs), made if new.
fn per_k(
    pending: &mut BTreeMap<i64, BucketSums>,
    b: i64,
    segment: u32,
    n: usize,
) -> &mut Vec<PerQuery> {
    pending
        .entry(b)
        .or_default()
        .entry(segment)
        .or_insert_with(|| vec![PerQuery::new(); n])
}

/// One list's NDCG@k into its query's sums, as `stash._fold` does.
fn fold(per_query: &mut PerQuery, query_id: &str, x: f64) {
    match per_query.get_mut(query_id) {
        None => {
            per_query.insert(query_id.to_owned(), (1, x, x * x));
        }
        Some(agg) => {
            *agg = (agg.0 + 1, agg.1 + x, agg.2 + x * x);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: i64 = 10_000;

    fn sums(q: &QuerySums, b: i64, seg: u32, k: usize) -> Vec<(String, Agg)> {
        q.pending[&b][&seg][k]
            .iter()
            .map(|(q, a)| (q.clone(), *a))
            .collect()
    }

    #[test]
    fn a_query_sums_its_lists_in_order() {
        let mut q = QuerySums::new(B, vec![0]);
        for (ts, x) in [(1, 0.5), (2, 0.25), (9_999, 1.0)] {
            q.add(ts, 0, "q1", &[Some(x)]);
        }
        // count 3; sum 0.5 + 0.25 + 1.0; squares 0.25 + 0.0625 + 1.0, added in that order
        assert_eq!(
            sums(&q, 0, 0, 0),
            vec![("q1".to_owned(), (3, 1.75, 1.3125))]
        );
    }

    #[test]
    fn values_not_watched_or_absent_are_not_counted() {
        // watching the 2nd and 4th cutoffs of (1, 3, 5, 10)
        let mut q = QuerySums::new(B, vec![1, 3]);
        q.add(5, 7, "a", &[Some(0.1), Some(0.3), Some(0.5), None]);
        q.add(6, 7, "b", &[Some(0.1), None, Some(0.5), Some(0.9)]);
        assert_eq!(sums(&q, 0, 7, 0), vec![("a".to_owned(), (1, 0.3, 0.09))]);
        assert_eq!(
            sums(&q, 0, 7, 1),
            vec![("b".to_owned(), (1, 0.9, 0.9 * 0.9))]
        );
    }

    #[test]
    fn one_watched_k_without_a_value_opens_no_bucket() {
        let mut q = QuerySums::new(B, vec![0]);
        q.add(5, 0, "a", &[None]);
        assert_eq!(q.open_buckets(), 0);
        // with two watched ks, the bucket and segment open even when both are absent (Python)
        let mut q = QuerySums::new(B, vec![0, 1]);
        q.add(5, 0, "a", &[None, None]);
        assert_eq!(q.open_buckets(), 1);
        assert!(q.pending[&0][&0].iter().all(IndexMap::is_empty));
    }

    #[test]
    fn take_closes_complete_buckets_oldest_first_and_ignores_late_lists() {
        let mut q = QuerySums::new(B, vec![0]);
        q.add(25_000, 1, "x", &[Some(1.0)]);
        q.add(5_000, 1, "x", &[Some(0.0)]);
        q.add(15_000, 2, "y", &[Some(0.5)]);
        // a bucket is complete once the horizon is at or past its end
        assert!(q.take(9_999).is_empty());
        assert_eq!(q.closed(), Some(0));
        assert!(q.take(10_000).iter().map(|(b, _)| *b).eq([0]));
        assert_eq!(q.closed(), Some(10_000));
        assert!(q.take(19_999).is_empty());
        assert!(q.take(20_000).iter().map(|(b, _)| *b).eq([10_000]));
        // a list of a closed bucket is ignored, not counted twice
        q.add(12_000, 2, "y", &[Some(0.5)]);
        assert_eq!(q.ignored(), 1);
        let rest = q.take(40_000);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].0, 20_000);
        assert_eq!(q.closed(), Some(40_000));
    }

    #[test]
    fn segments_and_queries_keep_first_seen_order() {
        let mut q = QuerySums::new(B, vec![0]);
        for (seg, query) in [(3, "z"), (1, "a"), (3, "b"), (3, "z"), (2, "m")] {
            q.add(1, seg, query, &[Some(0.5)]);
        }
        let bucket = &q.pending[&0];
        assert!(bucket.keys().copied().eq([3, 1, 2]));
        assert!(bucket[&3][0].keys().map(String::as_str).eq(["z", "b"]));
        assert_eq!(bucket[&3][0]["z"].0, 2);
    }

    #[test]
    fn merge_adds_to_the_queries_there_and_appends_the_others() {
        let mut q = QuerySums::new(B, vec![0, 1]);
        q.add(1, 4, "a", &[Some(0.5), None]);
        q.merge(
            0,
            4,
            0,
            &[
                ("b".to_owned(), (2, 1.0, 0.5)),
                ("a".to_owned(), (1, 0.25, 0.0625)),
            ],
        );
        // "a" stays first, its sums added (0.5 + 0.25; 0.25 + 0.0625); "b" follows
        assert_eq!(
            sums(&q, 0, 4, 0),
            vec![
                ("a".to_owned(), (2, 0.75, 0.3125)),
                ("b".to_owned(), (2, 1.0, 0.5))
            ]
        );
        // a new bucket and segment open with every watched k
        q.merge(B, 9, 1, &[("c".to_owned(), (1, 1.0, 1.0))]);
        assert!(q.pending[&B][&9][0].is_empty());
        assert_eq!(sums(&q, B, 9, 1), vec![("c".to_owned(), (1, 1.0, 1.0))]);
        q.set_closed(Some(2 * B));
        q.add_ignored(3);
        assert_eq!((q.closed(), q.ignored()), (Some(2 * B), 3));
    }

    #[test]
    fn negative_times_fall_in_the_bucket_below() {
        let mut q = QuerySums::new(B, vec![0]);
        q.add(-1, 0, "a", &[Some(1.0)]);
        // Python's ts - ts % bucket for ts = -1 is -10_000 (a floored modulo)
        assert!(q.pending.contains_key(&-10_000));
    }
}
