//! The record path in batches (`NativePipeline.offer_batch`, docs/native.md "The record path
//! in batches"): the records of one source run through [`Core::step`] in one call, with the
//! bookkeeping `NativePipeline.offer` does in Python per record done here (intake counts, the
//! recovery cache of noted buckets, the due points of `Coordinator._opened` and of a waiting
//! click, evictions over the cap). The loop stops, and hands back to Python, after a record
//! whose watermark reaches `_early_due` or `_due` (Python runs the early judged pass and
//! `_advance` there, which change the due points, then calls again); what Python must do that
//! does not feed back into the loop (dead letters, `on_seconds`, recovery notes, evicted lists,
//! the first count of each intake key, what a judgment changed) is kept as [`Effect`]s, in
//! record order, for Python to apply before it acts at the stop. A judgment record is applied
//! to the core's judgment table at the record ([`Judgments`], when `judgments_in_core`:
//! docs/native.md "Judgments applied in the core"). Pure Rust: no Python object is read here,
//! so the binding runs it with the GIL released.

use crate::decode::Judgment;
use crate::join::core::{Answer, Core};
use crate::join::Outcome;
use crate::judgment_rules::Applied;

/// The judgment table a judgment record is applied to in the loop: the one scoring reads, and
/// its judge tracker (`EngineCore`'s: `CoreScoring::judgment`).
pub trait Judgments: Send {
    /// The judgment records read outside keyed topics are applied in the core: each is in the
    /// table at its record, so the loop need not return to Python at one.
    fn judgments_in_core(&self) -> bool;

    /// Apply one judgment record (`raw`: as read); `None` when judgments are not applied in the
    /// core (Python applies it: [`Effect::Judgment`] without `applied`).
    fn apply(&mut self, judgment: &Judgment, raw: &[u8]) -> Option<Applied>;
}

/// No judgment table in the core (a core that only joins).
impl Judgments for () {
    fn judgments_in_core(&self) -> bool {
        false
    }

    fn apply(&mut self, _: &Judgment, _: &[u8]) -> Option<Applied> {
        None
    }
}

/// The records of a batch, copied into one owned buffer (readable without the GIL).
#[derive(Debug, Default)]
pub struct Records {
    buf: Vec<u8>,
    /// per record, the end of its bytes in `buf`
    ends: Vec<usize>,
    offsets: Vec<i64>,
    record_ms: Vec<i64>,
}

impl Records {
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Records {
            buf: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(records),
            offsets: Vec::with_capacity(records),
            record_ms: Vec::with_capacity(records),
        }
    }

    pub fn push(&mut self, value: &[u8], offset: i64, record_ms: i64) {
        self.buf.extend_from_slice(value);
        self.ends.push(self.buf.len());
        self.offsets.push(offset);
        self.record_ms.push(record_ms);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn raw(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.buf[start..self.ends[i]]
    }
}

/// The event types the loop counts (judgments are counted by Python, from their effect).
pub const IMPRESSION: usize = 0;
pub const CLICK: usize = 1;

/// The intake counts of the records run so far (`IntakeCounters`' fields, by `IMPRESSION` /
/// `CLICK` where it counts by type), for Python to add once the batch is done.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct IntakeDelta {
    pub read: u64,
    pub accepted: [u64; 2],
    pub duplicate: [u64; 2],
    pub late: [u64; 2],
    pub unmatched: u64,
    /// may go down: a waiting click counted before the batch resolved in it
    pub pending: i64,
}

/// The counters of `IntakeCounters` that count by type (a `Counter`, whose keys keep the
/// order they were first counted in: see [`Effect::Touch`]).
pub const ACCEPTED: u8 = 0;
pub const DUPLICATE: u8 = 1;
pub const LATE: u8 = 2;

