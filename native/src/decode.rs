//! One record (bytes) -> a native event or an invalid reason, as `decode_native` of
//! `streameval/events/decode.py` answers it (DESIGN §2): the same JSON parser as pydantic-core
//! (jiter: the same errors, nesting limit, big integers, last duplicate key wins), the same field
//! rules, bounds and normalization, and the same invalid `reason` and `detail` for every input:
//! pydantic's first error with its location, `(+n more)` counting every error pydantic-core
//! reports (a failing result item: one per member of its union), Python's `repr` of an unknown
//! `type`, and the characters `str.isprintable` refuses escaped (`printable.rs`).

use std::borrow::Cow;

use jiter::{JsonArray, JsonObject, JsonValue};

use crate::bounds::*;
use crate::event_time::to_epoch_ms;
use crate::normalize::normalize_query;
use crate::printable::is_printable;

pub const MAX_DETAIL_CHARS: usize = 300;
const MAX_TAG_CHARS: usize = 40;
pub(crate) const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";
pub(crate) const TIME_MESSAGE: &str =
    "timestamp must be an RFC 3339 string (no zone = UTC) or integer \
     epoch milliseconds, within 1970-01-01 .. 9999-12-31";

#[derive(Debug, Clone, PartialEq)]
pub struct Impression {
    pub request_id: String,
    pub timestamp: i64,
    pub doc_ids: Vec<String>,
    pub query: Option<String>,
    pub query_id: String,
    pub labels: Vec<(String, String)>,
    pub event_id: Option<String>,
    pub teams: Option<Vec<Option<String>>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Click {
    pub request_id: String,
    pub doc_id: String,
    pub timestamp: i64,
    pub action: String,
    pub dwell_ms: Option<f64>,
    pub position: Option<i64>,
    pub event_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Judgment {
    pub query_id: String,
    pub query: Option<String>,
    pub doc_id: String,
    pub grade: f64,
    pub timestamp: i64,
    pub judge: String,
    pub event_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Impression(Impression),
    Click(Click),
    Judgment(Judgment),
}

/// Why a record was refused: one of the Python decoder's `INVALID_REASONS` and a detail.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub reason: &'static str,
    pub detail: String,
}

pub(crate) fn invalid(reason: &'static str, detail: impl Into<String>) -> Invalid {
    Invalid {
        reason,
        detail: safe_detail(&detail.into(), MAX_DETAIL_CHARS),
    }
}

/// `safe_detail` of decode.py: cut to `limit` characters, then every character Python's
/// `str.isprintable` refuses escaped as `unicode_escape` writes it (cut again if that made it
/// longer).
pub fn safe_detail(text: &str, limit: usize) -> String {
    let cut = |s: &str| -> String {
        if chars(s) > limit {
            let mut out: String = s.chars().take(limit - 3).collect();
            out.push_str("...");
            out
        } else {
            s.to_owned()
        }
    };
    let text = cut(text);
    if text.chars().all(is_printable) {
        return text;
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_printable(c) {
            escaped.push(c);
        } else {
            push_escaped(c, &mut escaped);
        }
    }
    cut(&escaped)
}

/// A character Python does not print, as `unicode_escape` (and `repr`) writes it.
fn push_escaped(c: char, out: &mut String) {
    use std::fmt::Write;
    let _ = match c {
        '\t' => write!(out, "\\t"),
        '\n' => write!(out, "\\n"),
        '\r' => write!(out, "\\r"),
        c if (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32),
        c if (c as u32) < 0x10000 => write!(out, "\\u{:04x}", c as u32),
        c => write!(out, "\\U{:08x}", c as u32),
    };
}

/// Python's `repr` of a string: single quotes unless it holds a single quote and no double one,
/// the quote and the backslash escaped, the characters `str.isprintable` refuses escaped.
fn push_py_repr_str(s: &str, out: &mut String) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        if c == quote || c == '\\' {
            out.push('\\');
            out.push(c);
        } else if is_printable(c) {
            out.push(c);
        } else {
            push_escaped(c, out);
        }
    }
    out.push(quote);
}

/// Python's `repr` of a float: the shortest digits that read back, in fixed notation for a
/// decimal exponent within -5 < e < 16, else as `d.ddde+XX`.
fn push_py_repr_float(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
        return;
    }
    // Rust's `{:e}` writes the same shortest round-trip digits: `-1.2345e-7`
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    out.push_str(sign);
    if -5 < exp && exp < 16 {
        let point = exp + 1; // digits before the decimal point
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat(point.unsigned_abs() as usize));
            out.push_str(&digits);
        } else if point as usize >= digits.len() {
            out.push_str(&digits);
            out.push_str(&"0".repeat(point as usize - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point as usize]);
            out.push('.');
            out.push_str(&digits[point as usize..]);
        }
    } else {
        let (first, rest) = digits.split_at(digits.len().min(1));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        out.push_str(&format!("e{sign}{:02}", exp.unsigned_abs()));
    }
}

