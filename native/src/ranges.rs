//! Membership in a generated table of code point ranges (`tables.rs`, `printable.rs`).

use std::cmp::Ordering;

/// Whether `cp` lies in one of `table`'s ranges (sorted, inclusive, not overlapping).
pub fn contains(table: &[(u32, u32)], cp: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                Ordering::Less
            } else if lo > cp {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::contains;

    #[test]
    fn table() {
        let t = [(3, 5), (9, 9), (20, 30)];
        let inside = [3, 4, 5, 9, 20, 25, 30];
        let outside = [0, 2, 6, 8, 10, 19, 31, u32::MAX];
        assert!(inside.iter().all(|&c| contains(&t, c)));
        assert!(!outside.iter().any(|&c| contains(&t, c)));
        assert!(!contains(&[], 0));
    }
}
