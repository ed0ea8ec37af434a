//! The driver's cargo tests: raw records through decode, skew, watermark and join.

use super::*;
use crate::join::grades::InteractionGrades;
use crate::join::Outcome::*;

fn core(max_open: usize) -> Core {
    Core::new(Settings {
        attribution_ms: 100,
        allowed_lateness_ms: 10,
        max_open_lists: max_open,
        max_pending_clicks: 10,
        segment_labels: vec!["ranker".into()],
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

fn imp(rid: &str, ts: i64) -> String {
    format!(
        r#"{{"type":"impression","request_id":"{rid}","timestamp":{ts},"query_id":"q","results":["a","b"],"labels":{{"ranker":"x"}}}}"#
    )
}

fn clk(rid: &str, ts: i64, id: &str) -> String {
    let id = if id.is_empty() {
        String::new()
    } else {
        format!(r#","event_id":"{id}""#)
    };
    format!(r#"{{"type":"click","request_id":"{rid}","timestamp":{ts},"doc_id":"b"{id}}}"#)
}

fn summary(core: &mut Core) -> Vec<String> {
    let notes = std::mem::take(&mut core.notes);
    notes
        .iter()
        .map(|n| match n {
            Note::Finalized(l) => format!("final {}", l.request_id()),
            Note::Evicted(l) => format!("evicted {}", l.request_id()),
            Note::Resolved(o, c) => format!("resolved {} {c}", o.as_str()),
            Note::Expired(n) => format!("expired {n}"),
        })
        .collect()
}

#[test]
fn records_in_outcomes_and_lists_out() {
    let mut c = core(10);
    // (record, source, record_ms, answer, notes after it)
    let table: Vec<(String, &str, i64, Answer, &[&str])> = vec![
        (clk("r1", 1005, ""), "c", -1, Answer::Click(Pending), &[]),
        (clk("r1", 1005, ""), "c", -1, Answer::Click(Duplicate), &[]),
        (
            imp("r1", 1000),
            "i",
            -1,
            Answer::Impression(Accepted),
            &["resolved accepted true"],
        ),
        (imp("r1", 1000), "i", -1, Answer::Impression(Duplicate), &[]),
        (clk("r1", 1006, "e"), "c", -1, Answer::Click(Accepted), &[]),
        (clk("r1", 1007, "e"), "c", -1, Answer::Click(Duplicate), &[]),
        (imp("r2", 1020), "i", -1, Answer::Impression(Accepted), &[]),
        // both sources at 1120: watermark 1110 passes r1's deadline (1100)
        (clk("r3", 1120, ""), "c", -1, Answer::Click(Pending), &[]),
        (
            imp("r4", 1120),
            "i",
            -1,
            Answer::Impression(Accepted),
            &["final r1"],
        ),
        // behind the watermark (1110): late
        (imp("r5", 1109), "i", -1, Answer::Impression(Late), &[]),
        (clk("r1", 1115, ""), "c", -1, Answer::Click(Late), &[]),
        // dated 51 ms after its record: invalid, and it moves nothing
        (
            imp("r6", 5051),
            "i",
            5000,
            Answer::Invalid {
                reason: "future_timestamp",
                detail: "event time 51 ms after its record's timestamp (max_future_skew 50 ms)"
                    .into(),
            },
            &[],
        ),
        (
            r#"{"type":"judgment","query_id":"q","doc_id":"a","grade":1,"timestamp":9}"#.into(),
            "j",
            -1,
            Answer::Judgment,
            &[],
        ),
        (
            "{".into(),
            "i",
            -1,
            Answer::Invalid {
                reason: "bad_json",
                detail: "Invalid JSON: EOF while parsing an object at line 1 column 1".into(),
            },
            &[],
        ),
        // 1200 on both: r2 (1120) finalized, r3's waiting click (1120 < 1190) expired
        (imp("r7", 1200), "i", -1, Answer::Impression(Accepted), &[]),
        (
            clk("r7", 1200, ""),
            "c",
            -1,
            Answer::Click(Accepted),
            &["final r2", "expired 1"],
        ),
    ];
    for (n, (raw, source, record_ms, answer, notes)) in table.into_iter().enumerate() {
        assert_eq!(
            c.offer(raw.as_bytes(), source, record_ms, false, true),
            answer,
            "record {n}"
        );
        assert_eq!(summary(&mut c), notes.to_vec(), "record {n}");
    }
    assert_eq!(c.watermark(), Some(1190));
    c.finish();
    assert_eq!(summary(&mut c), vec!["final r4", "final r7"]);
    // the bucket after the newest event, plus the attribution window
    assert_eq!(c.watermark(), Some(2000 + 100));
}

#[test]
fn idle_sources_and_follow_move_the_watermark() {
    let mut c = core(10);
    c.add_source("c");
    assert_eq!(
        c.offer(imp("r1", 1000).as_bytes(), "i", -1, false, true),
        Answer::Impression(Accepted)
    );
    assert_eq!(c.watermark(), None, "c registered and silent holds it");
    assert!(!c.follow(5000));
    c.set_idle("c", true);
    assert_eq!(c.watermark(), Some(990));
    c.set_idle("i", true);
    assert!(c.follow(1100));
    assert_eq!(summary(&mut c), vec!["final r1"]);
    assert!(!c.follow(1100), "never backwards nor in place");
}

#[test]
fn evicted_over_the_cap_and_then_its_clicks_late() {
    let mut c = core(1);
    c.offer(imp("r1", 1000).as_bytes(), "i", -1, false, true);
    c.offer(imp("r2", 995).as_bytes(), "i", -1, false, true);
    assert_eq!(summary(&mut c), vec!["evicted r2"]);
    assert_eq!(
        c.offer(clk("r2", 996, "").as_bytes(), "i", -1, false, true),
        Answer::Click(Late)
    );
}

#[test]
fn step_joins_without_finalizing_and_tells_time_watermark_and_resolved() {
    let mut c = core(10);
    c.add_source("s");
    let s = c.step(clk("r1", 1000, "e1").as_bytes(), "s", -1, None, true);
    assert_eq!(
        (s.answer, s.ts, s.watermark),
        (Answer::Click(Pending), Some(1000), Some(990))
    );
    let s = c.step(imp("r1", 990).as_bytes(), "s", -1, None, true);
    assert_eq!(s.answer, Answer::Impression(Accepted));
    assert_eq!(s.resolved, vec![(Accepted, true)]);
    // far ahead: the watermark passes r1's deadline, but step leaves finalizing to the caller
    let s = c.step(imp("r2", 5000).as_bytes(), "s", -1, Some(6000), true);
    assert_eq!(s.watermark, Some(4990));
    assert_eq!(c.joiner.open_lists(), 2);
    assert!(c.notes.is_empty());
    let done = c.joiner.finalize(4990);
    assert_eq!(done.len(), 1);
    assert!(!done[0].counted_before());
    // r2 at or before the horizon a previous run counted: counted before
    assert!(c.joiner.finalize_all()[0].counted_before());
    let s = c.step(b"{", "s", -1, None, true);
    assert!(matches!(
        s.answer,
        Answer::Invalid {
            reason: "bad_json",
            ..
        }
    ));
    assert_eq!((s.ts, s.field.as_str()), (None, ""));
}

#[test]
fn a_source_is_decoded_in_its_format() {
    let mut c = core(10);
    let ubi = br#"{"query_id":"r9","query_response_hit_ids":["a"],"timestamp":1000}"#;
    // native: a UBI query is not a native event; UBI and auto: an impression
    let s = c.step(ubi, "n", -1, None, true);
    assert!(matches!(s.answer, Answer::Invalid { .. }));
    c.set_format("u", Format::Ubi);
    c.set_format("a", Format::Auto);
    assert_eq!(
        c.step(ubi, "u", -1, None, true).answer,
        Answer::Impression(Accepted)
    );
    assert_eq!(
        c.step(ubi, "a", -1, None, true).answer,
        Answer::Impression(Duplicate)
    );
    // a native event read from a UBI source is not UBI
    let s = c.step(imp("r1", 1000).as_bytes(), "u", -1, None, true);
    assert!(matches!(s.answer, Answer::Invalid { .. }));
    assert_eq!(
        c.step(imp("r1", 1000).as_bytes(), "a", -1, None, true)
            .answer,
        Answer::Impression(Accepted)
    );
}

#[test]
fn restart_starts_the_stream_over_but_keeps_the_segments_seen() {
    let mut c = Core::new(Settings {
        max_segments: 1,
        ..core(10).settings().clone()
    });
    c.step(imp("r1", 1000).as_bytes(), "s", -1, None, true);
    assert_eq!(c.segments.len(), 1);
    c.restart();
    assert_eq!((c.joiner.open_lists(), c.watermark()), (0, None));
    // the cap still counts the segment of before: a new one is __other__, the old one itself
    let other = imp("r2", 1000).replace(r#""ranker":"x""#, r#""ranker":"y""#);
    c.step(other.as_bytes(), "s", -1, None, true);
    c.step(imp("r3", 1000).as_bytes(), "s", -1, None, true);
    let lists = c.joiner.finalize_all();
    let segs: Vec<Vec<&str>> = lists
        .iter()
        .map(|l| c.segments.segment(l.segment).iter().map(|s| &**s).collect())
        .collect();
    assert_eq!(segs, vec![vec!["__other__"], vec!["x"]]);
}
