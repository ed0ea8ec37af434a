//! Event time as `streameval/events/event_time.py` reads it: epoch milliseconds from an integer,
//! a string of ASCII digits, a finite float (floored) or an RFC 3339 string, which Python reads
//! with CPython 3.11's `datetime.fromisoformat` (ported here: the C implementation's grammar,
//! including its ISO week dates), within 1970-01-01 .. 9999-12-31.

use crate::bounds::MAX_EPOCH_MS;
use jiter::JsonValue;

const MAX_TIME_TEXT: usize = 64;

/// Epoch milliseconds of a JSON value, or `None` when it is not a valid event time.
pub fn to_epoch_ms(value: &JsonValue) -> Option<i64> {
    let ms = match value {
        JsonValue::Int(i) => *i,
        JsonValue::Float(f) => {
            if !f.is_finite() {
                return None;
            }
            let floor = f.floor();
            if !(0.0..=MAX_EPOCH_MS as f64).contains(&floor) {
                return None;
            }
            floor as i64
        }
        JsonValue::Str(text) => from_text(text)?,
        _ => return None, // bool, null, big integers (out of range), arrays, objects
    };
    (0..=MAX_EPOCH_MS).contains(&ms).then_some(ms)
}

fn from_text(text: &str) -> Option<i64> {
    let size = text.chars().count();
    if (16..=MAX_TIME_TEXT).contains(&size)
        && text.is_ascii()
        && matches!(text.as_bytes()[10], b'T' | b't' | b' ')
    {
        return rfc3339_to_ms(text.to_ascii_uppercase().as_bytes());
    }
    if size > 0 && size <= 16 && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok(); // at most 16 digits: fits
    }
    None
}

fn at(buf: &[u8], i: usize) -> u8 {
    buf.get(i).copied().unwrap_or(0) // C's NUL terminator
}

