//! The judgment table (`streameval/join/judgments.py`, `JudgmentStore`): explicit graded labels
//! by (query_id, doc_id), one latest grade per judge.
//!
//! A doc's judged grade is the mean over its judges of each judge's latest grade (latest by
//! event time; on a tie, the one read last), summed in the order the judges were first read, as
//! Python's dict does. The pool of a query, every judged doc's grade sorted descending, is kept
//! until the query's judgments change: the ideal ordering of `ideal = "pool"`.

use crate::hash::Map;

/// One judge's latest grade of a doc.
#[derive(Clone, Debug, PartialEq)]
struct Grade {
    judge: String,
    timestamp: i64,
    grade: f64,
}

#[derive(Clone, Debug, Default)]
struct Query {
    /// the store's change stamp when this query's judgments last changed
    version: u64,
    /// doc_id -> its judges' grades, in the order judges were first read; the docs in the order
    /// they were first judged (a doc deleted and judged again goes last, as in a Python dict)
    docs: Vec<(String, Vec<Grade>)>,
    index: Map<String, usize>,
    /// the mean grade of each judged doc, made on demand
    means: Option<Vec<f64>>,
    /// the means sorted descending, made on demand
    pool: Option<Vec<f64>>,
}

/// How the Python running the reference sums floats: `sum()` adds left to right up to
/// CPython 3.11; from 3.12 it compensates the rounding errors (Neumaier's improved
/// Kahan–Babuška algorithm), which can change the last bits of a mean of three or more judges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PythonSum {
    /// CPython 3.11: `((0 + g1) + g2) + ...`
    #[default]
    Plain,
    /// CPython 3.12 and later (`builtin_sum` with its `CompensatedSum`)
    Compensated,
}

impl PythonSum {
    /// The sum of `values` as Python's `sum(values)` of floats (start: the integer 0).
    pub fn sum(self, values: impl Iterator<Item = f64>) -> f64 {
        let mut values = values;
        // `0 + g1`: the int start added to the first float (turns a -0.0 into 0.0)
        let Some(first) = values.next() else {
            return 0.0;
        };
        let mut hi = 0.0 + first;
        match self {
            PythonSum::Plain => {
                for x in values {
                    hi += x;
                }
                hi
            }
            PythonSum::Compensated => {
                let mut lo = 0.0;
                for x in values {
                    let t = hi + x;
                    if hi.abs() >= x.abs() {
                        lo += (hi - t) + x;
                    } else {
                        lo += (x - t) + hi;
                    }
                    hi = t;
                }
                // CPython: keep the sign of a negative result, and no NaN from an overflow
                if lo != 0.0 && lo.is_finite() {
                    hi + lo
                } else {
                    hi
                }
            }
        }
    }
}

/// The mean of the grades, as Python's `sum(...) / len(...)`.
fn mean(judges: &[Grade], summing: PythonSum) -> f64 {
    summing.sum(judges.iter().map(|g| g.grade)) / judges.len() as f64
}

impl Query {
    fn changed(&mut self, stamp: u64) {
        self.means = None;
        self.pool = None;
        self.version = stamp;
    }

    /// The docs' grades, in the docs' order (by [`Query::index`]): one float per doc, no doc
    /// id cloned; kept until the query changes.
    fn means(&mut self, summing: PythonSum) -> &[f64] {
        let docs = &self.docs;
        self.means
            .get_or_insert_with(|| docs.iter().map(|(_, j)| mean(j, summing)).collect())
    }

    fn pool(&mut self, summing: PythonSum) -> &[f64] {
        if self.pool.is_none() {
            // sorted(means.values(), reverse=True): stable, over the docs' order
            let mut pool = self.means(summing).to_vec();
            pool.sort_by(|a, b| b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal));
            self.pool = Some(pool);
        }
        self.pool.as_deref().unwrap_or_default()
    }
}

/// A judged query's grades by doc, borrowed from the table (`JudgmentStore.grades`, without a
/// map of its own: the query's index of docs and its means in the docs' order).
#[derive(Clone, Copy, Debug)]
pub struct Grades<'a> {
    index: &'a Map<String, usize>,
    means: &'a [f64],
}

