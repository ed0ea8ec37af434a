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
use super::ranking::{all_distinct, grades_in_rank_order};
use super::spec::MetricSpec;
use crate::hash::set_with_capacity;

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
            None => (NO_RELEVANCE, self.no_ndcg(scores.dcg.len())),
        };
        SourceScore {
            outcome,
            ndcg,
            dcg: scores.dcg,
            idcg: scores.idcg,
            coverage,
        }
    }

    /// The NDCG per k of a list with no relevance: 0 or none, as `no_relevance` says.
    fn no_ndcg(&self, n: usize) -> Vec<Option<f64>> {
        vec![self.rules.zero.then_some(0.0); n]
    }

    /// `grades` scored against the ideal of `ideal_pool` ([`Scorer::score_flat`]), straight
    /// into a source: the DCG per k keeps the buffer the sums went to (no copy of the three
    /// parts, as [`Scorer::score`] makes).
    fn scored(
        &self,
        grades: &[f64],
        ideal_pool: &[f64],
        best_first: bool,
        coverage: Option<Vec<f64>>,
    ) -> SourceScore {
        let n = self.scorer.spec().ks.len();
        let mut scratch = Vec::new();
        let mut flat = Vec::with_capacity(3 * n);
        let relevant =
            self.scorer
                .score_flat(grades, ideal_pool, best_first, &mut scratch, &mut flat);
        let (outcome, ndcg) = if relevant {
            (SCORED, flat[2 * n..].iter().map(|&v| Some(v)).collect())
        } else {
            (NO_RELEVANCE, self.no_ndcg(n))
        };
        let idcg = flat[n..2 * n].to_vec();
        flat.truncate(n);
        SourceScore {
            outcome,
            ndcg,
            dcg: flat,
            idcg,
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
        self.scored(&grades, &grades, false, None)
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
        self.judged_with(doc_ids, grade_of, pool, &mut JudgedBuffers::default())
    }

    /// [`ListScorer::judged`] in the working space `buffers` (kept from list to list).
    pub fn judged_with<S, G>(
        &self,
        doc_ids: &[S],
        grade_of: G,
        pool: &[f64],
        buffers: &mut JudgedBuffers,
    ) -> SourceScore
    where
        S: AsRef<str>,
        G: Fn(&str) -> Option<f64>,
    {
        let n = self.scorer.spec().ks.len();
        let mut flat = Vec::with_capacity(4 * n);
        let relevant = self.judged_flat(doc_ids, grade_of, pool, buffers, &mut flat);
        let (outcome, ndcg) = if relevant {
            (SCORED, flat[3 * n..].iter().map(|&v| Some(v)).collect())
        } else {
            (NO_RELEVANCE, self.no_ndcg(n))
        };
        SourceScore {
            outcome,
            ndcg,
            dcg: flat[n..2 * n].to_vec(),
            idcg: flat[2 * n..3 * n].to_vec(),
            coverage: Some(flat[..n].to_vec()),
        }
    }

    /// The judged source as [`ListScorer::judged`] scores it, appended to `out` flat: the
    /// coverage, the DCG, the ideal DCG and the NDCG per k (the NDCG 0 where the list has no
    /// relevance); true: the list has relevance (`SCORED`). `buffers`: the working space,
    /// kept by the caller from list to list (no allocation per list once grown).
    ///
    /// One pass over the docs, one look-up each: the grades in rank order (a repeated doc
    /// gains 0, `grades_in_rank_order`; with `unjudged = "condensed"` the unjudged docs left
    /// out, `condensed`) and the coverage per k, taken as the pass crosses each cutoff.
    pub fn judged_flat<S, G>(
        &self,
        doc_ids: &[S],
        grade_of: G,
        pool: &[f64],
        buffers: &mut JudgedBuffers,
        out: &mut Vec<f64>,
    ) -> bool
    where
        S: AsRef<str>,
        G: Fn(&str) -> Option<f64>,
    {
        let ks = &self.scorer.spec().ks;
        let length = doc_ids.len();
        let mut seen = (!all_distinct(doc_ids)).then(|| set_with_capacity(length));
        let grades = &mut buffers.grades;
        grades.clear();
        let at = out.len();
        let mut due = 0; // the next cutoff whose coverage is not taken yet
        let mut count = 0u32;
        for (i, d) in doc_ids.iter().enumerate() {
            let d = d.as_ref();
            let grade = grade_of(d);
            count += u32::from(grade.is_some());
            let first = seen.as_mut().is_none_or(|s| s.insert(d));
            if grade.is_some() || !self.rules.condensed {
                grades.push(if first { grade.unwrap_or(0.0) } else { 0.0 });
            }
            // judged docs in the top min(k, length) positions, over that many positions
            while due < ks.len() && ks[due] == i + 1 {
                out.push(f64::from(count) / (i + 1) as f64);
                due += 1;
            }
        }
        let rest = f64::from(count) / length as f64;
        out.resize(at + ks.len(), rest);
        let scratch = &mut buffers.scratch;
        if self.rules.ideal_pool {
            self.scorer.score_flat(grades, pool, true, scratch, out)
        } else {
            self.scorer.score_flat(grades, grades, false, scratch, out)
        }
    }
}

