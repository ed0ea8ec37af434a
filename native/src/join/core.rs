//! The join's driver, wired as `Pipeline.offer` and `engine/progress.py` wire the Python
//! components: decode, the future-skew check, the watermark (each event judged against the
//! watermark before it), the joiner, evictions over the cap, and finalization and expiry once
//! the watermark reaches the next due point. What the pipeline does beside the join (judgments,
//! scoring, windows, recovery offsets, `on_seconds`, the early judged pass, the trust signals)
//! is not here: a judgment is answered as such, with its fields ([`Step::judgment`]) for the
//! caller that applies it.

use crate::decode::{decode_native, Event, Invalid, Judgment};
use crate::hash::Map;
use crate::join::grades::InteractionGrades;
use crate::join::joiner::Joiner;
use crate::join::key::dedup_key;
use crate::join::open_list::OpenList;
use crate::join::segments::SegmentCapper;
use crate::join::Outcome;
use crate::mapped::MappedDecoder;
use crate::ubi;
use crate::watermark::WatermarkTracker;

/// The evaluation settings the join reads (`streameval.config.EvaluationSettings`).
#[derive(Debug, Clone)]
pub struct Settings {
    pub attribution_ms: i64,
    pub allowed_lateness_ms: i64,
    pub max_open_lists: usize,
    pub max_pending_clicks: usize,
    pub segment_labels: Vec<String>,
    pub max_segments: usize,
    pub grades: InteractionGrades,
    pub max_record_bytes: usize,
    pub max_future_skew_ms: i64,
    /// the windows' bucket: where `finish` leaves the watermark
    pub bucket_ms: i64,
}

/// What became of one record.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Impression(Outcome),
    Click(Outcome),
    Judgment,
    Invalid {
        reason: &'static str,
        detail: String,
    },
}

/// The format a source is decoded in (`[input]`, DESIGN §11); Avro is not decoded here.
#[derive(Debug)]
pub enum Format {
    Native,
    /// a native event, or else UBI (`format = "auto"`)
    Auto,
    Ubi,
    Mapped(Box<MappedDecoder>),
}

impl Format {
    /// The event, or why the record is invalid and the field (a JSON Pointer) of a mapped
    /// record that did not map (else "").
    fn decode(&self, raw: &[u8], max_bytes: usize) -> Result<Event, (Invalid, String)> {
        let plain = |r: Result<Event, Invalid>| r.map_err(|i| (i, String::new()));
        match self {
            Format::Native => plain(decode_native(raw, max_bytes)),
            Format::Auto => plain(ubi::decode(raw, max_bytes)),
            Format::Ubi => plain(ubi::decode_ubi(raw, max_bytes)),
            Format::Mapped(m) => m.decode(raw),
        }
    }
}

/// One record's path through the join without finalization (`NativePipeline.offer`): its
/// answer, its event time (None: invalid), the watermark the tracker read after it, and the
/// waiting clicks an accepted impression resolved; for an invalid mapped record, its field;
/// for a judgment, the judgment (the caller applies it: docs/native.md "Judgments applied in
/// the core").
#[derive(Debug)]
pub struct Step {
    pub answer: Answer,
    pub field: String,
    pub ts: Option<i64>,
    pub watermark: Option<i64>,
    pub resolved: Vec<(Outcome, bool)>,
    pub judgment: Option<Box<Judgment>>,
}

/// What the join handed out, in order: lists finalized or evicted, waiting clicks resolved by
/// their impression (their outcome, and whether counted when read), and waiting clicks expired
/// (how many of them had been counted when read; noted when not zero).
#[derive(Debug)]
pub enum Note {
    Finalized(OpenList),
    Evicted(OpenList),
    Resolved(Outcome, bool),
    Expired(u64),
}

#[derive(Debug)]
pub struct Core {
    settings: Settings,
    pub tracker: WatermarkTracker,
    /// per source, its format (else native)
    formats: Map<String, Format>,
    pub joiner: Joiner,
    pub segments: SegmentCapper,
    sources: Vec<String>,
    source_ids: Map<String, u32>,
    /// the watermark at which the joiner next has work (None: never); `Pipeline._due`
    due: Option<i64>,
    finished: bool,
    pub notes: Vec<Note>,
}

