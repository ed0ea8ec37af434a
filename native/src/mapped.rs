//! Mapped JSON formats (DESIGN §11): a team's own records read as native events through a
//! mapping of JSON Pointers, as `streameval/events/mapping.py` (`MappedJsonDecoder`, `Mapper`)
//! and `mapped_schema.py` answer them. Built once from the mapping's settings (the JSON of
//! `MappingSettings`, already validated by the configuration), then `decode(raw)` per record.
//!
//! The Python decoder validates a record with one pydantic-core schema: per event type the
//! native model's fields read at the team's pointers. Its answer for an invalid record is the
//! FIRST error in field order (the native model's fields, then the labels), named by the
//! pointer: `"<pointer> (the <type>'s <field>): <message>"`, reason `mapping`.

use jiter::JsonValue;

use crate::bounds::*;
use crate::decode::{
    bounded_str, invalid, query_id_from, safe_detail, strict_float, Click, Event, Impression,
    Invalid, Judgment, UTF8_BOM,
};
use crate::mapped_fields::{
    action, action_unhashable, id, label, optional, position, results, Get,
};
use crate::mapped_time::{self, Unit};
use crate::pointer::Token;
use crate::pyvalue::{py_str, str_repr};
use crate::ubi::{not_json, too_large};

/// One mapped field: the native field's name, the team's pointer, and its compiled path.
#[derive(Debug, Clone)]
pub struct Field {
    pub name: String,
    pub pointer: String,
    pub path: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Impression,
    Click,
    Judgment,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Impression => "impression",
            Kind::Click => "click",
            Kind::Judgment => "judgment",
        }
    }
}

/// One event type of a mapping, compiled.
#[derive(Debug, Clone)]
pub struct EventSpec {
    pub kind: Kind,
    /// every mapped field in the native model's order, the labels last (`labels.<name>`)
    pub fields: Vec<Field>,
    pub result_item: Vec<Token>,
    pub constant_labels: Vec<(String, String)>,
    pub actions: Vec<(String, String)>,
    pub default_action: String,
    pub position_base: i64,
}

/// A field's failure: its name, an array index within it (a result), and pydantic's message.
pub struct Failure {
    pub name: &'static str,
    pub index: Option<usize>,
    pub msg: String,
}

/// A mapped decoder: the compiled mapping and the size cap.
#[derive(Debug, Clone)]
pub struct MappedDecoder {
    pub(crate) type_field: Option<(String, Vec<Token>)>,
    pub(crate) events: Vec<EventSpec>,
    pub(crate) by_value: Vec<(String, usize)>,
    pub(crate) unit: Unit,
    pub(crate) max_bytes: usize,
}

impl MappedDecoder {
    /// Decode one record (`MappedJsonDecoder.__call__`): the event, or why not and the
    /// record's field (a pointer) that did not map (`Invalid.field`). Never panics.
    pub fn decode(&self, raw: &[u8]) -> Result<Event, (Invalid, String)> {
        if raw.len() > self.max_bytes {
            return Err((too_large(raw.len(), self.max_bytes), String::new()));
        }
        let raw = raw.strip_prefix(UTF8_BOM).unwrap_or(raw);
        let record =
            JsonValue::parse(raw, true).map_err(|err| (not_json(raw, &err), String::new()))?;
        if !matches!(record, JsonValue::Object(_)) {
            return Err(mapping("record is not an object", ""));
        }
        let spec = match &self.type_field {
            None => &self.events[0],
            Some((pointer, path)) => {
                let Some(tag) = crate::pointer::lookup(&record, path) else {
                    // not cut nor escaped: the pointer is the configuration's
                    let detail = format!("{pointer}: missing (the type field)");
                    let reason = "mapping";
                    return Err((Invalid { reason, detail }, pointer.clone()));
                };
                let found = match tag {
                    JsonValue::Str(s) => self.by_value.iter().find(|(v, _)| v == s.as_ref()),
                    _ => None,
                };
                let Some(&(_, i)) = found else {
                    let tag = safe_detail(&py_str(tag), 40);
                    return Err((
                        invalid("unknown_type", format!("unknown type {}", str_repr(&tag))),
                        String::new(),
                    ));
                };
                &self.events[i]
            }
        };
        let get = Get {
            record: &record,
            spec,
        };
        if let Some(name) = exception(self.unit, &get) {
            return Err(self.refused(
                spec,
                Failure {
                    name,
                    index: None,
                    msg: String::new(),
                },
            ));
        }
        let event = match spec.kind {
            Kind::Impression => self.impression(&get),
            Kind::Click => self.click(&get),
            Kind::Judgment => self.judgment(&get),
        };
        event.map_err(|failure| self.refused(spec, failure))
    }

