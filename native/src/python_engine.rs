//! `streameval._native.EngineCore`: the per-record path of the native engine
//! (`streameval/engine/native_pipeline.py`): decode per source format, the future-skew check,
//! the watermark and idleness, the join, evictions and finalization, each a step the Python
//! coordinator asks for at the points `Pipeline` reaches them (so the per-list back half,
//! scoring, windows, consumers and recovery, stays the Python reference code, shared).

use std::collections::HashMap;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::core_fold::CoreFold;
use crate::core_scoring::CoreScoring;
use crate::core_sums::{CoreSums, PerSource};
use crate::decode::Judgment;
use crate::join::batch::{Dues, Judgments};
use crate::join::core::{Answer, Core, Format, Settings};
use crate::join::grades::InteractionGrades;
use crate::join::open_list::OpenList;
use crate::judges::tracker::{JudgeTracker, Settings as JudgesSettings};
use crate::judgment_rules::Applied;
use crate::mapped::MappedDecoder;
use crate::python_batch::judgment_change;
use crate::python_join::list_fields;
use crate::python_judges::{view_rows, CoverageRow, FreshnessRow};
use crate::python_scored_lists::{ScoredLists, ScoringOptions};
use crate::python_windows::{scored_list, store_rows, totals_cumulative};
use crate::query_sums::QuerySums;
use crate::windows::persisted::{decode_bucket, encode_bucket};
use crate::windows::spec::WindowSpec;

#[pyclass(module = "streameval._native")]
pub struct EngineCore {
    core: Core,
    /// the lists scored here, once `set_scoring` was called
    scored: Option<ScoredLists>,
    /// the lists folded here, once `set_fold` was called (docs/native.md "The fold in the core")
    fold: Option<CoreFold>,
    /// the detectors' per-query sums summed here (docs/native.md "Detector sums in the core")
    sums: CoreSums,
    /// lists the batch loop finalized that need the Python back half: the next
    /// `finalize_folded` hands them first (docs/native.md "A batch that stops per bucket")
    held: Vec<OpenList>,
}

/// The core's judgment table (in its scoring step) and judge tracker (in its fold), as a
/// judgment record is applied to them (docs/native.md "Judgments applied in the core").
struct CoreJudgments<'a> {
    scoring: Option<&'a mut CoreScoring>,
    tracker: Option<&'a mut JudgeTracker>,
}

impl<'a> CoreJudgments<'a> {
    fn of(scored: &'a mut Option<ScoredLists>, fold: &'a mut Option<CoreFold>) -> Self {
        CoreJudgments {
            scoring: scored.as_mut().map(ScoredLists::scoring),
            tracker: fold.as_mut().map(|f| &mut f.tracker),
        }
    }
}

impl Judgments for CoreJudgments<'_> {
    fn judgments_in_core(&self) -> bool {
        self.scoring.as_ref().is_some_and(|s| s.judgments_in_core())
    }

    fn apply(&mut self, judgment: &Judgment, raw: &[u8]) -> Option<Applied> {
        let scoring = self.scoring.as_mut()?;
        scoring.judgment(judgment, raw, self.tracker.as_deref_mut())
    }
}

fn no_fold() -> PyErr {
    PyValueError::new_err("call set_fold first")
}

/// A list's fields as `JoinCore.drain_finalized` gives them, then its sequence number (the
/// identity of one list, kept by the caller for the object its early judged pass made).
fn list_tuple<'py>(py: Python<'py>, core: &Core, l: &OpenList) -> PyResult<Bound<'py, PyAny>> {
    let mut fields = list_fields(py, core, "final", l)?;
    fields.push(l.seq.into_bound_py_any(py)?);
    Ok(PyTuple::new(py, fields)?.into_any())
}

fn lists<'py>(py: Python<'py>, core: &Core, ls: &[OpenList]) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for l in ls {
        out.append(list_tuple(py, core, l)?)?;
    }
    Ok(out)
}

