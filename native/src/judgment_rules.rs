//! Which judgment records change the judgment table (`streameval/engine/judgments.py`,
//! `JudgmentRules`, and `streameval/join/judgments.py`'s `JudgmentIds`; DESIGN §2).
//!
//! A judgment read outside a keyed topic is identified by its `event_id`, else by the digest
//! of its exact record (the caller gives that identity); the last `max_judgment_ids` identities
//! are remembered. A record of a compacted judgment topic is identified by its key: its latest
//! value is what the key says, and a tombstone deletes what the key's latest value set.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::BuildHasher;

use crate::judgments::{JudgmentStore, PythonSum};

/// What makes two judgment records the same (`dedup_key`): its `event_id`, else the digest of
/// the record. An event id never equals a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Identity<'a> {
    EventId(&'a str),
    Digest(&'a [u8]),
}

/// Where one record ended up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Duplicate,
}

impl Outcome {
    /// The `Outcome` enum's value in Python.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Duplicate => "duplicate",
        }
    }
}

/// The identities of the last `cap` distinct judgments read, as 64-bit hashes (keyed by a
/// random seed per table, as Python's `hash` of a string is), the oldest forgotten first.
#[derive(Clone, Debug)]
pub struct JudgmentIds {
    cap: usize,
    hasher: RandomState,
    seen: HashSet<u64>,
    order: VecDeque<u64>,
    /// identities forgotten over the cap
    pub forgotten: u64,
}

impl JudgmentIds {
    pub fn new(cap: usize) -> Self {
        JudgmentIds {
            cap,
            hasher: RandomState::new(),
            seen: HashSet::new(),
            order: VecDeque::new(),
            forgotten: 0,
        }
    }

    /// Remember `identity`; false when it was already remembered (a duplicate).
    pub fn add(&mut self, identity: Identity<'_>) -> bool {
        let h = self.hasher.hash_one(identity);
        if !self.seen.insert(h) {
            return false;
        }
        self.order.push_back(h);
        if self.order.len() > self.cap {
            if let Some(oldest) = self.order.pop_front() {
                self.seen.remove(&oldest);
            }
            self.forgotten += 1;
        }
        true
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// What one judgment record changed in the table: `doc_id` of `query_id` holds `judges`
/// (judge, timestamp, grade; in the table's order) after it, and the query's version is
/// `version`: what the table's listener is told, and what a copy of the table takes
/// ([`JudgmentStore::mirror`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub query_id: String,
    pub doc_id: String,
    pub judges: Vec<(String, i64, f64)>,
    pub version: i64,
}

impl Change {
    /// The state of `doc_id` of `query_id` in `store` now.
    pub fn of(store: &JudgmentStore, query_id: &str, doc_id: &str) -> Self {
        Change {
            query_id: query_id.to_owned(),
            doc_id: doc_id.to_owned(),
            judges: store
                .judges_of_doc(query_id, doc_id)
                .map(|(judge, timestamp, grade)| (judge.to_owned(), timestamp, grade))
                .collect(),
            version: store.version(query_id),
        }
    }
}

/// What became of one judgment record applied by the rules: its outcome, and what it changed
/// in the table (`None`: nothing: a duplicate, the same grade again, or a grade older than the
/// judge's latest).
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    pub outcome: Outcome,
    pub change: Option<Change>,
}

/// `JudgmentRules.apply` of a record read outside a keyed topic, on `store` with the
/// identities `ids`: a duplicate by its identity changes nothing; otherwise the table takes it
/// (`JudgmentStore::apply`: the judge's later grade wins) and the record is accepted.
pub fn apply_unkeyed(
    ids: &mut JudgmentIds,
    store: &mut JudgmentStore,
    j: &JudgmentFields<'_>,
    identity: Identity<'_>,
) -> Outcome {
    if !ids.add(identity) {
        return Outcome::Duplicate;
    }
    store.apply(j.query_id, j.doc_id, j.judge, j.timestamp, j.grade, false);
    Outcome::Accepted
}

/// One judgment's fields that the table reads.
#[derive(Clone, Copy, Debug)]
pub struct JudgmentFields<'a> {
    pub query_id: &'a str,
    pub doc_id: &'a str,
    pub judge: &'a str,
    pub timestamp: i64,
    pub grade: f64,
}

/// The judgment table and the identities it was built from.
#[derive(Clone, Debug)]
pub struct JudgmentRules {
    pub store: JudgmentStore,
    pub ids: JudgmentIds,
    /// per key of a compacted judgment topic: the (query_id, doc_id, judge) its latest value set
    keys: HashMap<Vec<u8>, (String, String, String)>,
}

impl JudgmentRules {
    /// `summing`: how the reference's Python sums floats (the judges' means).
    pub fn new(max_judgment_ids: usize, summing: PythonSum) -> Self {
        JudgmentRules {
            store: JudgmentStore::with_summing(summing),
            ids: JudgmentIds::new(max_judgment_ids),
            keys: HashMap::new(),
        }
    }