impl Core {
    pub fn new(settings: Settings) -> Self {
        let joiner = Joiner::new(
            settings.attribution_ms,
            settings.grades.clone(),
            settings.max_open_lists,
            settings.max_pending_clicks,
        );
        Core {
            tracker: WatermarkTracker::new(settings.allowed_lateness_ms),
            formats: Map::default(),
            segments: SegmentCapper::new(settings.segment_labels.clone(), settings.max_segments),
            joiner,
            settings,
            sources: Vec::new(),
            source_ids: Map::default(),
            due: None,
            finished: false,
            notes: Vec::new(),
        }
    }

    fn source_id(&mut self, source: &str) -> u32 {
        if let Some(&id) = self.source_ids.get(source) {
            return id;
        }
        let id = self.sources.len() as u32;
        self.sources.push(source.to_owned());
        self.source_ids.insert(source.to_owned(), id);
        id
    }

    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    pub fn source(&self, id: u32) -> &str {
        &self.sources[id as usize]
    }

    fn lower_due(&mut self, at: i64) {
        if self.due.is_none_or(|d| at < d) {
            self.due = Some(at);
        }
    }

    /// A new stream (`Pipeline.reset`: a rebalance's re-read): the watermark, the joiner and
    /// the due point start over; what outlives a rebuild in the Python engine stays: the
    /// segments seen (the cap counts them since start), the sources' formats and names.
    pub fn restart(&mut self) {
        let s = &self.settings;
        let mut joiner = Joiner::new(
            s.attribution_ms,
            s.grades.clone(),
            s.max_open_lists,
            s.max_pending_clicks,
        );
        if let Some(pb) = self.joiner.pass_bucket() {
            joiner.keep_unpassed(pb);
        }
        self.joiner = joiner;
        self.tracker = WatermarkTracker::new(s.allowed_lateness_ms);
        self.due = None;
        self.finished = false;
        self.notes.clear();
    }

    /// Decode the records of `source` in `format` (else native).
    pub fn set_format(&mut self, source: &str, format: Format) {
        self.formats.insert(source.to_owned(), format);
    }

    /// One record read from `source` (`record_ms`: its Kafka timestamp, or ≤ 0).
    /// `counted_before`: an impression re-read that a previous run counted (its list is then
    /// marked so); `counted`: a click counted in the intake when read.
    pub fn offer(
        &mut self,
        raw: &[u8],
        source: &str,
        record_ms: i64,
        counted_before: bool,
        counted: bool,
    ) -> Answer {
        let horizon = counted_before.then_some(i64::MAX);
        let step = self.step(raw, source, record_ms, horizon, counted);
        self.notes.extend(
            step.resolved
                .into_iter()
                .map(|(outcome, counted)| Note::Resolved(outcome, counted)),
        );
        if let Answer::Impression(Outcome::Accepted) = step.answer {
            let ts = step.ts.expect("an impression's time");
            self.lower_due(ts + self.settings.attribution_ms);
            let evicted = self.joiner.evict_over_cap();
            self.notes.extend(evicted.into_iter().map(Note::Evicted));
        }
        if let Answer::Click(Outcome::Pending) = step.answer {
            self.lower_due(step.ts.expect("a click's time") + 1); // expires once passed
        }
        if let Some(wm) = step.watermark {
            if self.due.is_some_and(|d| wm >= d) {
                self.advance_to(wm);
            }
        }
        step.answer
    }

