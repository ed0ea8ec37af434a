//! The batch loop's cargo tests: where it stops, and what it leaves for Python.

use super::*;
use crate::join::core::Settings;
use crate::join::grades::InteractionGrades;

pub(super) fn core(max_open: usize) -> Core {
    core_with(max_open, 100)
}

pub(super) fn core_with(max_open: usize, attribution_ms: i64) -> Core {
    Core::new(Settings {
        attribution_ms,
        allowed_lateness_ms: 10,
        max_open_lists: max_open,
        max_pending_clicks: 10,
        segment_labels: vec![],
        max_segments: 10,
        grades: InteractionGrades {
            by_action: vec![("click".into(), 1.0)],
            dwell_min_ms: 1000,
            dwell_grade: 2.0,
        },
        max_record_bytes: 1000,
        max_future_skew_ms: 50,
        bucket_ms: 1000,
    })
}

pub(super) fn imp(rid: &str, ts: i64) -> String {
    format!(
        r#"{{"type":"impression","request_id":"{rid}","timestamp":{ts},"query_id":"q","results":["a","b"]}}"#
    )
}

fn clk(rid: &str, ts: i64) -> String {
    format!(r#"{{"type":"click","request_id":"{rid}","timestamp":{ts},"doc_id":"b"}}"#)
}

pub(super) const JUDGMENT: &str =
    r#"{"type":"judgment","query_id":"q","doc_id":"a","grade":1,"timestamp":9}"#;

/// A batch of `records` (offsets from `first`, no record timestamp).
pub(super) fn batch(records: &[String], first: i64) -> Batch {
    let mut r = Records::with_capacity(records.len(), 0);
    for (i, raw) in records.iter().enumerate() {
        r.push(raw.as_bytes(), first + i as i64, -1);
    }
    Batch::new(r, "s".into())
}

/// The loop over a core that only joins (no judgment table: Python applies judgments).
fn run(core: &mut Core, batch: &mut Batch, dues: &mut Dues) -> Option<i64> {
    super::run(core, batch, dues, &mut ())
}

const NEVER: Dues = Dues {
    due: None,
    early_due: None,
};

#[test]
fn the_records_are_copied_apart_and_read_back() {
    let mut r = Records::with_capacity(3, 8);
    r.push(b"ab", 1, -1);
    r.push(b"", 2, -1);
    r.push(b"cde", 3, 7);
    assert_eq!(
        (r.len(), r.raw(0), r.raw(1), r.raw(2)),
        (3, &b"ab"[..], &b""[..], &b"cde"[..])
    );
    assert!(!r.is_empty() && Records::default().is_empty());
}

#[test]
fn without_a_due_point_reached_every_record_runs_in_one_call() {
    let mut c = core(10);
    let recs = vec![
        imp("r1", 1000),
        clk("r1", 1005),
        clk("r9", 1010),
        imp("r1", 1000),
    ];
    let mut b = batch(&recs, 5);
    let mut dues = NEVER;
    assert_eq!(run(&mut c, &mut b, &mut dues), None);
    assert!(b.done());
    // r1 opened at 1000: due at 1100; the waiting click r9 (1010) lowers it to 1011
    assert_eq!(
        dues,
        Dues {
            due: Some(1011),
            early_due: None
        }
    );
    let want = IntakeDelta {
        read: 4,
        accepted: [1, 1],
        duplicate: [1, 0],
        late: [0, 0],
        unmatched: 0,
        pending: 1,
    };
    assert_eq!(b.intake, want);
    assert_eq!(b.next_offset, Some(9));
    // one note (bucket 1000 of s), each counter's key made once, in the order first counted
    assert_eq!(
        b.effects,
        vec![
            Effect::Note {
                ts: 1000,
                offset: 5
            },
            Effect::Touch {
                counter: ACCEPTED,
                kind: IMPRESSION as u8
            },
            Effect::Touch {
                counter: ACCEPTED,
                kind: CLICK as u8
            },
            Effect::Touch {
                counter: DUPLICATE,
                kind: IMPRESSION as u8
            },
        ]
    );
}

#[test]
fn it_stops_after_the_record_whose_watermark_reaches_due_and_resumes_after_it() {
    let mut c = core(10);
    let recs = vec![
        imp("r1", 1000),
        imp("r2", 1050),
        imp("r3", 1115),
        imp("r4", 1120),
    ];
    let mut b = batch(&recs, 0);
    let mut dues = NEVER;
    // r3 moves the watermark to 1105, past r1's due point 1100
    assert_eq!(run(&mut c, &mut b, &mut dues), Some(1105));
    assert_eq!((b.next, dues.due), (3, Some(1100)));
    // Python's _advance finalizes r1 and says the next due point: r2's
    assert_eq!(c.joiner.finalize(1105).len(), 1);
    dues.due = Some(1150);
    assert_eq!(run(&mut c, &mut b, &mut dues), None);
    assert!(b.done());
    assert_eq!(b.intake.accepted, [4, 0]);
}

#[test]
fn it_stops_where_the_early_pass_is_due() {
    // an attribution window of 5 s: r1 is due at 6000, its bucket ends at 2000
    let mut c = core_with(10, 5_000);
    let recs = vec![
        imp("r1", 1000),
        imp("r2", 1990),
        imp("r3", 2011),
        imp("r4", 2500),
    ];
    let mut b = batch(&recs, 0);
    b.early = true;
    let mut dues = NEVER;
    assert_eq!(run(&mut c, &mut b, &mut dues), Some(2001));
    assert_eq!(
        (b.next, dues),
        (
            3,
            Dues {
                due: Some(6000),
                early_due: Some(2000)
            }
        )
    );
    // without the early pass, the same records run to the end
    let mut c = core_with(10, 5_000);
    let mut b = batch(&recs, 0);
    let mut dues = NEVER;
    assert_eq!(run(&mut c, &mut b, &mut dues), None);
    assert_eq!(
        dues,
        Dues {
            due: Some(6000),
            early_due: None
        }
    );
}

#[test]
fn a_lower_due_point_from_python_stops_the_next_call_sooner() {
    let mut c = core(10);
    let recs = vec![imp("r1", 1000), imp("r2", 1010), imp("r3", 1020)];
    let mut b = batch(&recs, 0);
    let mut dues = Dues {
        due: Some(995),
        early_due: None,
    };
    // (the watermark at the first record is 990: below the due point; 1000 at the second)
    assert_eq!(run(&mut c, &mut b, &mut dues), Some(1000));
    assert_eq!(b.next, 2);
}

#[test]
fn judgments_invalid_records_and_evictions_are_effects_in_record_order() {
    let mut c = core(1);
    let recs = vec![
        imp("r1", 1000),
        JUDGMENT.to_string(),
        "{".into(),
        imp("r2", 1001),
        clk("r2", 1002),
    ];
    let mut b = batch(&recs, 0);
    b.seconds_below = Some(1001);
    assert_eq!(run(&mut c, &mut b, &mut NEVER.clone()), None);
    let kinds: Vec<String> = b
        .effects
        .iter()
        .map(|e| match e {
            Effect::Invalid { index, reason, .. } => format!("invalid {index} {reason}"),
            Effect::Judgment { index, counted, .. } => format!("judgment {index} {counted}"),
            Effect::Seconds { ts } => format!("seconds {ts}"),
            Effect::Note { ts, offset } => format!("note {ts} {offset}"),
            Effect::Evicted(seqs) => format!("evicted {}", seqs.len()),
            Effect::Touch { counter, kind } => format!("touch {counter} {kind}"),
        })
        .collect();
    let want = [
        "seconds 1000",
        "note 1000 0",
        "touch 0 0",
        "judgment 1 true",
        "invalid 2 bad_json",
        "evicted 1", // r2 over the cap of one: r1 evicted
        "touch 0 1",
    ];
    assert_eq!(kinds, want);
    // judgments and invalid records are counted by Python as it applies them
    assert_eq!((b.intake.read, b.intake.accepted), (3, [2, 1]));
}

#[test]
fn records_a_previous_run_counted_are_not_counted_again() {
    let mut c = core(10);
    let recs = vec![
        imp("r1", 1000),
        "{".into(),
        JUDGMENT.into(),
        imp("r2", 1001),
        "{".into(),
    ];
    let mut b = batch(&recs, 10);
    b.counted_from = Some(13); // the first three were counted by a previous run
    assert_eq!(run(&mut c, &mut b, &mut NEVER.clone()), None);
    assert_eq!((b.intake.read, b.intake.accepted), (1, [1, 0]));
    let counted: Vec<_> = b
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Invalid { index, .. } => Some((*index, true)),
            Effect::Judgment { index, counted, .. } => Some((*index, *counted)),
            _ => None,
        })
        .collect();
    // the judgment is still applied (the table is state), but not counted; an invalid record
    // a previous run counted is neither counted nor dead-lettered again
    assert_eq!(counted, vec![(2, false), (4, true)]);
}

