//! The joiner's cargo tests (a file of their own: `joiner.rs` stays under 400 lines).

use super::*;
use crate::join::segments::SegmentCapper;

const ATTR: i64 = 100;

fn joiner(max_open: usize, max_pending: usize) -> (Joiner, SegmentCapper) {
    let grades = InteractionGrades {
        by_action: vec![("click".into(), 1.0)],
        dwell_min_ms: 1000,
        dwell_grade: 2.0,
    };
    (
        Joiner::new(ATTR, grades, max_open, max_pending),
        SegmentCapper::new(vec!["ranker".into()], 10),
    )
}

fn imp(rid: &str, ts: i64, teams: bool) -> Impression {
    Impression {
        request_id: rid.into(),
        timestamp: ts,
        doc_ids: vec!["a".into(), "b".into()],
        query: None,
        query_id: "q".into(),
        labels: vec![],
        event_id: None,
        teams: teams.then(|| vec![Some("x".into()), Some("y".into())]),
    }
}

fn clk(rid: &str, ts: i64) -> Click {
    Click {
        request_id: rid.into(),
        doc_id: "b".into(),
        timestamp: ts,
        action: "click".into(),
        dwell_ms: None,
        position: None,
        event_id: None,
    }
}

fn key(s: &str) -> DedupKey {
    DedupKey::Id(s.into())
}

fn rids(lists: &[OpenList]) -> Vec<&str> {
    lists.iter().map(|l| l.request_id()).collect()
}

#[test]
fn impressions_open_once_and_not_behind_the_watermark() {
    use Outcome::*;
    let (mut j, mut s) = joiner(10, 10);
    // (request id, time, watermark, outcome)
    let table = [
        ("r1", 1000, None, Accepted),
        ("r1", 1000, None, Duplicate),
        ("r1", 10, Some(5000), Duplicate), // a redelivery, even behind the watermark
        ("r2", 499, Some(500), Late),
        ("r2", 500, Some(500), Accepted),
    ];
    for (rid, ts, wm, want) in table {
        assert_eq!(
            j.add_impression(&imp(rid, ts, false), wm, &mut s, false, 0)
                .0,
            want
        );
    }
    assert_eq!(j.open_lists(), 2);
}

#[test]
fn clicks_attach_wait_or_are_late() {
    use Outcome::*;
    let (mut j, mut s) = joiner(10, 1);
    j.add_impression(&imp("r1", 1000, false), None, &mut s, false, 0);
    // (request id, time, key, watermark, outcome)
    let table = [
        ("r1", 1050, "k1", None, Accepted),
        ("r1", 1060, "k1", None, Duplicate),
        ("r1", 1100, "k2", None, Late), // at the end of the attribution window
        ("r9", 900, "k3", Some(950), Late), // behind the watermark, no list open
        ("r9", 960, "k3", Some(950), Pending),
        ("r9", 961, "k3", Some(950), Duplicate),
        ("r8", 970, "k4", Some(950), Unmatched), // the waiting clicks at their cap
    ];
    for (rid, ts, k, wm, want) in table {
        assert_eq!(
            j.add_click(&clk(rid, ts), &key(k), wm, true),
            want,
            "{rid} {k}"
        );
    }
    // the impression resolves the waiting click, counted when read
    let (outcome, resolved) = j.add_impression(&imp("r9", 950, false), None, &mut s, false, 0);
    assert_eq!((outcome, resolved), (Accepted, vec![(Accepted, true)]));
    assert_eq!(j.pending_clicks(), 0);
}

#[test]
fn finalized_in_deadline_order_then_closed_ids_make_clicks_late() {
    let (mut j, mut s) = joiner(10, 10);
    for (rid, ts) in [("b", 20), ("a", 10), ("c", 20), ("d", 500)] {
        j.add_impression(&imp(rid, ts, false), None, &mut s, false, 0);
    }
    assert_eq!(j.next_due(), Some(10 + ATTR));
    assert!(j.finalize(109).is_empty());
    assert_eq!(rids(&j.finalize(120)), vec!["a", "b", "c"]);
    assert_eq!(j.open_lists(), 1);
    // closed ids are kept two windows past their impression
    assert_eq!(
        j.add_click(&clk("b", 125), &key("k"), Some(120), true),
        Outcome::Late
    );
    assert_eq!(j.next_due(), Some(10 + 2 * ATTR + 1));
    j.finalize(221);
    assert_eq!(
        j.add_click(&clk("a", 225), &key("k"), Some(221), true),
        Outcome::Pending
    );
    assert_eq!(rids(&j.finalize_all()), vec!["d"]);
    assert_eq!(j.expire_pending(None), 1);
}

