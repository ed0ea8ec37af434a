//! The fields of a mapped record read at their pointers, each with the native model's rules
//! and pydantic's message for its first error (`mapped_schema.py`: ids may be integers, read
//! as their text; labels may be numbers or booleans; the click's action translated; positions
//! counted from 0 or 1).

use jiter::JsonValue;

use crate::bounds::*;
use crate::decode::bounded_str;
use crate::mapped::{EventSpec, Failure, Field};
use crate::pointer::lookup;
use crate::pyvalue::number_text;

/// The record and its event type's mapping.
pub struct Get<'a, 'j> {
    pub record: &'a JsonValue<'j>,
    pub spec: &'a EventSpec,
}

const STRING: &str = "Input should be a valid string";

fn fail(name: &'static str, msg: impl Into<String>) -> Failure {
    Failure {
        name,
        index: None,
        msg: msg.into(),
    }
}

impl<'a, 'j> Get<'a, 'j> {
    /// `None`: the field is not mapped; `Some(None)`: its pointer names nothing.
    pub fn value(&self, name: &str) -> Option<Option<&'a JsonValue<'j>>> {
        let field = self.spec.fields.iter().find(|f| f.name == name)?;
        Some(lookup(self.record, &field.path))
    }

    /// A required field: `missing` when its pointer names nothing.
    pub fn required<T>(
        &self,
        name: &'static str,
        check: impl Fn(&JsonValue) -> Result<T, String>,
    ) -> Result<Option<T>, Failure> {
        match self.value(name) {
            None => Ok(None),
            Some(None) => Err(fail(name, "missing")),
            Some(Some(v)) => check(v).map(Some).map_err(|m| fail(name, m)),
        }
    }
}

/// An id: a string of 1..MAX_ID_CHARS, or an integer read as its text.
pub fn id_value(value: &JsonValue) -> Result<String, String> {
    match value {
        JsonValue::Str(_) => bounded_str(value, 1, MAX_ID_CHARS),
        JsonValue::Int(_) | JsonValue::BigInt(_) => match number_text(value) {
            Some(text) if text.len() <= MAX_ID_CHARS => Ok(text),
            _ => Err(STRING.into()),
        },
        _ => Err(STRING.into()),
    }
}

pub fn id(get: &Get, name: &'static str) -> Result<Option<String>, Failure> {
    get.required(name, id_value)
}

/// An optional field: absent, unmapped and null are `None`.
pub fn optional<T>(
    get: &Get,
    name: &'static str,
    check: impl Fn(&JsonValue) -> Result<T, String>,
) -> Result<Option<T>, Failure> {
    match get.value(name).flatten() {
        None | Some(JsonValue::Null) => Ok(None),
        Some(v) => check(v).map(Some).map_err(|m| fail(name, m)),
    }
}

/// The results: 1..MAX_RESULTS items, each an id (at the item's pointer).
pub fn results(get: &Get) -> Result<Vec<String>, Failure> {
    let value = match get.value("results") {
        None => return Ok(Vec::new()),
        Some(None) => return Err(fail("results", "missing")),
        Some(Some(v)) => v,
    };
    let JsonValue::Array(items) = value else {
        return Err(fail("results", "Input should be a valid array"));
    };
    let mut out = Vec::with_capacity(items.len());
    let mut first: Option<Failure> = None;
    for (i, item) in items.iter().enumerate() {
        let read = if get.spec.result_item.is_empty() {
            id_value(item)
        } else if let JsonValue::Object(_) = item {
            match lookup(item, &get.spec.result_item) {
                None => Err("missing".into()),
                Some(v) => id_value(v),
            }
        } else {
            Err("Input should be an object".into())
        };
        match read {
            Ok(id) => {
                out.push(id);
                if out.len() > MAX_RESULTS {
                    return Err(fail(
                        "results",
                        format!(
                            "Tuple should have at most {MAX_RESULTS} items after validation, \
                             not {}",
                            items.len()
                        ),
                    ));
                }
            }
            Err(msg) if first.is_none() => {
                first = Some(Failure {
                    name: "results",
                    index: Some(i),
                    msg,
                })
            }
            Err(_) => {}
        }
    }
    if let Some(failure) = first {
        return Err(failure);
    }
    if out.is_empty() {
        return Err(fail(
            "results",
            "Tuple should have at least 1 item after validation, not 0",
        ));
    }
    Ok(out)
}

