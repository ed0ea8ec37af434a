//! Intake accounting, where every record read went by outcome (`engine/intake.py`,
//! `IntakeCounters`, DESIGN §5): read == accepted + invalid + duplicate + late + unmatched
//! (+ pending).

use super::ordered::OrderedMap;

/// Where one record ended up (`values.Outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Accepted,
    Invalid,
    Duplicate,
    Late,
    Unmatched,
    Pending,
}

impl Outcome {
    /// The outcome of its Python value (`"accepted"`, ...).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "accepted" => Self::Accepted,
            "invalid" => Self::Invalid,
            "duplicate" => Self::Duplicate,
            "late" => Self::Late,
            "unmatched" => Self::Unmatched,
            "pending" => Self::Pending,
            _ => return None,
        })
    }
}

/// Counts per event type (or invalid reason), in the order first counted (a `Counter`).
pub type Counts = Vec<(String, u64)>;

/// The counters as `snapshot.Intake` holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct Intake {
    pub records_read: u64,
    pub accepted: Counts,
    pub invalid: Counts,
    pub duplicate: Counts,
    pub late: Counts,
    pub unmatched_clicks: i64,
    pub pending_clicks: i64,
}

#[derive(Clone, Debug, Default)]
pub struct IntakeCounters {
    read: u64,
    accepted: OrderedMap<String, u64>,
    invalid: OrderedMap<String, u64>,
    duplicate: OrderedMap<String, u64>,
    late: OrderedMap<String, u64>,
    unmatched: i64,
    pending: i64,
}

fn bump(counter: &mut OrderedMap<String, u64>, key: &str) {
    *counter.entry_or_insert_with(key, || 0) += 1;
}

fn counts(counter: &OrderedMap<String, u64>) -> Counts {
    counter.iter().map(|(k, &v)| (k.clone(), v)).collect()
}

impl IntakeCounters {
    pub fn new() -> Self {
        Self::default()
    }

    /// One record of type `kind` ended in `outcome` (nothing when `count` is false: a record a
    /// previous run counted; `new_record` false: a waiting click's final outcome, read and
    /// counted pending earlier). An `Invalid` outcome counts the read only, as in Python.
    pub fn count(&mut self, outcome: Outcome, kind: &str, count: bool, new_record: bool) {
        if !count {
            return;
        }
        if new_record {
            self.read += 1;
        }
        match outcome {
            Outcome::Accepted => bump(&mut self.accepted, kind),
            Outcome::Pending => self.pending += 1,
            Outcome::Duplicate => bump(&mut self.duplicate, kind),
            Outcome::Late => bump(&mut self.late, kind),
            Outcome::Unmatched => self.unmatched += 1,
            Outcome::Invalid => {}
        }
    }

    pub fn count_invalid(&mut self, reason: &str) {
        self.read += 1;
        bump(&mut self.invalid, reason);
    }

    /// `clicks` counted pending will never meet their impression: unmatched.
    pub fn unmatched_from_pending(&mut self, clicks: i64) {
        self.pending -= clicks;
        self.unmatched += clicks;
    }

    pub fn snapshot(&self) -> Intake {
        Intake {
            records_read: self.read,
            accepted: counts(&self.accepted),
            invalid: counts(&self.invalid),
            duplicate: counts(&self.duplicate),
            late: counts(&self.late),
            unmatched_clicks: self.unmatched,
            pending_clicks: self.pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_record_lands_in_one_outcome() {
        let mut c = IntakeCounters::new();
        // (outcome, kind, count, new_record)
        let table = [
            (Outcome::Accepted, "impression", true, true),
            (Outcome::Accepted, "click", true, true),
            (Outcome::Pending, "click", true, true),
            (Outcome::Pending, "click", true, true),
            (Outcome::Accepted, "click", true, false), // a waiting click met its impression
            (Outcome::Duplicate, "impression", true, true),
            (Outcome::Late, "click", true, true),
            (Outcome::Unmatched, "click", true, true),
            (Outcome::Accepted, "impression", false, true), // counted by a previous run
            (Outcome::Invalid, "judgment", true, true),
        ];
        for (outcome, kind, count, new_record) in table {
            c.count(outcome, kind, count, new_record);
        }
        c.count_invalid("bad_json");
        c.count_invalid("schema");
        c.count_invalid("bad_json");
        c.unmatched_from_pending(1);
        let s = c.snapshot();
        assert_eq!(s.records_read, 11);
        let own =
            |v: &[(&str, u64)]| -> Counts { v.iter().map(|(k, n)| (k.to_string(), *n)).collect() };
        assert_eq!(s.accepted, own(&[("impression", 1), ("click", 2)]));
        assert_eq!(s.invalid, own(&[("bad_json", 2), ("schema", 1)]));
        assert_eq!(s.duplicate, own(&[("impression", 1)]));
        assert_eq!(s.late, own(&[("click", 1)]));
        assert_eq!((s.unmatched_clicks, s.pending_clicks), (2, 1));
    }

    #[test]
    fn outcomes_are_named_as_python_values() {
        for name in [
            "accepted",
            "invalid",
            "duplicate",
            "late",
            "unmatched",
            "pending",
        ] {
            assert!(Outcome::from_name(name).is_some(), "{name}");
        }
        assert_eq!(Outcome::from_name("ACCEPTED"), None);
    }
}
