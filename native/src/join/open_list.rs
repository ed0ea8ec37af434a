//! One served result list while it can still gain interactions, as `OpenList` of
//! `streameval/join/open_lists.py`, laid out for memory (issue 32: ≤ 256 B per open 10-result
//! list, whole process). Its strings (request id, query id, doc ids, labels, teams) are one boxed
//! buffer, each string after its length (`packed.rs`); the segment and the source are numbers of
//! tables held once; what only an interacted list needs is one box, absent until a click.

use crate::decode::{Click, Impression};
use crate::hash::{set_with_capacity, Set};
use crate::join::grades::py_max;
use crate::join::key::DedupKey;
use crate::join::packed::{put, put_str, Cursor};
use crate::join::segments::SegmentId;
use crate::score::ranking::same;

/// A doc of a grade: the position of its first listing, or one the list did not show.
#[derive(Debug, Clone, PartialEq)]
pub enum DocRef {
    Listed(u16),
    Unlisted(Box<str>),
}

/// What an interacted list keeps (Python: `grades`, `interaction_keys`, `clicked_docs`).
#[derive(Debug, Clone, Default)]
pub struct Interactions {
    /// the implicit grade per interacted doc, in the order first interacted (a dict's order)
    pub grades: Vec<(DocRef, f64)>,
    pub keys: Keys,
    /// interleaved lists only: the docs with a `click` (a set; here in first-click order)
    pub clicked_docs: Option<Vec<DocRef>>,
}

/// The interaction keys of one list (`interaction_keys`, a set): a vector searched in order
/// while small (a list gains a few interactions: no hash, no table to allocate), a hash set
/// once it holds [`Keys::FEW`] (many interactions on one list, hostile or not, stay O(1) each).
#[derive(Debug, Clone)]
pub enum Keys {
    Few(Vec<DedupKey>),
    Many(Set<DedupKey>),
}

impl Default for Keys {
    fn default() -> Self {
        Keys::Few(Vec::new())
    }
}

impl Keys {
    pub const FEW: usize = 8;

    /// Add `key`; false when it is there already.
    pub fn insert(&mut self, key: &DedupKey) -> bool {
        match self {
            Keys::Few(v) if v.contains(key) => false,
            Keys::Few(v) if v.len() < Self::FEW => {
                v.push(key.clone());
                true
            }
            Keys::Few(v) => {
                let mut set = set_with_capacity(2 * Self::FEW);
                set.extend(v.drain(..));
                set.insert(key.clone());
                *self = Keys::Many(set);
                true
            }
            Keys::Many(set) => !set.contains(key) && set.insert(key.clone()),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Keys::Few(v) => v.len(),
            Keys::Many(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every key, in no particular order (Python makes a set of them).
    pub fn iter(&self) -> Box<dyn Iterator<Item = &DedupKey> + '_> {
        match self {
            Keys::Few(v) => Box::new(v.iter()),
            Keys::Many(s) => Box::new(s.iter()),
        }
    }

    /// The bytes held beyond the enum itself (capacities).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Keys::Few(v) => v.capacity() * std::mem::size_of::<DedupKey>(),
            Keys::Many(s) => s.capacity() * (std::mem::size_of::<DedupKey>() + 1),
        }
    }
}

const CLICKED: u8 = 1;
const COUNTED_BEFORE: u8 = 2;
const HAS_TEAMS: u8 = 4;
/// handed to the early judged pass (`Joiner::passed`)
const PASSED: u8 = 8;

#[derive(Debug, Clone)]
pub struct OpenList {
    /// request id, query id, n docs, docs, n labels, (key, value) per label, then, with teams,
    /// per position 0 (None) or 1 + the team's length and the team
    buf: Box<str>,
    pub timestamp: i64,
    /// arrival order among lists of the same time (the deadlines' tie-break)
    pub seq: u64,
    pub interactions: Option<Box<Interactions>>,
    pub segment: SegmentId,
    pub source: u32,
    /// 0: None (a rank is a position ≥ 1 or a listed index + 1)
    first_click_rank: u32,
    flags: u8,
}

