//! Lists scored inside the native engine's core (issue 32): the implicit and judged sources of a
//! finalized list, and the judged source of a list the early judged pass takes, as
//! `streameval/score/lists.py` `ListScorer.score` and `score_judged` compute them, against the
//! judgment table: the judgment records read outside keyed topics applied here, by the rules of
//! `JudgmentRules.apply` ([`CoreScoring::judgment`], once [`CoreScoring::apply_judgments`] was
//! called: docs/native.md "Judgments applied in the core"), and every change the Python rules
//! make (keyed topics, tombstones) copied in ([`JudgmentStore::mirror`]).
//!
//! The early judged score of a passed list is kept, with the table's version of its query,
//! until the list is finalized, and reused then when that version did not change (as
//! `ListScorer.score` reuses `OpenList.early`); a list of a query nobody had judged keeps
//! nothing (its score is the shared unjudged one, and a version other than -1 at finalization
//! scores it afresh, as Python does). The early pass's `unique` (no doc repeats) is not kept:
//! [`ListScorer`] asks it of the docs itself, a speed cache of Python's only.

use crate::decode::Judgment;
use crate::hash::Map;
use crate::join::key::{dedup_key, DedupKey};
use crate::join::open_list::{DocRef, OpenList};
use crate::judges::tracker::JudgeTracker;
use crate::judgment_rules::{
    apply_unkeyed, Applied, Change, Identity, JudgmentFields, JudgmentIds,
};
use crate::judgments::JudgmentStore;
use crate::score::lists::{JudgedBuffers, ListScorer, SourceScore, NO_RELEVANCE, SCORED};
use crate::scored;

/// The early judged score of a passed list of a judged query, packed: one allocation of
/// 4 × len(ks) floats (coverage, dcg, idcg, ndcg per k, as [`ListScorer::judged_flat`] writes
/// them) instead of a `SourceScore`'s four.
#[derive(Debug, Clone)]
struct Early {
    /// the judgment table's version of the list's query when it was scored
    version: i64,
    /// the outcome: `SCORED` (else `NO_RELEVANCE`, the NDCG per k then 0 or none, as
    /// `no_relevance` says: nothing to keep)
    scored: bool,
    values: Box<[f64]>,
}

impl Early {
    fn unpack(&self, zero: bool) -> SourceScore {
        let n = self.values.len() / 4;
        let part = |i: usize| self.values[i * n..(i + 1) * n].to_vec();
        SourceScore {
            outcome: if self.scored { SCORED } else { NO_RELEVANCE },
            ndcg: ndcg_of(&self.values[3 * n..], self.scored, zero).collect(),
            dcg: part(1),
            idcg: part(2),
            coverage: Some(part(0)),
        }
    }
}

/// The NDCG per k of a source: `values` if it `scored`, else 0 or none (`zero`: as
/// `no_relevance` says).
fn ndcg_of(values: &[f64], scored: bool, zero: bool) -> impl Iterator<Item = Option<f64>> + '_ {
    let none = zero.then_some(0.0);
    values
        .iter()
        .map(move |&v| if scored { Some(v) } else { none })
}

/// The scoring step of the core: the scorer, the judgment table, the early judged scores.
#[derive(Debug)]
pub struct CoreScoring {
    scorer: ListScorer,
    /// the judgment table: the Python table's equal (the judgments read outside keyed topics
    /// applied here, [`CoreScoring::judgment`]; the Python rules' changes copied in,
    /// [`CoreScoring::mirror`])
    pub judgments: JudgmentStore,
    /// the identities of the judgments applied here (`JudgmentRules.ids`); `None`: judgments
    /// are not applied here (each change of the Python table is copied in)
    ids: Option<JudgmentIds>,
    /// by the list's sequence number in the join
    early: Map<u64, Early>,
    /// the judged scoring's working space, kept from list to list
    buffers: JudgedBuffers,
}

