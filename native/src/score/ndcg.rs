//! DCG, ideal DCG and NDCG at every cutoff (`streameval/score/ndcg.py`, `Scorer`).
//!
//! DCG@k = Σ gain(g_i) · discount(i) over the first k ranks (a short list padded with zero
//! gain); the ideal ordering is the ideal pool sorted descending, its best max(ks) grades, with
//! the non-positive gains left out; NDCG@k = DCG@k / IDCG@k, none when the ideal has no
//! positive gain. The same operations in the same order as Python, so every value is equal bit
//! for bit. (Python memoizes the ideal DCGs per pool top; that cache is invisible in results and
//! not needed here.)

use super::cutoff_sums::CutoffSums;
use super::discount::discount_table;
use super::gain::exponential;
use super::spec::{Gain, MetricSpec};

/// DCG, IDCG and NDCG of one list, one entry per cutoff (ascending).
#[derive(Clone, Debug, PartialEq)]
pub struct CutoffScores {
    pub dcg: Vec<f64>,
    pub idcg: Vec<f64>,
    /// `None` when the ideal DCG is 0 (no relevant document: `no_relevance`)
    pub ndcg: Option<Vec<f64>>,
}

/// Scores ranked lists of grades under one [`MetricSpec`].
#[derive(Clone, Debug)]
pub struct Scorer {
    spec: MetricSpec,
    dcg: CutoffSums,
    exponential: bool,
}

/// The ideal's top is found by counting distinct grades when a pool has at most this many
/// distinct positive grades and this many grades, else by selection and sorting.
const DISTINCT_LIMIT: usize = 8;
const DISTINCT_POOL_LIMIT: usize = 4096;

/// Descending order of finite grades (a NaN, which the event bounds exclude, sorts first).
fn descending(a: &f64, b: &f64) -> std::cmp::Ordering {
    b.total_cmp(a)
}

/// The best `kmax` positive values of `pool`, descending, into `top` (empty).
fn top_positive(pool: &[f64], kmax: usize, top: &mut Vec<f64>) {
    if pool.len() > DISTINCT_POOL_LIMIT {
        return top_by_selection(pool, kmax, top);
    }
    // grades take few distinct values: count each distinct value (up to DISTINCT_LIMIT of
    // them, the non-positive ones too), then write the best kmax positive ones out,
    // descending. The count is branch-free per value: grades come in no predictable order.
    let mut values = [0.0f64; DISTINCT_LIMIT];
    let mut counts = [0usize; DISTINCT_LIMIT];
    let mut distinct = 0;
    for &g in pool {
        let mut found = false;
        for (v, c) in values[..distinct].iter().zip(&mut counts[..distinct]) {
            let same = *v == g;
            *c += usize::from(same);
            found |= same;
        }
        if !found {
            if distinct == DISTINCT_LIMIT {
                return top_by_selection(pool, kmax, top);
            }
            values[distinct] = g;
            counts[distinct] = 1;
            distinct += 1;
        }
    }
    let mut order: [usize; DISTINCT_LIMIT] = std::array::from_fn(|i| i);
    order[..distinct].sort_unstable_by(|&a, &b| descending(&values[a], &values[b]));
    for &at in order[..distinct].iter().filter(|&&at| values[at] > 0.0) {
        let room = kmax - top.len();
        if room == 0 {
            break;
        }
        top.extend(std::iter::repeat_n(values[at], counts[at].min(room)));
    }
}

/// [`top_positive`] by a partial selection then a sort: for pools of many distinct grades.
fn top_by_selection(pool: &[f64], kmax: usize, top: &mut Vec<f64>) {
    top.clear();
    top.extend(pool.iter().filter(|&&g| g > 0.0));
    if top.len() > kmax {
        top.select_nth_unstable_by(kmax - 1, descending);
        top.truncate(kmax);
    }
    top.sort_unstable_by(descending);
}

impl Scorer {
    pub fn new(spec: MetricSpec) -> Self {
        let discounts = discount_table(&spec, spec.max_k());
        let dcg = CutoffSums::new(&discounts, &spec.ks);
        let exponential = spec.gain == Gain::Exponential;
        Scorer {
            spec,
            dcg,
            exponential,
        }
    }

    pub fn spec(&self) -> &MetricSpec {
        &self.spec
    }

    /// The positive gains of the ideal ordering: the best max(ks) grades of `pool`, descending
    /// (`best_first`: the pool is sorted already, its first max(ks) are read as they are), as
    /// gains, the non-positive ones left out, into `scratch`.
    ///
    /// Python sorts the whole pool, cuts it at max(ks), then drops the non-positive gains; here
    /// the positive grades are selected first (a gain is positive only for a positive grade,
    /// and both gains keep the order): the same values in the same order. (Ties are equal
    /// floats; a -0.0 beside a 0.0 never reaches the ideal.)
    fn ideal_gains(&self, pool: &[f64], best_first: bool, scratch: &mut Vec<f64>) {
        let kmax = self.spec.max_k();
        scratch.clear();
        if best_first {
            scratch.extend(pool[..pool.len().min(kmax)].iter().filter(|&&g| g > 0.0));
        } else {
            top_positive(pool, kmax, scratch);
        }
        if self.exponential {
            for g in scratch.iter_mut() {
                *g = exponential(*g);
            }
            scratch.retain(|&g| g > 0.0); // 2^g - 1 rounds to 0 for a tiny g
        }
    }

