//! Weighted prefix sums at a few cutoffs (`streameval/score/cutoff_sums.py`): the one loop DCG
//! and ideal DCG both run. `sums(values)[j] = Σ_{i < ks[j]} values[i] · weights[i]`, values
//! beyond max(ks) ignored.
//!
//! The Python module has two forms, and they differ in one bit (the sign of a zero sum), so both
//! are kept: for max(ks) ≤ 64 ([`UNROLL_LIMIT`]) its generated straight-line code pads a short
//! list with `0.0` values and *adds* their products (`-0.0 + 0.0` is `+0.0`); above, its loop
//! over `accumulate` stops at the list's end and repeats the last sum (an empty list sums to
//! `0.0`). Either way the additions run left to right, one product at a time, as Python's.

/// Above this many terms Python loops instead of generating straight-line code.
pub const UNROLL_LIMIT: usize = 64;

/// Prefix sums of `values[i] · weights[i]` at the cutoffs `ks`.
#[derive(Clone, Debug)]
pub struct CutoffSums {
    /// the first max(ks) weights
    weights: Vec<f64>,
    /// ascending, distinct, ≥ 1
    ks: Vec<usize>,
}

impl CutoffSums {
    /// `ks` ascending, distinct, ≥ 1, and at least max(ks) `weights` (the spec guarantees it).
    pub fn new(weights: &[f64], ks: &[usize]) -> Self {
        let kmax = *ks.last().expect("at least one cutoff");
        assert!(ks.windows(2).all(|w| w[0] < w[1]) && ks[0] >= 1);
        CutoffSums {
            weights: weights[..kmax].to_vec(),
            ks: ks.to_vec(),
        }
    }

    /// The number of sums, one per cutoff.
    pub fn len(&self) -> usize {
        self.ks.len()
    }

    /// Never empty (a spec has a cutoff); for clippy's `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        self.ks.is_empty()
    }

    /// The sums of `values` at every cutoff, appended to `out`.
    pub fn sums_into(&self, values: &[f64], out: &mut Vec<f64>) {
        let kmax = self.weights.len();
        let w = &self.weights;
        let n = values.len().min(kmax);
        let unrolled = kmax <= UNROLL_LIMIT;
        // the first term: `v[0] * w0` (an empty list's is the padding's 0.0 * w0 = +0.0 in the
        // unrolled form, and the 0.0 of an empty `accumulate` in the looped one)
        let mut s = if n > 0 { values[0] * w[0] } else { 0.0 };
        let mut i = 1;
        for &k in &self.ks {
            // the list's terms up to this cutoff, one product at a time, left to right
            let end = k.min(n);
            if i < end {
                for (v, w) in values[i..end].iter().zip(&w[i..end]) {
                    s += v * w;
                }
                i = end;
            }
            if unrolled && k > i {
                // the unrolled form adds the padding's products, each 0.0 * w = +0.0: adding
                // +0.0 once or many times gives the same (it only turns a -0.0 into +0.0)
                s += 0.0;
                i = k;
            }
            out.push(s);
        }
    }

    /// The sums of `values` at every cutoff.
    pub fn sums(&self, values: &[f64]) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.ks.len());
        self.sums_into(values, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_sums_at_cutoffs() {
        let f = CutoffSums::new(&[1.0, 0.5, 0.25, 0.125], &[1, 3, 4]);
        assert_eq!(f.len(), 3);
        assert_eq!(f.sums(&[2.0, 2.0, 4.0, 8.0, 100.0]), vec![2.0, 4.0, 5.0]);
        // short lists are padded with zero gain
        assert_eq!(f.sums(&[2.0]), vec![2.0, 2.0, 2.0]);
        assert_eq!(f.sums(&[]), vec![0.0, 0.0, 0.0]);
    }

    #[test]
    fn left_to_right_order() {
        // (1e16 + 1) + 1 != 1e16 + (1 + 1): the order of Python's additions is kept
        let f = CutoffSums::new(&[1.0, 1.0, 1.0], &[3]);
        assert_eq!(f.sums(&[1e16, 1.0, 1.0]), vec![1e16]);
        assert_eq!(f.sums(&[1.0, 1.0, 1e16]), vec![1e16 + 2.0]);
    }

    #[test]
    fn zero_sign_of_both_forms() {
        // unrolled (max k <= 64): the padding adds +0.0, so a lone -0.0 becomes +0.0 at k = 2
        let f = CutoffSums::new(&[1.0, 1.0], &[1, 2]);
        let s = f.sums(&[-0.0]);
        assert!(s[0].is_sign_negative() && s[1].is_sign_positive());
        // looped (max k > 64): the last sum is repeated, -0.0 stays
        let weights = vec![1.0; 65];
        let f = CutoffSums::new(&weights, &[1, 65]);
        let s = f.sums(&[-0.0]);
        assert!(s[0].is_sign_negative() && s[1].is_sign_negative());
        assert_eq!(f.sums(&[]), vec![0.0, 0.0]);
        assert_eq!(f.sums(&[1.0; 70]), vec![1.0, 65.0]);
    }
}