/// `str()` of the Python value pydantic-core makes of a JSON value. Stops once `out` holds more
/// than `budget` bytes (only the first characters are shown).
fn push_py_str(value: &JsonValue, out: &mut String, budget: usize) {
    match value {
        JsonValue::Str(s) => out.push_str(s),
        other => push_py_repr(other, out, budget),
    }
}

/// `repr()` of that Python value (a dict keeps a duplicate key at its first position, with its
/// last value).
fn push_py_repr(value: &JsonValue, out: &mut String, budget: usize) {
    if out.len() > budget {
        return;
    }
    match value {
        JsonValue::Null => out.push_str("None"),
        JsonValue::Bool(true) => out.push_str("True"),
        JsonValue::Bool(false) => out.push_str("False"),
        JsonValue::Int(i) => out.push_str(&i.to_string()),
        JsonValue::BigInt(i) => out.push_str(&i.to_string()),
        JsonValue::Float(f) => push_py_repr_float(*f, out),
        JsonValue::Str(s) => push_py_repr_str(s, out),
        JsonValue::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_py_repr(item, out, budget);
                if out.len() > budget {
                    return;
                }
            }
            out.push(']');
        }
        JsonValue::Object(object) => {
            out.push('{');
            let fields = Fields(object);
            // the keys shown (few: the budget stops the output), so a duplicate is found in them
            let mut shown: Vec<&str> = Vec::new();
            for (key, _) in object.iter() {
                if shown.contains(&key.as_ref()) {
                    continue; // a duplicate key: shown at its first position
                }
                if !shown.is_empty() {
                    out.push_str(", ");
                }
                shown.push(key);
                push_py_repr_str(key, out);
                out.push_str(": ");
                if let Some(value) = fields.get(key) {
                    push_py_repr(value, out, budget);
                }
                if out.len() > budget {
                    return;
                }
            }
            out.push('}');
        }
    }
}

/// Decode one record of a source declared native. Never panics on any input.
///
/// A record of the usual shapes is read by the streaming fast path (`decode_fast.rs`: no JSON
/// tree), which answers only a valid event it is certain of; anything else, every invalid
/// record included, is read by the tree path (`decode_native_tree`), which decides it.
pub fn decode_native(raw: &[u8], max_bytes: usize) -> Result<Event, Invalid> {
    if raw.len() > max_bytes {
        return Err(too_large(raw, max_bytes));
    }
    if let Some(event) = crate::decode_fast::decode_fast(raw) {
        return Ok(event);
    }
    decode_native_tree(raw, max_bytes)
}

fn too_large(raw: &[u8], max_bytes: usize) -> Invalid {
    invalid(
        "too_large",
        format!("record of {} bytes, over the cap of {max_bytes}", raw.len()),
    )
}

/// `decode_native` through the whole JSON tree: the reference every answer is decided by.
pub fn decode_native_tree(raw: &[u8], max_bytes: usize) -> Result<Event, Invalid> {
    if raw.len() > max_bytes {
        return Err(too_large(raw, max_bytes));
    }
    let value = match JsonValue::parse(raw, true) {
        Ok(value) => value,
        Err(err) => {
            if let Some(rest) = raw.strip_prefix(UTF8_BOM) {
                return decode_native_tree(rest, usize::MAX);
            }
            if let Err(e) = std::str::from_utf8(raw) {
                return Err(invalid(
                    "bad_encoding",
                    format!("not UTF-8 at byte {}", e.valid_up_to()),
                ));
            }
            let position = err.get_position(raw);
            return Err(invalid(
                "bad_json",
                format!("Invalid JSON: {} at {position}", err.error_type),
            ));
        }
    };
    let JsonValue::Object(object) = &value else {
        return Err(invalid("schema", "record is not a JSON object"));
    };
    let fields = Fields(object);
    match fields.get("type") {
        None => Err(invalid("schema", "no \"type\": a native event needs one")),
        Some(tag_value @ JsonValue::Str(tag)) => match tag.as_ref() {
            "impression" => impression(&fields),
            "click" => click(&fields),
            "judgment" => judgment(&fields),
            _ => Err(unknown_type(tag_value)),
        },
        Some(other) => Err(unknown_type(other)),
    }
}

