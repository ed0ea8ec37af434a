//! The three kinds of UBI record as `streameval/events/ubi.py` validates them (its pydantic
//! models `UbiQuery`, `UbiAbQuery`, `UbiEvent`, `extra="ignore"`): the fields read, their types
//! and bounds, and pydantic's errors in field order (location and message), so that the first
//! error and the count of the others are pydantic's.

use jiter::{JsonObject, JsonValue};

use crate::bounds::*;
use crate::decode::{bounded_str, chars, timestamp, Errors, Fields};
use crate::pyvalue::{LaxInt, INT_TYPE};
use crate::ubi_event::event_attributes;

/// A UBI record validated, borrowing its free-form `query_attributes` from the parsed JSON.
#[derive(Debug)]
pub enum Record<'a, 'j> {
    Query {
        query_id: String,
        user_query: Option<String>,
        hit_ids: Vec<String>,
        attributes: Option<&'a JsonObject<'j>>,
        application: Option<String>,
        timestamp: i64,
    },
    AbQuery {
        query_id: String,
        test_id: String,
        hits: Vec<(String, Option<String>)>,
        user_query: Option<String>,
        attributes: Option<&'a JsonObject<'j>>,
        application: Option<String>,
        timestamp: i64,
    },
    Event {
        action_name: String,
        query_id: String,
        object_id: String,
        ordinal: Option<LaxInt>,
        timestamp: i64,
    },
}

/// Which model a record is validated against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Query,
    AbQuery,
    Event,
}

impl Kind {
    /// `_ubi_kind` of ubi.py: by the record's top-level keys.
    pub fn of(value: &JsonValue) -> Option<Kind> {
        let JsonValue::Object(object) = value else {
            return None;
        };
        let has = |key: &str| object.iter().any(|(k, _)| k == key);
        if has("query_response_hit_ids") {
            Some(Kind::Query)
        } else if has("hits") && has("test_id") {
            Some(Kind::AbQuery)
        } else if has("action_name") {
            Some(Kind::Event)
        } else {
            None
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Kind::Query => "ubi query",
            Kind::AbQuery => "ubi ab_query",
            Kind::Event => "ubi event",
        }
    }
}

pub(crate) const OBJECT: &str = "Input should be an object";
pub(crate) const REQUIRED: &str = "Field required";
const MAX_OBJECT_ID: u128 = 1 << 64;

/// Validate `value` as a record of `kind`, or pydantic's errors (detail prefixed `ubi <tag>.`).
pub(crate) fn validate<'a, 'j>(
    kind: Kind,
    value: &'a JsonValue<'j>,
) -> Result<Record<'a, 'j>, Errors> {
    let mut errors = Errors::new(kind.tag());
    let JsonValue::Object(object) = value else {
        errors.add("", OBJECT); // never reported: only objects reach the exact path
        return Err(errors);
    };
    let fields = Fields(object);
    let e = &mut errors;
    let record = match kind {
        Kind::Query => {
            let query_id = required(&fields, e, "query_id", |v| bounded_str(v, 1, MAX_ID_CHARS));
            let user_query = nullable_str(&fields, e, "user_query", MAX_QUERY_CHARS);
            let hit_ids = match fields.get("query_response_hit_ids") {
                None => missing(e, "query_response_hit_ids"),
                Some(v) => items(e, "query_response_hit_ids", v, object_id),
            };
            let attributes = attributes(&fields, e);
            let application = nullable_str(&fields, e, "application", MAX_LABEL_VALUE_CHARS);
            let timestamp = timestamp(&fields, e);
            match (
                query_id,
                user_query,
                hit_ids,
                attributes,
                application,
                timestamp,
            ) {
                (Some(q), Some(u), Some(h), Some(at), Some(ap), Some(t)) => Record::Query {
                    query_id: q,
                    user_query: u,
                    hit_ids: h,
                    attributes: at,
                    application: ap,
                    timestamp: t,
                },
                _ => return Err(errors),
            }
        }
        Kind::AbQuery => {
            let query_id = required(&fields, e, "query_id", |v| bounded_str(v, 1, MAX_ID_CHARS));
            let test_id = required(&fields, e, "test_id", |v| {
                bounded_str(v, 0, MAX_LABEL_VALUE_CHARS)
            });
            let hits = match fields.get("hits") {
                None => missing(e, "hits"),
                Some(v) => items(e, "hits", v, srw_hit),
            };
            let user_query = nullable_str(&fields, e, "user_query", MAX_QUERY_CHARS);
            let attributes = attributes(&fields, e);
            let application = nullable_str(&fields, e, "application", MAX_LABEL_VALUE_CHARS);
            let timestamp = timestamp(&fields, e);
            match (
                query_id,
                test_id,
                hits,
                user_query,
                attributes,
                application,
                timestamp,
            ) {
                (Some(q), Some(ti), Some(h), Some(u), Some(at), Some(ap), Some(t)) => {
                    Record::AbQuery {
                        query_id: q,
                        test_id: ti,
                        hits: h,
                        user_query: u,
                        attributes: at,
                        application: ap,
                        timestamp: t,
                    }
                }
                _ => return Err(errors),
            }
        }
        Kind::Event => {
            let action_name = required(&fields, e, "action_name", |v| match v {
                JsonValue::Str(s) => {
                    let s = s.trim();
                    match chars(s) {
                        0 => Err("String should have at least 1 character".into()),
                        n if n > MAX_ACTION_CHARS => Err(format!(
                            "String should have at most {MAX_ACTION_CHARS} characters"
                        )),
                        _ => Ok(s.to_owned()),
                    }
                }
                _ => Err("Input should be a valid string".into()),
            });
            let query_id = required(&fields, e, "query_id", |v| bounded_str(v, 1, MAX_ID_CHARS));
            let target = match fields.get("event_attributes") {
                None => missing(e, "event_attributes"),
                Some(v) => event_attributes(e, v),
            };
            let timestamp = timestamp(&fields, e);
            match (action_name, query_id, target, timestamp) {
                (Some(a), Some(q), Some((o, p)), Some(t)) => Record::Event {
                    action_name: a,
                    query_id: q,
                    object_id: o,
                    ordinal: p,
                    timestamp: t,
                },
                _ => return Err(errors),
            }
        }
    };
    Ok(record)
}