#[test]
fn a_note_only_when_the_bucket_changes_and_records_without_offsets_note_nothing() {
    let mut c = core(10);
    let recs = vec![
        imp("r1", 1000),
        imp("r2", 1999),
        imp("r3", 2000),
        imp("r4", 1500),
    ];
    let mut b = batch(&recs, 0);
    b.noted = Some((0, 1000)); // (noted before the batch: another bucket)
    while run(&mut c, &mut b, &mut NEVER.clone()).is_some() {} // (stops: none noted)
    let notes: Vec<_> = b
        .effects
        .iter()
        .filter(|e| matches!(e, Effect::Note { .. }))
        .cloned()
        .collect();
    let want = [(1000, 0), (2000, 2), (1500, 3)].map(|(ts, offset)| Effect::Note { ts, offset });
    assert_eq!(notes, want);
    let mut c = core(10);
    let mut r = Records::default();
    r.push(imp("r1", 1000).as_bytes(), -1, -1);
    let mut b = Batch::new(r, "s".into());
    run(&mut c, &mut b, &mut NEVER.clone());
    assert_eq!((b.next_offset, b.noted), (None, None));
}

#[test]
fn a_resolved_waiting_click_counted_before_moves_from_pending() {
    let mut c = core(10);
    let mut b = batch(&[clk("r1", 1005)], 0);
    run(&mut c, &mut b, &mut NEVER.clone());
    assert_eq!(b.intake.pending, 1);
    let mut b = batch(&[imp("r1", 1000)], 1);
    run(&mut c, &mut b, &mut NEVER.clone());
    // the impression accepted, the click it resolved accepted and no longer pending, no read
    let want = IntakeDelta {
        read: 1,
        accepted: [1, 1],
        pending: -1,
        ..IntakeDelta::default()
    };
    assert_eq!(b.intake, want);
}

