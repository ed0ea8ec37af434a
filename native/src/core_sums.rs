//! The detectors' per-query sums owned by the native engine's core (docs/native.md "Detector
//! sums in the core"): one [`QuerySums`] per relevance source a consumer sums (`FedBySums` in
//! `streameval/engine/consumers.py`: the regression detectors' `Stash`es), fed by the core
//! itself when it folds a finalized list (its implicit NDCG@k, and its judged one when the early
//! pass did not take it) and when the early judged pass takes a list (its judged NDCG@k), in
//! the order the Python calls (`Detectors.add_judged`, then `Detectors.add`) would make them,
//! so that the sums are the Python stash's bit for bit. Beside them, [`LISTS`]: every finalized
//! list counted per bucket and segment (the sample-ratio counter's `SrmCounter.add`, which maps
//! segments to arms when it takes a bucket). The segments are interned here, in the order first
//! seen (the sums key them by that number).
//!
//! Per source partition (docs/native.md "The daemon's collector fed by sums"): a consumer that
//! keeps its sums per source (the daemon's `PartitionCollector`) has them here as one [`Summed`]
//! per source, made at the source's first list (or when Python opens it), in that order; a
//! source's judged floor (a restored source's judged buckets already in the state topic) keeps
//! the judged scores of its lists before it out of the sums, as `JudgedEarly` does.

use crate::hash::Map;

use crate::query_sums::QuerySums;
use crate::scored::{IMPLICIT, JUDGED};

/// The name of the lists counted per bucket and segment: a [`QuerySums`] of one value, 0.0,
/// under the query [`ANY_QUERY`] (its count is the lists').
pub const LISTS: &str = "lists";
pub const ANY_QUERY: &str = "";

/// A segment's label values.
pub type Labels = Box<[Box<str>]>;

/// The sums of one stream of lists (all of them, or one source partition's): per relevance
/// source summed, its [`QuerySums`].
#[derive(Debug, Default, Clone)]
pub struct Summed {
    pub implicit: Option<QuerySums>,
    pub judged: Option<QuerySums>,
    pub lists: Option<QuerySums>,
}

impl Summed {
    /// The sums of `relevance` (None: not summed here).
    pub fn of(&mut self, relevance: &str) -> Option<&mut QuerySums> {
        match relevance {
            IMPLICIT => self.implicit.as_mut(),
            JUDGED => self.judged.as_mut(),
            LISTS => self.lists.as_mut(),
            _ => None,
        }
    }

    fn watch(&mut self, relevance: &str, bucket_ms: i64, positions: Vec<usize>) -> bool {
        let sums = Some(QuerySums::new(bucket_ms, positions));
        match relevance {
            IMPLICIT => self.implicit = sums,
            JUDGED => self.judged = sums,
            LISTS => self.lists = sums,
            _ => return false,
        }
        true
    }

    fn finalized(
        &mut self,
        ts: i64,
        id: u32,
        query_id: &str,
        implicit: &[Option<f64>],
        judged: Option<&[Option<f64>]>,
    ) {
        if let (Some(sums), Some(ndcg)) = (self.judged.as_mut(), judged) {
            sums.add(ts, id, query_id, ndcg);
        }
        if let Some(sums) = self.implicit.as_mut() {
            sums.add(ts, id, query_id, implicit);
        }
        if let Some(lists) = self.lists.as_mut() {
            lists.add(ts, id, ANY_QUERY, &[Some(0.0)]);
        }
    }
}

/// The sums kept per source partition: an empty [`Summed`] watching what each source sums,
/// and each source's, in the order made.
#[derive(Debug, Default)]
pub struct PerSource {
    template: Summed,
    sources: Map<Box<str>, Summed>,
    order: Vec<Box<str>>,
    /// per restored source: the bucket start before which its judged scores are not summed
    floors: Map<Box<str>, i64>,
    /// the highest floor plus a bucket: an early pass with a cut past it is not floored
    /// (`JudgedEarly.pass_judged`: `cut <= _floor_max + bucket`)
    floored_until: Option<i64>,
    /// the early pass under way is floored (`passing`)
    floored: bool,
}

impl PerSource {
    /// The sums of `source`, made (the template's) at its first use.
    pub fn of(&mut self, source: &str) -> &mut Summed {
        if !self.sources.contains_key(source) {
            self.order.push(source.into());
            self.sources.insert(source.into(), self.template.clone());
        }
        self.sources.get_mut(source).expect("made above")
    }

