//! Hash helper: 64-bit FNV-1a, the one hash the project uses where a value must be the same on
//! every run and machine (rule ids, cluster labels, split assignment, payload hashes).
//!
//! In: bytes. Out: a `u64`. Invariant: the same bytes give the same hash everywhere (no random
//! seed); not collision-resistant, so never the only check where an attacker picks the input.

/// 64-bit FNV-1a of a string's bytes.
///
/// ```
/// assert_eq!(dedust_core::__private::hash::fnv(""), 0xcbf29ce484222325);
/// let mut h = dedust_core::__private::hash::Fnv::new();
/// h.write(b"ab");
/// h.write(b"c");
/// assert_eq!(h.finish(), dedust_core::__private::hash::fnv("abc"));
/// ```
pub fn fnv(s: &str) -> u64 {
    let mut h = Fnv::new();
    h.write(s.as_bytes());
    h.finish()
}

/// FNV-1a over bytes given in pieces (a stream hashed chunk by chunk).
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Fnv {
    /// The hash of no bytes.
    pub fn new() -> Fnv {
        Fnv(0xcbf29ce484222325)
    }
    /// Hash `bytes` after those written before.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x100000001b3);
        }
    }
    /// The hash of every byte written.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv::new()
    }
}
