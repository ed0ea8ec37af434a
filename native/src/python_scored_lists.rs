//! The lists `EngineCore` scores itself (`crate::core_scoring`), handed to Python as the
//! `streameval.values` named tuples the shared back half reads: a `ScoredList` per list, its
//! `SourceScore`s built with `tuple.__new__` as `streameval/score/lists.py` `_scored` does (the
//! named tuples' own `__new__` is a Python function; these are plain tuple subclasses).

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::core_fold::CoreFold;
use crate::core_scoring::{CoreScoring, ListFields, ScoredShell};
use crate::core_sums::CoreSums;
use crate::join::core::Core;
use crate::join::open_list::OpenList;
use crate::judgments::{JudgmentStore, PythonSum};
use crate::python_join::list_fields;
use crate::python_score::spec_of;
use crate::python_windows::source_score;
use crate::score::lists::{ListRules, ListScorer, SourceScore};
use crate::scored;

/// The scoring step of an `EngineCore` and the Python types and shared values it builds with.
pub struct ScoredLists {
    scoring: CoreScoring,
    shapes: Shapes,
    /// the shared judged source of an unjudged query as the fold in the core reads it (its
    /// NDCG per k goes into the sums of the early judged pass)
    unjudged: scored::SourceScore,
    /// the finalized list as the fold reads it, refilled per list
    shell: ScoredShell,
}

/// The Python types and shared values the scored lists are built with.
struct Shapes {
    /// `tuple.__new__`
    tuple_new: Py<PyAny>,
    source_score: Py<PyAny>,
    scored_list: Py<PyAny>,
    /// `ListScorer`'s shared sources: implicit without interaction, judged of an unjudged query
    no_interaction: Py<PyAny>,
    unjudged: Py<PyAny>,
    /// the names of the two sources and the ks, as the shared sources hold them
    implicit_name: Py<PyAny>,
    judged_name: Py<PyAny>,
    ks: Py<PyAny>,
}

/// The settings `ListScorer(settings)` reads, and the Python values built with.
pub struct ScoringOptions<'a, 'py> {
    pub ks: Vec<i64>,
    pub gain: &'a str,
    pub discount: &'a str,
    pub discount_base: f64,
    pub ideal: &'a str,
    pub unjudged: &'a str,
    pub no_relevance: &'a str,
    pub source_score: Bound<'py, PyAny>,
    pub scored_list: Bound<'py, PyAny>,
    pub no_interaction: Bound<'py, PyAny>,
    pub unjudged_source: Bound<'py, PyAny>,
}

impl Shapes {
    /// A `SourceScore` named `relevance`.
    fn source<'py>(
        &self,
        py: Python<'py>,
        relevance: &Py<PyAny>,
        s: &SourceScore,
    ) -> PyResult<Bound<'py, PyAny>> {
        let coverage = match &s.coverage {
            Some(c) => PyTuple::new(py, c)?.into_any(),
            None => py.None().into_bound(py),
        };
        let fields = PyTuple::new(
            py,
            [
                relevance.bind(py).clone(),
                PyString::intern(py, s.outcome).into_any(),
                self.ks.bind(py).clone(),
                PyTuple::new(py, &s.ndcg)?.into_any(),
                PyTuple::new(py, &s.dcg)?.into_any(),
                PyTuple::new(py, &s.idcg)?.into_any(),
                coverage,
            ],
        )?;
        self.tuple_new
            .bind(py)
            .call1((self.source_score.bind(py), fields))
    }

    fn judged<'py>(&self, py: Python<'py>, s: Option<&SourceScore>) -> PyResult<Bound<'py, PyAny>> {
        match s {
            Some(s) => self.source(py, &self.judged_name, s),
            None => Ok(self.unjudged.bind(py).clone()),
        }
    }

    /// A `ScoredList` of `l` (`fields`: its `list_fields`) with `sources`, no interleaving.
    fn scored<'py>(
        &self,
        py: Python<'py>,
        l: &OpenList,
        fields: &[Bound<'py, PyAny>],
        sources: Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        // list_fields: kind, request id, ts, query id, docs, labels, segment, grades, keys,
        // clicked, rank, teams, clicked docs, counted before, source
        let f = |i: usize| fields[i].clone();
        let row = [
            f(1),
            f(3),
            f(2),
            f(5),
            f(6),
            sources.into_any(),
            f(9),
            f(10),
        ];
        self.scored_row(py, l, row, f(14))
    }

    /// A `ScoredList` of a list the early judged pass takes: its judged source only.
    fn passed<'py>(
        &self,
        py: Python<'py>,
        core: &Core,
        l: &OpenList,
        judged: Option<&SourceScore>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let sources = PyTuple::new(py, [self.judged(py, judged)?])?;
        self.of_list(py, core, l, sources)
    }

    /// The `ScoredList` of `l` with `sources`, no interleaving (built from the list itself).
    fn of_list<'py>(
        &self,
        py: Python<'py>,
        core: &Core,
        l: &OpenList,
        sources: Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let labels = PyDict::new(py);
        for (k, v) in l.labels() {
            labels.set_item(k, v)?;
        }
        let segment = PyTuple::new(py, core.segments.segment(l.segment).iter().map(|s| &**s))?;
        let row = [
            l.request_id().into_bound_py_any(py)?,
            l.query_id().into_bound_py_any(py)?,
            l.timestamp.into_bound_py_any(py)?,
            labels.into_any(),
            segment.into_any(),
            sources.into_any(),
            l.clicked().into_bound_py_any(py)?,
            l.first_click_rank().into_bound_py_any(py)?,
        ];
        let source = core.source(l.source).into_bound_py_any(py)?;
        self.scored_row(py, l, row, source)
    }

    /// The `ScoredList` of `head` (request id to first click rank), then `interacted`, no
    /// interleaving, and `source`.
    fn scored_row<'py>(
        &self,
        py: Python<'py>,
        l: &OpenList,
        head: [Bound<'py, PyAny>; 8],
        source: Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut row = Vec::with_capacity(11);
        row.extend(head);
        row.push(l.interacted().into_bound_py_any(py)?);
        row.push(py.None().into_bound(py));
        row.push(source);
        let row = PyTuple::new(py, row)?;
        self.tuple_new
            .bind(py)
            .call1((self.scored_list.bind(py), row))
    }
}

