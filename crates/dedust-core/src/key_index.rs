//! Key index: the engine's maps from short text keys (hosts, path segments, parameter names,
//! default-document and suffix words) to rule lists, with a pre-check that answers most misses
//! without hashing.
//!
//! In: keys from a rule file, then one lookup per URL feature. Out: the value stored under a key,
//! or `None`. Invariant: the pre-check never rejects a stored key (it only looks at the key's
//! length and its first and last bytes, each recorded for every stored key), so [`KeyIndex::get`]
//! answers exactly as the map alone would; it is there because most URLs a crawler normalizes
//! have none of the rule file's hosts, segments or parameters.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A word-at-a-time multiplicative hash (FxHash's mixing step over 8-byte words) for the short
/// host and segment keys of the rule index: SipHash, or FNV's byte loop, costs more than the
/// lookup saves on this path, which every URL on a rule set's hosts takes. The keys come from the
/// rule file, not from the crawl, so collisions can only lengthen probes among the file's keys.
#[derive(Default)]
struct KeyHasher(u64);

impl KeyHasher {
    #[inline]
    fn mix(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.mix(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, b: u8) {
        self.mix(u64::from(b));
    }
}

/// A map from text keys to `V` with a three-bit pre-check (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct KeyIndex<V> {
    map: HashMap<String, V, BuildHasherDefault<KeyHasher>>,
    /// Bit `len % 64` of every stored key's length.
    lens: u64,
    /// Bit `b % 64` of every stored key's first byte (bit 0 for the empty key).
    firsts: u64,
    /// The same for last bytes.
    lasts: u64,
}

impl<V> Default for KeyIndex<V> {
    fn default() -> Self {
        KeyIndex {
            map: HashMap::default(),
            lens: 0,
            firsts: 0,
            lasts: 0,
        }
    }
}

/// The three pre-check bits of a key: length, first byte, last byte.
#[inline]
fn bits(k: &str) -> (u64, u64, u64) {
    let b = k.as_bytes();
    let bit = |x: usize| 1u64 << (x % 64);
    (
        bit(b.len()),
        bit(b.first().map_or(0, |&c| usize::from(c))),
        bit(b.last().map_or(0, |&c| usize::from(c))),
    )
}

impl<V> KeyIndex<V> {
    /// The value under `key`, inserted as `V::default()` when absent.
    pub(crate) fn entry(&mut self, key: &str) -> &mut V
    where
        V: Default,
    {
        let (l, f, e) = bits(key);
        self.lens |= l;
        self.firsts |= f;
        self.lasts |= e;
        self.map.entry(key.to_string()).or_default()
    }

    /// The value under `key`.
    ///
    /// # Complexity
    /// O(1) for a key the pre-check rejects; otherwise one hash of the key and a probe.
    #[inline]
    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        let (l, f, e) = bits(key);
        if self.lens & l == 0 || self.firsts & f == 0 || self.lasts & e == 0 {
            return None;
        }
        self.map.get(key)
    }

    /// Whether no key is stored.
    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Every stored value.
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.map.values_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_map_alone() {
        let keys = [
            "",
            "a",
            "index.html",
            "www.example.org",
            "utm_source",
            "Ä",
            "é/",
        ];
        let probes = [
            "",
            "a",
            "b",
            "A",
            "index.htm",
            "index.html",
            "jndex.html",
            "index.htmm",
            "www.example.org",
            "www.example.orh",
            "utm_source",
            "utm_sourcf",
            "Ä",
            "é/",
            "é",
            "x".repeat(70).as_str(),
        ]
        .map(str::to_string);
        let mut k: KeyIndex<usize> = KeyIndex::default();
        let mut plain = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            *k.entry(key) = i;
            plain.insert(key.to_string(), i);
        }
        for p in &probes {
            assert_eq!(k.get(p), plain.get(p.as_str()), "{p:?}");
        }
        // Rejected without hashing: another length, first byte or last byte.
        for miss in ["bb", "zndex.html", "index.htmz"] {
            let (l, f, e) = bits(miss);
            assert!(
                k.lens & l == 0 || k.firsts & f == 0 || k.lasts & e == 0,
                "{miss}"
            );
        }
        assert!(KeyIndex::<usize>::default().get("").is_none());
    }
}
