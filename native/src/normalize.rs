//! Query normalization exactly as `streameval/events/normalize.py` does it: NFKC, casefold,
//! NFKC again, white space runs collapsed and trimmed (`" ".join(text.split())`).
//!
//! Python's `unicodedata` is Unicode 14.0 (Python 3.11); the `unicode-normalization` crate is a
//! later version. The tables of `tables.rs` are generated from Python, and the code points
//! unassigned in Python's version are kept verbatim (Python treats them as starters without a
//! decomposition, which never compose), so the two agree on every input.

use crate::ranges::contains;
use crate::tables::{CASEFOLD, UNASSIGNED, WHITESPACE};
use unicode_normalization::UnicodeNormalization;

fn is_unassigned(ch: char) -> bool {
    contains(UNASSIGNED, ch as u32)
}

/// `str.isspace()` of Python's Unicode version.
pub fn is_py_space(ch: char) -> bool {
    if ch.is_ascii() {
        return matches!(ch, '\t'..='\r' | '\x1c'..='\x1f' | ' ');
    }
    WHITESPACE.binary_search(&ch).is_ok()
}

/// NFKC as Python's `unicodedata.normalize("NFKC", text)`.
pub fn nfkc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut start = 0;
    for (i, ch) in text.char_indices() {
        if is_unassigned(ch) {
            out.extend(text[start..i].nfkc());
            out.push(ch);
            start = i + ch.len_utf8();
        }
    }
    out.extend(text[start..].nfkc());
    out
}

/// Python's `str.casefold()`.
pub fn casefold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match CASEFOLD.binary_search_by(|&(c, _)| c.cmp(&ch)) {
            Ok(i) => out.push_str(CASEFOLD[i].1),
            Err(_) => out.push(ch),
        }
    }
    out
}

/// `" ".join(text.split())`.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(is_py_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// `normalize_query` of `streameval/events/normalize.py`.
pub fn normalize_query(text: &str) -> String {
    if text.is_ascii() {
        return collapse(&text.to_ascii_lowercase());
    }
    collapse(&nfkc(&casefold(&nfkc(text))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases = [
            ("Red  Shoes ", "red shoes"),
            ("  ", ""),
            ("\tA\x1cB\x1fC\u{85}D", "a b c d"),
            ("Straße", "strasse"),
            ("STRASSE", "strasse"),
            ("ﬁle", "file"),
            ("ＲＥＤ\u{3000}shoes", "red shoes"),
            ("ΣΑΣ", "σασ"),
            ("\u{1e9e}", "ss"),
            ("a\u{a0}b\u{200b}c", "a b\u{200b}c"),
            ("\u{1c90}", "\u{10d0}"),
        ];
        for (text, want) in cases {
            assert_eq!(normalize_query(text), want, "{text:?}");
        }
    }

    #[test]
    fn idempotent() {
        for text in ["Ǆ ǅ", "ᾈ", "İstanbul", "ﬃ ﬀ", "㎒"] {
            let once = normalize_query(text);
            assert_eq!(normalize_query(&once), once, "{text:?}");
        }
    }
}
