//! `streameval._native.RecordBatch` and `EngineCore.offer_batch`: the record path in batches
//! (`crate::join::batch`, `NativePipeline.offer_batch`). The records are copied once into one
//! owned buffer, then each call runs them with the GIL released up to the next point where
//! Python has to act, and hands back what Python does for them, in record order.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::join::batch::{self, Batch, Dues, Effect, Inline, Judgments, Records};
use crate::join::core::Core;
use crate::judgment_rules::Applied;

/// The records of one source being offered: `rows` of `(value: bytes | None, offset,
/// record_ms)` in order (a None value is the empty record), and what `NativePipeline.offer`
/// reads per source (`horizon_before`, `counted_from`: a previous run's checkpoint;
/// `seconds_below`: `on_seconds` is set; `early`: the early judged pass is on; `noted`: the
/// bucket `Recovery` noted last, when of this source).
#[pyclass(module = "streameval._native")]
pub struct RecordBatch {
    batch: Batch,
}

#[pymethods]
impl RecordBatch {
    #[new]
    #[pyo3(signature = (rows, source, *, horizon_before = None, counted_from = None,
        seconds_below = None, early = false, noted = None))]
    fn new(
        rows: &Bound<'_, PyAny>,
        source: String,
        horizon_before: Option<i64>,
        counted_from: Option<i64>,
        seconds_below: Option<i64>,
        early: bool,
        noted: Option<(i64, i64)>,
    ) -> PyResult<Self> {
        let n = rows.len().unwrap_or(0);
        let mut records = Records::with_capacity(n, n * 256);
        for row in rows.try_iter()? {
            let (value, offset, record_ms): (Option<Bound<'_, PyBytes>>, i64, i64) =
                row?.extract()?;
            let raw = value.as_ref().map_or(&b""[..], |v| v.as_bytes());
            records.push(raw, offset, record_ms);
        }
        let mut batch = Batch::new(records, source);
        batch.horizon_before = horizon_before;
        batch.counted_from = counted_from;
        batch.seconds_below = seconds_below;
        batch.early = early;
        batch.noted = noted;
        Ok(RecordBatch { batch })
    }

    fn __len__(&self) -> usize {
        self.batch.records.len()
    }

    /// The times the batch stopped for Python (`crate::join::batch::Batch::stops`).
    #[getter]
    fn stops(&self) -> u64 {
        self.batch.stops
    }

    /// Every record run.
    #[getter]
    fn done(&self) -> bool {
        self.batch.done()
    }

    /// The offset after the last record with an offset (`_next_offset`), else None.
    #[getter]
    fn next_offset(&self) -> Option<i64> {
        self.batch.next_offset
    }

    /// The intake counts of the records run: `(read, accepted impressions, accepted clicks,
    /// duplicate impressions, duplicate clicks, late impressions, late clicks, unmatched,
    /// pending)` (pending: a change, maybe negative). Judgments and invalid records are not in
    /// them (Python counts them as it applies them).
    fn intake(&self) -> (u64, u64, u64, u64, u64, u64, u64, u64, i64) {
        let d = &self.batch.intake;
        (
            d.read,
            d.accepted[0],
            d.accepted[1],
            d.duplicate[0],
            d.duplicate[1],
            d.late[0],
            d.late[1],
            d.unmatched,
            d.pending,
        )
    }
}

/// One effect as Python applies it: `(0, index, reason, detail, field)` an invalid record
/// counted; `(1, index, counted, outcome, change)` a judgment (`outcome` None: not applied in
/// the core; `change`: see [`judgment_change`]); `(2, ts)` `on_seconds`; `(3, ts, offset)`
/// `Recovery.note_offset`; `(4, [seq...])` lists evicted; `(5, counter, kind)` an intake
/// key's first count (counter 0 accepted, 1 duplicate, 2 late; kind 0 impression, 1 click).
fn effect<'py>(py: Python<'py>, e: Effect) -> PyResult<Bound<'py, PyAny>> {
    match e {
        Effect::Invalid {
            index,
            reason,
            detail,
            field,
        } => (0, index, reason, detail, field).into_bound_py_any(py),
        Effect::Judgment {
            index,
            counted,
            applied,
        } => {
            let (outcome, change) = match applied {
                None => (None, py.None().into_bound(py)),
                Some(a) => (Some(a.outcome.as_str()), judgment_change(py, a)?),
            };
            (1, index, counted, outcome, change).into_bound_py_any(py)
        }
        Effect::Seconds { ts } => (2, ts).into_bound_py_any(py),
        Effect::Note { ts, offset } => (3, ts, offset).into_bound_py_any(py),
        Effect::Evicted(seqs) => (4, seqs).into_bound_py_any(py),
        Effect::Touch { counter, kind } => (5, counter, kind).into_bound_py_any(py),
    }
}

/// What a judgment applied in the core changed, as `JudgmentStore.mirror` takes it: `(query_id,
/// doc_id, {judge: (timestamp, grade)}, version)` (the judges in the table's order); None:
/// nothing changed.
pub(crate) fn judgment_change<'py>(py: Python<'py>, a: Applied) -> PyResult<Bound<'py, PyAny>> {
    let Some(c) = a.change else {
        return Ok(py.None().into_bound(py));
    };
    let judges = PyDict::new(py);
    for (judge, timestamp, grade) in c.judges {
        judges.set_item(judge, (timestamp, grade))?;
    }
    (c.query_id, c.doc_id, judges, c.version).into_bound_py_any(py)
}

/// `EngineCore.offer_batch`: run `batch` on from where it stopped, with the GIL released,
/// given `_due` and `_early_due` (`dues`; None: never). Returns `(watermark, due, early_due,
/// effects)`: the watermark that reached a due point (None: every record run), the due points
/// as the records run left them, and the effects of those records (None: none).
/// `evicted` is told the sequence number of every list the records evicted over the cap
/// (the engine drops what it keeps of them) before the effects are handed out; a judgment is
/// applied to `judgments` at its record. `inline`: the loop handles due points itself
/// (`batch::run_inline`; its `at` then applies the judgments).
pub(crate) fn offer_batch<'py>(
    py: Python<'py>,
    core: &mut Core,
    batch: &Bound<'py, RecordBatch>,
    mut dues: Dues,
    inline: Option<Inline<'_>>,
    evicted: &mut dyn FnMut(u64),
    judgments: &mut dyn Judgments,
) -> PyResult<Bound<'py, PyTuple>> {
    let mut guard = batch.borrow_mut();
    let b = &mut guard.batch;
    let stop = py.detach(|| batch::run_inline(core, b, &mut dues, judgments, inline));
    b.judgment_unapplied = false; // (handed to Python with the effects below)
    let effects = if b.effects.is_empty() {
        py.None().into_bound(py)
    } else {
        let out = PyList::empty(py);
        for e in b.effects.drain(..) {
            if let Effect::Evicted(seqs) = &e {
                seqs.iter().for_each(|&seq| evicted(seq));
            }
            out.append(effect(py, e)?)?;
        }
        out.into_any()
    };
    PyTuple::new(
        py,
        [
            stop.into_bound_py_any(py)?,
            dues.due.into_bound_py_any(py)?,
            dues.early_due.into_bound_py_any(py)?,
            effects,
        ],
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RecordBatch>()
}
