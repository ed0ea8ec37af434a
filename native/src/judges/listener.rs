//! The judgment table's listener of the judge tracker (`JudgeTracker._changed` and
//! `JudgeTracker.agreement` of `streameval/judges/tracker.py`): told `(query_id, doc_id)` after
//! every change of that doc's grades, it keeps
//!
//! * the judge families (`families.rs`), each judge's registered when its grade is first read;
//! * the newest grade time read (the agreement windows end there) and the oldest ever read (a
//!   bound: no stale doc can exist while every list is newer than it plus `max_age`);
//! * the (query, doc) pairs graded by two families or more, per family the newest grade time and
//!   the mean grade (summed as the table's Python `sum`), in the order Python's dict keeps them
//!   (a pair re-graded keeps its place; one that lost its second family leaves);
//! * the agreement rows over them, per window of judgment time and `all`, cached until a change.
//!
//! Calling it again for a doc that did not change changes nothing, so a caller unsure whether
//! an apply changed the table (an older grade superseded) may call it anyway.

use indexmap::IndexMap;

use super::agreement::PairSums;
use super::families::Families;
use crate::judgments::{JudgmentStore, PythonSum};

pub const ALL: &str = "all";

/// One agreement row: the snapshot's `AgreementRow` fields.
#[derive(Clone, Debug, PartialEq)]
pub struct AgreementRow {
    pub window: String,
    pub family: String,
    pub other: String,
    pub pairs: u64,
    pub alpha: Option<f64>,
}

/// Per family of a shared pair (as its index in the families' names, sorted by name): its
/// newest grade time and mean grade.
type Shared = Vec<(usize, i64, f64)>;

#[derive(Clone, Debug)]
pub struct Listener {
    families: Families,
    /// the agreement windows of judgment time (name, size), smallest first
    windows: Vec<(String, i64)>,
    shared: IndexMap<(String, String), Shared>,
    newest: Option<i64>,
    oldest_grade: Option<i64>,
    agreement: Option<Vec<AgreementRow>>,
}

impl Listener {
    /// `windows`: the agreement windows as (name, size in ms), any order.
    pub fn new(families: Families, windows: Vec<(String, i64)>) -> Self {
        let mut windows = windows;
        windows.sort_by_key(|(_, size)| *size);
        Listener {
            families,
            windows,
            shared: IndexMap::new(),
            newest: None,
            oldest_grade: None,
            agreement: None,
        }
    }

    /// The families in the order first seen.
    pub fn families(&self) -> &[String] {
        self.families.names()
    }

    /// Two families or more seen: lists get a judged source per family.
    pub fn active(&self) -> bool {
        self.families.names().len() >= 2
    }

    /// The newest grade time read (`None`: no judgment read).
    pub fn newest(&self) -> Option<i64> {
        self.newest
    }

    /// The oldest grade time ever read (`None`: none read; Python's `inf`).
    pub fn oldest_grade(&self) -> Option<i64> {
        self.oldest_grade
    }

    /// The (query, doc) pairs graded by two families or more.
    pub fn shared_pairs(&self) -> usize {
        self.shared.len()
    }

    /// `store`'s grades of (`query_id`, `doc_id`) changed.
    pub fn changed(&mut self, store: &JudgmentStore, query_id: &str, doc_id: &str) {
        // per family (in the order first met among the doc's judges): its judges' (time, grade)
        let mut by_family: Vec<(usize, Vec<(i64, f64)>)> = Vec::new();
        for (judge, ts, grade) in store.judges_of_doc(query_id, doc_id) {
            let family = self.families.of(judge);
            match by_family.iter_mut().find(|(f, _)| *f == family) {
                Some((_, entries)) => entries.push((ts, grade)),
                None => by_family.push((family, vec![(ts, grade)])),
            }
            if self.newest.is_none_or(|n| ts > n) {
                self.newest = Some(ts);
            }
            self.oldest_grade = Some(self.oldest_grade.map_or(ts, |o| o.min(ts)));
        }
        let key = (query_id.to_owned(), doc_id.to_owned());
        if by_family.len() >= 2 {
            let summing = store.summing();
            let names = self.families.names();
            let mut grades: Shared = by_family
                .iter()
                .map(|(family, entries)| {
                    let newest = entries.iter().map(|e| e.0).max().unwrap_or(i64::MIN);
                    let mean = mean(summing, entries);
                    (*family, newest, mean)
                })
                .collect();
            grades.sort_by(|a, b| names[a.0].cmp(&names[b.0]));
            self.shared.insert(key, grades); // a pair held keeps its place, as a dict's
        } else {
            self.shared.shift_remove(&key);
        }
        self.agreement = None;
    }

