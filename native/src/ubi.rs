//! OpenSearch User Behavior Insights (UBI) records read as native events, and the decoder of a
//! source of either kind told apart by shape: `decode_ubi` and `decode` of
//! `streameval/events/decode.py` with `streameval/events/ubi.py` (DESIGN §2), the same events
//! and the same invalid reasons and details.
//!
//! `decode` (format `auto`): bytes without `"type"` (and no `\u` escape that could spell it)
//! are UBI at once; otherwise the record is parsed, and an object without a `type` key is UBI,
//! one with it a native event. A UBI record is validated as the kind its top-level keys say
//! (`query_response_hit_ids`: a query; `hits` and `test_id`: an SRW A/B query; `action_name`:
//! an event), except that, as ubi.py's fast path does, a record without `\u` escapes is first
//! tried as the kind its bytes suggest (a query if `"query_response_hit_ids"` is written
//! anywhere, else an event), and kept as that kind when it validates.

use jiter::{JsonError, JsonValue};

use crate::bounds::*;
use crate::decode::{
    self, chars, invalid, query_id_from, unknown_type, Click, Event, Fields, Impression, Invalid,
    UTF8_BOM,
};
use crate::pyvalue::{number_text, LaxInt};
use crate::ubi_models::{validate, Kind, Record};

const TYPE_KEY: &[u8] = b"\"type\"";
const ESCAPE: &[u8] = b"\\u";
const QUERY_KEY: &[u8] = b"\"query_response_hit_ids\"";
const KIND_MESSAGE: &str = "ubi record has no 'type' and is neither a UBI query \
     (query_response_hit_ids), an SRW A/B query (hits, test_id) nor a UBI event (action_name)";
const APPLICATION_LABEL: &str = "application";
const AB_TEST_LABEL: &str = "ab_test_id";

/// `too_large` of decode.py: the refusal of a record over the size cap (every decoder's).
pub fn too_large(size: usize, max_bytes: usize) -> Invalid {
    invalid(
        "too_large",
        format!("record of {size} bytes, over the cap of {max_bytes}"),
    )
}

/// Why bytes the JSON parser refused are not JSON: not UTF-8, or jiter's (pydantic's) message.
pub fn not_json(raw: &[u8], err: &JsonError) -> Invalid {
    if let Err(e) = std::str::from_utf8(raw) {
        return invalid(
            "bad_encoding",
            format!("not UTF-8 at byte {}", e.valid_up_to()),
        );
    }
    invalid(
        "bad_json",
        format!(
            "Invalid JSON: {} at {}",
            err.error_type,
            err.get_position(raw)
        ),
    )
}

pub(crate) fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Decode one record of a source of format `auto`: a native event, or else a UBI record.
pub fn decode(raw: &[u8], max_bytes: usize) -> Result<Event, Invalid> {
    if raw.len() > max_bytes {
        return Err(too_large(raw.len(), max_bytes));
    }
    if !contains(raw, TYPE_KEY) && !contains(raw, ESCAPE) {
        return ubi_bytes(raw);
    }
    let value = match JsonValue::parse(raw, true) {
        Ok(value) => value,
        Err(err) => return json_error(raw, &err),
    };
    let JsonValue::Object(object) = &value else {
        return Err(invalid("schema", "record is not a JSON object"));
    };
    let fields = Fields(object);
    match fields.get("type") {
        None => ubi_value(raw, &value),
        Some(JsonValue::Str(tag)) if tag.as_ref() == "impression" => decode::impression(&fields),
        Some(JsonValue::Str(tag)) if tag.as_ref() == "click" => decode::click(&fields),
        Some(JsonValue::Str(tag)) if tag.as_ref() == "judgment" => decode::judgment(&fields),
        Some(other) => Err(unknown_type(other)),
    }
}

/// Decode one record of a source declared UBI: read as a UBI query or event, whatever its
/// fields.
pub fn decode_ubi(raw: &[u8], max_bytes: usize) -> Result<Event, Invalid> {
    if raw.len() > max_bytes {
        return Err(too_large(raw.len(), max_bytes));
    }
    ubi_bytes(raw)
}

