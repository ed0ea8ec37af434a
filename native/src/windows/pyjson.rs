//! The pieces of Python's `json.dumps` (`ensure_ascii=True`) that the state topic's bucket codec
//! writes: a float as `float.__repr__` writes it, a string escaped to ASCII. Byte for byte.

use std::fmt::Write;

/// `repr(x)` of a finite float: the shortest digits that read back to `x`, laid out as Python
/// does: positional when the decimal exponent is in `-4 <= e < 16` (with `.0` for an integer),
/// else `d.ddde+XX`.
///
/// Of the shortest digit strings that read back to `x`, Python (David Gay's `dtoa`, mode 0)
/// writes the closest to `x` and, when two are as close, the even one; Rust's shortest
/// formatting breaks that tie upwards (2^46 + 0.625 is `70368744177664.62` in Python, `...63`
/// in Rust). So the shortest length is taken from Rust, and the digits from Rust's exact
/// formatting at that length (correctly rounded, ties to even) whenever they read back to `x`.
pub fn float_repr(x: f64) -> String {
    debug_assert!(x.is_finite());
    let mut sci = format!("{x:e}"); // e.g. "-1.2345e-7", "0e0"
    let digits = sci
        .split_once('e')
        .map_or(0, |(m, _)| m.bytes().filter(u8::is_ascii_digit).count());
    if digits > 1 {
        let rounded = format!("{:.*e}", digits - 1, x);
        if rounded != sci && rounded.parse::<f64>() == Ok(x) {
            sci = rounded;
        }
    }
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp writes an exponent");
    let exp: i32 = exp.parse().expect("LowerExp writes an integer exponent");
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    let decpt = exp + 1; // value = 0.DIGITS × 10^decpt
    let n = digits.len() as i32;
    let mut out = String::from(sign);
    if -4 < decpt && decpt <= 16 {
        if decpt <= 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-decpt) as usize));
            out.push_str(&digits);
        } else if decpt >= n {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', (decpt - n) as usize));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..decpt as usize]);
            out.push('.');
            out.push_str(&digits[decpt as usize..]);
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

/// A JSON string as `json.dumps` writes it with `ensure_ascii=True`: `"` and `\` escaped, the
/// short escapes `\n \r \t \b \f`, every other character outside `' '..='~'` as `\uxxxx`
/// (lower-case hex; UTF-16 surrogate pairs above U+FFFF).
pub fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_written_as_python_repr() {
        // (value, Python's repr)
        let table = [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.5, "0.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (123.456, "123.456"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (1.25e-7, "1.25e-07"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1e16, "1e+16"),
            (1.5e300, "1.5e+300"),
            (-2.5e-300, "-2.5e-300"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (1e100, "1e+100"),
            (12345678.9, "12345678.9"),
            (0.30000000000000004, "0.30000000000000004"),
            // two shortest strings as close: the even one
            ((1u64 << 46) as f64 + 0.625, "70368744177664.62"),
            (1.0e23, "1e+23"),
        ];
        for (x, text) in table {
            assert_eq!(float_repr(x), text, "{x:e}");
        }
    }

    #[test]
    fn strings_are_escaped_to_ascii_as_json_dumps() {
        // (string, json.dumps(string))
        let table = [
            ("plain", r#""plain""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\n\r\t\u{8}\u{c}", r#""\n\r\t\b\f""#),
            ("\u{1}\u{1f}\u{7f}", r#""\u0001\u001f\u007f""#),
            ("é", r#""\u00e9""#),
            ("\u{2028}", r#""\u2028""#),
            ("😀", r#""\ud83d\ude00""#),
            ("", r#""""#),
        ];
        for (s, text) in table {
            let mut out = String::new();
            write_str(&mut out, s);
            assert_eq!(out, text);
        }
    }
}
