//! Python's view of a few JSON values, for the decoders of UBI and mapped records: the text
//! Python writes for a number (`repr` of an `int` or a `float`: a label value), and
//! pydantic-core's lax integer (a UBI position ordinal: an integer, a bool, a float without a
//! fractional part, or a numeric string).

use jiter::JsonValue;

/// `repr()` of the Python float `x` (CPython's shortest round-trip text, `'r'` format).
pub fn float_repr(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits too: "1.2345e-5", "1e300"
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if x < 0.0 { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let text = if exp >= 0 {
            let point = exp as usize + 1;
            if digits.len() <= point {
                format!("{digits}{}.0", "0".repeat(point - digits.len()))
            } else {
                format!("{}.{}", &digits[..point], &digits[point..])
            }
        } else {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        };
        return format!("{sign}{text}");
    }
    let (first, rest) = digits.split_at(1);
    let rest = if rest.is_empty() {
        String::new()
    } else {
        format!(".{rest}")
    };
    let exp_sign = if exp < 0 { '-' } else { '+' };
    format!("{sign}{first}{rest}e{exp_sign}{:02}", exp.abs())
}

/// `str()` of the Python number or bool a JSON scalar becomes; `None` for a string, null, an
/// array or an object.
pub fn number_text(value: &JsonValue) -> Option<String> {
    match value {
        JsonValue::Bool(b) => Some(if *b { "true" } else { "false" }.into()),
        JsonValue::Int(i) => Some(i.to_string()),
        JsonValue::BigInt(i) => Some(i.to_string()),
        JsonValue::Float(f) => Some(float_repr(*f)),
        _ => None,
    }
}

/// `str()` of the Python value a JSON value becomes (`None`, `True`, `[1, 'a']`, ...).
pub fn py_str(value: &JsonValue) -> String {
    match value {
        JsonValue::Str(s) => s.to_string(),
        other => py_repr(other),
    }
}

/// `repr()` of the Python value a JSON value becomes.
pub fn py_repr(value: &JsonValue) -> String {
    match value {
        JsonValue::Null => "None".into(),
        JsonValue::Bool(true) => "True".into(),
        JsonValue::Bool(false) => "False".into(),
        JsonValue::Str(s) => str_repr(s),
        JsonValue::Array(items) => {
            let inner: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", inner.join(", "))
        }
        JsonValue::Object(object) => {
            let mut unique: Vec<(&str, &JsonValue)> = Vec::new();
            for (k, v) in object.iter() {
                match unique.iter_mut().find(|(key, _)| *key == k.as_ref()) {
                    Some(slot) => slot.1 = v,
                    None => unique.push((k.as_ref(), v)),
                }
            }
            let inner: Vec<String> = unique
                .iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), py_repr(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        other => number_text(other).unwrap_or_default(),
    }
}

/// Whether Python's `str.isprintable` holds for `c` (approximated: control, format and
/// separator characters other than the space are not printable).
fn printable(c: char) -> bool {
    !(c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2060}'..='\u{2064}' | '\u{feff}'))
}

/// `repr()` of a Python string: single quotes unless it holds one and no double quote.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if printable(c) => out.push(c),
            c if (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
    out
}

/// An integer read by pydantic-core in lax mode: `Small` when it fits an `i64`, else `Big`
/// (its sign: `true` when negative).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LaxInt {
    Small(i64),
    Big(bool),
}

pub const INT_TYPE: &str = "Input should be a valid integer";
const INT_FRACTION: &str = "Input should be a valid integer, got a number with a fractional part";
const INT_PARSING: &str = "Input should be a valid integer, unable to parse string as an integer";
const FINITE: &str = "Input should be a finite number";

/// pydantic-core's lax `int` of a JSON value, or its message.
pub fn lax_int(value: &JsonValue) -> Result<LaxInt, &'static str> {
    match value {
        JsonValue::Int(i) => Ok(LaxInt::Small(*i)),
        JsonValue::BigInt(i) => Ok(LaxInt::Big(i.sign() == num_bigint::Sign::Minus)),
        JsonValue::Bool(b) => Ok(LaxInt::Small(i64::from(*b))),
        JsonValue::Float(f) => float_int(*f),
        JsonValue::Str(s) => str_int(s),
        _ => Err(INT_TYPE),
    }
}

fn float_int(f: f64) -> Result<LaxInt, &'static str> {
    if !f.is_finite() {
        return Err(FINITE);
    }
    if f.fract() != 0.0 {
        return Err(INT_FRACTION);
    }
    if f.abs() < 9.0e18 {
        Ok(LaxInt::Small(f as i64))
    } else {
        Ok(LaxInt::Big(f < 0.0))
    }
}

/// pydantic-core's `str_as_int`: trimmed, `_` between digits, a `.000` fraction dropped.
fn str_int(s: &str) -> Result<LaxInt, &'static str> {
    let s = s.trim();
    if s.len() > 4300 {
        return Err(INT_PARSING);
    }
    let s = match s.find('.') {
        Some(i) if s[i + 1..].bytes().all(|b| b == b'0') => &s[..i],
        _ => s,
    };
    let (negative, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let bytes = body.as_bytes();
    if bytes.is_empty() || !bytes[0].is_ascii_digit() || !bytes[bytes.len() - 1].is_ascii_digit() {
        return Err(INT_PARSING);
    }
    let mut digits = String::with_capacity(bytes.len());
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            if !bytes[i + 1].is_ascii_digit() {
                return Err(INT_PARSING);
            }
        } else if b.is_ascii_digit() {
            digits.push(b as char);
        } else {
            return Err(INT_PARSING);
        }
    }
    match digits.parse::<i64>() {
        Ok(n) => Ok(LaxInt::Small(if negative { -n } else { n })),
        Err(_) => Ok(LaxInt::Big(negative && digits.bytes().any(|b| b != b'0'))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_is_pythons() {
        let cases = [
            (1.5, "1.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0.0"),
            (1e300, "1e+300"),
            (123456789.125, "123456789.125"),
            (-2.5e-7, "-2.5e-07"),
            (f64::NAN, "nan"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (x, want) in cases {
            assert_eq!(float_repr(x), want);
        }
    }

    #[test]
    fn lax_ints() {
        let s = |t: &str| str_int(t);
        assert_eq!(s(" 3 "), Ok(LaxInt::Small(3)));
        assert_eq!(s("3.00"), Ok(LaxInt::Small(3)));
        assert_eq!(s("1_0"), Ok(LaxInt::Small(10)));
        assert_eq!(s("-7"), Ok(LaxInt::Small(-7)));
        assert_eq!(s("1__0"), Err(INT_PARSING));
        assert_eq!(s("_1"), Err(INT_PARSING));
        assert_eq!(s("3.5"), Err(INT_PARSING));
        assert_eq!(s("99999999999999999999"), Ok(LaxInt::Big(false)));
        assert_eq!(float_int(3.5), Err(INT_FRACTION));
        assert_eq!(float_int(f64::NAN), Err(FINITE));
    }
}
