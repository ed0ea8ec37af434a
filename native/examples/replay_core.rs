//! The engine's record path and per-list work without Python, over a JSONL file:
//!
//!     python benchmarks/write_sim_jsonl.py /tmp/sim.jsonl --events 100000
//!     cargo run --release --example replay_core -- /tmp/sim.jsonl [repeats]
//!
//! Per repeat, a fresh [`Core`] (the shipped defaults of `EvaluationSettings`, one source)
//! reads every line as `replay` offers them (`Core::offer`: decode, the watermark, the join,
//! evictions, finalization when due); each finalized list is scored (`CoreScoring::finalize`)
//! and folded (`CoreFold::fold`: windows, totals, the judge tracker) as
//! `EngineCore.finalize_folded` does, without the Python `ScoredList` it also builds; each
//! judgment record is mirrored into the judgment table as one judge's grade (the Python
//! `JudgmentRules` decide that in the engine; here a judge's later grade replaces its own
//! earlier one). Then `finish`. Prints records/s and µs per record (CPU time) per repeat, and
//! the median: the Rust alone, to profile (`perf record -g target/release/examples/replay_core FILE 5`, with
//! `CARGO_PROFILE_RELEASE_DEBUG=line-tables-only` for symbols). Not timed: the early judged
//! pass (on in `replay` with the detectors), Python's intake, dead letters and consumers.

use std::collections::HashMap;
use std::time::Instant;

use streameval_native::core_fold::CoreFold;
use streameval_native::core_scoring::{CoreScoring, ListFields, ScoredShell};
use streameval_native::decode::{decode_native, Event};
use streameval_native::join::core::{Core, Note, Settings};
use streameval_native::join::grades::InteractionGrades;
use streameval_native::join::open_list::OpenList;
use streameval_native::judges::tracker::{JudgeTracker, Settings as JudgesSettings};
use streameval_native::judgments::JudgmentStore;
use streameval_native::score::lists::{ListRules, ListScorer};
use streameval_native::score::spec::MetricSpec;
use streameval_native::scored;
use streameval_native::windows::spec::WindowSpec;

const SOURCE: &str = "input";
const KS: [i64; 4] = [1, 3, 5, 10];
const WINDOWS: [(&str, i64); 3] = [("1m", 60_000), ("5m", 300_000), ("1h", 3_600_000)];
const BUCKET_MS: i64 = 10_000;

fn settings() -> Settings {
    Settings {
        attribution_ms: 300_000,
        allowed_lateness_ms: 10_000,
        max_open_lists: 1_000_000,
        max_pending_clicks: 100_000,
        segment_labels: vec!["ranker".into(), "arm".into()],
        max_segments: 100,
        grades: InteractionGrades {
            by_action: [("click", 1.0), ("add_to_cart", 2.0), ("purchase", 3.0)]
                .into_iter()
                .map(|(a, g)| (a.to_owned(), g))
                .collect(),
            dwell_min_ms: 30_000,
            dwell_grade: 2.0,
        },
        max_record_bytes: 1 << 20,
        max_future_skew_ms: 300_000,
        bucket_ms: BUCKET_MS,
    }
}

fn fold() -> CoreFold {
    let specs = WINDOWS
        .iter()
        .map(|&(_, size)| WindowSpec::new(size, BUCKET_MS).expect("a window"))
        .collect();
    let tracker = JudgeTracker::new(JudgesSettings {
        families: vec!["llm:".into()],
        max_families: 8,
        agreement_windows: vec![("1h".into(), 3_600_000)],
        max_age: 2_592_000_000,
        head_queries: 100,
        windows: WINDOWS.iter().map(|&(n, s)| (n.to_owned(), s)).collect(),
        bucket_ms: BUCKET_MS,
        ks: KS.iter().map(|&k| k as usize).collect(),
    });
    let sources = scored::RELEVANCE_SOURCES.map(str::to_owned).to_vec();
    CoreFold::new(specs, BUCKET_MS, false, tracker, sources).expect("the fold")
}

fn shared(relevance: &str, outcome: &str) -> scored::SourceScore {
    scored::SourceScore {
        relevance: relevance.to_owned(),
        outcome: outcome.to_owned(),
        ks: KS.to_vec(),
        ndcg: vec![None; KS.len()],
        dcg: vec![0.0; KS.len()],
        idcg: vec![0.0; KS.len()],
        coverage: None,
    }
}

/// a doc's judges: (judge, timestamp, grade)
type Judges = Vec<(String, i64, f64)>;