/// What Python does for a record, in record order, before it acts at a stop.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// a record invalid and counted: `_invalid` (count and dead letter)
    Invalid {
        index: usize,
        reason: &'static str,
        detail: String,
        field: String,
    },
    /// a judgment: `applied` in the core (its outcome, to count when `counted`; what it
    /// changed, for the Python table and its listener), else (`None`) to decode with the
    /// source's Python decoder and apply by `JudgmentRules`
    Judgment {
        index: usize,
        counted: bool,
        applied: Option<Applied>,
    },
    /// an event time in epoch seconds: `on_seconds(ts, source)`
    Seconds { ts: i64 },
    /// `Recovery.note_offset(source, ts, offset)` (only when the bucket or source changed)
    Note { ts: i64, offset: i64 },
    /// the sequence numbers of the lists an impression evicted over `max_open_lists`
    Evicted(Vec<u64>),
    /// the first count in this batch into `counter` (`ACCEPTED`...) for `kind`: Python makes
    /// the key here (`+= 0`), so that its counters' keys come in the order per record gives
    Touch { counter: u8, kind: u8 },
}

/// One batch of one source being run, and what the records run so far left for Python.
#[derive(Debug)]
pub struct Batch {
    pub records: Records,
    pub source: String,
    /// the horizon a previous run counted lists through (`NativePipeline.offer`'s
    /// `horizon_before`), and the offset from which records count (None: every record)
    pub horizon_before: Option<i64>,
    pub counted_from: Option<i64>,
    /// `on_seconds` is set: event times in [0, this) are told
    pub seconds_below: Option<i64>,
    /// the early judged pass is on (`Coordinator._early`)
    pub early: bool,
    /// `Recovery`'s cache: the bucket [start, end) last noted, when of this source
    pub noted: Option<(i64, i64)>,
    /// the next record to run
    pub next: usize,
    pub intake: IntakeDelta,
    pub effects: Vec<Effect>,
    /// the offset after the last record with an offset (`_next_offset`)
    pub next_offset: Option<i64>,
    /// the times the loop stopped for Python (a due point it did not handle itself, a
    /// judgment while it finalizes inline)
    pub stops: u64,
    /// a judgment record ran since the effects were last handed to Python
    pub judgment_unapplied: bool,
    touched: u8,
}

/// What the loop does itself at a due point when the engine declares it can (docs/native.md
/// "A batch that stops per bucket"): `Coordinator._advance`'s per-list work, on the state the
/// engine keeps beside the join (scoring, the fold, the consumers' sums); as it holds the
/// judgment table and the judge tracker, it applies the judgment records too ([`Judgments`]).
pub trait AtDue: Judgments {
    /// Finalize and fold every list due at `watermark`; false when they need the Python back
    /// half (held for it: the loop stops, and Python's `_advance` takes them first).
    fn finalize(&mut self, core: &mut Core, watermark: i64) -> bool;
    /// Lists evicted over the cap: counted `evicted`, their kept early scores dropped.
    fn evicted(&mut self, seqs: &[u64]);
    /// The horizon moved: the window buckets no window covers go (`WindowStore.evict`).
    fn evict(&mut self, horizon_ms: i64);
    /// `WindowStore.next_eviction`.
    fn next_eviction(&self) -> Option<i64>;
}

/// The loop's part of `_advance` and where it must stop instead: `consumers_due` (the
/// horizon at which the consumers are next told it, `Coordinator._consumers_due`; `i64::MIN`:
/// at the first due point) and `signals_due` (the judge tracker's eviction in Python,
/// `ListSignals.advance`; `i64::MAX`: never). A due point after a judgment record the core
/// did not apply stops too (Python applies it before any list is scored against it).
pub struct Inline<'a> {
    pub at: &'a mut (dyn AtDue + Send),
    pub consumers_due: i64,
    pub signals_due: i64,
}

/// `Coordinator._due` and `_early_due` (None: never, Python's infinity).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dues {
    pub due: Option<i64>,
    pub early_due: Option<i64>,
}

fn below(x: i64, due: Option<i64>) -> bool {
    due.is_none_or(|d| x < d)
}

impl Batch {
    pub fn new(records: Records, source: String) -> Self {
        Batch {
            records,
            source,
            horizon_before: None,
            counted_from: None,
            seconds_below: None,
            early: false,
            noted: None,
            next: 0,
            intake: IntakeDelta::default(),
            effects: Vec::new(),
            next_offset: None,
            stops: 0,
            judgment_unapplied: false,
            touched: 0,
        }
    }

