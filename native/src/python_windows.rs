//! The binding of the windows stage (`crate::windows`): `WindowsCore` (the window buckets, the
//! since-start totals and the buckets not yet persisted, fed scored lists as the Python engine's
//! `Pipeline._fold` feeds them) and `IntakeCore` (the intake counters). For the differential test
//! `tests/unit/test_native_windows.py` and, later, the native engine's Python side.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::scored::{Interleaved, PairOutcome, ScoredList, SourceScore};
use crate::windows::intake::{Counts, IntakeCounters, Outcome};
use crate::windows::persisted::{decode_bucket, encode_bucket};
use crate::windows::source_buckets::SourceBuckets;
use crate::windows::spec::WindowSpec;
use crate::windows::store::{Bucket, EngagementRow, Moments, NdcgRow, WindowStore};
use crate::windows::totals::Totals;

fn item<'py>(t: &Bound<'py, PyTuple>, i: usize, what: &str) -> PyResult<Bound<'py, PyAny>> {
    t.get_item(i)
        .map_err(|_| PyValueError::new_err(format!("{what}: field {i} is missing")))
}

fn tuple<'py>(value: &Bound<'py, PyAny>, len: usize, what: &str) -> PyResult<Bound<'py, PyTuple>> {
    let t = value
        .cast::<PyTuple>()
        .map_err(|_| PyValueError::new_err(format!("{what}: a tuple was expected")))?;
    if t.len() != len {
        return Err(PyValueError::new_err(format!(
            "{what}: {len} fields were expected, not {}",
            t.len()
        )));
    }
    Ok(t.clone())
}

/// A `values.SourceScore` (or a tuple of its seven fields); `dcg` and `idcg`, which the windows
/// do not read, are left empty.
pub(crate) fn source_score(value: &Bound<'_, PyAny>) -> PyResult<SourceScore> {
    let t = tuple(value, 7, "SourceScore")?;
    let source = SourceScore {
        relevance: item(&t, 0, "SourceScore")?.extract()?,
        outcome: item(&t, 1, "SourceScore")?.extract()?,
        ks: item(&t, 2, "SourceScore")?.extract()?,
        ndcg: item(&t, 3, "SourceScore")?.extract()?,
        dcg: Vec::new(),
        idcg: Vec::new(),
        coverage: item(&t, 6, "SourceScore")?.extract()?,
    };
    let cutoffs = source.ks.len();
    if source.ndcg.len() != cutoffs || source.coverage.as_ref().is_some_and(|c| c.len() != cutoffs)
    {
        return Err(PyValueError::new_err(format!(
            "SourceScore {:?}: one ndcg (and coverage) value per k is needed",
            source.relevance
        )));
    }
    Ok(source)
}

/// A `values.Interleaved` (or a tuple of its six fields): its `counted_before` and `outcomes`,
/// what the windows read of it (the documents, teams, clicks and grades are left empty).
fn interleaved(value: &Bound<'_, PyAny>) -> PyResult<Interleaved> {
    let t = tuple(value, 6, "Interleaved")?;
    let mut outcomes = Vec::new();
    for o in item(&t, 5, "Interleaved")?.try_iter()? {
        let (ranker, opponent, name): (String, String, String) = o?.extract()?;
        let outcome = PairOutcome::from_name(&name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "interleaving outcome {name:?}: one of win, loss, tie, no_click"
            ))
        })?;
        outcomes.push((ranker, opponent, outcome));
    }
    Ok(Interleaved {
        doc_ids: Vec::new(),
        teams: Vec::new(),
        clicked: Vec::new(),
        grades: Vec::new(),
        counted_before: item(&t, 4, "Interleaved")?.extract()?,
        outcomes,
    })
}

/// A `values.ScoredList` (a named tuple: any tuple of its eleven fields in its order), the
/// fields the windows read: `request_id`, `query_id` and `labels` are left empty (the native
/// scoring stage will hand over whole lists without this conversion).
pub(crate) fn scored_list(value: &Bound<'_, PyAny>) -> PyResult<ScoredList> {
    let t = tuple(value, 11, "ScoredList")?;
    let mut sources = Vec::new();
    for s in item(&t, 5, "ScoredList")?.try_iter()? {
        sources.push(source_score(&s?)?);
    }
    let inter = item(&t, 9, "ScoredList")?;
    Ok(ScoredList {
        request_id: String::new(),
        query_id: String::new(),
        timestamp: item(&t, 2, "ScoredList")?.extract()?,
        labels: Vec::new(),
        segment: item(&t, 4, "ScoredList")?.extract()?,
        sources,
        clicked: item(&t, 6, "ScoredList")?.extract()?,
        first_click_rank: item(&t, 7, "ScoredList")?.extract()?,
        interacted: item(&t, 8, "ScoredList")?.extract()?,
        interleaved: if inter.is_none() {
            None
        } else {
            Some(interleaved(&inter)?)
        },
        source: item(&t, 10, "ScoredList")?.extract()?,
    })
}

