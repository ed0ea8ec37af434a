//! The binding of the UBI and mapped-JSON decoders (`crate::ubi`, `crate::mapped`), in the
//! extension module `streameval._native`: the same answer tuples as `decode_native`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::python::answer;
use crate::ubi;

/// Decode one record of a source of format `auto` (a native event, or else UBI), as
/// `streameval.events.decode.decode` does.
#[pyfunction]
#[pyo3(signature = (raw, max_bytes = 1_048_576))]
fn decode<'py>(py: Python<'py>, raw: &[u8], max_bytes: usize) -> PyResult<Bound<'py, PyTuple>> {
    answer(py, ubi::decode(raw, max_bytes))
}

/// Decode one record of a source declared UBI, as `streameval.events.decode.decode_ubi` does.
#[pyfunction]
#[pyo3(signature = (raw, max_bytes = 1_048_576))]
fn decode_ubi<'py>(py: Python<'py>, raw: &[u8], max_bytes: usize) -> PyResult<Bound<'py, PyTuple>> {
    answer(py, ubi::decode_ubi(raw, max_bytes))
}

/// Add this file's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_ubi, m)?)?;
    Ok(())
}