    pub fn done(&self) -> bool {
        self.next >= self.records.len()
    }

    fn count(&mut self, outcome: Outcome, kind: usize, counted: bool, new_record: bool) {
        if !counted {
            return;
        }
        if new_record {
            self.intake.read += 1;
        }
        let counter = match outcome {
            Outcome::Accepted => {
                self.intake.accepted[kind] += 1;
                ACCEPTED
            }
            Outcome::Duplicate => {
                self.intake.duplicate[kind] += 1;
                DUPLICATE
            }
            Outcome::Late => {
                self.intake.late[kind] += 1;
                LATE
            }
            Outcome::Pending => {
                self.intake.pending += 1;
                return;
            }
            Outcome::Unmatched => {
                self.intake.unmatched += 1;
                return;
            }
            Outcome::Invalid => return, // (never the answer of an event)
        };
        let bit = 1 << (counter as usize * 2 + kind);
        if self.touched & bit == 0 {
            self.touched |= bit;
            self.effects.push(Effect::Touch {
                counter,
                kind: kind as u8,
            });
        }
    }
}

/// Run the batch's records from `batch.next` on, as `NativePipeline.offer` would one by one,
/// until one leaves a watermark at or past a due point: Some(that watermark), the record
/// run (Python acts, then calls again); None: every record run. A judgment is applied to
/// `judgments` at its record.
pub fn run(
    core: &mut Core,
    batch: &mut Batch,
    dues: &mut Dues,
    judgments: &mut dyn Judgments,
) -> Option<i64> {
    run_inline(core, batch, dues, judgments, None)
}

/// [`run`], and with `inline` the due points of finalization handled here (`_advance`'s work:
/// finalize and fold, expire waiting clicks, evict the windows, the next due point) unless
/// the horizon enters a bucket (the consumers act: Python), the early judged pass is due
/// (Python, once per bucket), or the lists need the Python back half. With `inline`, its
/// [`AtDue`] applies the judgments (it holds the same tables), not `judgments`.
pub fn run_inline(
    core: &mut Core,
    batch: &mut Batch,
    dues: &mut Dues,
    judgments: &mut dyn Judgments,
    mut inline: Option<Inline<'_>>,
) -> Option<i64> {
    let stop = run_records(core, batch, dues, judgments, &mut inline);
    if stop.is_some() {
        batch.stops += 1;
    }
    stop
}