fn moments(py: Python<'_>, m: &Moments) -> PyResult<Py<PyAny>> {
    Ok((m.n, m.total, m.total_sq)
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

fn ndcg_row(py: Python<'_>, r: &NdcgRow) -> PyResult<Py<PyAny>> {
    let coverage = match &r.coverage {
        Some(c) => Some(moments(py, c)?),
        None => None,
    };
    Ok((
        r.window.as_str(),
        r.relevance.as_str(),
        PyTuple::new(py, &r.segment)?,
        r.k,
        moments(py, &r.ndcg)?,
        coverage,
    )
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

fn engagement_row(py: Python<'_>, r: &EngagementRow) -> PyResult<Py<PyAny>> {
    Ok((
        r.window.as_str(),
        PyTuple::new(py, &r.segment)?,
        r.lists,
        r.clicked_lists,
        moments(py, &r.reciprocal_rank)?,
        r.zero_click_lists,
    )
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

/// `Totals.cumulative` of `totals` as Python reads it: (relevance, segment, k, ndcg_sum,
/// lists_scored) per row.
pub(crate) fn totals_cumulative<'py>(
    py: Python<'py>,
    totals: &Totals,
) -> PyResult<Vec<Bound<'py, PyTuple>>> {
    totals
        .cumulative()
        .iter()
        .map(|r| {
            (
                r.relevance.as_str(),
                PyTuple::new(py, &r.segment)?,
                r.k,
                r.ndcg_sum,
                r.lists_scored,
            )
                .into_pyobject(py)
        })
        .collect()
}

/// `WindowStore.rows` of `store` as Python reads them: (ndcg rows, engagement rows).
pub(crate) fn store_rows<'py>(
    py: Python<'py>,
    store: &WindowStore,
    horizon_ms: Option<i64>,
) -> PyResult<Bound<'py, PyTuple>> {
    let (ndcg, eng) = store.rows(horizon_ms);
    let ndcg = ndcg
        .iter()
        .map(|r| ndcg_row(py, r))
        .collect::<PyResult<Vec<_>>>()?;
    let eng = eng
        .iter()
        .map(|r| engagement_row(py, r))
        .collect::<PyResult<Vec<_>>>()?;
    (PyTuple::new(py, ndcg)?, PyTuple::new(py, eng)?).into_pyobject(py)
}

/// A bucket as tuples: (ndcg, coverage, engagement, interleaving), each a tuple of
/// (key, accumulators) in insertion order; keys as Python's (segment and ks tuples).
fn bucket_tuple<'py>(py: Python<'py>, b: &Bucket) -> PyResult<Bound<'py, PyTuple>> {
    let table =
        |t: &crate::windows::ordered::OrderedMap<_, Vec<f64>>| -> PyResult<Bound<'py, PyTuple>> {
            let mut rows = Vec::new();
            for ((rel, seg, ks), acc) in t.iter() {
                let key: (&String, Bound<PyTuple>, Bound<PyTuple>) =
                    (rel, PyTuple::new(py, seg)?, PyTuple::new(py, ks)?);
                rows.push((key, PyTuple::new(py, acc)?).into_pyobject(py)?);
            }
            PyTuple::new(py, rows)
        };
    let mut eng = Vec::new();
    for (seg, acc) in b.engagement.iter() {
        eng.push((PyTuple::new(py, seg)?, PyTuple::new(py, acc)?).into_pyobject(py)?);
    }
    let mut inter = Vec::new();
    for ((r, o), acc) in b.interleaving.iter() {
        inter.push(((r, o), PyTuple::new(py, acc)?).into_pyobject(py)?);
    }
    (
        table(&b.ndcg)?,
        table(&b.coverage)?,
        PyTuple::new(py, eng)?,
        PyTuple::new(py, inter)?,
    )
        .into_pyobject(py)
}

/// The Rust state of a `WindowsCore` (owned, `Send`: folded with the GIL released).
struct Core {
    store: WindowStore,
    totals: Totals,
    unpersisted: SourceBuckets,
    sources: Vec<String>,
}