    /// The outcome of one judgment record read outside a keyed topic, by its identity.
    pub fn apply(&mut self, j: &JudgmentFields<'_>, identity: Identity<'_>) -> Outcome {
        apply_unkeyed(&mut self.ids, &mut self.store, j, identity)
    }

    /// The outcome of one record of a keyed (compacted) judgment topic: its latest value is
    /// what the key says, even dated before the value it replaces.
    pub fn apply_keyed(&mut self, j: &JudgmentFields<'_>, key: &[u8]) -> Outcome {
        let now = (j.query_id, j.doc_id, j.judge);
        match self.keys.get(key) {
            Some(before) if (before.0.as_str(), before.1.as_str(), before.2.as_str()) == now => {}
            before => {
                // compaction keeps only the key's latest value: what it said before goes
                if let Some((q, d, judge)) = before {
                    let (q, d, judge) = (q.clone(), d.clone(), judge.clone());
                    self.store.delete(&q, &d, &judge);
                }
                self.keys.insert(
                    key.to_vec(),
                    (
                        j.query_id.to_owned(),
                        j.doc_id.to_owned(),
                        j.judge.to_owned(),
                    ),
                );
            }
        }
        let changed = self
            .store
            .apply(j.query_id, j.doc_id, j.judge, j.timestamp, j.grade, true);
        if changed {
            Outcome::Accepted
        } else {
            Outcome::Duplicate
        }
    }

    /// A tombstone deletes what its key's latest value set: accepted when it deleted a grade,
    /// duplicate when there was nothing to delete.
    pub fn tombstone(&mut self, key: &[u8]) -> Outcome {
        match self.keys.remove(key) {
            Some((q, d, judge)) if self.store.delete(&q, &d, &judge) => Outcome::Accepted,
            _ => Outcome::Duplicate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(doc: &str, judge: &str, timestamp: i64, grade: f64) -> JudgmentFields<'static> {
        let doc: &'static str = Box::leak(doc.to_owned().into_boxed_str());
        let judge: &'static str = Box::leak(judge.to_owned().into_boxed_str());
        JudgmentFields {
            query_id: "q",
            doc_id: doc,
            judge,
            timestamp,
            grade,
        }
    }

    #[test]
    fn identities_capped() {
        let mut ids = JudgmentIds::new(2);
        assert!(ids.add(Identity::EventId("a")));
        assert!(!ids.add(Identity::EventId("a")));
        assert!(
            ids.add(Identity::Digest(b"a")),
            "a digest never equals an event id"
        );
        assert!(ids.add(Identity::EventId("b")));
        assert_eq!((ids.len(), ids.forgotten), (2, 1));
        assert!(ids.add(Identity::EventId("a")), "forgotten: taken as new");
    }

    #[test]
    fn unkeyed_outcomes() {
        let mut rules = JudgmentRules::new(10, PythonSum::Plain);
        let first = j("d", "x", 5, 2.0);
        assert_eq!(
            rules.apply(&first, Identity::EventId("e1")),
            Outcome::Accepted
        );
        assert_eq!(
            rules.apply(&first, Identity::EventId("e1")),
            Outcome::Duplicate
        );
        // another identity, an older grade: accepted, the table keeps the newer one
        let older = j("d", "x", 1, 0.0);
        assert_eq!(
            rules.apply(&older, Identity::Digest(b"raw")),
            Outcome::Accepted
        );
        assert_eq!(rules.store.grade("q", "d"), Some(2.0));
    }

    #[test]
    fn keyed_values_and_tombstones() {
        let mut rules = JudgmentRules::new(10, PythonSum::Plain);
        assert_eq!(
            rules.apply_keyed(&j("d", "x", 5, 2.0), b"k"),
            Outcome::Accepted
        );
        // the key's latest value wins even when dated earlier
        assert_eq!(
            rules.apply_keyed(&j("d", "x", 1, 1.0), b"k"),
            Outcome::Accepted
        );
        assert_eq!(rules.store.grade("q", "d"), Some(1.0));
        assert_eq!(
            rules.apply_keyed(&j("d", "x", 1, 1.0), b"k"),
            Outcome::Duplicate
        );
        // the key now names another judgment: what it set before goes
        assert_eq!(
            rules.apply_keyed(&j("e", "x", 1, 3.0), b"k"),
            Outcome::Accepted
        );
        assert_eq!(rules.store.grade("q", "d"), None);
        assert_eq!(rules.tombstone(b"k"), Outcome::Accepted);
        assert_eq!(rules.store.grade("q", "e"), None);
        assert_eq!(rules.tombstone(b"k"), Outcome::Duplicate);
        assert_eq!(rules.tombstone(b"never"), Outcome::Duplicate);
        assert!(rules.store.is_empty());
    }
}