/// Python: ``f"unknown type {safe_detail(str(tag), 40)!r}"``, `tag` the Python value of the
/// JSON `type`.
pub(crate) fn unknown_type(tag: &JsonValue) -> Invalid {
    let mut text = String::new();
    push_py_str(tag, &mut text, 4 * MAX_TAG_CHARS);
    let mut detail = String::from("unknown type ");
    push_py_repr_str(&safe_detail(&text, MAX_TAG_CHARS), &mut detail);
    invalid("unknown_type", detail)
}

/// An object's fields: the last of duplicate keys wins, as pydantic reads them.
pub(crate) struct Fields<'a, 'j>(pub(crate) &'a JsonObject<'j>);

impl<'a, 'j> Fields<'a, 'j> {
    pub(crate) fn get(&self, key: &str) -> Option<&'a JsonValue<'j>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The field, with JSON null read as absent.
    pub(crate) fn present(&self, key: &str) -> Option<&'a JsonValue<'j>> {
        self.get(key).filter(|v| !matches!(v, JsonValue::Null))
    }
}

/// The errors of one model, in field order, and the detail pydantic would give.
pub(crate) struct Errors {
    tag: &'static str,
    list: Vec<String>,
}

impl Errors {
    pub(crate) fn new(tag: &'static str) -> Self {
        Errors {
            tag,
            list: Vec::new(),
        }
    }

    pub(crate) fn add(&mut self, loc: &str, msg: impl AsRef<str>) {
        self.list
            .push(format!("{}.{loc}: {}", self.tag, msg.as_ref()));
    }

    pub(crate) fn model(&self, msg: &str) -> Invalid {
        invalid("schema", format!("{}: Value error, {msg}", self.tag))
    }

    pub(crate) fn finish(self) -> Result<(), Invalid> {
        let Some(first) = self.list.first() else {
            return Ok(());
        };
        let mut text = first.clone();
        if self.list.len() > 1 {
            text.push_str(&format!(" (+{} more)", self.list.len() - 1));
        }
        Err(invalid("schema", text))
    }
}

pub(crate) fn chars(s: &str) -> usize {
    if s.is_ascii() {
        s.len()
    } else {
        s.chars().count()
    }
}

/// A bounded string (`min..=max` characters), or the pydantic message.
pub(crate) fn bounded_str(value: &JsonValue, min: usize, max: usize) -> Result<String, String> {
    let JsonValue::Str(s) = value else {
        return Err("Input should be a valid string".into());
    };
    let n = chars(s);
    if n < min {
        return Err(format!(
            "String should have at least {min} character{}",
            if min == 1 { "" } else { "s" }
        ));
    }
    if n > max {
        return Err(format!("String should have at most {max} characters"));
    }
    Ok(s.to_string())
}

pub(crate) fn required_str(
    fields: &Fields,
    errors: &mut Errors,
    key: &str,
    min: usize,
    max: usize,
) -> Option<String> {
    match fields.get(key) {
        None => {
            errors.add(key, "Field required");
            None
        }
        Some(v) => bounded_str(v, min, max)
            .map_err(|m| errors.add(key, m))
            .ok(),
    }
}

/// An optional (nullable) bounded string: Ok(None) when absent or null.
pub(crate) fn optional_str(
    fields: &Fields,
    errors: &mut Errors,
    key: &str,
    min: usize,
    max: usize,
) -> Option<String> {
    fields.present(key).and_then(|v| {
        bounded_str(v, min, max)
            .map_err(|m| errors.add(key, m))
            .ok()
    })
}

pub(crate) fn timestamp(fields: &Fields, errors: &mut Errors) -> Option<i64> {
    match fields.get("timestamp") {
        None => {
            errors.add("timestamp", "Field required");
            None
        }
        Some(v) => {
            let ms = to_epoch_ms(v);
            if ms.is_none() {
                errors.add("timestamp", TIME_MESSAGE);
            }
            ms
        }
    }
}

/// A strict JSON number (no bool, no string), finite, within `[lo, hi]`.
pub(crate) fn strict_float(
    value: &JsonValue,
    lo: f64,
    hi: f64,
    lo_s: &str,
    hi_s: &str,
) -> Result<f64, String> {
    let x = match value {
        JsonValue::Int(i) => *i as f64,
        JsonValue::BigInt(i) => i.to_string().parse::<f64>().unwrap_or(f64::INFINITY),
        JsonValue::Float(f) => *f,
        _ => return Err("Input should be a valid number".into()),
    };
    if !x.is_finite() {
        return Err("Input should be a finite number".into());
    }
    if x < lo {
        return Err(format!("Input should be greater than or equal to {lo_s}"));
    }
    if x > hi {
        return Err(format!("Input should be less than or equal to {hi_s}"));
    }
    Ok(x)
}