    /// The agreement rows: per window (smallest first, `all` last), per pair of families (by
    /// name), over the shared pairs whose newer grade is within the window of the newest
    /// judgment; cached until the next change.
    pub fn agreement(&mut self) -> &[AgreementRow] {
        if self.agreement.is_none() {
            self.agreement = Some(self.rows());
        }
        self.agreement.as_deref().unwrap_or_default()
    }

    fn rows(&self) -> Vec<AgreementRow> {
        let newest = self.newest.unwrap_or(0);
        // window index: 0 = all, then 1 + the index in `windows`
        let mut sums: IndexMap<(usize, usize, usize), PairSums> = IndexMap::new();
        for grades in self.shared.values() {
            for (i, &(a, ta, ga)) in grades.iter().enumerate() {
                for &(b, tb, gb) in &grades[i + 1..] {
                    let when = ta.max(tb);
                    sums.entry((0, a, b)).or_default().add(ga, gb);
                    for (w, (_, size)) in self.windows.iter().enumerate() {
                        if when > newest - size {
                            sums.entry((1 + w, a, b)).or_default().add(ga, gb);
                        }
                    }
                }
            }
        }
        let names = self.families.names();
        let order = |w: usize| if w == 0 { self.windows.len() } else { w - 1 };
        let mut rows: Vec<(usize, AgreementRow)> = sums
            .into_iter()
            .map(|((w, a, b), acc)| {
                let window = if w == 0 {
                    ALL.to_owned()
                } else {
                    self.windows[w - 1].0.clone()
                };
                let row = AgreementRow {
                    window,
                    family: names[a].clone(),
                    other: names[b].clone(),
                    pairs: acc.units,
                    alpha: acc.alpha(),
                };
                (order(w), row)
            })
            .collect();
        rows.sort_by(|(x, r), (y, s)| (x, &r.family, &r.other).cmp(&(y, &s.family, &s.other)));
        rows.into_iter().map(|(_, row)| row).collect()
    }
}

/// `sum(g for _, g in entries) / len(entries)`, summed as the table's Python does.
fn mean(summing: PythonSum, entries: &[(i64, f64)]) -> f64 {
    summing.sum(entries.iter().map(|e| e.1)) / entries.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listener() -> Listener {
        let families = Families::new(vec!["llm:".to_owned()], 8);
        Listener::new(families, vec![("1h".to_owned(), 3_600_000)])
    }

    fn apply(
        l: &mut Listener,
        s: &mut JudgmentStore,
        q: &str,
        d: &str,
        judge: &str,
        t: i64,
        g: f64,
    ) {
        s.apply(q, d, judge, t, g, false);
        l.changed(s, q, d);
    }

    #[test]
    fn families_times_and_shared_pairs() {
        let (mut l, mut s) = (listener(), JudgmentStore::new());
        apply(&mut l, &mut s, "q", "d1", "alice", 5_000_000, 3.0);
        assert!(!l.active());
        assert_eq!(l.shared_pairs(), 0);
        apply(&mut l, &mut s, "q", "d1", "llm:m", 1_000, 2.0);
        apply(&mut l, &mut s, "q", "d2", "bob", 2_000, 1.0);
        apply(&mut l, &mut s, "q", "d2", "carol", 2_000, 2.0);
        apply(&mut l, &mut s, "q", "d2", "llm:m", 3_000, 0.0);
        assert!(l.active());
        assert_eq!(l.families(), &["human", "llm:m"]);
        assert_eq!(
            (l.newest(), l.oldest_grade()),
            (Some(5_000_000), Some(1_000))
        );
        assert_eq!(l.shared_pairs(), 2);
        // all: (3, 2) and (1.5, 0); 1h ends at 5_000_000: d1's newer grade (5_000_000) only
        let mut both = PairSums::default();
        both.add(3.0, 2.0);
        both.add(1.5, 0.0);
        let mut recent = PairSums::default();
        recent.add(3.0, 2.0);
        let rows = l.agreement().to_vec();
        assert_eq!(
            rows,
            vec![
                AgreementRow {
                    window: "1h".into(),
                    family: "human".into(),
                    other: "llm:m".into(),
                    pairs: 1,
                    alpha: recent.alpha(),
                },
                AgreementRow {
                    window: "all".into(),
                    family: "human".into(),
                    other: "llm:m".into(),
                    pairs: 2,
                    alpha: both.alpha(),
                },
            ]
        );
        // one unit (3, 2): n = 2, expected = 2·13 − 25 = 1, alpha = 1 − 1·1/1
        assert_eq!(rows[0].alpha, Some(0.0));
        // a pair that loses its second family leaves; calling again changes nothing
        s.delete("q", "d2", "llm:m");
        l.changed(&s, "q", "d2");
        l.changed(&s, "q", "d2");
        assert_eq!(l.shared_pairs(), 1);
        assert_eq!(l.agreement()[1].pairs, 1);
    }
}
