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

use crate::url_parts::PartsAt;
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
#[non_exhaustive]
pub enum BaseError {
    /// Nothing but white space.
    Empty,
    /// The WHATWG parser refused the URL (relative, bad host, bad port…).
    Parse(url::ParseError),
}

impl fmt::Display for BaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseError::Empty => f.write_str("empty URL"),
            BaseError::Parse(e) => write!(f, "{e}"),
        }
    }
}

// The parser's message is this error's own text, so it is not also given as its `source`
// (an error chain would print it twice); match `BaseError::Parse` for the parser's error.
impl std::error::Error for BaseError {}

/// Base-normalize one absolute URL.
///
/// ```
/// use dedust_core::{base_normalize, BaseOptions};
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
        return Err(BaseError::Empty);
    }
    let mut url = url::Url::parse(trimmed).map_err(BaseError::Parse)?;
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

/// Bytes allowed as they are in a path or query on the fast path; any other byte makes it hand
/// over to the `url` crate: anything the WHATWG parser would percent-encode, rewrite or interpret.
static FAST_OK: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] =
            matches!(b, b'!' | b'$'..=b';' | b'=' | b'?'..=b'[' | b']' | b'_' | b'a'..=b'z' | b'~');
        c += 1;
    }
    t
};

// Byte classes of the fast path's authority loop.
const H_PLAIN: u8 = 0; // a-z, 0-9
const H_DOT: u8 = 1;
const H_UPPER: u8 = 2;
const H_DASH: u8 = 3;
const H_END: u8 = 4; // `/`, `?`, `#`
const H_COLON: u8 = 5;
const H_BAD: u8 = 6;

/// The class of each byte in a host (one table load per byte in the hot loop).
static HOST_CLASS: [u8; 256] = {
    let mut t = [H_BAD; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = match b {
            b'a'..=b'z' | b'0'..=b'9' => H_PLAIN,
            b'.' => H_DOT,
            b'A'..=b'Z' => H_UPPER,
            b'-' => H_DASH,
            b'/' | b'?' | b'#' => H_END,
            b':' => H_COLON,
            _ => H_BAD,
        };
        c += 1;
    }
    t
};

// Byte classes of the fast path's path loop.
const P_OK: u8 = 0; // allowed as it is
const P_SLASH: u8 = 1;
const P_PERCENT: u8 = 2;
const P_END: u8 = 3; // `?`, `#`
const P_BAD: u8 = 4; // needs the `url` crate

/// The class of each byte in a path: [`FAST_OK`] bytes are allowed, `?` and `#` end it.
static PATH_CLASS: [u8; 256] = {
    let mut t = [P_BAD; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'?' | b'#' => P_END,
            b'/' => P_SLASH,
            b'%' => P_PERCENT,
            _ if FAST_OK[c] => P_OK,
            _ => P_BAD,
        };
        c += 1;
    }
    t
};

// Byte classes of the fast path's query loop.
const Q_OK: u8 = 0; // allowed as it is
const Q_EQ: u8 = 1;
const Q_PERCENT: u8 = 2;
const Q_AMP: u8 = 3;
const Q_END: u8 = 4; // `#`
const Q_BAD: u8 = 5; // needs the `url` crate (`'` too: the `url` crate escapes it in queries)

/// The class of each byte in a query.
static QUERY_CLASS: [u8; 256] = {
    let mut t = [Q_BAD; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            b'#' => Q_END,
            b'&' => Q_AMP,
            b'=' => Q_EQ,
            b'%' => Q_PERCENT,
            b'\'' => Q_BAD,
            _ if FAST_OK[c] => Q_OK,
            _ => Q_BAD,
        };
        c += 1;
    }
    t
};

/// The fast path for plain ASCII `http`/`https` URLs; `None` hands over to [`slow_base`].
///
/// It accepts only inputs it can prove the `url` crate would leave byte-for-byte alone apart from
/// the steps it performs itself (lower-casing the scheme and host, dropping a default port,
/// adding `/` for an empty path), so both paths give identical results (tested on every URL of the
/// shared URL lists).
///
/// ```
/// use dedust_core::__private::base::{fast_base, slow_base};
/// let o = dedust_core::BaseOptions::default();
/// let u = "HTTP://Example.com:80/a%7e?b=1&a=2#x";
/// assert_eq!(fast_base(u, &o).unwrap(), slow_base(u, &o).unwrap());
/// assert_eq!(fast_base("http://[::1]/", &o), None);
/// ```
pub fn fast_base(input: &str, opts: &BaseOptions) -> Option<String> {
    let mut out = String::with_capacity(input.len() + 1);
    fast_base_into(input, opts, &mut out).then_some(out)
}

