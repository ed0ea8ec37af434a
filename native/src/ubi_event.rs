//! The `event_attributes` of a UBI event as ubi.py's models validate them: the object's id
//! (`object_id`, else `id`) and the position's ordinal (`int` within bounds, or UBI 1.0's
//! `{"index": n}`), with pydantic's union errors.

use jiter::JsonValue;

use crate::bounds::MAX_POSITION;
use crate::decode::{Errors, Fields};
use crate::pyvalue::{lax_int, LaxInt};
use crate::ubi_models::{missing, object_id, OBJECT, REQUIRED};

/// `event_attributes`: the object's id, and the position's ordinal (not yet range-checked when
/// given as UBI 1.0's `{"index": n}`).
pub(crate) fn event_attributes(
    errors: &mut Errors,
    value: &JsonValue,
) -> Option<(String, Option<LaxInt>)> {
    let JsonValue::Object(object) = value else {
        errors.add("event_attributes", OBJECT);
        return None;
    };
    let attrs = Fields(object);
    let object_id = match attrs.get("object") {
        None => missing(errors, "event_attributes.object"),
        Some(JsonValue::Object(object)) => {
            let target = Fields(object);
            // AliasChoices("object_id", "id"): the first present, null included
            let (key, value) = match target.get("object_id") {
                Some(v) => ("object_id", Some(v)),
                None => ("id", target.get("id")),
            };
            match value {
                None => missing(errors, "event_attributes.object.object_id"),
                Some(v) => {
                    let mut failed = Vec::new();
                    let id = object_id(&mut failed, &format!("event_attributes.object.{key}"), v);
                    for (where_, msg) in &failed {
                        errors.add(where_, msg);
                    }
                    id
                }
            }
        }
        Some(_) => {
            errors.add("event_attributes.object", OBJECT);
            None
        }
    };
    let ordinal = match attrs.present("position") {
        None => Some(None),
        Some(JsonValue::Object(position)) => ordinal(errors, Fields(position).present("ordinal")),
        Some(_) => {
            errors.add("event_attributes.position", OBJECT);
            None
        }
    };
    Some((object_id?, ordinal?))
}

/// `ordinal: int (0 <= n < MAX_POSITION) | UbiOrdinal | None`, pydantic's union errors.
fn ordinal(errors: &mut Errors, value: Option<&JsonValue>) -> Option<Option<LaxInt>> {
    const LOC: &str = "event_attributes.position.ordinal";
    let Some(value) = value else {
        return Some(None);
    };
    let as_int = lax_int(value).and_then(|n| match n {
        LaxInt::Small(i) if i < 0 => Err("Input should be greater than or equal to 0"),
        LaxInt::Big(true) => Err("Input should be greater than or equal to 0"),
        LaxInt::Small(i) if i < MAX_POSITION => Ok(n),
        _ => Err("Input should be less than 1000000"),
    });
    let int_error = match as_int {
        Ok(n) => return Some(Some(n)),
        Err(m) => m,
    };
    let JsonValue::Object(object) = value else {
        errors.add(&format!("{LOC}.constrained-int"), int_error);
        errors.add(&format!("{LOC}.UbiOrdinal"), OBJECT);
        return None;
    };
    let index = match Fields(object).get("index") {
        None => Err(REQUIRED),
        Some(v) => lax_int(v),
    };
    match index {
        Ok(n) => Some(Some(n)),
        Err(m) => {
            errors.add(&format!("{LOC}.constrained-int"), int_error);
            errors.add(&format!("{LOC}.UbiOrdinal.index"), m);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(attributes: &str) -> Result<(String, Option<LaxInt>), String> {
        let value = JsonValue::parse(attributes.as_bytes(), true).unwrap();
        let mut errors = Errors::new("ubi event");
        match event_attributes(&mut errors, &value) {
            Some(got) => Ok(got),
            None => Err(errors.finish().unwrap_err().detail),
        }
    }

    #[test]
    fn attributes() {
        assert_eq!(read(r#"{"object":{"id":5}}"#), Ok(("5".into(), None)));
        assert_eq!(
            read(r#"{"object":{"object_id":"a","id":"b"},"position":{"ordinal":" 3 "}}"#),
            Ok(("a".into(), Some(LaxInt::Small(3))))
        );
        assert_eq!(
            read(r#"{"object":{"id":"a"},"position":{"ordinal":{"index":-4}}}"#),
            Ok(("a".into(), Some(LaxInt::Small(-4))))
        );
        assert_eq!(
            read(r#"{"object":{"id":"a"},"position":{"ordinal":3.5}}"#).unwrap_err(),
            "ubi event.event_attributes.position.ordinal.constrained-int: Input should be a \
             valid integer, got a number with a fractional part (+1 more)"
        );
        assert_eq!(
            read(r#"{"object":{"object_id":null,"id":"d"}}"#).unwrap_err(),
            "ubi event.event_attributes.object.object_id.str: Input should be a valid string \
             (+1 more)"
        );
        assert_eq!(
            read(r#"{"position":5}"#).unwrap_err(),
            "ubi event.event_attributes.object: Field required (+1 more)"
        );
    }
}
