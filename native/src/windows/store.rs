//! Runtime state of the event-time windows, sufficient statistics in fixed buckets:
//! `windows/store.py` (`Bucket`, `WindowStore`) and the rows a snapshot reads of them
//! (`snapshot.NdcgRow`, `EngagementRow`, `Moments`).
//!
//! Every float is added in the order Python adds it (buckets in `window_buckets` order, a
//! bucket's entries in insertion order), so the sums are Python's to the bit. Counts are held as
//! `f64` as Python's lists hold them, exact below 2^53: a bucket decoded from the state topic may
//! carry any finite number where a count goes, and Python truncates it with `int()` only in rows.

use std::collections::BTreeMap;

use crate::scored::{PairOutcome, ScoredList, Segment};
use crate::windows::lookup::AsLookup;
use crate::windows::ordered::OrderedMap;
use crate::windows::spec::{bucket_start, window_buckets, WindowSpec};

/// (relevance, segment, ks): the accumulators of every cutoff of one source in one segment.
pub type SourceKey = (String, Segment, Vec<i64>);
/// (relevance, segment, k): one row.
pub type RowKey = (String, Segment, i64);

/// One bucket's sufficient statistics (`store.Bucket`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bucket {
    /// per (relevance, segment, ks): `[count, sum, sum of squares]` for each k in turn
    pub ndcg: OrderedMap<SourceKey, Vec<f64>>,
    pub coverage: OrderedMap<SourceKey, Vec<f64>>,
    /// per segment: lists, clicked lists, reciprocal-rank sum, its sum of squares,
    /// zero-interaction lists
    pub engagement: OrderedMap<Segment, [f64; 5]>,
    /// per ordered pair (ranker, opponent): wins, losses, ties, no_click
    pub interleaving: OrderedMap<(String, String), [u64; 4]>,
}

impl Bucket {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one finalized list (`Bucket.fold`).
    pub fn fold(&mut self, scored: &ScoredList) {
        let seg = &scored.segment;
        for source in &scored.sources {
            let key = (
                source.relevance.as_str(),
                seg.as_slice(),
                source.ks.as_slice(),
            );
            fold_values(&mut self.ndcg, key, source.ndcg.iter().copied());
            if let Some(coverage) = &source.coverage {
                fold_values(&mut self.coverage, key, coverage.iter().map(|&v| Some(v)));
            }
        }
        let eng = self
            .engagement
            .entry_or_insert_with(seg.as_slice(), || [0.0, 0.0, 0.0, 0.0, 0.0]);
        eng[0] += 1.0;
        if scored.clicked {
            eng[1] += 1.0;
        }
        let rr = match scored.first_click_rank {
            Some(rank) if rank != 0 => 1.0 / rank as f64,
            _ => 0.0,
        };
        eng[2] += rr;
        eng[3] += rr * rr;
        if !scored.interacted {
            eng[4] += 1.0;
        }
        if let Some(interleaved) = &scored.interleaved {
            fold_outcomes(&mut self.interleaving, &interleaved.outcomes);
        }
    }

    /// Add another bucket's statistics (`Bucket.merge`: one loaded from the state topic).
    pub fn merge(&mut self, other: &Bucket) {
        add_sums(&mut self.ndcg, &other.ndcg);
        add_sums(&mut self.coverage, &other.coverage);
        add_sums(&mut self.engagement, &other.engagement);
        add_sums(&mut self.interleaving, &other.interleaving);
    }
}

/// Count one list's interleaving outcomes, per ordered pair (`store.fold_outcomes`).
pub fn fold_outcomes(
    table: &mut OrderedMap<(String, String), [u64; 4]>,
    outcomes: &[(String, String, PairOutcome)],
) {
    for (ranker, opponent, outcome) in outcomes {
        let key = (ranker.as_str(), opponent.as_str());
        table.entry_or_insert_with(key, || [0; 4])[*outcome as usize] += 1;
    }
}

/// Accumulators added position by position (`store.add_sums`).
pub trait Sums: Clone {
    fn add(&mut self, other: &Self);
}

impl Sums for Vec<f64> {
    fn add(&mut self, other: &Self) {
        for (total, v) in self.iter_mut().zip(other) {
            *total += v;
        }
    }
}

impl<const N: usize> Sums for [f64; N] {
    fn add(&mut self, other: &Self) {
        for (total, v) in self.iter_mut().zip(other) {
            *total += v;
        }
    }
}

