//! A window's definition and the pure functions of window boundaries: `windows/spec.py`, and
//! the window label `durations.format_duration`. Event time in epoch milliseconds.

/// A sliding event-time window of `size_ms`, kept as buckets of `bucket_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    pub size_ms: i64,
    pub bucket_ms: i64,
}

impl WindowSpec {
    /// The window, or the message of Python's `ValueError` when the size is not a positive
    /// multiple of a positive bucket.
    pub fn new(size_ms: i64, bucket_ms: i64) -> Result<Self, String> {
        if bucket_ms <= 0 || size_ms <= 0 || size_ms % bucket_ms != 0 {
            return Err(format!(
                "window {size_ms} ms must be a positive multiple of the bucket {bucket_ms} ms"
            ));
        }
        Ok(Self { size_ms, bucket_ms })
    }

    /// The `window` label: the canonical spelling of the size ("1m", "5m", "1h").
    pub fn name(&self) -> String {
        format_duration(self.size_ms)
    }
}

/// Start of the bucket holding `ts_ms` (floor, as Python's `%`: correct for negative times).
/// Saturating at the ends of `i64`, where Python's integers go on (no event time is near them).
pub fn bucket_start(ts_ms: i64, bucket_ms: i64) -> i64 {
    ts_ms.saturating_sub(ts_ms.rem_euclid(bucket_ms))
}

/// Starts of the buckets a window of `size_ms` covers as of `horizon_ms`, oldest first: the
/// whole buckets of `[end - size, end)` with `end = bucket_start(horizon)`.
pub fn window_buckets(horizon_ms: i64, size_ms: i64, bucket_ms: i64) -> impl Iterator<Item = i64> {
    let end = bucket_start(horizon_ms, bucket_ms);
    (end.saturating_sub(size_ms)..end).step_by(bucket_ms as usize)
}

/// The shortest canonical spelling of `ms`: 60000 -> "1m", 5400000 -> "1h30m", 0 -> "0s".
pub fn format_duration(ms: i64) -> String {
    if ms == 0 {
        return "0s".into();
    }
    let mut out = String::new();
    let mut rest = ms;
    for (unit, size) in [
        ("d", 86_400_000),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1_000),
        ("ms", 1),
    ] {
        if rest >= size {
            out.push_str(&format!("{}{unit}", rest / size));
            rest %= size;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_start_floors_as_python() {
        // (ts, bucket, start): Python's ts - ts % bucket
        for (ts, bucket, start) in [
            (0, 10, 0),
            (9, 10, 0),
            (10, 10, 10),
            (-1, 10, -10),
            (-10, 10, -10),
            (-11, 10, -20),
            (1_700_000_123_456, 60_000, 1_700_000_100_000),
            (i64::MIN, 10, i64::MIN), // saturated: Python gives MIN - 2
        ] {
            assert_eq!(bucket_start(ts, bucket), start, "{ts} {bucket}");
        }
    }

    #[test]
    fn window_buckets_are_the_whole_buckets_before_the_horizon() {
        // (horizon, size, bucket, starts)
        let table: [(i64, i64, i64, &[i64]); 4] = [
            (100, 30, 10, &[70, 80, 90]),
            (109, 30, 10, &[70, 80, 90]),
            (110, 20, 10, &[90, 100]),
            (-5, 20, 10, &[-30, -20]),
        ];
        for (horizon, size, bucket, starts) in table {
            let got: Vec<i64> = window_buckets(horizon, size, bucket).collect();
            assert_eq!(got, starts, "{horizon} {size} {bucket}");
        }
    }

    #[test]
    fn durations_are_spelled_as_format_duration() {
        for (ms, text) in [
            (0, "0s"),
            (250, "250ms"),
            (1_000, "1s"),
            (60_000, "1m"),
            (300_000, "5m"),
            (3_600_000, "1h"),
            (5_400_000, "1h30m"),
            (86_400_000 + 1_001, "1d1s1ms"),
        ] {
            assert_eq!(format_duration(ms), text);
        }
    }

    #[test]
    fn a_window_must_be_a_positive_multiple_of_its_bucket() {
        assert!(WindowSpec::new(60_000, 10_000).is_ok());
        for (size, bucket) in [(0, 10), (10, 0), (-10, 10), (25, 10)] {
            let err = WindowSpec::new(size, bucket).unwrap_err();
            assert!(err.contains("positive multiple"), "{err}");
        }
        assert_eq!(WindowSpec::new(300_000, 60_000).unwrap().name(), "5m");
    }
}
