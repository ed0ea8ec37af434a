//! The WINDOWS stage of the engine and its bookkeeping, as `streameval/windows/` and
//! `engine/intake.py` do it: window definitions (`spec`), the buckets of sufficient statistics
//! and the rows a snapshot reads of them (`store`), the since-start totals (`totals`), the
//! intake counters (`intake`), the buckets of each source not yet persisted (`source_buckets`)
//! and the state topic's bucket codec (`persisted`, whose bytes are Python's `json.dumps`,
//! `pyjson`). Python's dicts are `ordered` maps looked up by borrowed keys (`lookup`). Fed with
//! [`crate::scored::ScoredList`].

pub mod intake;
pub mod lookup;
pub mod ordered;
pub mod persisted;
pub mod pyjson;
pub mod source_buckets;
pub mod spec;
pub mod store;
pub mod totals;
