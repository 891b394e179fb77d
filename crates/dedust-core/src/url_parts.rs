//! URL splitting: an absolute `scheme://authority/path?query#fragment` URL into borrowed parts,
//! in one pass over its bytes and without allocating (the engine's hot path starts here).
//!
//! In: a URL string. Out: [`UrlParts`] (slices of the input), or `None` for a URL without `://`.
//! Invariant: the parts concatenated back with their delimiters give the input.

/// The parts of an absolute URL with an authority, as byte slices of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// Scheme without `://`.
    pub scheme: &'a str,
    /// User info without `@` (empty when absent).
    pub userinfo: &'a str,
    /// Host (lower-case after base normalization).
    pub host: &'a str,
    /// Port digits (empty when absent).
    pub port: &'a str,
    /// Path starting with `/` (may be empty).
    pub path: &'a str,
    /// Query without `?`, `None` when absent.
    pub query: Option<&'a str>,
    /// Fragment without `#`, `None` when absent.
    pub fragment: Option<&'a str>,
}

/// Split a `scheme://authority/path?query#fragment` URL into parts without allocating.
/// Returns `None` for URLs without `://`.
///
/// ```
/// let p = dedust_core::split_url("https://u@h.org:81/p?q#f").unwrap();
/// assert_eq!((p.scheme, p.userinfo, p.host, p.port, p.path), ("https", "u", "h.org", "81", "/p"));
/// assert_eq!((p.query, p.fragment), (Some("q"), Some("f")));
/// ```
pub fn split_url(url: &str) -> Option<UrlParts<'_>> {
    // One pass over bytes (this sits on the hot path of `normalize`).
    let b = url.as_bytes();
    let colon = b.iter().position(|&c| c == b':')?;
    if colon == 0
        || !b[..colon]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
    {
        return None;
    }
    if b.len() < colon + 3 || &b[colon + 1..colon + 3] != b"//" {
        return None;
    }
    let scheme = &url[..colon];
    let a0 = colon + 3;
    // The authority ends at the first `/`, `?` or `#`; user info ends at its last `@`, and a
    // port starts after the last `:` that follows it. Authorities are short: a byte loop beats
    // a vectorized search here.
    let (mut i, mut at, mut last_colon) = (a0, None, None);
    while i < b.len() && !matches!(b[i], b'/' | b'?' | b'#') {
        match b[i] {
            b'@' => {
                at = Some(i);
                last_colon = None;
            }
            b':' => last_colon = Some(i),
            _ => {}
        }
        i += 1;
    }
    let auth_end = i;
    let (userinfo, h0) = match at {
        Some(k) => (&url[a0..k], k + 1),
        None => ("", a0),
    };
    let bracketed = auth_end > h0 && b[auth_end - 1] == b']';
    let (host, port) = match last_colon {
        Some(k) if !bracketed && b[k + 1..auth_end].iter().all(|c| c.is_ascii_digit()) => {
            (&url[h0..k], &url[k + 1..auth_end])
        }
        _ => (&url[h0..auth_end], ""),
    };
    let mut i =
        auth_end + memchr::memchr2(b'?', b'#', &b[auth_end..]).unwrap_or(b.len() - auth_end);
    let path = &url[auth_end..i];
    let mut query = None;
    if i < b.len() && b[i] == b'?' {
        let q0 = i + 1;
        i = q0 + memchr::memchr(b'#', &b[q0..]).unwrap_or(b.len() - q0);
        query = Some(&url[q0..i]);
    }
    let fragment = (i < b.len()).then(|| &url[i + 1..]);
    Some(UrlParts {
        scheme,
        userinfo,
        host,
        port,
        path,
        query,
        fragment,
    })
}

