//! The value format of a window bucket in the compacted state topic (`windows/persisted.py`,
//! `encode_bucket` / `decode_bucket`): JSON, floats written with `repr`, so a bucket read back
//! equals the one written, to the bit. The bytes written are Python's `json.dumps(...,
//! separators=(",", ":"))` of the same bucket, byte for byte, tables in insertion order.
//!
//! Decoding accepts what Python accepts and answers the same [`BadState`] reason, with these
//! differences on records no engine writes (docs/native.md): integers beyond 2^53 in magnitude
//! where a number goes, or beyond 64 bits where an integer goes (Python holds them exactly; here
//! "malformed bucket"), JSON in UTF-16/32 or with lone surrogates ("not JSON" here), integers of
//! more than 4,300 digits in a key Python ignores (Python: "not JSON").

use jiter::JsonValue;

use super::pyjson::{float_repr, write_str};
use super::store::Bucket;

/// The version of the value format; a record of another version is foreign.
pub const FORMAT_VERSION: i64 = 1;

/// A state-topic value that is not a bucket of ours: why (`persisted.BadState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadState {
    pub reason: &'static str,
}

const NOT_JSON: BadState = BadState { reason: "not JSON" };
const FOREIGN: BadState = BadState {
    reason: "not a bucket of this format version",
};
const MALFORMED: BadState = BadState {
    reason: "malformed bucket",
};

const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
/// The largest magnitude below which every integer is an `f64`, exactly.
const EXACT_INT: i64 = 1 << 53;

/// A count as Python writes an `int` (an accumulator holding anything else, possible only
/// after merging a foreign bucket, is written as a float).
fn write_count(out: &mut String, x: f64) -> Result<(), String> {
    if x.fract() == 0.0 && x.abs() <= EXACT_INT as f64 {
        out.push_str(&(x as i64).to_string());
        Ok(())
    } else {
        write_float(out, x)
    }
}

fn write_float(out: &mut String, x: f64) -> Result<(), String> {
    if !x.is_finite() {
        // json.dumps(allow_nan=False)'s ValueError
        return Err(format!(
            "Out of range float values are not JSON compliant: {x}"
        ));
    }
    out.push_str(&float_repr(x));
    Ok(())
}

fn write_strs(out: &mut String, items: &[String]) {
    out.push('[');
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, s);
    }
    out.push(']');
}

/// The accumulators, `counts` saying which positions hold counts (Python `int`s).
fn write_acc(
    out: &mut String,
    acc: &[f64],
    is_count: impl Fn(usize) -> bool,
) -> Result<(), String> {
    out.push('[');
    for (i, &v) in acc.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if is_count(i) {
            write_count(out, v)?;
        } else {
            write_float(out, v)?;
        }
    }
    out.push(']');
    Ok(())
}

/// The bytes of `bucket` in the state topic: `encode_bucket`'s, exactly. An error (Python's
/// `ValueError`) for a sum that is not finite.
pub fn encode_bucket(bucket: &Bucket) -> Result<Vec<u8>, String> {
    let mut out = String::from("{\"v\":1");
    for (field, table) in [("n", &bucket.ndcg), ("c", &bucket.coverage)] {
        out.push_str(",\"");
        out.push_str(field);
        out.push_str("\":[");
        for (i, ((rel, seg, ks), acc)) in table.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            write_str(&mut out, rel);
            out.push(',');
            write_strs(&mut out, seg);
            out.push_str(",[");
            let ks: Vec<String> = ks.iter().map(i64::to_string).collect();
            out.push_str(&ks.join(","));
            out.push_str("],");
            write_acc(&mut out, acc, |i| i % 3 == 0)?;
            out.push(']');
        }
        out.push(']');
    }
    out.push_str(",\"e\":[");
    for (i, (seg, acc)) in bucket.engagement.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('[');
        write_strs(&mut out, seg);
        out.push(',');
        // lists, clicked lists, rr sum, its squares, zero-interaction lists
        write_acc(&mut out, acc, |i| !matches!(i, 2 | 3))?;
        out.push(']');
    }
    out.push(']');
    if !bucket.interleaving.is_empty() {
        out.push_str(",\"i\":[");
        for (i, ((ranker, opponent), counts)) in bucket.interleaving.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('[');
            write_str(&mut out, ranker);
            out.push(',');
            write_str(&mut out, opponent);
            out.push_str(",[");
            let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
            out.push_str(&counts.join(","));
            out.push_str("]]");
        }
        out.push(']');
    }
    out.push('}');
    Ok(out.into_bytes())
}

