//! Gain functions (`streameval/score/gain.py`, and `ndcg.py`'s `_exponential_gains`).
//!
//! Grades are finite and within ±1000 (the event bounds), so 2^grade is finite.

/// 2^g − 1, as Python's `2.0 ** g - 1.0` (CPython calls the platform's `pow(2.0, g)`).
///
/// The base goes through `black_box` so that LLVM cannot rewrite `pow(2.0, x)` as `exp2(x)`
/// (it does, in a release build), a different libm function: glibc's `exp2(x)` and
/// `pow(2.0, x)` differ in the last bit for about 0.1 % of random `x` in [0, 4).
#[inline]
pub fn exponential(grade: f64) -> f64 {
    std::hint::black_box(2.0f64).powf(grade) - 1.0
}

/// `exponential` of every grade, into `out` (cleared first).
pub fn exponential_gains(grades: &[f64], out: &mut Vec<f64>) {
    out.clear();
    out.extend(grades.iter().map(|&g| exponential(g)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponential_gain() {
        assert_eq!(exponential(0.0), 0.0);
        assert_eq!(exponential(1.0), 1.0);
        assert_eq!(exponential(3.0), 7.0);
        assert_eq!(exponential(-1.0), -0.5);
        assert_eq!(exponential(0.5), 2f64.sqrt() - 1.0);
        assert!(exponential(1000.0).is_finite());
        let mut out = vec![9.0];
        exponential_gains(&[2.0, 0.0], &mut out);
        assert_eq!(out, vec![3.0, 0.0]);
    }
}
