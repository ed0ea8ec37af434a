//! The native engine of streameval (DESIGN §13, issue 32). This first slice is the decoder of
//! native JSON events (`decode`), with its own pieces (`event_time`, `normalize`, `bounds`), and
//! the Python binding (`python`, feature `python`): the extension module `streameval._native`.
//! Then scoring, every metric variant (`score`), and the judgment table with its rules
//! (`judgments`, `judgment_rules`), bound by `python_score`.
//! The Python engine stays the engine that runs; this crate is checked against it by the
//! differential tests `tests/unit/test_native_decode.py` and `test_native_score.py`.

#![forbid(unsafe_code)]

pub mod bounds;
pub mod core_fold;
pub mod core_scoring;
pub mod core_sums;
pub mod decode;
pub mod decode_fast;
pub mod event_time;
pub mod hash;
pub mod join;
pub mod judges;
pub mod judgment_rules;
pub mod judgments;
pub mod mapped;
pub mod mapped_config;
pub mod mapped_fields;
pub mod mapped_time;
pub mod normalize;
pub mod pointer;
pub mod printable;
pub mod pyvalue;
pub mod query_sums;
pub mod ranges;
pub mod score;
pub mod scored;
pub mod tables;
pub mod ubi;
pub mod ubi_event;
pub mod ubi_models;
pub mod watermark;
pub mod windows;

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_batch;
#[cfg(feature = "python")]
mod python_engine;
#[cfg(feature = "python")]
mod python_formats;
#[cfg(feature = "python")]
mod python_join;
#[cfg(feature = "python")]
mod python_judges;
#[cfg(feature = "python")]
mod python_query_sums;
#[cfg(feature = "python")]
mod python_score;
#[cfg(feature = "python")]
mod python_scored_lists;
#[cfg(feature = "python")]
mod python_windows;