#[pymethods]
impl EngineCore {
    #[new]
    #[pyo3(signature = (*, attribution_window, allowed_lateness, max_open_lists,
        max_pending_clicks, segment_labels, max_segments, implicit_grades, dwell_min_ms,
        dwell_grade, max_record_bytes, max_future_skew, bucket, pass_bucket = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        attribution_window: i64,
        allowed_lateness: i64,
        max_open_lists: usize,
        max_pending_clicks: usize,
        segment_labels: Vec<String>,
        max_segments: usize,
        implicit_grades: HashMap<String, f64>,
        dwell_min_ms: i64,
        dwell_grade: f64,
        max_record_bytes: usize,
        max_future_skew: i64,
        bucket: i64,
        pass_bucket: Option<i64>,
    ) -> Self {
        let mut core = Core::new(Settings {
            attribution_ms: attribution_window,
            allowed_lateness_ms: allowed_lateness,
            max_open_lists,
            max_pending_clicks,
            segment_labels,
            max_segments,
            grades: InteractionGrades {
                by_action: implicit_grades.into_iter().collect(),
                dwell_min_ms,
                dwell_grade,
            },
            max_record_bytes,
            max_future_skew_ms: max_future_skew,
            bucket_ms: bucket,
        });
        if let Some(pb) = pass_bucket {
            core.joiner.keep_unpassed(pb);
        }
        EngineCore {
            core,
            scored: None,
            fold: None,
            sums: CoreSums::default(),
            held: Vec::new(),
        }
    }

    /// Decode `source` as `format`: "native", "auto", "ubi", or "mapped" with `mapping` (the
    /// mapping's settings as JSON, as `MappedDecoder` takes them).
    #[pyo3(signature = (source, format, mapping = None))]
    fn set_format(&mut self, source: &str, format: &str, mapping: Option<&str>) -> PyResult<()> {
        let max_bytes = self.core.settings().max_record_bytes;
        let format = match (format, mapping) {
            ("native", _) => Format::Native,
            ("auto", _) => Format::Auto,
            ("ubi", _) => Format::Ubi,
            ("mapped", Some(json)) => Format::Mapped(Box::new(
                MappedDecoder::new(json.as_bytes(), max_bytes).map_err(PyValueError::new_err)?,
            )),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "no native decoder of {format}"
                )))
            }
        };
        self.core.set_format(source, format);
        Ok(())
    }

    /// One record: `(outcome, kind, ts, watermark, extra)`: kind "impression", "click" or
    /// "judgment"; or `("invalid", reason, field, None, detail)` (`field`: the JSON Pointer
    /// of a mapped record's field that did not map, else ""); `extra`: for an impression,
    /// the `(outcome, counted)` of each waiting click it resolved (None when none). A judgment
    /// is applied here when `judgments_in_core` and not `keyed` (a record of a keyed judgment
    /// topic: the Python rules apply it): its outcome "accepted" or "duplicate", `extra` what
    /// it changed (`(query_id, doc_id, judges, version)`, else None); otherwise its outcome is
    /// "judgment" (Python applies it).
    #[pyo3(signature = (raw, source, record_ms = -1, horizon_before = None, counted = true,
        keyed = false))]
    #[allow(clippy::too_many_arguments)]
    fn offer<'py>(
        &mut self,
        py: Python<'py>,
        raw: &[u8],
        source: &str,
        record_ms: i64,
        horizon_before: Option<i64>,
        counted: bool,
        keyed: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let step = self
            .core
            .step(raw, source, record_ms, horizon_before, counted);
        let mut change = None;
        let (outcome, kind) = match step.answer {
            Answer::Impression(o) => (o.as_str(), "impression"),
            Answer::Click(o) => (o.as_str(), "click"),
            Answer::Judgment => {
                let applied = match (&step.judgment, keyed) {
                    (Some(j), false) => {
                        CoreJudgments::of(&mut self.scored, &mut self.fold).apply(j, raw)
                    }
                    _ => None,
                };
                match applied {
                    None => ("judgment", "judgment"),
                    Some(a) => {
                        let outcome = a.outcome.as_str();
                        change = Some(judgment_change(py, a)?);
                        (outcome, "judgment")
                    }
                }
            }
            Answer::Invalid { reason, detail } => {
                let none = py.None().into_bound(py);
                return PyTuple::new(
                    py,
                    [
                        "invalid".into_bound_py_any(py)?,
                        reason.into_bound_py_any(py)?,
                        step.field.into_bound_py_any(py)?,
                        none,
                        detail.into_bound_py_any(py)?,
                    ],
                );
            }
        };
        let extra = if let Some(change) = change {
            change
        } else if step.resolved.is_empty() {
            py.None().into_bound(py)
        } else {
            let out = PyList::empty(py);
            for (o, c) in step.resolved {
                out.append((o.as_str(), c))?;
            }
            out.into_any()
        };
        PyTuple::new(
            py,
            [
                outcome.into_bound_py_any(py)?,
                kind.into_bound_py_any(py)?,
                step.ts.into_bound_py_any(py)?,
                step.watermark.into_bound_py_any(py)?,
                extra,
            ],
        )
    }

    /// A new stream after `Pipeline.reset` (the segments seen and the formats stay, and the
    /// judgment table).
    fn restart(&mut self) {
        self.core.restart();
        self.held.clear(); // (handed to Python at the stop that held them: none left here)
        if let Some(scored) = &mut self.scored {
            scored.scoring().restart();
        }
        if let Some(fold) = &mut self.fold {
            fold.restart();
        }
    }

    /// Score the lists here from now on (docs/native.md "Lists scored in the core"): the
    /// settings `ListScorer(settings)` reads, the named tuples `SourceScore` and `ScoredList`,
    /// and `ListScorer`'s shared sources (implicit without interaction, judged of a query
    /// nobody judged). The judgment table starts empty: `mirror_judgment` copies each change.
    #[pyo3(signature = (*, ks, gain, discount, discount_base, ideal, unjudged, no_relevance,
        source_score, scored_list, no_interaction, unjudged_source))]
    #[allow(clippy::too_many_arguments)]
    fn set_scoring(
        &mut self,
        py: Python<'_>,
        ks: Vec<i64>,
        gain: &str,
        discount: &str,
        discount_base: f64,
        ideal: &str,
        unjudged: &str,
        no_relevance: &str,
        source_score: Bound<'_, PyAny>,
        scored_list: Bound<'_, PyAny>,
        no_interaction: Bound<'_, PyAny>,
        unjudged_source: Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let options = ScoringOptions {
            ks,
            gain,
            discount,
            discount_base,
            ideal,
            unjudged,
            no_relevance,
            source_score,
            scored_list,
            no_interaction,
            unjudged_source,
        };
        self.scored = Some(ScoredLists::new(py, options)?);
        Ok(())
    }

    /// From now on the judgment records read outside keyed topics are applied here, by the
    /// rules of `JudgmentRules.apply` (identities remembered up to `max_judgment_ids`), to the
    /// table scoring reads and the judge tracker, at the record (`offer`, `offer_batch`); the
    /// changes the Python rules make (keyed topics) are still copied in by `mirror_judgment`.
    /// After `set_scoring` (and `set_fold`, for the tracker).
    fn apply_judgments(&mut self, max_judgment_ids: usize) -> PyResult<()> {
        let scored = self
            .scored
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("apply_judgments: call set_scoring first"))?;
        scored.scoring().apply_judgments(max_judgment_ids);
        Ok(())
    }

    /// The judgment records read outside keyed topics are applied here (`apply_judgments`).
    #[getter(judgments_in_core)]
    fn py_judgments_in_core(&mut self) -> bool {
        self.judgments_in_core()
    }

    /// The identities of the judgments applied here: (remembered, forgotten over the cap);
    /// None: judgments are not applied here.
    #[getter]
    fn judgment_ids(&mut self) -> Option<(usize, u64)> {
        self.scored
            .as_mut()
            .and_then(|s| s.scoring().judgment_ids())
    }

    /// The Python judgment table changed `doc_id` of `query_id`: it holds `judges` (judge,
    /// timestamp, grade) now, in the table's order, and the query's version is `version`.
    fn mirror_judgment(
        &mut self,
        query_id: &str,
        doc_id: &str,
        judges: Vec<(String, i64, f64)>,
        version: i64,
    ) -> PyResult<()> {
        let scored = self
            .scored
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("mirror_judgment: call set_scoring first"))?;
        let scoring = scored.scoring();
        scoring.mirror(query_id, doc_id, &judges, version);
        if let Some(fold) = &mut self.fold {
            fold.tracker.changed(&scoring.judgments, query_id, doc_id);
        }
        Ok(())
    }

    /// The mirrored judgment table's (version, judges_of) of `query_id` (tests).
    fn mirrored_judgments(&mut self, query_id: &str) -> (i64, crate::judgments::JudgesOf) {
        match &mut self.scored {
            None => (-1, Vec::new()),
            Some(s) => {
                let table = &s.scoring().judgments;
                (table.version(query_id), table.judges_of(query_id))
            }
        }
    }

    /// The early judged scores kept for passed lists not finalized yet.
    #[getter]
    fn early_kept(&mut self) -> usize {
        self.scored.as_mut().map_or(0, |s| s.scoring().early_kept())
    }

    /// `Joiner.finalize`: the lists whose attribution window ended at or before `watermark`
    /// (scored: see `finalized` in python_scored_lists.rs).
    fn finalize<'py>(&mut self, py: Python<'py>, watermark: i64) -> PyResult<Bound<'py, PyList>> {
        let done = self.core.joiner.finalize(watermark);
        match &mut self.scored {
            Some(scored) => scored.finalized(py, &self.core, &done),
            None => lists(py, &self.core, &done),
        }
    }

    /// `Joiner.finalize_all`: every open list, in deadline order.
    fn finalize_all<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let done = self.core.joiner.finalize_all();
        match &mut self.scored {
            Some(scored) => scored.finalized(py, &self.core, &done),
            None => lists(py, &self.core, &done),
        }
    }

    /// Fold the lists here from now on (after `set_scoring`; docs/native.md "The fold in the
    /// core"): the windows (`windows_ms` as configured, their `bucket_ms`), the buckets for the
    /// state topic when `persist`, the since-start totals (`sources`: those an evicted list
    /// counts in) and the judge tracker (`JudgeTrackerCore`'s arguments).
    #[pyo3(signature = (*, windows_ms, bucket_ms, persist, sources, families, max_families,
        agreement_windows, max_age, head_queries, window_names, ks))]
    #[allow(clippy::too_many_arguments)]
    fn set_fold(
        &mut self,
        windows_ms: Vec<i64>,
        bucket_ms: i64,
        persist: bool,
        sources: Vec<String>,
        families: Vec<String>,
        max_families: usize,
        agreement_windows: Vec<(String, i64)>,
        max_age: i64,
        head_queries: usize,
        window_names: Vec<String>,
        ks: Vec<usize>,
    ) -> PyResult<()> {
        if self.scored.is_none() {
            return Err(PyValueError::new_err("set_fold: call set_scoring first"));
        }
        if bucket_ms <= 0 || ks.is_empty() || windows_ms.is_empty() || head_queries == 0 {
            return Err(PyValueError::new_err(
                "set_fold: bucket_ms, head_queries must be positive; ks and windows not empty",
            ));
        }
        let specs = windows_ms
            .iter()
            .map(|&size| WindowSpec::new(size, bucket_ms))
            .collect::<Result<Vec<_>, _>>()
            .map_err(PyValueError::new_err)?;
        let tracker = JudgeTracker::new(JudgesSettings {
            families,
            max_families,
            agreement_windows,
            max_age,
            head_queries,
            windows: window_names.into_iter().zip(windows_ms).collect(),
            bucket_ms,
            ks,
        });
        let fold = CoreFold::new(specs, bucket_ms, persist, tracker, sources)
            .map_err(PyValueError::new_err)?;
        self.fold = Some(fold);
        Ok(())
    }

    /// `Joiner.finalize` with the fold here: `(True, [(handed, scored)])` when the core folded
    /// every list (`persisted`: per source, the bucket start before which the state topic
    /// holds its buckets); `(False, lists)` as `finalize` gives them when the batch needs the
    /// Python back half (a list with teams, or two judge families seen): `fold_list` then.
    #[pyo3(signature = (watermark, persisted = None))]
    fn finalize_folded<'py>(
        &mut self,
        py: Python<'py>,
        watermark: Option<i64>,
        persisted: Option<HashMap<String, i64>>,
    ) -> PyResult<(bool, Bound<'py, PyList>)> {
        let mut done = std::mem::take(&mut self.held); // (due before: first, in order)
        done.extend(match watermark {
            Some(w) => self.core.joiner.finalize(w),
            None => self.core.joiner.finalize_all(),
        });
        let (Some(scored), Some(fold)) = (&mut self.scored, &mut self.fold) else {
            return Err(no_fold());
        };
        if ScoredLists::needs_python(&done, fold) {
            return Ok((false, scored.finalized(py, &self.core, &done)?));
        }
        let sums = Some(&mut self.sums);
        let rows = scored.folded(py, &self.core, &done, fold, persisted.as_ref(), sums)?;
        Ok((true, rows))
    }

    /// A list the Python back half scored further (`ScoredList` `scored`, its `doc_ids`),
    /// folded here as `finalize_folded` folds the others.
    fn fold_list(
        &mut self,
        scored: &Bound<'_, PyAny>,
        doc_ids: Vec<String>,
        counted_before: bool,
        folded: bool,
    ) -> PyResult<()> {
        let mut list = scored_list(scored)?;
        list.query_id = scored.get_item(1)?.extract()?;
        let (Some(s), Some(fold)) = (&mut self.scored, &mut self.fold) else {
            return Err(no_fold());
        };
        fold.fold(
            &s.scoring().judgments,
            &list,
            &doc_ids,
            counted_before,
            folded,
        );
        Ok(())
    }

    /// `Totals.count_outcome` of the fold's totals.
    fn count_outcome(&mut self, relevance: &str, outcome: &str) -> PyResult<()> {
        let fold = self.fold.as_mut().ok_or_else(no_fold)?;
        fold.totals.count_outcome(relevance, outcome);
        Ok(())
    }

    /// The horizon moved: `WindowStore.evict`, then the judge tracker's.
    fn evict_windows(&mut self, horizon_ms: i64) -> PyResult<()> {
        self.fold.as_mut().ok_or_else(no_fold)?.evict(horizon_ms);
        Ok(())
    }

    /// `WindowStore.next_eviction`.
    fn next_eviction(&self) -> PyResult<Option<i64>> {
        Ok(self
            .fold
            .as_ref()
            .ok_or_else(no_fold)?
            .store
            .next_eviction())
    }

    /// `WindowStore.rows` as `WindowsCore.rows` gives them.
    fn window_rows<'py>(
        &self,
        py: Python<'py>,
        horizon_ms: Option<i64>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let store = &self.fold.as_ref().ok_or_else(no_fold)?.store;
        store_rows(py, store, horizon_ms)
    }

    /// `Totals.cumulative`: (relevance, segment, k, ndcg_sum, lists_scored) per row.
    fn cumulative<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let fold = self.fold.as_ref().ok_or_else(no_fold)?;
        totals_cumulative(py, &fold.totals)
    }

    /// `Totals.lists_total`: ((relevance, outcome), lists) in the order first counted.
    fn lists_total(&self) -> PyResult<Vec<((String, String), u64)>> {
        Ok(self.fold.as_ref().ok_or_else(no_fold)?.totals.lists_total())
    }

    /// The judge tracker's freshness and coverage rows as of `horizon_ms`.
    fn judges_view(
        &self,
        horizon_ms: Option<i64>,
    ) -> PyResult<(Vec<FreshnessRow>, Vec<CoverageRow>)> {
        let fold = self.fold.as_ref().ok_or_else(no_fold)?;
        Ok(view_rows(&fold.tracker, horizon_ms))
    }

    /// (source, start, bytes) of every unpersisted bucket starting before `before`
    /// (`SourceBuckets.complete`, in the state topic's codec).
    fn unpersisted<'py>(
        &self,
        py: Python<'py>,
        before: i64,
    ) -> PyResult<Vec<(String, i64, Bound<'py, PyBytes>)>> {
        let fold = self.fold.as_ref().ok_or_else(no_fold)?;
        let mut out = Vec::new();
        if let Some(unpersisted) = &fold.unpersisted {
            for (source, start, bucket) in unpersisted.complete(before) {
                let raw = encode_bucket(bucket).map_err(PyValueError::new_err)?;
                out.push((source.to_owned(), start, PyBytes::new(py, &raw)));
            }
        }
        Ok(out)
    }

    /// `SourceBuckets.persisted`.
    fn mark_persisted(&mut self, before: i64) -> PyResult<()> {
        let fold = self.fold.as_mut().ok_or_else(no_fold)?;
        if let Some(unpersisted) = &mut fold.unpersisted {
            unpersisted.persisted(before);
        }
        Ok(())
    }

    /// `SourceBuckets.forget`.
    fn forget_unpersisted(&mut self, source: &str) -> PyResult<()> {
        let fold = self.fold.as_mut().ok_or_else(no_fold)?;
        if let Some(unpersisted) = &mut fold.unpersisted {
            unpersisted.forget(source);
        }
        Ok(())
    }

    /// `WindowStore.merge` of a state-topic value; the reason when it holds no bucket.
    fn load_bucket(&mut self, start: i64, raw: &[u8]) -> PyResult<Option<&'static str>> {
        let fold = self.fold.as_mut().ok_or_else(no_fold)?;
        Ok(match decode_bucket(raw) {
            Ok(b) => {
                fold.store.merge(start, &b);
                None
            }
            Err(bad) => Some(bad.reason),
        })
    }

    /// `Joiner.evict_over_cap`: the sequence numbers of the lists evicted (their early judged
    /// scores go).
    fn evict_over_cap(&mut self) -> Vec<u64> {
        let evicted = self.core.joiner.evict_over_cap();
        if let Some(scored) = &mut self.scored {
            for l in &evicted {
                scored.scoring().forget(l.seq);
            }
        }
        evicted.iter().map(|l| l.seq).collect()
    }

    /// `Joiner.passed` (`cut` None: every bucket); scored: each list's `ScoredList` with its
    /// judged source only (`ListScorer.score_judged`).
    #[pyo3(signature = (cut = None))]
    fn passed<'py>(&mut self, py: Python<'py>, cut: Option<i64>) -> PyResult<Bound<'py, PyList>> {
        if let Some(scored) = &mut self.scored {
            let sums = self.fold.is_some().then_some(&mut self.sums);
            return scored.passed(py, &mut self.core, cut, sums);
        }
        let out = PyList::empty(py);
        for slot in self.core.joiner.passed(cut) {
            out.append(list_tuple(py, &self.core, self.core.joiner.list(slot))?)?;
        }
        Ok(out)
    }

    fn next_passed(&self) -> Option<i64> {
        self.core.joiner.next_passed()
    }

    #[pyo3(signature = (watermark = None))]
    fn expire_pending(&mut self, watermark: Option<i64>) -> u64 {
        self.core.joiner.expire_pending(watermark)
    }

    fn next_due(&self) -> Option<i64> {
        self.core.joiner.next_due()
    }

    // --- the watermark tracker (`WatermarkTracker`) ---------------------------------------
    fn register(&mut self, source: &str) {
        self.core.tracker.register(source);
    }

    #[pyo3(signature = (source, idle = true))]
    fn set_idle(&mut self, source: &str, idle: bool) {
        self.core.tracker.set_idle(source, idle);
    }

    fn forget(&mut self, source: &str) {
        self.core.tracker.forget(source);
    }

    fn advance_to(&mut self, watermark_ms: i64) {
        self.core.tracker.advance_to(watermark_ms);
    }

    #[getter]
    fn all_idle(&self) -> bool {
        self.core.tracker.all_idle()
    }

    #[getter]
    fn watermark(&mut self) -> Option<i64> {
        self.core.tracker.watermark()
    }

    #[getter]
    fn newest(&self) -> Option<i64> {
        self.core.tracker.newest()
    }

    // --- state size ------------------------------------------------------------------------
    #[getter]
    fn open_lists(&self) -> usize {
        self.core.joiner.open_lists()
    }

    #[getter]
    fn pending_clicks_counted(&self) -> usize {
        self.core.joiner.pending_clicks_counted()
    }

    #[getter]
    fn closed_ids_dropped(&self) -> u64 {
        self.core.joiner.closed_ids_dropped()
    }

    // --- the detectors' sums (`crate::core_sums`, `CoreStash` in native_fold.py) ----------
    /// Sum `relevance` ("implicit", "judged" or "lists") here, as a `Stash(bucket_ms,
    /// positions)` (`per_source`: one per source partition, made at its first list); False
    /// when it cannot be summed here.
    #[pyo3(signature = (relevance, bucket_ms, positions, per_source=false))]
    fn watch_sums(
        &mut self,
        relevance: &str,
        bucket_ms: i64,
        positions: Vec<usize>,
        per_source: bool,
    ) -> bool {
        bucket_ms > 0 && self.sums.watch(relevance, bucket_ms, positions, per_source)
    }

    /// Whether the core adds each list to the sums itself and builds no `ScoredList` when it
    /// folds (`finalize_folded`, `passed` answer an empty list then).
    fn set_sums_inline(&mut self, inline: bool) {
        self.sums.inline = inline;
    }

    /// The source partitions summed per source, in the order their sums were made.
    fn sums_sources(&self) -> Vec<String> {
        self.sums.per_source.as_ref().map_or_else(Vec::new, |p| {
            p.sources().iter().map(|s| s.to_string()).collect()
        })
    }

    /// `source`'s sums made (if not yet: as its first list would).
    fn sums_open(&mut self, source: &str) -> PyResult<()> {
        self.per_source()?.of(source);
        Ok(())
    }

    /// `source`'s sums dropped (`PartitionCollector.forget`).
    fn sums_forget(&mut self, source: &str) -> PyResult<()> {
        self.per_source()?.forget(source);
        Ok(())
    }

    /// The judged scores of `source`'s lists before `floor` are not summed (the judged floor
    /// of a restored source, `JudgedEarly.note_floor`; an early pass is floored while its cut
    /// is at most the highest floor plus `bucket_ms`).
    fn sums_set_floor(&mut self, source: &str, floor: i64, bucket_ms: i64) -> PyResult<()> {
        self.per_source()?.set_floor(source, floor, bucket_ms);
        Ok(())
    }

    /// Every judged floor dropped (a new stream).
    fn sums_clear_floors(&mut self) {
        if let Some(per) = self.sums.per_source.as_mut() {
            per.clear_floors();
        }
    }

    /// `Stash.add` of a list the Python back half handed on.
    #[pyo3(signature = (relevance, ts, segment, query_id, ndcg, source=None))]
    fn sums_add(
        &mut self,
        relevance: &str,
        ts: i64,
        segment: Vec<String>,
        query_id: &str,
        ndcg: Vec<Option<f64>>,
        source: Option<&str>,
    ) -> PyResult<()> {
        let id = self.sums.segment_id(&segment);
        self.sums_of(relevance, source)?
            .add(ts, id, query_id, &ndcg);
        Ok(())
    }

    /// `Stash.take`: `[(bucket start, {segment: [{query_id: (count, sum, sum of squares)}, ...
    /// per watched k]})]`, oldest first.
    #[pyo3(signature = (relevance, horizon_ms, source=None))]
    fn sums_take<'py>(
        &mut self,
        py: Python<'py>,
        relevance: &str,
        horizon_ms: i64,
        source: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        let taken = self.sums_of(relevance, source)?.take(horizon_ms);
        let out = PyList::empty(py);
        for (b, bucket) in taken {
            let data = pyo3::types::PyDict::new(py);
            for (segment, per_k) in bucket {
                let ks = PyList::empty(py);
                for per_query in per_k {
                    let d = pyo3::types::PyDict::new(py);
                    for (query_id, agg) in per_query {
                        d.set_item(query_id, agg)?;
                    }
                    ks.append(d)?;
                }
                let labels = self.sums.segment(segment).iter().map(|s| &**s);
                data.set_item(PyTuple::new(py, labels)?, ks)?;
            }
            out.append((b, data))?;
        }
        Ok(out)
    }

    /// `Stash.clear`.
    #[pyo3(signature = (relevance, source=None))]
    fn sums_clear(&mut self, relevance: &str, source: Option<&str>) -> PyResult<()> {
        self.sums_of(relevance, source)?.clear();
        Ok(())
    }

    /// `Stash.ignored`.
    #[pyo3(signature = (relevance, source=None))]
    fn sums_ignored(&mut self, relevance: &str, source: Option<&str>) -> PyResult<u64> {
        Ok(self.sums_of(relevance, source)?.ignored())
    }

    /// `Stash.ignored += n`.
    #[pyo3(signature = (relevance, n, source=None))]
    fn sums_add_ignored(&mut self, relevance: &str, n: u64, source: Option<&str>) -> PyResult<()> {
        self.sums_of(relevance, source)?.add_ignored(n);
        Ok(())
    }

    /// `Stash.closed`.
    #[pyo3(signature = (relevance, source=None))]
    fn sums_closed(&mut self, relevance: &str, source: Option<&str>) -> PyResult<Option<i64>> {
        Ok(self.sums_of(relevance, source)?.closed())
    }

    /// `Stash.closed = closed`.
    #[pyo3(signature = (relevance, closed, source=None))]
    fn sums_set_closed(
        &mut self,
        relevance: &str,
        closed: Option<i64>,
        source: Option<&str>,
    ) -> PyResult<()> {
        self.sums_of(relevance, source)?.set_closed(closed);
        Ok(())
    }

    /// `Stash.close_before`: buckets before `point` closed (a restored progress).
    #[pyo3(signature = (relevance, point, source=None))]
    fn sums_close_before(
        &mut self,
        relevance: &str,
        point: i64,
        source: Option<&str>,
    ) -> PyResult<()> {
        self.sums_of(relevance, source)?.close_before(point);
        Ok(())
    }

    /// A bucket's sums of one segment and watched k (the `j`-th) merged into bucket `b`
    /// (`Detectors.ingest`); counts are whole numbers.
    fn sums_merge(
        &mut self,
        relevance: &str,
        b: i64,
        segment: Vec<String>,
        j: usize,
        per_query: Vec<(String, (f64, f64, f64))>,
    ) -> PyResult<()> {
        let id = self.sums.segment_id(&segment);
        let sums = self.sums_of(relevance, None)?;
        if j >= sums.watched() {
            return Err(PyValueError::new_err(format!(
                "sums_merge: no watched k {j}"
            )));
        }
        let per_query: Vec<_> = per_query
            .into_iter()
            .map(|(q, (c, s, ss))| (q, (c as u64, s, ss)))
            .collect();
        sums.merge(b, id, j, &per_query);
        Ok(())
    }

    // --- the record path in batches (`crate::python_batch`) --------------------------------
    /// Run `batch` on, the GIL released, until Python has to act (`python_batch::offer_batch`).
    /// `inline`: `(consumers_due, signals_due)`, the loop finalizes and folds
    /// at due points itself (`batch::run_inline`; needs the fold and the sums inline here),
    /// `persisted` as `finalize_folded` takes it.
    #[pyo3(signature = (batch, due, early_due, inline = None, persisted = None))]
    fn offer_batch<'py>(
        &mut self,
        py: Python<'py>,
        batch: &Bound<'py, crate::python_batch::RecordBatch>,
        due: Option<i64>,
        early_due: Option<i64>,
        inline: Option<(i64, i64)>,
        persisted: Option<HashMap<String, i64>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (Some((consumers_due, signals_due)), Some(scored), Some(fold)) =
            (inline, self.scored.as_mut(), self.fold.as_mut())
        else {
            let mut evicted = Vec::new();
            let mut judgments = CoreJudgments::of(&mut self.scored, &mut self.fold);
            let out = crate::python_batch::offer_batch(
                py,
                &mut self.core,
                batch,
                Dues { due, early_due },
                None,
                &mut |seq| evicted.push(seq),
                &mut judgments,
            );
            // (the lists evicted: their early judged scores go before Python reads the effects)
            if let Some(scored) = self.scored.as_mut() {
                evicted
                    .into_iter()
                    .for_each(|seq| scored.scoring().forget(seq));
            }
            return out;
        };
        if !self.sums.inline {
            return Err(PyValueError::new_err(
                "offer_batch inline: the sums are not inline",
            ));
        }
        let mut at = InlineDue {
            scored,
            fold,
            sums: &mut self.sums,
            held: &mut self.held,
            persisted: persisted.as_ref(),
        };
        let inline = crate::join::batch::Inline {
            at: &mut at,
            consumers_due,
            signals_due,
        };
        crate::python_batch::offer_batch(
            py,
            &mut self.core,
            batch,
            Dues { due, early_due },
            Some(inline),
            &mut |_| {}, // (no Evicted effect inline: `InlineDue::evicted`)
            &mut (),     // (the inline `at` applies the judgments)
        )
    }
}

