//! Request ids of lists already closed (finalized or evicted), kept for a while and within a
//! cap, as `streameval/join/closed_ids.py`: a click read in time for a closed list is late.
//!
//! An id is kept until the watermark is `keep_ms` (two attribution windows) past its impression,
//! in `(impression time, closing order)` order, and at most `cap` ids at once (the oldest
//! forgotten first, counted in `dropped`). As in Python, ids are held as 64-bit hashes (two ids
//! of a run alike by it, a chance of ~n²/2⁶⁵, share one entry); the hash's keys are random per
//! process, and nothing is ever ordered by a hash. The fingerprint stays std's SipHash (a
//! keyed PRF: hostile ids cannot be made to share one); the map of fingerprints is `hash::Map`.

use std::collections::{BinaryHeap, VecDeque};
use std::hash::{BuildHasher, RandomState};

use crate::hash::Map;

use std::cmp::Reverse;

/// stale entries (an id closed again while still kept) tolerated beyond 2 × the live ones
const SLACK: usize = 64;

/// An entry's order: impression time, then the serial (the how-manieth id closed).
type Key = (i64, u64);

#[derive(Debug, Clone)]
pub struct ClosedIds {
    keep_ms: i64,
    cap: usize,
    serial: u64,
    hasher: RandomState,
    kept: Map<u64, Key>,
    queue: VecDeque<(Key, u64)>,
    heap: BinaryHeap<Reverse<(Key, u64)>>,
    /// ids forgotten before their time, over the cap
    pub dropped: u64,
}

impl ClosedIds {
    pub fn new(keep_ms: i64, cap: usize) -> Self {
        ClosedIds {
            keep_ms,
            cap,
            serial: 0,
            hasher: RandomState::new(),
            kept: Map::default(),
            queue: VecDeque::new(),
            heap: BinaryHeap::new(),
            dropped: 0,
        }
    }

    pub fn contains(&self, request_id: &str) -> bool {
        self.kept.contains_key(&self.hasher.hash_one(request_id))
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// Entries held, stale ones included.
    pub fn entries(&self) -> usize {
        self.queue.len() + self.heap.len()
    }

    pub fn add(&mut self, request_id: &str, ts: i64) {
        let h = self.hasher.hash_one(request_id);
        self.serial += 1;
        let key = (ts, self.serial);
        self.kept.insert(h, key);
        let entry = (key, h);
        if self.queue.back().is_none_or(|last| entry >= *last) {
            self.queue.push_back(entry);
        } else {
            self.heap.push(Reverse(entry));
        }
        if self.kept.len() > self.cap {
            while self.kept.len() > self.cap {
                let (old_key, old) = self.pop_oldest();
                if self.kept.get(&old) == Some(&old_key) {
                    self.kept.remove(&old);
                    self.dropped += 1;
                }
            }
        } else if self.entries() > 2 * self.kept.len() + SLACK {
            // the same ids closed again and again: drop the stale entries
            let mut live: Vec<(Key, u64)> = self.kept.iter().map(|(h, k)| (*k, *h)).collect();
            live.sort();
            self.queue = live.into();
            self.heap.clear();
        }
    }

    fn pop_oldest(&mut self) -> (Key, u64) {
        let from_heap = match (self.heap.peek(), self.queue.front()) {
            (Some(Reverse(h)), Some(q)) => h < q,
            (Some(_), None) => true,
            _ => false,
        };
        if from_heap {
            self.heap.pop().map(|Reverse(e)| e)
        } else {
            self.queue.pop_front()
        }
        .expect("an entry per kept id")
    }

    /// Forget every id whose impression is more than `keep_ms` behind `watermark`.
    pub fn forget(&mut self, watermark: i64) {
        let before = watermark - self.keep_ms;
        while let Some(&((ts, serial), h)) = self.queue.front() {
            if ts >= before {
                break;
            }
            self.queue.pop_front();
            if self.kept.get(&h) == Some(&(ts, serial)) {
                self.kept.remove(&h);
            }
        }
        while let Some(&Reverse(((ts, serial), h))) = self.heap.peek() {
            if ts >= before {
                break;
            }
            self.heap.pop();
            if self.kept.get(&h) == Some(&(ts, serial)) {
                self.kept.remove(&h);
            }
        }
    }

    /// The smallest watermark at which `forget` has work; None: none (infinity).
    pub fn next_due(&self) -> Option<i64> {
        let q = self.queue.front().map(|e| e.0);
        let h = self.heap.peek().map(|Reverse(e)| e.0);
        let first = match (q, h) {
            (Some(q), Some(h)) => q.min(h),
            (q, h) => q.or(h)?,
        };
        Some(first.0 + self.keep_ms + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_until_keep_ms_past_the_impression() {
        let mut c = ClosedIds::new(100, 10);
        c.add("a", 1000);
        c.add("b", 1050);
        assert_eq!(c.next_due(), Some(1101));
        // (watermark, a kept, b kept)
        for (wm, a, b) in [
            (1100, true, true),
            (1101, false, true),
            (1151, false, false),
        ] {
            c.forget(wm);
            assert_eq!((c.contains("a"), c.contains("b")), (a, b), "{wm}");
        }
        assert_eq!(c.next_due(), None);
        assert_eq!(c.entries(), 0);
    }

    #[test]
    fn over_the_cap_the_oldest_impression_goes_first_ties_by_closing_order() {
        let mut c = ClosedIds::new(1000, 2);
        c.add("x", 500);
        c.add("y", 500);
        c.add("old", 100); // out of order: to the heap
                           // three kept over a cap of two: the oldest impression ("old") dropped
        assert!(!c.contains("old") && c.contains("x") && c.contains("y"));
        c.add("z", 500);
        // x and y tie on time: x closed first, dropped first
        assert!(!c.contains("x") && c.contains("y") && c.contains("z"));
        assert_eq!(c.dropped, 2);
    }

    #[test]
    fn closed_again_keeps_the_latest_entry_and_compacts() {
        let mut c = ClosedIds::new(10, 1000);
        for i in 0..200 {
            c.add("same", i);
        }
        assert_eq!(c.len(), 1);
        assert!(c.entries() <= 2 + SLACK);
        c.forget(205);
        assert!(c.contains("same")); // its entry of time 199 is kept until 210
        c.forget(210);
        assert!(!c.contains("same"));
    }
}