/// A lax float, finite (the `score` of a result item): a number, a bool, a numeric string or
/// null; else pydantic's message.
fn lax_finite_float(value: &JsonValue) -> Result<(), &'static str> {
    const FINITE: &str = "Input should be a finite number";
    let x = match value {
        JsonValue::Null | JsonValue::Bool(_) | JsonValue::Int(_) => return Ok(()),
        JsonValue::BigInt(i) => i.to_string().parse::<f64>().unwrap_or(f64::INFINITY),
        JsonValue::Float(f) => *f,
        JsonValue::Str(s) => str_as_float(s)
            .ok_or("Input should be a valid number, unable to parse string as a number")?,
        _ => return Err("Input should be a valid number"),
    };
    if x.is_finite() {
        Ok(())
    } else {
        Err(FINITE)
    }
}

/// pydantic-core's `str_as_float`: the string trimmed, parsed; else, untrimmed, with its
/// underscores removed when none leads, trails or doubles.
fn str_as_float(s: &str) -> Option<f64> {
    if let Ok(x) = s.trim().parse::<f64>() {
        return Some(x);
    }
    if s.contains("__") || s.starts_with('_') || s.ends_with('_') {
        return None;
    }
    s.replace('_', "").parse::<f64>().ok()
}

/// A result item read: its doc id and its team.
type Item = (String, Option<String>);

/// The members of a result item's union after the plain id: (id key, team key, pydantic's name
/// of the member in an error's location).
const ITEM_MEMBERS: [(&str, &str, &str); 2] = [
    ("doc_id", "team", "function-after[_doc_id_of(), ResultItem]"),
    (
        "id",
        "[interleaving]",
        "function-after[_solr_id_of(), SolrDoc]",
    ),
];

/// One object member of a result item's union (`{doc_id, score?, team?}` or Solr's
/// `{id, score?, [interleaving]?}`, a typed dict): the id and team, or its errors as
/// (field, message), in the typed dict's field order ("" for the item itself).
fn item_member(
    value: &JsonValue,
    id_key: &'static str,
    team_key: &'static str,
) -> Result<Item, Vec<(&'static str, String)>> {
    let JsonValue::Object(object) = value else {
        return Err(vec![("", "Input should be an object".into())]);
    };
    let item = Fields(object);
    let mut errs = Vec::new();
    let id = match item.get(id_key) {
        None => {
            errs.push((id_key, "Field required".into()));
            None
        }
        Some(v) => bounded_str(v, 1, MAX_ID_CHARS)
            .map_err(|m| errs.push((id_key, m)))
            .ok(),
    };
    if let Some(Err(m)) = item.get("score").map(lax_finite_float) {
        errs.push(("score", m.into()));
    }
    let team = item.present(team_key).and_then(|v| {
        bounded_str(v, 1, MAX_ID_CHARS)
            .map_err(|m| errs.push((team_key, m)))
            .ok()
    });
    match id {
        Some(id) if errs.is_empty() => Ok((id, team)),
        _ => Err(errs),
    }
}

/// One result item: an id, `{doc_id, score?, team?}` or Solr's `{id, score?, [interleaving]?}`,
/// the first member of the union that accepts it. When none does, every member's errors, as
/// pydantic-core reports a left-to-right union: (location under `results`, message).
fn result_item(value: &JsonValue, index: usize, errs: &mut Vec<(String, String)>) -> Option<Item> {
    // an object item is not tried as a string: that error's message is made only on failure
    let as_id = match value {
        JsonValue::Str(_) => match bounded_str(value, 1, MAX_ID_CHARS) {
            Ok(id) => return Some((id, None)),
            Err(m) => Some(m),
        },
        _ => None,
    };
    let mut members = Vec::with_capacity(ITEM_MEMBERS.len());
    for (id_key, team_key, name) in ITEM_MEMBERS {
        match item_member(value, id_key, team_key) {
            Ok(found) => return Some(found),
            Err(member_errs) => members.push((name, member_errs)),
        }
    }
    let as_id = as_id.unwrap_or_else(|| "Input should be a valid string".into());
    errs.push((format!("results.{index}.constrained-str"), as_id));
    for (name, member_errs) in members {
        for (field, msg) in member_errs {
            let loc = if field.is_empty() {
                format!("results.{index}.{name}")
            } else {
                format!("results.{index}.{name}.{field}")
            };
            errs.push((loc, msg));
        }
    }
    None
}

pub(crate) type Results = (Vec<String>, Option<Vec<Option<String>>>);

