//! The binding of [`crate::judges`]: `streameval._native.JudgeTrackerCore`, the judge tracker's
//! per-list bookkeeping and its listener over the native `JudgmentTable`, and
//! `streameval._native.SpaceSaving`, the sketch alone (for the differential test and the bench).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::judges::frequency;
use crate::judges::tracker::{Finalized, JudgeTracker, Settings};
use crate::python_score::judgments::PyJudgmentTable;

/// (window, judged docs, stale docs): `FreshnessRow`'s fields.
pub(crate) type FreshnessRow = (String, i64, i64);
/// (window, query class, k, lists, coverage sum): `QueryClassCoverageRow`'s fields.
pub(crate) type CoverageRow = (String, &'static str, usize, i64, f64);
/// (window, family, other, pairs, alpha): `AgreementRow`'s fields.
type AgreementRow = (String, String, String, u64, Option<f64>);

#[pyclass(name = "JudgeTrackerCore", module = "streameval._native")]
struct PyJudgeTracker {
    inner: JudgeTracker,
    top: usize,
    ks: usize,
}

#[pymethods]
impl PyJudgeTracker {
    /// `agreement_windows` and `windows`: (name, size in ms); the other arguments as
    /// `JudgesSettings` and `EvaluationSettings` name them.
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(
        families: Vec<String>,
        max_families: usize,
        agreement_windows: Vec<(String, i64)>,
        max_age: i64,
        head_queries: usize,
        windows: Vec<(String, i64)>,
        bucket_ms: i64,
        ks: Vec<usize>,
    ) -> PyResult<Self> {
        if bucket_ms <= 0 || ks.is_empty() || windows.is_empty() || head_queries == 0 {
            return Err(PyValueError::new_err(
                "bucket_ms, head_queries must be positive; ks and windows not empty",
            ));
        }
        let inner = JudgeTracker::new(Settings {
            families,
            max_families,
            agreement_windows,
            max_age,
            head_queries,
            windows,
            bucket_ms,
            ks,
        });
        Ok(PyJudgeTracker {
            top: inner.ks()[inner.ks().len() - 1],
            ks: inner.ks().len(),
            inner,
        })
    }

    /// The judgment table's listener: `table`'s grades of (`query_id`, `doc_id`) changed.
    fn changed(&mut self, table: PyRef<'_, PyJudgmentTable>, query_id: &str, doc_id: &str) {
        self.inner.changed(&table.rules.store, query_id, doc_id);
    }

    /// A finalized list: `coverage` the judged source's coverage@k (one per k, ascending k;
    /// None: no judged source or no coverage).
    #[allow(clippy::too_many_arguments)]
    fn fold(
        &mut self,
        table: PyRef<'_, PyJudgmentTable>,
        query_id: &str,
        timestamp: i64,
        doc_ids: &Bound<'_, PyTuple>,
        counted_before: bool,
        coverage: Option<Vec<f64>>,
        windowed: bool,
    ) -> PyResult<()> {
        if coverage.as_ref().is_some_and(|c| c.len() != self.ks) {
            return Err(PyValueError::new_err("coverage: one value per k"));
        }
        // the top max(k) ids, borrowed from the str objects (their UTF-8, no copy)
        let shown = doc_ids.len().min(self.top);
        let mut strings: Vec<Bound<'_, PyString>> = Vec::with_capacity(shown);
        for i in 0..shown {
            strings.push(doc_ids.get_item(i)?.cast_into::<PyString>()?);
        }
        let docs = strings
            .iter()
            .map(|s| s.to_str())
            .collect::<PyResult<Vec<&str>>>()?;
        let list = Finalized {
            query_id,
            timestamp,
            doc_ids: &docs,
            counted_before,
            coverage: coverage.as_deref(),
            windowed,
        };
        self.inner.fold(&table.rules.store, &list);
        Ok(())
    }

    fn evict(&mut self, horizon_ms: i64) {
        self.inner.evict(horizon_ms);
    }

    fn reset(&mut self) {
        self.inner.reset();
    }

    /// The horizon from which `evict` has a bucket to drop (None: never).
    #[getter]
    fn evict_due(&self) -> Option<i64> {
        self.inner.evict_due()
    }

    /// Two judge families or more seen.
    #[getter]
    fn active(&self) -> bool {
        self.inner.listener().active()
    }

    #[getter]
    fn families(&self) -> Vec<String> {
        self.inner.listener().families().to_vec()
    }

    /// The newest judgment time read (None: none).
    #[getter]
    fn newest(&self) -> Option<i64> {
        self.inner.listener().newest()
    }

    /// The head queries as decided last, sorted.
    fn head(&self) -> Vec<String> {
        let mut head: Vec<String> = self.inner.head().iter().cloned().collect();
        head.sort_unstable();
        head
    }

    /// The agreement rows, as `JudgeTracker.agreement` orders them.
    fn agreement(&mut self) -> Vec<AgreementRow> {
        self.inner
            .agreement()
            .iter()
            .map(|r| {
                let row = (r.window.clone(), r.family.clone(), r.other.clone());
                (row.0, row.1, row.2, r.pairs, r.alpha)
            })
            .collect()
    }

    /// The freshness rows and the coverage rows of `JudgeTracker.view(horizon_ms)`.
    fn view(&self, horizon_ms: Option<i64>) -> (Vec<FreshnessRow>, Vec<CoverageRow>) {
        view_rows(&self.inner, horizon_ms)
    }
}

/// The freshness rows and the coverage rows of `JudgeTracker.view(horizon_ms)` (also the
/// native engine's, `EngineCore.judges_view`).
pub(crate) fn view_rows(
    tracker: &JudgeTracker,
    horizon_ms: Option<i64>,
) -> (Vec<FreshnessRow>, Vec<CoverageRow>) {
    let mut freshness = Vec::new();
    let mut coverage = Vec::new();
    let Some(horizon_ms) = horizon_ms else {
        return (freshness, coverage);
    };
    let ks = tracker.ks();
    for w in tracker.view(horizon_ms) {
        let f = &w.figures;
        freshness.push((w.window.clone(), f.judged_docs, f.stale_docs));
        for (class, (lists, sums)) in [("head", &f.head), ("tail", &f.tail)] {
            if *lists == 0 {
                continue;
            }
            for (k, sum) in ks.iter().zip(sums) {
                coverage.push((w.window.clone(), class, *k, *lists, *sum));
            }
        }
    }
    (freshness, coverage)
}

/// The Space-Saving sketch alone (`streameval.judges.frequency.SpaceSaving`).
#[pyclass(name = "SpaceSaving", module = "streameval._native")]
struct PySpaceSaving {
    inner: frequency::SpaceSaving,
}

#[pymethods]
impl PySpaceSaving {
    #[new]
    fn new(capacity: usize) -> PyResult<Self> {
        if capacity < 1 {
            return Err(PyValueError::new_err("capacity must be >= 1"));
        }
        Ok(PySpaceSaving {
            inner: frequency::SpaceSaving::new(capacity),
        })
    }

    #[pyo3(signature = (item, weight = 1))]
    fn add(&mut self, item: &str, weight: u64) {
        self.inner.add(item, weight);
    }

    fn count(&self, item: &str) -> (u64, u64) {
        self.inner.count(item)
    }

    fn top(&self, n: usize) -> Vec<String> {
        self.inner.top(n).into_iter().map(str::to_owned).collect()
    }

    #[getter]
    fn total(&self) -> u64 {
        self.inner.total()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyJudgeTracker>()?;
    m.add_class::<PySpaceSaving>()
}