/// The bucket a state-topic value holds, or why it holds none (never panics).
pub fn decode_bucket(raw: &[u8]) -> Result<Bucket, BadState> {
    // json.loads of bytes: a UTF-8 byte order mark is skipped (`utf-8-sig`)
    let text = raw.strip_prefix(UTF8_BOM).unwrap_or(raw);
    let data = JsonValue::parse(text, true).map_err(|_| NOT_JSON)?;
    let JsonValue::Object(object) = &data else {
        return Err(FOREIGN);
    };
    let get = |key: &str| object.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
    // `data.get("v") != 1`: 1, 1.0 and true are equal to 1 in Python
    match get("v") {
        Some(JsonValue::Int(1)) | Some(JsonValue::Bool(true)) => {}
        Some(JsonValue::Float(f)) if *f == 1.0 => {}
        _ => return Err(FOREIGN),
    }
    let mut bucket = Bucket::new();
    for (field, table) in [("n", &mut bucket.ndcg), ("c", &mut bucket.coverage)] {
        for item in list(get(field))? {
            let [rel, seg, ks, acc] = items::<4>(item)?;
            let ks = list(Some(ks))?
                .iter()
                .map(int)
                .collect::<Result<Vec<i64>, _>>()?;
            let key = (string(rel)?, segment(seg)?, ks);
            let values = numbers(acc)?;
            if values.len() != 3 * key.2.len() || key.2.is_empty() {
                return Err(MALFORMED); // the accumulators do not match the cutoffs
            }
            table.insert(key, values);
        }
    }
    for item in list(get("e"))? {
        let [seg, acc] = items::<2>(item)?;
        let values: [f64; 5] = numbers(acc)?.try_into().map_err(|_| MALFORMED)?;
        bucket.engagement.insert(segment(seg)?, values);
    }
    if let Some(pairs) = get("i") {
        for item in list(Some(pairs))? {
            let [ranker, opponent, acc] = items::<3>(item)?;
            let counts = list(Some(acc))?
                .iter()
                .map(|v| int(v).and_then(|n| u64::try_from(n).map_err(|_| MALFORMED)))
                .collect::<Result<Vec<u64>, _>>()?;
            let counts: [u64; 4] = counts.try_into().map_err(|_| MALFORMED)?;
            bucket
                .interleaving
                .insert((string(ranker)?, string(opponent)?), counts);
        }
    }
    Ok(bucket)
}

fn list<'a, 'j>(value: Option<&'a JsonValue<'j>>) -> Result<&'a [JsonValue<'j>], BadState> {
    match value {
        Some(JsonValue::Array(items)) => Ok(items.as_slice()),
        _ => Err(MALFORMED),
    }
}

/// Python's `a, b, ... = item`: a list of exactly N (a string or an object of N would unpack
/// too, but then fail the type of what it gives).
fn items<'a, 'j, const N: usize>(
    item: &'a JsonValue<'j>,
) -> Result<[&'a JsonValue<'j>; N], BadState> {
    let all: Vec<&JsonValue> = list(Some(item))?.iter().collect();
    all.try_into().map_err(|_| MALFORMED)
}

fn string(value: &JsonValue) -> Result<String, BadState> {
    match value {
        JsonValue::Str(s) => Ok(s.to_string()),
        _ => Err(MALFORMED),
    }
}

/// An integer, not a bool (Python's `type(v) is int`).
fn int(value: &JsonValue) -> Result<i64, BadState> {
    match value {
        JsonValue::Int(i) => Ok(*i),
        _ => Err(MALFORMED),
    }
}

fn segment(value: &JsonValue) -> Result<Vec<String>, BadState> {
    list(Some(value))?.iter().map(string).collect()
}