#[test]
fn evicted_oldest_first_over_the_cap_and_the_slot_reused() {
    let (mut j, mut s) = joiner(2, 10);
    for (rid, ts) in [("a", 30), ("b", 10), ("c", 20)] {
        j.add_impression(&imp(rid, ts, false), None, &mut s, false, 0);
    }
    assert_eq!(rids(&j.evict_over_cap()), vec!["b"]);
    assert_eq!(
        j.add_click(&clk("b", 15), &key("k"), None, true),
        Outcome::Late
    );
    // a new list takes the freed slot; lookups still find each by id
    j.add_impression(&imp("d", 5, false), None, &mut s, false, 0);
    assert_eq!(rids(&j.evict_over_cap()), vec!["d"]);
    assert_eq!(j.closed_ids_dropped(), 0);
    for rid in ["a", "c"] {
        assert_eq!(
            j.add_click(&clk(rid, 40), &key("k"), None, true),
            Outcome::Accepted
        );
    }
    assert_eq!(rids(&j.finalize_all()), vec!["c", "a"]);
}

#[test]
fn an_interleaved_list_without_ranker_is_segmented_interleaved() {
    let (mut j, mut s) = joiner(10, 10);
    j.add_impression(&imp("r", 1, true), None, &mut s, false, 0);
    j.add_impression(&imp("p", 1, false), None, &mut s, false, 0);
    let lists = j.finalize_all();
    let segs: Vec<&[Box<str>]> = lists.iter().map(|l| s.segment(l.segment)).collect();
    assert_eq!(
        segs,
        vec![&[Box::from("interleaved")][..], &[Box::from("")][..]]
    );
    // the list keeps the impression's own labels
    assert!(lists[0].labels().is_empty());
}

#[test]
fn ten_result_lists_cost_under_256_bytes_each() {
    let (mut j, mut s) = joiner(1_000_000, 10);
    let n = 100_000;
    for i in 0..n {
        let mut e = imp(&format!("f811bb49-{i:08}"), 1_767_225_600_000 + i, false);
        e.doc_ids = (0..10).map(|d| format!("d{}-{}", i % 500, d * 3)).collect();
        e.query_id = format!("q{:05}", i % 500);
        e.labels = vec![
            ("ranker".into(), "ltr-v2".into()),
            ("arm".into(), "treatment".into()),
        ];
        j.add_impression(&e, None, &mut s, false, 0);
    }
    let per_list = j.open_bytes() / n as usize;
    eprintln!("open lists: {per_list} B per 10-result list (capacities)");
    assert!(per_list <= 256, "{per_list} B per open list");
}

#[test]
fn passed_hands_each_open_list_of_the_completed_buckets_once_by_bucket() {
    let (mut j, mut s) = joiner(2, 10);
    j.keep_unpassed(1000);
    for (rid, ts) in [("r1", 1500), ("r2", 200), ("r3", 2100)] {
        j.add_impression(&imp(rid, ts, false), None, &mut s, false, 0);
    }
    // over the cap of 2: the oldest (r2) is evicted, and is not passed
    assert_eq!(rids(&j.evict_over_cap()), vec!["r2"]);
    // r2 evicted, then opened again in the same slot and bucket: passed once, as the new list
    j.add_impression(&imp("r2", 300, false), None, &mut s, false, 0);
    assert_eq!(j.next_passed(), Some(1));
    let passed: Vec<&str> = j
        .passed(Some(2000))
        .into_iter()
        .map(|slot| j.list(slot).request_id())
        .collect();
    assert_eq!(passed, vec!["r2", "r1"]); // bucket 0 first, then bucket 1000
    assert_eq!(j.next_passed(), Some(2001));
    assert!(j.passed(Some(2000)).is_empty()); // once
    let rest: Vec<&str> = j
        .passed(None)
        .into_iter()
        .map(|slot| j.list(slot).request_id())
        .collect();
    assert_eq!(rest, vec!["r3"]);
    assert_eq!(j.next_passed(), None);
}

#[test]
fn without_keep_unpassed_nothing_is_kept() {
    let (mut j, mut s) = joiner(10, 10);
    j.add_impression(&imp("r1", 1500, false), None, &mut s, false, 0);
    assert_eq!(j.next_passed(), None);
    assert!(j.passed(None).is_empty());
}
