//! Base normalization: the safe, generic canonical form applied before learning and before applying.
//!
//! In: one absolute URL as text. Out: its base-normalized form, or a [`BaseError`] when the `url`
//! crate (WHATWG parser) rejects it. Steps, in order:
//!
//! 1. parse with the `url` crate, which lowercases the scheme and the host (IDNA to punycode),
//!    drops the default port of special schemes, resolves `.` and `..` path segments and
//!    percent-encodes characters that must be encoded;
//! 2. percent-encoding of the path and query is normalized: escapes of unreserved characters
//!    (`A-Z a-z 0-9 - . _ ~`) are decoded, every other escape gets upper-case hex digits;
//! 3. the fragment is dropped (unless [`BaseOptions::keep_fragment`]);
//! 4. empty query parameters (`a=1&&b=2`) and an empty query (`?`) are removed, and query
//!    parameters are sorted by name, stably, so that values of a repeated name keep their order
//!    (unless [`BaseOptions::keep_query_order`]).
//!
//! Invariant: the function is idempotent, `base(base(u)) == base(u)` (tested below and by a
//! property test), and it never changes which resource a standards-following server serves,
//! except for parameter order, which no common server software depends on.

use std::fmt;

/// Options of the base layer (same flags in `learn` and `normalize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BaseOptions {
    /// Keep `#fragment` (dropped by default: crawlers never send it).
    pub keep_fragment: bool,
    /// Keep the query parameter order (sorted by name by default).
    pub keep_query_order: bool,
}

/// Why a URL could not be base-normalized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseError(pub String);

impl fmt::Display for BaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BaseError {}

/// Base-normalize one absolute URL.
///
/// ```
/// use dedust::{base_normalize, BaseOptions};
/// let o = BaseOptions::default();
/// assert_eq!(
///     base_normalize("HTTP://Example.COM:80/a/./b/../%7euser?b=2&a=1#top", &o).unwrap(),
///     "http://example.com/a/~user?a=1&b=2"
/// );
/// assert!(base_normalize("not a url", &o).is_err());
/// ```
pub fn base_normalize(input: &str, opts: &BaseOptions) -> Result<String, BaseError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(BaseError("empty URL".into()));
    }
    let mut url = url::Url::parse(trimmed).map_err(|e| BaseError(e.to_string()))?;
    if url.cannot_be_a_base() {
        // mailto:, javascript:, data: … have no path/query structure worth normalizing.
        return Ok(url.into());
    }
    let path = normalize_escapes(url.path());
    url.set_path(&path);
    let query = url
        .query()
        .map(|q| normalize_query(q, opts.keep_query_order));
    match query {
        Some(q) if !q.is_empty() => url.set_query(Some(&q)),
        _ => url.set_query(None),
    }
    if !opts.keep_fragment {
        url.set_fragment(None);
    }
    Ok(url.into())
}

/// Normalize a raw query string: normalized escapes, empty pairs removed, sorted by name.
fn normalize_query(q: &str, keep_order: bool) -> String {
    let mut pairs: Vec<String> = q
        .split('&')
        .filter(|p| !p.is_empty())
        .map(normalize_escapes)
        .collect();
    if !keep_order {
        pairs.sort_by(|a, b| param_name(a).cmp(param_name(b)));
    }
    pairs.join("&")
}

/// The name part of a `name=value` query pair.
pub(crate) fn param_name(pair: &str) -> &str {
    pair.split_once('=').map_or(pair, |(n, _)| n)
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Decode escapes of unreserved characters and upper-case the hex digits of the others.
pub(crate) fn normalize_escapes(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex_val(b[i + 1]), hex_val(b[i + 2])) {
                let v = h * 16 + l;
                if is_unreserved(v) {
                    out.push(v as char);
                } else {
                    out.push('%');
                    out.push(b[i + 1].to_ascii_uppercase() as char);
                    out.push(b[i + 2].to_ascii_uppercase() as char);
                }
                i += 3;
                continue;
            }
        }
        // Copy one whole UTF-8 character.
        let ch = s[i..].chars().next().expect("index on a char boundary");
        out.push(ch);
        i += ch.len_utf8();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let d = BaseOptions::default();
        let keep = BaseOptions {
            keep_fragment: true,
            keep_query_order: true,
        };
        let cases: &[(&str, BaseOptions, &str)] = &[
            ("HTTP://WWW.Example.com/", d, "http://www.example.com/"),
            ("http://example.com:80/x", d, "http://example.com/x"),
            ("https://example.com:443/x", d, "https://example.com/x"),
            (
                "https://example.com:8443/x",
                d,
                "https://example.com:8443/x",
            ),
            ("http://example.com", d, "http://example.com/"),
            ("http://e.com/a/b/../c/./d", d, "http://e.com/a/c/d"),
            (
                "http://e.com/%7Euser/%41%2f%2F",
                d,
                "http://e.com/~user/A%2F%2F",
            ),
            ("http://e.com/a%c3%a9", d, "http://e.com/a%C3%A9"),
            (
                "http://e.com/x?b=2&a=1&a=0",
                d,
                "http://e.com/x?a=1&a=0&b=2",
            ),
            ("http://e.com/x?b=2&a=1", keep, "http://e.com/x?b=2&a=1"),
            ("http://e.com/x?b=2&&a=1&", d, "http://e.com/x?a=1&b=2"),
            ("http://e.com/x?", d, "http://e.com/x"),
            ("http://e.com/x#frag", d, "http://e.com/x"),
            ("http://e.com/x#frag", keep, "http://e.com/x#frag"),
            ("http://e.com/x?q=%7e%20", d, "http://e.com/x?q=~%20"),
            ("  http://e.com/x  ", d, "http://e.com/x"),
            ("http://e.com/50%", d, "http://e.com/50%"),
            ("http://e.com/5%zz", d, "http://e.com/5%zz"),
            (
                "mailto:Someone@Example.com",
                d,
                "mailto:Someone@Example.com",
            ),
        ];
        for (input, o, want) in cases {
            let got = base_normalize(input, o).unwrap();
            assert_eq!(&got, want, "input {input}");
            assert_eq!(
                base_normalize(&got, o).unwrap(),
                got,
                "idempotent on {input}"
            );
        }
    }

    #[test]
    fn errors() {
        let d = BaseOptions::default();
        for bad in ["", "   ", "no scheme", "http://", "http://exa mple.com/"] {
            assert!(base_normalize(bad, &d).is_err(), "{bad:?} should fail");
        }
    }
}
