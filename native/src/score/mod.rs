//! The scoring stage (`streameval/score/`): a finalized list's grades in, NDCG@k and its
//! companions out, every metric variant of DESIGN §3 (gain, discount, cutoffs, ideal, unjudged,
//! no_relevance), computed with the same floating-point operations in the same order as the
//! Python reference so that every value is equal bit for bit.

pub mod credit;
pub mod cutoff_sums;
pub mod discount;
pub mod gain;
pub mod lists;
pub mod ndcg;
pub mod ranking;
pub mod spec;
