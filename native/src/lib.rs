//! The native engine of streameval (DESIGN §13, issue 32). This first slice is the decoder of
//! native JSON events (`decode`), with its own pieces (`event_time`, `normalize`, `bounds`), and
//! the Python binding (`python`, feature `python`): the extension module `streameval._native`.
//! The Python engine stays the engine that runs; this crate is checked against it by the
//! differential test `tests/unit/test_native_decode.py`.

#![forbid(unsafe_code)]

pub mod bounds;
pub mod decode;
pub mod event_time;
pub mod normalize;
pub mod printable;
pub mod tables;

#[cfg(feature = "python")]
mod python;