fn digits(buf: &[u8], start: usize, count: usize) -> Option<i64> {
    let mut value = 0;
    for i in start..start + count {
        let b = at(buf, i);
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
    }
    Some(value)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of `YYYY-MM-DD` or `YYYY-Www-D` (CPython's `parse_isoformat_date`), as days.
fn parse_date(buf: &[u8]) -> Option<i64> {
    let year = digits(buf, 0, 4)?;
    if !(1..=9999).contains(&year) {
        return None;
    }
    if buf[4] != b'-' {
        return None; // 8-character forms put the separator at 8, where a time cannot start
    }
    if buf[5] == b'W' {
        let week = digits(buf, 6, 2)?;
        if buf[8] != b'-' {
            return None;
        }
        let day = digits(buf, 9, 1)?;
        let jan1 = days_from_civil(year, 1, 1);
        let jan1_weekday = (jan1 + 3).rem_euclid(7) + 1; // 1970-01-01 was a Thursday (4)
        let has_53 = jan1_weekday == 4 || (jan1_weekday == 3 && is_leap(year));
        if !((1..=52).contains(&week) || (week == 53 && has_53)) {
            return None;
        }
        if !(1..=7).contains(&day) {
            return None;
        }
        // Monday of ISO week 1: the week with January 4th
        let jan4 = jan1 + 3;
        let week1_monday = jan4 - (jan4 + 3).rem_euclid(7);
        let days = week1_monday + (week - 1) * 7 + (day - 1);
        let max = days_from_civil(9999, 12, 31);
        return (days <= max && days >= days_from_civil(1, 1, 1)).then_some(days);
    }
    let month = digits(buf, 5, 2)?;
    if buf[7] != b'-' {
        return None;
    }
    let day = digits(buf, 8, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// CPython's `parse_hh_mm_ss_ff`: ([h, m, s, us], more text follows) or `None`.
fn parse_hh_mm_ss_ff(buf: &[u8], start: usize, end: usize) -> Option<([i64; 4], bool)> {
    let mut vals = [0i64; 4];
    let mut p = start;
    let mut has_sep = true;
    for (i, val) in vals.iter_mut().take(3).enumerate() {
        *val = digits(buf, p, 2)?;
        p += 2;
        let c = at(buf, p);
        p += 1;
        if i == 0 {
            has_sep = c == b':';
        }
        if p >= end {
            return Some((vals, c != 0));
        } else if has_sep && c == b':' {
            continue;
        } else if c == b'.' || c == b',' {
            break;
        } else if !has_sep {
            p -= 1;
        } else {
            return None;
        }
    }
    let to_parse = (end - p).min(6);
    if to_parse == 0 {
        return None;
    }
    let mut us = digits(buf, p, to_parse)?;
    p += to_parse;
    for _ in to_parse..6 {
        us *= 10;
    }
    vals[3] = us;
    while at(buf, p).is_ascii_digit() {
        p += 1;
    }
    Some((vals, at(buf, p) != 0))
}

/// CPython 3.11's `datetime.fromisoformat` of an upper-cased ASCII text whose date is its first
/// 10 characters, as epoch ms (no zone: UTC), or `None`.
pub(crate) fn rfc3339_to_ms(buf: &[u8]) -> Option<i64> {
    let days = parse_date(buf)?;
    let start = 11;
    let end = buf.len();
    let mut tz = start;
    while tz < end && !matches!(buf[tz], b'Z' | b'+' | b'-') {
        tz += 1;
    }
    let (time, more) = parse_hh_mm_ss_ff(buf, start, tz)?;
    let mut offset_us = 0i64;
    if tz == end {
        if more {
            return None;
        }
    } else if buf[tz] == b'Z' {
        if tz + 1 != end {
            return None;
        }
    } else {
        let sign = if buf[tz] == b'-' { -1 } else { 1 };
        let (off, more) = parse_hh_mm_ss_ff(buf, tz + 1, end)?;
        if more {
            return None;
        }
        offset_us = sign * ((off[0] * 3600 + off[1] * 60 + off[2]) * 1_000_000 + off[3]);
        if offset_us.abs() >= 86_400 * 1_000_000 {
            return None; // timezone() takes strictly less than a day
        }
    }
    let [hour, minute, second, us] = time;
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let local_us = ((days * 24 + hour) * 60 + minute) * 60_000_000 + second * 1_000_000 + us;
    Some((local_us - offset_us).div_euclid(1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    fn text(s: &str) -> Option<i64> {
        to_epoch_ms(&JsonValue::Str(Cow::Borrowed(s)))
    }

    #[test]
    fn strings() {
        let cases: &[(&str, Option<i64>)] = &[
            ("2024-01-01T00:00:00Z", Some(1_704_067_200_000)),
            ("2024-01-01t00:00:00z", Some(1_704_067_200_000)),
            ("2024-01-01 00:00:00", Some(1_704_067_200_000)),
            ("2024-01-01T00:00:00.123456+01:00", Some(1_704_063_600_123)),
            ("2024-01-01T00:00:00.1-00:30", Some(1_704_069_000_100)),
            ("1970-01-01T00:00:00.000999Z", Some(0)),
            ("1969-12-31T23:59:59.999Z", None),
            ("9999-12-31T23:59:59.999Z", Some(MAX_EPOCH_MS)),
            ("2024-02-30T00:00:00Z", None),
            ("2024-01-01T24:00:00Z", None),
            ("2024-01-01T00:00:00+24:00", None),
            ("2024-01-01T000000", Some(1_704_067_200_000)),
            ("2024-W01-1T00:00", Some(1_704_067_200_000)),
            ("2024-01-01X00:00:00Z", None),
            ("1704067200000", Some(1_704_067_200_000)),
            (
                "1234567890123456",
                Some(1_234_567_890_123_456).filter(|&v| v <= MAX_EPOCH_MS),
            ),
            ("", None),
            ("-1", None),
            ("12a", None),
        ];
        for &(input, want) in cases {
            assert_eq!(text(input), want, "{input:?}");
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(to_epoch_ms(&JsonValue::Int(5)), Some(5));
        assert_eq!(to_epoch_ms(&JsonValue::Int(-1)), None);
        assert_eq!(to_epoch_ms(&JsonValue::Int(MAX_EPOCH_MS + 1)), None);
        assert_eq!(to_epoch_ms(&JsonValue::Float(1.9)), Some(1));
        assert_eq!(to_epoch_ms(&JsonValue::Float(-0.5)), None);
        assert_eq!(to_epoch_ms(&JsonValue::Float(f64::NAN)), None);
        assert_eq!(to_epoch_ms(&JsonValue::Bool(true)), None);
        assert_eq!(to_epoch_ms(&JsonValue::Null), None);
    }
}
