//! The timestamp units of a mapping (`streameval/events/mapped_time.py`): `ms`, `s`, `us`,
//! `rfc3339`, each read as epoch milliseconds and then checked as the native model checks an
//! event time, with pydantic's message for each failure.

use jiter::JsonValue;

use crate::bounds::MAX_EPOCH_MS;
use crate::decode::TIME_MESSAGE;
use crate::event_time::rfc3339_to_ms;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    Ms,
    S,
    Us,
    Rfc3339,
}

impl Unit {
    pub fn parse(name: &str) -> Option<Unit> {
        match name {
            "ms" => Some(Unit::Ms),
            "s" => Some(Unit::S),
            "us" => Some(Unit::Us),
            "rfc3339" => Some(Unit::Rfc3339),
            _ => None,
        }
    }
}

fn value_error(msg: &str) -> String {
    format!("Value error, {msg}")
}

/// The native model's check of an integer of epoch ms (its union's custom message).
fn in_range(ms: i128) -> Result<i64, String> {
    if (0..=MAX_EPOCH_MS as i128).contains(&ms) {
        Ok(ms as i64)
    } else {
        Err(TIME_MESSAGE.into())
    }
}

/// `to_epoch_ms` of event_time.py with its messages.
fn to_epoch_ms(value: &JsonValue) -> Result<i64, String> {
    let ms: i128 = match value {
        JsonValue::Int(i) => i128::from(*i),
        JsonValue::BigInt(_) => -1,
        JsonValue::Str(text) => {
            let size = text.chars().count();
            let ascii = text.is_ascii();
            if (16..=64).contains(&size)
                && ascii
                && matches!(text.as_bytes()[10], b'T' | b't' | b' ')
            {
                match rfc3339_to_ms(text.to_ascii_uppercase().as_bytes()) {
                    Some(ms) => i128::from(ms),
                    None => return Err(value_error("timestamp string is not RFC 3339")),
                }
            } else if size > 0 && size <= 16 && ascii && text.bytes().all(|b| b.is_ascii_digit()) {
                text.parse().unwrap_or(-1)
            } else {
                return Err(value_error(
                    "timestamp string must be RFC 3339 (date and time) or epoch ms",
                ));
            }
        }
        JsonValue::Float(f) => {
            if !f.is_finite() {
                return Err(value_error("timestamp must be finite"));
            }
            floor(*f)
        }
        _ => {
            return Err(value_error(
                "timestamp must be an RFC 3339 string or integer epoch milliseconds",
            ))
        }
    };
    if !(0..=MAX_EPOCH_MS as i128).contains(&ms) {
        return Err(value_error(
            "timestamp out of range (1970-01-01 .. 9999-12-31)",
        ));
    }
    Ok(ms as i64)
}

/// `math.floor` of a finite float, saturated far outside the event-time range.
fn floor(f: f64) -> i128 {
    let f = f.floor();
    if f.abs() < 1e30 {
        f as i128
    } else if f < 0.0 {
        -1
    } else {
        i128::MAX
    }
}

/// The event time of `value` in `unit`, or pydantic's message.
pub fn read(unit: Unit, value: &JsonValue) -> Result<i64, String> {
    match unit {
        Unit::Ms => match value {
            JsonValue::Int(i) => in_range(i128::from(*i)),
            JsonValue::BigInt(_) => Err(TIME_MESSAGE.into()),
            other => to_epoch_ms(other).and_then(|ms| in_range(i128::from(ms))),
        },
        Unit::S | Unit::Us => {
            let name = if unit == Unit::S {
                "seconds"
            } else {
                "microseconds"
            };
            let ms = match value {
                JsonValue::Int(i) if unit == Unit::S => i128::from(*i) * 1000,
                JsonValue::Int(i) => floor(int_div_1000(*i)),
                JsonValue::BigInt(_) => return Err(TIME_MESSAGE.into()),
                JsonValue::Float(f) if f.is_finite() => floor(if unit == Unit::S {
                    f * 1000.0
                } else {
                    f / 1000.0
                }),
                _ => return Err(value_error(&format!("expected a number of epoch {name}"))),
            };
            in_range(ms)
        }
        Unit::Rfc3339 => match value {
            JsonValue::Str(text)
                if text.chars().count() >= 16
                    && text.chars().nth(10).is_some_and(|c| "Tt ".contains(c)) =>
            {
                match text
                    .is_ascii()
                    .then(|| rfc3339_to_ms(text.as_bytes()))
                    .flatten()
                {
                    Some(ms) => in_range(i128::from(ms)),
                    None => to_epoch_ms(value).and_then(|ms| in_range(i128::from(ms))),
                }
            }
            _ => Err(value_error("expected an RFC 3339 date and time")),
        },
    }
}

/// Whether Python's `value / 1000` of an `us` timestamp raises OverflowError (an integer
/// whose quotient is beyond the largest float).
pub fn overflows(unit: Unit, value: &JsonValue) -> bool {
    match (unit, value) {
        (Unit::Us, JsonValue::BigInt(i)) => (i / num_bigint::BigInt::from(1000)).bits() >= 1024,
        _ => false,
    }
}

/// Python's `i / 1000` (true division, correctly rounded) of an integer.
fn int_div_1000(i: i64) -> f64 {
    if i.unsigned_abs() < (1 << 53) {
        i as f64 / 1000.0
    } else {
        i.div_euclid(1000) as f64 + i.rem_euclid(1000) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        fn v(s: &str) -> JsonValue<'_> {
            JsonValue::parse(s.as_bytes(), true).unwrap()
        }
        assert_eq!(read(Unit::S, &v("1.5")), Ok(1500));
        assert!(overflows(Unit::Us, &v(&"9".repeat(312))));
        assert!(!overflows(Unit::Us, &v(&"9".repeat(300))));
        assert_eq!(read(Unit::Us, &v("1999")), Ok(1));
        assert_eq!(read(Unit::Us, &v("-1")), Err(TIME_MESSAGE.into()));
        assert_eq!(read(Unit::Ms, &v("\"5\"")), Ok(5));
        assert_eq!(
            read(Unit::S, &v("true")),
            Err("Value error, expected a number of epoch seconds".into())
        );
        assert_eq!(
            read(Unit::Rfc3339, &v("\"1970-01-01 00:00:01.5\"")),
            Ok(1500)
        );
        assert_eq!(
            read(Unit::Rfc3339, &v("1")),
            Err("Value error, expected an RFC 3339 date and time".into())
        );
    }
}