impl<'a> UrlParts<'a> {
    /// The host a rule's scope names: the host, with `:port` when the URL names a port
    /// (`h.org:8080`; the base layer has removed a scheme's default port). A slice of `url`,
    /// the URL these parts were split from (the host alone for any other string).
    ///
    /// ```
    /// let u = "http://h.org:8080/p";
    /// assert_eq!(dedust_core::split_url(u).unwrap().scope_host(u), "h.org:8080");
    /// let u = "http://h.org/p";
    /// assert_eq!(dedust_core::split_url(u).unwrap().scope_host(u), "h.org");
    /// ```
    pub fn scope_host(&self, url: &'a str) -> &'a str {
        if self.port.is_empty() {
            return self.host;
        }
        let base = url.as_ptr() as usize;
        let start = (self.host.as_ptr() as usize).checked_sub(base);
        let end = (self.port.as_ptr() as usize + self.port.len()).checked_sub(base);
        match (start, end) {
            (Some(a), Some(b)) => {
                let site = url
                    .get(a..b)
                    .filter(|s| s.len() == self.host.len() + 1 + self.port.len());
                debug_assert!(site.is_some(), "scope_host: {url:?} is not the URL split");
                site.unwrap_or(self.host)
            }
            _ => self.host,
        }
    }
}

/// `s.split(sep)` for an ASCII separator (`&`, `/`, `=`): the same pieces, found with a byte
/// loop (`str::split` with a `char` compares each match's encoding through `memcmp`, a call per
/// parameter on the engine's and the learner's hot paths).
///
/// ```
/// let v: Vec<&str> = dedust_core::__private::url_parts::split_ascii("a=1&&b", b'&').collect();
/// assert_eq!(v, ["a=1", "", "b"]);
/// ```
pub fn split_ascii(s: &str, sep: u8) -> impl Iterator<Item = &str> + Clone {
    debug_assert!(sep.is_ascii());
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.bytes().position(|b| b == sep) {
            Some(k) => {
                rest = Some(&r[k + 1..]);
                Some(&r[..k])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// `s.split_once(sep)` for an ASCII separator, as [`split_ascii`] finds it.
pub fn split_once_ascii(s: &str, sep: u8) -> Option<(&str, &str)> {
    let k = s.bytes().position(|b| b == sep)?;
    Some((&s[..k], &s[k + 1..]))
}

/// Where the parts of a URL without user info or fragment lie in it (byte offsets): what a step
/// that builds such a URL knows, handed to the next step so it need not split the URL again
/// (the base layer's fast path and the conventions build every URL the rules see first).
///
/// Invariant: for the URL it was made with, [`PartsAt::parts`] equals [`split_url`]'s answer
/// (checked in debug builds where the engine uses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartsAt {
    /// The scheme's length (the `:` of `://` is here).
    scheme_end: usize,
    /// Where the host ends (a `:` and the port follow when `path_start` is further on).
    host_end: usize,
    /// Where the path starts.
    path_start: usize,
    /// Where the path ends: the end of the URL, or its `?` (the query runs to the end).
    path_end: usize,
}

impl PartsAt {
    /// The offsets of `scheme://host/path?query` built from a scheme and a host [`split_url`]
    /// found and a path of `path` bytes (no port, user info or fragment); `None` for a host with
    /// `:` (`[::1]`, or `h.org:8` before an empty port), which may split differently once
    /// rebuilt (`h.org:8` is then a host and a port).
    pub(crate) fn rebuilt(scheme: &str, host: &str, path: usize) -> Option<PartsAt> {
        (!host.contains(':')).then(|| PartsAt::of(scheme.len(), host.len(), path))
    }

    /// The offsets of `scheme://host/path?query` built from pieces of these lengths (no port).
    fn of(scheme: usize, host: usize, path: usize) -> PartsAt {
        let host_end = scheme + 3 + host;
        PartsAt {
            scheme_end: scheme,
            host_end,
            path_start: host_end,
            path_end: host_end + path,
        }
    }

    /// [`PartsAt::of`] for a URL with a port of `port` digits after the host (`0`: none).
    pub(crate) fn with_port(scheme: usize, host: usize, port: usize, path: usize) -> PartsAt {
        let mut at = PartsAt::of(scheme, host, path);
        if port > 0 {
            at.path_start += port + 1;
            at.path_end += port + 1;
        }
        at
    }

    /// The parts of `url`, the URL these offsets were made for.
    pub(crate) fn parts<'a>(&self, url: &'a str) -> UrlParts<'a> {
        let port = if self.path_start > self.host_end {
            &url[self.host_end + 1..self.path_start]
        } else {
            ""
        };
        UrlParts {
            scheme: &url[..self.scheme_end],
            userinfo: "",
            host: &url[self.scheme_end + 3..self.host_end],
            port,
            path: &url[self.path_start..self.path_end],
            query: (self.path_end < url.len()).then(|| &url[self.path_end + 1..]),
            fragment: None,
        }
    }
}
