//! One record (bytes) -> a native event or an invalid reason, as `decode_native` of
//! `streameval/events/decode.py` answers it (DESIGN §2): the same JSON parser as pydantic-core
//! (jiter: the same errors, nesting limit, big integers, last duplicate key wins), the same field
//! rules, bounds and normalization, and the same invalid `reason` for every input. The `detail`
//! follows pydantic's wording for the common errors (first error, `(+n more)`), not for all.

use std::borrow::Cow;

use jiter::{JsonArray, JsonObject, JsonValue};

use crate::bounds::*;
use crate::event_time::to_epoch_ms;
use crate::normalize::normalize_query;

pub const MAX_DETAIL_CHARS: usize = 300;
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

/// `safe_detail` of decode.py: cut to `limit` characters, control characters escaped.
pub fn safe_detail(text: &str, limit: usize) -> String {
    let cut = |s: &str| -> String {
        if s.chars().count() > limit {
            let mut out: String = s.chars().take(limit - 3).collect();
            out.push_str("...");
            out
        } else {
            s.to_owned()
        }
    };
    let text = cut(text);
    if text.chars().all(|c| !c.is_control()) {
        return text;
    }
    let escaped: String = text
        .chars()
        .map(|c| {
            if c.is_control() {
                match c {
                    '\t' => "\\t".into(),
                    '\n' => "\\n".into(),
                    '\r' => "\\r".into(),
                    c if (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
                    c => format!("\\u{:04x}", c as u32),
                }
            } else {
                c.to_string()
            }
        })
        .collect();
    cut(&escaped)
}

/// Decode one record of a source declared native. Never panics on any input.
pub fn decode_native(raw: &[u8], max_bytes: usize) -> Result<Event, Invalid> {
    if raw.len() > max_bytes {
        return Err(invalid(
            "too_large",
            format!("record of {} bytes, over the cap of {max_bytes}", raw.len()),
        ));
    }
    let value = match JsonValue::parse(raw, true) {
        Ok(value) => value,
        Err(err) => {
            if let Some(rest) = raw.strip_prefix(UTF8_BOM) {
                return decode_native(rest, usize::MAX);
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
        Some(JsonValue::Str(tag)) => match tag.as_ref() {
            "impression" => impression(&fields),
            "click" => click(&fields),
            "judgment" => judgment(&fields),
            other => Err(unknown_type(other)),
        },
        Some(other) => Err(unknown_type(&python_str(other))),
    }
}

/// Python: ``f"unknown type {safe_detail(str(tag), 40)!r}"`` (a string's repr approximated by
/// single quotes; pydantic's str of an array or object is not reproduced).
pub(crate) fn unknown_type(tag: &str) -> Invalid {
    invalid(
        "unknown_type",
        format!("unknown type '{}'", safe_detail(tag, 40)),
    )
}

/// `str()` of the Python value pydantic hands over as the discriminator (the scalars only).
pub(crate) fn python_str(value: &JsonValue) -> String {
    match value {
        JsonValue::Null => "None".into(),
        JsonValue::Bool(true) => "True".into(),
        JsonValue::Bool(false) => "False".into(),
        JsonValue::Int(i) => i.to_string(),
        JsonValue::BigInt(i) => i.to_string(),
        JsonValue::Float(f) => format!("{f:?}"),
        JsonValue::Str(s) => s.to_string(),
        JsonValue::Array(_) => "[...]".into(),
        JsonValue::Object(_) => "{...}".into(),
    }
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

/// A lax float (the `score` of a result item): a number, a bool, or a numeric string; finite.
pub(crate) fn lax_finite_float(value: &JsonValue) -> bool {
    match value {
        JsonValue::Null | JsonValue::Bool(_) | JsonValue::Int(_) => true,
        JsonValue::BigInt(i) => i.to_string().parse::<f64>().is_ok_and(|f| f.is_finite()),
        JsonValue::Float(f) => f.is_finite(),
        JsonValue::Str(s) => str_as_finite_float(s),
        _ => false,
    }
}

/// pydantic-core's float from a string: white space trimmed, `_` only between digits.
fn str_as_finite_float(s: &str) -> bool {
    let s = s.trim();
    let bytes = s.as_bytes();
    let mut cleaned = String::with_capacity(s.len());
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'_' {
            let before = i > 0 && bytes[i - 1].is_ascii_digit();
            let after = bytes.get(i + 1).is_some_and(|c| c.is_ascii_digit());
            if !(before && after) {
                return false;
            }
        } else {
            cleaned.push(b as char);
        }
    }
    cleaned.parse::<f64>().is_ok_and(|f| f.is_finite())
}

/// One result item: an id, `{doc_id, score?, team?}` or Solr's `{id, score?, [interleaving]?}`.
fn result_item(value: &JsonValue) -> Option<(String, Option<String>)> {
    if let JsonValue::Str(_) = value {
        return bounded_str(value, 1, MAX_ID_CHARS)
            .ok()
            .map(|id| (id, None));
    }
    let JsonValue::Object(object) = value else {
        return None;
    };
    let item = Fields(object);
    for (id_key, team_key) in [("doc_id", "team"), ("id", "[interleaving]")] {
        let Some(Ok(id)) = item.get(id_key).map(|v| bounded_str(v, 1, MAX_ID_CHARS)) else {
            continue;
        };
        if !item.get("score").is_none_or(lax_finite_float) {
            continue;
        }
        let team = match item.present(team_key) {
            None => None,
            Some(v) => match bounded_str(v, 1, MAX_ID_CHARS) {
                Ok(team) => Some(team),
                Err(_) => continue,
            },
        };
        return Some((id, team));
    }
    None
}

type Results = (Vec<String>, Option<Vec<Option<String>>>);

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
    let mut doc_ids = Vec::with_capacity(items.len());
    let mut teams = Vec::with_capacity(items.len());
    let mut failed = false;
    for (i, item) in items.iter().enumerate() {
        match result_item(item) {
            Some((id, team)) => {
                doc_ids.push(id);
                teams.push(team);
            }
            None => {
                failed = true;
                errors.add(
                    &format!("results.{i}.constrained-str"),
                    "Input should be a valid string",
                );
            }
        }
    }
    if failed {
        return None;
    }
    if items.is_empty() {
        errors.add(
            "results",
            "Tuple should have at least 1 item after validation, not 0",
        );
        return None;
    }
    if items.len() > MAX_RESULTS {
        errors.add(
            "results",
            format!(
                "Tuple should have at most {MAX_RESULTS} items after validation, not {}",
                items.len()
            ),
        );
        return None;
    }
    let teams = teams.iter().any(Option::is_some).then_some(teams);
    Some((doc_ids, teams))
}

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
    let mut ok = true;
    for (key, value) in object.iter() {
        if let Err(m) = bounded_str(&JsonValue::Str(Cow::Borrowed(key)), 1, MAX_LABEL_KEY_CHARS) {
            errors.add(&format!("labels.{key}.[key]"), m);
            ok = false;
        }
        match bounded_str(value, 0, MAX_LABEL_VALUE_CHARS) {
            Ok(v) => {
                if let Some(slot) = out.iter_mut().find(|(k, _)| k == key) {
                    slot.1 = v;
                } else {
                    out.push((key.to_string(), v));
                }
            }
            Err(m) => {
                errors.add(&format!("labels.{key}"), m);
                ok = false;
            }
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
    ok.then_some(out)
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

pub(crate) fn click(fields: &Fields) -> Result<Event, Invalid> {
    let mut errors = Errors::new("click");
    let request_id = required_str(fields, &mut errors, "request_id", 1, MAX_ID_CHARS);
    let doc_id = required_str(fields, &mut errors, "doc_id", 1, MAX_ID_CHARS);
    let timestamp = timestamp(fields, &mut errors);
    let action = match fields.present("action") {
        None => Some("click".to_owned()),
        Some(JsonValue::Str(s)) => {
            // pydantic-core: strip, then the length bounds, then lower-case
            let stripped = s.trim();
            let n = chars(stripped);
            if (1..=MAX_ACTION_CHARS).contains(&n) {
                Some(stripped.to_lowercase())
            } else {
                None
            }
        }
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
    }
}
