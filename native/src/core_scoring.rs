//! Lists scored inside the native engine's core (issue 32): the implicit and judged sources of a
//! finalized list, and the judged source of a list the early judged pass takes, as
//! `streameval/score/lists.py` `ListScorer.score` and `score_judged` compute them, against a
//! copy of the Python judgment table ([`JudgmentStore::mirror`], told every change).
//!
//! The early judged score of a passed list is kept, with the table's version of its query,
//! until the list is finalized, and reused then when that version did not change (as
//! `ListScorer.score` reuses `OpenList.early`); a list of a query nobody had judged keeps
//! nothing (its score is the shared unjudged one, and a version other than -1 at finalization
//! scores it afresh, as Python does). The early pass's `unique` (no doc repeats) is not kept:
//! [`ListScorer`] asks it of the docs itself, a speed cache of Python's only.

use crate::hash::Map;
use crate::join::open_list::{DocRef, OpenList};
use crate::judgments::JudgmentStore;
use crate::score::lists::{ListScorer, SourceScore, NO_RELEVANCE, SCORED};

/// The early judged score of a passed list of a judged query, packed: one allocation of
/// 4 × len(ks) floats (ndcg, dcg, idcg, coverage per k) instead of a `SourceScore`'s four.
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
    fn pack(version: i64, s: &SourceScore) -> Self {
        let coverage = s.coverage.as_deref().unwrap_or_default();
        let ndcg = s.ndcg.iter().map(|v| v.unwrap_or(0.0));
        let values = ndcg.chain(s.dcg.iter().copied());
        let values = values.chain(s.idcg.iter().copied());
        Early {
            version,
            scored: s.outcome == SCORED,
            values: values.chain(coverage.iter().copied()).collect(),
        }
    }

    fn unpack(&self, zero: bool) -> SourceScore {
        let n = self.values.len() / 4;
        let part = |i: usize| self.values[i * n..(i + 1) * n].to_vec();
        let ndcg = if self.scored {
            self.values[..n].iter().map(|&v| Some(v)).collect()
        } else {
            vec![if zero { Some(0.0) } else { None }; n]
        };
        SourceScore {
            outcome: if self.scored { SCORED } else { NO_RELEVANCE },
            ndcg,
            dcg: part(1),
            idcg: part(2),
            coverage: Some(part(3)),
        }
    }
}

/// The scoring step of the core: the scorer, the judgment table, the early judged scores.
#[derive(Debug)]
pub struct CoreScoring {
    scorer: ListScorer,
    /// a copy of the Python judgment table (told each change: [`CoreScoring::mirror`])
    pub judgments: JudgmentStore,
    /// by the list's sequence number in the join
    early: Map<u64, Early>,
}

/// A list's two sources at finalization: `None` where the source is the shared one (implicit:
/// no interaction, every grade 0; judged: a query nobody judged, or no query id).
pub type Sources = (Option<SourceScore>, Option<SourceScore>);

impl CoreScoring {
    pub fn new(scorer: ListScorer, judgments: JudgmentStore) -> Self {
        CoreScoring {
            scorer,
            judgments,
            early: Map::default(),
        }
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

    /// The judged source of `list` against the table now (`None`: the shared unjudged one).
    fn judged(&mut self, list: &OpenList) -> Option<SourceScore> {
        let query_id = list.query_id();
        if query_id.is_empty() {
            return None;
        }
        let (grades, pool) = self.judgments.grades_and_pool(query_id)?;
        let docs = list.doc_ids();
        Some(self.scorer.judged(&docs, |d| grades.get(d).copied(), pool))
    }

    /// The early judged pass takes `list`: its judged source (`ListScorer.score_judged`), kept
    /// until the list is finalized (or evicted: [`CoreScoring::forget`]).
    pub fn early(&mut self, list: &OpenList) -> Option<SourceScore> {
        let judged = self.judged(list)?;
        let version = self.judgments.version(list.query_id());
        self.early.insert(list.seq, Early::pack(version, &judged));
        Some(judged)
    }

    /// A finalized list's implicit and judged sources (`ListScorer.score`): the judged one
    /// scored early is reused when its query's judgments did not change since.
    pub fn finalize(&mut self, list: &OpenList) -> Sources {
        let judged = match self.early.remove(&list.seq) {
            Some(e) if e.version == self.judgments.version(list.query_id()) => {
                Some(e.unpack(self.scorer.rules().zero))
            }
            _ => self.judged(list),
        };
        (self.implicit(list), judged)
    }

    /// The implicit source (`None`: no interaction, the shared all-zero one).
    fn implicit(&self, list: &OpenList) -> Option<SourceScore> {
        let interactions = list.interactions.as_deref()?;
        let docs = list.doc_ids();
        let grades: Vec<(&str, f64)> = interactions
            .grades
            .iter()
            .map(|(d, g)| {
                let doc = match d {
                    DocRef::Listed(i) => docs[*i as usize],
                    DocRef::Unlisted(name) => &**name,
                };
                (doc, *g)
            })
            .collect();
        let grade_of = |doc: &str| grades.iter().find(|(d, _)| *d == doc).map(|(_, g)| *g);
        Some(self.scorer.implicit(&docs, grade_of))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{Click, Impression};
    use crate::join::key::DedupKey;
    use crate::join::segments::SegmentId;
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
        let (implicit, judged) = s.finalize(&l);
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
                assert_eq!(s.finalize(&l).1, Some(early));
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
        let (_, judged) = s.finalize(&l);
        let judged = judged.unwrap();
        let ideal = 3.0 + 1.0 / 3f64.log2();
        assert_eq!(judged.ndcg[1], Some((1.0 + 3.0 / 3f64.log2()) / ideal));
        assert_eq!(judged.ndcg[0], Some(1.0 / 3.0));
        // every judgment deleted since: the shared unjudged source
        let l = list("q", &["a", "b"], 8);
        assert!(s.early(&l).is_some());
        s.mirror("q", "a", &[], 3);
        s.mirror("q", "b", &[], -1);
        assert_eq!(s.finalize(&l), (None, None));
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
        let implicit = s.implicit(&l).unwrap();
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
        let implicit = s.implicit(&l).unwrap();
        assert_eq!(implicit.outcome, NO_RELEVANCE);
        assert_eq!(implicit.ndcg, vec![None, None]);
    }
}
