//! The binding of [`crate::query_sums`]: `streameval._native.QuerySums`, the detectors' open
//! buckets of per-query sums (`streameval/detect/stash.py`), for the differential test and for
//! the engine's Python side. Segments are Python tuples here; they are interned to the ids the
//! Rust module keys by, and the same tuple objects are handed back.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::query_sums::QuerySums;

#[pyclass(name = "QuerySums", module = "streameval._native")]
struct PyQuerySums {
    inner: QuerySums,
    /// the segment tuples by id, and their ids by labels
    segments: Vec<Py<PyTuple>>,
    ids: HashMap<Vec<String>, u32>,
}

#[pymethods]
impl PyQuerySums {
    #[new]
    fn new(bucket_ms: i64, positions: Vec<usize>) -> PyResult<Self> {
        if bucket_ms <= 0 {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "bucket_ms must be positive",
            ));
        }
        Ok(PyQuerySums {
            inner: QuerySums::new(bucket_ms, positions),
            segments: Vec::new(),
            ids: HashMap::new(),
        })
    }

    /// One list: its impression time, segment (a tuple of label values), query id and NDCG per
    /// cutoff (None where it has none).
    fn add(
        &mut self,
        ts: i64,
        segment: Bound<'_, PyTuple>,
        query_id: &str,
        ndcg: Vec<Option<f64>>,
    ) -> PyResult<()> {
        let labels: Vec<String> = segment.extract()?;
        let id = match self.ids.get(&labels) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.segments.len())
                    .map_err(|_| pyo3::exceptions::PyOverflowError::new_err("too many segments"))?;
                self.segments.push(segment.unbind());
                self.ids.insert(labels, id);
                id
            }
        };
        self.inner.add(ts, id, query_id, &ndcg);
        Ok(())
    }

    /// The buckets the horizon completed, oldest first, as `Stash.take` answers: a list of
    /// `(bucket start, {segment: [{query_id: (count, sum, sum of squares)}, ...per k]})`.
    fn take<'py>(&mut self, py: Python<'py>, horizon_ms: i64) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (b, bucket) in self.inner.take(horizon_ms) {
            let data = PyDict::new(py);
            for (segment, per_k) in bucket {
                let ks = PyList::empty(py);
                for per_query in per_k {
                    let d = PyDict::new(py);
                    for (query_id, agg) in per_query {
                        d.set_item(query_id, agg)?;
                    }
                    ks.append(d)?;
                }
                data.set_item(self.segments[segment as usize].bind(py), ks)?;
            }
            out.append((b, data))?;
        }
        Ok(out)
    }

    fn clear(&mut self) {
        self.inner.clear();
    }

    #[getter]
    fn ignored(&self) -> u64 {
        self.inner.ignored()
    }

    #[getter]
    fn closed(&self) -> Option<i64> {
        self.inner.closed()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyQuerySums>()
}
