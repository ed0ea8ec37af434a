//! The strings of an open list packed in one buffer: each after its length, so a 10-result list
//! pays one byte per string instead of a `String` (24 bytes and an allocation) each. Read back
//! in order by a [`Cursor`].
//!
//! The buffer is a `String`: a length is written in ASCII bytes only (6 bits a byte, low bits
//! first, 0x40 set on every byte but the last; one byte below 64), so the whole buffer is valid
//! UTF-8 by construction and a string read back is a slice of it (a char-boundary check) rather
//! than a UTF-8 validation per read (`from_utf8` was ~1.5 % of a replay's samples: every
//! `request_id()`, `doc_ids()`, `index_of()` of a list validated its strings again).

const MORE: u8 = 0x40;
const BITS: u32 = 6;

pub fn put(buf: &mut String, mut n: usize) {
    loop {
        let byte = (n & (MORE as usize - 1)) as u8;
        n >>= BITS;
        if n == 0 {
            buf.push(byte as char);
            return;
        }
        buf.push((byte | MORE) as char);
    }
}

pub fn put_str(buf: &mut String, s: &str) {
    put(buf, s.len());
    buf.push_str(s);
}

/// A reader of the buffer, string by string.
pub struct Cursor<'a>(pub &'a str);

impl<'a> Cursor<'a> {
    pub fn num(&mut self) -> usize {
        let (mut n, mut shift) = (0usize, 0);
        let bytes = self.0.as_bytes();
        let mut i = 0;
        loop {
            let byte = bytes[i];
            i += 1;
            n |= ((byte & (MORE - 1)) as usize) << shift;
            if byte & MORE == 0 {
                self.0 = &self.0[i..];
                return n;
            }
            shift += BITS;
        }
    }

    pub fn bytes(&mut self, len: usize) -> &'a str {
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        s
    }

    pub fn str(&mut self) -> &'a str {
        let len = self.num();
        self.bytes(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_strings_read_back() {
        // (length, its bytes: 6 bits each, low first, 0x40 on all but the last)
        let table: &[(usize, &[u8])] = &[
            (0, &[0]),
            (63, &[0x3f]),
            (64, &[0x40, 1]),
            (300, &[0x6c, 4]),
            (1 << 20, &[0x40, 0x40, 0x40, 4]),
        ];
        for (n, bytes) in table {
            let mut buf = String::new();
            put(&mut buf, *n);
            assert_eq!(buf.as_bytes(), *bytes);
            assert!(buf.is_ascii());
            assert_eq!(Cursor(&buf).num(), *n);
        }
        let mut buf = String::new();
        for s in ["", "abc", &"x".repeat(1000), "é", &"é".repeat(40)] {
            put_str(&mut buf, s);
        }
        let mut c = Cursor(&buf);
        assert_eq!(
            [c.str(), c.str(), &c.str()[..3], c.str(), c.str()],
            ["", "abc", "xxx", "é", &"é".repeat(40)]
        );
        assert!(c.0.is_empty());
    }
}