impl ScoredLists {
    pub fn new(py: Python<'_>, o: ScoringOptions<'_, '_>) -> PyResult<Self> {
        let spec = spec_of(o.ks, o.gain, o.discount, o.discount_base)?;
        let rules = ListRules::new(o.ideal, o.unjudged, o.no_relevance)
            .map_err(pyo3::exceptions::PyValueError::new_err)?;
        // the means summed as the running interpreter's `sum` does (`JudgmentTable`)
        let summing = if py.version_info() >= (3, 12) {
            PythonSum::Compensated
        } else {
            PythonSum::Plain
        };
        let tuple_new = py.get_type::<PyTuple>().getattr("__new__")?;
        let shapes = Shapes {
            tuple_new: tuple_new.unbind(),
            implicit_name: o.no_interaction.get_item(0)?.unbind(),
            judged_name: o.unjudged_source.get_item(0)?.unbind(),
            ks: o.no_interaction.get_item(2)?.unbind(),
            source_score: o.source_score.unbind(),
            scored_list: o.scored_list.unbind(),
            no_interaction: o.no_interaction.unbind(),
            unjudged: o.unjudged_source.unbind(),
        };
        let no_interaction = source_score(shapes.no_interaction.bind(py))?;
        let unjudged = source_score(shapes.unjudged.bind(py))?;
        let ks: Vec<i64> = shapes.ks.bind(py).extract()?;
        Ok(ScoredLists {
            scoring: CoreScoring::new(
                ListScorer::new(spec, rules),
                JudgmentStore::with_summing(summing),
            ),
            unjudged: unjudged.clone(),
            shell: ScoredShell::new(ks, no_interaction, unjudged),
            shapes,
        })
    }

    pub fn scoring(&mut self) -> &mut CoreScoring {
        &mut self.scoring
    }

    /// [`CoreScoring::judgments_in_core`].
    pub fn judgments_in_core(&self) -> bool {
        self.scoring.judgments_in_core()
    }