/// `results`: pydantic-core's variable tuple of 1..=MAX_RESULTS items. Every item is validated
/// in turn and its errors kept; once more than MAX_RESULTS items passed, the one error is the
/// length (counting the input's items); after the last, no item passing adds `too_short`.
pub(crate) fn results(fields: &Fields, errors: &mut Errors) -> Option<Results> {
    let items: &JsonArray = match fields.get("results") {
        None => {
            errors.add("results", "Field required");
            return None;
        }
        Some(JsonValue::Array(items)) => items,
        Some(_) => {
            errors.add("results", "Input should be a valid array");
            return None;
        }
    };
    let mut doc_ids = Vec::with_capacity(items.len().min(MAX_RESULTS));
    let mut teams = Vec::with_capacity(items.len().min(MAX_RESULTS));
    let mut item_errs = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some((id, team)) = result_item(item, i, &mut item_errs) {
            doc_ids.push(id);
            teams.push(team);
            if doc_ids.len() > MAX_RESULTS {
                errors.add(
                    "results",
                    format!(
                        "Tuple should have at most {MAX_RESULTS} items after validation, not {}",
                        items.len()
                    ),
                );
                return None;
            }
        }
    }
    let failed = !item_errs.is_empty();
    for (loc, msg) in item_errs {
        errors.add(&loc, msg);
    }
    if doc_ids.is_empty() {
        errors.add(
            "results",
            "Tuple should have at least 1 item after validation, not 0",
        );
        return None;
    }
    if failed {
        return None;
    }
    let teams = teams.iter().any(Option::is_some).then_some(teams);
    Some((doc_ids, teams))
}

/// `labels`: pydantic-core's dict of at most MAX_LABELS pairs. A pair is kept only when its key
/// and its value pass (a duplicate key keeps its first place and takes the last value); once
/// more than MAX_LABELS were kept, the one error is the length (the pairs' errors dropped).
fn labels(fields: &Fields, errors: &mut Errors) -> Option<Vec<(String, String)>> {
    let object = match fields.present("labels") {
        None => return Some(Vec::new()),
        Some(JsonValue::Object(object)) => object,
        Some(_) => {
            errors.add("labels", "Input should be an object");
            return None;
        }
    };
    let mut out: Vec<(String, String)> = Vec::new();
    let mut pair_errs: Vec<(String, String)> = Vec::new();
    for (key, value) in object.iter() {
        let key_ok = match bounded_str(&JsonValue::Str(Cow::Borrowed(key)), 1, MAX_LABEL_KEY_CHARS)
        {
            Ok(_) => true,
            Err(m) => {
                pair_errs.push((format!("labels.{key}.[key]"), m));
                false
            }
        };
        match bounded_str(value, 0, MAX_LABEL_VALUE_CHARS) {
            Ok(v) if key_ok => {
                if let Some(slot) = out.iter_mut().find(|(k, _)| k == key) {
                    slot.1 = v;
                } else {
                    out.push((key.to_string(), v));
                }
            }
            Ok(_) => {}
            Err(m) => pair_errs.push((format!("labels.{key}"), m)),
        }
        if out.len() > MAX_LABELS {
            errors.add(
                "labels",
                format!(
                    "Dictionary should have at most {MAX_LABELS} items after validation, not more"
                ),
            );
            return None;
        }
    }
    if pair_errs.is_empty() {
        return Some(out);
    }
    for (loc, msg) in pair_errs {
        errors.add(&loc, msg);
    }
    None
}

/// `query_id_from` of models.py: the normalized query, bounded.
pub(crate) fn query_id_from(query: &str) -> Result<String, String> {
    let normalized = normalize_query(query);
    if chars(&normalized) > MAX_QUERY_CHARS {
        return Err(format!(
            "normalized query longer than {MAX_QUERY_CHARS} characters"
        ));
    }
    Ok(normalized)
}

pub(crate) fn impression(fields: &Fields) -> Result<Event, Invalid> {
    let mut errors = Errors::new("impression");
    let request_id = required_str(fields, &mut errors, "request_id", 1, MAX_ID_CHARS);
    let timestamp = timestamp(fields, &mut errors);
    let results = results(fields, &mut errors);
    let query = optional_str(fields, &mut errors, "query", 0, MAX_QUERY_CHARS);
    let query_id = optional_str(fields, &mut errors, "query_id", 1, MAX_ID_CHARS);
    let labels = labels(fields, &mut errors);
    let event_id = optional_str(fields, &mut errors, "event_id", 1, MAX_ID_CHARS);
    errors.finish()?;
    let errors = Errors::new("impression");
    let (Some(request_id), Some(timestamp), Some((doc_ids, teams)), Some(labels)) =
        (request_id, timestamp, results, labels)
    else {
        return Err(invalid("schema", "impression: inconsistent validation"));
    };
    let query_id = match (query_id, &query) {
        (Some(id), _) => id,
        (None, Some(q)) => query_id_from(q).map_err(|m| errors.model(&m))?,
        (None, None) => String::new(),
    };
    Ok(Event::Impression(Impression {
        request_id,
        timestamp,
        doc_ids,
        query,
        query_id,
        labels,
        event_id,
        teams,
    }))
}

