//! The hasher of the maps and sets keyed by stream data (request ids, query ids, doc ids,
//! segments, dedup keys), in one place: `Map<K, V>`, `Set<K>`, `IndexMap<K, V>` and the
//! [`Seeded`] `BuildHasher` (for hashbrown's `HashTable`).
//!
//! foldhash (`fast`), not std's SipHash-1-3: on the engine's short keys (ids of 5–40 bytes) a
//! hash costs a few multiplies instead of SipHash's rounds (docs/native.md "Where the Rust time
//! goes": SipHash was ~2.5 % of a replay's samples). Hostile input: the keys come from the
//! stream, so whoever writes it could try to make many ids land in one bucket (HashDoS) and turn
//! each lookup into a scan. Each hasher is therefore keyed by a secret the stream cannot know:
//! the process-wide seed and each map's own seed are drawn from std's `RandomState`, whose keys
//! come from the operating system's randomness (not foldhash's own default seed, which is
//! derived from addresses and the time). foldhash is not a cryptographic PRF: a party that could
//! read hash values or iteration orders might learn the key, but nothing of either leaves the
//! engine (iteration orders that reach outputs come from insertion-ordered maps or sorting,
//! as with SipHash, whose orders are random too). Where a hash *is* the identity, the closed
//! request ids' 64-bit fingerprints (`join/closed_ids.rs`), std's SipHash stays: two ids that
//! share a fingerprint share an outcome, so that hash must be a keyed PRF.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use foldhash::fast::{FoldHasher, SeedableRandomState};
use foldhash::SharedSeed;

/// The seed shared by every map of the process, drawn once.
static SHARED: OnceLock<SharedSeed> = OnceLock::new();

/// foldhash keyed from the operating system's randomness: a process-wide seed and a seed per
/// map (as std's `RandomState`, two maps hash the same key differently).
#[derive(Clone, Debug)]
pub struct Seeded(SeedableRandomState);

impl Default for Seeded {
    fn default() -> Self {
        // std's RandomState: keys from the OS once per thread, then one increment per state
        let random = RandomState::new();
        let shared = SHARED.get_or_init(|| SharedSeed::from_u64(random.hash_one(0u64)));
        Seeded(SeedableRandomState::with_seed(
            random.hash_one(1u64),
            shared,
        ))
    }
}

impl BuildHasher for Seeded {
    type Hasher = FoldHasher<'static>;

    #[inline]
    fn build_hasher(&self) -> Self::Hasher {
        self.0.build_hasher()
    }
}

pub type Map<K, V> = std::collections::HashMap<K, V, Seeded>;
pub type Set<K> = std::collections::HashSet<K, Seeded>;
/// insertion-ordered (`indexmap`), where iteration order reaches an output
pub type IndexMap<K, V> = indexmap::IndexMap<K, V, Seeded>;

/// An empty `Map` with room for `n` entries.
pub fn map_with_capacity<K, V>(n: usize) -> Map<K, V> {
    Map::with_capacity_and_hasher(n, Seeded::default())
}

/// An empty `Set` with room for `n` entries.
pub fn set_with_capacity<K>(n: usize) -> Set<K> {
    Set::with_capacity_and_hasher(n, Seeded::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_are_keyed_apart_and_agree_with_themselves() {
        let (a, b) = (Seeded::default(), Seeded::default());
        assert_eq!(a.hash_one("req-1"), a.hash_one("req-1"));
        assert_eq!(a.hash_one("req-1"), a.clone().hash_one("req-1"));
        // two maps: two keys (a collision of all 8 probes would be 2^-512)
        let differ = (0..8).any(|i| a.hash_one(i) != b.hash_one(i));
        assert!(differ, "two maps share their key");
    }

    #[test]
    fn map_and_set_behave_as_std() {
        let mut m: Map<String, u32> = map_with_capacity(4);
        m.insert("a".into(), 1);
        *m.entry("a".into()).or_default() += 1;
        assert_eq!(m.get("a"), Some(&2));
        let mut s: Set<&str> = set_with_capacity(2);
        assert!(s.insert("x") && !s.insert("x"));
        let mut im: IndexMap<&str, u8> = IndexMap::default();
        im.insert("z", 1);
        im.insert("a", 2);
        assert_eq!(im.keys().copied().collect::<Vec<_>>(), ["z", "a"]);
    }
}