/// The batch loop's finalization at due points (`crate::join::batch::AtDue`): the lists
/// scored, folded and summed here, as `finalize_folded` with the sums inline.
struct InlineDue<'a> {
    scored: &'a mut ScoredLists,
    fold: &'a mut CoreFold,
    sums: &'a mut CoreSums,
    held: &'a mut Vec<OpenList>,
    persisted: Option<&'a HashMap<String, i64>>,
}

/// The judgment records of an inline batch go to the same table and tracker as
/// [`CoreJudgments`]' (held here, for the loop's finalization).
impl Judgments for InlineDue<'_> {
    fn judgments_in_core(&self) -> bool {
        self.scored.judgments_in_core()
    }

    fn apply(&mut self, judgment: &Judgment, raw: &[u8]) -> Option<Applied> {
        self.scored
            .scoring()
            .judgment(judgment, raw, Some(&mut self.fold.tracker))
    }
}

impl crate::join::batch::AtDue for InlineDue<'_> {
    fn finalize(&mut self, core: &mut Core, watermark: i64) -> bool {
        let done = core.joiner.finalize(watermark);
        if ScoredLists::needs_python(&done, self.fold) {
            self.held.extend(done);
            return false;
        }
        let (fold, sums) = (&mut *self.fold, &mut *self.sums);
        self.scored
            .folded_inline(core, &done, fold, self.persisted, sums);
        true
    }

    fn evicted(&mut self, seqs: &[u64]) {
        for &seq in seqs {
            self.scored.scoring().forget(seq);
            self.fold.count_evicted();
        }
    }

    fn evict(&mut self, horizon_ms: i64) {
        self.fold.evict(horizon_ms);
    }

    fn next_eviction(&self) -> Option<i64> {
        self.fold.store.next_eviction()
    }
}

impl EngineCore {
    fn sums_of(&mut self, relevance: &str, source: Option<&str>) -> PyResult<&mut QuerySums> {
        self.sums
            .of(relevance, source)
            .ok_or_else(|| PyValueError::new_err(format!("{relevance} is not summed here")))
    }

    /// The judgment records read outside keyed topics are applied in the core, at the record
    /// (docs/native.md "Judgments applied in the core"): the batch loop need not return to
    /// Python at a judgment.
    pub fn judgments_in_core(&mut self) -> bool {
        let judgments = CoreJudgments::of(&mut self.scored, &mut self.fold);
        judgments.judgments_in_core()
    }

    fn per_source(&mut self) -> PyResult<&mut PerSource> {
        self.sums
            .per_source
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("no sums are kept per source here"))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<EngineCore>()
}
