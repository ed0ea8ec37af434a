//! Rank discounts (`streameval/score/discount.py`): the weight of rank i (1-based) in DCG.
//!
//! Computed with the same libm calls as CPython's `math.log2` and `math.log` (Rust's `log2` and
//! `ln` call the platform's `log2` and `log`, as CPython does), so every weight is the Python
//! one bit for bit; the differential test compares the tables of ranks 1..1000.

use super::spec::{Discount, MetricSpec};

/// 1 / log2(i + 1) for the 1-based rank `i`.
pub fn log2(i: usize) -> f64 {
    1.0 / ((i + 1) as f64).log2()
}

/// 1 for ranks i ≤ base, else log(base) / log(i) (Python's `math.log(base) / math.log(i)`).
pub fn jarvelin(i: usize, base: f64) -> f64 {
    if (i as f64) <= base {
        return 1.0;
    }
    base.ln() / (i as f64).ln()
}

/// The discounts of ranks 1..=n under `spec`.
pub fn discount_table(spec: &MetricSpec, n: usize) -> Vec<f64> {
    match spec.discount {
        Discount::Log2 => (1..=n).map(log2).collect(),
        Discount::Jarvelin => (1..=n).map(|i| jarvelin(i, spec.discount_base)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_discounts() {
        assert_eq!(log2(1), 1.0);
        assert_eq!(log2(3), 0.5);
        assert_eq!(log2(7), 1.0 / 3.0);
        assert_eq!(log2(2), 1.0 / 3f64.log2());
    }

    #[test]
    fn jarvelin_discounts() {
        // base 2: rank 1 and 2 undiscounted, then 1 / log2(i)
        assert_eq!(jarvelin(1, 2.0), 1.0);
        assert_eq!(jarvelin(2, 2.0), 1.0);
        assert_eq!(jarvelin(4, 2.0), 2f64.ln() / 4f64.ln());
        // base 3.5: ranks 1..3 undiscounted
        assert_eq!(jarvelin(3, 3.5), 1.0);
        assert_eq!(jarvelin(4, 3.5), 3.5f64.ln() / 4f64.ln());
    }

    #[test]
    fn table_follows_spec() {
        let spec = MetricSpec::new(&[3], "linear", "jarvelin", 2.0).unwrap();
        assert_eq!(
            discount_table(&spec, 3),
            vec![1.0, 1.0, 2f64.ln() / 3f64.ln()]
        );
        let spec = MetricSpec::new(&[3], "linear", "log2", 2.0).unwrap();
        assert_eq!(discount_table(&spec, 3), vec![1.0, log2(2), 0.5]);
        assert!(discount_table(&spec, 0).is_empty());
    }
}
