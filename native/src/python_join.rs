//! `streameval._native.JoinCore`: a thin binding of [`crate::join::core`], for the differential
//! test against the Python join (`tests/unit/test_native_join.py`) and the memory benchmark.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::join::core::{Answer, Core, Note, Settings};
use crate::join::grades::InteractionGrades;
use crate::join::key::DedupKey;
use crate::join::open_list::OpenList;

/// The join of the engine: records in (`offer`), finalized and evicted lists out
/// (`drain_finalized`), as the Python pipeline's join does.
#[pyclass(module = "streameval._native")]
pub struct JoinCore {
    core: Core,
    last_invalid: Option<(&'static str, String)>,
}

#[pymethods]
impl JoinCore {
    #[new]
    #[pyo3(signature = (*, attribution_window, allowed_lateness, max_open_lists,
        max_pending_clicks, segment_labels, max_segments, implicit_grades, dwell_min_ms,
        dwell_grade, max_record_bytes, max_future_skew, bucket))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        attribution_window: i64,
        allowed_lateness: i64,
        max_open_lists: usize,
        max_pending_clicks: usize,
        segment_labels: Vec<String>,
        max_segments: usize,
        implicit_grades: HashMap<String, f64>,
        dwell_min_ms: i64,
        dwell_grade: f64,
        max_record_bytes: usize,
        max_future_skew: i64,
        bucket: i64,
    ) -> Self {
        let settings = Settings {
            attribution_ms: attribution_window,
            allowed_lateness_ms: allowed_lateness,
            max_open_lists,
            max_pending_clicks,
            segment_labels,
            max_segments,
            grades: InteractionGrades {
                by_action: implicit_grades.into_iter().collect(),
                dwell_min_ms,
                dwell_grade,
            },
            max_record_bytes,
            max_future_skew_ms: max_future_skew,
            bucket_ms: bucket,
        };
        JoinCore {
            core: Core::new(settings),
            last_invalid: None,
        }
    }

    /// One record read from `source`: its outcome (`"accepted"`, `"duplicate"`, `"late"`,
    /// `"pending"`, `"unmatched"`, `"invalid"`: see `last_invalid`, or `"judgment"`).
    #[pyo3(signature = (raw, source = "input", record_ms = -1, counted_before = false, counted = true))]
    fn offer(
        &mut self,
        raw: &[u8],
        source: &str,
        record_ms: i64,
        counted_before: bool,
        counted: bool,
    ) -> &'static str {
        match self
            .core
            .offer(raw, source, record_ms, counted_before, counted)
        {
            Answer::Impression(o) | Answer::Click(o) => o.as_str(),
            Answer::Judgment => "judgment",
            Answer::Invalid { reason, detail } => {
                self.last_invalid = Some((reason, detail));
                "invalid"
            }
        }
    }

    /// The `(reason, detail)` of the last invalid record.
    #[getter]
    fn last_invalid(&self) -> Option<(&'static str, String)> {
        self.last_invalid.clone()
    }

    fn add_source(&mut self, source: &str) {
        self.core.add_source(source);
    }

    fn forget_source(&mut self, source: &str) {
        self.core.forget_source(source);
    }

    #[pyo3(signature = (source, idle = true))]
    fn set_idle(&mut self, source: &str, idle: bool) {
        self.core.set_idle(source, idle);
    }

    fn advance(&mut self) {
        self.core.advance();
    }

    fn follow(&mut self, watermark_ms: i64) -> bool {
        self.core.follow(watermark_ms)
    }

    fn finish(&mut self) {
        self.core.finish();
    }

    /// What the join handed out since the last call, in order: `("final" | "evicted", request_id,
    /// timestamp, query_id, doc_ids, labels, segment, grades, interaction_keys, clicked,
    /// first_click_rank, teams, clicked_docs, counted_before, source)` per list,
    /// `("resolved", outcome, counted)` per waiting click its impression resolved, and
    /// `("expired", n)` when waiting clicks counted when read expired.
    fn drain_finalized<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let notes = std::mem::take(&mut self.core.notes);
        let out = PyList::empty(py);
        for note in notes {
            let item = match note {
                Note::Finalized(l) => {
                    PyTuple::new(py, list_fields(py, &self.core, "final", &l)?)?.into_any()
                }
                Note::Evicted(l) => {
                    PyTuple::new(py, list_fields(py, &self.core, "evicted", &l)?)?.into_any()
                }
                Note::Resolved(o, counted) => ("resolved", o.as_str(), counted)
                    .into_pyobject(py)?
                    .into_any(),
                Note::Expired(n) => ("expired", n).into_pyobject(py)?.into_any(),
            };
            out.append(item)?;
        }
        Ok(out)
    }

    #[getter]
    fn watermark(&mut self) -> Option<i64> {
        self.core.watermark()
    }

    #[getter]
    fn open_lists(&self) -> usize {
        self.core.joiner.open_lists()
    }

    #[getter]
    fn pending_clicks(&self) -> usize {
        self.core.joiner.pending_clicks()
    }

    #[getter]
    fn pending_clicks_counted(&self) -> usize {
        self.core.joiner.pending_clicks_counted()
    }

    #[getter]
    fn closed_ids_dropped(&self) -> u64 {
        self.core.joiner.closed_ids_dropped()
    }

    #[getter]
    fn segments(&self) -> usize {
        self.core.segments.len()
    }

    /// The bytes the open lists hold by capacities (allocator headers and rounding not included).
    #[getter]
    fn open_bytes(&self) -> usize {
        self.core.joiner.open_bytes()
    }
}

