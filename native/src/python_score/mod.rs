//! The binding of scoring ([`crate::score`]) and of the judgment table ([`crate::judgments`],
//! [`crate::judgment_rules`]): batch calls that read their Python arguments into Rust-owned
//! data, then compute with the GIL released (`Python::detach`), then build the results.

mod batch;
pub(crate) mod judgments;
mod lists;

use std::collections::HashMap;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyTuple};

use crate::score::spec::MetricSpec;

/// One number of a grade sequence: a float or an int (read as Python's `int * float` does).
pub(crate) fn number(item: &Bound<'_, PyAny>) -> PyResult<f64> {
    // exact type checks first (a pointer comparison; a failed `cast` builds an error value)
    if item.is_exact_instance_of::<PyFloat>() {
        return item.extract::<f64>();
    }
    if item.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = item.extract::<i64>() {
            return Ok(i as f64);
        }
    }
    item.extract::<f64>()
}

/// A sequence of numbers (a list or tuple read without an iterator object).
pub(crate) fn numbers(seq: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
    if let Ok(list) = seq.cast::<PyList>() {
        let mut out = Vec::with_capacity(list.len());
        for item in list.iter() {
            out.push(number(&item)?);
        }
        return Ok(out);
    }
    if let Ok(tuple) = seq.cast::<PyTuple>() {
        let mut out = Vec::with_capacity(tuple.len());
        for item in tuple.iter() {
            out.push(number(&item)?);
        }
        return Ok(out);
    }
    seq.try_iter()?.map(|item| number(&item?)).collect()
}

pub(crate) fn strings(seq: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    seq.try_iter()?
        .map(|item| item?.extract::<String>())
        .collect()
}

/// A mapping of doc id to grade (`None`: empty).
pub(crate) fn grade_map(obj: &Bound<'_, PyAny>) -> PyResult<HashMap<String, f64>> {
    if obj.is_none() {
        return Ok(HashMap::new());
    }
    let dict = obj
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("grades: expected a dict of doc id to grade or None"))?;
    let mut out = HashMap::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        out.insert(k.extract::<String>()?, number(&v)?);
    }
    Ok(out)
}

pub(crate) fn spec_of(
    ks: Vec<i64>,
    gain: &str,
    discount: &str,
    discount_base: f64,
) -> PyResult<MetricSpec> {
    MetricSpec::new(&ks, gain, discount, discount_base).map_err(PyValueError::new_err)
}

/// Adds scoring and the judgment table to the module `streameval._native`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(batch::score_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::discount_table, m)?)?;
    m.add_class::<batch::GradeBatch>()?;
    m.add_class::<lists::PyListScorer>()?;
    m.add_class::<lists::PyTeamCap>()?;
    m.add_class::<judgments::PyJudgmentTable>()?;
    Ok(())
}