impl Grades<'_> {
    /// The judged grade of `doc_id` (`None`: not judged).
    #[inline]
    pub fn get(&self, doc_id: &str) -> Option<f64> {
        self.index.get(doc_id).map(|&at| self.means[at])
    }

    pub fn len(&self) -> usize {
        self.means.len()
    }

    pub fn is_empty(&self) -> bool {
        self.means.is_empty()
    }
}

impl PartialEq for Grades<'_> {
    /// The same docs with the same grades (bit for bit), whatever their order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.index.iter().all(|(doc, &at)| {
                other
                    .get(doc)
                    .is_some_and(|g| g.to_bits() == self.means[at].to_bits())
            })
    }
}

pub type JudgesOf = Vec<(String, Vec<(String, i64, f64)>)>;

/// The judgment table.
#[derive(Clone, Debug, Default)]
pub struct JudgmentStore {
    queries: Map<String, Query>,
    entries: usize,
    stamp: u64,
    summing: PythonSum,
}

impl JudgmentStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// A table whose means are summed as the given Python version's `sum` does.
    pub fn with_summing(summing: PythonSum) -> Self {
        JudgmentStore {
            summing,
            ..Self::default()
        }
    }

    /// Record a judgment; false when it changes nothing (the same grade and time again). The
    /// judge's later grade (by event time) wins; with `replace` this one wins whatever its time
    /// (the latest value of a key in a compacted topic). An older grade by the same judge is
    /// superseded: true, and nothing changes (as Python answers).
    pub fn apply(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judge: &str,
        timestamp: i64,
        grade: f64,
        replace: bool,
    ) -> bool {
        let stamp = self.stamp;
        let query = self
            .queries
            .entry(query_id.to_owned())
            .or_insert_with(|| Query {
                version: stamp,
                ..Query::default()
            });
        let at = match query.index.get(doc_id) {
            Some(&at) => at,
            None => {
                query.index.insert(doc_id.to_owned(), query.docs.len());
                query.docs.push((doc_id.to_owned(), Vec::new()));
                query.docs.len() - 1
            }
        };
        let judges = &mut query.docs[at].1;
        match judges.iter_mut().find(|g| g.judge == judge) {
            Some(previous) => {
                // Python compares the (timestamp, grade) tuples: -0.0 == 0.0 there too
                if previous.timestamp == timestamp && previous.grade == grade {
                    return false;
                }
                if timestamp < previous.timestamp && !replace {
                    return true;
                }
                previous.timestamp = timestamp;
                previous.grade = grade;
            }
            None => {
                self.entries += 1;
                judges.push(Grade {
                    judge: judge.to_owned(),
                    timestamp,
                    grade,
                });
            }
        }
        self.stamp += 1;
        query.changed(self.stamp);
        true
    }

    /// Forget `judge`'s grade of `doc_id` for `query_id` (a tombstone in a compacted judgment
    /// topic); false when there was none.
    pub fn delete(&mut self, query_id: &str, doc_id: &str, judge: &str) -> bool {
        let Some(query) = self.queries.get_mut(query_id) else {
            return false;
        };
        let Some(&at) = query.index.get(doc_id) else {
            return false;
        };
        let judges = &mut query.docs[at].1;
        let Some(which) = judges.iter().position(|g| g.judge == judge) else {
            return false;
        };
        judges.remove(which); // the others keep their order, as a dict's pop leaves them
        self.entries -= 1;
        self.stamp += 1;
        if judges.is_empty() {
            query.docs.remove(at);
            query.index.remove(doc_id);
            for (_, i) in query.index.iter_mut() {
                if *i > at {
                    *i -= 1;
                }
            }
            if query.docs.is_empty() {
                self.queries.remove(query_id);
                return true;
            }
        }
        query.changed(self.stamp);
        true
    }

    /// Make `doc_id` of `query_id` hold exactly `judges` (judge, timestamp, grade), in that
    /// order (none: the doc is no longer judged), and give the query `version` (-1: it has no
    /// judgment left): a copy of another table's doc after it changed, so that this table
    /// equals that one, its versions included (the native engine's core and the Python
    /// `JudgmentStore`, each told the changes the other makes). A doc judged anew goes last,
    /// and the docs keep their order otherwise, as in the table copied. One change at a time:
    /// the change stamp becomes `version`, or, for a query emptied (a delete: -1), grows by
    /// one as the other table's did, so the versions the two give next are the same.
    pub fn mirror(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judges: &[(String, i64, f64)],
        version: i64,
    ) {
        if let Some(query) = self.queries.get_mut(query_id) {
            if let Some(&at) = query.index.get(doc_id) {
                self.entries -= query.docs[at].1.len();
                if judges.is_empty() {
                    query.docs.remove(at);
                    query.index.remove(doc_id);
                    for (_, i) in query.index.iter_mut() {
                        if *i > at {
                            *i -= 1;
                        }
                    }
                }
            }
        }
        if version < 0 {
            // the query has no judgment left (the doc above was its last)
            if let Some(query) = self.queries.remove(query_id) {
                self.entries -= query.docs.iter().map(|(_, j)| j.len()).sum::<usize>();
            }
            self.stamp += 1;
            return;
        }
        let query = self.queries.entry(query_id.to_owned()).or_default();
        if !judges.is_empty() {
            let grades: Vec<Grade> = judges
                .iter()
                .map(|(judge, timestamp, grade)| Grade {
                    judge: judge.clone(),
                    timestamp: *timestamp,
                    grade: *grade,
                })
                .collect();
            self.entries += grades.len();
            match query.index.get(doc_id) {
                Some(&at) => query.docs[at].1 = grades,
                None => {
                    query.index.insert(doc_id.to_owned(), query.docs.len());
                    query.docs.push((doc_id.to_owned(), grades));
                }
            }
        }
        let version = version as u64;
        query.changed(version);
        self.stamp = self.stamp.max(version);
    }

    /// A stamp that changes whenever `query_id`'s judgments change (-1: it has none).
    pub fn version(&self, query_id: &str) -> i64 {
        self.queries.get(query_id).map_or(-1, |q| q.version as i64)
    }

    /// The judged grade of each judged doc of `query_id` (`None`: the query has none).
    pub fn grades(&mut self, query_id: &str) -> Option<Map<String, f64>> {
        let summing = self.summing;
        let query = self.queries.get_mut(query_id)?;
        query.means(summing);
        let means = query.means.as_deref()?;
        Some(
            query
                .docs
                .iter()
                .map(|(d, _)| d.clone())
                .zip(means.iter().copied())
                .collect(),
        )
    }

    /// The judged grade of one doc (`None`: not judged).
    pub fn grade(&self, query_id: &str, doc_id: &str) -> Option<f64> {
        let query = self.queries.get(query_id)?;
        let at = *query.index.get(doc_id)?;
        Some(mean(&query.docs[at].1, self.summing))
    }

    /// The grades of every judged doc of `query_id`, best first (empty when none).
    pub fn pool(&mut self, query_id: &str) -> &[f64] {
        match self.queries.get_mut(query_id) {
            Some(query) => query.pool(self.summing),
            None => &[],
        }
    }

    /// The means and the pool of `query_id` at once (`None`: the query has no judgment).
    pub fn grades_and_pool(&mut self, query_id: &str) -> Option<(Grades<'_>, &[f64])> {
        let query = self.queries.get_mut(query_id)?;
        query.pool(self.summing);
        let grades = Grades {
            index: &query.index,
            means: query.means.as_deref()?,
        };
        Some((grades, query.pool.as_deref()?))
    }

    /// Per judged doc of `query_id` (in the order first judged), each judge's latest
    /// (judge, timestamp, grade).
    pub fn judges_of(&self, query_id: &str) -> JudgesOf {
        self.queries.get(query_id).map_or_else(Vec::new, |q| {
            q.docs
                .iter()
                .map(|(doc, judges)| {
                    let judges = judges
                        .iter()
                        .map(|g| (g.judge.clone(), g.timestamp, g.grade))
                        .collect();
                    (doc.clone(), judges)
                })
                .collect()
        })
    }

    /// The judges of one doc, borrowed: each judge's latest (judge, timestamp, grade), in the
    /// order the judges were first read (none: the doc is not judged). The judge tracker's
    /// listener reads this after every change of the doc (`crate::judges`).
    pub fn judges_of_doc<'a>(
        &'a self,
        query_id: &str,
        doc_id: &str,
    ) -> impl Iterator<Item = (&'a str, i64, f64)> + 'a {
        let judges: &'a [Grade] = self
            .queries
            .get(query_id)
            .and_then(|q| q.index.get(doc_id).map(|&at| q.docs[at].1.as_slice()))
            .unwrap_or(&[]);
        judges
            .iter()
            .map(|g| (g.judge.as_str(), g.timestamp, g.grade))
    }

    /// Each judged doc of `query_id` (in the order first judged) with its newest grade time.
    pub fn newest_per_doc<'a>(
        &'a self,
        query_id: &str,
    ) -> impl Iterator<Item = (&'a str, i64)> + 'a {
        let docs: &'a [(String, Vec<Grade>)] = self
            .queries
            .get(query_id)
            .map_or(&[], |q| q.docs.as_slice());
        docs.iter().map(|(doc, judges)| {
            let newest = judges.iter().map(|g| g.timestamp).max().unwrap_or(i64::MIN);
            (doc.as_str(), newest)
        })
    }

    /// How this table's means are summed (as the reference's Python `sum`).
    pub fn summing(&self) -> PythonSum {
        self.summing
    }

    /// The number of (query, doc, judge) grades held.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_of_latest_grades_per_judge() {
        let mut s = JudgmentStore::new();
        assert!(s.apply("q", "d", "alice", 10, 3.0, false));
        assert!(s.apply("q", "d", "bob", 10, 1.0, false));
        assert_eq!(s.grade("q", "d"), Some(2.0));
        // an older grade by alice changes nothing, but is not "nothing new"
        assert!(s.apply("q", "d", "alice", 5, 0.0, false));
        assert_eq!(s.grade("q", "d"), Some(2.0));
        // the same grade and time again: false
        assert!(!s.apply("q", "d", "alice", 10, 3.0, false));
        // replace wins whatever its time
        assert!(s.apply("q", "d", "alice", 5, 0.0, true));
        assert_eq!(s.grade("q", "d"), Some(0.5));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn python_sums() {
        let tenths = || std::iter::repeat_n(0.1, 10);
        // CPython 3.11: 0.9999999999999999; 3.12 and later: 1.0 (its documented example)
        assert_eq!(PythonSum::Plain.sum(tenths()), 0.9999999999999999);
        assert_eq!(PythonSum::Compensated.sum(tenths()), 1.0);
        let big = || [1e100, 1.0, -1e100].into_iter();
        assert_eq!(PythonSum::Plain.sum(big()), 0.0);
        assert_eq!(PythonSum::Compensated.sum(big()), 1.0);
        for summing in [PythonSum::Plain, PythonSum::Compensated] {
            // the int start: sum([-0.0]) is 0.0, and sum([]) is 0
            assert!(summing.sum([-0.0].into_iter()).is_sign_positive());
            assert_eq!(summing.sum(std::iter::empty()), 0.0);
            assert_eq!(summing.sum([-1.0, -2.0].into_iter()), -3.0);
        }
        let mut s = JudgmentStore::with_summing(PythonSum::Compensated);
        for (judge, grade) in [("a", 1e100), ("b", 1.0), ("c", -1e100)] {
            s.apply("q", "d", judge, 1, grade, false);
        }
        assert_eq!(s.grade("q", "d"), Some(1.0 / 3.0));
    }

    /// The table's state as `judges_of` and the versions show it.
    fn state(s: &JudgmentStore, queries: &[&str]) -> Vec<(i64, JudgesOf)> {
        queries
            .iter()
            .map(|q| (s.version(q), s.judges_of(q)))
            .collect()
    }

    #[test]
    fn mirror_copies_each_change() {
        // every change of a table, copied doc by doc into another: the two stay equal
        let mut a = JudgmentStore::new();
        let mut b = JudgmentStore::new();
        let copy = |a: &JudgmentStore, b: &mut JudgmentStore, q: &str, d: &str| {
            let judges = a
                .judges_of(q)
                .into_iter()
                .find(|(doc, _)| doc == d)
                .map_or_else(Vec::new, |(_, j)| j);
            b.mirror(q, d, &judges, a.version(q));
        };
        let steps: &[(&str, &str, &str, i64, f64, bool)] = &[
            ("q", "a", "j1", 1, 1.0, false),
            ("q", "b", "j1", 1, 3.0, false),
            ("q", "a", "j2", 2, 2.0, false),
            ("p", "a", "j1", 1, 1.0, false),
            ("q", "a", "j1", 5, 0.5, false),
            ("q", "c", "j1", 1, 2.0, false),
        ];
        for &(q, d, j, t, g, replace) in steps {
            assert!(a.apply(q, d, j, t, g, replace));
            copy(&a, &mut b, q, d);
        }
        assert_eq!(state(&a, &["q", "p"]), state(&b, &["q", "p"]));
        // a doc deleted (its order: c after the others), judged again (last), a query emptied
        for (q, d, j) in [("q", "b", "j1"), ("q", "a", "j1"), ("p", "a", "j1")] {
            assert!(a.delete(q, d, j));
            copy(&a, &mut b, q, d);
            assert_eq!(state(&a, &["q", "p"]), state(&b, &["q", "p"]));
            // the change stamps too (a query emptied included): the versions given next agree
            assert_eq!(b.stamp, a.stamp);
        }
        a.apply("q", "b", "j3", 9, 1.5, false);
        copy(&a, &mut b, "q", "b");
        assert_eq!(state(&a, &["q", "p"]), state(&b, &["q", "p"]));
        let docs: Vec<String> = b.judges_of("q").into_iter().map(|(d, _)| d).collect();
        assert_eq!(docs, vec!["a", "c", "b"]);
        assert_eq!(b.version("p"), -1);
        assert_eq!((a.len(), b.len()), (3, 3));
        assert_eq!(a.grades_and_pool("q"), b.grades_and_pool("q"));
    }

    #[test]
    fn pool_versions_and_delete() {
        let mut s = JudgmentStore::new();
        assert_eq!(s.version("q"), -1);
        s.apply("q", "a", "j", 1, 1.0, false);
        s.apply("q", "b", "j", 1, 3.0, false);
        s.apply("q", "c", "j", 1, 2.0, false);
        assert_eq!(s.pool("q"), &[3.0, 2.0, 1.0]);
        let v = s.version("q");
        assert_eq!(v, 3);
        s.apply("other", "a", "j", 1, 1.0, false);
        assert_eq!(
            s.version("q"),
            v,
            "another query's change keeps this version"
        );
        assert!(s.delete("q", "b", "j"));
        assert!(!s.delete("q", "b", "j"));
        assert!(!s.delete("nope", "b", "j"));
        assert_eq!(s.pool("q"), &[2.0, 1.0]);
        assert_eq!(s.version("q"), 5);
        let (grades, pool) = s.grades_and_pool("q").unwrap();
        assert_eq!(grades.len(), 2);
        assert_eq!(pool, &[2.0, 1.0]);
        // the docs keep their order; a deleted doc judged again goes last
        s.apply("q", "b", "j", 1, 3.0, false);
        let docs: Vec<String> = s.judges_of("q").into_iter().map(|(d, _)| d).collect();
        assert_eq!(docs, vec!["a", "c", "b"]);
        assert!(s.delete("other", "a", "j"));
        assert_eq!(s.version("other"), -1);
        assert!(s.grades("other").is_none());
        assert_eq!(s.len(), 3);
    }
}