pub(crate) fn missing<T>(errors: &mut Errors, loc: &str) -> Option<T> {
    errors.add(loc, REQUIRED);
    None
}

fn required<T>(
    fields: &Fields,
    errors: &mut Errors,
    key: &str,
    check: impl Fn(&JsonValue) -> Result<T, String>,
) -> Option<T> {
    match fields.get(key) {
        None => missing(errors, key),
        Some(v) => check(v).map_err(|m| errors.add(key, m)).ok(),
    }
}

/// A nullable string of at most `max` characters: `Some(None)` when absent or null.
fn nullable_str(
    fields: &Fields,
    errors: &mut Errors,
    key: &str,
    max: usize,
) -> Option<Option<String>> {
    match fields.present(key) {
        None => Some(None),
        Some(v) => bounded_str(v, 0, max)
            .map(Some)
            .map_err(|m| errors.add(key, m))
            .ok(),
    }
}

fn attributes<'a, 'j>(
    fields: &Fields<'a, 'j>,
    errors: &mut Errors,
) -> Option<Option<&'a JsonObject<'j>>> {
    match fields.present("query_attributes") {
        None => Some(None),
        Some(JsonValue::Object(object)) => Some(Some(object)),
        Some(_) => {
            errors.add("query_attributes", OBJECT);
            None
        }
    }
}

/// A tuple of 1..MAX_RESULTS items as pydantic-core validates it: the errors of the items, and
/// the length of the valid ones checked (over the maximum: that one error alone).
fn items<T>(
    errors: &mut Errors,
    loc: &str,
    value: &JsonValue,
    item: impl Fn(&mut Vec<(String, String)>, &str, &JsonValue) -> Option<T>,
) -> Option<Vec<T>> {
    let JsonValue::Array(array) = value else {
        errors.add(loc, "Input should be a valid array");
        return None;
    };
    let mut out = Vec::with_capacity(array.len());
    let mut failed = Vec::new();
    for (i, value) in array.iter().enumerate() {
        if let Some(x) = item(&mut failed, &format!("{loc}.{i}"), value) {
            out.push(x);
            if out.len() > MAX_RESULTS {
                errors.add(
                    loc,
                    format!(
                        "Tuple should have at most {MAX_RESULTS} items after validation, not {}",
                        array.len()
                    ),
                );
                return None;
            }
        }
    }
    for (where_, msg) in &failed {
        errors.add(where_, msg);
    }
    if out.is_empty() {
        errors.add(
            loc,
            "Tuple should have at least 1 item after validation, not 0",
        );
        return None;
    }
    failed.is_empty().then_some(out)
}