/// A click's `action` string as pydantic-core reads it: stripped, then the length bounds, then
/// lower-cased.
pub(crate) fn action_of(s: &str) -> Option<String> {
    let stripped = s.trim();
    let n = chars(stripped);
    (1..=MAX_ACTION_CHARS)
        .contains(&n)
        .then(|| stripped.to_lowercase())
}

pub(crate) fn click(fields: &Fields) -> Result<Event, Invalid> {
    let mut errors = Errors::new("click");
    let request_id = required_str(fields, &mut errors, "request_id", 1, MAX_ID_CHARS);
    let doc_id = required_str(fields, &mut errors, "doc_id", 1, MAX_ID_CHARS);
    let timestamp = timestamp(fields, &mut errors);
    let action = match fields.present("action") {
        None => Some("click".to_owned()),
        Some(JsonValue::Str(s)) => action_of(s),
        Some(_) => None,
    };
    if action.is_none() {
        errors.add(
            "action",
            format!("Input should be a string of 1..{MAX_ACTION_CHARS} characters, or null"),
        );
    }
    let dwell_ms = match fields.present("dwell_ms") {
        None => Ok(None),
        Some(v) => strict_float(v, 0.0, MAX_DWELL_MS, "0", "1000000000000").map(Some),
    }
    .map_err(|m| errors.add("dwell_ms", m))
    .ok();
    let position = match fields.present("position") {
        None => Ok(None),
        Some(JsonValue::Int(i)) if *i < 1 => {
            Err("Input should be greater than or equal to 1".into())
        }
        Some(JsonValue::Int(i)) if *i > MAX_POSITION => Err(format!(
            "Input should be less than or equal to {MAX_POSITION}"
        )),
        Some(JsonValue::Int(i)) => Ok(Some(*i)),
        Some(JsonValue::BigInt(i)) if i.sign() == num_bigint::Sign::Minus => {
            Err("Input should be greater than or equal to 1".into())
        }
        Some(JsonValue::BigInt(_)) => Err(format!(
            "Input should be less than or equal to {MAX_POSITION}"
        )),
        Some(_) => Err("Input should be a valid integer".to_owned()),
    }
    .map_err(|m: String| errors.add("position", m))
    .ok();
    let event_id = optional_str(fields, &mut errors, "event_id", 1, MAX_ID_CHARS);
    errors.finish()?;
    let (
        Some(request_id),
        Some(doc_id),
        Some(timestamp),
        Some(action),
        Some(dwell_ms),
        Some(position),
    ) = (request_id, doc_id, timestamp, action, dwell_ms, position)
    else {
        return Err(invalid("schema", "click: inconsistent validation"));
    };
    Ok(Event::Click(Click {
        request_id,
        doc_id,
        timestamp,
        action,
        dwell_ms,
        position,
        event_id,
    }))
}