impl<const N: usize> Sums for [u64; N] {
    fn add(&mut self, other: &Self) {
        for (total, v) in self.iter_mut().zip(other) {
            *total = total.saturating_add(*v);
        }
    }
}

/// Add another table's accumulators into `table`, keys new to it last (`store.add_sums`).
pub fn add_sums<K: AsLookup + Clone, S: Sums>(
    table: &mut OrderedMap<K, S>,
    other: &OrderedMap<K, S>,
) {
    for (key, acc) in other.iter() {
        match table.get_mut(&key.view()) {
            Some(total) => total.add(acc),
            None => table.insert(key.clone(), acc.clone()),
        }
    }
}

/// Add one value per cutoff (`None`: no value at that k) to the accumulators of `key`; the
/// accumulators are made on the first value (`store._fold`).
fn fold_values(
    table: &mut OrderedMap<SourceKey, Vec<f64>>,
    key: (&str, &[String], &[i64]),
    values: impl ExactSizeIterator<Item = Option<f64>> + Clone,
) {
    if values.clone().all(|v| v.is_none()) {
        return; // no value: no accumulators made
    }
    let len = values.len();
    // `[0, 0.0, 0.0] * len`, or the accumulators already there
    let acc = table.entry_or_insert_with(key, || vec![0.0; 3 * len]);
    for (i, value) in values.enumerate() {
        if let Some(value) = value {
            acc[3 * i] += 1.0;
            acc[3 * i + 1] += value;
            acc[3 * i + 2] += value * value;
        }
    }
}

/// Count, sum and sum of squares of a sample (`snapshot.Moments`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    pub n: i64,
    pub total: f64,
    pub total_sq: f64,
}

/// NDCG@k over one window for one relevance source and segment (`snapshot.NdcgRow`).
#[derive(Clone, Debug, PartialEq)]
pub struct NdcgRow {
    pub window: String,
    pub relevance: String,
    pub segment: Segment,
    pub k: i64,
    pub ndcg: Moments,
    pub coverage: Option<Moments>,
}

/// Click figures over one window and segment (`snapshot.EngagementRow`).
#[derive(Clone, Debug, PartialEq)]
pub struct EngagementRow {
    pub window: String,
    pub segment: Segment,
    pub lists: i64,
    pub clicked_lists: i64,
    pub reciprocal_rank: Moments,
    pub zero_click_lists: i64,
}

/// Python's `int()` of a float count (truncation; saturating where Python would be exact).
fn int(x: f64) -> i64 {
    x as i64
}

/// Add a bucket's accumulators to the window's, per (relevance, segment, k) (`store._merge`).
fn merge_into(into: &mut OrderedMap<RowKey, [f64; 3]>, table: &OrderedMap<SourceKey, Vec<f64>>) {
    for ((rel, seg, ks), acc) in table.iter() {
        for (i, &k) in ks.iter().enumerate() {
            let n = acc[3 * i];
            if n != 0.0 {
                let total = into
                    .entry_or_insert_with((rel.as_str(), seg.as_slice(), k), || [0.0, 0.0, 0.0]);
                total[0] += n;
                total[1] += acc[3 * i + 1];
                total[2] += acc[3 * i + 2];
            }
        }
    }
}

/// Buckets of sufficient statistics, per (relevance, segment, k) and per segment
/// (`store.WindowStore`).
#[derive(Clone, Debug)]
pub struct WindowStore {
    windows: Vec<WindowSpec>,
    bucket_ms: i64,
    longest_ms: i64,
    buckets: BTreeMap<i64, Bucket>,
}

impl WindowStore {
    /// The store of `windows`, or Python's `ValueError` message.
    pub fn new(windows: Vec<WindowSpec>) -> Result<Self, String> {
        let Some(first) = windows.first() else {
            return Err("at least one window is needed".into());
        };
        let bucket_ms = first.bucket_ms;
        if windows.iter().any(|w| w.bucket_ms != bucket_ms) {
            return Err("all windows must share one bucket size".into());
        }
        let longest_ms = windows.iter().map(|w| w.size_ms).max().unwrap_or(0);
        Ok(Self {
            windows,
            bucket_ms,
            longest_ms,
            buckets: BTreeMap::new(),
        })
    }

    pub fn windows(&self) -> &[WindowSpec] {
        &self.windows
    }

