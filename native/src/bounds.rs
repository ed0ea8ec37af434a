//! The bounds of every field of an event: `streameval/events/bounds.py`, the same numbers
//! (a unit test of `tests/unit/test_native_decode.py` compares them).

pub const MAX_ID_CHARS: usize = 256;
pub const MAX_QUERY_CHARS: usize = 1024;
pub const MAX_RESULTS: usize = 1000;
pub const MAX_LABELS: usize = 32;
pub const MAX_LABEL_KEY_CHARS: usize = 64;
pub const MAX_LABEL_VALUE_CHARS: usize = 256;
pub const MAX_ACTION_CHARS: usize = 100;
pub const MAX_JUDGE_CHARS: usize = 256;
pub const MAX_DWELL_MS: f64 = 1e12;
pub const MAX_POSITION: i64 = 1_000_000;
pub const MIN_GRADE: f64 = -1000.0;
pub const MAX_GRADE: f64 = 1000.0;
pub const MAX_EPOCH_MS: i64 = 253_402_300_799_999;
