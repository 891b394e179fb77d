//! Trust: which host a captured URL speaks for, decided by the base layer's parse alone, or
//! that it speaks for none.
//!
//! In: a raw URL as a crawl carries it (a WARC `WARC-Target-URI`, a CDX(J) `url`, a redirect's
//! `Location`, a page's canonical, a robots.txt URL). Out: a [`TrustedHost`] (the host the
//! base layer — the WHATWG parser of the `url` crate — reads, lower case, and its registrable
//! domain), or the [`Ambiguity`] that keeps the URL out of every trust decision (same-site
//! checks of redirects and canonicals, digest-group unions, robots.txt scope, `verify`'s
//! per-site counts, `site`, learning).
//!
//! Why: parsers disagree on hostile spellings. `https://evil.com\@victim.com/r` is host
//! `evil.com` for WHATWG (a backslash ends the authority of an http(s) URL) but `victim.com`
//! for Python's `urlsplit` and a hand-written splitter; `https://victim.com\@evil.com/r` is the
//! other way round for Java's `URL`; `faß.de` is `xn--fa-hia.de` for WHATWG and `fass.de` for
//! Java and Python; `0x7f.1` is `127.0.0.1` for WHATWG only. A crawl written by one parser and
//! read by another lets one site speak for another. So dedust does not reinterpret: a URL is
//! trusted only when its raw authority is already a plain host (ASCII letters, digits, `-`,
//! `.`, `_`, an optional `:port`, or a bracketed IPv6 literal) that the base layer reads back
//! unchanged (but for case). Everything else — `\`, `@` (user info), `%`, a control, space or
//! non-ASCII character, an empty host, a host the base layer rewrites (IPv4 forms, an IPv6
//! literal not in its shortest form) or rejects — is [`Ambiguity`], and the caller counts it.
//!
//! Invariants: pure and total; a trusted URL's host equals `split_url(base_normalize(url)).host`
//! (the host every later stage sees); every parser of the table in this module's tests (WHATWG,
//! Java's `URL`, Python's `urlsplit`) reads that same host for a trusted URL.
//!
//! Complexity: one scan of the scheme and authority, and one base-layer parse, per URL.

use std::fmt;

/// Why a URL takes part in no trust decision (see the module docs). Each value names what a
/// reader saw; [`Ambiguity::kind`] gives a short name for counts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Ambiguity {
    /// Not `http://` or `https://` followed by an authority.
    NotHttp,
    /// A backslash in the authority: WHATWG ends the authority there, other parsers do not.
    Backslash,
    /// User info (`@`) in the authority.
    Userinfo,
    /// A percent escape in the authority (`victim%2Ecom`).
    Percent,
    /// A control character or a space before the path (WHATWG strips tabs and newlines,
    /// other parsers keep them).
    Control,
    /// A non-ASCII character in the authority (IDNA spellings differ between parsers:
    /// `faß.de`).
    NonAscii,
    /// Another character no plain host holds (`<`, `,`, `;`, `_`…).
    Character(char),
    /// No host (`http:///victim.com`, `http://:80/`).
    EmptyHost,
    /// An empty label in the host (`victim..com`, `.victim.com`, `victim.com..`).
    EmptyLabel,
    /// A port that is no number.
    BadPort,
    /// The base layer rejects the URL.
    Rejected(String),
    /// The base layer reads another host than the raw text names (`0x7f.1` → `127.0.0.1`).
    Reread {
        /// The host as written (lower case).
        raw: String,
        /// The host the base layer reads.
        read: String,
    },
    /// A WARC request record's `Host` header names another host than its target URI.
    HostHeader {
        /// The `Host` header (lower case, without a port).
        header: String,
        /// The target URI's host.
        host: String,
    },
    /// A CDX(J) line's SURT key names another host than its `url` field.
    SurtKey {
        /// The host the key names.
        key: String,
        /// The URL's host.
        host: String,
    },
}