/// The fields of a list as `JoinCore.drain_finalized` gives them (its kind first).
pub fn list_fields<'py>(
    py: Python<'py>,
    core: &Core,
    kind: &str,
    l: &OpenList,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    {
        let labels = PyDict::new(py);
        for (k, v) in l.labels() {
            labels.set_item(k, v)?;
        }
        let segment = PyTuple::new(py, core.segments.segment(l.segment).iter().map(|s| &**s))?;
        let (grades, keys, clicked_docs) = match &l.interactions {
            None => (
                py.None().into_bound(py),
                py.None().into_bound(py),
                py.None().into_bound(py),
            ),
            Some(i) => {
                let grades = PyTuple::new(
                    py,
                    i.grades
                        .iter()
                        .map(|(d, g)| (l.doc(d), *g).into_pyobject(py))
                        .collect::<PyResult<Vec<_>>>()?,
                )?;
                let keys = i
                    .keys
                    .iter()
                    .map(|k| match k {
                        DedupKey::Id(s) => s.into_bound_py_any(py),
                        DedupKey::Digest(d) => Ok(PyBytes::new(py, d).into_any()),
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                let clicked = match &i.clicked_docs {
                    None => py.None().into_bound(py),
                    Some(docs) => PyTuple::new(py, docs.iter().map(|d| l.doc(d)))?.into_any(),
                };
                (
                    grades.into_any(),
                    PyTuple::new(py, keys)?.into_any(),
                    clicked,
                )
            }
        };
        let teams = match l.teams() {
            None => py.None().into_bound(py),
            Some(t) => PyTuple::new(py, t)?.into_any(),
        };
        let fields: Vec<Bound<'py, PyAny>> = vec![
            kind.into_bound_py_any(py)?,
            l.request_id().into_bound_py_any(py)?,
            l.timestamp.into_bound_py_any(py)?,
            l.query_id().into_bound_py_any(py)?,
            PyTuple::new(py, l.doc_ids())?.into_any(),
            labels.into_any(),
            segment.into_any(),
            grades,
            keys,
            l.clicked().into_bound_py_any(py)?,
            l.first_click_rank().into_bound_py_any(py)?,
            teams,
            clicked_docs,
            l.counted_before().into_bound_py_any(py)?,
            core.source(l.source).into_bound_py_any(py)?,
        ];
        Ok(fields)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<JoinCore>()
}