/// [`fast_base`] writing into `out` (cleared first); returns false when the input needs the
/// `url` crate (then `out` is unspecified).
pub fn fast_base_into(input: &str, opts: &BaseOptions, out: &mut String) -> bool {
    fast_base_at(input, opts, out).is_some()
}

/// [`fast_base_into`], with where the output's parts lie (`None` when the input needs the `url`
/// crate): the engine's rules start from them instead of splitting the output again.
pub(crate) fn fast_base_at(input: &str, opts: &BaseOptions, out: &mut String) -> Option<PartsAt> {
    out.clear();
    // The output is at most one byte longer than the input (a `/` for an empty path), or a
    // little more with upper-case escapes: one allocation for most URLs.
    out.reserve(input.len() + 1);
    fast_into(input, opts, out)
}

fn fast_into(input: &str, opts: &BaseOptions, out: &mut String) -> Option<PartsAt> {
    let b = input.as_bytes();
    if opts.keep_fragment || b.len() < 8 {
        return None;
    }
    let (https, mut i) = if b[..7].eq_ignore_ascii_case(b"http://") {
        (false, 7)
    } else if b.len() > 8 && b[..8].eq_ignore_ascii_case(b"https://") {
        (true, 8)
    } else {
        return None;
    };
    // Authority, one pass: host of letters, digits, `-`, `.`; no empty label; the last label
    // must not start with a digit (IPv4 forms); no `xn--` label (IDNA); optional port.
    let host_start = i;
    let mut label_start = i;
    let (mut upper, mut dash) = (false, false);
    let mut host_end = None;
    while i < b.len() {
        let c = HOST_CLASS[b[i] as usize];
        if c == H_PLAIN {
            i += 1;
            continue;
        }
        match c {
            H_DOT => {
                if i == label_start {
                    return None;
                }
                label_start = i + 1;
            }
            H_UPPER => upper = true,
            H_DASH => dash = true,
            H_END => break,
            H_COLON => {
                host_end = Some(i);
                i += 1;
                break;
            }
            _ => return None,
        }
        i += 1;
    }
    let host_end = host_end.unwrap_or(i);
    let hb = &b[host_start..host_end];
    // The first byte of the last label (a trailing `.` ends no label; `..` was refused above).
    let named = hb.strip_suffix(b".").unwrap_or(hb);
    let last_first = memchr::memrchr(b'.', named).map_or(named.first(), |k| named.get(k + 1));
    if last_first.is_none_or(u8::is_ascii_digit) {
        return None;
    }
    if dash
        && hb
            .split(|&c| c == b'.')
            .any(|l| l.len() >= 4 && l[..4].eq_ignore_ascii_case(b"xn--"))
    {
        return None;
    }
    let host = &input[host_start..host_end];
    let mut port: Option<&str> = None;
    if host_end < i {
        // After `:`: digits up to the path.
        let ps = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i < b.len() && !matches!(b[i], b'/' | b'?' | b'#') {
            return None;
        }
        let p = &input[ps..i];
        if p.is_empty() || p.len() > 5 || p.starts_with('0') {
            return None;
        }
        let v: u32 = p.parse().ok()?;
        if v > 65535 {
            return None;
        }
        if v != if https { 443 } else { 80 } {
            port = Some(p);
        }
    }
    // Path, one pass: allowed bytes only, no dot segment, note escapes.
    let path_start = i;
    let mut seg_start = i;
    let mut escapes = false;
    while i < b.len() {
        let c = PATH_CLASS[b[i] as usize];
        if c == P_OK {
            i += 1;
            continue;
        }
        match c {
            P_SLASH => {
                let seg = &b[seg_start..i];
                if seg == b"." || seg == b".." {
                    return None;
                }
                seg_start = i + 1;
            }
            P_PERCENT => {
                escapes = true;
                if i + 2 < b.len() && b[i + 1] == b'2' && (b[i + 2] | 0x20) == b'e' {
                    return None;
                }
            }
            P_END => break,
            _ => return None,
        }
        i += 1;
    }
    let last = &b[seg_start.max(path_start)..i];
    if i > path_start && (last == b"." || last == b"..") {
        return None;
    }
    let path = &input[path_start..i];
    // Query, one pass: allowed bytes, note escapes, empty pairs and whether names are sorted.
    let mut query: Option<(&str, bool)> = None;
    if i < b.len() && b[i] == b'?' {
        i += 1;
        let qs = i;
        let mut clean = true;
        let mut sorted = true;
        let mut prev_name: &[u8] = b"";
        let mut pair_start = i;
        let mut name_end: Option<usize> = None;
        let mut first = true;
        loop {
            // The end of the input ends the query as `#` does.
            let c = b.get(i).map_or(Q_END, |&c| QUERY_CLASS[c as usize]);
            if c == Q_OK {
                i += 1;
                continue;
            }
            match c {
                Q_EQ => {
                    if name_end.is_none() {
                        name_end = Some(i);
                    }
                }
                Q_PERCENT => clean = false,
                Q_AMP | Q_END => {
                    if i == pair_start {
                        clean = false; // empty pair
                    } else {
                        let name = &b[pair_start..name_end.unwrap_or(i)];
                        if !first && name < prev_name {
                            sorted = false;
                        }
                        prev_name = name;
                        first = false;
                    }
                    if c == Q_END {
                        break;
                    }
                    pair_start = i + 1;
                    name_end = None;
                }
                _ => return None,
            }
            i += 1;
        }
        query = Some((&input[qs..i], clean && (sorted || opts.keep_query_order)));
    }
    out.push_str(if https { "https://" } else { "http://" });
    if upper {
        out.extend(host.bytes().map(|c| c.to_ascii_lowercase() as char));
    } else {
        out.push_str(host);
    }
    if let Some(p) = port {
        out.push(':');
        out.push_str(p);
    }
    let path_start = out.len();
    if path.is_empty() {
        out.push('/');
    } else if escapes {
        push_escapes(out, path);
    } else {
        out.push_str(path);
    }
    let scheme = if https { 5 } else { 4 };
    let at = PartsAt::with_port(
        scheme,
        host.len(),
        port.map_or(0, str::len),
        out.len() - path_start,
    );
    if let Some((q, clean)) = query {
        if clean && !q.is_empty() {
            out.push('?');
            out.push_str(q);
        } else {
            let mark = out.len();
            out.push('?');
            push_query(out, q, opts.keep_query_order);
            if out.len() == mark + 1 {
                out.truncate(mark);
            }
        }
    }
    Some(at)
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
#[doc(hidden)]
pub fn param_name(pair: &str) -> &str {
    crate::url_parts::split_once_ascii(pair, b'=').map_or(pair, |(name, _)| name)
}

/// The distinct parameter names of a query (without `?`), sorted.
pub(crate) fn param_names(query: Option<&str>) -> Vec<&str> {
    let mut names: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|kv| !kv.is_empty())
        .map(param_name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
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
    let mut out = String::with_capacity(s.len());
    push_escapes(&mut out, s);
    out
}

/// [`normalize_escapes`] appending to `out`: the text between escapes copied in runs.
fn push_escapes(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let Some(mut i) = memchr::memchr(b'%', b) else {
        out.push_str(s);
        return;
    };
    // `b[done..i]` is still to copy; `i` is at a `%` (ASCII: every index here is a char
    // boundary).
    let mut done = 0;
    loop {
        match (
            b.get(i + 1).copied().and_then(hex_val),
            b.get(i + 2).copied().and_then(hex_val),
        ) {
            (Some(h), Some(l)) if i + 2 < b.len() => {
                out.push_str(&s[done..i]);
                let v = h * 16 + l;
                if is_unreserved(v) {
                    out.push(v as char);
                } else {
                    out.push('%');
                    out.push(b[i + 1].to_ascii_uppercase() as char);
                    out.push(b[i + 2].to_ascii_uppercase() as char);
                }
                i += 3;
                done = i;
            }
            _ => i += 1,
        }
        match memchr::memchr(b'%', &b[i.min(b.len())..]) {
            Some(k) => i += k,
            None => break,
        }
    }
    out.push_str(&s[done..]);
}

/// Append a normalized query (without `?`) to `out`: [`normalize_query`]'s answer, with no
/// allocation for up to 32 parameters already in order.
fn push_query(out: &mut String, q: &str, keep_order: bool) {
    const MAX: usize = 32;
    // Escapes first, in place: decoding makes no `&` (only unreserved bytes are decoded) and no
    // escape spans one, so the pairs found after are `q`'s, each normalized.
    let start = out.len();
    push_escapes(out, q);
    let mut arr: [(usize, usize); MAX] = [(0, 0); MAX];
    let (mut n, mut as_is, mut pos, mut many) = (0, true, start, false);
    for p in crate::url_parts::split_ascii(&out[start..], b'&') {
        let at = pos;
        pos += p.len() + 1;
        if p.is_empty() {
            as_is = false; // dropped
            continue;
        }
        if n == MAX {
            many = true;
            break;
        }
        arr[n] = (at, at + p.len());
        n += 1;
    }
    if many {
        // From `q`: escaping twice is not escaping once (`%b%41` → `%bA` → `%BA`).
        out.truncate(start);
        out.push_str(&normalize_query(q, keep_order));
        return;
    }
    let pairs = &mut arr[..n];
    let name = |r: &(usize, usize)| param_name(&out[r.0..r.1]);
    if !keep_order && pairs.windows(2).any(|w| name(&w[0]) > name(&w[1])) {
        as_is = false;
        // Stable insertion sort by name: parameter lists are short and usually sorted already.
        for i in 1..pairs.len() {
            let mut j = i;
            while j > 0 && name(&pairs[j - 1]) > name(&pairs[j]) {
                pairs.swap(j - 1, j);
                j -= 1;
            }
        }
    }
    if as_is {
        return;
    }
    let text = out.split_off(start);
    for (k, &(a, b)) in pairs.iter().enumerate() {
        if k > 0 {
            out.push('&');
        }
        out.push_str(&text[a - start..b - start]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_typed_and_keep_their_messages() {
        let o = BaseOptions::default();
        assert_eq!(base_normalize("  ", &o), Err(BaseError::Empty));
        assert_eq!(base_normalize("", &o).unwrap_err().to_string(), "empty URL");
        let e = base_normalize("/relative/path", &o).unwrap_err();
        assert!(
            matches!(e, BaseError::Parse(url::ParseError::RelativeUrlWithoutBase)),
            "{e:?}"
        );
        assert_eq!(e.to_string(), "relative URL without a base");
    }

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
    fn push_query_is_normalize_query() {
        let many_pct: String = (0..40).rev().map(|i| format!("p{i:02}=%7e{i}&")).collect();
        // Over 32 pairs (the slow path) with an escape a decoded one would complete.
        let many_twice: String =
            (0..40).map(|i| format!("a{i:02}=1&")).collect::<String>() + "k=%b%41";
        let many: String = (0..40).map(|i| format!("p{i:02}=x&")).collect();
        let cases = [
            "a=%7e&b=%zz",
            "b=%41&a=1",
            "a=%4",
            "a=%&41",
            "a=%2&b=%41%42",
            "&&b=%2f&&a=%7E&",
            "%61=1&%62=2&a=0",
            "b=1&a=%41&a=%42&a=0",
            "x=%E2%82%AC&y=é%41",
            "%",
            "%%41",
            "%b%41",
            "a=1&a=%7e",
            "",
            many_pct.as_str(),
            many_twice.as_str(),
            many.as_str(),
        ];
        for q in cases {
            for keep in [false, true] {
                let mut out = "http://h.org/?".to_string();
                push_query(&mut out, q, keep);
                assert_eq!(
                    out["http://h.org/?".len()..],
                    normalize_query(q, keep),
                    "{q} {keep}"
                );
            }
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
        // Every combination of awkward hosts, paths and queries: what the fast path accepts,
        // it normalizes as the `url` crate does, and it accepts the plain ones.
        let hosts = [
            "a.com",
            "A.COM",
            "a.com.",
            "a..com",
            ".a.com",
            "xn--p1ai.ru",
            "a.XN--p1ai",
            "a-xn--b.com",
            "a.xn-b.com",
            "1.2.3.4",
            "a.1com",
            "a.b1",
            "a.1b",
            "-a.com",
            "a-.com",
            "a",
            "",
            "a.com:80",
            "a.com:8080",
            "a.com:",
            "u@a.com",
            "a_b.com",
            "a.com.:443",
        ];
        let paths = [
            "", "/", "/a", "/./", "/../", "/a/.", "/a/..", "/%2e/", "/%2E", "/a%2fb", "/a%41",
            "/a b", "/\u{e9}", "/a;b=c", "/a//b", "/.a", "/..a/", "/a/.%2e",
        ];
        let queries = [
            "",
            "?",
            "?a=1",
            "?b=1&a=2",
            "?a=1&&b",
            "?a=%41",
            "?a='",
            "?a=b=c&a=1",
        ];
        let mut accepted = 0;
        for scheme in ["http://", "HTTPS://"] {
            for h in hosts {
                for p in paths {
                    for q in queries {
                        let u = format!("{scheme}{h}{p}{q}");
                        if let Some(f) = fast_base(&u, &d) {
                            assert_eq!(Ok(f), slow_base(&u, &d), "{u}");
                            accepted += 1;
                        }
                    }
                }
            }
        }
        for plain in [
            "http://a.com/a?a=1",
            "HTTPS://A.COM/",
            "http://a-.com/a//b?b=1&a=2",
        ] {
            assert!(fast_base(plain, &d).is_some(), "{plain}");
        }
        assert!(accepted > 1000, "{accepted}");
    }

    #[test]
    fn errors() {
        let d = BaseOptions::default();
        for bad in ["", "   ", "no scheme", "http://", "http://exa mple.com/"] {
            assert!(base_normalize(bad, &d).is_err(), "{bad:?} should fail");
        }
    }
}
