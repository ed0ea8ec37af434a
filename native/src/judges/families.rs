//! Judge families (`streameval/judges/families.py`): which family a judgment's `judge` belongs to.
//!
//! The longest prefix of `[judges] families` a judge starts with decides: a prefix ending in `:`
//! makes each judge under it a family of its own (named by the whole judge id), any other prefix
//! is one family named by the prefix, a judge matching none (an empty judge too) is `human`. The
//! first `max_families` families keep their names, in the order their first judgment was read; a
//! later family folds into `__other__`.

use crate::hash::Map;

pub const HUMAN: &str = "human";
pub const OTHER: &str = "__other__";

/// The family of `judge` under `prefixes` (uncapped). Two prefixes a judge starts with are
/// prefixes of one another, so comparing their byte lengths is comparing Python's `len`.
pub fn family_of(judge: &str, prefixes: &[String]) -> String {
    let mut best = "";
    for prefix in prefixes {
        if prefix.len() > best.len() && judge.starts_with(prefix.as_str()) {
            best = prefix;
        }
    }
    if best.is_empty() {
        HUMAN.to_owned()
    } else if best.ends_with(':') {
        judge.to_owned()
    } else {
        best.to_owned()
    }
}

/// The families seen so far, capped, and each judge's (remembered once decided).
#[derive(Clone, Debug)]
pub struct Families {
    prefixes: Vec<String>,
    cap: usize,
    /// judge -> its family's index in `names`
    of: Map<String, usize>,
    names: Vec<String>,
}

impl Families {
    pub fn new(prefixes: Vec<String>, max_families: usize) -> Self {
        Families {
            prefixes,
            cap: max_families,
            of: Map::default(),
            names: Vec::new(),
        }
    }

    /// The families in the order first seen (`__other__` among them once anything folded).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The (capped) family of `judge`, as its index in [`Families::names`]; a new family is
    /// registered here.
    pub fn of(&mut self, judge: &str) -> usize {
        if let Some(&at) = self.of.get(judge) {
            return at;
        }
        let mut family = family_of(judge, &self.prefixes);
        let mut at = self.names.iter().position(|n| *n == family);
        if at.is_none() {
            let other = usize::from(self.names.iter().any(|n| n == OTHER));
            if self.names.len() - other >= self.cap {
                family = OTHER.to_owned(); // the first max_families keep their names
                at = self.names.iter().position(|n| *n == family);
            }
        }
        let at = at.unwrap_or_else(|| {
            self.names.push(family);
            self.names.len() - 1
        });
        self.of.insert(judge.to_owned(), at);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefixes(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_longest_prefix_decides() {
        let p = prefixes(&["llm:", "vendor-a/", "llm:gpt"]);
        assert_eq!(family_of("llm:claude-3", &p), "llm:claude-3");
        assert_eq!(family_of("llm:gpt-4o", &p), "llm:gpt");
        assert_eq!(family_of("vendor-a/r1", &p), "vendor-a/");
        assert_eq!(family_of("alice", &p), "human");
        assert_eq!(family_of("", &p), "human");
        assert_eq!(family_of("ll", &p), "human");
    }

    #[test]
    fn later_families_fold_into_other() {
        let mut f = Families::new(prefixes(&["llm:"]), 2);
        assert_eq!(f.of("alice"), 0);
        assert_eq!(f.of("llm:a"), 1);
        assert_eq!(f.of("llm:b"), 2); // a third family: __other__
        assert_eq!(f.of("llm:c"), 2);
        assert_eq!(f.of("bob"), 0); // human is kept
        assert_eq!(f.of("llm:a"), 1);
        assert_eq!(f.names(), &["human", "llm:a", "__other__"]);
    }
}
