//! The buckets of each source partition not yet in the state topic (`persisted.SourceBuckets`):
//! complete once the horizon has passed their end, written to the compacted state topic in step
//! with the offset commits (DESIGN §6), then dropped.

use std::collections::BTreeMap;

use super::spec::bucket_start;
use super::store::Bucket;
use crate::hash::Map;
use crate::scored::ScoredList;

/// Per source and bucket start: the sufficient statistics folded since the last persist
/// (`persisted.SourceBuckets`).
#[derive(Clone, Debug, Default)]
pub struct SourceBuckets {
    bucket_ms: i64,
    by_source: Map<String, BTreeMap<i64, Bucket>>,
}

impl SourceBuckets {
    pub fn new(bucket_ms: i64) -> Self {
        Self {
            bucket_ms,
            by_source: Map::default(),
        }
    }

    pub fn add(&mut self, source: &str, scored: &ScoredList) {
        let start = bucket_start(scored.timestamp, self.bucket_ms);
        self.by_source
            .entry(source.to_string())
            .or_default()
            .entry(start)
            .or_default()
            .fold(scored);
    }

    /// (source, start, bucket) of every bucket that starts before `before`, sources and starts
    /// sorted (kept until [`Self::persisted`] drops them).
    pub fn complete(&self, before: i64) -> Vec<(&str, i64, &Bucket)> {
        let mut sources: Vec<&String> = self.by_source.keys().collect();
        sources.sort();
        let mut out = Vec::new();
        for source in sources {
            for (&start, bucket) in self.by_source[source].range(..before) {
                out.push((source.as_str(), start, bucket));
            }
        }
        out
    }

    /// The buckets starting before `before` are in the state topic: drop them.
    pub fn persisted(&mut self, before: i64) {
        for buckets in self.by_source.values_mut() {
            *buckets = buckets.split_off(&before);
        }
        self.by_source.retain(|_, buckets| !buckets.is_empty());
    }

    pub fn forget(&mut self, source: &str) {
        self.by_source.remove(source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::windows::store::tests::list;

    #[test]
    fn source_buckets_are_complete_before_a_start_and_dropped_once_persisted() {
        let mut sb = SourceBuckets::new(10);
        for (source, ts) in [("t/1", 5), ("t/0", 25), ("t/0", 3), ("t/1", 12)] {
            sb.add(source, &list(ts, &[], vec![]));
        }
        let starts = |sb: &SourceBuckets, before| -> Vec<(String, i64)> {
            sb.complete(before)
                .into_iter()
                .map(|(s, b, _)| (s.to_string(), b))
                .collect()
        };
        let own = |v: &[(&str, i64)]| -> Vec<(String, i64)> {
            v.iter().map(|(s, b)| (s.to_string(), *b)).collect()
        };
        assert_eq!(starts(&sb, 20), own(&[("t/0", 0), ("t/1", 0), ("t/1", 10)]));
        sb.persisted(20);
        assert_eq!(starts(&sb, 100), own(&[("t/0", 20)]));
        sb.forget("t/0");
        assert!(sb.complete(100).is_empty());
    }
}