/// Finite numbers, integers or floats (not bools).
fn numbers(value: &JsonValue) -> Result<Vec<f64>, BadState> {
    list(Some(value))?
        .iter()
        .map(|v| match v {
            JsonValue::Int(i) if i.abs() <= EXACT_INT => Ok(*i as f64),
            JsonValue::Float(f) if f.is_finite() => Ok(*f),
            _ => Err(MALFORMED),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scored::{Interleaved, PairOutcome};
    use crate::windows::store::tests::{list, source};

    /// A bucket with every table: the golden bytes are Python's `encode_bucket` of it.
    fn bucket() -> Bucket {
        let mut scored = list(
            5,
            &["a", "é"],
            vec![
                source("implicit", &[1, 3], &[Some(0.5), None], None),
                source(
                    "judged",
                    &[1, 3],
                    &[Some(0.1), Some(0.2)],
                    Some(&[1.0, 0.5]),
                ),
            ],
        );
        scored.clicked = true;
        scored.interacted = true;
        scored.first_click_rank = Some(2);
        scored.interleaved = Some(Interleaved {
            doc_ids: vec![],
            teams: vec![],
            clicked: vec![],
            grades: vec![],
            counted_before: false,
            outcomes: vec![
                ("x".into(), "y".into(), PairOutcome::Win),
                ("y".into(), "x".into(), PairOutcome::Loss),
            ],
        });
        let mut b = Bucket::new();
        b.fold(&scored);
        b
    }

    const GOLDEN: &str = concat!(
        r#"{"v":1,"n":[["implicit",["a","\u00e9"],[1,3],[1,0.5,0.25,0,0.0,0.0]],"#,
        r#"["judged",["a","\u00e9"],[1,3],[1,0.1,0.010000000000000002,1,0.2,0.04000000000000001]]],"#,
        r#""c":[["judged",["a","\u00e9"],[1,3],[1,1.0,1.0,1,0.5,0.25]]],"#,
        r#""e":[[["a","\u00e9"],[1,1,0.5,0.25,0]]],"i":[["x","y",[1,0,0,0]],["y","x",[0,1,0,0]]]}"#
    );

    #[test]
    fn encodes_the_bytes_of_python_and_reads_them_back() {
        let bytes = encode_bucket(&bucket()).unwrap();
        assert_eq!(std::str::from_utf8(&bytes).unwrap(), GOLDEN);
        assert_eq!(decode_bucket(&bytes), Ok(bucket()));
        // no interleaving: no "i"
        let empty = encode_bucket(&Bucket::new()).unwrap();
        assert_eq!(empty, br#"{"v":1,"n":[],"c":[],"e":[]}"#);
    }

    #[test]
    fn a_sum_that_is_not_finite_cannot_be_written() {
        let mut b = Bucket::new();
        b.fold(&list(
            0,
            &[],
            vec![source("implicit", &[1], &[Some(f64::INFINITY)], None)],
        ));
        assert!(encode_bucket(&b)
            .unwrap_err()
            .contains("not JSON compliant"));
    }

    #[test]
    fn decodes_what_python_accepts_and_says_why_not_as_python() {
        let ok = |text: &str| {
            decode_bucket(text.as_bytes())
                .map(|_| "ok")
                .unwrap_or_else(|b| b.reason)
        };
        // (record, Python's answer)
        let table = [
            (r#"{"v":1,"n":[],"c":[],"e":[]}"#, "ok"),
            ("\u{feff}{\"v\":1,\"n\":[],\"c\":[],\"e\":[]}", "ok"),
            (r#" {"v":1.0,"n":[],"c":[],"e":[],"x":NaN} "#, "ok"),
            (r#"{"v":true,"n":[],"c":[],"e":[],"i":[]}"#, "ok"),
            (
                r#"{"v":1,"v":2,"n":[],"c":[],"e":[]}"#,
                "not a bucket of this format version",
            ),
            (r#"{"v":2,"v":1,"n":[],"c":[],"e":[]}"#, "ok"),
            (
                r#"{"v":"1","n":[],"c":[],"e":[]}"#,
                "not a bucket of this format version",
            ),
            (r#"[1]"#, "not a bucket of this format version"),
            (r#"{"v":1,"n":[],"c":[],"e":[]"#, "not JSON"),
            (r#"{"v":1,"n":[],"c":[],"e":[]} x"#, "not JSON"),
            (
                "{\"v\":1,\"n\":[],\"c\":[],\"e\":[],\"x\":\"\u{1}\"}",
                "not JSON",
            ),
            (r#"{"v":1,"n":[],"c":[]}"#, "malformed bucket"),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":null}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1,0.5,0.25]]],"c":[],"e":[]}"#,
                "ok",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1.5,1,-2]]],"c":[],"e":[]}"#,
                "ok",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[-7],[1,0.5,0.25]]],"c":[],"e":[]}"#,
                "ok",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[],[]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1,0.5]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1.0],[1,0.5,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[true],[1,0.5,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1,true,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1,NaN,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1],[1,1e400,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",[1],[1],[1,0.5,0.25]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[["r",["s"],[1]]],"c":[],"e":[]}"#,
                "malformed bucket",
            ),
            (r#"{"v":1,"n":["abcd"],"c":[],"e":[]}"#, "malformed bucket"),
            (
                r#"{"v":1,"n":[],"c":[],"e":[[["s"],[1,0,0.0,0.0,1]]]}"#,
                "ok",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[[["s"],[1,0,0.0,0.0]]]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":[["a","b",[1,2,3,4]]]}"#,
                "ok",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":[["a","b",[1,2,3,-4]]]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":[["a","b",[1,2,3,4.0]]]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":[["a","b",[1,2,3]]]}"#,
                "malformed bucket",
            ),
            (
                r#"{"v":1,"n":[],"c":[],"e":[],"i":[["a",2,[1,2,3,4]]]}"#,
                "malformed bucket",
            ),
        ];
        for (text, answer) in table {
            assert_eq!(ok(text), answer, "{text}");
        }
        assert_eq!(decode_bucket(b"{\"v\":1,\"x\":\"\xff\"}"), Err(NOT_JSON));
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_its_last_value() {
        let text = r#"{"v":1,"n":[["a",[],[1],[1,0.5,0.25]],["b",[],[1],[1,0.5,0.25]],["a",[],[1],[2,1.5,1.25]]],"c":[],"e":[]}"#;
        let b = decode_bucket(text.as_bytes()).unwrap();
        let got: Vec<_> = b
            .ndcg
            .iter()
            .map(|((r, _, _), acc)| (r.as_str(), acc[0]))
            .collect();
        assert_eq!(got, [("a", 2.0), ("b", 1.0)]);
    }
}
