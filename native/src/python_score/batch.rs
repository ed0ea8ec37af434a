//! `score_batch` and `GradeBatch`: the metric core (`Scorer`) over many lists in one call.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::{numbers, spec_of};
use crate::score::ndcg::Scorer;

/// Lists of grades (and their ideal pools) read once into Rust memory, flat.
#[pyclass(module = "streameval._native", frozen)]
pub(super) struct GradeBatch {
    /// every list's grades, one after the other; `ends[i]` is where list i ends
    grades: Vec<f64>,
    ends: Vec<usize>,
    /// the pools likewise (`None`: each list is its own pool)
    pools: Option<(Vec<f64>, Vec<usize>)>,
}

fn flat(seqs: &Bound<'_, PyAny>) -> PyResult<(Vec<f64>, Vec<usize>)> {
    let mut values = Vec::new();
    let mut ends = Vec::new();
    for seq in seqs.try_iter()? {
        values.extend(numbers(&seq?)?);
        ends.push(values.len());
    }
    Ok((values, ends))
}

fn part<'a>(values: &'a [f64], ends: &[usize], i: usize) -> &'a [f64] {
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &values[start..ends[i]]
}

impl GradeBatch {
    fn read(grades: &Bound<'_, PyAny>, pools: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let (grades, ends) = flat(grades)?;
        let pools = pools.map(flat).transpose()?;
        if pools.as_ref().is_some_and(|(_, p)| p.len() != ends.len()) {
            return Err(PyValueError::new_err("pools: one pool per list of grades"));
        }
        Ok(GradeBatch {
            grades,
            ends,
            pools,
        })
    }

    /// Score every list, the GIL released, then build the results (see `score_batch`).
    fn score_all<'py>(
        &self,
        py: Python<'py>,
        scorer: &Scorer,
        best_first: bool,
        ndcg_only: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = scorer.spec().ks.len();
        let (flat, relevant) = py.detach(|| {
            let mut scratch = Vec::new();
            let mut flat = Vec::with_capacity(3 * n * self.ends.len());
            let relevant: Vec<bool> = (0..self.ends.len())
                .map(|i| {
                    let grades = part(&self.grades, &self.ends, i);
                    let (pool, sorted) = match &self.pools {
                        Some((values, ends)) => (part(values, ends, i), best_first),
                        None => (grades, false),
                    };
                    scorer.score_flat(grades, pool, sorted, &mut scratch, &mut flat)
                })
                .collect();
            (flat, relevant)
        });
        let out = PyList::empty(py);
        for (values, relevant) in flat.chunks_exact(3 * n).zip(relevant) {
            let ndcg = if relevant {
                PyTuple::new(py, &values[2 * n..])?.into_any()
            } else {
                py.None().into_bound(py)
            };
            if ndcg_only {
                out.append(ndcg)?;
            } else {
                let dcg = PyTuple::new(py, &values[..n])?;
                let idcg = PyTuple::new(py, &values[n..2 * n])?;
                out.append((dcg, idcg, ndcg))?;
            }
        }
        Ok(out)
    }
}

#[pymethods]
impl GradeBatch {
    /// `grades`: lists of grades in rank order; `pools`: one ideal pool per list (None: each
    /// list's own grades, the ideal of the implicit source and of `ideal = "list"`).
    #[new]
    #[pyo3(signature = (grades, pools = None))]
    fn new(grades: &Bound<'_, PyAny>, pools: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        Self::read(grades, pools)
    }

    fn __len__(&self) -> usize {
        self.ends.len()
    }

    /// Score every list: as `score_batch` over the lists read at construction.
    #[pyo3(signature = (*, ks, gain = "linear", discount = "log2", discount_base = 2.0,
        best_first = false, ndcg_only = false))]
    #[allow(clippy::too_many_arguments)]
    fn score<'py>(
        &self,
        py: Python<'py>,
        ks: Vec<i64>,
        gain: &str,
        discount: &str,
        discount_base: f64,
        best_first: bool,
        ndcg_only: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let scorer = Scorer::new(spec_of(ks, gain, discount, discount_base)?);
        self.score_all(py, &scorer, best_first, ndcg_only)
    }
}

/// Score many lists with one `Scorer`: `grades[i]` in rank order against the ideal pool
/// `pools[i]` (`pools` None: each list's own grades; `best_first`: the pools are sorted
/// descending already, as a query's judged pool is). Returns, per list, `(dcg, idcg, ndcg)`
/// (tuples per k; `ndcg` None when the ideal DCG is 0), or with `ndcg_only` just the `ndcg`.
#[pyfunction]
#[pyo3(signature = (grades, pools = None, *, ks, gain = "linear", discount = "log2",
    discount_base = 2.0, best_first = false, ndcg_only = false))]
#[allow(clippy::too_many_arguments)]
pub(super) fn score_batch<'py>(
    py: Python<'py>,
    grades: &Bound<'py, PyAny>,
    pools: Option<&Bound<'py, PyAny>>,
    ks: Vec<i64>,
    gain: &str,
    discount: &str,
    discount_base: f64,
    best_first: bool,
    ndcg_only: bool,
) -> PyResult<Bound<'py, PyList>> {
    let scorer = Scorer::new(spec_of(ks, gain, discount, discount_base)?);
    GradeBatch::read(grades, pools)?.score_all(py, &scorer, best_first, ndcg_only)
}

/// The discounts of ranks 1..=n (`streameval.score.discount_table` of a spec with this
/// `discount` and `discount_base`).
#[pyfunction]
#[pyo3(signature = (n, discount = "log2", discount_base = 2.0))]
pub(super) fn discount_table(n: usize, discount: &str, discount_base: f64) -> PyResult<Vec<f64>> {
    let spec = spec_of(vec![1], "linear", discount, discount_base)?;
    Ok(crate::score::discount::discount_table(&spec, n))
}
