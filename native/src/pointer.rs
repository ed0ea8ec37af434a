//! JSON Pointers (RFC 6901) as `streameval/events/pointer.py` reads them, and the look-up of
//! the mapped decoder (`mapped_schema.alias_path`: a pydantic-core alias path): `""` is the
//! whole record, `~1` is `/` and `~0` is `~`; a token of 1 to 9 digits without a leading zero
//! indexes an array (and names nothing in an object), any other token names an object's member
//! (the last of duplicate keys). What is not there is `None`.

use jiter::JsonValue;

/// One step of a compiled pointer.
#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    Key(String),
    Index(usize),
}

/// The unescaped tokens of `pointer`, or the message of pointer.py's `ValueError`.
pub fn tokens(pointer: &str) -> Result<Vec<String>, String> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(format!(
            "JSON Pointer '{pointer}' must be empty or start with '/'"
        ));
    };
    rest.split('/')
        .map(|raw| {
            if raw.replace("~0", "").replace("~1", "").contains('~') {
                return Err(format!(
                    "JSON Pointer '{pointer}': '~' must be followed by 0 or 1"
                ));
            }
            Ok(raw.replace("~1", "/").replace("~0", "~"))
        })
        .collect()
}

fn is_index(token: &str) -> bool {
    let b = token.as_bytes();
    token == "0"
        || (!b.is_empty() && b.len() <= 9 && b[0] != b'0' && b.iter().all(u8::is_ascii_digit))
}

/// `pointer` compiled: a digit token an index, the others member names.
pub fn compile(pointer: &str) -> Result<Vec<Token>, String> {
    Ok(tokens(pointer)?
        .into_iter()
        .map(|t| match is_index(&t) {
            true => Token::Index(t.parse().unwrap_or(usize::MAX)),
            false => Token::Key(t),
        })
        .collect())
}

/// The value `path` names in `value`, or `None`.
pub fn lookup<'a, 'j>(value: &'a JsonValue<'j>, path: &[Token]) -> Option<&'a JsonValue<'j>> {
    let mut here = value;
    for token in path {
        here = match (token, here) {
            (Token::Key(key), JsonValue::Object(object)) => object
                .iter()
                .rev()
                .find(|(k, _)| k == key.as_str())
                .map(|(_, v)| v)?,
            (Token::Index(i), JsonValue::Array(array)) => array.get(*i)?,
            _ => return None,
        };
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers() {
        assert_eq!(tokens("/a~1b/~0c/").unwrap(), ["a/b", "~c", ""]);
        assert!(tokens("a").is_err());
        assert!(tokens("/a~2").is_err());
        assert_eq!(
            compile("/0/01/x").unwrap(),
            [
                Token::Index(0),
                Token::Key("01".into()),
                Token::Key("x".into())
            ]
        );
        let value = JsonValue::parse(
            br#"{"a":[{"b":1},{"b":2}],"0":{"x":3},"a":[{"b":4}]}"#,
            false,
        )
        .unwrap();
        let get = |p: &str| lookup(&value, &compile(p).unwrap()).map(|v| format!("{v:?}"));
        assert_eq!(get("/a/0/b"), Some("Int(4)".into())); // the last duplicate key
        assert_eq!(get("/a/1/b"), None);
        assert_eq!(get("/0/x"), None); // a digit token indexes arrays only
        assert!(get("").is_some());
    }
}
