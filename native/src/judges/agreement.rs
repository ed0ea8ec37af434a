//! Agreement between judge families (`streameval/judges/agreement.py`, `PairSums`): the
//! sufficient statistics of Krippendorff's alpha, interval metric, of two coders over the units
//! both coded, and the alpha from them (Krippendorff 2011, *Computing Krippendorff's
//! Alpha-Reliability*; Hayes & Krippendorff 2007). The same float operations in the same order
//! as the Python class, so the same bits.

#[derive(Clone, Debug, Default, PartialEq)]
pub struct PairSums {
    pub units: u64,
    /// Σ (a − b)²
    pub diff_sq: f64,
    /// Σ a + Σ b
    pub total: f64,
    /// Σ a² + Σ b²
    pub total_sq: f64,
}

impl PairSums {
    pub fn add(&mut self, a: f64, b: f64) {
        self.units += 1;
        let d = a - b;
        self.diff_sq += d * d;
        self.total += a + b;
        self.total_sq += a * a + b * b;
    }

    /// alpha of the units added; `None`: nothing added, or no variation.
    pub fn alpha(&self) -> Option<f64> {
        let n = 2 * self.units;
        let expected = n as f64 * self.total_sq - self.total * self.total;
        if self.units < 1 || expected <= 1e-12 * f64::max(1.0, n as f64 * self.total_sq) {
            return None;
        }
        Some(1.0 - (n - 1) as f64 * self.diff_sq / expected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_agreement_and_none() {
        let mut s = PairSums::default();
        assert_eq!(s.alpha(), None);
        s.add(1.0, 1.0);
        assert_eq!(s.alpha(), None, "no variation");
        s.add(3.0, 3.0);
        assert_eq!(s.alpha(), Some(1.0));
    }

    #[test]
    fn two_coders_by_hand() {
        // units (1, 2), (3, 3): n = 4, Σ = 9, Σ² = 23, Σ(a−b)² = 1
        // expected = 4·23 − 81 = 11; alpha = 1 − 3·1/11
        let mut s = PairSums::default();
        s.add(1.0, 2.0);
        s.add(3.0, 3.0);
        assert_eq!(s.units, 2);
        assert_eq!(s.alpha(), Some(1.0 - 3.0 / 11.0));
    }
}
