//! An insertion-ordered map, append-only: what a Python `dict` is to the window tables, whose
//! entries are never deleted. The order matters twice: it is the order a window adds a bucket's
//! accumulators (so float sums are those of Python, to the bit) and the order of the persisted
//! codec's bytes.

use std::collections::HashMap;
use std::hash::Hash;

#[derive(Clone, Debug)]
pub struct OrderedMap<K, V> {
    index: HashMap<K, usize>,
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
            index: HashMap::new(),
            entries: Vec::new(),
        }
    }
}

impl<K: Hash + Eq + Clone, V> OrderedMap<K, V> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.index.get(key).map(|&i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        match self.index.get(key) {
            Some(&i) => Some(&mut self.entries[i].1),
            None => None,
        }
    }

    /// `dict[key] = value`: a new key goes last, a known one keeps its place.
    pub fn insert(&mut self, key: K, value: V) {
        match self.index.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key, value));
            }
        }
    }

    /// `dict.setdefault(key, make())`, mutable.
    pub fn entry_or_insert_with(&mut self, key: &K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                self.index.insert(key.clone(), self.entries.len());
                self.entries.push((key.clone(), make()));
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
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
        *map.entry_or_insert_with(&"d".to_string(), || 0) += 5;
        *map.entry_or_insert_with(&"b".to_string(), || 0) += 5;
        assert_eq!(map.get(&"d".to_string()), Some(&5));
        assert_eq!(map.get(&"b".to_string()), Some(&6));
        assert_eq!(map.len(), 4);
        assert!(map.get(&"z".to_string()).is_none());
    }
}