    /// Score one list: `grades` in rank order (0 already put in for repeated and unjudged
    /// docs), `ideal_pool` the grades the ideal ordering is built from.
    pub fn score(&self, grades: &[f64], ideal_pool: &[f64], best_first: bool) -> CutoffScores {
        let mut scratch = Vec::new();
        let mut flat = Vec::new();
        let relevant = self.score_flat(grades, ideal_pool, best_first, &mut scratch, &mut flat);
        let n = self.dcg.len();
        CutoffScores {
            dcg: flat[..n].to_vec(),
            idcg: flat[n..2 * n].to_vec(),
            ndcg: relevant.then(|| flat[2 * n..].to_vec()),
        }
    }

    /// [`Scorer::score`] appending DCG, IDCG and NDCG (one value per cutoff each; the NDCG
    /// values are meaningless when it returns false: no relevant document) to `out`, with a
    /// reusable `scratch`: a batch allocates nothing per list.
    pub fn score_flat(
        &self,
        grades: &[f64],
        ideal_pool: &[f64],
        best_first: bool,
        scratch: &mut Vec<f64>,
        out: &mut Vec<f64>,
    ) -> bool {
        let n = self.dcg.len();
        let kmax = self.spec.max_k();
        let at = out.len();
        if self.exponential {
            scratch.clear();
            scratch.extend(
                grades[..grades.len().min(kmax)]
                    .iter()
                    .map(|&g| exponential(g)),
            );
            self.dcg.sums_into(scratch, out);
        } else {
            self.dcg.sums_into(grades, out);
        }
        self.ideal_gains(ideal_pool, best_first, scratch);
        let relevant = !scratch.is_empty();
        if relevant {
            self.dcg.sums_into(scratch, out);
            for j in 0..n {
                out.push(out[at + j] / out[at + n + j]);
            }
        } else {
            out.resize(at + 2 * n, 0.0);
            out.resize(at + 3 * n, 0.0);
        }
        relevant
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scorer(ks: &[i64], gain: &str, discount: &str) -> Scorer {
        Scorer::new(MetricSpec::new(ks, gain, discount, 2.0).unwrap())
    }

    #[test]
    fn ndcg_of_a_list() {
        let s = scorer(&[1, 3], "linear", "log2");
        let r = s.score(&[1.0, 3.0, 0.0], &[1.0, 3.0, 0.0], false);
        let dcg3 = 1.0 + 3.0 / 3f64.log2() + 0.0 * 0.5;
        let idcg3 = 3.0 + 1.0 / 3f64.log2() + 0.0 * 0.5;
        assert_eq!(r.dcg, vec![1.0, dcg3]);
        assert_eq!(r.idcg, vec![3.0, idcg3]);
        assert_eq!(r.ndcg, Some(vec![1.0 / 3.0, dcg3 / idcg3]));
    }

    #[test]
    fn ideal_leaves_out_negative_and_zero_gains() {
        let s = scorer(&[2], "linear", "log2");
        let r = s.score(&[-1.0, 1.0], &[-1.0, 1.0], false);
        assert_eq!(r.idcg, vec![1.0]);
        assert_eq!(r.ndcg, Some(vec![-1.0 + 1.0 / 3f64.log2()]));
        let r = s.score(&[0.0, -2.0], &[0.0, -2.0], false);
        assert_eq!(r.idcg, vec![0.0]);
        assert_eq!(r.ndcg, None);
    }

    #[test]
    fn exponential_gain_and_pool() {
        let s = scorer(&[1, 2], "exponential", "jarvelin");
        // a pool larger than the list, already sorted
        let r = s.score(&[1.0, 2.0], &[3.0, 2.0, 1.0], true);
        assert_eq!(r.dcg, vec![1.0, 4.0]);
        assert_eq!(r.idcg, vec![7.0, 10.0]);
        assert_eq!(r.ndcg, Some(vec![1.0 / 7.0, 0.4]));
    }

    #[test]
    fn ideal_top_by_counting_and_by_selection() {
        // Python's way: sort descending, cut at max k, keep the positive values
        let reference = |pool: &[f64], kmax: usize| -> Vec<f64> {
            let mut sorted = pool.to_vec();
            sorted.sort_by(|a, b| b.partial_cmp(a).unwrap());
            sorted.into_iter().take(kmax).filter(|&g| g > 0.0).collect()
        };
        let pools: [Vec<f64>; 4] = [
            vec![1.0, -1.0, 0.0, -0.0, 3.0, 1.0, 2.0, 3.0, 0.5], // few distinct: counted
            (0..40).map(|i| f64::from(i % 17) - 5.0).collect(),  // many: selected
            vec![-2.0, -1.0, 0.0],                               // no positive value
            vec![2.0; 30],
        ];
        for pool in &pools {
            for kmax in [1, 3, 10, 100] {
                let mut top = Vec::new();
                top_positive(pool, kmax, &mut top);
                assert_eq!(top, reference(pool, kmax), "{pool:?} at {kmax}");
            }
        }
    }

    #[test]
    fn large_pools_selected() {
        let s = scorer(&[2], "linear", "log2");
        let pool: Vec<f64> = (0..100).map(|i| f64::from(i % 7)).collect();
        let r = s.score(&[6.0, 6.0], &pool, false);
        assert_eq!(r.ndcg, Some(vec![1.0]));
        assert_eq!(r.idcg, vec![6.0 + 6.0 / 3f64.log2()]);
    }
}
