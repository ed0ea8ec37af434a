//! Since-start totals: finalized lists by relevance source and outcome, and cumulative NDCG sums
//! for `rate()` (`windows/totals.py`). Sums in Python's order, so equal to the bit.

use super::ordered::OrderedMap;
use super::store::{RowKey, SourceKey};
use crate::scored::{ScoredList, Segment};

/// Since-start sums of one (relevance, segment, k) (`snapshot.CumulativeRow`).
#[derive(Clone, Debug, PartialEq)]
pub struct CumulativeRow {
    pub relevance: String,
    pub segment: Segment,
    pub k: i64,
    pub ndcg_sum: f64,
    pub lists_scored: i64,
}

#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// per (relevance, segment, ks): `[sum, count]` per k in turn
    cumulative: OrderedMap<SourceKey, Vec<f64>>,
    /// per (relevance, outcome), in the order first counted
    lists_total: OrderedMap<(String, String), u64>,
}

impl Totals {
    pub fn new() -> Self {
        Self::default()
    }

    /// Count one scored list (`Totals.count_list`).
    pub fn count_list(&mut self, scored: &ScoredList) {
        for source in &scored.sources {
            self.count_outcome(&source.relevance, &source.outcome);
            // no NDCG at one cutoff means none at any (no relevance); Python's `ndcg[0]` of
            // a list without cutoffs would raise: it is skipped here
            let Some(Some(_)) = source.ndcg.first() else {
                continue;
            };
            let key = (
                source.relevance.as_str(),
                scored.segment.as_slice(),
                source.ks.as_slice(),
            );
            let len = source.ndcg.len();
            let acc = self
                .cumulative
                .entry_or_insert_with(key, || vec![0.0; 2 * len]);
            for (i, value) in source.ndcg.iter().enumerate() {
                if let Some(value) = value {
                    acc[2 * i] += value;
                    acc[2 * i + 1] += 1.0;
                }
            }
        }
    }

    /// A finalized list that was not scored (e.g. evicted).
    pub fn count_outcome(&mut self, relevance: &str, outcome: &str) {
        *self
            .lists_total
            .entry_or_insert_with((relevance, outcome), || 0) += 1;
    }

    /// The since-start rows, sorted by (relevance, segment, k), those with a list scored.
    pub fn cumulative(&self) -> Vec<CumulativeRow> {
        let mut rows: OrderedMap<RowKey, [f64; 2]> = OrderedMap::new();
        for ((rel, seg, ks), acc) in self.cumulative.iter() {
            for (i, &k) in ks.iter().enumerate() {
                let total =
                    rows.entry_or_insert_with((rel.as_str(), seg.as_slice(), k), || [0.0, 0.0]);
                total[0] += acc[2 * i];
                total[1] += acc[2 * i + 1];
            }
        }
        let mut rows = rows.into_entries();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.into_iter()
            .filter(|(_, acc)| acc[1] != 0.0)
            .map(|((relevance, segment, k), acc)| CumulativeRow {
                relevance,
                segment,
                k,
                ndcg_sum: acc[0],
                lists_scored: acc[1] as i64,
            })
            .collect()
    }

    /// Lists per (relevance, outcome), in the order first counted (Python's dict order).
    pub fn lists_total(&self) -> Vec<((String, String), u64)> {
        self.lists_total
            .iter()
            .map(|(k, &v)| (k.clone(), v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scored::SourceScore;

    fn source(relevance: &str, outcome: &str, ndcg: &[Option<f64>]) -> SourceScore {
        SourceScore {
            relevance: relevance.into(),
            outcome: outcome.into(),
            ks: (1..=ndcg.len() as i64).collect(),
            ndcg: ndcg.to_vec(),
            dcg: vec![0.0; ndcg.len()],
            idcg: vec![0.0; ndcg.len()],
            coverage: None,
        }
    }

    fn list(segment: &str, sources: Vec<SourceScore>) -> ScoredList {
        ScoredList {
            request_id: "r".into(),
            query_id: "q".into(),
            timestamp: 0,
            labels: vec![],
            segment: vec![segment.into()],
            sources,
            clicked: false,
            first_click_rank: None,
            interacted: false,
            interleaved: None,
            source: String::new(),
        }
    }

    #[test]
    fn counts_lists_per_outcome_and_sums_ndcg_per_k() {
        let mut totals = Totals::new();
        // (segment, ndcg@1, ndcg@2, outcome)
        let table = [
            ("a", Some(0.5), Some(0.25), "scored"),
            ("a", Some(0.25), None, "scored"),
            ("b", None, None, "no_relevance"),
            ("a", Some(1.0), Some(1.0), "scored"),
        ];
        for (seg, at1, at2, outcome) in table {
            totals.count_list(&list(seg, vec![source("implicit", outcome, &[at1, at2])]));
        }
        totals.count_outcome("judged", "evicted");
        totals.count_outcome("implicit", "evicted");
        assert_eq!(
            totals.lists_total(),
            [
                (("implicit".into(), "scored".into()), 3),
                (("implicit".into(), "no_relevance".into()), 1),
                (("judged".into(), "evicted".into()), 1),
                (("implicit".into(), "evicted".into()), 1),
            ]
        );
        let rows = totals.cumulative();
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.segment[0].as_str(), r.k, r.ndcg_sum, r.lists_scored))
            .collect();
        // segment b had no value: no row
        assert_eq!(got, [("a", 1, 1.75, 3), ("a", 2, 1.25, 2)]);
    }

    #[test]
    fn sums_per_k_across_ks_tuples_in_insertion_order() {
        let mut totals = Totals::new();
        let mut first = source("judged", "scored", &[Some(0.1), Some(0.2)]);
        first.ks = vec![3, 5];
        let mut second = source("judged", "scored", &[Some(0.7)]);
        second.ks = vec![5];
        totals.count_list(&list("s", vec![first]));
        totals.count_list(&list("s", vec![second]));
        let rows = totals.cumulative();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].k, rows[0].ndcg_sum), (3, 0.1));
        // 0.0 + 0.2 + 0.7, in that order
        assert_eq!((rows[1].k, rows[1].ndcg_sum), (5, 0.0 + 0.2 + 0.7));
        assert_eq!(rows[1].lists_scored, 2);
    }
}
