//! The strings of an open list packed in one buffer: each after its length in LEB128 (one byte
//! below 128), so a 10-result list pays one byte per string instead of a `String` (24 bytes and
//! an allocation) each. Read back in order by a [`Cursor`].

pub fn put(buf: &mut Vec<u8>, mut n: usize) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            buf.push(byte);
            return;
        }
        buf.push(byte | 0x80);
    }
}

pub fn put_str(buf: &mut Vec<u8>, s: &str) {
    put(buf, s.len());
    buf.extend_from_slice(s.as_bytes());
}

/// A reader of the buffer, string by string.
pub struct Cursor<'a>(pub &'a [u8]);

impl<'a> Cursor<'a> {
    pub fn num(&mut self) -> usize {
        let (mut n, mut shift) = (0usize, 0);
        loop {
            let byte = self.0[0];
            self.0 = &self.0[1..];
            n |= ((byte & 0x7f) as usize) << shift;
            if byte & 0x80 == 0 {
                return n;
            }
            shift += 7;
        }
    }

    pub fn bytes(&mut self, len: usize) -> &'a str {
        let (s, rest) = self.0.split_at(len);
        self.0 = rest;
        // written from &str only
        std::str::from_utf8(s).unwrap_or_default()
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
        // (length, its LEB128 bytes)
        let table: &[(usize, &[u8])] = &[
            (0, &[0]),
            (127, &[0x7f]),
            (128, &[0x80, 1]),
            (300, &[0xac, 2]),
        ];
        for (n, bytes) in table {
            let mut buf = Vec::new();
            put(&mut buf, *n);
            assert_eq!(buf, *bytes);
            assert_eq!(Cursor(&buf).num(), *n);
        }
        let mut buf = Vec::new();
        for s in ["", "abc", &"x".repeat(1000), "é"] {
            put_str(&mut buf, s);
        }
        let mut c = Cursor(&buf);
        assert_eq!(
            [c.str(), c.str(), &c.str()[..3], c.str()],
            ["", "abc", "xxx", "é"]
        );
        assert!(c.0.is_empty());
    }
}