    /// Each finalized list as `list_fields`, its sequence number, whether the early judged
    /// pass took it, and its `ScoredList` (implicit, judged; `interleaved` left to Python).
    pub fn finalized<'py>(
        &mut self,
        py: Python<'py>,
        core: &Core,
        lists: &[OpenList],
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let shapes = &self.shapes;
        for l in lists {
            let (implicit, judged) = self.scoring.finalize(l, &l.doc_ids());
            let implicit = match &implicit {
                Some(s) => shapes.source(py, &shapes.implicit_name, s)?,
                None => shapes.no_interaction.bind(py).clone(),
            };
            let sources = PyTuple::new(py, [implicit, shapes.judged(py, judged.as_ref())?])?;
            let mut fields = list_fields(py, core, "final", l)?;
            let scored = shapes.scored(py, l, &fields, sources)?;
            fields.push(l.seq.into_bound_py_any(py)?);
            fields.push(l.passed().into_bound_py_any(py)?);
            fields.push(scored);
            out.append(PyTuple::new(py, fields)?)?;
        }
        Ok(out)
    }

    /// Each finalized list scored and folded here (`CoreFold::fold`): its early judged pass's
    /// flag and its `ScoredList`, as (handed, scored). `persisted`: per source, the bucket
    /// start before which the state topic holds its buckets (a list before it is not folded).
    /// With `sums` inline (docs/native.md "Detector sums in the core"), no `ScoredList`: the
    /// list's NDCG goes into the sums here, and the answer is empty.
    pub fn folded<'py>(
        &mut self,
        py: Python<'py>,
        core: &Core,
        lists: &[OpenList],
        fold: &mut CoreFold,
        persisted: Option<&HashMap<String, i64>>,
        sums: Option<&mut CoreSums>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(sums) = sums.filter(|s| s.inline) {
            self.folded_inline(core, lists, fold, persisted, sums);
            return Ok(out);
        }
        for l in lists {
            let docs = l.doc_ids();
            let (implicit, judged) = self.scoring.finalize(l, &docs);
            let shapes = &self.shapes;
            let sources = PyTuple::new(
                py,
                [
                    match &implicit {
                        Some(s) => shapes.source(py, &shapes.implicit_name, s)?,
                        None => shapes.no_interaction.bind(py).clone(),
                    },
                    shapes.judged(py, judged.as_ref())?,
                ],
            )?;
            let scored_py = shapes.of_list(py, core, l, sources)?;
            let (scoring, shell) = (&self.scoring, &mut self.shell);
            Self::fold_one(
                scoring, shell, core, l, &docs, implicit, judged, fold, persisted,
            );
            out.append((l.passed(), scored_py))?;
        }
        Ok(out)
    }

    /// Each finalized list scored and folded here, its NDCG into `sums` (no Python object:
    /// the batch loop's finalization, `crate::join::batch::AtDue`; as `folded` with the sums
    /// inline).
    pub fn folded_inline(
        &mut self,
        core: &Core,
        lists: &[OpenList],
        fold: &mut CoreFold,
        persisted: Option<&HashMap<String, i64>>,
        sums: &mut CoreSums,
    ) {
        for l in lists {
            let docs = l.doc_ids();
            let (implicit, judged) = self.scoring.finalize(l, &docs);
            let (scoring, shell) = (&self.scoring, &mut self.shell);
            let rust = Self::fold_one(
                scoring, shell, core, l, &docs, implicit, judged, fold, persisted,
            );
            let judged = (!l.passed()).then_some(&rust.sources[1].ndcg[..]);
            let segment = core.segments.segment(l.segment);
            let implicit = &rust.sources[0].ndcg;
            let source = core.source(l.source);
            sums.finalized(l.timestamp, segment, source, l.query_id(), implicit, judged);
        }
    }

    /// One finalized list's fold (`CoreFold::fold`), its scores as the fold reads them (`docs`:
    /// its doc ids, read once per list), in the shell refilled per list.
    #[allow(clippy::too_many_arguments)]
    fn fold_one<'s>(
        scoring: &CoreScoring,
        shell: &'s mut ScoredShell,
        core: &Core,
        l: &OpenList,
        docs: &[&str],
        implicit: Option<SourceScore>,
        judged: Option<SourceScore>,
        fold: &mut CoreFold,
        persisted: Option<&HashMap<String, i64>>,
    ) -> &'s scored::ScoredList {
        let source = core.source(l.source);
        let fields = ListFields {
            query_id: l.query_id(),
            timestamp: l.timestamp,
            segment: core.segments.segment(l.segment),
            clicked: l.clicked(),
            first_click_rank: l.first_click_rank().map(i64::from),
            interacted: l.interacted(),
            source,
        };
        let rust = shell.fill(&fields, implicit, judged);
        let folded = persisted
            .and_then(|p| p.get(source))
            .is_none_or(|&before| l.timestamp >= before);
        fold.fold(&scoring.judgments, rust, docs, l.counted_before(), folded);
        rust
    }

    /// A batch needs the Python back half for its extra sources: a list with teams
    /// (interleaving), or two judge families seen (a judged source per family).
    pub fn needs_python(lists: &[OpenList], fold: &CoreFold) -> bool {
        fold.tracker.listener().active() || lists.iter().any(OpenList::has_teams)
    }

    /// The early judged pass (`Joiner.passed`): each list's `ScoredList` with its judged source
    /// only (`ListScorer.score_judged`), its score kept until the list is finalized. With `sums`
    /// inline, no `ScoredList`: the judged NDCG goes into the sums (`Detectors.add_judged`) and
    /// the answer is empty.
    pub fn passed<'py>(
        &mut self,
        py: Python<'py>,
        core: &mut Core,
        cut: Option<i64>,
        sums: Option<&mut CoreSums>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        if let Some(sums) = sums.filter(|s| s.inline) {
            if let Some(per) = sums.per_source.as_mut() {
                per.passing(cut);
            }
            let mut judged = Vec::new();
            for slot in core.joiner.passed(cut) {
                let l = core.joiner.list(slot);
                let ndcg = if self.scoring.early_ndcg(l, &mut judged) {
                    &judged
                } else {
                    &self.unjudged.ndcg
                };
                let segment = core.segments.segment(l.segment);
                let source = core.source(l.source);
                sums.passed(l.timestamp, segment, source, l.query_id(), ndcg);
            }
            return Ok(out);
        }
        for slot in core.joiner.passed(cut) {
            let l = core.joiner.list(slot);
            let judged = self.scoring.early(l);
            out.append(self.shapes.passed(py, core, l, judged.as_ref())?)?;
        }
        Ok(out)
    }
}