    /// Decode, the future-skew check, the watermark and the join of one record, and nothing
    /// after (no eviction, no finalization: the caller decides, as `Pipeline.offer` does).
    /// `horizon_before`: the horizon a previous run counted lists through, for this source
    /// (an impression at or before it is `counted_before`).
    pub fn step(
        &mut self,
        raw: &[u8],
        source: &str,
        record_ms: i64,
        horizon_before: Option<i64>,
        counted: bool,
    ) -> Step {
        let max_bytes = self.settings.max_record_bytes;
        let decoded = match self.formats.get(source) {
            Some(format) => format.decode(raw, max_bytes),
            None => decode_native(raw, max_bytes).map_err(|i| (i, String::new())),
        };
        let invalid = |reason, detail, field| Step {
            answer: Answer::Invalid { reason, detail },
            field,
            ts: None,
            watermark: None,
            resolved: Vec::new(),
            judgment: None,
        };
        let event = match decoded {
            Err((e, field)) => return invalid(e.reason, e.detail, field),
            Ok(event) => event,
        };
        let ts = match &event {
            Event::Impression(e) => e.timestamp,
            Event::Click(e) => e.timestamp,
            Event::Judgment(e) => e.timestamp,
        };
        if record_ms > 0 {
            let ahead = ts - record_ms;
            let skew = self.settings.max_future_skew_ms;
            if ahead > skew {
                let detail = format!(
                    "event time {ahead} ms after its record's timestamp \
                     (max_future_skew {skew} ms)"
                );
                return invalid("future_timestamp", detail, String::new());
            }
        }
        let mut step = Step {
            answer: Answer::Judgment,
            field: String::new(),
            ts: Some(ts),
            watermark: None,
            resolved: Vec::new(),
            judgment: None,
        };
        if let Event::Judgment(j) = event {
            step.judgment = Some(Box::new(j));
            return step;
        }
        let (before, watermark) = self.tracker.observe(source, ts);
        step.watermark = watermark;
        step.answer = match &event {
            Event::Impression(e) => {
                let source = self.source_id(source);
                let counted_before = horizon_before.is_some_and(|h| ts <= h);
                let (outcome, resolved) = self.joiner.add_impression(
                    e,
                    before,
                    &mut self.segments,
                    counted_before,
                    source,
                );
                step.resolved = resolved;
                Answer::Impression(outcome)
            }
            Event::Click(e) => {
                let key = dedup_key(e.event_id.as_deref(), raw);
                Answer::Click(self.joiner.add_click(e, &key, before, counted))
            }
            Event::Judgment(_) => Answer::Judgment,
        };
        step
    }

    /// `Pipeline._advance` for the join: finalize, expire, and the next due point.
    fn advance_to(&mut self, watermark: i64) {
        let finalized = self.joiner.finalize(watermark);
        self.notes
            .extend(finalized.into_iter().map(Note::Finalized));
        let expired = self.joiner.expire_pending(Some(watermark));
        if expired > 0 {
            self.notes.push(Note::Expired(expired));
        }
        self.due = self.joiner.next_due();
    }

    /// Declare a source before reading it (it holds the watermark back until it speaks).
    pub fn add_source(&mut self, source: &str) {
        self.tracker.register(source);
    }

    /// The source is no longer read here (a revoked partition): it holds nothing back.
    pub fn forget_source(&mut self, source: &str) {
        self.tracker.forget(source);
    }

    /// A source caught up with its end (or exhausted) no longer holds the watermark back.
    pub fn set_idle(&mut self, source: &str, idle: bool) {
        self.tracker.set_idle(source, idle);
        self.advance();
    }

    /// Finalize every list the watermark has closed; expire waiting clicks.
    pub fn advance(&mut self) {
        if let Some(wm) = self.tracker.watermark() {
            self.advance_to(wm);
        }
    }

    /// Event time read elsewhere, taken when every source here is idle (`EventTime.follow`).
    pub fn follow(&mut self, watermark_ms: i64) -> bool {
        if !self.tracker.all_idle() {
            return false;
        }
        if self.tracker.watermark().is_some_and(|w| w >= watermark_ms) {
            return false;
        }
        self.tracker.advance_to(watermark_ms);
        self.advance();
        true
    }

    /// End of input: every open list finalized, every waiting click unmatched, the watermark
    /// past the last event's bucket.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let bucket = self.settings.bucket_ms;
        let end = self
            .tracker
            .newest()
            .map(|n| n - n.rem_euclid(bucket) + bucket);
        let lists = self.joiner.finalize_all();
        self.notes.extend(lists.into_iter().map(Note::Finalized));
        let expired = self.joiner.expire_pending(None);
        if expired > 0 {
            self.notes.push(Note::Expired(expired));
        }
        if let Some(end) = end {
            self.tracker.advance_to(end + self.settings.attribution_ms);
        }
    }

    pub fn watermark(&mut self) -> Option<i64> {
        self.tracker.watermark()
    }
}

#[cfg(test)]
#[path = "core_tests.rs"]
mod tests;
