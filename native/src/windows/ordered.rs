//! An insertion-ordered map, append-only: what a Python `dict` is to the window tables, whose
//! entries are never deleted. The order matters twice: it is the order a window adds a bucket's
//! accumulators (so float sums are those of Python, to the bit) and the order of the persisted
//! codec's bytes.
//!
//! Keys are looked up by a borrowed view ([`Lookup`]: `(&str, &[String], &[i64])` for an owned
//! `(String, Vec<String>, Vec<i64>)`), so that folding a list allocates nothing once its keys
//! exist. Hashing is FxHash (rustc's): the keys are few per bucket (segments are capped), so
//! hash flooding has nothing to flood.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// The entries of one hash: almost always one.
#[derive(Clone, Debug)]
enum Slot {
    One(usize),
    Many(Vec<usize>),
}

#[derive(Clone, Debug)]
pub struct OrderedMap<K, V> {
    /// entries by the Fx hash of their key
    index: HashMap<u64, Slot, BuildHasherDefault<FxHasher>>,
    entries: Vec<(K, V)>,
}

/// Equal when the same entries are in the same order (stricter than a dict's `==`).
impl<K: PartialEq, V: PartialEq> PartialEq for OrderedMap<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

impl<K, V> Default for OrderedMap<K, V> {
    fn default() -> Self {
        Self {
            index: HashMap::default(),
            entries: Vec::new(),
        }
    }
}

fn hash_of<K>(key: &impl Lookup<K>) -> u64 {
    let mut h = FxHasher::default();
    key.hash_into(&mut h);
    h.finish()
}

impl<K: AsLookup, V> OrderedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn find(&self, hash: u64, key: &impl Lookup<K>) -> Option<usize> {
        match self.index.get(&hash)? {
            Slot::One(i) => key.is(&self.entries[*i].0).then_some(*i),
            Slot::Many(all) => all.iter().copied().find(|&i| key.is(&self.entries[i].0)),
        }
    }

    fn push(&mut self, hash: u64, key: K, value: V) -> usize {
        let i = self.entries.len();
        self.entries.push((key, value));
        match self.index.get_mut(&hash) {
            None => {
                self.index.insert(hash, Slot::One(i));
            }
            Some(slot) => {
                let all = match slot {
                    Slot::One(j) => vec![*j, i],
                    Slot::Many(all) => {
                        all.push(i);
                        return i;
                    }
                };
                *slot = Slot::Many(all);
            }
        }
        i
    }

    pub fn get(&self, key: &impl Lookup<K>) -> Option<&V> {
        self.find(hash_of(key), key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &impl Lookup<K>) -> Option<&mut V> {
        let i = self.find(hash_of(key), key)?;
        Some(&mut self.entries[i].1)
    }

    /// `dict[key] = value`: a new key goes last, a known one keeps its place.
    pub fn insert(&mut self, key: K, value: V) {
        let hash = hash_of(&key.view());
        let found = self.find(hash, &key.view());
        match found {
            Some(i) => self.entries[i].1 = value,
            None => {
                self.push(hash, key, value);
            }
        }
    }

    /// `dict.setdefault(key, make())`, mutable; the key is made owned only when new.
    pub fn entry_or_insert_with(
        &mut self,
        key: impl Lookup<K>,
        make: impl FnOnce() -> V,
    ) -> &mut V {
        let hash = hash_of(&key);
        let i = match self.find(hash, &key) {
            Some(i) => i,
            None => self.push(hash, key.to_key(), make()),
        };
        &mut self.entries[i].1
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The entries, in insertion order.
    pub fn into_entries(self) -> Vec<(K, V)> {
        self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_of_first_insertion_as_a_dict_does() {
        let mut map = OrderedMap::new();
        // (key, value) in order; a repeated key keeps its first place, takes the last value
        for (k, v) in [("b", 1), ("a", 2), ("c", 3), ("a", 4)] {
            map.insert(k.to_string(), v);
        }
        let items: Vec<_> = map.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(items, [("b", 1), ("a", 4), ("c", 3)]);
        *map.entry_or_insert_with("d", || 0) += 5;
        *map.entry_or_insert_with("b", || 0) += 5;
        assert_eq!(map.get(&"d"), Some(&5));
        assert_eq!(map.get(&"b"), Some(&6));
        assert_eq!(map.len(), 4);
        assert!(map.get(&"z").is_none());
    }

    #[test]
    fn views_find_their_keys_and_only_theirs() {
        let mut map: OrderedMap<(String, Vec<String>, Vec<i64>), u32> = OrderedMap::new();
        let seg = |s: &[&str]| -> Vec<String> { s.iter().map(|x| x.to_string()).collect() };
        // keys that differ only in where the strings split, or in the cutoffs
        let keys = [
            ("ab", seg(&["c"]), vec![1]),
            ("a", seg(&["bc"]), vec![1]),
            ("a", seg(&["b", "c"]), vec![1]),
            ("a", seg(&["bc"]), vec![1, 3]),
            ("a", seg(&[]), vec![]),
        ];
        for (n, (rel, seg, ks)) in keys.iter().enumerate() {
            *map.entry_or_insert_with((*rel, seg.as_slice(), ks.as_slice()), || 0) += n as u32;
        }
        assert_eq!(map.len(), keys.len());
        for (n, (rel, seg, ks)) in keys.iter().enumerate() {
            assert_eq!(
                map.get(&(*rel, seg.as_slice(), ks.as_slice())),
                Some(&(n as u32))
            );
        }
    }

    #[test]
    fn colliding_hashes_keep_their_entries_apart() {
        // every key in one slot: the slot's list is searched
        let mut map: OrderedMap<String, usize> = OrderedMap::new();
        for (i, k) in ["x", "y", "z"].into_iter().enumerate() {
            let hash = 7;
            map.push(hash, k.to_string(), i);
        }
        for (i, k) in ["x", "y", "z"].into_iter().enumerate() {
            assert_eq!(map.find(7, &k), Some(i));
        }
        assert_eq!(map.find(7, &"w"), None);
    }
}