    /// `Mapper._refused`: the pointer and field an error is about (`field_of`: the first
    /// mapped field with the longest pointer that is a prefix of the failing one).
    fn refused(&self, spec: &EventSpec, failure: Failure) -> (Invalid, String) {
        if let Some(error) = failure.name.strip_prefix('!') {
            return (
                invalid("bad_json", format!("unexpected {error}")),
                String::new(),
            );
        }
        let field = match failure.name {
            "" => None,
            // a label's failure names its field by position
            "labels" => failure.index.and_then(|i| spec.fields.get(i)),
            name => spec.fields.iter().find(|f| f.name == name),
        };
        let Some(field) = field else {
            return mapping(&format!("(record): {}", failure.msg), "");
        };
        let mut loc = field.path.clone();
        if let (Some(i), "results") = (failure.index, failure.name) {
            loc.push(Token::Index(i));
        }
        let mut best: Option<&Field> = None;
        for f in &spec.fields {
            if loc.starts_with(&f.path) && best.is_none_or(|b| f.path.len() > b.path.len()) {
                best = Some(f);
            }
        }
        let best = best.unwrap_or(field);
        let mut pointer = best.pointer.clone();
        if best.name == "results" {
            if let Some(Token::Index(i)) = loc.get(best.path.len()) {
                pointer = format!("{pointer}/{i}");
            }
        }
        let name = &best.name;
        let detail = format!(
            "{pointer} (the {}'s {name}): {}",
            spec.kind.name(),
            failure.msg
        );
        mapping(&detail, &pointer)
    }

    fn impression(&self, get: &Get) -> Result<Event, Failure> {
        let request_id = id(get, "request_id")?.unwrap_or_default();
        let timestamp = self.timestamp(get)?;
        let doc_ids = results(get)?;
        let query = optional(get, "query", |v| bounded_str(v, 0, MAX_QUERY_CHARS))?;
        let query_id = optional(get, "query_id", crate::mapped_fields::id_value)?;
        let event_id = optional(get, "event_id", crate::mapped_fields::id_value)?;
        let mut labels = get.spec.constant_labels.clone();
        for field in &get.spec.fields {
            if let Some(name) = field.name.strip_prefix("labels.") {
                if let Some(text) = label(get, field)? {
                    match labels.iter_mut().find(|(k, _)| k == name) {
                        Some(slot) => slot.1 = text,
                        None => labels.push((name.to_owned(), text)),
                    }
                }
            }
        }
        let query_id = match query_id.filter(|q| !q.is_empty()) {
            Some(q) => q,
            None => match &query {
                None => String::new(),
                Some(q) => query_id_from(q).map_err(|m| model_error(&m))?,
            },
        };
        Ok(Event::Impression(Impression {
            request_id,
            timestamp,
            doc_ids,
            query,
            query_id,
            labels,
            event_id,
            teams: None,
        }))
    }

