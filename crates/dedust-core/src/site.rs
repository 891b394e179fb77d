//! Site: the registrable domain of a host — the unit of "one site" for splits and for evidence.
//!
//! In: a host name as the base layer leaves it (lower case), or a rule's scope host with its
//! port (`h.org:8080`: the domain keeps the port, one site per port). Out: its registrable domain
//! (public suffix + one label, from the Public Suffix List compiled into the `psl` crate):
//! `www.bbc.co.uk` → `bbc.co.uk`, `forum3.example.com` → `example.com`. An IP literal, a host with
//! no registrable part (`localhost`, a bare suffix such as `co.uk`) or an empty host is its own
//! domain. The result is a suffix of the input (less a trailing dot), so it borrows from it.
//! The Public Suffix List is matched as given: pass lower-case hosts.
//!
//! Invariants: pure and total (never fails); `registrable_domain(registrable_domain(h)) ==
//! registrable_domain(h)`.

/// The version of the `psl` crate (its Public Suffix List) compiled into this dedust: the
/// sites `learn` keeps apart depend on it, so rule files record it ([`crate::RuleFile::psl`])
/// and `merge` refuses to pool files learned with different lists. A test keeps it equal to
/// `Cargo.lock`'s.
///
/// ```
/// assert!(dedust_core::PSL_VERSION.starts_with("2."));
/// ```
pub const PSL_VERSION: &str = "2.1.247";

/// The registrable domain of `host` (see the module docs).
///
/// ```
/// use dedust_core::registrable_domain;
/// assert_eq!(registrable_domain("www.bbc.co.uk"), "bbc.co.uk");
/// assert_eq!(registrable_domain("forum3.example.com"), "example.com");
/// assert_eq!(registrable_domain("192.168.1.1"), "192.168.1.1");
/// assert_eq!(registrable_domain("localhost"), "localhost");
/// assert_eq!(registrable_domain("www.example.com:8080"), "example.com:8080");
/// assert_eq!(registrable_domain("127.0.0.1:8765"), "127.0.0.1:8765");
/// ```
pub fn registrable_domain(host: &str) -> &str {
    // A site on a port (a rule's scope, `h.org:8080`) is the registrable domain with the port.
    if let Some(k) = port_start(host) {
        let d = registrable_domain(&host[..k]);
        let at = d.as_ptr() as usize - host.as_ptr() as usize;
        return &host[at..];
    }
    let h = host.strip_suffix('.').unwrap_or(host);
    if h.is_empty() || h.starts_with('[') || is_ipv4(h) {
        return host;
    }
    psl::domain_str(h).unwrap_or(h)
}

