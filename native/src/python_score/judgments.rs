//! `JudgmentTable`: the judgment table and its rules (keys, tombstones, identities).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::hash::Map;
use crate::judgment_rules::{Identity, JudgmentFields, JudgmentRules};
use crate::judgments::{JudgesOf, PythonSum};

/// The judgment table with its rules (`JudgmentRules` around a `JudgmentStore`).
#[pyclass(name = "JudgmentTable", module = "streameval._native")]
pub(crate) struct PyJudgmentTable {
    pub(crate) rules: JudgmentRules,
}

#[pymethods]
impl PyJudgmentTable {
    #[new]
    /// The judges' means are summed as the running interpreter's `sum` does (compensated from
    /// CPython 3.12 on), so that they equal the Python table's in the same process.
    fn new(py: Python<'_>, max_judgment_ids: usize) -> Self {
        let summing = if py.version_info() >= (3, 12) {
            PythonSum::Compensated
        } else {
            PythonSum::Plain
        };
        PyJudgmentTable {
            rules: JudgmentRules::new(max_judgment_ids, summing),
        }
    }

    /// The outcome ("accepted" or "duplicate") of one judgment record: `key` its key on a keyed
    /// judgment topic, else `identity` its `dedup_key` (event id str, or record digest bytes).
    #[pyo3(signature = (query_id, doc_id, judge, grade, timestamp, identity = None, key = None))]
    #[allow(clippy::too_many_arguments)]
    fn apply(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judge: &str,
        grade: f64,
        timestamp: i64,
        identity: Option<&Bound<'_, PyAny>>,
        key: Option<&[u8]>,
    ) -> PyResult<&'static str> {
        let fields = JudgmentFields {
            query_id,
            doc_id,
            judge,
            timestamp,
            grade,
        };
        let outcome = match (key, identity) {
            (Some(key), _) => self.rules.apply_keyed(&fields, key),
            (None, Some(id)) => {
                if let Ok(s) = id.cast::<PyString>() {
                    self.rules.apply(&fields, Identity::EventId(s.to_str()?))
                } else if let Ok(b) = id.cast::<PyBytes>() {
                    self.rules.apply(&fields, Identity::Digest(b.as_bytes()))
                } else {
                    return Err(PyTypeError::new_err("identity: expected str or bytes"));
                }
            }
            (None, None) => {
                return Err(PyValueError::new_err("identity: required without a key"));
            }
        };
        Ok(outcome.as_str())
    }

    /// A tombstone of a keyed judgment topic: "accepted" when it deleted a grade.
    fn tombstone(&mut self, key: &[u8]) -> &'static str {
        self.rules.tombstone(key).as_str()
    }

    /// `JudgmentStore.apply` itself (no identity, no key).
    #[pyo3(signature = (query_id, doc_id, judge, grade, timestamp, replace = false))]
    fn store_apply(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judge: &str,
        grade: f64,
        timestamp: i64,
        replace: bool,
    ) -> bool {
        self.rules
            .store
            .apply(query_id, doc_id, judge, timestamp, grade, replace)
    }

    /// `JudgmentStore.delete`.
    fn delete(&mut self, query_id: &str, doc_id: &str, judge: &str) -> bool {
        self.rules.store.delete(query_id, doc_id, judge)
    }

    fn grade(&self, query_id: &str, doc_id: &str) -> Option<f64> {
        self.rules.store.grade(query_id, doc_id)
    }

    fn grades(&mut self, query_id: &str) -> Map<String, f64> {
        self.rules.store.grades(query_id).unwrap_or_default()
    }

    fn pool(&mut self, query_id: &str) -> Vec<f64> {
        self.rules.store.pool(query_id).to_vec()
    }

    fn version(&self, query_id: &str) -> i64 {
        self.rules.store.version(query_id)
    }

    /// Per judged doc (in the order first judged): its judges' (judge, timestamp, grade).
    fn judges_of(&self, query_id: &str) -> JudgesOf {
        self.rules.store.judges_of(query_id)
    }

    /// Identities remembered, and forgotten over the cap.
    #[getter]
    fn ids(&self) -> (usize, u64) {
        (self.rules.ids.len(), self.rules.ids.forgotten)
    }

    fn __len__(&self) -> usize {
        self.rules.store.len()
    }
}
