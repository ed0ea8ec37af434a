//! The judge tracker's per-list bookkeeping (`JudgeTracker.fold`, `evict`, `reset` and the
//! figures of `view` in `streameval/judges/tracker.py`; DESIGN §12, docs/judges.md), with its
//! listener (`listener.rs`) beside it.
//!
//! Per finalized list:
//!
//! * **the head**: once per minute of impression time (a list in another minute than the one the
//!   head was decided for), the previous minute's per-query list counts go into the Space-Saving
//!   sketch in the order the queries were first seen, and the head is decided afresh: the sketch's
//!   `head_queries` largest counters. A list not `counted_before` (not a re-read) is counted in
//!   its minute;
//! * **freshness** (lists the windows take, `windowed`): the judged docs shown in the top max(ks)
//!   (`round(coverage@max(k) × shown)`, from the judged source's coverage) and those whose newest
//!   grade is older than `max_age` at the impression, looked at only when some grade ever read is
//!   that old and the query's oldest newest-grade is;
//! * **coverage by query frequency**: the list counted for its class (head or tail) and its
//!   judged coverage@k added per k (skipped when no judged doc is shown: coverage 0 at every k).
//!
//! What it reads of a list is [`Finalized`]; of the judgment table, per query, the newest grade
//! time of each judged doc (cached until the query's version changes).

use super::buckets::{Buckets, WindowFigures, HEAD_AT};
use super::families::Families;
use super::frequency::SpaceSaving;
use super::listener::{AgreementRow, Listener};
use crate::hash::{IndexMap, Map, Set};
use crate::judgments::JudgmentStore;

/// The sketch holds this many counters per head query.
pub const SKETCH_PER_HEAD: usize = 5;
/// The head is decided afresh at most once per this much impression time.
pub const HEAD_EVERY: i64 = 60_000;

/// `[judges]` and the evaluation settings the tracker reads.
#[derive(Clone, Debug)]
pub struct Settings {
    /// judge-id prefixes (`[judges] families`) and `max_families`
    pub families: Vec<String>,
    pub max_families: usize,
    /// the agreement windows of judgment time: (name, size in ms)
    pub agreement_windows: Vec<(String, i64)>,
    pub max_age: i64,
    pub head_queries: usize,
    /// the evaluation windows: (name, size in ms), in the snapshot's order
    pub windows: Vec<(String, i64)>,
    pub bucket_ms: i64,
    /// the cutoffs, any order (sorted here)
    pub ks: Vec<usize>,
}

/// What the tracker reads of a finalized list.
#[derive(Clone, Copy, Debug)]
pub struct Finalized<'a, D: AsRef<str>> {
    pub query_id: &'a str,
    pub timestamp: i64,
    /// its doc ids; only the top max(ks) are read (a longer slice is fine)
    pub doc_ids: &'a [D],
    /// read before (a re-read after a restart): not counted again for the head
    pub counted_before: bool,
    /// the judged source's coverage@k, one per k in ascending k (`None`: no judged source, or
    /// no coverage)
    pub coverage: Option<&'a [f64]>,
    /// the windows take the list (not a bucket restored from the state topic)
    pub windowed: bool,
}

/// One window's figures for the snapshot, with its name.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowView {
    pub window: String,
    pub figures: WindowFigures,
}

#[derive(Clone, Debug)]
struct QueryAges {
    version: i64,
    /// per judged doc, its newest grade time
    newest: Map<String, i64>,
    /// the oldest of those (`None`: no judged doc)
    oldest: Option<i64>,
}

#[derive(Clone, Debug)]
pub struct JudgeTracker {
    ks: Vec<usize>,
    top: usize,
    max_age: i64,
    head_queries: usize,
    windows: Vec<(String, i64)>,
    listener: Listener,
    buckets: Buckets,
    sketch: SpaceSaving,
    head: Set<String>,
    /// the start of the minute the head was decided for (`None`: never, Python's `-inf`)
    head_from: Option<i64>,
    /// lists per query since the head was decided, in the order first seen
    minute: IndexMap<String, u64>,
    ages: Map<String, QueryAges>,
}

impl JudgeTracker {
    /// Settings as validated by `JudgesSettings` and `EvaluationSettings`: at least one window
    /// and one k, a positive bucket, `head_queries` >= 1.
    pub fn new(settings: Settings) -> Self {
        let mut ks = settings.ks;
        ks.sort_unstable();
        assert!(
            !ks.is_empty() && !settings.windows.is_empty(),
            "a k and a window"
        );
        let longest = settings.windows.iter().map(|w| w.1).max().unwrap_or(0);
        let families = Families::new(settings.families, settings.max_families);
        JudgeTracker {
            top: ks[ks.len() - 1],
            buckets: Buckets::new(settings.bucket_ms, longest, ks.len()),
            ks,
            max_age: settings.max_age,
            head_queries: settings.head_queries,
            windows: settings.windows,
            listener: Listener::new(families, settings.agreement_windows),
            sketch: SpaceSaving::new(SKETCH_PER_HEAD * settings.head_queries),
            head: Set::default(),
            head_from: None,
            minute: IndexMap::default(),
            ages: Map::default(),
        }
    }

