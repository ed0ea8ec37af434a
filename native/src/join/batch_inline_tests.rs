//! The batch loop with its own finalization at due points (`run_inline`): where it still
//! stops, and what it does itself (docs/native.md "A batch that stops per bucket").

use super::tests::{batch, core, core_with, imp, JUDGMENT};
use super::*;

/// An `AtDue` that records what the loop asked of it.
#[derive(Default)]
struct Seen {
    finalized: Vec<(i64, usize)>,
    evicted: Vec<u64>,
    evicted_windows: Vec<i64>,
    /// finalize answers false (lists held for Python)
    hold: bool,
}

/// It applies no judgment (a core that only joins): Python would, at the next stop.
impl Judgments for Seen {
    fn judgments_in_core(&self) -> bool {
        false
    }

    fn apply(&mut self, _: &crate::decode::Judgment, _: &[u8]) -> Option<Applied> {
        None
    }
}

impl AtDue for Seen {
    fn finalize(&mut self, core: &mut Core, watermark: i64) -> bool {
        if self.hold {
            return false;
        }
        let done = core.joiner.finalize(watermark);
        self.finalized.push((watermark, done.len()));
        true
    }
    fn evicted(&mut self, seqs: &[u64]) {
        self.evicted.extend_from_slice(seqs);
    }
    fn evict(&mut self, horizon_ms: i64) {
        self.evicted_windows.push(horizon_ms);
    }
    fn next_eviction(&self) -> Option<i64> {
        None
    }
}

fn inline(at: &mut Seen, consumers_due: i64) -> Option<Inline<'_>> {
    Some(Inline {
        at,
        consumers_due,
        signals_due: i64::MAX,
    })
}

/// Impressions 100 ms apart from 1,000 (attribution 100 ms: each is due at the next one).
fn impressions(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| imp(&format!("r{i}"), 1000 + 100 * i as i64))
        .collect()
}

#[test]
fn due_points_before_the_consumers_bucket_are_finalized_without_a_stop() {
    let mut c = core_with(100, 100);
    let mut b = batch(&impressions(8), 0);
    let mut at = Seen::default();
    let mut dues = Dues {
        due: None,
        early_due: None,
    };
    // the horizon (watermark - 100) reaches 2,000 only with the impression at 1,700 + ...:
    // never in these records; every due point is the loop's own
    let stop = run_inline(&mut c, &mut b, &mut dues, &mut (), inline(&mut at, 2_000));
    assert_eq!(stop, None);
    assert_eq!(b.stops, 0);
    // the watermark (the newest time less the lateness, 10 ms: 990 + 100 j after the j-th
    // impression) reaches list i's deadline (1,100 + 100 i) two impressions later: lists 0 to
    // 5 finalized, one at each due point, in order
    let lists: usize = at.finalized.iter().map(|&(_, n)| n).sum();
    assert_eq!(lists, 6);
    assert!(at.finalized.windows(2).all(|w| w[0].0 < w[1].0));
    // the windows evicted at each horizon (watermark - attribution)
    assert_eq!(
        at.evicted_windows,
        at.finalized
            .iter()
            .map(|&(w, _)| w - 100)
            .collect::<Vec<_>>()
    );
    assert_eq!(dues.due, Some(1600 + 100)); // list 6's deadline, the next
}

#[test]
fn it_stops_where_the_horizon_enters_the_consumers_next_bucket() {
    let mut c = core_with(100, 100);
    let mut b = batch(&impressions(8), 0);
    let mut at = Seen::default();
    let mut dues = Dues {
        due: None,
        early_due: None,
    };
    // consumers due at horizon 1,200: the first due point whose horizon reaches it stops,
    // its lists finalized already (Python's `_advance` finds none due again)
    let stop = run_inline(&mut c, &mut b, &mut dues, &mut (), inline(&mut at, 1_200)).unwrap();
    assert!(stop - 100 >= 1_200);
    assert_eq!(b.stops, 1);
    assert_eq!(at.finalized.last().unwrap().0, stop);
    assert!(at.evicted_windows.iter().all(|&h| h < 1_200)); // not at the stop: Python's
    assert_eq!(c.joiner.finalize(stop).len(), 0);
}

#[test]
fn lists_held_for_python_stop_the_loop_at_their_due_point() {
    let mut c = core_with(100, 100);
    let mut b = batch(&impressions(3), 0);
    let mut at = Seen {
        hold: true,
        ..Seen::default()
    };
    let mut dues = Dues {
        due: None,
        early_due: None,
    };
    let stop = run_inline(
        &mut c,
        &mut b,
        &mut dues,
        &mut (),
        inline(&mut at, i64::MAX),
    );
    assert_eq!(stop, Some(1_190)); // the third impression's watermark reached 1,000 + 100
    assert!(at.evicted_windows.is_empty());
}

#[test]
fn a_due_point_after_a_judgment_not_applied_yet_stops() {
    let mut c = core_with(100, 100);
    let mut recs = impressions(4);
    recs.insert(1, JUDGMENT.to_owned());
    let mut b = batch(&recs, 0);
    let mut at = Seen::default();
    let mut dues = Dues {
        due: None,
        early_due: None,
    };
    let stop = run_inline(
        &mut c,
        &mut b,
        &mut dues,
        &mut (),
        inline(&mut at, i64::MAX),
    );
    assert_eq!(stop, Some(1_190)); // Python applies the judgment before the list is scored
    assert!(at.finalized.is_empty());
    assert!(b
        .effects
        .iter()
        .any(|e| matches!(e, Effect::Judgment { index: 1, .. })));
    // handed to Python (python_batch clears the flag with the effects): the rest runs on
    b.judgment_unapplied = false;
    b.effects.clear();
    assert_eq!(
        run_inline(
            &mut c,
            &mut b,
            &mut dues,
            &mut (),
            inline(&mut at, i64::MAX)
        ),
        None
    );
    assert!(!at.finalized.is_empty());
}

#[test]
fn lists_evicted_over_the_cap_are_counted_by_the_engine_not_handed_out() {
    let mut c = core(2);
    let mut b = batch(&impressions(4), 0);
    let mut at = Seen::default();
    let mut dues = Dues {
        due: Some(i64::MAX),
        early_due: None,
    };
    assert_eq!(
        run_inline(
            &mut c,
            &mut b,
            &mut dues,
            &mut (),
            inline(&mut at, i64::MAX)
        ),
        None
    );
    assert_eq!(at.evicted.len(), 2);
    assert!(!b.effects.iter().any(|e| matches!(e, Effect::Evicted(_))));
}
