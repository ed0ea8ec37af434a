//! Scoring a finalized list for each relevance source (`streameval/score/lists.py`,
//! `ListScorer`), through [`Scorer`](super::ndcg::Scorer):
//!
//! * implicit: each shown doc's grade is its interaction grade; the ideal is the list's own;
//! * judged: each shown doc's judged grade (0 when unjudged, or dropped with `unjudged =
//!   "condensed"`); the ideal is the query's pool (`ideal = "pool"`) or the list's own docs
//!   (`"list"`); judged coverage@k = judged docs in the top k / min(k, length).
//!
//! A list whose ideal DCG is 0 has no NDCG (`no_relevance = "skip"`) or counts 0 (`"zero"`).

use super::ndcg::{CutoffScores, Scorer};
use super::ranking::{all_distinct, condensed, grades_in_rank_order};
use super::spec::MetricSpec;

/// `SourceScore.outcome` of a list with an NDCG.
pub const SCORED: &str = "scored";
/// `SourceScore.outcome` of a list whose ideal DCG is 0.
pub const NO_RELEVANCE: &str = "no_relevance";

/// The configuration keys of `[evaluation]` that change scoring, beside the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListRules {
    /// `ideal = "pool"` (else `"list"`)
    pub ideal_pool: bool,
    /// `unjudged = "condensed"` (else `"zero"`)
    pub condensed: bool,
    /// `no_relevance = "zero"` (else `"skip"`)
    pub zero: bool,
}

impl ListRules {
    /// From the keys' values, or the message naming the key that has another value.
    pub fn new(ideal: &str, unjudged: &str, no_relevance: &str) -> Result<Self, String> {
        let pick = |key: &str, value: &str, yes: &str, no: &str| {
            if value == yes {
                Ok(true)
            } else if value == no {
                Ok(false)
            } else {
                Err(format!("{key}: expected '{yes}' or '{no}', got '{value}'"))
            }
        };
        Ok(ListRules {
            ideal_pool: pick("ideal", ideal, "pool", "list")?,
            condensed: pick("unjudged", unjudged, "condensed", "zero")?,
            zero: pick("no_relevance", no_relevance, "zero", "skip")?,
        })
    }
}

/// One relevance source's scores of a list (`SourceScore` without its name and ks).
#[derive(Clone, Debug, PartialEq)]
pub struct SourceScore {
    /// [`SCORED`] or [`NO_RELEVANCE`]
    pub outcome: &'static str,
    /// per k; `None` where there is no value (ideal DCG 0 with `no_relevance = "skip"`)
    pub ndcg: Vec<Option<f64>>,
    pub dcg: Vec<f64>,
    pub idcg: Vec<f64>,
    /// judged coverage@k (judged source only)
    pub coverage: Option<Vec<f64>>,
}

/// Scores finalized lists under one spec and [`ListRules`].
#[derive(Clone, Debug)]
pub struct ListScorer {
    scorer: Scorer,
    rules: ListRules,
}

impl ListScorer {
    pub fn new(spec: MetricSpec, rules: ListRules) -> Self {
        ListScorer {
            scorer: Scorer::new(spec),
            rules,
        }
    }

    pub fn scorer(&self) -> &Scorer {
        &self.scorer
    }

    pub fn rules(&self) -> ListRules {
        self.rules
    }

    fn source(&self, scores: CutoffScores, coverage: Option<Vec<f64>>) -> SourceScore {
        let (outcome, ndcg) = match scores.ndcg {
            Some(ndcg) => (SCORED, ndcg.into_iter().map(Some).collect()),
            None if self.rules.zero => (NO_RELEVANCE, vec![Some(0.0); scores.dcg.len()]),
            None => (NO_RELEVANCE, vec![None; scores.dcg.len()]),
        };
        SourceScore {
            outcome,
            ndcg,
            dcg: scores.dcg,
            idcg: scores.idcg,
            coverage,
        }
    }

    /// The implicit source: `grade_of` each interacted doc's grade (a list without
    /// interactions: every grade 0, which scores as Python's shared `[0.0]` result).
    pub fn implicit<S, G>(&self, doc_ids: &[S], grade_of: G) -> SourceScore
    where
        S: AsRef<str>,
        G: Fn(&str) -> Option<f64>,
    {
        let grades = grades_in_rank_order(doc_ids, grade_of, all_distinct(doc_ids));
        self.source(self.scorer.score(&grades, &grades, false), None)
    }

    /// The judged source of a list whose query nobody judged: every grade 0, nothing judged,
    /// no ideal (whatever `unjudged` and `ideal` say).
    pub fn unjudged(&self) -> SourceScore {
        let coverage = vec![0.0; self.scorer.spec().ks.len()];
        self.source(self.scorer.score(&[], &[], false), Some(coverage))
    }