/// A label: a string of at most MAX_LABEL_VALUE_CHARS, or a number or boolean as its text.
pub fn label(get: &Get, field: &Field) -> Result<Option<String>, Failure> {
    let name: &'static str = "labels";
    let fail = |msg: &str| Failure {
        name,
        index: None,
        msg: msg.into(),
    };
    let failed = |msg: &str| -> Result<Option<String>, Failure> {
        let mut failure = fail(msg);
        // the label's own field, named by its position among the fields
        failure.index = get.spec.fields.iter().position(|f| std::ptr::eq(f, field));
        Err(failure)
    };
    match lookup(get.record, &field.path) {
        None | Some(JsonValue::Null) => Ok(None),
        Some(v @ JsonValue::Str(_)) => match bounded_str(v, 0, MAX_LABEL_VALUE_CHARS) {
            Ok(text) => Ok(Some(text)),
            Err(m) => failed(&m),
        },
        Some(v) => match number_text(v) {
            Some(text) if text.chars().count() <= MAX_LABEL_VALUE_CHARS => Ok(Some(text)),
            _ => failed(STRING),
        },
    }
}

/// The click's action: translated by the mapping's table, then stripped, 1..MAX_ACTION_CHARS
/// and lower-cased; null is the default action (validated), absent the default as given.
pub fn action(get: &Get) -> Result<String, Failure> {
    let spec = get.spec;
    let value = match get.value("action").flatten() {
        None => return Ok(spec.default_action.clone()),
        Some(JsonValue::Null) => spec.default_action.clone(),
        Some(JsonValue::Str(s)) => match spec.actions.iter().find(|(k, _)| k == s.as_ref()) {
            Some((_, ours)) => ours.clone(),
            None => s.to_string(),
        },
        Some(_) => return Err(fail("action", STRING)),
    };
    let stripped = value.trim();
    match stripped.chars().count() {
        0 => Err(fail("action", "String should have at least 1 character")),
        n if n > MAX_ACTION_CHARS => Err(fail(
            "action",
            format!("String should have at most {MAX_ACTION_CHARS} characters"),
        )),
        _ => Ok(stripped.to_lowercase()),
    }
}

/// Whether the action's value would make Python's table look-up raise (an unhashable list or
/// dict): the Python decoder then answers `bad_json`, "unexpected TypeError".
pub fn action_unhashable(get: &Get) -> bool {
    matches!(
        get.value("action").flatten(),
        Some(JsonValue::Array(_) | JsonValue::Object(_))
    )
}

/// The position: a strict integer, 1..MAX_POSITION (the team's 0-based one plus 1).
pub fn position(get: &Get) -> Result<Option<i64>, Failure> {
    let base = get.spec.position_base;
    optional(get, "position", |v| {
        let n: Option<i128> = match v {
            JsonValue::Int(i) => Some(i128::from(*i) + i128::from(1 - base)),
            JsonValue::BigInt(b) if b.sign() == num_bigint::Sign::Minus => Some(i128::MIN),
            JsonValue::BigInt(_) => Some(i128::MAX),
            _ => None,
        };
        match n {
            None => Err("Input should be a valid integer".into()),
            Some(n) if n < 1 => Err("Input should be greater than or equal to 1".into()),
            Some(n) if n > i128::from(MAX_POSITION) => Err(format!(
                "Input should be less than or equal to {MAX_POSITION}"
            )),
            Some(n) => Ok(n as i64),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_may_be_integers() {
        let v = |s: &str| id_value(&JsonValue::parse(s.as_bytes(), true).unwrap());
        assert_eq!(v("7"), Ok("7".into()));
        assert_eq!(
            v("-123456789012345678901234"),
            Ok("-123456789012345678901234".into())
        );
        assert_eq!(
            v(r#""""#),
            Err("String should have at least 1 character".into())
        );
        assert_eq!(v("true"), Err(STRING.into()));
        assert_eq!(v("1.0"), Err(STRING.into()));
        assert_eq!(v(&"9".repeat(300)), Err(STRING.into()));
    }
}
