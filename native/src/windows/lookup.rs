//! Keys seen through borrowed views, and their hash: a table keyed by an owned
//! `(String, Vec<String>, Vec<i64>)` is looked up with `(&str, &[String], &[i64])`, so that
//! folding a list allocates nothing once its keys exist. Hashing is FxHash (rustc's): the keys
//! are few per bucket (segments are capped), so hash flooding has nothing to flood.

use std::hash::Hasher;

/// rustc's FxHasher: one multiply per word.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A key of an [`OrderedMap<K, _>`] seen through a borrowed view: the view hashes as the key
/// it stands for and says whether it is that key.
pub trait Lookup<K> {
    fn hash_into(&self, h: &mut FxHasher);
    fn is(&self, key: &K) -> bool;
    fn to_key(&self) -> K;
}

fn hash_str(h: &mut FxHasher, s: &str) {
    h.write(s.as_bytes());
    h.write_usize(s.len()); // "ab","c" and "a","bc" differ
}

fn hash_strs(h: &mut FxHasher, items: &[String]) {
    h.write_usize(items.len());
    for s in items {
        hash_str(h, s);
    }
}

fn hash_ints(h: &mut FxHasher, items: &[i64]) {
    h.write_usize(items.len());
    for &i in items {
        h.write_u64(i as u64);
    }
}

impl Lookup<String> for &str {
    fn hash_into(&self, h: &mut FxHasher) {
        hash_str(h, self);
    }
    fn is(&self, key: &String) -> bool {
        *self == key
    }
    fn to_key(&self) -> String {
        self.to_string()
    }
}

impl Lookup<Vec<String>> for &[String] {
    fn hash_into(&self, h: &mut FxHasher) {
        hash_strs(h, self);
    }
    fn is(&self, key: &Vec<String>) -> bool {
        *self == key.as_slice()
    }
    fn to_key(&self) -> Vec<String> {
        self.to_vec()
    }
}

impl Lookup<(String, String)> for (&str, &str) {
    fn hash_into(&self, h: &mut FxHasher) {
        hash_str(h, self.0);
        hash_str(h, self.1);
    }
    fn is(&self, key: &(String, String)) -> bool {
        self.0 == key.0 && self.1 == key.1
    }
    fn to_key(&self) -> (String, String) {
        (self.0.to_string(), self.1.to_string())
    }
}

/// (relevance, segment, ks)
impl Lookup<(String, Vec<String>, Vec<i64>)> for (&str, &[String], &[i64]) {
    fn hash_into(&self, h: &mut FxHasher) {
        hash_str(h, self.0);
        hash_strs(h, self.1);
        hash_ints(h, self.2);
    }
    fn is(&self, key: &(String, Vec<String>, Vec<i64>)) -> bool {
        self.0 == key.0 && self.1 == key.1.as_slice() && self.2 == key.2.as_slice()
    }
    fn to_key(&self) -> (String, Vec<String>, Vec<i64>) {
        (self.0.to_string(), self.1.to_vec(), self.2.to_vec())
    }
}

/// (relevance, segment, k)
impl Lookup<(String, Vec<String>, i64)> for (&str, &[String], i64) {
    fn hash_into(&self, h: &mut FxHasher) {
        hash_str(h, self.0);
        hash_strs(h, self.1);
        h.write_u64(self.2 as u64);
    }
    fn is(&self, key: &(String, Vec<String>, i64)) -> bool {
        self.0 == key.0 && self.1 == key.1.as_slice() && self.2 == key.2
    }
    fn to_key(&self) -> (String, Vec<String>, i64) {
        (self.0.to_string(), self.1.to_vec(), self.2)
    }
}

/// An owned key is a view of itself.
pub trait AsLookup {
    type View<'a>: Lookup<Self>
    where
        Self: 'a + Sized;
    fn view(&self) -> Self::View<'_>
    where
        Self: Sized;
}

impl AsLookup for String {
    type View<'a> = &'a str;
    fn view(&self) -> &str {
        self
    }
}

impl AsLookup for Vec<String> {
    type View<'a> = &'a [String];
    fn view(&self) -> &[String] {
        self
    }
}

impl AsLookup for (String, String) {
    type View<'a> = (&'a str, &'a str);
    fn view(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl AsLookup for (String, Vec<String>, Vec<i64>) {
    type View<'a> = (&'a str, &'a [String], &'a [i64]);
    fn view(&self) -> (&str, &[String], &[i64]) {
        (&self.0, &self.1, &self.2)
    }
}

impl AsLookup for (String, Vec<String>, i64) {
    type View<'a> = (&'a str, &'a [String], i64);
    fn view(&self) -> (&str, &[String], i64) {
        (&self.0, &self.1, self.2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash<K>(view: &impl Lookup<K>) -> u64 {
        let mut h = FxHasher::default();
        view.hash_into(&mut h);
        h.finish()
    }

    #[test]
    fn a_borrowed_view_hashes_and_matches_as_its_owned_key() {
        let owned = (
            "judged".to_string(),
            vec!["a".to_string(), "".to_string()],
            vec![1, 3],
        );
        let seg = owned.1.clone();
        let view = ("judged", seg.as_slice(), &[1i64, 3][..]);
        assert_eq!(hash(&owned.view()), hash(&view));
        assert!(view.is(&owned));
        assert_eq!(view.to_key(), owned);
        // (view, the key it must not match)
        let other = ("judged", &seg[..1], &[1i64, 3][..]);
        assert!(!other.is(&owned));
        let pair = ("x".to_string(), "y".to_string());
        assert_eq!(hash(&pair.view()), hash(&("x", "y")));
        assert!(!("y", "x").is(&pair));
        assert_eq!(hash(&"abc".to_string().view()), hash(&"abc"));
    }
}