    /// The sources summed, in the order made.
    pub fn sources(&self) -> &[Box<str>] {
        &self.order
    }

    /// `source`'s sums dropped (it is no longer read here).
    pub fn forget(&mut self, source: &str) {
        self.sources.remove(source);
        self.order.retain(|s| &**s != source);
    }

    /// The judged scores of `source`'s lists before `floor` are not summed (None: all are).
    /// (As `JudgedEarly.note_floor`: a floor is only ever set, the highest one kept.)
    pub fn set_floor(&mut self, source: &str, floor: i64, bucket_ms: i64) {
        self.floors.insert(source.into(), floor);
        let until = floor + bucket_ms;
        self.floored_until = Some(self.floored_until.map_or(until, |u| u.max(until)));
    }

    /// Every floor dropped (a new stream: `JudgedEarly.start_stream`).
    pub fn clear_floors(&mut self) {
        self.floors.clear();
        self.floored_until = None;
        self.floored = false;
    }

    /// An early judged pass up to `cut` begins (None: the end of input, never floored): as
    /// `JudgedEarly.pass_judged`, the floors apply while the cut is at most the highest floor
    /// plus a bucket.
    pub fn passing(&mut self, cut: Option<i64>) {
        self.floored = matches!((cut, self.floored_until), (Some(c), Some(u)) if c <= u);
    }

    /// A finalized list's judged score not handed: `JudgedEarly.below_floor`.
    fn below_floor(&self, source: &str, ts: i64) -> bool {
        !self.floors.is_empty() && self.floors.get(source).is_some_and(|&floor| ts < floor)
    }
}

#[derive(Debug, Default)]
pub struct CoreSums {
    pub all: Summed,
    /// the sums kept per source partition (None: none are)
    pub per_source: Option<PerSource>,
    segments: Vec<Labels>,
    ids: Map<Labels, u32>,
    /// the core adds each list itself and builds no `ScoredList` (nobody else reads one: the
    /// engine's predicate, `CoreFolds._sums_inline`)
    pub inline: bool,
}

impl CoreSums {
    /// The sums of `relevance` (None: not summed here), of all lists or (`source`) of one
    /// source partition's (made at its first use).
    pub fn of(&mut self, relevance: &str, source: Option<&str>) -> Option<&mut QuerySums> {
        match source {
            None => self.all.of(relevance),
            Some(source) => self.per_source.as_mut()?.of(source).of(relevance),
        }
    }

    /// Sum `relevance` here: its buckets of `bucket_ms`, the watched cutoffs at `positions`;
    /// `per_source`: one [`QuerySums`] per source partition (made at its first list).
    pub fn watch(
        &mut self,
        relevance: &str,
        bucket_ms: i64,
        positions: Vec<usize>,
        per_source: bool,
    ) -> bool {
        if !per_source {
            return self.all.watch(relevance, bucket_ms, positions);
        }
        let mut template = self
            .per_source
            .as_ref()
            .map(|p| p.template.clone())
            .unwrap_or_default();
        if !template.watch(relevance, bucket_ms, positions) {
            return false;
        }
        let per = self.per_source.get_or_insert_with(PerSource::default);
        for summed in per.sources.values_mut() {
            *summed = template.clone(); // (watched before any list: none is open)
        }
        per.template = template;
        true
    }

    /// The number the sums key segment `labels` by (given in first-seen order).
    pub fn segment_id<S: AsRef<str>>(&mut self, labels: &[S]) -> u32 {
        let key: Labels = labels.iter().map(|s| s.as_ref().into()).collect();
        if let Some(&id) = self.ids.get(&key) {
            return id;
        }
        let id = u32::try_from(self.segments.len()).expect("fewer than 2^32 segments");
        self.segments.push(key.clone());
        self.ids.insert(key, id);
        id
    }

    /// The labels of segment `id`.
    pub fn segment(&self, id: u32) -> &[Box<str>] {
        &self.segments[id as usize]
    }