/// A list's two sources at finalization: `None` where the source is the shared one (implicit:
/// no interaction, every grade 0; judged: a query nobody judged, or no query id).
pub type Sources = (Option<SourceScore>, Option<SourceScore>);

impl CoreScoring {
    pub fn new(scorer: ListScorer, judgments: JudgmentStore) -> Self {
        CoreScoring {
            scorer,
            judgments,
            ids: None,
            early: Map::default(),
            buffers: JudgedBuffers::default(),
        }
    }

    /// From now on the judgment records read outside keyed topics are applied here
    /// ([`CoreScoring::judgment`]), their identities remembered up to `max_judgment_ids`.
    pub fn apply_judgments(&mut self, max_judgment_ids: usize) {
        if self.ids.is_none() {
            self.ids = Some(JudgmentIds::new(max_judgment_ids));
        }
    }

    /// The judgment records read outside keyed topics are applied here: a judgment is in the
    /// table (and the judge tracker told) at its record, so a loop over records need not
    /// return to Python at one.
    pub fn judgments_in_core(&self) -> bool {
        self.ids.is_some()
    }

    /// The identities remembered and forgotten over the cap (`JudgmentIds`' `len` and
    /// `forgotten`); `None`: judgments are not applied here.
    pub fn judgment_ids(&self) -> Option<(usize, u64)> {
        self.ids.as_ref().map(|ids| (ids.len(), ids.forgotten))
    }

    /// A judgment record read outside a keyed topic (`raw`: the record as read), applied as
    /// `JudgmentRules.apply` applies it: its identity its `event_id`, else the digest of the
    /// record (`dedup_key`); a change of the table told to `tracker` (the table's listener,
    /// as `JudgeTracker._changed` listens to the Python table) and handed back for the Python
    /// table. `None`: judgments are not applied here ([`CoreScoring::apply_judgments`]).
    pub fn judgment(
        &mut self,
        j: &Judgment,
        raw: &[u8],
        tracker: Option<&mut JudgeTracker>,
    ) -> Option<Applied> {
        let ids = self.ids.as_mut()?;
        let key = dedup_key(j.event_id.as_deref(), raw);
        let identity = match &key {
            DedupKey::Id(id) => Identity::EventId(id),
            DedupKey::Digest(digest) => Identity::Digest(digest),
        };
        let fields = JudgmentFields {
            query_id: &j.query_id,
            doc_id: &j.doc_id,
            judge: &j.judge,
            timestamp: j.timestamp,
            grade: j.grade,
        };
        let table = &mut self.judgments;
        let before = table.version(&j.query_id);
        let outcome = apply_unkeyed(ids, table, &fields, identity);
        // a change gives the query a new version (an older grade, or the same one again: none)
        let change = (table.version(&j.query_id) != before).then(|| {
            if let Some(tracker) = tracker {
                tracker.changed(table, &j.query_id, &j.doc_id);
            }
            Change::of(table, &j.query_id, &j.doc_id)
        });
        Some(Applied { outcome, change })
    }

    /// `doc_id` of `query_id` holds exactly `judges` now, and the query's version is `version`
    /// (`JudgmentStore.mirror`).
    pub fn mirror(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judges: &[(String, i64, f64)],
        version: i64,
    ) {
        self.judgments.mirror(query_id, doc_id, judges, version);
    }

    /// The judged source of `list` (its doc ids `docs`) against the table now (`None`: the
    /// shared unjudged one).
    fn judged(&mut self, list: &OpenList, docs: &[&str]) -> Option<SourceScore> {
        let query_id = list.query_id();
        if query_id.is_empty() {
            return None;
        }
        let (grades, pool) = self.judgments.grades_and_pool(query_id)?;
        let buffers = &mut self.buffers;
        Some(
            self.scorer
                .judged_with(docs, |d| grades.get(d), pool, buffers),
        )
    }

