//! The join, as `Joiner` of `streameval/join/open_lists.py`: impressions open lists by request
//! id; clicks within the attribution window attach to them; lists are finalized in
//! `(impression time, arrival)` order once the watermark passes `impression + attribution`,
//! or evicted, oldest first, over `max_open_lists`. Clicks read before their impression wait
//! (`pending`); clicks for a closed list are late (`closed_ids`). Nothing here reads a clock.
//!
//! The open lists live in a slab (a vector of slots, reused); the index by request id is a
//! hash table of slot numbers that compares through the slot, so an id is stored once.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::decode::{Click, Impression};
use crate::hash::Seeded;
use crate::join::closed_ids::ClosedIds;
use crate::join::deadlines::Deadlines;
use crate::join::grades::InteractionGrades;
use crate::join::key::DedupKey;
use crate::join::open_list::OpenList;
use crate::join::pending::PendingClicks;
use crate::join::segments::SegmentCapper;
use crate::join::Outcome;

/// the segment label an interleaved list without a `ranker` label is scored under, and its value
pub const INTERLEAVED_LABEL: &str = "ranker";
pub const INTERLEAVED: &str = "interleaved";

#[derive(Debug)]
pub struct Joiner {
    attribution_ms: i64,
    grades: InteractionGrades,
    max_open: usize,
    slots: Vec<Option<OpenList>>,
    free: Vec<u32>,
    index: HashTable<u32>,
    hasher: Seeded,
    deadlines: Deadlines,
    seq: u64,
    closed: ClosedIds,
    pending: PendingClicks,
    /// the bucket of `Joiner._pass_bucket` (None: lists are not kept for the early judged pass)
    pass_bucket: Option<i64>,
    /// the lists the watermark has not passed yet by their bucket's start: (slot, seq), the
    /// seq telling a slot's list from a later one in the same slot (`Joiner._unpassed`)
    unpassed: BTreeMap<i64, Vec<(u32, u64)>>,
}

fn key_of(slots: &[Option<OpenList>]) -> impl Fn(u32) -> (i64, u64) + '_ {
    move |s| {
        let l = slots[s as usize]
            .as_ref()
            .expect("a deadline per open list");
        (l.timestamp, l.seq)
    }
}

impl Joiner {
    pub fn new(
        attribution_ms: i64,
        grades: InteractionGrades,
        max_open_lists: usize,
        max_pending_clicks: usize,
    ) -> Self {
        Joiner {
            attribution_ms,
            grades,
            max_open: max_open_lists,
            slots: Vec::new(),
            free: Vec::new(),
            index: HashTable::new(),
            hasher: Seeded::default(),
            deadlines: Deadlines::default(),
            seq: 0,
            closed: ClosedIds::new(2 * attribution_ms, max_open_lists),
            pending: PendingClicks::new(max_pending_clicks),
            pass_bucket: None,
            unpassed: BTreeMap::new(),
        }
    }

    /// The bucket of the early judged pass, when the lists are kept for it.
    pub fn pass_bucket(&self) -> Option<i64> {
        self.pass_bucket
    }

    /// Keep the open lists by bucket for the early judged pass (`pass_bucket_ms`).
    pub fn keep_unpassed(&mut self, bucket_ms: i64) {
        self.pass_bucket = Some(bucket_ms);
    }

    fn find(&self, request_id: &str) -> Option<u32> {
        let slots = &self.slots;
        self.index
            .find(self.hasher.hash_one(request_id), |&s| {
                slots[s as usize]
                    .as_ref()
                    .is_some_and(|l| l.request_id() == request_id)
            })
            .copied()
    }