    /// A finalized list of `source` folded in the core: first its judged NDCG (`judged`: when
    /// the early pass did not take it, `NativePipeline._fold`'s `hand_scored`; not below the
    /// source's judged floor), then its implicit one (`Detectors.add`), then the list counted
    /// (`SrmCounter.add`).
    pub fn finalized<S: AsRef<str>>(
        &mut self,
        ts: i64,
        segment: &[S],
        source: &str,
        query_id: &str,
        implicit: &[Option<f64>],
        judged: Option<&[Option<f64>]>,
    ) {
        let all = self.all.implicit.is_some()
            || self.all.lists.is_some()
            || (judged.is_some() && self.all.judged.is_some());
        if !all && self.per_source.is_none() {
            return;
        }
        let id = self.segment_id(segment);
        if all {
            self.all.finalized(ts, id, query_id, implicit, judged);
        }
        if let Some(per) = self.per_source.as_mut() {
            let judged = judged.filter(|_| !per.below_floor(source, ts));
            let t = &per.template;
            // (a source's sums are made only by a list that adds to them, as in Python)
            if t.implicit.is_some() || t.lists.is_some() || (judged.is_some() && t.judged.is_some())
            {
                per.of(source).finalized(ts, id, query_id, implicit, judged);
            }
        }
    }

