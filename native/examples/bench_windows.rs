//! The windows stage's own cost, without Python: `cargo run --release --example bench_windows`.
//! Lists shaped as the simulator's (two relevance sources, three cutoffs, six segments, a third
//! of them interleaved), folded into a store of two windows and the totals; rows, the codec.

use std::time::Instant;

use streameval_native::scored::{Interleaved, PairOutcome, ScoredList, SourceScore};
use streameval_native::windows::persisted::{decode_bucket, encode_bucket};
use streameval_native::windows::spec::WindowSpec;
use streameval_native::windows::store::{Bucket, WindowStore};
use streameval_native::windows::totals::Totals;

fn lists(n: usize) -> Vec<ScoredList> {
    let ks = vec![1, 3, 10];
    (0..n)
        .map(|i| {
            let x = (i % 97) as f64 / 97.0;
            let source = |rel: &str, coverage| SourceScore {
                relevance: rel.into(),
                outcome: "scored".into(),
                ks: ks.clone(),
                ndcg: vec![
                    Some(x),
                    if i % 5 == 0 { None } else { Some(x / 2.0) },
                    Some(x / 3.0),
                ],
                dcg: vec![x; 3],
                idcg: vec![1.0; 3],
                coverage,
            };
            let arm = ["control", "treatment", "interleaved"][i % 3];
            ScoredList {
                request_id: format!("sim-{i:08}"),
                query_id: format!("q{}", i % 100),
                timestamp: 1_700_000_000_000 + (i as i64) * 100,
                labels: vec![("arm".into(), arm.into())],
                segment: vec![["bm25-v1", "ltr-v2"][i % 2].into(), arm.into()],
                sources: vec![
                    source("implicit", None),
                    source("judged", Some(vec![1.0, 0.9, 0.7])),
                ],
                clicked: i % 3 == 0,
                first_click_rank: if i % 3 == 0 {
                    Some((i % 10) as i64 + 1)
                } else {
                    None
                },
                interacted: i % 2 == 0,
                interleaved: (arm == "interleaved").then(|| Interleaved {
                    doc_ids: vec![],
                    teams: vec![],
                    clicked: vec![],
                    grades: vec![],
                    counted_before: false,
                    outcomes: vec![
                        ("bm25-v1".into(), "ltr-v2".into(), PairOutcome::Win),
                        ("ltr-v2".into(), "bm25-v1".into(), PairOutcome::Loss),
                    ],
                }),
                source: "sim".into(),
            }
        })
        .collect()
}

fn main() {
    let lists = lists(200_000);
    let specs = vec![
        WindowSpec::new(60_000, 10_000).unwrap(),
        WindowSpec::new(300_000, 10_000).unwrap(),
    ];
    let mut best = f64::INFINITY;
    let mut store = WindowStore::new(specs.clone()).unwrap();
    for _ in 0..5 {
        store = WindowStore::new(specs.clone()).unwrap();
        let mut totals = Totals::new();
        let t = Instant::now();
        for scored in &lists {
            store.add(scored);
            totals.count_list(scored);
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "fold (store + totals): {:.3} µs/list",
        best * 1e6 / lists.len() as f64
    );
    let horizon = Some(1_700_000_000_000 + 200_000 * 100);
    let t = Instant::now();
    for _ in 0..100 {
        std::hint::black_box(store.rows(horizon));
    }
    println!(
        "rows of two windows: {:.1} µs",
        t.elapsed().as_secs_f64() * 1e6 / 100.0
    );
    let mut bucket = Bucket::new();
    for scored in &lists[..2_000] {
        bucket.fold(scored);
    }
    let raw = encode_bucket(&bucket).unwrap();
    let t = Instant::now();
    for _ in 0..2_000 {
        std::hint::black_box(encode_bucket(&bucket).unwrap());
    }
    println!(
        "encode ({} B): {:.2} µs",
        raw.len(),
        t.elapsed().as_secs_f64() * 1e6 / 2_000.0
    );
    let t = Instant::now();
    for _ in 0..2_000 {
        std::hint::black_box(decode_bucket(&raw).unwrap());
    }
    println!(
        "decode: {:.2} µs",
        t.elapsed().as_secs_f64() * 1e6 / 2_000.0
    );
}
