//! From a ranked list of doc ids to the grade sequence the scorer reads
//! (`streameval/score/ranking.py`).

use crate::hash::set_with_capacity;

/// Up to this many docs, [`all_distinct`] compares each pair (45 compares of short strings at
/// 10 results, most told apart by length or first byte) instead of hashing into a new set.
const PAIRWISE: usize = 16;

/// `a == b`, told apart first by length and last byte (ids of one catalogue often differ only
/// at their end: `d201-6`, `d201-8`), without a call to `memcmp` for those.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// No doc repeats in the list (else a repeat gains only at its first position).
pub fn all_distinct<S: AsRef<str>>(doc_ids: &[S]) -> bool {
    if doc_ids.len() <= PAIRWISE {
        return doc_ids
            .iter()
            .enumerate()
            .all(|(i, d)| doc_ids[..i].iter().all(|e| !same(e.as_ref(), d.as_ref())));
    }
    let mut seen = set_with_capacity(doc_ids.len());
    doc_ids.iter().all(|d| seen.insert(d.as_ref()))
}

/// The grade of each position (0 for docs `grade_of` does not know); a doc repeated in the
/// list gains only at its first position, later repeats get 0 and keep their position.
/// `unique`: the caller already knows no doc repeats.
pub fn grades_in_rank_order<S, G>(doc_ids: &[S], grade_of: G, unique: bool) -> Vec<f64>
where
    S: AsRef<str>,
    G: Fn(&str) -> Option<f64>,
{
    let mut grades: Vec<f64> = doc_ids
        .iter()
        .map(|d| grade_of(d.as_ref()).unwrap_or(0.0))
        .collect();
    if !unique {
        let mut seen = set_with_capacity(doc_ids.len());
        for (grade, doc) in grades.iter_mut().zip(doc_ids) {
            if !seen.insert(doc.as_ref()) {
                *grade = 0.0;
            }
        }
    }
    grades
}

/// The list with its unjudged docs dropped (`unjudged = "condensed"`, Sakai's condensed
/// lists): the judged docs move up to close the gaps.
pub fn condensed(grades: &[f64], judged_flags: &[bool]) -> Vec<f64> {
    assert_eq!(
        grades.len(),
        judged_flags.len(),
        "grades and judged flags differ in length"
    );
    grades
        .iter()
        .zip(judged_flags)
        .filter(|(_, &judged)| judged)
        .map(|(&g, _)| g)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn repeats_gain_once() {
        let grades: HashMap<&str, f64> = [("a", 2.0), ("b", 1.0)].into();
        let lookup = |d: &str| grades.get(d).copied();
        let docs = ["a", "x", "a", "b", "b"];
        assert!(!all_distinct(&docs));
        assert!(all_distinct(&["a", "b"]));
        assert_eq!(
            grades_in_rank_order(&docs, lookup, false),
            vec![2.0, 0.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            grades_in_rank_order(&["b", "a"], lookup, true),
            vec![1.0, 2.0]
        );
    }

    #[test]
    fn distinct_pairwise_and_by_set_agree() {
        for n in [0, 1, 2, PAIRWISE, PAIRWISE + 1, 40] {
            let docs: Vec<String> = (0..n).map(|i| format!("d{i}")).collect();
            assert!(all_distinct(&docs), "{n}");
            for (i, j) in [(0, n.saturating_sub(1)), (n / 2, n / 2 + 1)] {
                if j < n && i != j {
                    let mut twice = docs.clone();
                    twice[j] = twice[i].clone();
                    assert!(!all_distinct(&twice), "{n}: {i} = {j}");
                }
            }
        }
    }

    #[test]
    fn condensing_drops_unjudged() {
        assert_eq!(
            condensed(&[1.0, 0.0, 3.0, 0.0], &[true, false, true, true]),
            vec![1.0, 3.0, 0.0]
        );
        assert!(condensed(&[], &[]).is_empty());
    }
}
