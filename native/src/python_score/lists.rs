//! `ListScorer` (both relevance sources of finalized lists) and `TeamCap` (interleaving
//! outcomes).

use std::collections::{HashMap, HashSet};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::judgments::PyJudgmentTable;
use super::{grade_map, numbers, spec_of, strings};
use crate::score::credit::{credit_lookup, pair_outcomes, team_credit, TeamCap};
use crate::score::lists::{ListRules, ListScorer, SourceScore};

/// `(outcome, ndcg, dcg, idcg, coverage)`: a `SourceScore` without its name and ks.
fn source_tuple<'py>(py: Python<'py>, s: SourceScore) -> PyResult<Bound<'py, PyTuple>> {
    let coverage = match s.coverage {
        Some(c) => PyTuple::new(py, c)?.into_any(),
        None => py.None().into_bound(py),
    };
    (
        s.outcome,
        PyTuple::new(py, s.ndcg)?,
        PyTuple::new(py, s.dcg)?,
        PyTuple::new(py, s.idcg)?,
        coverage,
    )
        .into_pyobject(py)
}

fn source_list<'py>(py: Python<'py>, sources: Vec<SourceScore>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for s in sources {
        out.append(source_tuple(py, s)?)?;
    }
    Ok(out)
}

fn doc_lists(doc_ids: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
    doc_ids.try_iter()?.map(|d| strings(&d?)).collect()
}

fn not_empty(doc_ids: &[Vec<String>]) -> PyResult<()> {
    if doc_ids.iter().any(Vec::is_empty) {
        return Err(PyValueError::new_err(
            "doc_ids: a list shows at least one doc",
        ));
    }
    Ok(())
}

/// `streameval.score.lists.ListScorer` over batches of lists: the spec and the keys `ideal`,
/// `unjudged`, `no_relevance` of `[evaluation]`.
#[pyclass(name = "ListScorer", module = "streameval._native", frozen)]
pub(super) struct PyListScorer {
    inner: ListScorer,
}

#[pymethods]
impl PyListScorer {
    #[new]
    #[pyo3(signature = (*, ks, gain = "linear", discount = "log2", discount_base = 2.0,
        ideal = "pool", unjudged = "zero", no_relevance = "skip"))]
    fn new(
        ks: Vec<i64>,
        gain: &str,
        discount: &str,
        discount_base: f64,
        ideal: &str,
        unjudged: &str,
        no_relevance: &str,
    ) -> PyResult<Self> {
        let spec = spec_of(ks, gain, discount, discount_base)?;
        let rules = ListRules::new(ideal, unjudged, no_relevance).map_err(PyValueError::new_err)?;
        Ok(PyListScorer {
            inner: ListScorer::new(spec, rules),
        })
    }

    /// The implicit source of each list: `grades[i]` its interaction grade per doc (None or
    /// empty: no interaction).
    fn implicit_batch<'py>(
        &self,
        py: Python<'py>,
        doc_ids: &Bound<'py, PyAny>,
        grades: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let docs = doc_lists(doc_ids)?;
        let maps: Vec<HashMap<String, f64>> = grades
            .try_iter()?
            .map(|g| grade_map(&g?))
            .collect::<PyResult<_>>()?;
        if maps.len() != docs.len() {
            return Err(PyValueError::new_err("grades: one mapping per list"));
        }
        let scorer = &self.inner;
        let sources = py.detach(|| {
            docs.iter()
                .zip(&maps)
                .map(|(d, m)| scorer.implicit(d, |doc| m.get(doc).copied()))
                .collect()
        });
        source_list(py, sources)
    }

    /// The judged source of each list from its query's judged grades (`judged[i]`, empty: a
    /// query nobody judged) and pool best first (`pools[i]`, read with `ideal = "pool"`).
    fn judged_batch<'py>(
        &self,
        py: Python<'py>,
        doc_ids: &Bound<'py, PyAny>,
        judged: &Bound<'py, PyAny>,
        pools: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let docs = doc_lists(doc_ids)?;
        let maps: Vec<HashMap<String, f64>> = judged
            .try_iter()?
            .map(|g| grade_map(&g?))
            .collect::<PyResult<_>>()?;
        let pools: Vec<Vec<f64>> = pools
            .try_iter()?
            .map(|p| {
                let p = p?;
                if p.is_none() {
                    Ok(Vec::new())
                } else {
                    numbers(&p)
                }
            })
            .collect::<PyResult<_>>()?;
        if maps.len() != docs.len() || pools.len() != docs.len() {
            return Err(PyValueError::new_err("judged, pools: one of each per list"));
        }
        not_empty(&docs)?;
        let scorer = &self.inner;
        let sources = py.detach(|| {
            docs.iter()
                .zip(&maps)
                .zip(&pools)
                .map(|((d, m), p)| {
                    if m.is_empty() {
                        scorer.unjudged()
                    } else {
                        scorer.judged(d, |doc| m.get(doc).copied(), p)
                    }
                })
                .collect()
        });
        source_list(py, sources)
    }

    /// The judged source of each list from the judgment table, as the engine scores it:
    /// `query_ids[i]` ("" or unjudged: the unjudged source) and `doc_ids[i]`.
    fn judged_table_batch<'py>(
        &self,
        py: Python<'py>,
        query_ids: Vec<String>,
        doc_ids: &Bound<'py, PyAny>,
        table: &Bound<'py, PyJudgmentTable>,
    ) -> PyResult<Bound<'py, PyList>> {
        let docs = doc_lists(doc_ids)?;
        if query_ids.len() != docs.len() {
            return Err(PyValueError::new_err("query_ids: one per list"));
        }
        not_empty(&docs)?;
        let mut table = table.try_borrow_mut()?;
        let store = &mut table.rules.store;
        let scorer = &self.inner;
        let sources = py.detach(move || {
            docs.iter()
                .zip(&query_ids)
                .map(|(d, q)| match store.grades_and_pool(q) {
                    Some((m, pool)) if !q.is_empty() => scorer.judged(d, |doc| m.get(doc), pool),
                    _ => scorer.unjudged(),
                })
                .collect()
        });
        source_list(py, sources)
    }
}

/// `streameval.score.credit.TeamCap` with the outcomes of interleaved lists.
#[pyclass(name = "TeamCap", module = "streameval._native")]
pub(super) struct PyTeamCap {
    inner: TeamCap,
}

#[pymethods]
impl PyTeamCap {
    #[new]
    fn new(max_teams: usize) -> Self {
        PyTeamCap {
            inner: TeamCap::new(max_teams),
        }
    }

    /// The capped `(ranker, opponent, outcome)` of one finalized interleaved list
    /// (`credit`: "clicks" or "grades"), as `cap.outcomes(list_outcomes(...))`.
    fn list_outcomes(
        &mut self,
        doc_ids: Vec<String>,
        teams: Vec<Option<String>>,
        clicked: HashSet<String>,
        grades: &Bound<'_, PyAny>,
        credit: &str,
    ) -> PyResult<Vec<(String, String, &'static str)>> {
        if teams.len() != doc_ids.len() {
            return Err(PyValueError::new_err("teams: one per result"));
        }
        let grades = grade_map(grades)?;
        let credited = team_credit(
            &doc_ids,
            &teams,
            credit_lookup(credit == "grades", &clicked, &grades),
        );
        Ok(self.inner.outcomes(pair_outcomes(&credited)))
    }
}