pub(crate) fn judgment(fields: &Fields) -> Result<Event, Invalid> {
    let mut errors = Errors::new("judgment");
    let query_id = optional_str(fields, &mut errors, "query_id", 1, MAX_ID_CHARS);
    let query = optional_str(fields, &mut errors, "query", 0, MAX_QUERY_CHARS);
    let doc_id = required_str(fields, &mut errors, "doc_id", 1, MAX_ID_CHARS);
    let grade = match fields.get("grade") {
        None => Err("Field required".to_owned()),
        Some(v) => strict_float(v, MIN_GRADE, MAX_GRADE, "-1000", "1000"),
    }
    .map_err(|m| errors.add("grade", m))
    .ok();
    let timestamp = timestamp(fields, &mut errors);
    let judge = match fields.present("judge") {
        None => Some(String::new()),
        Some(v) => bounded_str(v, 0, MAX_JUDGE_CHARS).ok(),
    };
    if judge.is_none() {
        errors.add(
            "judge",
            format!("Input should be a string of at most {MAX_JUDGE_CHARS} characters, or null"),
        );
    }
    let event_id = optional_str(fields, &mut errors, "event_id", 1, MAX_ID_CHARS);
    errors.finish()?;
    let errors = Errors::new("judgment");
    let (Some(doc_id), Some(grade), Some(timestamp), Some(judge)) =
        (doc_id, grade, timestamp, judge)
    else {
        return Err(invalid("schema", "judgment: inconsistent validation"));
    };
    let query_id = match (query_id, &query) {
        (Some(id), _) => id,
        (None, None) => return Err(errors.model("a judgment needs query_id or query")),
        (None, Some(q)) => {
            let id = query_id_from(q).map_err(|m| errors.model(&m))?;
            if id.is_empty() {
                return Err(errors.model("query is empty after normalization"));
            }
            id
        }
    };
    Ok(Event::Judgment(Judgment {
        query_id,
        query,
        doc_id,
        grade,
        timestamp,
        judge,
        event_id,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reason (or event type) of each input, as the Python decoder answers it.
    #[test]
    fn reasons() {
        let cases: &[(&[u8], &str)] = &[
            (b"\xff", "bad_encoding"),
            (b"{\"type\":\"click\",\"request_id\":\"\xff\"}", "bad_encoding"),
            (b"", "bad_json"),
            (b"{", "bad_json"),
            (b"{} x", "bad_json"),
            (b"{\"type\":\"click\",\"request_id\":\"\\ud800\"}", "bad_json"),
            (b"[]", "schema"),
            (b"null", "schema"),
            (b"{}", "schema"),
            (b"{\"type\":\"foo\"}", "unknown_type"),
            (b"{\"type\":5}", "unknown_type"),
            (b"{\"type\":null}", "unknown_type"),
            (b"{\"type\":\"click\"}", "schema"),
            (
                b"{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1}",
                "click",
            ),
            (
                b"\xef\xbb\xbf{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1}",
                "click",
            ),
            (
                b"{\"type\":\"impression\",\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1}",
                "click",
            ),
            (
                b"{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1,\"position\":1.0}",
                "schema",
            ),
            (
                b"{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1,\"dwell_ms\":NaN}",
                "schema",
            ),
            (
                b"{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1,\"position\":123456789012345678901234567890}",
                "schema",
            ),
            (
                b"{\"type\":\"impression\",\"request_id\":\"r\",\"timestamp\":1,\"results\":[]}",
                "schema",
            ),
            (
                b"{\"type\":\"impression\",\"request_id\":\"r\",\"timestamp\":1,\"results\":[{\"doc_id\":\"a\",\"score\":\"1_0\"}]}",
                "impression",
            ),
            (
                b"{\"type\":\"impression\",\"request_id\":\"r\",\"timestamp\":1,\"results\":[{\"doc_id\":\"a\",\"score\":\"inf\"}]}",
                "schema",
            ),
            (
                b"{\"type\":\"judgment\",\"doc_id\":\"d\",\"grade\":1,\"timestamp\":1}",
                "schema",
            ),
            (
                b"{\"type\":\"judgment\",\"doc_id\":\"d\",\"grade\":1,\"timestamp\":1,\"query\":\" \"}",
                "schema",
            ),
            (
                b"{\"type\":\"judgment\",\"doc_id\":\"d\",\"grade\":1000,\"timestamp\":1,\"query\":\"q\"}",
                "judgment",
            ),
        ];
        for &(raw, want) in cases {
            let got = match decode_native(raw, 1 << 20) {
                Ok(Event::Impression(_)) => "impression",
                Ok(Event::Click(_)) => "click",
                Ok(Event::Judgment(_)) => "judgment",
                Err(invalid) => invalid.reason,
            };
            assert_eq!(got, want, "{}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn deep_nesting_is_bad_json() {
        let raw = format!(
            "{{\"type\":\"click\",\"x\":{}{}}}",
            "[".repeat(300),
            "]".repeat(300)
        );
        assert_eq!(
            decode_native(raw.as_bytes(), 1 << 20).unwrap_err().reason,
            "bad_json"
        );
    }

    #[test]
    fn too_large_before_parsing() {
        let invalid = decode_native(b"not json at all", 3).unwrap_err();
        assert_eq!(invalid.reason, "too_large");
        assert_eq!(invalid.detail, "record of 15 bytes, over the cap of 3");
    }

    #[test]
    fn impression_fields() {
        let raw = br#"{"type":"impression","request_id":"r","timestamp":"1970-01-01T00:00:01.5Z",
            "results":["a",{"doc_id":"b","team":"T"},{"id":"c"}],"query":" Red  SHOES ",
            "labels":{"k":"v","k":"w","j":"x"},"event_id":null}"#;
        let Ok(Event::Impression(e)) = decode_native(raw, 1 << 20) else {
            panic!("not an impression");
        };
        assert_eq!(e.timestamp, 1500);
        assert_eq!(e.doc_ids, ["a", "b", "c"]);
        assert_eq!(e.teams, Some(vec![None, Some("T".into()), None]));
        assert_eq!(e.query_id, "red shoes");
        assert_eq!(
            e.labels,
            [("k".into(), "w".into()), ("j".into(), "x".into())]
        );
        assert_eq!(e.event_id, None);
    }

    #[test]
    fn click_fields() {
        let raw = br#"{"type":"click","request_id":"r","doc_id":"d","timestamp":2.9,
            "action":"  PURCHASE ","dwell_ms":5,"position":3}"#;
        let Ok(Event::Click(e)) = decode_native(raw, 1 << 20) else {
            panic!("not a click");
        };
        assert_eq!((e.timestamp, e.action.as_str()), (2, "purchase"));
        assert_eq!((e.dwell_ms, e.position), (Some(5.0), Some(3)));
    }

    #[test]
    fn safe_detail_escapes_and_cuts() {
        assert_eq!(safe_detail("a\nb\x01", 300), "a\\nb\\x01");
        assert_eq!(safe_detail(&"x".repeat(10), 8), "xxxxx...");
        // str.isprintable refuses format and separator characters too, not only controls
        assert_eq!(
            safe_detail("\u{ad}\u{200b}\u{a0}\u{2028}\u{e0001}é ", 300),
            "\\xad\\u200b\\xa0\\u2028\\U000e0001é "
        );
        // cut, escaped, and cut again when the escapes made it longer
        assert_eq!(safe_detail(&"\u{7f}".repeat(5), 8), r"\x7f\...");
    }

    fn detail(raw: &[u8]) -> String {
        decode_native(raw, 1 << 20).unwrap_err().detail
    }

    #[test]
    fn python_repr_of_floats() {
        let cases = [
            (1e16, "1e+16"),
            (1.5e16, "1.5e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (1e-5, "1e-05"),
            (-0.0, "-0.0"),
            (5e-324, "5e-324"),
            (123.25, "123.25"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (f64::INFINITY, "inf"),
            (f64::NAN, "nan"),
        ];
        for (x, want) in cases {
            let mut out = String::new();
            push_py_repr_float(x, &mut out);
            assert_eq!(out, want);
        }
    }

    #[test]
    fn unknown_type_shows_the_python_value() {
        let cases: &[(&[u8], &str)] = &[
            (
                br#"{"type":[1.5,null,true]}"#,
                "unknown type '[1.5, None, True]'",
            ),
            (
                br#"{"type":{"a":1,"b":"x","a":2}}"#,
                r#"unknown type "{'a': 2, 'b': 'x'}""#,
            ),
            (br#"{"type":"it's"}"#, r#"unknown type "it's""#),
            (br#"{"type":"a\\b"}"#, r"unknown type 'a\\b'"),
            (br#"{"type":1E400}"#, "unknown type 'inf'"),
            (br#"{"type":"\u00ad"}"#, r"unknown type '\\xad'"),
            (
                br#"{"type":["yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"]}"#,
                r#"unknown type "['yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...""#,
            ),
        ];
        for &(raw, want) in cases {
            assert_eq!(detail(raw), want, "{}", String::from_utf8_lossy(raw));
        }
    }

    #[test]
    fn failing_result_items_count_every_member() {
        let head = r#"{"type":"impression","request_id":"r","timestamp":1,"results":"#;
        let with = |results: &str| format!("{head}{results}}}");
        // [5]: the string, the two objects, then no item passed: 4 errors
        assert_eq!(
            detail(with("[5]").as_bytes()),
            "impression.results.0.constrained-str: Input should be a valid string (+3 more)"
        );
        // a good item after a bad one: no too_short; the bad one fails each member's fields
        assert_eq!(
            detail(with(r#"[{"doc_id":"","score":"x"},"a"]"#).as_bytes()),
            "impression.results.0.constrained-str: Input should be a valid string (+4 more)"
        );
        // more than 1000 items passed: the length alone, counting every item
        let many = format!("[5{}]", r#","a""#.repeat(1001));
        assert_eq!(
            detail(with(&many).as_bytes()),
            "impression.results: Tuple should have at most 1000 items after validation, not 1002"
        );
        // labels: a pair with a bad key is not kept (33 pairs, 32 kept: no length error); over
        // 32 kept, the length is the one error
        let pairs: String = (0..32).map(|i| format!(r#","k{i}":"v""#)).collect();
        let labels = |extra: &str| format!(r#"{head}["a"],"labels":{{"":"v"{pairs}{extra}}}}}"#);
        assert_eq!(
            detail(labels("").as_bytes()),
            "impression.labels..[key]: String should have at least 1 character"
        );
        assert_eq!(
            detail(labels(r#","k32":"v""#).as_bytes()),
            "impression.labels: Dictionary should have at most 32 items after validation, not more"
        );
        assert_eq!(str_as_float("1_e5"), Some(1e5));
        assert_eq!(str_as_float(" 1_0"), None);
        assert_eq!(str_as_float("\u{a0}2 "), Some(2.0));
    }
}