impl OpenList {
    pub fn new(
        impression: &Impression,
        segment: SegmentId,
        counted_before: bool,
        source: u32,
        seq: u64,
    ) -> Self {
        let e = impression;
        let mut size = e.request_id.len() + e.query_id.len() + 8;
        size += e.doc_ids.iter().map(|d| d.len() + 1).sum::<usize>();
        size += e
            .labels
            .iter()
            .map(|(k, v)| k.len() + v.len() + 2)
            .sum::<usize>();
        let mut buf = String::with_capacity(size);
        put_str(&mut buf, &e.request_id);
        put_str(&mut buf, &e.query_id);
        put(&mut buf, e.doc_ids.len());
        for d in &e.doc_ids {
            put_str(&mut buf, d);
        }
        put(&mut buf, e.labels.len());
        for (k, v) in &e.labels {
            put_str(&mut buf, k);
            put_str(&mut buf, v);
        }
        let mut flags = if counted_before { COUNTED_BEFORE } else { 0 };
        if let Some(teams) = &e.teams {
            flags |= HAS_TEAMS;
            put(&mut buf, teams.len());
            for t in teams {
                match t {
                    None => put(&mut buf, 0),
                    Some(t) => {
                        put(&mut buf, t.len() + 1);
                        buf.push_str(t);
                    }
                }
            }
        }
        OpenList {
            buf: buf.into_boxed_str(),
            timestamp: e.timestamp,
            seq,
            interactions: None,
            segment,
            source,
            first_click_rank: 0,
            flags,
        }
    }

    pub fn request_id(&self) -> &str {
        Cursor(&self.buf).str()
    }

