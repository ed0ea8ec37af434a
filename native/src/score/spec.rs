//! The declaration of a metric (`streameval/score/spec.py`, `MetricSpec`): which NDCG@k
//! variant, kept apart from the arithmetic. The same checks, in the same order, with the same
//! messages (each names its configuration key).

/// The largest cutoff accepted: impressions carry at most 1000 results (DESIGN §2).
pub const MAX_K: i64 = 1000;

/// Gain of a grade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gain {
    /// rel
    Linear,
    /// 2^rel − 1
    Exponential,
}

/// Discount of a rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discount {
    /// 1 / log2(i + 1)
    Log2,
    /// 1 for i ≤ b, else 1 / log_b(i) (Järvelin & Kekäläinen 2002)
    Jarvelin,
}

/// Which NDCG@k variant to compute; `ks` sorted ascending and deduplicated.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricSpec {
    pub ks: Vec<usize>,
    pub gain: Gain,
    pub discount: Discount,
    pub discount_base: f64,
}

/// Python's `repr` of a float, enough for the messages of the common cases.
pub(crate) fn float_repr(x: f64) -> String {
    if x.is_nan() {
        "nan".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_owned()
    } else if x == x.trunc() && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x:?}")
    }
}

impl MetricSpec {
    /// The spec of `ks` (any order, repeats allowed), `gain`, `discount` and `discount_base`,
    /// or the one-line message of the first invalid key (as `MetricSpecError` says it).
    pub fn new(ks: &[i64], gain: &str, discount: &str, discount_base: f64) -> Result<Self, String> {
        if ks.is_empty() {
            return Err("ks: at least one cutoff is required".to_owned());
        }
        if let Some(k) = ks.iter().find(|k| !(1..=MAX_K).contains(*k)) {
            return Err(format!("ks: each cutoff must lie in 1..{MAX_K}, got {k}"));
        }
        let mut sorted: Vec<usize> = ks.iter().map(|&k| k as usize).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let gain = match gain {
            "linear" => Gain::Linear,
            "exponential" => Gain::Exponential,
            other => {
                return Err(format!(
                    "gain: expected one of ('linear', 'exponential'), got '{other}'"
                ))
            }
        };
        let discount = match discount {
            "log2" => Discount::Log2,
            "jarvelin" => Discount::Jarvelin,
            other => {
                return Err(format!(
                    "discount: expected one of ('log2', 'jarvelin'), got '{other}'"
                ))
            }
        };
        if !(discount_base.is_finite() && discount_base > 1.0) {
            return Err(format!(
                "discount_base: must be finite and > 1, got {}",
                float_repr(discount_base)
            ));
        }
        Ok(MetricSpec {
            ks: sorted,
            gain,
            discount,
            discount_base,
        })
    }

    /// The largest cutoff: how deep any list or ideal ordering has to be read.
    pub fn max_k(&self) -> usize {
        *self.ks.last().expect("a spec has at least one cutoff")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ks_sorted_and_deduplicated() {
        let spec = MetricSpec::new(&[10, 1, 3, 3], "linear", "log2", 2.0).unwrap();
        assert_eq!(spec.ks, vec![1, 3, 10]);
        assert_eq!(spec.max_k(), 10);
        assert_eq!(spec.gain, Gain::Linear);
        assert_eq!(spec.discount, Discount::Log2);
    }

    #[test]
    fn invalid_keys_named() {
        let cases: [(&[i64], &str, &str, f64, &str); 7] = [
            (
                &[],
                "linear",
                "log2",
                2.0,
                "ks: at least one cutoff is required",
            ),
            (
                &[0],
                "linear",
                "log2",
                2.0,
                "ks: each cutoff must lie in 1..1000, got 0",
            ),
            (
                &[5, 1001],
                "linear",
                "log2",
                2.0,
                "ks: each cutoff must lie in 1..1000, got 1001",
            ),
            (
                &[1],
                "quadratic",
                "log2",
                2.0,
                "gain: expected one of ('linear', 'exponential'), got 'quadratic'",
            ),
            (
                &[1],
                "linear",
                "ln",
                2.0,
                "discount: expected one of ('log2', 'jarvelin'), got 'ln'",
            ),
            (
                &[1],
                "linear",
                "log2",
                1.0,
                "discount_base: must be finite and > 1, got 1.0",
            ),
            (
                &[1],
                "linear",
                "jarvelin",
                f64::INFINITY,
                "discount_base: must be finite and > 1, got inf",
            ),
        ];
        for (ks, gain, discount, base, message) in cases {
            assert_eq!(
                MetricSpec::new(ks, gain, discount, base).unwrap_err(),
                message
            );
        }
    }
}