struct Engine {
    core: Core,
    scoring: CoreScoring,
    fold: CoreFold,
    /// per (query, doc), its judges' (judge, ts, grade); per query, its version
    judges: HashMap<(String, String), Judges>,
    versions: HashMap<String, i64>,
    /// the finalized list as the fold reads it, refilled per list (the shared sources in it)
    shell: ScoredShell,
    lists: u64,
}

impl Engine {
    fn new() -> Self {
        let spec = MetricSpec::new(&KS, "linear", "log2", 2.0).expect("the spec");
        let rules = ListRules::new("pool", "zero", "skip").expect("the rules");
        Engine {
            core: Core::new(settings()),
            scoring: CoreScoring::new(ListScorer::new(spec, rules), JudgmentStore::new()),
            fold: fold(),
            judges: HashMap::new(),
            versions: HashMap::new(),
            shell: ScoredShell::new(
                KS.to_vec(),
                shared(scored::IMPLICIT, "no_interaction"),
                shared(scored::JUDGED, "unjudged"),
            ),
            lists: 0,
        }
    }

    fn judgment(&mut self, raw: &[u8]) {
        let Ok(Event::Judgment(j)) = decode_native(raw, 1 << 20) else {
            return;
        };
        let judges = self
            .judges
            .entry((j.query_id.clone(), j.doc_id.clone()))
            .or_default();
        judges.retain(|(judge, _, _)| *judge != j.judge);
        judges.push((j.judge, j.timestamp, j.grade));
        let version = self.versions.entry(j.query_id.clone()).or_default();
        *version += 1;
        self.scoring
            .mirror(&j.query_id, &j.doc_id, judges, *version);
        self.fold
            .tracker
            .changed(&self.scoring.judgments, &j.query_id, &j.doc_id);
    }

    fn finalized(&mut self, l: &OpenList) {
        let docs = l.doc_ids();
        let (implicit, judged) = self.scoring.finalize(l, &docs);
        let fields = ListFields {
            query_id: l.query_id(),
            timestamp: l.timestamp,
            segment: self.core.segments.segment(l.segment),
            clicked: l.clicked(),
            first_click_rank: l.first_click_rank().map(i64::from),
            interacted: l.interacted(),
            source: SOURCE,
        };
        let list = self.shell.fill(&fields, implicit, judged);
        self.fold.fold(
            &self.scoring.judgments,
            list,
            &docs,
            l.counted_before(),
            true,
        );
        self.lists += 1;
    }

    fn drain(&mut self) {
        for note in std::mem::take(&mut self.core.notes) {
            match note {
                Note::Finalized(l) => self.finalized(&l),
                Note::Evicted(l) => {
                    self.scoring.forget(l.seq);
                    self.fold.count_evicted();
                }
                Note::Resolved(..) | Note::Expired(_) => {}
            }
        }
    }

    fn run(&mut self, lines: &[&[u8]]) {
        self.core.add_source(SOURCE);
        for raw in lines {
            let answer = self.core.offer(raw, SOURCE, -1, false, true);
            if let streameval_native::join::core::Answer::Judgment = answer {
                self.judgment(raw);
            }
            if !self.core.notes.is_empty() {
                self.drain();
            }
        }
        self.core.set_idle(SOURCE, true);
        self.core.finish();
        self.drain();
    }
}

/// This thread's CPU time in seconds (Linux: /proc/thread-self/schedstat), else None: on a
/// shared machine, the time the repeat ran rather than waited.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: replay_core FILE.jsonl [repeats] (FILE: benchmarks/write_sim_jsonl.py)");
        std::process::exit(2);
    };
    let repeats: usize = args
        .next()
        .map_or(5, |r| r.parse().expect("repeats: a number"));
    let data = std::fs::read(&path).unwrap_or_else(|e| {
        eprintln!("replay_core: cannot read {path}: {e}");
        std::process::exit(1);
    });
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut times = Vec::with_capacity(repeats);
    for i in 0..repeats {
        let mut engine = Engine::new();
        let (t, cpu) = (Instant::now(), cpu_seconds());
        engine.run(&lines);
        let wall = t.elapsed().as_secs_f64();
        // CPU time where the system tells it (the figure to compare), else wall time
        let secs = cpu.zip(cpu_seconds()).map_or(wall, |(a, b)| b - a);
        println!(
            "repeat {i}: {} records, {} lists: {secs:.4} s CPU ({wall:.4} s wall), \
             {:.0} records/s, {:.3} µs/record",
            lines.len(),
            engine.lists,
            lines.len() as f64 / secs,
            secs * 1e6 / lines.len() as f64
        );
        times.push(secs);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "median: {:.4} s CPU, {:.0} records/s, {:.3} µs/record",
        median,
        lines.len() as f64 / median,
        median * 1e6 / lines.len() as f64
    );
}