    /// Open a list. Returns its outcome and, for each waiting click it resolved, the click's
    /// outcome and whether that click was counted in the intake when it was read. An
    /// impression's identity is its request id while its list is open: a second one is a
    /// duplicate, even behind the watermark.
    pub fn add_impression(
        &mut self,
        impression: &Impression,
        watermark: Option<i64>,
        segments: &mut SegmentCapper,
        counted_before: bool,
        source: u32,
    ) -> (Outcome, Vec<(Outcome, bool)>) {
        let rid = impression.request_id.as_str();
        if self.find(rid).is_some() {
            return (Outcome::Duplicate, Vec::new());
        }
        let ts = impression.timestamp;
        if watermark.is_some_and(|w| ts < w) {
            return (Outcome::Late, Vec::new());
        }
        let labels = &impression.labels;
        // an interleaved list is scored under its own segment (DESIGN §10)
        let interleaved =
            impression.teams.is_some() && !labels.iter().any(|(k, _)| k == INTERLEAVED_LABEL);
        let segment = segments.segment_of(|name| {
            if interleaved && name == INTERLEAVED_LABEL {
                return Some(INTERLEAVED);
            }
            labels
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        });
        self.seq += 1;
        let list = OpenList::new(impression, segment, counted_before, source, self.seq);
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(list);
                s
            }
            None => {
                self.slots.push(Some(list));
                (self.slots.len() - 1) as u32
            }
        };
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.index.insert_unique(hasher.hash_one(rid), slot, |&s| {
            hasher.hash_one(slots[s as usize].as_ref().map_or("", |l| l.request_id()))
        });
        self.deadlines.push(slot, key_of(&self.slots));
        if let Some(pb) = self.pass_bucket {
            let b = ts - ts.rem_euclid(pb);
            self.unpassed.entry(b).or_default().push((slot, self.seq));
        }
        let waiting = self.pending.take(rid);
        let resolved = waiting
            .iter()
            .map(|w| (self.attach(slot, &w.click, &w.key), w.counted))
            .collect();
        (Outcome::Accepted, resolved)
    }

    /// Attach a click to its open list; else it is late when read behind the watermark or when
    /// its list is already closed, and otherwise waits for its impression (pending, or
    /// unmatched when the waiting clicks are at their cap).
    pub fn add_click(
        &mut self,
        click: &Click,
        key: &DedupKey,
        watermark: Option<i64>,
        counted: bool,
    ) -> Outcome {
        let rid = click.request_id.as_str();
        if let Some(slot) = self.find(rid) {
            return self.attach(slot, click, key);
        }
        if watermark.is_some_and(|w| click.timestamp < w) || self.closed.contains(rid) {
            return Outcome::Late;
        }
        if self.pending.is_duplicate(rid, key) {
            return Outcome::Duplicate;
        }
        if self.pending.add(click, key, counted) {
            Outcome::Pending
        } else {
            Outcome::Unmatched
        }
    }

    fn attach(&mut self, slot: u32, click: &Click, key: &DedupKey) -> Outcome {
        let grade = self.grades.grade(click);
        let list = self.slots[slot as usize].as_mut().expect("an open slot");
        if click.timestamp >= list.timestamp + self.attribution_ms {
            return Outcome::Late; // after the attribution window: it does not count
        }
        if !list.attach(click, key, grade) {
            return Outcome::Duplicate;
        }
        Outcome::Accepted
    }

    /// Take the list of the earliest deadline out of the open lists.
    fn pop_first(&mut self) -> Option<OpenList> {
        let slot = self.deadlines.pop(key_of(&self.slots))?;
        let list = self.slots[slot as usize].take().expect("an open slot");
        let hash = self.hasher.hash_one(list.request_id());
        if let Ok(entry) = self.index.find_entry(hash, |&s| s == slot) {
            entry.remove();
        }
        self.free.push(slot);
        Some(list)
    }

    fn first_deadline(&self) -> Option<i64> {
        let slot = self.deadlines.peek()?;
        Some(key_of(&self.slots)(slot).0 + self.attribution_ms)
    }

    /// Hand out (once) every list whose attribution window ended at or before `watermark`, in
    /// deadline order; then forget the closed ids the watermark has left behind.
    pub fn finalize(&mut self, watermark: i64) -> Vec<OpenList> {
        let mut out = Vec::new();
        while self.first_deadline().is_some_and(|d| d <= watermark) {
            let list = self.pop_first().expect("a deadline");
            self.closed.add(list.request_id(), list.timestamp);
            out.push(list);
        }
        self.closed.forget(watermark);
        out
    }

    /// End of input: every open list, in deadline order.
    pub fn finalize_all(&mut self) -> Vec<OpenList> {
        std::iter::from_fn(|| self.pop_first()).collect()
    }

    /// The oldest lists beyond `max_open_lists` (to be counted as evicted, not scored).
    pub fn evict_over_cap(&mut self) -> Vec<OpenList> {
        let mut out = Vec::new();
        while self.open_lists() > self.max_open {
            let Some(list) = self.pop_first() else { break };
            self.closed.add(list.request_id(), list.timestamp);
            out.push(list);
        }
        out
    }

    /// `Joiner.passed`: the slots of the lists still open of every bucket that starts before
    /// `cut` (None: every bucket), bucket by bucket in time order, handed out once.
    pub fn passed(&mut self, cut: Option<i64>) -> Vec<u32> {
        let due = match cut {
            None => std::mem::take(&mut self.unpassed),
            Some(cut) => {
                let rest = self.unpassed.split_off(&cut);
                std::mem::replace(&mut self.unpassed, rest)
            }
        };
        let slots = &mut self.slots;
        due.into_values()
            .flatten()
            .filter(|&(slot, seq)| {
                let list = slots[slot as usize].as_mut().filter(|l| l.seq == seq);
                list.map(OpenList::set_passed).is_some()
            })
            .map(|(slot, _)| slot)
            .collect()
    }

    /// `Joiner.next_passed`: the start of the earliest bucket not handed out yet, + 1.
    pub fn next_passed(&self) -> Option<i64> {
        self.unpassed.keys().next().map(|b| b + 1)
    }

    /// The open list of a slot `passed` answered.
    pub fn list(&self, slot: u32) -> &OpenList {
        self.slots[slot as usize].as_ref().expect("an open slot")
    }

    /// Waiting clicks whose own time the watermark has passed (all when None): unmatched.
    /// Returns how many of them had been counted in the intake when read.
    pub fn expire_pending(&mut self, watermark: Option<i64>) -> u64 {
        self.pending.expire(watermark)
    }

    /// The smallest watermark at which `finalize` or `expire_pending` has work; None: none.
    pub fn next_due(&self) -> Option<i64> {
        [
            self.closed.next_due(),
            self.first_deadline(),
            self.pending.next_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub fn open_lists(&self) -> usize {
        self.index.len()
    }

    pub fn pending_clicks(&self) -> usize {
        self.pending.len()
    }

    pub fn pending_clicks_counted(&self) -> usize {
        self.pending.counted()
    }

    pub fn closed_ids_dropped(&self) -> u64 {
        self.closed.dropped
    }

    /// The bytes the open lists hold: each list, its slot, its index entry and its deadline
    /// (capacities; the allocator's own rounding and headers not included).
    pub fn open_bytes(&self) -> usize {
        let lists: usize = self.slots.iter().flatten().map(|l| l.heap_bytes()).sum();
        let slot = std::mem::size_of::<Option<OpenList>>();
        lists + (self.slots.capacity() - self.slots.len()) * slot
            + (self.slots.len() - self.open_lists()) * (slot - std::mem::size_of::<OpenList>())
            + self.free.capacity() * 4
            + self.index.capacity() * 6 // (4 B and a control byte per bucket, 7/8 full)
            + self.deadlines.capacity() * 4
    }
}

#[cfg(test)]
#[path = "joiner_tests.rs"]
mod tests;