    /// The early judged pass takes `list`: its judged source (`ListScorer.score_judged`), kept
    /// until the list is finalized (or evicted: [`CoreScoring::forget`]).
    pub fn early(&mut self, list: &OpenList) -> Option<SourceScore> {
        self.keep_early(list)?;
        let zero = self.scorer.rules().zero;
        self.early.get(&list.seq).map(|e| e.unpack(zero))
    }

    /// As [`CoreScoring::early`], the judged NDCG per k only, into `ndcg` (no `SourceScore`:
    /// the early pass with the detectors' sums in the core); false: the shared unjudged source
    /// (`ndcg` left as it was).
    pub fn early_ndcg(&mut self, list: &OpenList, ndcg: &mut Vec<Option<f64>>) -> bool {
        let zero = self.scorer.rules().zero;
        let Some(e) = self.keep_early(list) else {
            return false;
        };
        let n = e.values.len() / 4;
        ndcg.clear();
        ndcg.extend(ndcg_of(&e.values[3 * n..], e.scored, zero));
        true
    }

    /// The judged source of `list` scored and kept packed (`None`: the shared unjudged one,
    /// nothing kept).
    fn keep_early(&mut self, list: &OpenList) -> Option<&Early> {
        let query_id = list.query_id();
        if query_id.is_empty() {
            return None;
        }
        let docs = list.doc_ids();
        let n = self.scorer.scorer().spec().ks.len();
        let mut values = Vec::with_capacity(4 * n);
        let (grades, pool) = self.judgments.grades_and_pool(query_id)?;
        let (scorer, buffers) = (&self.scorer, &mut self.buffers);
        let scored = scorer.judged_flat(&docs, |d| grades.get(d), pool, buffers, &mut values);
        let early = Early {
            version: self.judgments.version(query_id),
            scored,
            values: values.into_boxed_slice(),
        };
        let slot = self.early.entry(list.seq);
        Some(&*slot.insert_entry(early).into_mut())
    }

    /// A finalized list's implicit and judged sources (`ListScorer.score`), `docs` its doc ids
    /// (`OpenList::doc_ids`, read once by the caller): the judged one scored early is reused
    /// when its query's judgments did not change since.
    pub fn finalize(&mut self, list: &OpenList, docs: &[&str]) -> Sources {
        let judged = match self.early.remove(&list.seq) {
            Some(e) if e.version == self.judgments.version(list.query_id()) => {
                Some(e.unpack(self.scorer.rules().zero))
            }
            _ => self.judged(list, docs),
        };
        (self.implicit(list, docs), judged)
    }

    /// The implicit source (`None`: no interaction, the shared all-zero one).
    fn implicit(&self, list: &OpenList, docs: &[&str]) -> Option<SourceScore> {
        let interactions = list.interactions.as_deref()?;
        let named = |d: &DocRef, doc: &str| match d {
            DocRef::Listed(i) => docs[*i as usize] == doc,
            DocRef::Unlisted(name) => **name == *doc,
        };
        let grade_of = |doc: &str| {
            let mut grades = interactions.grades.iter();
            grades.find(|(d, _)| named(d, doc)).map(|(_, g)| *g)
        };
        Some(self.scorer.implicit(docs, grade_of))
    }

    /// An evicted list: its early judged score goes.
    pub fn forget(&mut self, seq: u64) {
        self.early.remove(&seq);
    }

    /// A new stream (`Pipeline.reset`): no list is open any more; the judgments stay.
    pub fn restart(&mut self) {
        self.early = Map::default();
    }

    /// The early judged scores kept.
    pub fn early_kept(&self) -> usize {
        self.early.len()
    }
}

/// A finalized list's `ScoredList` as the fold reads it, refilled list after list
/// ([`ScoredShell::fill`]): what stays the same from one list to the next (the sources' names
/// and cutoffs, the shared sources, the strings' buffers) is not allocated again per list.
#[derive(Debug)]
pub struct ScoredShell {
    list: scored::ScoredList,
    ks: Vec<i64>,
    /// the shared sources: implicit without interaction, judged of an unjudged query
    no_interaction: scored::SourceScore,
    unjudged: scored::SourceScore,
}

