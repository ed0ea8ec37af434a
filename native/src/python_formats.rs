//! The binding of the UBI and mapped-JSON decoders (`crate::ubi`, `crate::mapped`), in the
//! extension module `streameval._native`: the same answer tuples as `decode_native`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::python::answer;
use crate::{mapped, ubi};

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

/// A mapped JSON format's decoder (`streameval.events.mapping.MappedJsonDecoder`), built once
/// from its mapping: `MappedDecoder(settings.model_dump_json(), max_bytes)`; `.decode(raw)`
/// answers like `decode_native`, an invalid record as `(reason, detail, field)`.
#[pyclass(frozen, module = "streameval._native")]
struct MappedDecoder(mapped::MappedDecoder);

#[pymethods]
impl MappedDecoder {
    #[new]
    #[pyo3(signature = (settings_json, max_bytes = 1_048_576))]
    fn new(settings_json: &str, max_bytes: usize) -> PyResult<Self> {
        mapped::MappedDecoder::new(settings_json.as_bytes(), max_bytes)
            .map(MappedDecoder)
            .map_err(pyo3::exceptions::PyValueError::new_err)
    }

    fn decode<'py>(&self, py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyTuple>> {
        match self.0.decode(raw) {
            Ok(event) => answer(py, Ok(event)),
            Err((invalid, field)) => (invalid.reason, invalid.detail, field).into_pyobject(py),
        }
    }
}

/// Add this file's functions and classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(decode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_ubi, m)?)?;
    m.add_class::<MappedDecoder>()?;
    Ok(())
}