/// The working space of [`ListScorer::judged_flat`]: kept from list to list by its caller.
#[derive(Clone, Debug, Default)]
pub struct JudgedBuffers {
    grades: Vec<f64>,
    scratch: Vec<f64>,
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

    /// The judged source of the one-pass scoring equals the steps it fused, bit for bit: the
    /// grades in rank order, condensed, scored as [`Scorer::score`], the coverage by prefix
    /// counts (the form before docs/native.md "The per-list scoring, cheaper").
    #[test]
    fn judged_in_one_pass_as_the_steps_it_fused() {
        use super::super::ranking::condensed;
        let judged: HashMap<&str, f64> = [("a", 1.5), ("c", 3.0), ("d", 0.0), ("z", 2.0)].into();
        let grade_of = |d: &str| judged.get(d).copied();
        let pool = [3.0, 2.0, 1.5, 0.0];
        let lists: [&[&str]; 5] = [
            &["a", "b", "c", "a"],
            &["b"],
            &["c", "d", "c", "x", "y", "a", "z"],
            &["x", "y"],
            &["d", "d", "b", "a"],
        ];
        for ks in [&[1, 3][..], &[2, 5, 10], &[1]] {
            for (ideal, unjudged, no_relevance) in [
                ("pool", "zero", "skip"),
                ("list", "condensed", "zero"),
                ("pool", "condensed", "skip"),
                ("list", "zero", "zero"),
            ] {
                let spec = MetricSpec::new(ks, "exponential", "log2", 2.0).unwrap();
                let rules = ListRules::new(ideal, unjudged, no_relevance).unwrap();
                let s = ListScorer::new(spec, rules);
                for docs in lists {
                    let flags: Vec<bool> = docs.iter().map(|d| grade_of(d).is_some()).collect();
                    let mut grades = grades_in_rank_order(docs, grade_of, all_distinct(docs));
                    if rules.condensed {
                        grades = condensed(&grades, &flags);
                    }
                    let coverage = ks
                        .iter()
                        .map(|&k| {
                            let shown = (k as usize).min(docs.len());
                            let n = flags[..shown].iter().filter(|&&f| f).count();
                            n as f64 / shown as f64
                        })
                        .collect();
                    let scores = if rules.ideal_pool {
                        s.scorer.score(&grades, &pool, true)
                    } else {
                        s.scorer.score(&grades, &grades, false)
                    };
                    let want = s.source(scores, Some(coverage));
                    let got = s.judged(docs, grade_of, &pool);
                    let bits = |r: &SourceScore| {
                        let ndcg = r.ndcg.iter().map(|v| v.map(f64::to_bits));
                        let rest = r
                            .dcg
                            .iter()
                            .chain(&r.idcg)
                            .chain(r.coverage.iter().flatten());
                        (
                            r.outcome,
                            ndcg.collect::<Vec<_>>(),
                            rest.map(|v| v.to_bits()).collect::<Vec<_>>(),
                        )
                    };
                    assert_eq!(bits(&got), bits(&want), "{docs:?} {ks:?} {rules:?}");
                }
            }
        }
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
