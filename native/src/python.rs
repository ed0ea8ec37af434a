//! The extension module `streameval._native`: a thin binding of [`crate::decode`].

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::decode::{self, Event};

/// Decode one record of a native source, as `streameval.events.decode.decode_native` does.
///
/// Returns the event's fields in the order of its pydantic model's fields (`type` first:
/// `"impression"`, `"click"` or `"judgment"`; an impression ends with `teams`), or, for an
/// invalid record, the 2-tuple `(reason, detail)`.
#[pyfunction]
#[pyo3(signature = (raw, max_bytes = 1_048_576))]
fn decode_native<'py>(
    py: Python<'py>,
    raw: &[u8],
    max_bytes: usize,
) -> PyResult<Bound<'py, PyTuple>> {
    answer(py, decode::decode_native(raw, max_bytes))
}

/// A decoder's answer as the tuple of `decode_native` (the bindings of other decoders too).
pub(crate) fn answer(
    py: Python<'_>,
    decoded: Result<Event, decode::Invalid>,
) -> PyResult<Bound<'_, PyTuple>> {
    match decoded {
        Err(invalid) => (invalid.reason, invalid.detail).into_pyobject(py),
        Ok(Event::Impression(e)) => {
            let labels = PyDict::new(py);
            for (key, value) in e.labels {
                labels.set_item(key, value)?;
            }
            let teams = match e.teams {
                None => None,
                Some(teams) => Some(PyTuple::new(py, teams)?),
            };
            (
                "impression",
                e.request_id,
                e.timestamp,
                PyTuple::new(py, e.doc_ids)?,
                e.query,
                e.query_id,
                labels,
                e.event_id,
                teams,
            )
                .into_pyobject(py)
        }
        Ok(Event::Click(e)) => (
            "click",
            e.request_id,
            e.doc_id,
            e.timestamp,
            e.action,
            e.dwell_ms,
            e.position,
            e.event_id,
        )
            .into_pyobject(py),
        Ok(Event::Judgment(e)) => (
            "judgment",
            e.query_id,
            e.query,
            e.doc_id,
            e.grade,
            e.timestamp,
            e.judge,
            e.event_id,
        )
            .into_pyobject(py),
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode_native, m)?)?;
    crate::python_query_sums::register(m)?;
    m.add("UNICODE_VERSION", crate::tables::UNICODE_VERSION)?;
    crate::python_formats::register(m)?;
    crate::python_windows::register(m)?;
    crate::python_score::register(m)?;
    crate::python_join::register(m)?;
    crate::python_engine::register(m)?;
    crate::python_judges::register(m)?;
    crate::python_batch::register(m)?;
    Ok(())
}