/// A finalized list's fields the fold reads besides its scores.
pub struct ListFields<'a, S: AsRef<str>> {
    pub query_id: &'a str,
    pub timestamp: i64,
    pub segment: &'a [S],
    pub clicked: bool,
    pub first_click_rank: Option<i64>,
    pub interacted: bool,
    pub source: &'a str,
}

impl ScoredShell {
    pub fn new(
        ks: Vec<i64>,
        no_interaction: scored::SourceScore,
        unjudged: scored::SourceScore,
    ) -> Self {
        let list = scored::ScoredList {
            request_id: String::new(),
            query_id: String::new(),
            timestamp: 0,
            labels: Vec::new(),
            segment: Vec::new(),
            sources: vec![no_interaction.clone(), unjudged.clone()],
            clicked: false,
            first_click_rank: None,
            interacted: false,
            interleaved: None,
            source: String::new(),
        };
        ScoredShell {
            list,
            ks,
            no_interaction,
            unjudged,
        }
    }

    /// The list `fields` with its implicit and judged sources (`None`: the shared one).
    pub fn fill<S: AsRef<str>>(
        &mut self,
        fields: &ListFields<'_, S>,
        implicit: Option<SourceScore>,
        judged: Option<SourceScore>,
    ) -> &scored::ScoredList {
        let list = &mut self.list;
        refill(&mut list.query_id, fields.query_id);
        list.timestamp = fields.timestamp;
        list.segment.truncate(fields.segment.len());
        let kept = list.segment.len();
        for (to, from) in list.segment.iter_mut().zip(fields.segment) {
            refill(to, from.as_ref());
        }
        let added = fields.segment[kept..].iter().map(|s| s.as_ref().to_owned());
        list.segment.extend(added);
        let [first, second] = &mut list.sources[..] else {
            unreachable!("two sources, as built")
        };
        put(
            first,
            scored::IMPLICIT,
            &self.ks,
            implicit,
            &self.no_interaction,
        );
        put(second, scored::JUDGED, &self.ks, judged, &self.unjudged);
        list.clicked = fields.clicked;
        list.first_click_rank = fields.first_click_rank;
        list.interacted = fields.interacted;
        refill(&mut list.source, fields.source);
        list
    }
}

/// `to` holds `from` now, in its own buffer.
fn refill(to: &mut String, from: &str) {
    if to != from {
        to.clear();
        to.push_str(from);
    }
}

/// `to` holds `from` now, in its own buffer (copied whatever it held: a float compared equal
/// may differ in its bits, -0.0 and 0.0).
fn copy<T: Copy>(to: &mut Vec<T>, from: &[T]) {
    to.clear();
    to.extend_from_slice(from);
}