#[test]
fn a_future_record_timestamp_makes_the_event_invalid() {
    let mut c = core(10);
    let mut r = Records::default();
    r.push(imp("r1", 5051).as_bytes(), 0, 5000);
    let mut b = Batch::new(r, "s".into());
    run(&mut c, &mut b, &mut NEVER.clone());
    assert!(matches!(
        &b.effects[..],
        [Effect::Invalid {
            index: 0,
            reason: "future_timestamp",
            ..
        }]
    ));
    assert_eq!(b.intake, IntakeDelta::default());
}

/// The core's judgment table (docs/native.md "Judgments applied in the core").
struct Table(crate::core_scoring::CoreScoring);

impl Judgments for Table {
    fn judgments_in_core(&self) -> bool {
        self.0.judgments_in_core()
    }

    fn apply(&mut self, judgment: &Judgment, raw: &[u8]) -> Option<Applied> {
        self.0.judgment(judgment, raw, None)
    }
}

fn table() -> Table {
    use crate::score::lists::{ListRules, ListScorer};
    use crate::score::spec::MetricSpec;
    let spec = MetricSpec::new(&[1], "linear", "log2", 2.0).unwrap();
    let rules = ListRules::new("pool", "zero", "skip").unwrap();
    let store = crate::judgments::JudgmentStore::new();
    let mut scoring = crate::core_scoring::CoreScoring::new(ListScorer::new(spec, rules), store);
    scoring.apply_judgments(100);
    Table(scoring)
}

#[test]
fn judgments_are_applied_in_the_core_at_their_record_in_order() {
    use crate::judgment_rules::Outcome as J;
    let mut c = core(10);
    let later = r#"{"type":"judgment","query_id":"q","doc_id":"a","grade":3,"timestamp":12,"judge":"y","event_id":"e"}"#;
    let recs = vec![
        JUDGMENT.to_string(),
        imp("r1", 1000),
        format!("{JUDGMENT}\r\n"), // the same record: a duplicate
        later.to_string(),
        later.replace("\"grade\":3", "\"grade\":0"), // the same event id: a duplicate
        "{".into(),
    ];
    let mut b = batch(&recs, 0);
    b.counted_from = Some(1); // the first was counted by a previous run: applied all the same
    let mut t = table();
    assert!(t.judgments_in_core() && !().judgments_in_core());
    assert_eq!(super::run(&mut c, &mut b, &mut NEVER.clone(), &mut t), None);
    let judged: Vec<_> = b
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Judgment {
                index,
                counted,
                applied: Some(a),
            } => {
                let change = a.change.as_ref().map(|c| (c.judges.clone(), c.version));
                Some((*index, *counted, a.outcome, change))
            }
            Effect::Judgment { applied: None, .. } => panic!("not applied"),
            _ => None,
        })
        .collect();
    let x = ("".to_owned(), 9, 1.0);
    let y = ("y".to_owned(), 12, 3.0);
    let want = vec![
        (0, false, J::Accepted, Some((vec![x.clone()], 1))),
        (2, true, J::Duplicate, None),
        (3, true, J::Accepted, Some((vec![x, y], 2))),
        (4, true, J::Duplicate, None),
    ];
    assert_eq!(judged, want);
    assert_eq!(t.0.judgments.grade("q", "a"), Some(2.0));
    assert_eq!(t.0.judgment_ids(), Some((2, 0)));
    // (judgments are counted by Python, from their effects: the intake holds the impression)
    assert_eq!((b.intake.read, b.intake.accepted), (1, [1, 0]));
}
