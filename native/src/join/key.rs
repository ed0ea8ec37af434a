//! What makes two records the same event, as `dedup_key` of `streameval/events/decode.py`: its
//! `event_id` when it has one, else a 16-byte BLAKE2b digest of the record with the surrounding
//! white space of Python's `bytes.strip()` removed. A string key and a digest never collide.

use blake2::digest::consts::U16;
use blake2::{Blake2b, Digest};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DedupKey {
    Id(Box<str>),
    Digest([u8; 16]),
}

/// Python's `bytes.strip()`: ASCII space, \t, \n, \r, \x0b and \x0c (Rust's
/// `trim_ascii` leaves \x0b).
pub fn py_strip(raw: &[u8]) -> &[u8] {
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
    let start = raw.iter().position(|b| !space(b)).unwrap_or(raw.len());
    let end = raw.iter().rposition(|b| !space(b)).map_or(start, |i| i + 1);
    &raw[start..end]
}

pub fn dedup_key(event_id: Option<&str>, raw: &[u8]) -> DedupKey {
    match event_id {
        Some(id) => DedupKey::Id(id.into()),
        None => DedupKey::Digest(Blake2b::<U16>::digest(py_strip(raw)).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: &DedupKey) -> String {
        match d {
            DedupKey::Digest(b) => b.iter().map(|x| format!("{x:02x}")).collect(),
            DedupKey::Id(s) => s.to_string(),
        }
    }

    #[test]
    fn digests_of_hashlib() {
        // python3 -c "import hashlib; print(hashlib.blake2b(b'...', digest_size=16).hexdigest())"
        let cases: &[(&[u8], &str)] = &[
            (b"", "cae66941d9efbd404e4d88758ea67670"),
            (b"abc", "cf4ab791c62b8d2b2109c90275287816"),
            (b" \t\x0b\x0cabc\r\n", "cf4ab791c62b8d2b2109c90275287816"),
            (b"\n\n", "cae66941d9efbd404e4d88758ea67670"),
        ];
        for (raw, want) in cases {
            assert_eq!(hex(&dedup_key(None, raw)), *want, "{raw:?}");
        }
    }

    #[test]
    fn event_id_first() {
        assert_eq!(dedup_key(Some("e1"), b"x"), DedupKey::Id("e1".into()));
        assert_ne!(dedup_key(None, b"a"), dedup_key(None, b"b"));
    }

    #[test]
    fn strip_table() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"", b""),
            (b"  ", b""),
            (b" a b ", b"a b"),
            (b"\x0ba\x0b", b"a"),
            (b"\xa0a", b"\xa0a"),
        ];
        for (raw, want) in cases {
            assert_eq!(py_strip(raw), *want);
        }
    }
}
