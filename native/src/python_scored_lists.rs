//! The lists `EngineCore` scores itself (`crate::core_scoring`), handed to Python as the
//! `streameval.values` named tuples the shared back half reads: a `ScoredList` per list, its
//! `SourceScore`s built with `tuple.__new__` as `streameval/score/lists.py` `_scored` does (the
//! named tuples' own `__new__` is a Python function; these are plain tuple subclasses).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::core_scoring::CoreScoring;
use crate::join::core::Core;
use crate::join::open_list::OpenList;
use crate::judgments::{JudgmentStore, PythonSum};
use crate::python_join::list_fields;
use crate::python_score::spec_of;
use crate::score::lists::{ListRules, ListScorer, SourceScore};

/// The scoring step of an `EngineCore` and the Python types and shared values it builds with.
pub struct ScoredLists {
    scoring: CoreScoring,
    shapes: Shapes,
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
            PyTuple::new(py, [self.judged(py, judged)?])?.into_any(),
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
        Ok(ScoredLists {
            scoring: CoreScoring::new(
                ListScorer::new(spec, rules),
                JudgmentStore::with_summing(summing),
            ),
            shapes,
        })
    }

    pub fn scoring(&mut self) -> &mut CoreScoring {
        &mut self.scoring
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
            let (implicit, judged) = self.scoring.finalize(l);
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

    /// The early judged pass (`Joiner.passed`): each list's `ScoredList` with its judged source
    /// only (`ListScorer.score_judged`), its score kept until the list is finalized.
    pub fn passed<'py>(
        &mut self,
        py: Python<'py>,
        core: &mut Core,
        cut: Option<i64>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for slot in core.joiner.passed(cut) {
            let l = core.joiner.list(slot);
            let judged = self.scoring.early(l);
            out.append(self.shapes.passed(py, core, l, judged.as_ref())?)?;
        }
        Ok(out)
    }
}