    /// The judgment table's listener: `store`'s grades of (`query_id`, `doc_id`) changed.
    pub fn changed(&mut self, store: &JudgmentStore, query_id: &str, doc_id: &str) {
        self.listener.changed(store, query_id, doc_id);
    }

    pub fn listener(&self) -> &Listener {
        &self.listener
    }

    /// The agreement rows (cached until a change).
    pub fn agreement(&mut self) -> &[AgreementRow] {
        self.listener.agreement()
    }

    /// The head queries as decided last.
    pub fn head(&self) -> &Set<String> {
        &self.head
    }

    pub fn sketch(&self) -> &SpaceSaving {
        &self.sketch
    }

    /// The horizon from which [`JudgeTracker::evict`] has a bucket to drop (`None`: never).
    pub fn evict_due(&self) -> Option<i64> {
        self.buckets.evict_due()
    }

    /// A finalized list (see the module's description).
    pub fn fold<D: AsRef<str>>(&mut self, store: &JudgmentStore, list: &Finalized<'_, D>) {
        let ts = list.timestamp;
        let b = self.buckets.start(ts);
        if !self
            .head_from
            .is_some_and(|from| from <= b && b < from + HEAD_EVERY)
        {
            self.head_from = Some(b - b.rem_euclid(HEAD_EVERY));
            for (query, n) in self.minute.drain(..) {
                self.sketch.add(&query, n);
            }
            self.head = self
                .sketch
                .top(self.head_queries)
                .into_iter()
                .map(str::to_owned)
                .collect();
        }
        if !list.counted_before {
            match self.minute.get_mut(list.query_id) {
                Some(n) => *n += 1,
                None => {
                    self.minute.insert(list.query_id.to_owned(), 1);
                }
            }
        }
        if !list.windowed {
            return;
        }
        let tail_at = self.buckets.tail_at();
        let top = self.top;
        let stale_from = ts - self.max_age;
        // (no grade ever read is that old: none can be stale, the usual case)
        let may_be_stale = self.listener.oldest_grade().is_some_and(|o| stale_from > o);
        let acc = self.buckets.at(b);
        let Some(coverage) = list.coverage else {
            return;
        };
        let shown = list.doc_ids.len().min(top);
        // judged positions in the top max(k); Python's round: half to even
        let judged_docs = (coverage[coverage.len() - 1] * shown as f64).round_ties_even();
        if judged_docs != 0.0 {
            acc[0] += judged_docs;
            if may_be_stale {
                let ages = query_ages(&mut self.ages, store, list.query_id);
                if ages.oldest.is_some_and(|o| o < stale_from) {
                    for doc in list.doc_ids.iter().take(top) {
                        if ages
                            .newest
                            .get(doc.as_ref())
                            .is_some_and(|&when| when < stale_from)
                        {
                            acc[1] += 1.0;
                        }
                    }
                }
            }
        }
        let mut i = if self.head.contains(list.query_id) {
            HEAD_AT
        } else {
            tail_at
        };
        acc[i] += 1.0;
        if judged_docs != 0.0 {
            for c in coverage {
                i += 1;
                acc[i] += c;
            }
        }
    }

    /// Drop the buckets no window covers any more as of `horizon_ms`.
    pub fn evict(&mut self, horizon_ms: i64) {
        self.buckets.evict(horizon_ms);
    }

    /// Before the streams are re-read (a rebalance): the buckets go (the head and the sketch
    /// stay, as the judgments do).
    pub fn reset(&mut self) {
        self.buckets.reset();
    }

    /// The figures of each evaluation window as of `horizon_ms`, in the windows' order.
    pub fn view(&self, horizon_ms: i64) -> Vec<WindowView> {
        self.windows
            .iter()
            .map(|(name, size)| WindowView {
                window: name.clone(),
                figures: self.buckets.window(horizon_ms, *size),
            })
            .collect()
    }

    /// The cutoffs, ascending (the order of each class's coverage sums).
    pub fn ks(&self) -> &[usize] {
        &self.ks
    }
}