    fn after_ids(&self) -> Cursor<'_> {
        let mut c = Cursor(&self.buf);
        c.str();
        c.str();
        c
    }

    pub fn query_id(&self) -> &str {
        let mut c = Cursor(&self.buf);
        c.str();
        c.str()
    }

    pub fn doc_ids(&self) -> Vec<&str> {
        let mut c = self.after_ids();
        let n = c.num();
        (0..n).map(|_| c.str()).collect()
    }

    /// The position of the first listing of `doc_id`.
    pub fn index_of(&self, doc_id: &str) -> Option<usize> {
        let mut c = self.after_ids();
        let n = c.num();
        (0..n).find(|_| same(c.str(), doc_id))
    }

    pub fn labels(&self) -> Vec<(&str, &str)> {
        let mut c = self.after_ids();
        let n = c.num();
        for _ in 0..n {
            c.str();
        }
        let n = c.num();
        (0..n).map(|_| (c.str(), c.str())).collect()
    }

    pub fn teams(&self) -> Option<Vec<Option<&str>>> {
        if self.flags & HAS_TEAMS == 0 {
            return None;
        }
        let mut c = self.after_ids();
        let n = c.num();
        for _ in 0..n {
            c.str();
        }
        let n = c.num();
        for _ in 0..2 * n {
            c.str();
        }
        let n = c.num();
        Some(
            (0..n)
                .map(|_| match c.num() {
                    0 => None,
                    len => Some(c.bytes(len - 1)),
                })
                .collect(),
        )
    }

    pub fn doc(&self, doc: &DocRef) -> String {
        match doc {
            DocRef::Listed(i) => self.doc_ids()[*i as usize].to_owned(),
            DocRef::Unlisted(d) => d.to_string(),
        }
    }

    pub fn clicked(&self) -> bool {
        self.flags & CLICKED != 0
    }

    /// Its results name their team (interleaving).
    pub fn has_teams(&self) -> bool {
        self.flags & HAS_TEAMS != 0
    }

    pub fn counted_before(&self) -> bool {
        self.flags & COUNTED_BEFORE != 0
    }

    pub fn first_click_rank(&self) -> Option<u32> {
        (self.first_click_rank != 0).then_some(self.first_click_rank)
    }

    /// `OpenList.interacted`: an interaction was attached.
    /// Handed to the early judged pass (`Joiner::passed`).
    pub fn passed(&self) -> bool {
        self.flags & PASSED != 0
    }

    pub fn set_passed(&mut self) {
        self.flags |= PASSED;
    }

    pub fn interacted(&self) -> bool {
        self.interactions.is_some()
    }

    /// Add an interaction; false if the same one (`key`) was already attached.
    pub fn attach(&mut self, click: &Click, key: &DedupKey, grade: f64) -> bool {
        let listed = self.index_of(&click.doc_id);
        let has_teams = self.flags & HAS_TEAMS != 0;
        let inter = self.interactions.get_or_insert_with(Box::default);
        if !inter.keys.insert(key) {
            return false;
        }
        // (a list holds at most MAX_RESULTS = 1000 docs: a position fits 16 bits; past them a
        // doc would be named by its string, the same doc always the same way)
        let doc = match listed.and_then(|i| u16::try_from(i).ok()) {
            Some(i) => DocRef::Listed(i),
            None => DocRef::Unlisted(click.doc_id.as_str().into()),
        };
        match inter.grades.iter_mut().find(|(d, _)| *d == doc) {
            // a doc takes its best: max(grade, old)
            Some((_, old)) => *old = py_max(grade, *old),
            None => inter.grades.push((doc.clone(), grade)),
        }
        if click.action == "click" {
            self.flags |= CLICKED;
            if has_teams {
                let clicked = inter.clicked_docs.get_or_insert_with(Vec::new);
                if !clicked.contains(&doc) {
                    clicked.push(doc);
                }
            }
            // a result we did not see listed: trust its position
            let rank = match listed {
                Some(i) => Some(i as u32 + 1),
                None => click.position.map(|p| p as u32),
            };
            if let Some(rank) = rank {
                if self.first_click_rank == 0 || rank < self.first_click_rank {
                    self.first_click_rank = rank;
                }
            }
        }
        true
    }

    /// The bytes this list holds, itself included (capacities, not lengths; the allocator's own
    /// rounding and headers not included).
    pub fn heap_bytes(&self) -> usize {
        let mut n = std::mem::size_of::<Self>() + self.buf.len();
        if let Some(i) = &self.interactions {
            n += std::mem::size_of::<Interactions>();
            n += i.grades.capacity() * std::mem::size_of::<(DocRef, f64)>();
            n += i.keys.heap_bytes();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn impression(docs: &[&str], teams: Option<Vec<Option<&str>>>) -> Impression {
        Impression {
            request_id: "f811bb49-00000002".into(),
            timestamp: 1_767_225_600_196,
            doc_ids: docs.iter().map(|d| d.to_string()).collect(),
            query: Some("sofa".into()),
            query_id: "q00003".into(),
            labels: vec![
                ("ranker".into(), "bm25-v1".into()),
                ("arm".into(), "control".into()),
            ],
            event_id: None,
            teams: teams.map(|t| t.into_iter().map(|x| x.map(String::from)).collect()),
        }
    }

    fn click(doc: &str, action: &str, dwell: Option<f64>, position: Option<i64>) -> Click {
        Click {
            request_id: "f811bb49-00000002".into(),
            doc_id: doc.into(),
            timestamp: 1_767_225_602_958,
            action: action.into(),
            dwell_ms: dwell,
            position,
            event_id: None,
        }
    }

    fn key(s: &str) -> DedupKey {
        DedupKey::Id(s.into())
    }

    #[test]
    fn the_buffer_gives_back_every_string() {
        let long = "é".repeat(200); // a length over 63 bytes: two length bytes
        let docs = ["d3-10", "", long.as_str(), "d3-10"];
        let teams = Some(vec![Some("a"), None, Some(""), Some("b")]);
        let l = OpenList::new(&impression(&docs, teams), SegmentId::OTHER, true, 7, 3);
        assert_eq!(l.request_id(), "f811bb49-00000002");
        assert_eq!(l.query_id(), "q00003");
        assert_eq!(l.doc_ids(), docs.to_vec());
        assert_eq!(l.labels(), vec![("ranker", "bm25-v1"), ("arm", "control")]);
        assert_eq!(l.teams(), Some(vec![Some("a"), None, Some(""), Some("b")]));
        assert_eq!(l.index_of("d3-10"), Some(0));
        assert_eq!(l.index_of(&long), Some(2));
        assert_eq!(l.index_of("nope"), None);
        assert!(l.counted_before() && !l.clicked() && !l.interacted());
        assert_eq!((l.source, l.seq, l.first_click_rank()), (7, 3, None));
        let plain = OpenList::new(&impression(&[], None), SegmentId::OTHER, false, 0, 1);
        assert_eq!(plain.teams(), None);
        assert!(plain.doc_ids().is_empty() && !plain.counted_before());
    }

    #[test]
    fn attach_keeps_the_best_grade_the_first_rank_and_clicked_docs_when_interleaved() {
        let docs = ["a", "b", "c"];
        let mut l = OpenList::new(
            &impression(&docs, Some(vec![Some("x"), Some("y"), None])),
            SegmentId::OTHER,
            false,
            0,
            1,
        );
        // (doc, action, position, key, grade, attached, first rank after)
        let table = [
            ("c", "dwell", None, "k1", 2.0, true, None),
            ("c", "click", None, "k2", 1.0, true, Some(3)),
            ("c", "click", None, "k2", 5.0, false, Some(3)),
            ("z", "click", Some(2), "k3", 1.0, true, Some(2)),
            ("z", "click", None, "k4", 0.5, true, Some(2)),
            ("a", "click", Some(9), "k5", 1.0, true, Some(1)),
        ];
        for (doc, action, pos, k, grade, attached, rank) in table {
            assert_eq!(
                l.attach(&click(doc, action, None, pos), &key(k), grade),
                attached
            );
            assert_eq!(l.first_click_rank(), rank, "{k}");
        }
        let i = l.interactions.as_ref().unwrap();
        let grades: Vec<(String, f64)> = i.grades.iter().map(|(d, g)| (l.doc(d), *g)).collect();
        assert_eq!(
            grades,
            vec![("c".into(), 2.0), ("z".into(), 1.0), ("a".into(), 1.0)]
        );
        let clicked: Vec<String> = i
            .clicked_docs
            .as_ref()
            .unwrap()
            .iter()
            .map(|d| l.doc(d))
            .collect();
        assert_eq!(clicked, vec!["c", "z", "a"]);
        assert_eq!(i.keys.len(), 5);
        assert!(l.clicked() && l.interacted());
    }

    #[test]
    fn keys_stay_a_set_past_the_few() {
        let mut keys = Keys::default();
        let n = 3 * Keys::FEW;
        for i in 0..n {
            assert!(keys.insert(&key(&i.to_string())), "{i}");
            assert!(!keys.insert(&key(&i.to_string())), "{i} again");
            assert!(!keys.insert(&key("0")), "the first again at {i}");
        }
        assert!(matches!(keys, Keys::Many(_)));
        assert_eq!(keys.len(), n);
        let mut all: Vec<String> = keys
            .iter()
            .map(|k| match k {
                DedupKey::Id(s) => s.to_string(),
                DedupKey::Digest(_) => unreachable!(),
            })
            .collect();
        all.sort_by_key(|s| s.parse::<usize>().unwrap());
        assert_eq!(all, (0..n).map(|i| i.to_string()).collect::<Vec<_>>());
        assert!(keys.insert(&DedupKey::Digest([0; 16])));
    }

    #[test]
    fn no_clicked_docs_without_teams_and_not_clicked_by_other_actions() {
        let mut l = OpenList::new(&impression(&["a"], None), SegmentId::OTHER, false, 0, 1);
        assert!(l.attach(&click("a", "purchase", None, None), &key("p"), 3.0));
        assert!(!l.clicked() && l.first_click_rank().is_none());
        assert!(l.attach(&click("a", "click", None, None), &key("c"), 1.0));
        let i = l.interactions.as_ref().unwrap();
        assert!(i.clicked_docs.is_none());
        assert_eq!(i.grades, vec![(DocRef::Listed(0), 3.0)]);
    }

    #[test]
    fn a_ten_result_list_is_small() {
        // a list of the simulator: 17-byte request id, 10 docs of ~6 bytes, two labels
        let docs = [
            "d201-6", "d201-12", "d201-2", "d201-21", "d201-17", "d201-8", "d201-18", "d201-1",
            "d201-10", "d201-7",
        ];
        let l = OpenList::new(&impression(&docs, None), SegmentId::OTHER, false, 0, 1);
        let strings = 17 + 6 + docs.iter().map(|d| d.len()).sum::<usize>() + 6 + 7 + 3 + 7;
        assert_eq!(
            l.buf.len(),
            strings + 2 + 10 + 2 + 4,
            "one length byte per string and count"
        );
        assert!(std::mem::size_of::<OpenList>() <= 56);
        assert!(l.heap_bytes() <= 56 + 140, "{}", l.heap_bytes());
    }
}
