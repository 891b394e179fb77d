//! Site: the registrable domain of a host — the unit of "one site" for splits and for evidence.
//!
//! In: a host name as the base layer leaves it (lower case, no port). Out: its registrable domain
//! (public suffix + one label, from the Public Suffix List compiled into the `psl` crate):
//! `www.bbc.co.uk` → `bbc.co.uk`, `forum3.example.com` → `example.com`. An IP literal, a host with
//! no registrable part (`localhost`, a bare suffix such as `co.uk`) or an empty host is its own
//! domain. The result is a suffix of the input (less a trailing dot), so it borrows from it.
//! The Public Suffix List is matched as given: pass lower-case hosts.
//!
//! Invariants: pure and total (never fails); `registrable_domain(registrable_domain(h)) ==
//! registrable_domain(h)`.

/// The registrable domain of `host` (see the module docs).
///
/// ```
/// use dedust_core::registrable_domain;
/// assert_eq!(registrable_domain("www.bbc.co.uk"), "bbc.co.uk");
/// assert_eq!(registrable_domain("forum3.example.com"), "example.com");
/// assert_eq!(registrable_domain("192.168.1.1"), "192.168.1.1");
/// assert_eq!(registrable_domain("localhost"), "localhost");
/// ```
pub fn registrable_domain(host: &str) -> &str {
    let h = host.strip_suffix('.').unwrap_or(host);
    if h.is_empty() || h.starts_with('[') || is_ipv4(h) {
        return host;
    }
    psl::domain_str(h).unwrap_or(h)
}

/// Whether `h` is a dotted IPv4 literal (four decimal numbers; the base layer has already turned
/// other IPv4 spellings into this form).
fn is_ipv4(h: &str) -> bool {
    let mut n = 0;
    for part in h.split('.') {
        n += 1;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    n == 4
}

/// The registrable domain of a URL's host (lower-cased first, as the base layer does), or
/// `None` when the URL does not split.
///
/// ```
/// assert_eq!(dedust_core::__private::site::domain_of_url("https://WWW.H.org/x?a=1").as_deref(), Some("h.org"));
/// ```
pub fn domain_of_url(url: &str) -> Option<String> {
    crate::url_parts::split_url(url)
        .map(|p| registrable_domain(&p.host.to_ascii_lowercase()).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases = [
            ("ubuntuforums.org", "ubuntuforums.org"),
            ("www.ubuntuforums.org", "ubuntuforums.org"),
            ("a.b.github.io", "b.github.io"),
            ("forum0.example", "forum0.example"),
            ("www.forum0.example", "forum0.example"),
            ("co.uk", "co.uk"),
            ("localhost", "localhost"),
            ("10.0.0.1", "10.0.0.1"),
            ("[::1]", "[::1]"),
            ("", ""),
            ("h.org.", "h.org"),
        ];
        for (host, want) in cases {
            assert_eq!(registrable_domain(host), want, "{host}");
            assert_eq!(registrable_domain(registrable_domain(host)), want, "{host}");
        }
    }
}