impl Ambiguity {
    /// A short name of the kind, for counts (`backslash`, `userinfo`, `reread`…).
    ///
    /// ```
    /// assert_eq!(dedust_core::trusted_host("https://a.org\\@b.org/").unwrap_err().kind(), "backslash");
    /// ```
    pub fn kind(&self) -> &'static str {
        match self {
            Ambiguity::NotHttp => "not-http",
            Ambiguity::Backslash => "backslash",
            Ambiguity::Userinfo => "userinfo",
            Ambiguity::Percent => "percent",
            Ambiguity::Control => "control",
            Ambiguity::NonAscii => "non-ascii",
            Ambiguity::Character(_) => "character",
            Ambiguity::EmptyHost => "empty-host",
            Ambiguity::EmptyLabel => "empty-label",
            Ambiguity::BadPort => "port",
            Ambiguity::Rejected(_) => "rejected",
            Ambiguity::Reread { .. } => "reread",
            Ambiguity::HostHeader { .. } => "host-header",
            Ambiguity::SurtKey { .. } => "surt-key",
        }
    }
}

impl fmt::Display for Ambiguity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ambiguity::NotHttp => f.write_str("not an absolute http(s) URL"),
            Ambiguity::Backslash => {
                f.write_str("a backslash in the authority (parsers read different hosts)")
            }
            Ambiguity::Userinfo => f.write_str("user info (`@`) in the authority"),
            Ambiguity::Percent => f.write_str("a percent escape in the authority"),
            Ambiguity::Control => {
                f.write_str("a control character or space in the scheme or authority")
            }
            Ambiguity::NonAscii => {
                f.write_str("a non-ASCII character in the host (parsers map it to different hosts)")
            }
            Ambiguity::Character(c) => write!(f, "{c:?} in the authority"),
            Ambiguity::EmptyHost => f.write_str("no host"),
            Ambiguity::EmptyLabel => f.write_str("an empty label in the host"),
            Ambiguity::BadPort => f.write_str("a port that is no number"),
            Ambiguity::Rejected(e) => write!(f, "the base layer rejects it: {e}"),
            Ambiguity::Reread { raw, read } => {
                write!(f, "host `{raw}` reads as `{read}` in the base layer")
            }
            Ambiguity::HostHeader { header, host } => write!(
                f,
                "the request's `Host: {header}` is not the target URI's host `{host}`"
            ),
            Ambiguity::SurtKey { key, host } => {
                write!(f, "the SURT key names host `{key}`, the URL `{host}`")
            }
        }
    }
}

impl std::error::Error for Ambiguity {}

/// The host a URL speaks for, as the base layer reads it (see the module docs); built only by
/// [`trusted_host`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrustedHost {
    host: String,
}

impl TrustedHost {
    /// The host, lower case, as the base layer reads it (no port).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The registrable domain of the host ([`crate::registrable_domain`]).
    pub fn site(&self) -> &str {
        crate::site::registrable_domain(&self.host)
    }
}

/// The host `url` speaks for, or why it speaks for none (see the module docs).
///
/// ```
/// use dedust_core::trusted_host;
/// assert_eq!(trusted_host("HTTPS://WWW.Victim.com:443/a").unwrap().host(), "www.victim.com");
/// assert_eq!(trusted_host("https://www.victim.co.uk/a").unwrap().site(), "victim.co.uk");
/// assert!(trusted_host("https://evil.com\\@victim.com/r").is_err());
/// assert!(trusted_host("https://user@victim.com/r").is_err());
/// assert!(trusted_host("http://0x7f.1/").is_err());
/// ```
pub fn trusted_host(url: &str) -> Result<TrustedHost, Ambiguity> {
    let url = url.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\r' || c == '\n');
    raw_authority(url)?;
    let read = crate::base::base_normalize(url, &crate::base::BaseOptions::default())
        .map_err(|e| Ambiguity::Rejected(e.to_string()))?;
    let read_host = crate::url_parts::split_url(&read)
        .map(|p| p.host)
        .ok_or(Ambiguity::NotHttp)?;
    trusted_as(url, read_host)?;
    Ok(TrustedHost {
        host: read_host.to_string(),
    })
}

/// [`trusted_host`] given the host the base layer read from `url` already (`read_host`: the
/// host of `base_normalize(url)`), without a second parse: for readers that normalize every
/// URL anyway (learning).
///
/// ```
/// use dedust_core::__private::trust::trusted_as;
/// assert!(trusted_as("HTTP://H.org/a", "h.org").is_ok());
/// assert!(trusted_as("http://h.org\\@v.org/", "h.org").is_err());
/// ```
pub fn trusted_as(url: &str, read_host: &str) -> Result<(), Ambiguity> {
    let url = url.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\r' || c == '\n');
    let raw = raw_authority(url)?;
    if !raw.eq_ignore_ascii_case(read_host) {
        return Err(Ambiguity::Reread {
            raw: raw.to_ascii_lowercase(),
            read: read_host.to_string(),
        });
    }
    Ok(())
}

