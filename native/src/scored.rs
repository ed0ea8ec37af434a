//! A finalized, scored list: what the scoring stage hands to the windows, the totals and the
//! consumers of finalized lists. A field-for-field mirror of `streameval.values.ScoredList` (and
//! its `SourceScore`, `Interleaved`), so that the native scoring stage can produce it and the
//! window fold (`crate::windows_store`) read it exactly as the Python engine does.
//!
//! Mappings keep their order as `Vec`s of pairs (the Python values are dicts and a frozenset,
//! read only by look-up or iteration; their order never reaches a sum).

/// Values of the configured `segment_labels`, in that order (`"__other__"` when capped, `""`
/// when an impression did not carry the label): `values.Segment`.
pub type Segment = Vec<String>;

/// The relevance sources (`values.IMPLICIT`, `values.JUDGED`, `values.IMPLICIT_DEBIASED`).
pub const IMPLICIT: &str = "implicit";
pub const JUDGED: &str = "judged";
pub const IMPLICIT_DEBIASED: &str = "implicit_debiased";
/// `values.RELEVANCE_SOURCES`: the two sources every list is scored with, in that order.
pub const RELEVANCE_SOURCES: [&str; 2] = [IMPLICIT, JUDGED];

/// Outcomes of a finalized list per relevance source (`values.SCORED`, ...): the label
/// `outcome` of `streameval_lists_total`.
pub const SCORED: &str = "scored";
pub const NO_RELEVANCE: &str = "no_relevance";
pub const EVICTED: &str = "evicted";

/// One relevance source's scores of a list: `values.SourceScore`.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceScore {
    /// the relevance source: `implicit`, `judged`, `implicit_debiased`, `judged:<family>`
    pub relevance: String,
    /// [`SCORED`] or [`NO_RELEVANCE`]
    pub outcome: String,
    /// the cutoffs, as configured
    pub ks: Vec<i64>,
    /// NDCG per k; `None`: no value (ideal DCG 0 with `no_relevance = skip`)
    pub ndcg: Vec<Option<f64>>,
    pub dcg: Vec<f64>,
    pub idcg: Vec<f64>,
    /// judged coverage@k (the judged sources only)
    pub coverage: Option<Vec<f64>>,
}

/// One interleaving outcome of an ordered pair of teams (`windows.store.OUTCOME_INDEX`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairOutcome {
    Win = 0,
    Loss = 1,
    Tie = 2,
    NoClick = 3,
}

impl PairOutcome {
    /// The outcome named as in Python (`"win"`, `"loss"`, `"tie"`, `"no_click"`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "win" => Some(Self::Win),
            "loss" => Some(Self::Loss),
            "tie" => Some(Self::Tie),
            "no_click" => Some(Self::NoClick),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Win => "win",
            Self::Loss => "loss",
            Self::Tie => "tie",
            Self::NoClick => "no_click",
        }
    }
}

/// What interleaving credit needs of a list whose results name their team (DESIGN §10):
/// `values.Interleaved`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interleaved {
    pub doc_ids: Vec<String>,
    /// per position; `None`: a result without a team
    pub teams: Vec<Option<String>>,
    /// docs with at least one `click` interaction (a frozenset in Python)
    pub clicked: Vec<String>,
    /// implicit grade per interacted doc (DESIGN §3)
    pub grades: Vec<(String, f64)>,
    /// re-read while rebuilding state: already counted since start
    pub counted_before: bool,
    /// (ranker, opponent, outcome) of every ordered pair of teams shown (team names capped)
    pub outcomes: Vec<(String, String, PairOutcome)>,
}

/// A finalized list, scored: `values.ScoredList`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoredList {
    pub request_id: String,
    pub query_id: String,
    /// the impression's event time, epoch ms
    pub timestamp: i64,
    pub labels: Vec<(String, String)>,
    pub segment: Segment,
    /// one score per relevance source, in `values.SOURCE_INDEX` order
    pub sources: Vec<SourceScore>,
    /// at least one `click` interaction
    pub clicked: bool,
    /// 1-based rank of the top-most clicked result
    pub first_click_rank: Option<i64>,
    /// at least one interaction of any kind
    pub interacted: bool,
    /// set only for a list whose results name teams
    pub interleaved: Option<Interleaved>,
    /// the partition (`topic/partition`) or file its impression was read from (`""` if none)
    pub source: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcome_names_round_trip_and_index_as_python() {
        // (name, index in windows.store.OUTCOME_INDEX)
        let table = [("win", 0), ("loss", 1), ("tie", 2), ("no_click", 3)];
        for (name, index) in table {
            let outcome = PairOutcome::from_name(name).unwrap();
            assert_eq!(outcome as usize, index);
            assert_eq!(outcome.name(), name);
        }
        assert_eq!(PairOutcome::from_name("draw"), None);
        assert_eq!(PairOutcome::from_name("Win"), None);
    }
}
