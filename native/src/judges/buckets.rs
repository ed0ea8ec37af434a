//! The judge tracker's buckets of impression time (`JudgeTracker` of
//! `streameval/judges/tracker.py`: `_buckets`, `evict`, `_set_oldest`, `reset` and the sums of
//! `view`): per bucket, the judged docs shown in the top max(ks), the stale ones among them, and
//! per query class (head, then tail) the lists and, per k, the sum of their judged coverage@k.
//!
//! Every figure is an `f64` added in the order the lists came, and a window's total adds its
//! buckets oldest first, as the Python list of floats does: the same bits.

use crate::hash::Map;

/// Where the head's figures start in a bucket (judged docs and stale docs come first).
pub const HEAD_AT: usize = 2;

/// One window's figures as the snapshot reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFigures {
    /// judged docs shown, stale docs among them (`FreshnessRow`)
    pub judged_docs: i64,
    pub stale_docs: i64,
    /// (lists, coverage sum per k) of head lists, then of tail lists (`QueryClassCoverageRow`)
    pub head: (i64, Vec<f64>),
    pub tail: (i64, Vec<f64>),
}

#[derive(Clone, Debug)]
pub struct Buckets {
    bucket_ms: i64,
    longest: i64,
    ks: usize,
    buckets: Map<i64, Vec<f64>>,
    oldest: Option<i64>,
    evict_due: Option<i64>,
}

impl Buckets {
    /// `longest`: the longest window's size; `ks`: the number of cutoffs.
    pub fn new(bucket_ms: i64, longest: i64, ks: usize) -> Self {
        assert!(bucket_ms > 0, "a bucket is at least 1 ms");
        Buckets {
            bucket_ms,
            longest,
            ks,
            buckets: Map::default(),
            oldest: None,
            evict_due: None,
        }
    }

    /// The start of the bucket holding `ts` (floor, negative times too).
    pub fn start(&self, ts: i64) -> i64 {
        ts - ts.rem_euclid(self.bucket_ms)
    }

    /// Where the tail's figures start.
    pub fn tail_at(&self) -> usize {
        HEAD_AT + 1 + self.ks
    }

    fn width(&self) -> usize {
        HEAD_AT + 2 * (1 + self.ks)
    }

    /// The accumulator of the bucket starting at `b`, made when new.
    pub fn at(&mut self, b: i64) -> &mut Vec<f64> {
        if !self.buckets.contains_key(&b) && self.oldest.is_none_or(|o| b < o) {
            self.set_oldest(Some(b));
        }
        let width = self.width();
        self.buckets.entry(b).or_insert_with(|| vec![0.0; width])
    }

    /// The horizon from which [`Buckets::evict`] has a bucket to drop (`None`: Python's `inf`).
    pub fn evict_due(&self) -> Option<i64> {
        self.evict_due
    }

    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Drop the buckets no window covers any more as of `horizon_ms`.
    pub fn evict(&mut self, horizon_ms: i64) {
        let oldest = self.start(horizon_ms) - self.longest;
        self.buckets.retain(|&b, _| b >= oldest);
        self.set_oldest(self.buckets.keys().min().copied());
    }

    /// Before the streams are re-read (a rebalance): the buckets go.
    pub fn reset(&mut self) {
        self.buckets.clear();
        self.set_oldest(None);
    }

    fn set_oldest(&mut self, oldest: Option<i64>) {
        self.oldest = oldest;
        self.evict_due = oldest.map(|o| {
            let after = o + self.longest;
            after - after.rem_euclid(self.bucket_ms) + self.bucket_ms
        });
    }

    /// The figures of a window of `size_ms` as of `horizon_ms`: the sums over the whole buckets
    /// in `[end - size, end)`, `end` the horizon's bucket start, oldest first.
    pub fn window(&self, horizon_ms: i64, size_ms: i64) -> WindowFigures {
        let mut total = vec![0.0; self.width()];
        let end = self.start(horizon_ms);
        let mut s = end - size_ms;
        while s < end {
            if let Some(acc) = self.buckets.get(&s) {
                for (t, v) in total.iter_mut().zip(acc) {
                    *t += v;
                }
            }
            s += self.bucket_ms;
        }
        let class = |at: usize| (total[at] as i64, total[at + 1..at + 1 + self.ks].to_vec());
        WindowFigures {
            judged_docs: total[0] as i64,
            stale_docs: total[1] as i64,
            head: class(HEAD_AT),
            tail: class(self.tail_at()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_sum_whole_buckets_before_the_horizon() {
        let mut b = Buckets::new(10, 30, 1);
        b.at(0)[0] += 2.0;
        b.at(10)[0] += 1.0;
        b.at(20)[1] += 1.0;
        b.at(-10)[HEAD_AT] += 1.0; // a negative time's bucket
        assert_eq!(b.start(-1), -10);
        // horizon 25: end 20, a 30 ms window covers -10, 0, 10
        let w = b.window(25, 30);
        assert_eq!((w.judged_docs, w.stale_docs, w.head.0), (3, 0, 1));
        let w = b.window(30, 10);
        assert_eq!((w.judged_docs, w.stale_docs), (0, 1));
        assert_eq!(w.tail, (0, vec![0.0]));
    }

    #[test]
    fn eviction_follows_the_oldest_bucket() {
        let mut b = Buckets::new(10, 30, 2);
        assert_eq!(b.evict_due(), None);
        b.at(20);
        // oldest 20: dropped once the horizon's bucket start passes 20 + 30
        assert_eq!(b.evict_due(), Some(60));
        b.at(0);
        assert_eq!(b.evict_due(), Some(40));
        b.at(50);
        b.evict(45); // start 40, keeps b >= 10
        assert_eq!(b.len(), 2);
        assert_eq!(b.evict_due(), Some(60));
        b.evict(1_000);
        assert!(b.is_empty());
        assert_eq!(b.evict_due(), None);
        b.at(5);
        b.reset();
        assert_eq!((b.len(), b.evict_due()), (0, None));
    }
}