/// `slot` is `s` named `relevance` (`None`: the shared source `shared`).
fn put(
    slot: &mut scored::SourceScore,
    relevance: &str,
    ks: &[i64],
    s: Option<SourceScore>,
    shared: &scored::SourceScore,
) {
    match s {
        // field by field: a derived `clone_from` allocates each buffer again
        None => {
            refill(&mut slot.relevance, &shared.relevance);
            refill(&mut slot.outcome, &shared.outcome);
            copy(&mut slot.ks, &shared.ks);
            copy(&mut slot.ndcg, &shared.ndcg);
            copy(&mut slot.dcg, &shared.dcg);
            copy(&mut slot.idcg, &shared.idcg);
            match (&mut slot.coverage, &shared.coverage) {
                (Some(to), Some(from)) => copy(to, from),
                (to, from) => to.clone_from(from),
            }
        }
        Some(s) => {
            refill(&mut slot.relevance, relevance);
            refill(&mut slot.outcome, s.outcome);
            copy(&mut slot.ks, ks);
            slot.ndcg = s.ndcg;
            slot.dcg = s.dcg;
            slot.idcg = s.idcg;
            slot.coverage = s.coverage;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Click, Impression};
    use crate::join::key::DedupKey;
    use crate::join::segments::SegmentId;
    use crate::judgment_rules::Outcome;
    use crate::judgments::PythonSum;
    use crate::score::lists::ListRules;
    use crate::score::spec::MetricSpec;

    fn scoring(ideal: &str) -> CoreScoring {
        let spec = MetricSpec::new(&[1, 3], "linear", "log2", 2.0).unwrap();
        let rules = ListRules::new(ideal, "zero", "skip").unwrap();
        CoreScoring::new(
            ListScorer::new(spec, rules),
            JudgmentStore::with_summing(PythonSum::Compensated),
        )
    }

    fn list(query_id: &str, docs: &[&str], seq: u64) -> OpenList {
        let impression = Impression {
            request_id: format!("r{seq}"),
            query_id: query_id.to_owned(),
            doc_ids: docs.iter().map(|d| (*d).to_owned()).collect(),
            timestamp: 1_000,
            query: None,
            labels: Vec::new(),
            event_id: None,
            teams: None,
        };
        OpenList::new(&impression, SegmentId::OTHER, false, 0, seq)
    }

    fn judge(s: &mut CoreScoring, q: &str, d: &str, grade: f64, version: i64) {
        s.mirror(q, d, &[("j".to_owned(), 1, grade)], version);
    }

    #[test]
    fn judged_against_the_mirrored_table() {
        let mut s = scoring("pool");
        let l = list("q", &["a", "b", "c"], 1);
        // nobody judged q: the shared source, nothing kept
        assert!(s.early(&l).is_none());
        assert_eq!(s.early_kept(), 0);
        judge(&mut s, "q", "b", 2.0, 1);
        judge(&mut s, "q", "z", 3.0, 2);
        let early = s.early(&l).unwrap();
        assert_eq!(early.outcome, SCORED);
        // b at rank 2 against the pool [3, 2]: DCG@1 0, @3 2/log2(3); IDCG@3 3 + 2/log2(3)
        let d3 = 2.0 / 3f64.log2();
        assert_eq!(early.dcg, vec![0.0, d3]);
        assert_eq!(early.idcg, vec![3.0, 3.0 + d3]);
        assert_eq!(early.coverage, Some(vec![0.0, 1.0 / 3.0]));
        assert_eq!(s.early_kept(), 1);
        // unchanged judgments: the early score is the final one, and goes
        let (implicit, judged) = s.finalize(&l, &l.doc_ids());
        assert!(
            implicit.is_none(),
            "no interaction: the shared implicit source"
        );
        assert_eq!(judged, Some(early));
        assert_eq!(s.early_kept(), 0);
    }

    #[test]
    fn an_early_score_kept_packed_comes_back_the_same() {
        for no_relevance in ["skip", "zero"] {
            let spec = MetricSpec::new(&[1, 3, 5], "exponential", "log2", 2.0).unwrap();
            let rules = ListRules::new("pool", "zero", no_relevance).unwrap();
            let mut s = CoreScoring::new(ListScorer::new(spec, rules), JudgmentStore::new());
            // judged docs shown (scored), and a query whose judged grades are all 0 (no
            // relevance: NDCG none or 0 per k)
            judge(&mut s, "q", "b", 2.5, 1);
            judge(&mut s, "z", "a", 0.0, 2);
            for (seq, query) in [(1, "q"), (2, "z")] {
                let l = list(query, &["a", "b", "c", "d"], seq);
                let early = s.early(&l).unwrap();
                assert_eq!(
                    early.outcome,
                    if query == "q" { SCORED } else { NO_RELEVANCE }
                );
                assert_eq!(s.finalize(&l, &l.doc_ids()).1, Some(early));
            }
        }
    }

    #[test]
    fn the_early_ndcg_alone_is_the_early_sources() {
        for no_relevance in ["skip", "zero"] {
            let spec = MetricSpec::new(&[1, 3, 5], "linear", "log2", 2.0).unwrap();
            let rules = ListRules::new("list", "condensed", no_relevance).unwrap();
            let scorer = || ListScorer::new(spec.clone(), rules);
            let mut a = CoreScoring::new(scorer(), JudgmentStore::new());
            let mut b = CoreScoring::new(scorer(), JudgmentStore::new());
            for s in [&mut a, &mut b] {
                judge(s, "q", "c", 2.0, 1);
                judge(s, "q", "a", 1.0, 2);
                judge(s, "z", "b", 0.0, 3);
            }
            let mut ndcg = vec![Some(9.0)];
            for (seq, query) in [(1, "q"), (2, "z"), (3, "nobody"), (4, "")] {
                let l = list(query, &["a", "b", "c", "a"], seq);
                let want = a.early(&l);
                let judged = b.early_ndcg(&l, &mut ndcg);
                assert_eq!(judged, want.is_some(), "{query}");
                if let Some(want) = &want {
                    assert_eq!(&ndcg, &want.ndcg, "{query}");
                }
                // kept alike: the finalized sources are the same
                let docs = l.doc_ids();
                assert_eq!(a.finalize(&l, &docs), b.finalize(&l, &docs), "{query}");
            }
        }
    }

    #[test]
    fn a_change_after_the_early_pass_scores_again() {
        let mut s = scoring("list");
        let l = list("q", &["a", "b"], 7);
        judge(&mut s, "q", "a", 1.0, 1);
        let early = s.early(&l).unwrap();
        assert_eq!(early.ndcg, vec![Some(1.0), Some(1.0)]);
        judge(&mut s, "q", "b", 3.0, 2); // a better doc below: NDCG drops
        let (_, judged) = s.finalize(&l, &l.doc_ids());
        let judged = judged.unwrap();
        let ideal = 3.0 + 1.0 / 3f64.log2();
        assert_eq!(judged.ndcg[1], Some((1.0 + 3.0 / 3f64.log2()) / ideal));
        assert_eq!(judged.ndcg[0], Some(1.0 / 3.0));
        // every judgment deleted since: the shared unjudged source
        let l = list("q", &["a", "b"], 8);
        assert!(s.early(&l).is_some());
        s.mirror("q", "a", &[], 3);
        s.mirror("q", "b", &[], -1);
        assert_eq!(s.finalize(&l, &l.doc_ids()), (None, None));
        // an evicted list's early score goes; a restart drops them all
        judge(&mut s, "q", "a", 1.0, 4);
        s.early(&list("q", &["a"], 9));
        s.early(&list("q", &["a"], 10));
        s.forget(9);
        assert_eq!(s.early_kept(), 1);
        s.restart();
        assert_eq!(s.early_kept(), 0);
        assert_eq!(s.judgments.len(), 1, "the judgments outlive a restart");
    }

    #[test]
    fn implicit_from_the_interactions() {
        let s = scoring("pool");
        let mut l = list("", &["a", "b", "a"], 1);
        let click = Click {
            request_id: "r1".to_owned(),
            doc_id: "a".to_owned(),
            action: "click".to_owned(),
            timestamp: 1_001,
            dwell_ms: None,
            position: None,
            event_id: None,
        };
        assert!(l.attach(&click, &DedupKey::Id("c1".into()), 1.0));
        let implicit = s.implicit(&l, &l.doc_ids()).unwrap();
        // a repeated doc gains at its first position only: DCG@3 = 1, the ideal the same
        assert_eq!(implicit.dcg, vec![1.0, 1.0]);
        assert_eq!(implicit.ndcg, vec![Some(1.0), Some(1.0)]);
        // no query id: the shared unjudged source, whatever the table holds
        let mut s = scoring("pool");
        judge(&mut s, "", "a", 1.0, 1);
        assert!(s.early(&l).is_none());
        // every grade 0 but some interaction: scored, with no relevance
        let mut l = list("", &["a", "b"], 2);
        let view = Click {
            action: "view".to_owned(),
            ..click
        };
        assert!(l.attach(&view, &DedupKey::Id("v1".into()), 0.0));
        let implicit = s.implicit(&l, &l.doc_ids()).unwrap();
        assert_eq!(implicit.outcome, NO_RELEVANCE);
        assert_eq!(implicit.ndcg, vec![None, None]);
    }

    fn judgment(doc: &str, judge: &str, ts: i64, grade: f64, event_id: Option<&str>) -> Judgment {
        Judgment {
            query_id: "q".to_owned(),
            query: None,
            doc_id: doc.to_owned(),
            grade,
            timestamp: ts,
            judge: judge.to_owned(),
            event_id: event_id.map(str::to_owned),
        }
    }

    fn tracker() -> JudgeTracker {
        JudgeTracker::new(crate::judges::tracker::Settings {
            families: vec!["llm:".to_owned()],
            max_families: 8,
            agreement_windows: Vec::new(),
            max_age: 86_400_000,
            head_queries: 10,
            windows: vec![("5m".to_owned(), 300_000)],
            bucket_ms: 60_000,
            ks: vec![1],
        })
    }

    #[test]
    fn judgments_are_applied_only_once_asked() {
        let mut s = scoring("pool");
        let j = judgment("a", "x", 5, 2.0, None);
        assert!(!s.judgments_in_core());
        assert_eq!(s.judgment(&j, b"r", None), None);
        assert_eq!((s.judgments.len(), s.judgment_ids()), (0, None));
        s.apply_judgments(10);
        assert!(s.judgments_in_core());
        assert_eq!(s.judgment_ids(), Some((0, 0)));
    }

    #[test]
    fn a_judgment_applied_in_the_core_hands_back_what_it_changed() {
        let mut s = scoring("pool");
        s.apply_judgments(10);
        let mut t = tracker();
        let first = judgment("a", "x", 5, 2.0, Some("e1"));
        let applied = s.judgment(&first, b"{1}", Some(&mut t)).unwrap();
        let want = Change {
            query_id: "q".to_owned(),
            doc_id: "a".to_owned(),
            judges: vec![("x".to_owned(), 5, 2.0)],
            version: 1,
        };
        assert_eq!(applied.outcome, Outcome::Accepted);
        assert_eq!(applied.change, Some(want));
        // the same event id again (another record): a duplicate, nothing changed
        let again = s.judgment(&first, b"{2}", Some(&mut t)).unwrap();
        assert_eq!((again.outcome, again.change), (Outcome::Duplicate, None));
        // a second judge, then an older grade by the first (accepted, superseded: no change),
        // then the same grade again under a new identity (accepted, no change)
        let second = judgment("a", "llm:m", 7, 3.0, None);
        let applied = s.judgment(&second, b"{3}", Some(&mut t)).unwrap();
        let change = applied.change.unwrap();
        assert_eq!(
            (change.judges, change.version),
            (
                vec![("x".to_owned(), 5, 2.0), ("llm:m".to_owned(), 7, 3.0)],
                2
            )
        );
        let older = judgment("a", "x", 1, 0.0, None);
        let applied = s.judgment(&older, b"{4}", Some(&mut t)).unwrap();
        assert_eq!((applied.outcome, applied.change), (Outcome::Accepted, None));
        let same = judgment("a", "x", 5, 2.0, Some("e2"));
        let applied = s.judgment(&same, b"{5}", Some(&mut t)).unwrap();
        assert_eq!((applied.outcome, applied.change), (Outcome::Accepted, None));
        assert_eq!(s.judgments.version("q"), 2);
        assert_eq!(s.judgments.grade("q", "a"), Some(2.5));
        // the tracker was told each change: two families grade the doc, the newest time 7
        let listener = t.listener();
        assert_eq!(listener.families(), ["human", "llm:m"]);
        assert_eq!((listener.newest(), listener.shared_pairs()), (Some(7), 1));
        assert_eq!(s.judgment_ids(), Some((4, 0)));
    }

    #[test]
    fn a_record_without_event_id_is_known_by_its_bytes_stripped() {
        let mut s = scoring("pool");
        s.apply_judgments(10);
        let j = judgment("a", "x", 5, 2.0, None);
        let raw = br#"{"type":"judgment"}"#;
        assert_eq!(
            s.judgment(&j, raw, None).unwrap().outcome,
            Outcome::Accepted
        );
        // the same record with a line end (Python's `bytes.strip`): a duplicate
        let crlf = br#" {"type":"judgment"}"#.iter().chain(b"\r\n").copied();
        let crlf: Vec<u8> = crlf.collect();
        assert_eq!(
            s.judgment(&j, &crlf, None).unwrap().outcome,
            Outcome::Duplicate
        );
        // another record of the same judgment: accepted (same grade: no change)
        let other = br#"{"type": "judgment"}"#;
        let applied = s.judgment(&j, other, None).unwrap();
        assert_eq!((applied.outcome, applied.change), (Outcome::Accepted, None));
    }

    #[test]
    fn the_identities_are_capped_the_oldest_forgotten_first() {
        // as tests/unit/test_intake_contract.py: cap 2, a b c c a c
        let mut s = scoring("pool");
        s.apply_judgments(2);
        let outcomes: Vec<Outcome> = ["a", "b", "c", "c", "a", "c"]
            .iter()
            .map(|doc| {
                let j = judgment(doc, "", 0, 1.0, None);
                let raw = format!("{{\"doc\":\"{doc}\"}}");
                s.judgment(&j, raw.as_bytes(), None).unwrap().outcome
            })
            .collect();
        use Outcome::{Accepted as A, Duplicate as D};
        assert_eq!(outcomes, [A, A, A, D, A, D]);
        assert_eq!(s.judgment_ids(), Some((2, 2)));
        assert_eq!(s.judgments.len(), 3);
    }

    #[test]
    fn judgments_applied_and_mirrored_keep_one_table() {
        // the core applies some, the Python rules (a keyed topic) change others and are copied
        // in: the table is the one both made, its versions growing past either's
        let mut s = scoring("pool");
        s.apply_judgments(10);
        let j = judgment("a", "x", 5, 2.0, None);
        assert!(s.judgment(&j, b"1", None).unwrap().change.is_some());
        s.mirror("q", "a", &[("x".to_owned(), 1, 1.0)], 2); // a keyed value replaced it
        s.mirror("q", "b", &[("k".to_owned(), 1, 3.0)], 3);
        let j = judgment("a", "y", 6, 4.0, None);
        let change = s.judgment(&j, b"2", None).unwrap().change.unwrap();
        assert_eq!(
            change.judges,
            vec![("x".to_owned(), 1, 1.0), ("y".to_owned(), 6, 4.0)]
        );
        assert_eq!(change.version, 4, "past the version copied in");
        s.mirror("q", "b", &[], 5); // a tombstone
        let docs: Vec<String> = s
            .judgments
            .judges_of("q")
            .into_iter()
            .map(|d| d.0)
            .collect();
        assert_eq!((docs, s.judgments.version("q")), (vec!["a".to_owned()], 5));
        // the judgments outlive a restart (a rebalance's re-read), and so do their identities
        s.restart();
        let again = judgment("a", "y", 6, 4.0, None);
        assert_eq!(
            s.judgment(&again, b"2", None).unwrap().outcome,
            Outcome::Duplicate
        );
    }
}