/// The newest grade time of each judged doc of `query_id` and the oldest of those, remade when
/// the query's judgments changed.
fn query_ages<'a>(
    ages: &'a mut Map<String, QueryAges>,
    store: &JudgmentStore,
    query_id: &str,
) -> &'a QueryAges {
    let version = store.version(query_id);
    let fresh = ages.get(query_id).is_some_and(|a| a.version == version);
    if !fresh {
        let newest: Map<String, i64> = store
            .newest_per_doc(query_id)
            .map(|(doc, t)| (doc.to_owned(), t))
            .collect();
        let oldest = newest.values().min().copied();
        ages.insert(
            query_id.to_owned(),
            QueryAges {
                version,
                newest,
                oldest,
            },
        );
    }
    &ages[query_id]
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn tracker(head_queries: usize) -> JudgeTracker {
        JudgeTracker::new(Settings {
            families: vec!["llm:".into()],
            max_families: 8,
            agreement_windows: vec![("1h".into(), 3_600_000)],
            max_age: 30 * DAY,
            head_queries,
            windows: vec![("1m".into(), 60_000), ("10m".into(), 600_000)],
            bucket_ms: 10_000,
            ks: vec![3, 1],
        })
    }

    fn list<'a>(
        q: &'a str,
        ts: i64,
        docs: &'a [&'a str],
        cov: Option<&'a [f64]>,
    ) -> Finalized<'a, &'a str> {
        Finalized {
            query_id: q,
            timestamp: ts,
            doc_ids: docs,
            counted_before: false,
            coverage: cov,
            windowed: true,
        }
    }

    #[test]
    fn the_head_is_decided_once_per_minute_from_the_minutes_before() {
        let store = JudgmentStore::new();
        let mut t = tracker(1);
        let docs = ["a"];
        // minute 0: q twice, r once; the head decided at the first list (empty sketch)
        for q in ["q", "r", "q"] {
            t.fold(&store, &list(q, 1_000, &docs, None));
        }
        assert!(t.head().is_empty());
        // minute 1: decided from minute 0's counts: q
        t.fold(&store, &list("r", 61_000, &docs, None));
        assert_eq!(t.head(), &Set::from_iter(["q".to_owned()]));
        // a re-read list is not counted; r's 1 + 1 do not pass q's 2 (held longer wins ties)
        let mut again = list("r", 62_000, &docs, None);
        again.counted_before = true;
        t.fold(&store, &again);
        t.fold(&store, &list("s", 125_000, &docs, None));
        assert_eq!(t.sketch().count("r"), (2, 0));
        assert_eq!(t.head(), &Set::from_iter(["q".to_owned()]));
        // the head list's coverage goes to the head, the others' to the tail; minute 1: 10m
        let v = t.view(600_000);
        assert_eq!(v[1].figures.head.0, 0);
        assert_eq!(
            v[1].figures.tail.0, 0,
            "no coverage: the list is not counted"
        );
    }

    #[test]
    fn freshness_and_coverage_per_class() {
        let mut store = JudgmentStore::new();
        let mut t = tracker(1);
        let now = 100 * DAY;
        store.apply("q", "old", "alice", now - 40 * DAY, 2.0, false);
        t.changed(&store, "q", "old");
        store.apply("q", "new", "alice", now - DAY, 1.0, false);
        t.changed(&store, "q", "new");
        let docs = ["old", "new", "x", "old"];
        // top 3: old, new, x; coverage@1 1, @3 2/3: 2 judged docs, old stale
        let cov = [1.0, 2.0 / 3.0];
        t.fold(&store, &list("q", now, &docs, Some(&cov)));
        t.fold(&store, &list("q", now + 1, &docs, Some(&[0.0, 0.0])));
        let v = t.view(now + 60_000);
        let f = &v[0].figures;
        assert_eq!((f.judged_docs, f.stale_docs), (2, 1));
        assert_eq!(f.tail, (2, vec![1.0, 2.0 / 3.0]));
        assert_eq!(f.head, (0, vec![0.0, 0.0]));
        // a newer grade of old: nothing stale any more (the query's cache is remade)
        store.apply("q", "old", "bob", now, 2.0, false);
        t.changed(&store, "q", "old");
        t.fold(&store, &list("q", now + 2, &docs, Some(&cov)));
        let f = &t.view(now + 60_000)[0].figures;
        assert_eq!((f.judged_docs, f.stale_docs), (4, 1));
        // not windowed: counted for the head only
        let mut quiet = list("q", now + 3, &docs, Some(&cov));
        quiet.windowed = false;
        t.fold(&store, &quiet);
        assert_eq!(t.view(now + 60_000)[0].figures.judged_docs, 4);
        assert_eq!(t.evict_due(), Some(now + 610_000));
        t.evict(now + 610_000);
        assert_eq!(t.evict_due(), None);
    }

    #[test]
    fn round_half_to_even_as_python() {
        let store = JudgmentStore::new();
        let mut t = tracker(1);
        // coverage@3 0.5 over 1 shown doc: round(0.5) = 0 in Python: nothing counted
        t.fold(&store, &list("q", 0, &["a"], Some(&[0.5, 0.5])));
        let f = &t.view(60_000)[0].figures;
        assert_eq!(f.judged_docs, 0);
        assert_eq!(f.tail, (1, vec![0.0, 0.0]));
        // round(1.5) = 2
        t.fold(&store, &list("q", 1, &["a", "b", "c"], Some(&[1.0, 0.5])));
        assert_eq!(t.view(60_000)[0].figures.judged_docs, 2);
    }
}