fn run_records(
    core: &mut Core,
    batch: &mut Batch,
    dues: &mut Dues,
    judgments: &mut dyn Judgments,
    inline: &mut Option<Inline<'_>>,
) -> Option<i64> {
    let attribution = core.settings().attribution_ms;
    let bucket = core.settings().bucket_ms;
    while batch.next < batch.records.len() {
        let i = batch.next;
        batch.next += 1;
        let offset = batch.records.offsets[i];
        let counted = batch.counted_from.is_none_or(|c| offset >= c);
        let step = core.step(
            batch.records.raw(i),
            &batch.source,
            batch.records.record_ms[i],
            batch.horizon_before,
            counted,
        );
        if offset >= 0 {
            batch.next_offset = Some(offset + 1);
        }
        let (outcome, kind) = match step.answer {
            Answer::Invalid { reason, detail } => {
                if counted {
                    batch.effects.push(Effect::Invalid {
                        index: i,
                        reason,
                        detail,
                        field: step.field,
                    });
                }
                continue;
            }
            Answer::Judgment => {
                let raw = batch.records.raw(i);
                let applied = step.judgment.and_then(|j| match inline.as_mut() {
                    Some(inline) => inline.at.apply(&j, raw),
                    None => judgments.apply(&j, raw),
                });
                if applied.is_none() {
                    batch.judgment_unapplied = true; // (Python applies it: the next due point stops)
                }
                batch.effects.push(Effect::Judgment {
                    index: i,
                    counted,
                    applied,
                });
                continue;
            }
            Answer::Impression(o) => (o, IMPRESSION),
            Answer::Click(o) => (o, CLICK),
        };
        let ts = step.ts.expect("an event's time");
        if batch.seconds_below.is_some_and(|s| (0..s).contains(&ts)) {
            batch.effects.push(Effect::Seconds { ts });
        }
        if offset >= 0 && !batch.noted.is_some_and(|(s, e)| s <= ts && ts < e) {
            batch.effects.push(Effect::Note { ts, offset });
            let start = ts - ts.rem_euclid(bucket);
            batch.noted = Some((start, start + bucket));
        }
        if kind == IMPRESSION {
            for (click, click_counted) in step.resolved {
                if click_counted {
                    // read (and counted pending) earlier: now its final outcome
                    batch.intake.pending -= 1;
                    batch.count(click, CLICK, true, false);
                }
            }
            batch.count(outcome, IMPRESSION, counted, true);
            if outcome == Outcome::Accepted {
                let at = inline.as_mut().map(|i| &mut *i.at as &mut dyn AtDue);
                opened(core, batch, dues, ts, attribution, bucket, at);
            }
        } else {
            batch.count(outcome, CLICK, counted, true);
            if outcome == Outcome::Pending && below(ts + 1, dues.due) {
                dues.due = Some(ts + 1);
            }
        }
        if let Some(wm) = step.watermark {
            if !below(wm, dues.early_due) {
                return Some(wm);
            }
            if !below(wm, dues.due) {
                let handled = match inline.as_mut() {
                    Some(inline) => advance(core, batch, dues, inline, wm, attribution),
                    None => false,
                };
                if !handled {
                    return Some(wm);
                }
            }
        }
    }
    None
}

/// `Coordinator._advance(watermark)` here (the early judged pass is not due); false when
/// Python must act: the lists need its back half, or the horizon reaches `consumers_due` or
/// `signals_due` (finalization and expiry done here are not repeated by Python's
/// `_advance`: nothing is due again at the same watermark).
fn advance(
    core: &mut Core,
    batch: &mut Batch,
    dues: &mut Dues,
    inline: &mut Inline<'_>,
    watermark: i64,
    attribution: i64,
) -> bool {
    if batch.judgment_unapplied {
        return false; // (Python applies it first: the lists are scored against it)
    }
    if !inline.at.finalize(core, watermark) {
        return false;
    }
    let expired = core.joiner.expire_pending(Some(watermark));
    // `IntakeCounters.unmatched_from_pending`
    batch.intake.pending -= expired as i64;
    batch.intake.unmatched += expired;
    let horizon = watermark - attribution;
    if horizon >= inline.consumers_due || horizon >= inline.signals_due {
        return false;
    }
    inline.at.evict(horizon);
    let drop = inline.at.next_eviction().map(|d| d + attribution);
    dues.due = match (core.joiner.next_due(), drop) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    true
}

/// `Coordinator._opened`: the list's due points, and the lists over the cap evicted (counted
/// by `at` when the loop finalizes inline, else an effect for Python).
fn opened(
    core: &mut Core,
    batch: &mut Batch,
    dues: &mut Dues,
    ts: i64,
    attr: i64,
    bucket: i64,
    at: Option<&mut dyn AtDue>,
) {
    if below(ts + attr, dues.due) {
        dues.due = Some(ts + attr);
    }
    if batch.early && below(ts, dues.early_due) {
        let end = ts - ts.rem_euclid(bucket) + bucket;
        if below(end, dues.early_due) {
            dues.early_due = Some(end);
        }
    }
    let evicted = core.joiner.evict_over_cap();
    if !evicted.is_empty() {
        let seqs: Vec<u64> = evicted.iter().map(|l| l.seq).collect();
        match at {
            Some(at) => at.evicted(&seqs),
            None => batch.effects.push(Effect::Evicted(seqs)),
        }
    }
}

#[cfg(test)]
#[path = "batch_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "batch_inline_tests.rs"]
mod inline_tests;