/// The raw host of an `http(s)://` URL, as written, when its authority is a plain host with an
/// optional port; the ambiguity otherwise. The authority ends at the first `/`, `?` or `#`
/// (where every parser agrees it ends at the latest).
fn raw_authority(url: &str) -> Result<&str, Ambiguity> {
    let b = url.as_bytes();
    let colon = b
        .iter()
        .position(|&c| c == b':')
        .ok_or(Ambiguity::NotHttp)?;
    let scheme = &b[..colon];
    if scheme.iter().any(|&c| c <= b' ' || c == 0x7f) {
        return Err(Ambiguity::Control);
    }
    if !scheme.eq_ignore_ascii_case(b"http") && !scheme.eq_ignore_ascii_case(b"https") {
        return Err(Ambiguity::NotHttp);
    }
    let rest = &url[colon + 1..];
    let Some(rest) = rest.strip_prefix("//") else {
        return Err(match rest.bytes().next() {
            Some(b'\\') => Ambiguity::Backslash,
            Some(c) if c <= b' ' || c == 0x7f => Ambiguity::Control,
            _ => Ambiguity::NotHttp,
        });
    };
    let end = rest
        .bytes()
        .position(|c| matches!(c, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let auth = &rest[..end];
    // The first reason in the text, so a message names what a reader sees first.
    for c in auth.chars() {
        let why = match c {
            '\\' => Ambiguity::Backslash,
            '@' => Ambiguity::Userinfo,
            '%' => Ambiguity::Percent,
            c if c.is_ascii_control() || c == ' ' => Ambiguity::Control,
            c if !c.is_ascii() => Ambiguity::NonAscii,
            // `_` is no DNS hostname character, but real hosts hold it (`a_b.tripod.com`)
            // and every parser reads it alike.
            c if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']') => {
                continue
            }
            c => Ambiguity::Character(c),
        };
        return Err(why);
    }
    let (host, port) = if auth.starts_with('[') {
        let close = auth.find(']').ok_or(Ambiguity::Character('['))?;
        let inner = &auth[1..close];
        if inner.is_empty()
            || !inner
                .bytes()
                .all(|c| c.is_ascii_hexdigit() || c == b':' || c == b'.')
        {
            return Err(Ambiguity::Character('['));
        }
        let after = &auth[close + 1..];
        match after.strip_prefix(':') {
            Some(p) => (&auth[..=close], p),
            None if after.is_empty() => (&auth[..=close], ""),
            None => return Err(Ambiguity::Character(']')),
        }
    } else {
        match auth.split_once(':') {
            Some((h, p)) => (h, p),
            None => (auth, ""),
        }
    };
    if host.is_empty() {
        return Err(Ambiguity::EmptyHost);
    }
    if !host.starts_with('[') {
        if let Some(c) = host.chars().find(|c| matches!(c, '[' | ']')) {
            return Err(Ambiguity::Character(c));
        }
        // An empty label (`a..b`, `.a`, `a..`): DNS has none; only one trailing dot is a name.
        if host
            .strip_suffix('.')
            .unwrap_or(host)
            .split('.')
            .any(str::is_empty)
        {
            return Err(Ambiguity::EmptyLabel);
        }
    }
    if !port.bytes().all(|c| c.is_ascii_digit()) {
        return Err(Ambiguity::BadPort);
    }
    Ok(host)
}

/// Whether the host of a legacy CDX or CDXJ SURT key (`org,victim)/item?id=1`,
/// `http://(org,victim,)/…`) names `host` (`www.`-less in the key as SURT writes it, a port
/// ignored). A key that names no host (no `)`, or no SURT host before it, as in an old CDX's
/// massaged URL `h.org/a(b)/`) names none: `true`.
///
/// ```
/// use dedust_core::__private::trust::surt_names;
/// assert!(surt_names("org,victim)/item?id=1", "www.victim.org"));
/// assert!(surt_names("org,victim,www)/", "www.victim.org"));
/// assert!(!surt_names("org,victim)/item?id=1", "evil.org"));
/// assert!(surt_names("127.0.0.1:8080)/x", "127.0.0.1"));
/// ```
pub fn surt_names(key: &str, host: &str) -> bool {
    let key = key
        .split_once("://(")
        .map_or(key, |(_, rest)| rest)
        .trim_start();
    let Some((kh, _)) = key.split_once(')') else {
        return true;
    };
    // Not a SURT host (an old CDX's massaged URL `h.org/a(b)/`): names no host.
    if kh.is_empty()
        || !kh
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b',' | b'.' | b'-' | b'_' | b':'))
    {
        return true;
    }
    let kh = kh.split(':').next().unwrap_or("").trim_end_matches(',');
    let kh = kh.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    let bare = |h: &str| -> String {
        let h = h.trim_end_matches('.');
        match h.strip_prefix("www") {
            Some(r) if r.bytes().take_while(u8::is_ascii_digit).count() < r.len() => {
                let r = r.trim_start_matches(|c: char| c.is_ascii_digit());
                r.strip_prefix('.').unwrap_or(h).to_string()
            }
            _ => h.to_string(),
        }
    };
    let reversed: Vec<&str> = kh.split(',').rev().collect();
    let reversed = reversed.join(".");
    [reversed.as_str(), kh.as_str()]
        .iter()
        .any(|k| *k == host || bare(k) == bare(host))
}

