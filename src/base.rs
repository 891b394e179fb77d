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
    if let Some(fast) = fast_base(input, opts) {
        return Ok(fast);
    }
    slow_base(input, opts)
}

/// The reference path: the `url` crate, then escapes and query clean-up.
pub fn slow_base(input: &str, opts: &BaseOptions) -> Result<String, BaseError> {
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

/// Bytes that make the fast path hand over to the `url` crate when found in a path or query:
/// anything the WHATWG parser would percent-encode, rewrite or interpret.
fn fast_ok(b: u8) -> bool {
    matches!(b, b'!' | b'$'..=b';' | b'=' | b'?'..=b'[' | b']' | b'_' | b'a'..=b'z' | b'~')
}

/// The fast path for plain ASCII `http`/`https` URLs; `None` hands over to [`slow_base`].
///
/// It accepts only inputs it can prove the `url` crate would leave byte-for-byte alone apart from
/// the steps it performs itself (lower-casing the scheme and host, dropping a default port,
/// adding `/` for an empty path), so both paths give identical results (tested on every URL of the
/// shared URL lists).
///
/// ```
/// use dedust::base::{fast_base, slow_base};
/// let o = dedust::BaseOptions::default();
/// let u = "HTTP://Example.com:80/a%7e?b=1&a=2#x";
/// assert_eq!(fast_base(u, &o).unwrap(), slow_base(u, &o).unwrap());
/// assert_eq!(fast_base("http://[::1]/", &o), None);
/// ```
pub fn fast_base(input: &str, opts: &BaseOptions) -> Option<String> {
    let b = input.as_bytes();
    if opts.keep_fragment || b.len() < 8 {
        return None;
    }
    let (https, rest) = if b[..7].eq_ignore_ascii_case(b"http://") {
        (false, &input[7..])
    } else if b.len() > 8 && b[..8].eq_ignore_ascii_case(b"https://") {
        (true, &input[8..])
    } else {
        return None;
    };
    let rb = rest.as_bytes();
    let auth_end = rb
        .iter()
        .position(|&c| matches!(c, b'/' | b'?' | b'#'))
        .unwrap_or(rb.len());
    let (auth, tail) = rest.split_at(auth_end);
    let (host, port) = match auth.find(':') {
        Some(i) => (&auth[..i], Some(&auth[i + 1..])),
        None => (auth, None),
    };
    // Host: letters, digits, `-` and `.`; no empty label; not an IPv4-looking or IDNA label.
    if host.is_empty()
        || host.starts_with('.')
        || host.contains("..")
        || !host
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.')
    {
        return None;
    }
    let last = host.trim_end_matches('.').rsplit('.').next().unwrap_or("");
    if last.is_empty() || last.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if host
        .split('.')
        .any(|l| l.len() >= 4 && l[..4].eq_ignore_ascii_case("xn--"))
    {
        return None;
    }
    let port = match port {
        None => None,
        Some(p)
            if !p.is_empty()
                && p.len() <= 5
                && p.bytes().all(|c| c.is_ascii_digit())
                && !p.starts_with('0') =>
        {
            let v: u32 = p.parse().ok()?;
            if v > 65535 {
                return None;
            }
            let default = if https { 443 } else { 80 };
            (v != default).then_some(p)
        }
        Some(_) => return None,
    };
    let tail = match tail.find('#') {
        Some(i) => &tail[..i],
        None => tail,
    };
    let (path, query) = match tail.find('?') {
        Some(i) => (&tail[..i], Some(&tail[i + 1..])),
        None => (tail, None),
    };
    if !path.bytes().all(fast_ok) || path.bytes().any(|c| c == b'?') {
        return None;
    }
    if let Some(q) = query {
        // `'` is in the WHATWG special-query percent-encode set.
        if !q.bytes().all(|c| fast_ok(c) && c != b'\'') {
            return None;
        }
    }
    // Dot segments (also spelled `%2e`) are the parser's business.
    if path.split('/').any(|seg| seg == "." || seg == "..")
        || path.contains("%2e")
        || path.contains("%2E")
    {
        return None;
    }
    // An escape the parser would not copy through unchanged (`%` not followed by two hex digits
    // is kept by both, so only well-formed escapes matter and they are normalized below).
    let mut out = String::with_capacity(input.len() + 1);
    out.push_str(if https { "https://" } else { "http://" });
    for c in host.bytes() {
        out.push(c.to_ascii_lowercase() as char);
    }
    if let Some(p) = port {
        out.push(':');
        out.push_str(p);
    }
    if path.is_empty() {
        out.push('/');
    } else {
        out.push_str(&normalize_escapes(path));
    }
    if let Some(q) = query {
        let q = normalize_query(q, opts.keep_query_order);
        if !q.is_empty() {
            out.push('?');
            out.push_str(&q);
        }
    }
    Some(out)
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
    fn fast_path_agrees_with_url_crate() {
        let d = BaseOptions::default();
        let cases = [
            "http://a.b/x?q='",
            "http://a.b/x'y",
            "HTTPS://A.B:443/",
            "http://a.b:8080",
            "http://a.b:0/",
            "http://a.b:080/",
            "http://a.b:99999/",
            "http://a.b./x",
            "http://a..b/",
            "http://1.2.3.4/",
            "http://a.0x7f/",
            "http://xn--nxasmq6b.com/",
            "http://a.b/%2e/x",
            "http://a.b/./x",
            "http://a.b/x/..",
            "http://a.b/x?a=%7e&b=%zz",
            "http://a.b/%41%2f",
            "http://a.b#f",
            "http://a.b?#",
            "http://a.b/x?",
            "http://a.b/x?&&",
            "http://a.b/[x]",
            "http://a.b/x|y",
            "http://a.b/x y",
            "http://a.b/x\\y",
            "http://u@a.b/",
            "http://a.b:/",
            "http://a.b/x?q=\"",
            "http://a.b/x?q=a%20b&p=%2F",
            "http://A-B.c/D?E=F",
        ];
        for u in cases {
            if let Some(f) = fast_base(u, &d) {
                assert_eq!(Ok(f), slow_base(u, &d), "{u}");
            }
        }
        assert!(fast_base("http://a.b/x", &d).is_some());
    }

    #[test]
    fn errors() {
        let d = BaseOptions::default();
        for bad in ["", "   ", "no scheme", "http://", "http://exa mple.com/"] {
            assert!(base_normalize(bad, &d).is_err(), "{bad:?} should fail");
        }
    }
}