/// Where the `:` before a port starts in `host` (`h.org:8080`, `[::1]:8080`), if it names one.
fn port_start(host: &str) -> Option<usize> {
    let k = host.rfind(':')?;
    let (h, port) = (&host[..k], &host[k + 1..]);
    let digits = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
    (digits && !h.is_empty() && (!h.contains(':') || h.ends_with(']'))).then_some(k)
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

/// Whether `host` minus a leading `www.` is the same site: `registrable_domain(h) ==
/// registrable_domain(host)` for `host == "www." + h` (`www.co.uk` is not `co.uk`), with one
/// Public Suffix List lookup instead of two for a plain DNS name. `false` when `host` does not
/// start with `www.`.
///
/// Why one lookup is enough: every list rule that matches `h` matches `www.h` too, so when the
/// registrable domain `d` of `www.h` is shorter than `www.h`, its public suffix is also `h`'s and
/// `h` has `d` as its registrable domain; when `d` is `www.h` itself, `h`'s is shorter. Names the
/// list does not decide alone (empty, a trailing dot, a bracket, a numeric last label as in an IP
/// literal) take the two lookups.
///
/// ```
/// use dedust_core::__private::site::www_is_same_site;
/// assert!(www_is_same_site("www.bbc.co.uk"));
/// assert!(!www_is_same_site("www.co.uk"));
/// assert!(!www_is_same_site("bbc.co.uk"));
/// ```
pub fn www_is_same_site(host: &str) -> bool {
    // The last answer, per thread: links come in runs from one host.
    thread_local! {
        static LAST: std::cell::RefCell<(String, bool)> = const { std::cell::RefCell::new((String::new(), false)) };
    }
    if !host.starts_with("www.") {
        return false;
    }
    LAST.with_borrow_mut(|(h, same)| {
        if h != host {
            h.clear();
            h.push_str(host);
            *same = www_is_same_site_uncached(host);
        }
        *same
    })
}

/// [`www_is_same_site`] without the per-thread memo.
fn www_is_same_site_uncached(host: &str) -> bool {
    let Some(h) = host.strip_prefix("www.") else {
        return false;
    };
    let last = &h[h.bytes().rposition(|c| c == b'.').map_or(0, |k| k + 1)..];
    let plain =
        !last.is_empty() && !h.starts_with('[') && !last.bytes().all(|b| b.is_ascii_digit());
    if plain {
        registrable_domain(host).len() < host.len()
    } else {
        registrable_domain(h) == registrable_domain(host)
    }
}

/// The registrable domain of the host a URL speaks for ([`crate::trusted_host`]: the base
/// layer's host), or `None` when it speaks for none (parsers could read it as two hosts, or it
/// is no http(s) URL).
///
/// ```
/// use dedust_core::__private::site::domain_of_url;
/// assert_eq!(domain_of_url("https://WWW.H.org/x?a=1").as_deref(), Some("h.org"));
/// assert_eq!(domain_of_url("https://evil.org\\@h.org/x"), None);
/// ```
pub fn domain_of_url(url: &str) -> Option<String> {
    crate::trust::trusted_host(url)
        .ok()
        .map(|h| h.site().to_string())
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
            // A scope host with its port: one site per port.
            ("www.example.com:8080", "example.com:8080"),
            ("a.b.github.io:81", "b.github.io:81"),
            ("127.0.0.1:8765", "127.0.0.1:8765"),
            ("[::1]:8080", "[::1]:8080"),
        ];
        for (host, want) in cases {
            assert_eq!(registrable_domain(host), want, "{host}");
            assert_eq!(registrable_domain(registrable_domain(host)), want, "{host}");
        }
    }

    /// The one-lookup answer equals the two-lookup definition, on names chosen at the Public
    /// Suffix List's wildcard and exception rules and at the shortcut's edges, and on every host
    /// of the shared URL lists when they are there.
    #[test]
    fn www_is_same_site_is_the_two_lookup_definition() {
        let two = |host: &str| {
            host.strip_prefix("www.")
                .is_some_and(|h| registrable_domain(h) == registrable_domain(host))
        };
        let mut hosts: Vec<String> = [
            "www.bbc.co.uk",
            "www.co.uk",
            "www.uk",
            "www.com",
            "www.a.com",
            "www.a.com.",
            "www.com.",
            "www.",
            "www..",
            "www.ck",
            "www.foo.ck",
            "www.www.ck",
            "www.kawasaki.jp",
            "www.city.kawasaki.jp",
            "www.x.city.kawasaki.jp",
            "www.github.io",
            "www.x.github.io",
            "www.1.2.3.4",
            "www.10.0.0.1",
            "www.[::1]",
            "www.localhost",
            "www.example",
            "www.www.a.com",
            "www.a.b.c.d.e",
            "www.xn--p1ai",
            "www.a.xn--p1ai",
            "www.s3.amazonaws.com",
            "www.a.s3.amazonaws.com",
            "www.blogspot.com",
            "www.a.blogspot.com",
            "www.1",
            "www.a.1",
            "www.a.b1",
            "www.bd",
            "www.a.bd",
            "www.b.a.bd",
            "a.com",
            "www",
        ]
        .map(str::to_string)
        .to_vec();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets/urls");
        match std::fs::read_dir(&dir) {
            Ok(files) => {
                for f in files.flatten() {
                    let text = std::fs::read(f.path()).unwrap_or_default();
                    for line in String::from_utf8_lossy(&text).lines() {
                        if let Some(p) = crate::url_parts::split_url(line.trim()) {
                            let h = p.host.to_ascii_lowercase();
                            hosts.push(format!("www.{}", h.strip_prefix("www.").unwrap_or(&h)));
                        }
                    }
                }
            }
            Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
                panic!("CI=true and {} is missing", dir.display())
            }
            Err(_) => eprintln!("SKIP shared URL hosts: {} not found", dir.display()),
        }
        hosts.sort();
        hosts.dedup();
        for h in &hosts {
            assert_eq!(www_is_same_site(h), two(h), "{h}");
        }
    }

    /// The recorded list version is the one `Cargo.lock` builds: a `cargo update -p psl` that
    /// forgets the constant fails here.
    #[test]
    fn psl_version_is_cargo_locks() {
        let lock = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock"),
        )
        .expect("the workspace's Cargo.lock");
        let versions: Vec<&str> = lock
            .split("[[package]]")
            .filter(|p| p.lines().any(|l| l.trim() == "name = \"psl\""))
            .filter_map(|p| p.lines().find_map(|l| l.trim().strip_prefix("version = ")))
            .map(|v| v.trim_matches('"'))
            .collect();
        assert_eq!(versions, [super::PSL_VERSION]);
    }
}