/// The host-spelling table (`testdata/host_spellings.json`): each spelling's expected
/// [`trusted_host`] answer (a host, or `!kind` of the [`Ambiguity`]). `tests/trust.rs` at the
/// workspace root runs the same table through Java's `URL` and Python's `urlsplit`.
#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Case {
        url: String,
        note: String,
        want: String,
    }

    fn table() -> Vec<Case> {
        serde_json::from_str(include_str!("../testdata/host_spellings.json"))
            .expect("the table parses")
    }

    #[test]
    fn host_spellings() {
        let cases = table();
        assert!(cases.len() >= 60, "{} cases", cases.len());
        let mut bad = Vec::new();
        for c in &cases {
            let got = match trusted_host(&c.url) {
                Ok(h) => h.host().to_string(),
                Err(a) => format!("!{}", a.kind()),
            };
            if got != c.want {
                bad.push(format!(
                    "{:?} ({}): want {}, got {got}",
                    c.url, c.note, c.want
                ));
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// A trusted host is the host every later stage sees: the base layer's, lower case.
    #[test]
    fn trusted_is_the_base_layers_host() {
        for c in table() {
            if let Ok(h) = trusted_host(&c.url) {
                let n = crate::base::base_normalize(&c.url, &Default::default()).unwrap();
                assert_eq!(
                    crate::url_parts::split_url(&n).unwrap().host,
                    h.host(),
                    "{:?}",
                    c.url
                );
            }
        }
    }

    #[test]
    fn surt_keys() {
        let cases = [
            ("org,victim)/item?id=1", "victim.org", true),
            ("org,victim)/item?id=1", "www.victim.org", true),
            ("org,victim)/item?id=1", "www2.victim.org", true),
            ("org,victim,www)/", "www.victim.org", true),
            ("org,victim)/", "evil.org", false),
            ("org,victim)/", "victim.org.evil.org", false),
            ("com,evil)/r", "victim.com", false),
            ("http://(org,victim,)/a", "victim.org", true),
            ("http://(org,victim,)/a", "evil.org", false),
            ("org,victim:8080)/", "victim.org", true),
            ("127.0.0.1)/x", "127.0.0.1", true),
            ("1,0,0,127)/x", "127.0.0.1", true),
            ("no-key-host", "anything.org", true),
            ("h.org/a(b)/c", "h.org", true),
            ("h.org/a(b)/c", "evil.org", true),
            ("ORG,VICTIM)/", "victim.org", true),
            ("org,wwwvictim)/", "wwwvictim.org", true),
            ("org,wwwvictim)/", "victim.org", false),
        ];
        for (key, host, want) in cases {
            assert_eq!(surt_names(key, host), want, "{key} {host}");
        }
    }
}