impl Core {
    fn fold(&mut self, scored: &ScoredList, window: bool, count: bool) {
        if window {
            self.store.add(scored);
            self.unpersisted.add(&scored.source, scored);
        }
        if count {
            self.totals.count_list(scored);
        }
    }
}

/// The window buckets, the since-start totals and the buckets not yet in the state topic, as
/// `WindowStore`, `Totals` and `SourceBuckets` hold them.
#[pyclass(module = "streameval._native")]
struct WindowsCore {
    core: Core,
    ks: Vec<i64>,
}

#[pymethods]
impl WindowsCore {
    /// `windows_ms`: the window sizes as configured (in that order); `bucket_ms`: their bucket;
    /// `ks`: the configured cutoffs, kept for the engine's side (a fold reads each source's own
    /// `ks`, as Python does, so buckets loaded from another configuration still add up);
    /// `sources`: the relevance sources counted `evicted` by `count_evicted` (implicit, judged,
    /// and the extra ones).
    #[new]
    fn new(
        windows_ms: Vec<i64>,
        bucket_ms: i64,
        ks: Vec<i64>,
        sources: Vec<String>,
    ) -> PyResult<Self> {
        let specs = windows_ms
            .iter()
            .map(|&size| WindowSpec::new(size, bucket_ms))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PyValueError::new_err)?;
        let store = WindowStore::new(specs).map_err(PyValueError::new_err)?;
        Ok(Self {
            core: Core {
                store,
                totals: Totals::new(),
                unpersisted: SourceBuckets::new(bucket_ms),
                sources,
            },
            ks,
        })
    }

    #[getter]
    fn ks(&self) -> Vec<i64> {
        self.ks.clone()
    }

    #[getter]
    fn sources(&self) -> Vec<String> {
        self.core.sources.clone()
    }

    /// Fold one scored list (a `ScoredList` or a tuple of its fields): into the window bucket of
    /// its impression time and its source's unpersisted bucket when `window`, into the totals
    /// when `count` (Python: `folded`, `not lst.counted_before`).
    #[pyo3(signature = (scored, window = true, count = true))]
    fn fold(&mut self, scored: &Bound<'_, PyAny>, window: bool, count: bool) -> PyResult<()> {
        let scored = scored_list(scored)?;
        self.core.fold(&scored, window, count);
        Ok(())
    }

    /// Fold a batch of scored lists, read first, then folded with the GIL released.
    #[pyo3(signature = (lists, window = true, count = true))]
    fn fold_batch(
        &mut self,
        py: Python<'_>,
        lists: &Bound<'_, PyAny>,
        window: bool,
        count: bool,
    ) -> PyResult<()> {
        let mut batch = Vec::new();
        for scored in lists.try_iter()? {
            batch.push(scored_list(&scored?)?);
        }
        let core = &mut self.core;
        py.detach(|| {
            for scored in &batch {
                core.fold(scored, window, count);
            }
        });
        Ok(())
    }

    /// Drop the buckets no window can cover any more as of `horizon_ms`.
    fn evict(&mut self, horizon_ms: i64) {
        self.core.store.evict(horizon_ms);
    }

    /// The horizon at which `evict` next drops a bucket (None: no bucket).
    fn next_eviction(&self) -> Option<i64> {
        self.core.store.next_eviction()
    }

    /// The starts of the buckets held, oldest first.
    fn starts(&self) -> Vec<i64> {
        self.core.store.starts().collect()
    }

    /// `WindowStore.rows`: (ndcg rows, engagement rows) as tuples, `NdcgRow` as
    /// (window, relevance, segment, k, (n, total, total_sq), coverage moments or None) and
    /// `EngagementRow` as (window, segment, lists, clicked_lists, moments, zero_click_lists).
    fn rows<'py>(&self, py: Python<'py>, horizon_ms: Option<i64>) -> PyResult<Bound<'py, PyTuple>> {
        store_rows(py, &self.core.store, horizon_ms)
    }

    /// The state topic's bytes of the window bucket at `start` (None: no bucket there).
    fn encode_bucket<'py>(
        &self,
        py: Python<'py>,
        start: i64,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        match self.core.store.bucket(start) {
            None => Ok(None),
            Some(b) => {
                let raw = encode_bucket(b).map_err(PyValueError::new_err)?;
                Ok(Some(PyBytes::new(py, &raw)))
            }
        }
    }

    /// The bucket a state-topic value holds, as tuples (see `_native.pyi`), or the reason it
    /// holds none (`BadState.reason`).
    #[staticmethod]
    fn decode_bucket<'py>(py: Python<'py>, raw: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        match decode_bucket(raw) {
            Ok(b) => Ok(bucket_tuple(py, &b)?.into_any()),
            Err(bad) => Ok(bad.reason.into_pyobject(py)?.into_any()),
        }
    }

    /// Merge the bucket a state-topic value holds into the window bucket at `start`
    /// (`WindowStore.merge`); the reason when it holds none (nothing merged).
    fn load_bucket(&mut self, start: i64, raw: &[u8]) -> Option<&'static str> {
        match decode_bucket(raw) {
            Ok(b) => {
                self.core.store.merge(start, &b);
                None
            }
            Err(bad) => Some(bad.reason),
        }
    }

    /// (source, start, bytes) of every unpersisted bucket starting before `before`, sorted
    /// (`SourceBuckets.complete`, encoded).
    fn complete<'py>(
        &self,
        py: Python<'py>,
        before: i64,
    ) -> PyResult<Vec<(String, i64, Bound<'py, PyBytes>)>> {
        let mut out = Vec::new();
        for (source, start, bucket) in self.core.unpersisted.complete(before) {
            let raw = encode_bucket(bucket).map_err(PyValueError::new_err)?;
            out.push((source.to_string(), start, PyBytes::new(py, &raw)));
        }
        Ok(out)
    }

    /// The unpersisted buckets starting before `before` are in the state topic: drop them.
    fn persisted(&mut self, before: i64) {
        self.core.unpersisted.persisted(before);
    }

    fn forget(&mut self, source: &str) {
        self.core.unpersisted.forget(source);
    }

    /// `Totals.count_outcome`: a finalized list that was not scored.
    fn count_outcome(&mut self, relevance: &str, outcome: &str) {
        self.core.totals.count_outcome(relevance, outcome);
    }

    /// An open list evicted over the cap: `evicted` once per relevance source.
    fn count_evicted(&mut self) {
        for relevance in &self.core.sources {
            self.core
                .totals
                .count_outcome(relevance, crate::scored::EVICTED);
        }
    }

    /// `Totals.cumulative`: (relevance, segment, k, ndcg_sum, lists_scored) per row.
    fn cumulative<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        totals_cumulative(py, &self.core.totals)
    }

    /// `Totals.lists_total`: lists per (relevance, outcome), in the order first counted.
    fn lists_total<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (key, n) in self.core.totals.lists_total() {
            out.set_item(key, n)?;
        }
        Ok(out)
    }
}

