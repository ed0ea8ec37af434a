//! Credit and outcomes of one interleaved list (`streameval/score/credit.py`, DESIGN §10).
//!
//! Each team's credit is the sum, over the results it contributed, of what the user gave them
//! (1 per clicked doc, or the doc's implicit grade); a doc shown twice counts at its first
//! position only; a result without a team earns nothing. Each ordered pair of teams shown gets
//! `win`/`loss`/`tie`, or `no_click` when no team earned anything.

use std::collections::{HashMap, HashSet};

pub const WIN: &str = "win";
pub const LOSS: &str = "loss";
pub const TIE: &str = "tie";
pub const NO_CLICK: &str = "no_click";
/// the team name later teams fold into beyond the cap
pub const OTHER_TEAM: &str = "__other__";

/// Credit per team shown, in the order teams first appear (a team that earned nothing has
/// 0.0); the additions run in rank order, as Python's.
pub fn team_credit<S, G>(doc_ids: &[S], teams: &[Option<S>], credit_of: G) -> Vec<(String, f64)>
where
    S: AsRef<str>,
    G: Fn(&str) -> Option<f64>,
{
    assert_eq!(doc_ids.len(), teams.len(), "one team per result");
    let mut seen = HashSet::with_capacity(doc_ids.len());
    let mut credit: Vec<(String, f64)> = Vec::new();
    for (doc, team) in doc_ids.iter().zip(teams) {
        let doc = doc.as_ref();
        if !seen.insert(doc) {
            continue;
        }
        let Some(team) = team else { continue };
        let team = team.as_ref();
        let earned = credit_of(doc).unwrap_or(0.0);
        match credit.iter_mut().find(|(name, _)| name == team) {
            Some((_, value)) => *value += earned,
            None => credit.push((team.to_owned(), 0.0 + earned)),
        }
    }
    credit
}

/// `(ranker, opponent, outcome)` of every ordered pair of distinct teams, teams in code point
/// order, each pair from both sides.
pub fn pair_outcomes(credit: &[(String, f64)]) -> Vec<(String, String, &'static str)> {
    let mut teams: Vec<&(String, f64)> = credit.iter().collect();
    teams.sort_by(|a, b| a.0.cmp(&b.0)); // UTF-8 byte order is code point order
    let credited = credit.iter().any(|(_, v)| *v != 0.0);
    let mut out = Vec::new();
    for (i, (a, ca)) in teams.iter().map(|t| (&t.0, t.1)).enumerate() {
        for (b, cb) in teams[i + 1..].iter().map(|t| (&t.0, t.1)) {
            let (ab, ba) = if !credited {
                (NO_CLICK, NO_CLICK)
            } else if ca > cb {
                (WIN, LOSS)
            } else if ca < cb {
                (LOSS, WIN)
            } else {
                (TIE, TIE)
            };
            out.push((a.clone(), b.clone(), ab));
            out.push((b.clone(), a.clone(), ba));
        }
    }
    out
}

/// Team names come from traffic: the first `max_teams` are kept, later ones fold into
/// [`OTHER_TEAM`] (a pair of two folded teams is dropped).
#[derive(Clone, Debug)]
pub struct TeamCap {
    max: usize,
    teams: HashSet<String>,
}

impl TeamCap {
    pub fn new(max_teams: usize) -> Self {
        TeamCap {
            max: max_teams,
            teams: HashSet::new(),
        }
    }

    /// The name `team` is counted under.
    pub fn name(&mut self, team: String) -> String {
        if self.teams.contains(&team) {
            return team;
        }
        if self.teams.len() >= self.max {
            return OTHER_TEAM.to_owned();
        }
        self.teams.insert(team.clone());
        team
    }

    /// The outcomes with their team names capped, ranker first then opponent for each pair.
    pub fn outcomes(
        &mut self,
        pairs: Vec<(String, String, &'static str)>,
    ) -> Vec<(String, String, &'static str)> {
        let mut out = Vec::with_capacity(pairs.len());
        for (a, b, outcome) in pairs {
            let a = self.name(a);
            let b = self.name(b);
            if a != b {
                out.push((a, b, outcome));
            }
        }
        out
    }
}

/// What each doc earned: `"clicks"` 1.0 per clicked doc, `"grades"` its implicit grade.
pub fn credit_lookup<'a>(
    mode_grades: bool,
    clicked: &'a HashSet<String>,
    grades: &'a HashMap<String, f64>,
) -> impl Fn(&str) -> Option<f64> + 'a {
    move |doc| {
        if mode_grades {
            grades.get(doc).copied()
        } else {
            clicked.contains(doc).then_some(1.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credit_at_first_position_only() {
        let docs = ["a", "b", "a", "c", "d"];
        let teams = [Some("x"), Some("y"), Some("y"), None, Some("z")];
        let clicked: HashSet<String> = ["a", "c"].iter().map(|s| s.to_string()).collect();
        let grades = HashMap::new();
        let credit = team_credit(&docs, &teams, credit_lookup(false, &clicked, &grades));
        let expect = vec![("x".to_string(), 1.0), ("y".into(), 0.0), ("z".into(), 0.0)];
        assert_eq!(credit, expect);
        let outcomes = pair_outcomes(&credit);
        assert_eq!(outcomes.len(), 6);
        assert_eq!(outcomes[0], ("x".into(), "y".into(), WIN));
        assert_eq!(outcomes[1], ("y".into(), "x".into(), LOSS));
        assert_eq!(outcomes[4], ("y".into(), "z".into(), TIE));
    }

    #[test]
    fn no_click_and_cap() {
        let credit = vec![("b".to_string(), 0.0), ("a".to_string(), 0.0)];
        let outcomes = pair_outcomes(&credit);
        assert_eq!(
            outcomes,
            vec![
                ("a".into(), "b".into(), NO_CLICK),
                ("b".into(), "a".into(), NO_CLICK)
            ]
        );
        let mut cap = TeamCap::new(2);
        let pairs = vec![
            ("a".to_string(), "b".to_string(), WIN),
            ("c".to_string(), "d".to_string(), TIE),
            ("a".to_string(), "c".to_string(), LOSS),
        ];
        let capped = cap.outcomes(pairs);
        assert_eq!(
            capped,
            vec![
                ("a".into(), "b".into(), WIN),
                ("a".into(), OTHER_TEAM.into(), LOSS)
            ]
        );
    }
}
