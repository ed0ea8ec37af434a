//! The join stage of the engine (issue 32), as `streameval/join/` and the wiring of
//! `Pipeline.offer`: dedup keys (`key`), segments and their cap (`segments`), open lists laid
//! out for memory (`open_list`), their deadline order (`deadlines`), closed ids (`closed_ids`),
//! waiting clicks (`pending`), the joiner (`joiner`), and the driver that wires decode, the
//! future-skew check, the watermark and the joiner as the Python pipeline does (`core`).

pub mod batch;
pub mod closed_ids;
pub mod core;
pub mod deadlines;
pub mod grades;
pub mod joiner;
pub mod key;
pub mod open_list;
pub mod packed;
pub mod pending;
pub mod segments;

/// The intake outcome of an event, as `streameval.values.Outcome` (its values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Invalid,
    Duplicate,
    Late,
    Unmatched,
    Pending,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Invalid => "invalid",
            Outcome::Duplicate => "duplicate",
            Outcome::Late => "late",
            Outcome::Unmatched => "unmatched",
            Outcome::Pending => "pending",
        }
    }
}