    /// The judged source: `grade_of` the query's judged grades (at least one doc judged: else
    /// [`ListScorer::unjudged`]), `pool` its grades best first (read with `ideal = "pool"`).
    /// `doc_ids` is not empty (an impression shows at least one result).
    pub fn judged<S, G>(&self, doc_ids: &[S], grade_of: G, pool: &[f64]) -> SourceScore
    where
        S: AsRef<str>,
        G: Fn(&str) -> Option<f64>,
    {
        let flags: Vec<bool> = doc_ids
            .iter()
            .map(|d| grade_of(d.as_ref()).is_some())
            .collect();
        let mut grades = grades_in_rank_order(doc_ids, &grade_of, all_distinct(doc_ids));
        // judged docs in the top min(k, length) positions, over that many positions
        let length = doc_ids.len();
        let mut judged_at = Vec::with_capacity(length);
        let mut count = 0u32;
        for &flag in &flags {
            count += u32::from(flag);
            judged_at.push(count);
        }
        let coverage = self
            .scorer
            .spec()
            .ks
            .iter()
            .map(|&k| {
                let shown = k.min(length);
                f64::from(judged_at[shown - 1]) / shown as f64
            })
            .collect();
        if self.rules.condensed {
            grades = condensed(&grades, &flags);
        }
        let scores = if self.rules.ideal_pool {
            self.scorer.score(&grades, pool, true)
        } else {
            self.scorer.score(&grades, &grades, false)
        };
        self.source(scores, Some(coverage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn list_scorer(ideal: &str, unjudged: &str, no_relevance: &str) -> ListScorer {
        let spec = MetricSpec::new(&[1, 3], "linear", "log2", 2.0).unwrap();
        ListScorer::new(spec, ListRules::new(ideal, unjudged, no_relevance).unwrap())
    }

    #[test]
    fn rules_named() {
        assert_eq!(
            ListRules::new("both", "zero", "skip").unwrap_err(),
            "ideal: expected 'pool' or 'list', got 'both'"
        );
        assert!(ListRules::new("list", "zero", "nope").is_err());
    }

    #[test]
    fn judged_with_pool_and_coverage() {
        let judged: HashMap<&str, f64> = [("a", 1.0), ("c", 3.0), ("z", 2.0)].into();
        let s = list_scorer("pool", "zero", "skip");
        let r = s.judged(
            &["a", "b", "c", "a"],
            |d| judged.get(d).copied(),
            &[3.0, 2.0, 1.0],
        );
        assert_eq!(r.outcome, SCORED);
        assert_eq!(r.coverage, Some(vec![1.0, 2.0 / 3.0]));
        let idcg3 = 3.0 + 2.0 / 3f64.log2() + 1.0 * 0.5;
        assert_eq!(r.idcg, vec![3.0, idcg3]);
        assert_eq!(r.dcg, vec![1.0, 1.0 + 0.0 / 3f64.log2() + 3.0 * 0.5]);
        // condensed: b dropped, the repeated a kept with grade 0
        let s = list_scorer("list", "condensed", "skip");
        let r = s.judged(&["a", "b", "c", "a"], |d| judged.get(d).copied(), &[]);
        assert_eq!(r.dcg, vec![1.0, 1.0 + 3.0 / 3f64.log2() + 0.0 * 0.5]);
        assert_eq!(r.idcg, vec![3.0, 3.0 + 1.0 / 3f64.log2() + 0.0 * 0.5]);
        // coverage over the positions shown: a 1-doc list fully judged covers 1.0 at k = 3
        let r = s.judged(&["c"], |d| judged.get(d).copied(), &[]);
        assert_eq!(r.coverage, Some(vec![1.0, 1.0]));
    }

    #[test]
    fn no_relevance_skip_or_zero() {
        let skip = list_scorer("pool", "zero", "skip");
        let r = skip.implicit(&["a", "b"], |_| None);
        assert_eq!((r.outcome, r.ndcg), (NO_RELEVANCE, vec![None, None]));
        let zero = list_scorer("pool", "zero", "zero");
        let r = zero.unjudged();
        assert_eq!(r.outcome, NO_RELEVANCE);
        assert_eq!(r.ndcg, vec![Some(0.0), Some(0.0)]);
        assert_eq!(r.coverage, Some(vec![0.0, 0.0]));
        assert_eq!(r.dcg, vec![0.0, 0.0]);
    }

    #[test]
    fn implicit_ideal_is_the_list() {
        let s = list_scorer("pool", "zero", "skip");
        let clicked: HashMap<&str, f64> = [("b", 1.0)].into();
        let r = s.implicit(&["a", "b", "b"], |d| clicked.get(d).copied());
        assert_eq!(r.ndcg, vec![Some(0.0), Some(1.0 / 3f64.log2())]);
        assert_eq!(r.coverage, None);
    }
}