    pub fn bucket_ms(&self) -> i64 {
        self.bucket_ms
    }

    /// Fold one finalized list into the bucket of its impression time.
    pub fn add(&mut self, scored: &ScoredList) {
        let start = bucket_start(scored.timestamp, self.bucket_ms);
        self.buckets.entry(start).or_default().fold(scored);
    }

    /// Add a bucket's statistics (loaded from the state topic) to the bucket at `start`.
    pub fn merge(&mut self, start: i64, bucket: &Bucket) {
        self.buckets.entry(start).or_default().merge(bucket);
    }

    /// The bucket at `start`, if any.
    pub fn bucket(&self, start: i64) -> Option<&Bucket> {
        self.buckets.get(&start)
    }

    /// The starts of the buckets held, oldest first.
    pub fn starts(&self) -> impl Iterator<Item = i64> + '_ {
        self.buckets.keys().copied()
    }

    /// Drop buckets no window can cover any more as of `horizon_ms`.
    pub fn evict(&mut self, horizon_ms: i64) {
        let oldest = bucket_start(horizon_ms, self.bucket_ms).saturating_sub(self.longest_ms);
        match self.buckets.first_key_value() {
            Some((&first, _)) if first < oldest => {
                self.buckets = self.buckets.split_off(&oldest);
            }
            _ => {}
        }
    }

    /// The horizon at which [`Self::evict`] next has a bucket to drop (`None`: no bucket).
    pub fn next_eviction(&self) -> Option<i64> {
        let (&oldest, _) = self.buckets.first_key_value()?;
        let after = oldest.saturating_add(self.longest_ms);
        Some(bucket_start(after, self.bucket_ms).saturating_add(self.bucket_ms))
    }

    /// The windows' figures as of `horizon_ms` (nothing before the first horizon), in Python's
    /// order: per window as configured, the rows sorted by key.
    pub fn rows(&self, horizon_ms: Option<i64>) -> (Vec<NdcgRow>, Vec<EngagementRow>) {
        let mut ndcg_rows = Vec::new();
        let mut eng_rows = Vec::new();
        let Some(horizon_ms) = horizon_ms else {
            return (ndcg_rows, eng_rows);
        };
        for spec in &self.windows {
            let name = spec.name();
            let mut ndcg = OrderedMap::new();
            let mut cov = OrderedMap::new();
            let mut eng: OrderedMap<Segment, [f64; 5]> = OrderedMap::new();
            for start in window_buckets(horizon_ms, spec.size_ms, spec.bucket_ms) {
                let Some(b) = self.buckets.get(&start) else {
                    continue;
                };
                merge_into(&mut ndcg, &b.ndcg);
                merge_into(&mut cov, &b.coverage);
                for (seg, e) in b.engagement.iter() {
                    eng.entry_or_insert_with(seg.as_slice(), || [0.0; 5]).add(e);
                }
            }
            let mut keys: Vec<&RowKey> = ndcg.iter().chain(cov.iter()).map(|(k, _)| k).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let (rel, seg, k) = key;
                let moments = |a: &[f64; 3]| Moments {
                    n: int(a[0]),
                    total: a[1],
                    total_sq: a[2],
                };
                ndcg_rows.push(NdcgRow {
                    window: name.clone(),
                    relevance: rel.clone(),
                    segment: seg.clone(),
                    k: *k,
                    ndcg: ndcg.get(&key.view()).map(moments).unwrap_or_default(),
                    coverage: cov.get(&key.view()).map(moments),
                });
            }
            let mut eng = eng.into_entries();
            eng.sort_by(|a, b| a.0.cmp(&b.0));
            for (seg, e) in eng {
                eng_rows.push(EngagementRow {
                    window: name.clone(),
                    segment: seg,
                    lists: int(e[0]),
                    clicked_lists: int(e[1]),
                    reciprocal_rank: Moments {
                        n: int(e[0]),
                        total: e[2],
                        total_sq: e[3],
                    },
                    zero_click_lists: int(e[4]),
                });
            }
        }
        (ndcg_rows, eng_rows)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scored::{Interleaved, SourceScore};

    pub(crate) fn source(
        relevance: &str,
        ks: &[i64],
        ndcg: &[Option<f64>],
        coverage: Option<&[f64]>,
    ) -> SourceScore {
        SourceScore {
            relevance: relevance.into(),
            outcome: "scored".into(),
            ks: ks.to_vec(),
            ndcg: ndcg.to_vec(),
            dcg: vec![0.0; ks.len()],
            idcg: vec![0.0; ks.len()],
            coverage: coverage.map(<[f64]>::to_vec),
        }
    }

    pub(crate) fn list(ts: i64, segment: &[&str], sources: Vec<SourceScore>) -> ScoredList {
        ScoredList {
            request_id: "r".into(),
            query_id: "q".into(),
            timestamp: ts,
            labels: vec![],
            segment: segment.iter().map(|s| s.to_string()).collect(),
            sources,
            clicked: false,
            first_click_rank: None,
            interacted: false,
            interleaved: None,
            source: String::new(),
        }
    }

    fn store(windows: &[(i64, i64)]) -> WindowStore {
        WindowStore::new(
            windows
                .iter()
                .map(|&(size, bucket)| WindowSpec::new(size, bucket).unwrap())
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn a_bucket_folds_values_per_cutoff_and_engagement_per_segment() {
        let mut b = Bucket::new();
        let mut first = list(
            0,
            &["a"],
            vec![source(
                "judged",
                &[1, 3],
                &[Some(0.5), None],
                Some(&[1.0, 0.5]),
            )],
        );
        first.clicked = true;
        first.interacted = true;
        first.first_click_rank = Some(4);
        b.fold(&first);
        b.fold(&list(
            0,
            &["a"],
            vec![source("judged", &[1, 3], &[None, None], None)],
        ));
        let seg = ["a".to_string()];
        let key = ("judged", &seg[..], &[1, 3][..]);
        // the k=3 cutoff had no value: count 0
        assert_eq!(b.ndcg.get(&key), Some(&vec![1.0, 0.5, 0.25, 0.0, 0.0, 0.0]));
        assert_eq!(
            b.coverage.get(&key),
            Some(&vec![1.0, 1.0, 1.0, 1.0, 0.5, 0.25])
        );
        // lists, clicked, 1/4, 1/16, zero-interaction lists
        assert_eq!(
            b.engagement.get(&&seg[..]),
            Some(&[2.0, 1.0, 0.25, 0.0625, 1.0])
        );
        // a list without any value makes no accumulators
        let mut c = Bucket::new();
        c.fold(&list(
            0,
            &["b"],
            vec![source("implicit", &[1], &[None], None)],
        ));
        assert!(c.ndcg.is_empty());
        assert_eq!(c.engagement.len(), 1);
    }

    #[test]
    fn interleaving_outcomes_are_counted_per_ordered_pair() {
        let mut b = Bucket::new();
        let mut scored = list(0, &[], vec![]);
        scored.interleaved = Some(Interleaved {
            doc_ids: vec![],
            teams: vec![],
            clicked: vec![],
            grades: vec![],
            counted_before: false,
            outcomes: vec![
                ("x".into(), "y".into(), PairOutcome::Win),
                ("y".into(), "x".into(), PairOutcome::Loss),
                ("x".into(), "y".into(), PairOutcome::NoClick),
            ],
        });
        b.fold(&scored);
        b.fold(&scored);
        let pairs: Vec<_> = b
            .interleaving
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(
            pairs,
            [
                (("x".into(), "y".into()), [2, 0, 0, 2]),
                (("y".into(), "x".into()), [0, 2, 0, 0])
            ]
        );
    }

    #[test]
    fn windows_sum_their_whole_buckets_before_the_horizon() {
        // windows of 20 and 40 ms, buckets of 10
        let mut s = store(&[(20, 10), (40, 10)]);
        // (ts, ndcg@1)
        for (ts, v) in [(5, 0.5), (15, 0.25), (25, 1.0), (35, 0.125), (45, 0.75)] {
            s.add(&list(
                ts,
                &["a"],
                vec![source("implicit", &[1], &[Some(v)], None)],
            ));
        }
        assert_eq!(s.rows(None), (vec![], vec![]));
        let (ndcg, eng) = s.rows(Some(42));
        // end = 40: the 20 ms window holds buckets 20, 30; the 40 ms one 0..30
        let got: Vec<_> = ndcg.iter().map(|r| (r.window.as_str(), r.ndcg)).collect();
        let m = |n, total, total_sq| Moments { n, total, total_sq };
        assert_eq!(
            got,
            [
                ("20ms", m(2, 1.125, 1.015625)),
                (
                    "40ms",
                    m(4, 0.5 + 0.25 + 1.0 + 0.125, 0.25 + 0.0625 + 1.0 + 0.015625)
                ),
            ]
        );
        assert_eq!(eng.len(), 2);
        assert_eq!((eng[1].lists, eng[1].zero_click_lists), (4, 4));
        assert!(ndcg[0].coverage.is_none());
    }

    #[test]
    fn rows_are_sorted_and_a_coverage_alone_gives_an_empty_ndcg() {
        let mut s = store(&[(10, 10)]);
        s.add(&list(
            0,
            &["b"],
            vec![source("judged", &[3], &[None], Some(&[0.5]))],
        ));
        s.add(&list(
            0,
            &["a"],
            vec![source("judged", &[3, 1], &[Some(1.0), Some(0.5)], None)],
        ));
        let (ndcg, eng) = s.rows(Some(10));
        let keys: Vec<_> = ndcg.iter().map(|r| (r.segment[0].as_str(), r.k)).collect();
        assert_eq!(keys, [("a", 1), ("a", 3), ("b", 3)]);
        assert_eq!(ndcg[2].ndcg, Moments::default());
        assert_eq!(ndcg[2].coverage.map(|c| c.total), Some(0.5));
        let segs: Vec<_> = eng.iter().map(|r| r.segment[0].as_str()).collect();
        assert_eq!(segs, ["a", "b"]);
    }

    #[test]
    fn eviction_drops_what_no_window_covers() {
        let mut s = store(&[(20, 10)]);
        assert_eq!(s.next_eviction(), None);
        for ts in [5, 15, 25, -3] {
            s.add(&list(ts, &[], vec![]));
        }
        // oldest bucket -10: dropped once bucket_start(horizon) - 20 > -10, i.e. horizon 20
        assert_eq!(s.next_eviction(), Some(20));
        // (horizon, the buckets left)
        let table: [(i64, &[i64]); 4] = [
            (19, &[-10, 0, 10, 20]),
            (20, &[0, 10, 20]),
            (39, &[10, 20]),
            (100, &[]),
        ];
        for (horizon, left) in table {
            s.evict(horizon);
            assert_eq!(s.starts().collect::<Vec<_>>(), left, "{horizon}");
        }
        assert_eq!(s.next_eviction(), None);
    }

    #[test]
    fn horizons_at_the_ends_of_i64_neither_panic_nor_keep_what_is_gone() {
        let mut s = store(&[(20, 10)]);
        s.add(&list(i64::MIN, &[], vec![]));
        s.add(&list(5, &[], vec![]));
        for horizon in [i64::MIN, i64::MIN + 7, -1, i64::MAX] {
            let (_, eng) = s.rows(Some(horizon));
            assert!(eng.len() <= 1);
            let _ = s.next_eviction();
        }
        s.evict(i64::MIN);
        assert_eq!(s.starts().count(), 2);
        s.evict(i64::MAX);
        assert_eq!(s.starts().count(), 0);
    }

    #[test]
    fn a_store_needs_windows_of_one_bucket_size() {
        assert!(WindowStore::new(vec![]).is_err());
        let mixed = vec![
            WindowSpec::new(20, 10).unwrap(),
            WindowSpec::new(20, 5).unwrap(),
        ];
        assert_eq!(
            WindowStore::new(mixed).unwrap_err(),
            "all windows must share one bucket size"
        );
    }

    #[test]
    fn merging_adds_position_by_position_and_appends_new_keys() {
        let mut a = Bucket::new();
        a.fold(&list(
            0,
            &["x"],
            vec![source("implicit", &[1], &[Some(0.5)], None)],
        ));
        let mut b = Bucket::new();
        b.fold(&list(
            0,
            &["y"],
            vec![source("implicit", &[1], &[Some(0.25)], None)],
        ));
        b.fold(&list(
            0,
            &["x"],
            vec![source("implicit", &[1], &[Some(0.25)], None)],
        ));
        a.merge(&b);
        let segs: Vec<_> = a
            .ndcg
            .iter()
            .map(|((_, s, _), acc)| (s[0].as_str(), acc.clone()))
            .collect();
        assert_eq!(
            segs,
            [
                ("x", vec![2.0, 0.75, 0.3125]),
                ("y", vec![1.0, 0.25, 0.0625])
            ]
        );
    }
}
