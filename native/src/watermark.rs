//! Event-time progress, as `streameval/windows/watermark.py`'s `WatermarkTracker`: the newest
//! event time per source, the idle sources, and the watermark (the minimum over the active
//! sources of their newest time, less the allowed lateness; never backwards). When every source
//! is idle, the newest event anywhere bounds it. A registered source not heard from yet holds it.

use crate::hash::Map;

#[derive(Debug, Clone)]
struct Source {
    /// a source of the watermark (Python: a key of `_newest`)
    registered: bool,
    /// None: registered, nothing read yet
    newest: Option<i64>,
    /// Python: a member of `_idle` (which may name a source not registered)
    idle: bool,
}

#[derive(Debug, Clone)]
pub struct WatermarkTracker {
    lateness_ms: i64,
    index: Map<String, usize>,
    sources: Vec<Source>,
    watermark: Option<i64>,
    /// the sources changed since the watermark was last computed
    dirty: bool,
    /// the smallest newest time of the active sources when last computed (None: unknown)
    floor: Option<i64>,
}

impl WatermarkTracker {
    pub fn new(allowed_lateness_ms: i64) -> Self {
        WatermarkTracker {
            lateness_ms: allowed_lateness_ms,
            index: Map::default(),
            sources: Vec::new(),
            watermark: None,
            dirty: false,
            floor: None,
        }
    }

    fn slot(&mut self, source: &str) -> usize {
        if let Some(&i) = self.index.get(source) {
            return i;
        }
        self.sources.push(Source {
            registered: false,
            newest: None,
            idle: false,
        });
        self.index.insert(source.to_owned(), self.sources.len() - 1);
        self.sources.len() - 1
    }

    /// A source that will be read: until its first event it holds the watermark back.
    pub fn register(&mut self, source: &str) {
        let i = self.slot(source);
        self.sources[i].registered = true;
        self.dirty = true;
    }

    /// An event at `ts_ms` read from `source` (marks it active): the watermark before it and
    /// after it (the intake judges the event against the first and acts on the second).
    pub fn observe(&mut self, source: &str, ts_ms: i64) -> (Option<i64>, Option<i64>) {
        let before = self.watermark();
        let i = self.slot(source);
        let s = &mut self.sources[i];
        let newest = if s.registered { s.newest } else { None };
        if newest.is_none_or(|n| ts_ms > n) {
            s.registered = true;
            s.newest = Some(ts_ms);
            // a source ahead of the slowest one moves no watermark
            if newest.is_none() || self.floor.is_none() || newest <= self.floor {
                self.dirty = true;
            }
        }
        if s.idle {
            s.idle = false;
            self.dirty = true;
        }
        (before, self.watermark())
    }

    pub fn set_idle(&mut self, source: &str, idle: bool) {
        let i = self.slot(source);
        self.sources[i].idle = idle;
        self.dirty = true;
    }

    /// The source is no longer read here (a revoked partition).
    pub fn forget(&mut self, source: &str) {
        if let Some(&i) = self.index.get(source) {
            self.sources[i] = Source {
                registered: false,
                newest: None,
                idle: false,
            };
        }
        self.dirty = true;
    }

    /// Every source read here is idle: nothing read here can move the watermark until one of
    /// them speaks again (false with no source at all).
    pub fn all_idle(&self) -> bool {
        let mut registered = self.sources.iter().filter(|s| s.registered).peekable();
        registered.peek().is_some() && registered.all(|s| s.idle)
    }

    /// The current watermark in epoch ms, or None before any event.
    pub fn watermark(&mut self) -> Option<i64> {
        if self.dirty {
            self.recompute()
        } else {
            self.watermark
        }
    }

    fn recompute(&mut self) -> Option<i64> {
        self.dirty = false;
        self.floor = None;
        let mut floor: Option<i64> = None;
        for s in self.sources.iter().filter(|s| s.registered && !s.idle) {
            let Some(ts) = s.newest else {
                return self.watermark; // a source not heard from yet may hold anything
            };
            if floor.is_none_or(|f| ts < f) {
                floor = Some(ts);
            }
        }
        let floor = match floor {
            // every source idle: the newest event anywhere bounds what can still come in order
            None => match self.newest() {
                None => return self.watermark,
                Some(newest) => newest,
            },
            Some(f) => {
                self.floor = Some(f);
                f
            }
        };
        let candidate = floor - self.lateness_ms;
        if self.watermark.is_none_or(|w| candidate > w) {
            self.watermark = Some(candidate);
        }
        self.watermark
    }