/// `ObjectId` of ubi.py: a string of 1..MAX_ID_CHARS, or an integer kept as its text.
pub(crate) fn object_id(
    errors: &mut Vec<(String, String)>,
    loc: &str,
    value: &JsonValue,
) -> Option<String> {
    let fail = |errors: &mut Vec<(String, String)>, msg: &str| {
        errors.push((loc.to_owned(), format!("Value error, {msg}")));
        None
    };
    match value {
        JsonValue::Str(s) => {
            if (1..=MAX_ID_CHARS).contains(&chars(s)) {
                Some(s.to_string())
            } else {
                fail(
                    errors,
                    &format!("object id must have 1..{MAX_ID_CHARS} characters"),
                )
            }
        }
        JsonValue::Int(i) => Some(i.to_string()),
        JsonValue::BigInt(i) => {
            if i.magnitude() < &num_bigint::BigUint::from(MAX_OBJECT_ID) {
                Some(i.to_string())
            } else {
                fail(errors, "integer object id out of range")
            }
        }
        _ => {
            errors.push((
                format!("{loc}.str"),
                "Input should be a valid string".into(),
            ));
            errors.push((format!("{loc}.int"), INT_TYPE.into()));
            None
        }
    }
}

/// One hit of an SRW A/B response: `_id` and `_search_configuration_id` (the team).
fn srw_hit(
    errors: &mut Vec<(String, String)>,
    loc: &str,
    value: &JsonValue,
) -> Option<(String, Option<String>)> {
    let JsonValue::Object(object) = value else {
        errors.push((loc.to_owned(), OBJECT.into()));
        return None;
    };
    let hit = Fields(object);
    let id = match hit.get("_id") {
        None => {
            errors.push((format!("{loc}._id"), REQUIRED.into()));
            None
        }
        Some(v) => object_id(errors, &format!("{loc}._id"), v),
    };
    let team = match hit.present("_search_configuration_id") {
        None => Some(None),
        Some(v) => match bounded_str(v, 1, MAX_ID_CHARS) {
            Ok(team) => Some(Some(team)),
            Err(m) => {
                errors.push((format!("{loc}._search_configuration_id"), m));
                None
            }
        },
    };
    Some((id?, team?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(kind: Kind, raw: &str) -> String {
        let value = JsonValue::parse(raw.as_bytes(), true).unwrap();
        match validate(kind, &value) {
            Ok(_) => "valid".into(),
            Err(errors) => errors.finish().unwrap_err().detail,
        }
    }

    #[test]
    fn pydantic_errors() {
        let q = Kind::Query;
        assert_eq!(
            detail(
                q,
                r#"{"query_id":"q","query_response_hit_ids":[true,null],"timestamp":1}"#
            ),
            "ubi query.query_response_hit_ids.0.str: Input should be a valid string (+4 more)"
        );
        assert_eq!(
            detail(
                q,
                r#"{"query_id":"q","query_response_hit_ids":[""],"timestamp":1}"#
            ),
            "ubi query.query_response_hit_ids.0: Value error, object id must have 1..256 \
             characters (+1 more)"
        );
        let many = format!(
            r#"{{"query_id":"q","query_response_hit_ids":[1.5{}],"timestamp":1}}"#,
            r#","a""#.repeat(1001)
        );
        assert_eq!(
            detail(q, &many),
            "ubi query.query_response_hit_ids: Tuple should have at most 1000 items after \
             validation, not 1002"
        );
        assert_eq!(
            detail(Kind::AbQuery, r#"{"hits":5,"test_id":5}"#),
            "ubi ab_query.query_id: Field required (+3 more)"
        );
        assert_eq!(
            detail(
                Kind::Event,
                r#"{"action_name":" ","query_id":"q","timestamp":1,
                "event_attributes":{"object":{"id":"d"}}}"#
            ),
            "ubi event.action_name: String should have at least 1 character"
        );
        assert_eq!(
            Kind::of(
                &JsonValue::parse(br#"{"hits":1,"test_id":1,"action_name":1}"#, false).unwrap()
            ),
            Some(Kind::AbQuery)
        );
    }
}