/// `_json_error` of decode.py: a leading byte order mark is dropped and the rest read again by
/// `decode` (also from a UBI source, as the Python decoder does).
fn json_error(raw: &[u8], err: &JsonError) -> Result<Event, Invalid> {
    match raw.strip_prefix(UTF8_BOM) {
        Some(rest) => decode(rest, usize::MAX),
        None => Err(not_json(raw, err)),
    }
}

fn ubi_bytes(raw: &[u8]) -> Result<Event, Invalid> {
    match JsonValue::parse(raw, true) {
        Ok(value) => ubi_value(raw, &value),
        Err(err) => json_error(raw, &err),
    }
}

/// `parse_ubi` then `to_event` of ubi.py, on the parsed record.
fn ubi_value(raw: &[u8], value: &JsonValue) -> Result<Event, Invalid> {
    if !contains(raw, ESCAPE) {
        let guess = if contains(raw, QUERY_KEY) {
            Kind::Query
        } else {
            Kind::Event
        };
        if let Ok(record) = validate(guess, value) {
            return to_event(record);
        }
    }
    let Some(kind) = Kind::of(value) else {
        return Err(invalid("schema", KIND_MESSAGE));
    };
    match validate(kind, value) {
        Ok(record) => to_event(record),
        Err(errors) => errors
            .finish()
            .and(Err(invalid("schema", "ubi: inconsistent"))),
    }
}

fn ubi_error(detail: impl AsRef<str>) -> Invalid {
    invalid("schema", format!("ubi {}", detail.as_ref()))
}

/// `labels_from_attributes` of ubi.py: the scalar attributes within the label bounds (the first
/// 31, in the order of the record's first occurrence of each key, the last value of a key),
/// then `application`.
pub fn labels_from_attributes(
    attributes: Option<&jiter::JsonObject>,
    application: Option<String>,
) -> Vec<(String, String)> {
    let mut unique: Vec<(&str, &JsonValue)> = Vec::new();
    for (key, value) in attributes.into_iter().flat_map(|a| a.iter()) {
        match unique.iter_mut().find(|(k, _)| *k == key.as_ref()) {
            Some(slot) => slot.1 = value,
            None => unique.push((key.as_ref(), value)),
        }
    }
    let mut labels: Vec<(String, String)> = Vec::new();
    for (key, value) in unique {
        if labels.len() >= MAX_LABELS - 1 {
            break;
        }
        let text = match value {
            JsonValue::Str(s) => Some(s.to_string()),
            other => number_text(other),
        };
        let Some(text) = text else { continue };
        if (1..=MAX_LABEL_KEY_CHARS).contains(&chars(key)) && chars(&text) <= MAX_LABEL_VALUE_CHARS
        {
            labels.push((key.to_owned(), text));
        }
    }
    if let Some(application) = application {
        set_label(&mut labels, APPLICATION_LABEL, application);
    }
    labels
}

fn set_label(labels: &mut Vec<(String, String)>, key: &str, value: String) {
    match labels.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = value,
        None => labels.push((key.to_owned(), value)),
    }
}

fn impression(
    request_id: String,
    timestamp: i64,
    doc_ids: Vec<String>,
    teams: Option<Vec<Option<String>>>,
    query: Option<String>,
    labels: Vec<(String, String)>,
) -> Result<Event, Invalid> {
    if labels.len() > MAX_LABELS {
        return Err(ubi_error(format!(
            "labels: Dictionary should have at most {MAX_LABELS} items after validation, not more"
        )));
    }
    let query_id = match &query {
        None => String::new(),
        Some(q) => query_id_from(q).map_err(|m| ubi_error(format!("Value error, {m}")))?,
    };
    Ok(Event::Impression(Impression {
        request_id,
        timestamp,
        doc_ids,
        query,
        query_id,
        labels,
        event_id: None,
        teams,
    }))
}

