//! Clicks read before their impression, as `streameval/join/pending.py`: each waits, bounded
//! (`cap`), until its impression opens its list (then it is attached) or until the watermark
//! passes its own time (then it is unmatched). Its identity while it waits is its dedup key
//! within its request.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::decode::Click;
use crate::hash::Map;
use crate::join::key::DedupKey;

/// stale entries in the expiry order (clicks already attached) tolerated beyond 2 × those waiting
const SLACK: usize = 64;

#[derive(Debug, Clone)]
pub struct Waiting {
    pub click: Click,
    pub key: DedupKey,
    /// counted in the intake when read (false while re-reading what a previous run counted)
    pub counted: bool,
    pub seq: u64,
}

#[derive(Debug, Clone)]
pub struct PendingClicks {
    cap: usize,
    by_request: Map<Box<str>, Vec<Waiting>>,
    /// (click time, seq, request id), one per click; those of attached clicks stay until popped
    order: BinaryHeap<Reverse<(i64, u64, Box<str>)>>,
    seq: u64,
    count: usize,
}

impl PendingClicks {
    pub fn new(cap: usize) -> Self {
        PendingClicks {
            cap,
            by_request: Map::default(),
            order: BinaryHeap::new(),
            seq: 0,
            count: 0,
        }
    }

    pub fn is_duplicate(&self, request_id: &str, key: &DedupKey) -> bool {
        self.by_request
            .get(request_id)
            .is_some_and(|ws| ws.iter().any(|w| w.key == *key))
    }

    /// Make `click` wait; false when the cap is reached (it cannot wait).
    pub fn add(&mut self, click: &Click, key: &DedupKey, counted: bool) -> bool {
        if self.count >= self.cap {
            return false;
        }
        self.seq += 1;
        let rid: Box<str> = click.request_id.as_str().into();
        self.order
            .push(Reverse((click.timestamp, self.seq, rid.clone())));
        self.by_request.entry(rid).or_default().push(Waiting {
            click: click.clone(),
            key: key.clone(),
            counted,
            seq: self.seq,
        });
        self.count += 1;
        true
    }

    /// The clicks waiting for `request_id` (its impression came), in arrival order.
    pub fn take(&mut self, request_id: &str) -> Vec<Waiting> {
        let Some(waiting) = self.by_request.remove(request_id) else {
            return Vec::new();
        };
        self.count -= waiting.len();
        if self.order.len() > 2 * self.count + SLACK {
            self.order = self
                .by_request
                .iter()
                .flat_map(|(rid, ws)| {
                    ws.iter()
                        .map(move |w| Reverse((w.click.timestamp, w.seq, rid.clone())))
                })
                .collect();
        }
        waiting
    }

    /// Drop every click whose own time is behind `watermark` (all when None): now unmatched.
    /// Returns how many of those were counted in the intake when read.
    pub fn expire(&mut self, watermark: Option<i64>) -> u64 {
        let mut expired = 0;
        while let Some(Reverse((ts, _, _))) = self.order.peek() {
            if watermark.is_some_and(|w| *ts >= w) {
                break;
            }
            let Some(Reverse((_, seq, rid))) = self.order.pop() else {
                break;
            };
            let Some(waiting) = self.by_request.get_mut(&rid) else {
                continue; // attached meanwhile
            };
            if let Some(i) = waiting.iter().position(|w| w.seq == seq) {
                let w = waiting.remove(i);
                self.count -= 1;
                expired += u64::from(w.counted);
                if waiting.is_empty() {
                    self.by_request.remove(&rid);
                }
            }
        }
        expired
    }

    /// The smallest watermark at which `expire` has work; None: none (infinity).
    pub fn next_due(&self) -> Option<i64> {
        self.order.peek().map(|Reverse((ts, _, _))| ts + 1)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Waiting clicks that were counted in the intake when read.
    pub fn counted(&self) -> usize {
        self.by_request
            .values()
            .flatten()
            .filter(|w| w.counted)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(rid: &str, ts: i64) -> Click {
        Click {
            request_id: rid.into(),
            doc_id: "d".into(),
            timestamp: ts,
            action: "click".into(),
            dwell_ms: None,
            position: None,
            event_id: None,
        }
    }

    fn key(s: &str) -> DedupKey {
        DedupKey::Id(s.into())
    }

    #[test]
    fn waits_within_the_cap_and_is_taken_in_arrival_order() {
        let mut p = PendingClicks::new(3);
        assert!(p.add(&click("r", 20), &key("a"), true));
        assert!(p.add(&click("r", 10), &key("b"), false));
        assert!(p.add(&click("s", 5), &key("a"), true));
        assert!(!p.add(&click("t", 5), &key("c"), true), "over the cap");
        assert!(p.is_duplicate("r", &key("a")) && !p.is_duplicate("t", &key("a")));
        assert_eq!((p.len(), p.counted()), (3, 2));
        let taken: Vec<u64> = p.take("r").iter().map(|w| w.seq).collect();
        assert_eq!(taken, vec![1, 2]);
        assert_eq!(p.len(), 1);
        assert!(p.take("r").is_empty());
    }

    #[test]
    fn expires_behind_the_watermark_stale_entries_skipped() {
        let mut p = PendingClicks::new(10);
        for (rid, ts, counted) in [("a", 10, true), ("b", 20, false), ("c", 30, true)] {
            p.add(&click(rid, ts), &key(rid), counted);
        }
        p.take("a"); // its entry stays in the order, stale
        assert_eq!(p.next_due(), Some(11));
        // (watermark, expired counted, still waiting)
        for (wm, expired, left) in [(Some(10), 0, 2), (Some(21), 0, 1), (None, 1, 0)] {
            assert_eq!(p.expire(wm), expired, "{wm:?}");
            assert_eq!(p.len(), left, "{wm:?}");
        }
        assert_eq!(p.next_due(), None);
    }
}