/// The intake counters (`engine.intake.IntakeCounters`).
#[pyclass(module = "streameval._native")]
#[derive(Default)]
struct IntakeCore {
    counters: IntakeCounters,
}

fn counts_dict<'py>(py: Python<'py>, counts: &Counts) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (key, n) in counts {
        out.set_item(key, n)?;
    }
    Ok(out)
}

#[pymethods]
impl IntakeCore {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// `IntakeCounters.count`, the outcome by its value (`"accepted"`, ...).
    #[pyo3(signature = (outcome, kind, count, new_record = true))]
    fn count(&mut self, outcome: &str, kind: &str, count: bool, new_record: bool) -> PyResult<()> {
        let outcome = Outcome::from_name(outcome).ok_or_else(|| {
            PyValueError::new_err(format!("outcome {outcome:?}: not an intake outcome"))
        })?;
        self.counters.count(outcome, kind, count, new_record);
        Ok(())
    }

    fn count_invalid(&mut self, reason: &str) {
        self.counters.count_invalid(reason);
    }

    fn unmatched_from_pending(&mut self, clicks: i64) {
        self.counters.unmatched_from_pending(clicks);
    }

    /// (records_read, accepted, invalid, duplicate, late, unmatched_clicks, pending_clicks): the
    /// fields of `snapshot.Intake`, counters as dicts in the order first counted.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let s = self.counters.snapshot();
        (
            s.records_read,
            counts_dict(py, &s.accepted)?,
            counts_dict(py, &s.invalid)?,
            counts_dict(py, &s.duplicate)?,
            counts_dict(py, &s.late)?,
            s.unmatched_clicks,
            s.pending_clicks,
        )
            .into_pyobject(py)
    }
}

/// Add the windows stage's classes to the module (one line in `python.rs`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WindowsCore>()?;
    m.add_class::<IntakeCore>()?;
    Ok(())
}