/// `to_event` of ubi.py: the native event a validated UBI record stands for.
fn to_event(record: Record) -> Result<Event, Invalid> {
    match record {
        Record::Query {
            query_id,
            user_query,
            hit_ids,
            attributes,
            application,
            timestamp,
        } => {
            let labels = labels_from_attributes(attributes, application);
            impression(query_id, timestamp, hit_ids, None, user_query, labels)
        }
        Record::AbQuery {
            query_id,
            test_id,
            hits,
            user_query,
            attributes,
            application,
            timestamp,
        } => {
            let mut labels = labels_from_attributes(attributes, application);
            set_label(&mut labels, AB_TEST_LABEL, test_id);
            let (doc_ids, teams): (Vec<String>, Vec<Option<String>>) = hits.into_iter().unzip();
            let teams = teams.iter().any(Option::is_some).then_some(teams);
            impression(query_id, timestamp, doc_ids, teams, user_query, labels)
        }
        Record::Event {
            action_name,
            query_id,
            object_id,
            ordinal,
            timestamp,
        } => {
            let action = action_name.to_lowercase();
            if action == "impression" {
                return Err(invalid(
                    "unknown_type",
                    "UBI 'impression' event: a result shown, not an interaction",
                ));
            }
            let position = match ordinal {
                None => None,
                Some(LaxInt::Small(i)) if (0..MAX_POSITION).contains(&i) => Some(i + 1),
                Some(_) => return Err(invalid("schema", "ubi: position ordinal out of range")),
            };
            // the native Click model: stripped, 1..MAX_ACTION_CHARS, lower case
            let action = if action == "click_through" {
                "click".to_owned()
            } else {
                action
            };
            let stripped = action.trim();
            if !(1..=MAX_ACTION_CHARS).contains(&chars(stripped)) {
                return Err(ubi_error(format!(
                    "action: Input should be a string of 1..{MAX_ACTION_CHARS} characters, or null"
                )));
            }
            Ok(Event::Click(Click {
                request_id: query_id,
                doc_id: object_id,
                timestamp,
                action: stripped.to_lowercase(),
                dwell_ms: None,
                position,
                event_id: None,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(raw: &[u8]) -> String {
        match decode(raw, 1 << 20) {
            Ok(Event::Impression(e)) => format!("impression {:?} {:?}", e.doc_ids, e.labels),
            Ok(Event::Click(e)) => format!("click {} {:?}", e.action, e.position),
            Ok(Event::Judgment(_)) => "judgment".into(),
            Err(i) => format!("{}: {}", i.reason, i.detail),
        }
    }

    #[test]
    fn ubi_records() {
        let cases: &[(&[u8], &str)] = &[
            (
                br#"{"query_id":"q","query_response_hit_ids":["a",2],"timestamp":1,
                    "query_attributes":{"x":1.5,"y":true,"z":null,"":"e"},"application":"shop"}"#,
                r#"impression ["a", "2"] [("x", "1.5"), ("y", "true"), ("application", "shop")]"#,
            ),
            (
                br#"{"action_name":" Click_Through ","query_id":"q","timestamp":1,
                    "event_attributes":{"object":{"id":7},"position":{"ordinal":{"index":"2"}}}}"#,
                "click click Some(3)",
            ),
            (
                br#"{"action_name":"impression","query_id":"q","timestamp":1,
                    "event_attributes":{"object":{"id":7}}}"#,
                "unknown_type: UBI 'impression' event: a result shown, not an interaction",
            ),
            (
                br#"{"query_id":"q","query_response_hit_ids":[1.5],"timestamp":1}"#,
                "schema: ubi query.query_response_hit_ids.0.str: Input should be a valid string (+2 more)",
            ),
            (br#"{"x":1}"#, &const_format_kind()),
            (
                br#"{"type":"click"}"#,
                "schema: click.request_id: Field required (+2 more)",
            ),
            (b"[1]", &const_format_kind()),
            (br#"[{"type":1}]"#, "schema: record is not a JSON object"),
        ];
        for (raw, want) in cases {
            assert_eq!(answer(raw), *want, "{}", String::from_utf8_lossy(raw));
        }
    }

    fn const_format_kind() -> String {
        format!("schema: {KIND_MESSAGE}")
    }

    #[test]
    fn byte_order_mark_is_read_by_decode() {
        let raw = b"\xef\xbb\xbf{\"type\":\"click\",\"request_id\":\"r\",\"doc_id\":\"d\",\"timestamp\":1}";
        assert!(matches!(decode_ubi(raw, 1 << 20), Ok(Event::Click(_))));
        assert_eq!(
            decode_ubi(b"x", 0).unwrap_err().detail,
            "record of 1 bytes, over the cap of 0"
        );
    }
}
