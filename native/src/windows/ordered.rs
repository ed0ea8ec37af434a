//! An insertion-ordered map, append-only: what a Python `dict` is to the window tables, whose
//! entries are never deleted. The order matters twice: it is the order a window adds a bucket's
//! accumulators (so float sums are those of Python, to the bit) and the order of the persisted
//! codec's bytes.
//!
//! Keys are looked up by a borrowed view (`super::lookup`), so that folding a list allocates
//! nothing once its keys exist.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::lookup::{AsLookup, FxHasher, Lookup};

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