    /// A list of `source` the early judged pass took: its judged NDCG (`Detectors.add_judged`;
    /// not below the source's judged floor).
    pub fn passed<S: AsRef<str>>(
        &mut self,
        ts: i64,
        segment: &[S],
        source: &str,
        query_id: &str,
        judged: &[Option<f64>],
    ) {
        let per = self.per_source.as_ref().is_some_and(|p| {
            p.template.judged.is_some() && !(p.floored && p.below_floor(source, ts))
        });
        if self.all.judged.is_none() && !per {
            return;
        }
        let id = self.segment_id(segment);
        if let Some(sums) = self.all.judged.as_mut() {
            sums.add(ts, id, query_id, judged);
        }
        if per {
            let per = self.per_source.as_mut().expect("per source");
            if let Some(sums) = per.of(source).judged.as_mut() {
                sums.add(ts, id, query_id, judged);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: i64 = 60_000;

    fn sums() -> CoreSums {
        let mut s = CoreSums::default();
        assert!(s.watch(IMPLICIT, B, vec![0], false));
        assert!(s.watch(JUDGED, B, vec![0], false));
        assert!(!s.watch("implicit_debiased", B, vec![0], false));
        assert!(s.watch(LISTS, B, vec![0], false));
        s
    }

    #[test]
    fn a_finalized_list_adds_its_judged_score_only_when_not_passed() {
        let mut s = sums();
        s.passed(1, &["web"], "p0", "q", &[Some(0.25)]);
        s.finalized(2, &["web"], "p0", "q", &[Some(0.5)], None);
        s.finalized(3, &["web"], "p0", "q", &[Some(1.0)], Some(&[Some(0.75)]));
        let judged = s.all.judged.as_mut().unwrap().take(B);
        let implicit = s.all.implicit.as_mut().unwrap().take(B);
        // judged: 0.25 (passed), then 0.75 (finalized unpassed); implicit: 0.5 then 1.0
        assert_eq!(judged[0].1[&0][0]["q"], (2, 1.0, 0.0625 + 0.5625));
        assert_eq!(implicit[0].1[&0][0]["q"], (2, 1.5, 0.25 + 1.0));
        // two lists finalized (the passed one is not counted until finalized)
        let lists = s.all.lists.as_mut().unwrap().take(B);
        assert_eq!(lists[0].1[&0][0][ANY_QUERY], (2, 0.0, 0.0));
    }

    #[test]
    fn segments_are_numbered_in_first_seen_order() {
        let mut s = sums();
        s.finalized(1, &["b"], "p0", "q", &[Some(0.5)], None);
        s.finalized(1, &["a"], "p0", "q", &[Some(0.5)], None);
        assert_eq!(s.segment_id(&["b"]), 0);
        assert_eq!(&*s.segment(1)[0], "a");
        let taken = s.all.implicit.as_mut().unwrap().take(B);
        assert!(taken[0].1.keys().copied().eq([0, 1]));
    }

    #[test]
    fn nothing_is_summed_for_a_source_not_watched() {
        let mut s = CoreSums::default();
        s.watch(JUDGED, B, vec![0], false);
        s.finalized(1, &["a"], "p0", "q", &[Some(0.5)], None);
        assert!(s.of(IMPLICIT, None).is_none());
        assert!(s.segments.is_empty()); // (nothing added: no segment interned)
        assert_eq!(s.of(JUDGED, None).unwrap().open_buckets(), 0);
    }

    fn per_source() -> CoreSums {
        let mut s = CoreSums::default();
        for r in [IMPLICIT, JUDGED, LISTS] {
            assert!(s.watch(r, B, vec![0], true));
        }
        assert!(!s.watch("implicit_debiased", B, vec![0], true));
        s
    }

    #[test]
    fn per_source_sums_are_made_at_a_first_list_in_that_order() {
        let mut s = per_source();
        s.finalized(1, &["web"], "p1", "q", &[Some(0.5)], None);
        s.passed(2, &["web"], "p0", "q", &[Some(0.25)]);
        s.finalized(3, &["web"], "p1", "q", &[Some(1.0)], Some(&[Some(0.75)]));
        let per = s.per_source.as_mut().unwrap();
        assert!(per.sources().iter().map(|x| &**x).eq(["p1", "p0"]));
        let p1 = per.of("p1").implicit.as_mut().unwrap().take(B);
        assert_eq!(p1[0].1[&0][0]["q"], (2, 1.5, 0.25 + 1.0));
        let p0 = per.of("p0").judged.as_mut().unwrap().take(B);
        assert_eq!(p0[0].1[&0][0]["q"], (1, 0.25, 0.0625));
        assert_eq!(per.of("p0").lists.as_ref().unwrap().open_buckets(), 0);
        assert!(s.all.implicit.is_none()); // (nothing summed over all sources)
    }

    #[test]
    fn a_judged_floor_keeps_a_sources_earlier_judged_scores_out() {
        let mut s = per_source();
        let per = s.per_source.as_mut().unwrap();
        per.set_floor("p0", B, B);
        per.passing(Some(B));
        s.passed(1, &["web"], "p0", "q", &[Some(0.25)]); // below p0's floor
        s.passed(1, &["web"], "p1", "q", &[Some(0.25)]); // p1 has none
        s.finalized(2, &["web"], "p0", "q", &[Some(0.5)], Some(&[Some(0.75)]));
        s.passed(B, &["web"], "p0", "q", &[Some(1.0)]); // at the floor: summed
        let per = s.per_source.as_mut().unwrap();
        assert_eq!(per.of("p0").judged.as_ref().unwrap().open_buckets(), 1); // only bucket B
        assert_eq!(per.of("p1").judged.as_ref().unwrap().open_buckets(), 1);
        // the implicit score and the count are not floored
        assert_eq!(per.of("p0").implicit.as_ref().unwrap().open_buckets(), 1);
        // a pass past the highest floor plus a bucket, or the end of input, is not floored
        for cut in [Some(2 * B + 1), None] {
            let per = s.per_source.as_mut().unwrap();
            per.passing(cut);
            s.passed(1, &["web"], "p0", "q", &[Some(0.25)]);
        }
        let per = s.per_source.as_mut().unwrap();
        assert_eq!(per.of("p0").judged.as_ref().unwrap().open_buckets(), 2);
        // a finalized list below its floor keeps its judged score out, whatever the pass
        let before = per.of("p0").judged.as_mut().unwrap().take(B);
        assert_eq!(before[0].1[&0][0]["q"].0, 2); // (the two unfloored passes only)
        per.clear_floors();
        per.passing(Some(B));
        assert!(!per.below_floor("p0", 1));
    }

    #[test]
    fn a_forgotten_source_is_made_again_empty_and_last() {
        let mut s = per_source();
        s.finalized(1, &["web"], "p0", "q", &[Some(0.5)], None);
        s.finalized(1, &["web"], "p1", "q", &[Some(0.5)], None);
        let per = s.per_source.as_mut().unwrap();
        per.forget("p0");
        assert!(per.sources().iter().map(|x| &**x).eq(["p1"]));
        assert_eq!(per.of("p0").implicit.as_ref().unwrap().open_buckets(), 0);
        assert!(per.sources().iter().map(|x| &**x).eq(["p1", "p0"]));
    }

    #[test]
    fn close_before_drops_the_buckets_before_and_never_moves_back() {
        let mut q = QuerySums::new(B, vec![0]);
        q.add(1, 0, "q", &[Some(0.5)]);
        q.add(2 * B, 0, "q", &[Some(0.5)]);
        q.close_before(B);
        assert_eq!((q.closed(), q.open_buckets()), (Some(B), 1));
        q.close_before(0);
        assert_eq!(q.closed(), Some(B));
        q.add(1, 0, "q", &[Some(0.5)]);
        assert_eq!(q.ignored(), 1);
    }
}