    /// Move the watermark forward to `watermark_ms` (end of input; never backwards).
    pub fn advance_to(&mut self, watermark_ms: i64) {
        if self.watermark.is_none_or(|w| watermark_ms > w) {
            self.watermark = Some(watermark_ms);
        }
    }

    /// The newest event time seen on any source.
    pub fn newest(&self) -> Option<i64> {
        self.sources
            .iter()
            .filter(|s| s.registered)
            .filter_map(|s| s.newest)
            .max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    enum Step {
        Register(&'static str),
        Observe(&'static str, i64, Option<i64>, Option<i64>),
        Idle(&'static str, bool),
        Advance(i64),
        Forget(&'static str),
        Watermark(Option<i64>),
        AllIdle(bool),
    }
    use Step::*;

    fn run(lateness: i64, steps: &[Step]) {
        let mut t = WatermarkTracker::new(lateness);
        for (n, step) in steps.iter().enumerate() {
            match *step {
                Register(s) => t.register(s),
                Observe(s, ts, before, after) => {
                    assert_eq!(t.observe(s, ts), (before, after), "step {n}")
                }
                Idle(s, idle) => t.set_idle(s, idle),
                Advance(w) => t.advance_to(w),
                Forget(s) => t.forget(s),
                Watermark(w) => assert_eq!(t.watermark(), w, "step {n}"),
                AllIdle(b) => assert_eq!(t.all_idle(), b, "step {n}"),
            }
        }
    }

    #[test]
    fn one_source_less_lateness_never_backwards() {
        run(
            10,
            &[
                Watermark(None),
                AllIdle(false),
                Observe("a", 100, None, Some(90)),
                Observe("a", 50, Some(90), Some(90)),
                Observe("a", 200, Some(90), Some(190)),
            ],
        );
    }

    #[test]
    fn the_slowest_source_holds_it_and_a_registered_one_until_it_speaks() {
        run(
            0,
            &[
                Register("b"),
                Observe("a", 100, None, None),
                Observe("b", 40, None, Some(40)),
                Observe("a", 300, Some(40), Some(40)),
                Observe("b", 500, Some(40), Some(300)),
            ],
        );
    }

    #[test]
    fn idle_sources_do_not_hold_it_and_all_idle_takes_the_newest() {
        run(
            5,
            &[
                Observe("a", 100, None, Some(95)),
                Observe("b", 300, Some(95), Some(95)),
                Idle("a", true),
                Watermark(Some(295)),
                AllIdle(false),
                Idle("b", true),
                AllIdle(true),
                Watermark(Some(295)),
                // a source idle before it was ever read is not one of the watermark's
                Idle("c", true),
                AllIdle(true),
                // speaking clears idleness; an older time does not move it back
                Observe("a", 150, Some(295), Some(295)),
                AllIdle(false),
                Observe("a", 400, Some(295), Some(395)),
                Advance(1000),
                Watermark(Some(1000)),
                Advance(10),
                Watermark(Some(1000)),
            ],
        );
    }

    #[test]
    fn a_forgotten_source_holds_nothing_back_until_it_speaks_again() {
        run(
            0,
            &[
                Observe("a", 100, None, Some(100)),
                Observe("b", 500, Some(100), Some(100)),
                Idle("a", true),
                Forget("a"),
                Watermark(Some(500)),
                Observe("b", 600, Some(500), Some(600)),
                // back with older data: it holds the watermark, which does not move back
                Observe("a", 200, Some(600), Some(600)),
                Observe("b", 900, Some(600), Some(600)),
                Observe("a", 700, Some(600), Some(700)),
            ],
        );
    }

    #[test]
    fn a_registered_idle_source_before_it_speaks() {
        run(
            0,
            &[
                Register("a"),
                Register("b"),
                Idle("b", true),
                Observe("a", 10, None, Some(10)),
                Idle("a", true),
                Watermark(Some(10)),
                AllIdle(true),
                Idle("b", false),
                // b active and silent: holds the watermark where it was
                Observe("a", 50, Some(10), Some(10)),
            ],
        );
    }
}