    fn click(&self, get: &Get) -> Result<Event, Failure> {
        let request_id = id(get, "request_id")?.unwrap_or_default();
        let doc_id = id(get, "doc_id")?.unwrap_or_default();
        let timestamp = self.timestamp(get)?;
        let action = action(get)?;
        let dwell_ms = optional(get, "dwell_ms", |v| {
            strict_float(v, 0.0, MAX_DWELL_MS, "0", "1000000000000")
        })?;
        let position = position(get)?;
        let event_id = optional(get, "event_id", crate::mapped_fields::id_value)?;
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

    fn judgment(&self, get: &Get) -> Result<Event, Failure> {
        let query_id = optional(get, "query_id", crate::mapped_fields::id_value)?;
        let query = optional(get, "query", |v| bounded_str(v, 0, MAX_QUERY_CHARS))?;
        let doc_id = id(get, "doc_id")?.unwrap_or_default();
        let grade = get
            .required("grade", |v| {
                strict_float(v, MIN_GRADE, MAX_GRADE, "-1000", "1000")
            })?
            .unwrap_or_default();
        let timestamp = self.timestamp(get)?;
        let judge = optional(get, "judge", |v| {
            bounded_str(v, 0, MAX_JUDGE_CHARS).map_err(|_| {
                format!("Input should be a string of at most {MAX_JUDGE_CHARS} characters, or null")
            })
        })?
        .unwrap_or_default();
        let event_id = optional(get, "event_id", crate::mapped_fields::id_value)?;
        let query_id = match query_id.filter(|q| !q.is_empty()) {
            Some(q) => q,
            None => match &query {
                None => return Err(model_error("a judgment needs query_id or query")),
                Some(q) => {
                    let id = query_id_from(q).map_err(|m| model_error(&m))?;
                    if id.is_empty() {
                        return Err(model_error("query is empty after normalization"));
                    }
                    id
                }
            },
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

    fn timestamp(&self, get: &Get) -> Result<i64, Failure> {
        Ok(get
            .required("timestamp", |v| mapped_time::read(self.unit, v))?
            .unwrap_or_default())
    }
}

fn model_error(msg: &str) -> Failure {
    Failure {
        name: "",
        index: None,
        msg: format!("Value error, {msg}"),
    }
}

fn mapping(detail: &str, field: &str) -> (Invalid, String) {
    (invalid("mapping", detail), field.to_owned())
}

/// The exception the Python decoder's pydantic schema raises for this record, if any (it
/// ends the validation at once, whatever the other fields' errors; the decoder answers
/// `bad_json`, "unexpected <exception>"): an `us` timestamp too large for a float's division,
/// an action that cannot be a key of the action table (a list or an object).
fn exception(unit: Unit, get: &Get) -> Option<&'static str> {
    if let Some(Some(t)) = get.value("timestamp") {
        if mapped_time::overflows(unit, t) {
            return Some("!OverflowError");
        }
    }
    if get.spec.kind == Kind::Click && action_unhashable(get) {
        return Some("!TypeError");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHOP: &str = r#"{"type_field":"/kind","timestamp_unit":"s",
        "impression":{"when":["search"],"request_id":"/req","timestamp":"/at","query":"/q",
            "results":"/hits","result_doc_id":"/item/id","labels":{"ranker":"/model"},
            "constant_labels":{"site":"shop"}},
        "click":{"when":["tap","buy"],"request_id":"/req","doc_id":"/item","timestamp":"/at",
            "action":"/kind","actions":{"tap":"click","buy":"purchase"},"position":"/rank",
            "position_base":0},
        "judgment":{"when":["grade"],"query_id":"/qid","doc_id":"/item","grade":"/g",
            "timestamp":"/at","judge":"/who"}}"#;

    fn answer(raw: &str) -> String {
        let decoder = MappedDecoder::new(SHOP.as_bytes(), 1 << 20).unwrap();
        match decoder.decode(raw.as_bytes()) {
            Ok(Event::Impression(e)) => format!("{:?} {:?} {}", e.doc_ids, e.labels, e.timestamp),
            Ok(Event::Click(e)) => format!("{} {:?} {}", e.action, e.position, e.doc_id),
            Ok(Event::Judgment(e)) => format!("{} {}", e.query_id, e.grade),
            Err((i, field)) => format!("{}: {} [{field}]", i.reason, i.detail),
        }
    }

    #[test]
    fn shop_records() {
        let cases = [
            (
                r#"{"kind":"search","req":1,"at":1.5,"hits":[{"item":{"id":"a"}},{"item":{"id":2}}],"model":1e16}"#,
                r#"["a", "2"] [("site", "shop"), ("ranker", "1e+16")] 1500"#,
            ),
            (r#"{"kind":"buy","req":"r","item":5,"at":1,"rank":0}"#, "purchase Some(1) 5"),
            (r#"{"kind":"grade","qid":"q","item":"a","g":-3,"at":1}"#, "q -3"),
            (r#"{}"#, "mapping: /kind: missing (the type field) [/kind]"),
            (r#"[1]"#, "mapping: record is not an object []"),
            (r#"{"kind":["x"]}"#, r#"unknown_type: unknown type "['x']" []"#),
            (
                r#"{"kind":"search","req":"r","at":1,"hits":[{"item":{"id":"a"}},{"x":1}]}"#,
                "mapping: /hits/1 (the impression's results): missing [/hits/1]",
            ),
            (
                r#"{"kind":"search","req":"r","at":1,"hits":[{"item":{"id":"a"}}],"model":[]}"#,
                "mapping: /model (the impression's labels.ranker): Input should be a valid string [/model]",
            ),
            (
                r#"{"kind":"grade","item":"a","g":1,"at":1}"#,
                "mapping: (record): Value error, a judgment needs query_id or query []",
            ),
            (
                r#"{"kind":"tap","req":"r","item":"a","at":"noon"}"#,
                "mapping: /at (the click's timestamp): Value error, expected a number of epoch seconds [/at]",
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(answer(raw), want, "{raw}");
        }
    }

    #[test]
    fn configuration_errors() {
        let bad = br#"{"impression":{"request_id":"","timestamp":"/t","results":"/r"}}"#;
        assert_eq!(
            MappedDecoder::new(bad, 1).unwrap_err(),
            "input.mappings: impression.request_id cannot be the whole record"
        );
    }
}
