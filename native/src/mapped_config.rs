//! A mapping compiled (`mapped_schema.EventSchema`, `Mapper.__init__`): from the JSON of a
//! validated `MappingSettings`, each event type's mapped fields in the native model's order
//! (labels last) with their compiled pointers, and the configuration errors mapped_schema.py
//! raises.

use jiter::{JsonObject, JsonValue};

use crate::bounds::{MAX_LABELS, MAX_LABEL_KEY_CHARS};
use crate::decode::chars;
use crate::mapped::{EventSpec, Field, Kind, MappedDecoder};
use crate::mapped_time::Unit;
use crate::pointer::compile;
use crate::pyvalue::str_repr;

const FIELD_ORDER: [(Kind, &[&str]); 3] = [
    (
        Kind::Impression,
        &[
            "request_id",
            "timestamp",
            "results",
            "query",
            "query_id",
            "event_id",
        ],
    ),
    (
        Kind::Click,
        &[
            "request_id",
            "doc_id",
            "timestamp",
            "action",
            "dwell_ms",
            "position",
            "event_id",
        ],
    ),
    (
        Kind::Judgment,
        &[
            "query_id",
            "query",
            "doc_id",
            "grade",
            "timestamp",
            "judge",
            "event_id",
        ],
    ),
];

fn pairs(value: Option<&JsonValue>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    if let Some(JsonValue::Object(object)) = value {
        for (k, v) in object.iter() {
            let v = match v {
                JsonValue::Str(s) => s.to_string(),
                _ => continue,
            };
            match out.iter_mut().find(|(key, _)| key == k.as_ref()) {
                Some(slot) => slot.1 = v,
                None => out.push((k.to_string(), v)),
            }
        }
    }
    out
}

fn text(object: &JsonObject, key: &str) -> Option<String> {
    match object.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v) {
        Some(JsonValue::Str(s)) => Some(s.to_string()),
        _ => None,
    }
}

impl MappedDecoder {
    /// Compile the mapping (the JSON of a validated `MappingSettings`), or the configuration
    /// error mapped_schema.py raises (`input.mappings: ...`).
    pub fn new(settings: &[u8], max_bytes: usize) -> Result<MappedDecoder, String> {
        let value = JsonValue::parse(settings, false).map_err(|e| e.to_string())?;
        let JsonValue::Object(root) = &value else {
            return Err("mapping settings: not a JSON object".into());
        };
        let get = |key: &str| root.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
        let unit = text(root, "timestamp_unit").unwrap_or_else(|| "ms".into());
        let unit = Unit::parse(&unit).ok_or(format!("unknown timestamp_unit {unit:?}"))?;
        let type_field = match text(root, "type_field") {
            None => None,
            Some(p) => Some((p.clone(), compile(&p)?)),
        };
        let mut events = Vec::new();
        let mut by_value = Vec::new();
        for (kind, order) in FIELD_ORDER {
            let Some(JsonValue::Object(spec)) = get(kind.name()) else {
                continue;
            };
            let mut fields = Vec::new();
            for &name in order {
                let Some(pointer) = text(spec, name) else {
                    continue;
                };
                let path = compile(&pointer)?;
                if path.is_empty() {
                    let name = if name == "results" { "doc_ids" } else { name };
                    return Err(format!(
                        "input.mappings: {}.{name} cannot be the whole record",
                        kind.name()
                    ));
                }
                fields.push(Field {
                    name: name.into(),
                    pointer,
                    path,
                });
            }
            let spec_get = |key: &str| spec.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v);
            let labels = pairs(spec_get("labels"));
            let constant_labels = pairs(spec_get("constant_labels"));
            if kind == Kind::Impression {
                if labels.len() + constant_labels.len() > MAX_LABELS {
                    return Err(format!(
                        "input.mappings: impression.labels: at most {MAX_LABELS} labels"
                    ));
                }
                for (name, pointer) in &labels {
                    if !(1..=MAX_LABEL_KEY_CHARS).contains(&chars(name)) {
                        return Err(format!(
                            "input.mappings: impression.labels: bad label name {}",
                            str_repr(name)
                        ));
                    }
                    fields.push(Field {
                        name: format!("labels.{name}"),
                        pointer: pointer.clone(),
                        path: compile(pointer)?,
                    });
                }
            }
            if let Some(JsonValue::Array(when)) = spec_get("when") {
                for value in when.iter() {
                    if let JsonValue::Str(s) = value {
                        by_value.push((s.to_string(), events.len()));
                    }
                }
            }
            events.push(EventSpec {
                kind,
                fields,
                result_item: compile(&text(spec, "result_doc_id").unwrap_or_default())?,
                constant_labels: if kind == Kind::Impression {
                    constant_labels
                } else {
                    Vec::new()
                },
                actions: pairs(spec_get("actions")),
                default_action: text(spec, "default_action").unwrap_or_else(|| "click".into()),
                position_base: match spec_get("position_base") {
                    Some(JsonValue::Int(0)) => 0,
                    _ => 1,
                },
            });
        }
        if events.is_empty() {
            return Err("a mapping needs at least one of impression, click, judgment".into());
        }
        Ok(MappedDecoder {
            type_field,
            events,
            by_value,
            unit,
            max_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::Token;

    #[test]
    fn configuration() {
        let labels: String = (0..33)
            .map(|i| format!(r#""l{i}":"/x""#))
            .collect::<Vec<_>>()
            .join(",");
        let many = format!(
            r#"{{"impression":{{"request_id":"/r","timestamp":"/t","results":"/h","labels":{{{labels}}}}}}}"#
        );
        assert_eq!(
            MappedDecoder::new(many.as_bytes(), 1).unwrap_err(),
            "input.mappings: impression.labels: at most 32 labels"
        );
        let bad_name = br#"{"impression":{"request_id":"/r","timestamp":"/t","results":"/h","labels":{"":"/x"}}}"#;
        assert_eq!(
            MappedDecoder::new(bad_name, 1).unwrap_err(),
            "input.mappings: impression.labels: bad label name ''"
        );
        let ok = br#"{"type_field":"/k","click":{"when":["c"],"request_id":"/r","doc_id":"/d/0","timestamp":"/t"}}"#;
        let decoder = MappedDecoder::new(ok, 1).unwrap();
        assert_eq!(decoder.by_value, [("c".to_string(), 0)]);
        assert_eq!(
            decoder.events[0].fields[1].path,
            [Token::Key("d".into()), Token::Index(0)]
        );
    }
}
