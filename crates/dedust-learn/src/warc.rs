//! WARC reading: record framing, shared by the content verifier (`dedust_content::pages`), and the
//! duplicate evidence a crawl's own records carry, for `learn`.
//!
//! In: a WARC stream (`.warc` or `.warc.gz`, already decompressed by [`crate::input::open`]).
//! Out ([`read_signals`]): `(cluster id, URL)` records through a callback, and a [`WarcReport`]:
//!
//! * a `response` (or `revisit`) with HTTP status 200 joins the payload-digest group of its
//!   `WARC-Payload-Digest` (cluster `digest:<digest>`; a response without one is hashed);
//! * a 200 page that declares a canonical — an HTTP `Link: <…>; rel="canonical"` header, else
//!   `<link rel="canonical" href="…">` in its HTML head — gives the pair (URL, canonical), cluster
//!   `canonical:<url>`;
//! * a 3xx response with a `Location` gives the pair (URL, absolute `Location`), cluster
//!   `redirect:<url>`;
//! * a WAT record (Common Crawl's metadata files: a `metadata` record of JSON describing one
//!   WARC record, its HTTP head and its HTML head) gives what that record would: a 200
//!   response's digest group and declared canonical, a 3xx's redirect pair, a request's `Host`;
//! * everything else (404, 5xx, requests, other metadata, DNS records…) joins nothing and is
//!   counted.
//!
//! A pair spanning two sites (a syndicated canonical, a redirect to another domain) is read like
//! any other; `learn` learns clusters per site, so it never becomes a cross-site rule.
//!
//! Which host a record speaks for is decided by [`dedust_core::trusted_host`] alone. A record
//! whose target URI could be read as two hosts (a `\`, `@` or `%` in its authority, a
//! non-ASCII host…), whose `request` record's `Host` header names another host (request and
//! response may come in either order: the records are held until the file is read), or whose
//! redirect or canonical is such a URL, joins nothing: it is counted in
//! [`WarcReport::ambiguous`], as are its robots.txt lines.
//!
//! Invariants (hostile input, `each_record`): a header line is at most [`MAX_HEADER_LINE`]
//! bytes and a header block at most [`MAX_WARC_HEADER`]; a record body is held only up to the
//! caller's bound ([`SIGNAL_BLOCK`] for the signals: the rest is hashed as it streams past); only
//! the first [`MAX_HTML_SCAN`] decoded bytes of a page are searched for its canonical. A
//! malformed record (a `Content-Length` that does not end at the record's end, no HTTP head, a
//! `Location` that is no URL) is skipped and named (`file#record`, byte offsets); a truncated
//! file (a gzip member cut short, a `Content-Length` past the end of the file) ends the reading
//! with what was read so far, counted, never a crash.

use dedust_io::warc::{decode, each_record, field, http_split, Record};
pub use dedust_io::warc::{MAX_DECODED, MAX_HEADER_LINE, MAX_WARC_HEADER};
use std::io::BufRead;

/// Bytes of a response's block kept for the signals: its HTTP head and the page's beginning.
pub const SIGNAL_BLOCK: u64 = 320 << 10;

/// Bytes of a page's body searched for `<link rel="canonical">` (it sits in the head).
pub const MAX_HTML_SCAN: usize = 256 << 10;

/// What reading a WARC for signals saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcReport {
    /// WARC records read (all types).
    pub records: usize,
    /// 200 responses and revisits placed in a digest group.
    pub digests: usize,
    /// Redirect pairs (3xx with a `Location`).
    pub redirects: usize,
    /// Canonical pairs (a 200 page declaring another URL as canonical).
    pub canonicals: usize,
    /// Records that join nothing on purpose (not a response, not 200 or 3xx, a 3xx without
    /// `Location`, a redirect to itself, a redirect or canonical to another site).
    pub filtered: usize,
    /// Redirects and declared canonicals to another site (counted in `filtered` too): never
    /// evidence of equal content; kept as pairs only the declaring site consents to.
    pub cross_site: usize,
    /// robots.txt responses (200) read for their `Clean-param:` lines.
    pub robots: usize,
    /// `(robots.txt URL, its Clean-param lines)`, for the robots.txt responses that have any
    /// (at most [`MAX_CLEAN_PARAM_BYTES`] in all; `dedust_interop::lists::import_robots` reads them).
    pub clean_params: Vec<(String, String)>,
    /// Bytes held in [`WarcReport::clean_params`].
    pub clean_param_bytes: usize,
    /// Records left out of every trust decision: a target URI (or the redirect or canonical
    /// it declares) that could be read as two hosts, or a request whose `Host` header names
    /// another host than its target URI ([`dedust_core::trusted_host`]).
    pub ambiguous: usize,
    /// The first few ambiguous records (`name#record: why`).
    pub first_ambiguous: Vec<String>,
    /// Malformed records skipped (or the truncation that ended the file).
    pub skipped: usize,
    /// The first few problems (`name#record: why`, with byte offsets where they help).
    pub first_bad: Vec<String>,
}

impl WarcReport {
    fn bad(&mut self, why: String) {
        self.skipped += 1;
        if self.first_bad.len() < 5 {
            self.first_bad.push(why);
        }
    }

    fn ambiguous(&mut self, why: String) {
        self.ambiguous += 1;
        if self.first_ambiguous.len() < 5 {
            self.first_ambiguous.push(why);
        }
    }
}

/// What reading holds until the file is read: the records to emit and the target URIs whose
/// request named another `Host` (a request may follow its response).
#[derive(Default)]
struct Held {
    emits: Vec<(String, String)>,
    /// Target URIs whose request's `Host` header names another host.
    foreign: std::collections::HashSet<String>,
}

/// Most bytes of robots.txt `Clean-param:` lines (and their URLs) held from one WARC.
pub const MAX_CLEAN_PARAM_BYTES: usize = 1 << 20;

/// Read the WARC records of `r` (`name` in messages) for the signals they carry, calling
/// `emit(cluster_id, url)` for every URL that joins a cluster (see the module docs).
///
/// ```
/// let warc = b"WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: http://h.org/old\r\n\
/// Content-Type: application/http; msgtype=response\r\nContent-Length: 38\r\n\r\n\
/// HTTP/1.1 301 Moved\r\nLocation: /new\r\n\r\n\r\n\r\n";
/// let mut pairs = Vec::new();
/// let rep = dedust_learn::warc::read_signals(&warc[..], "x.warc", |c, u| {
///     pairs.push((c.to_string(), u.to_string()))
/// });
/// assert_eq!(rep.redirects, 1, "{rep:?}");
/// assert_eq!(pairs[1], ("redirect:http://h.org/old".to_string(), "http://h.org/new".to_string()));
/// ```
pub fn read_signals(r: impl BufRead, name: &str, mut emit: impl FnMut(&str, &str)) -> WarcReport {
    let mut rep = WarcReport::default();
    let mut bad = Vec::new();
    let mut held = Held::default();
    each_record(
        r,
        name,
        SIGNAL_BLOCK,
        u64::MAX,
        &mut |why| bad.push(why),
        &mut |rec| {
            rep.records += 1;
            record(&rec, &mut rep, &mut held)
        },
    );
    for why in bad {
        rep.bad(why);
    }
    // A record whose request named another host joins nothing; nor does a pair it declared.
    let foreign = |u: &str| held.foreign.contains(u);
    let mut left_out: std::collections::HashSet<String> = Default::default();
    for (c, u) in &held.emits {
        let declarer = c
            .split_once(':')
            .map(|(_, d)| d)
            .filter(|_| !c.starts_with("digest:"));
        match declarer
            .filter(|d| foreign(d))
            .or(Some(u.as_str()).filter(|u| foreign(u)))
        {
            Some(source) => {
                left_out.insert(source.to_string());
                // Uncount what was counted when it was read: a digest record, or a pair (once,
                // at its first record: the declaring URL).
                match c.split_once(':') {
                    Some(("digest", _)) => rep.digests -= 1,
                    Some(("redirect", d)) if d == u => rep.redirects -= 1,
                    Some(("canonical", d)) if d == u => rep.canonicals -= 1,
                    _ => {}
                }
            }
            None => emit(c, u),
        }
    }
    rep.clean_params.retain(|(u, _)| {
        let keep = !foreign(u);
        if !keep {
            left_out.insert(u.clone());
        }
        keep
    });
    let mut left_out: Vec<String> = left_out.into_iter().collect();
    left_out.sort_unstable();
    for u in left_out {
        rep.ambiguous(format!(
            "{name}: {u:?}: its request record's `Host` header names another host"
        ));
    }
    rep
}

/// The `Host` header of an HTTP request head, lower case, without a port; `None` without one.
fn request_host(block: &[u8]) -> Option<String> {
    let end = memchr::memmem::find(block, b"\r\n\r\n").unwrap_or(block.len());
    let head = String::from_utf8_lossy(&block[..end]);
    let v = head.lines().skip(1).find_map(|l| {
        l.split_once(':')
            .filter(|(k, _)| k.trim().eq_ignore_ascii_case("host"))
            .map(|(_, v)| v.to_string())
    })?;
    Some(host_header(&v))
}

/// A `Host` header's value as a host: trimmed, lower case, without its port (`h:80`,
/// `[::1]:80`: a bracketed literal keeps its colons).
fn host_header(v: &str) -> String {
    let v = v.trim().to_ascii_lowercase();
    match v.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|c| c.is_ascii_digit()) && !h.ends_with(':') => h.to_string(),
        _ => v,
    }
}

/// Handle one record for the signals; a skip message when it is malformed.
fn record(rec: &Record, rep: &mut WarcReport, held: &mut Held) -> Option<String> {
    let origin = &rec.origin;
    let kind = field(&rec.fields, "WARC-Type").unwrap_or("");
    let http = field(&rec.fields, "Content-Type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/http"));
    // WARC 1.0's grammar wrote the URI in `<…>`: one pair is taken off, no more.
    let url = field(&rec.fields, "WARC-Target-URI").map(|u| {
        u.strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(u)
    });
    if let (Some(url), true, "request") = (url, http, kind) {
        // A request whose `Host` is not its target URI's host: the pair was fetched from one
        // host and filed under another.
        if let (Ok(h), Some(header)) = (dedust_core::trusted_host(url), request_host(&rec.block)) {
            if header != h.host() {
                held.foreign.insert(url.to_string());
            }
        }
        rep.filtered += 1;
        return None;
    }
    let json = field(&rec.fields, "Content-Type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/json"));
    if kind == "metadata" && json {
        return wat_record(rec, rep, held);
    }
    let url = url.filter(|u| {
        let scheme = u.split_once(':').map_or("", |p| p.0);
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    });
    let (Some(url), true, "response" | "revisit") = (url, http, kind) else {
        rep.filtered += 1;
        return None;
    };
    if let Some(why) = crate::input::untrusted_capture(url, None) {
        rep.ambiguous(format!("{origin}: {url:?}: {why}"));
        return None;
    }
    let mut emit = |c: &str, u: &str| held.emits.push((c.to_string(), u.to_string()));
    let emit = &mut emit;
    // A revisit's block may be the HTTP head without its blank line.
    let split = http_split(&rec.block).or_else(|| {
        let mut b = rec.block.clone();
        b.extend_from_slice(b"\r\n\r\n");
        (kind == "revisit")
            .then(|| http_split(&b).map(|(s, h, _)| (s, h, &[][..])))
            .flatten()
    });
    let Some((status, headers, body)) = split else {
        return Some(format!(
            "{origin}: no HTTP head in the first {SIGNAL_BLOCK} bytes"
        ));
    };
    if (300..400).contains(&status) {
        let Some(loc) = field(&headers, "Location") else {
            rep.filtered += 1;
            return None;
        };
        return pair("redirect", url, loc, rep, emit)
            .map(|()| format!("{origin}: `Location` is no URL: {loc:?}"));
    }
    if status != 200 {
        rep.filtered += 1;
        return None;
    }
    // A site's robots.txt: its `Clean-param:` lines are declarations, not a page.
    if crate::tokenize::split_url(url).is_some_and(|p| p.path == "/robots.txt") {
        rep.robots += 1;
        let cut = rec.rest != crate::hash::Fnv::new().finish();
        let data = decode(&headers, body, MAX_HTML_SCAN as u64, false)?;
        let cut = cut || data.len() >= MAX_HTML_SCAN;
        let text = String::from_utf8_lossy(&data);
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        // A line the held bytes cut short could name another parameter: left out.
        if cut && lines.last().is_some_and(|l| !l.ends_with('\n')) {
            lines.pop();
        }
        let lines: Vec<&str> = lines
            .into_iter()
            .map(str::trim)
            .filter(|l| {
                l.split_once(':')
                    .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("clean-param"))
            })
            .collect();
        if !lines.is_empty() {
            let add = lines.iter().map(|l| l.len() + 1).sum::<usize>() + url.len();
            if rep.clean_param_bytes + add > MAX_CLEAN_PARAM_BYTES {
                // Well-formed, only past the bound: left out and counted, not malformed.
                rep.filtered += 1;
                return None;
            }
            rep.clean_param_bytes += add;
            rep.clean_params.push((url.to_string(), lines.join("\n")));
        }
        return None;
    }
    let digest = match field(&rec.fields, "WARC-Payload-Digest") {
        Some(d) => d.to_string(),
        // The payload's own hash: its bytes in the block held, then the rest.
        None if kind == "response" => {
            let mut h = crate::hash::Fnv::new();
            h.write(body);
            format!("fnv:{:016x}{:016x}", h.finish(), rec.rest)
        }
        None => {
            rep.filtered += 1;
            return None;
        }
    };
    emit(&format!("digest:{digest}"), url);
    rep.digests += 1;
    if kind != "response" {
        return None;
    }
    // The declared canonical: the HTTP `Link` header first, then the HTML head.
    let declared = headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("Link"))
        .find_map(|(_, v)| link_canonical(v))
        .or_else(|| {
            let html = field(&headers, "Content-Type")
                .is_none_or(|t| t.to_ascii_lowercase().contains("html"));
            let page = decode(&headers, body, MAX_HTML_SCAN as u64, false)?;
            html.then(|| html_canonical(&page)).flatten()
        });
    let c = declared?;
    pair("canonical", url, &c, rep, emit).map(|()| format!("{origin}: canonical is no URL: {c:?}"))
}

/// A WAT record (Common Crawl's per-record metadata: a `metadata` record of JSON whose
/// `Envelope` describes one WARC record, its HTTP head and its HTML head): the signals that
/// record carries — a 200 response joins the group of its payload digest and declares its
/// canonical (an HTTP `Link` header, else a `<link rel="canonical">` of `HTML-Metadata.Head`),
/// a 3xx with a `Location` is a redirect pair, a request's `Host` is checked against its target.
fn wat_record(rec: &Record, rep: &mut WarcReport, held: &mut Held) -> Option<String> {
    use serde_json::Value;
    let origin = &rec.origin;
    let cut = rec.rest != crate::hash::Fnv::new().finish();
    let v: Value = match serde_json::from_slice(&rec.block) {
        Ok(v) => v,
        Err(_) if cut => {
            return Some(format!(
                "{origin}: WAT record longer than the {SIGNAL_BLOCK} bytes read of a record"
            ))
        }
        Err(e) => return Some(format!("{origin}: WAT record is no JSON: {e}")),
    };
    let env = &v["Envelope"];
    let meta = &env["WARC-Header-Metadata"];
    let kind = meta["WARC-Type"].as_str().unwrap_or("");
    let url = meta["WARC-Target-URI"].as_str().map(|u| {
        u.strip_prefix('<')
            .and_then(|u| u.strip_suffix('>'))
            .unwrap_or(u)
    });
    let text = |x: &Value| match x {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    // A header of an HTTP head's `Headers` object, by case-insensitive name.
    let header = |headers: &Value, name: &str| {
        headers.as_object().and_then(|h| {
            h.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| text(v))
        })
    };
    let payload = &env["Payload-Metadata"];
    if let (Some(url), "request") = (url, kind) {
        let host = header(&payload["HTTP-Request-Metadata"]["Headers"], "Host");
        if let (Ok(h), Some(host)) = (dedust_core::trusted_host(url), host) {
            if host_header(&host) != h.host() {
                held.foreign.insert(url.to_string());
            }
        }
        rep.filtered += 1;
        return None;
    }
    let url = url.filter(|u| {
        let scheme = u.split_once(':').map_or("", |p| p.0);
        scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
    });
    let (Some(url), "response") = (url, kind) else {
        rep.filtered += 1;
        return None;
    };
    if let Some(why) = crate::input::untrusted_capture(url, None) {
        rep.ambiguous(format!("{origin}: {url:?}: {why}"));
        return None;
    }
    let http = &payload["HTTP-Response-Metadata"];
    let Some(status) =
        text(&http["Response-Message"]["Status"]).and_then(|s| s.parse::<u16>().ok())
    else {
        return Some(format!(
            "{origin}: WAT record of {url:?} holds no HTTP status"
        ));
    };
    let mut emit = |c: &str, u: &str| held.emits.push((c.to_string(), u.to_string()));
    let emit = &mut emit;
    let headers = &http["Headers"];
    if (300..400).contains(&status) {
        let Some(loc) = header(headers, "Location") else {
            rep.filtered += 1;
            return None;
        };
        return pair("redirect", url, &loc, rep, emit)
            .map(|()| format!("{origin}: `Location` is no URL: {loc:?}"));
    }
    // Not 200; or a robots.txt, whose lines a WAT does not hold.
    if status != 200 || crate::tokenize::split_url(url).is_some_and(|p| p.path == "/robots.txt") {
        rep.filtered += 1;
        return None;
    }
    let Some(digest) = meta["WARC-Payload-Digest"]
        .as_str()
        .or_else(|| http["Entity-Digest"].as_str())
    else {
        rep.filtered += 1;
        return None;
    };
    emit(&format!("digest:{digest}"), url);
    rep.digests += 1;
    let from_head = || {
        http["HTML-Metadata"]["Head"]["Link"]
            .as_array()?
            .iter()
            .find(|l| {
                l["rel"].as_str().is_some_and(|r| {
                    r.split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
                })
            })
            .and_then(|l| l["url"].as_str().or_else(|| l["href"].as_str()))
            .map(str::to_string)
    };
    let declared = header(headers, "Link")
        .and_then(|v| link_canonical(&v))
        .or_else(from_head);
    let c = declared?;
    pair("canonical", url, &c, rep, emit).map(|()| format!("{origin}: canonical is no URL: {c:?}"))
}

/// Emit the pair `url` declares (`signal`: `redirect` or `canonical`), counting it; `Some(())`
/// when the target is no URL (the caller names the record).
fn pair(
    signal: &str,
    url: &str,
    target: &str,
    rep: &mut WarcReport,
    emit: &mut impl FnMut(&str, &str),
) -> Option<()> {
    use crate::input::Declared;
    match crate::input::declared(url, target) {
        Declared::Pair(to) => {
            let id = format!("{signal}:{url}");
            emit(&id, url);
            emit(&id, &to);
            match signal {
                "redirect" => rep.redirects += 1,
                _ => rep.canonicals += 1,
            }
            None
        }
        // A syndicated copy naming the original on another site, a redirect away: no evidence
        // of equal content, only the declaring site's consent to be aliased there.
        Declared::OtherSite(to) => {
            let id = format!("{signal}:{url}");
            emit(&id, url);
            emit(&id, &to);
            rep.cross_site += 1;
            rep.filtered += usize::from(signal == "redirect");
            None
        }
        // A redirect to itself (a cookie check), a self-canonical: nothing.
        Declared::Itself => {
            rep.filtered += usize::from(signal == "redirect");
            None
        }
        Declared::Ambiguous(why) => {
            rep.ambiguous(format!("{url:?}: its {signal} {target:?}: {why}"));
            None
        }
        Declared::NotUrl => Some(()),
    }
}

/// The canonical of an HTTP `Link` header value (`<…>; rel="canonical"`, among others).
fn link_canonical(value: &str) -> Option<String> {
    for part in value.split(',') {
        let part = part.trim();
        let Some(rest) = part.strip_prefix('<') else {
            continue;
        };
        let Some((target, params)) = rest.split_once('>') else {
            continue;
        };
        let canonical = params.split(';').any(|p| {
            let p = p.trim();
            p.split_once('=').is_some_and(|(k, v)| {
                k.trim().eq_ignore_ascii_case("rel")
                    && v.trim()
                        .trim_matches('"')
                        .split_ascii_whitespace()
                        .any(|r| r.eq_ignore_ascii_case("canonical"))
            })
        });
        if canonical {
            return Some(target.trim().to_string());
        }
    }
    None
}

/// The `href` of the first `<link rel="canonical">` of an HTML head (the scan stops at the first
/// tag that cannot be in a head).
fn html_canonical(html: &[u8]) -> Option<String> {
    use html5gum::{DefaultEmitter, Token, Tokenizer};
    let text = String::from_utf8_lossy(html);
    // Script, style and title text is text, not tags (a `'<link rel=canonical …>'` inside a
    // script declares nothing).
    let mut em = DefaultEmitter::default();
    em.naively_switch_states(true);
    for tok in Tokenizer::new_with_emitter(text.as_ref(), em).flatten() {
        if let Token::StartTag(tag) = tok {
            let name = tag.name.to_ascii_lowercase();
            // The head ends at the first tag that cannot be in it.
            let in_head = matches!(
                name.as_slice(),
                b"html"
                    | b"head"
                    | b"link"
                    | b"meta"
                    | b"title"
                    | b"script"
                    | b"style"
                    | b"noscript"
                    | b"base"
                    | b"template"
            );
            if !in_head {
                return None;
            }
            if name != b"link" {
                continue;
            }
            let attr = |k: &str| {
                tag.attributes
                    .get(k.as_bytes())
                    .map(|v| String::from_utf8_lossy(v).into_owned())
            };
            let rel = attr("rel").unwrap_or_default();
            if rel
                .split_ascii_whitespace()
                .any(|r| r.eq_ignore_ascii_case("canonical"))
            {
                if let Some(href) = attr("href").filter(|h| !h.trim().is_empty()) {
                    return Some(href.trim().to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WARC record of `kind` for `url` with an HTTP block.
    fn rec(kind: &str, url: &str, extra: &str, block: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\n{extra}\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    }

    fn read(data: &str) -> (Vec<(String, String)>, WarcReport) {
        let mut out = Vec::new();
        let rep = read_signals(data.as_bytes(), "t.warc", |c, u| {
            out.push((c.into(), u.into()))
        });
        (out, rep)
    }

    /// A WAT record (a `metadata` record of JSON) describing a WARC record of `kind` for `url`;
    /// `http` is the `Payload-Metadata` object.
    fn wat(kind: &str, url: &str, digest: &str, http: serde_json::Value) -> String {
        let json = serde_json::json!({
            "Container": {"Filename": "x.warc.gz", "Offset": "0"},
            "Envelope": {
                "Format": "WARC",
                "WARC-Header-Metadata": {
                    "WARC-Type": kind, "WARC-Target-URI": url, "WARC-Payload-Digest": digest,
                },
                "Payload-Metadata": http,
            },
        })
        .to_string();
        format!(
            "WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: {url}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}\r\n\r\n",
            json.len()
        )
    }

    /// The `Payload-Metadata` of an HTTP response: status, headers, the HTML head's links.
    fn response(
        status: &str,
        headers: serde_json::Value,
        links: serde_json::Value,
    ) -> serde_json::Value {
        serde_json::json!({
            "Actual-Content-Type": "application/http; msgtype=response",
            "HTTP-Response-Metadata": {
                "Response-Message": {"Version": "HTTP/1.1", "Status": status, "Reason": "x"},
                "Headers": headers,
                "HTML-Metadata": {"Head": {"Title": "t", "Link": links}},
            },
        })
    }

    #[test]
    fn wat_records_carry_the_signals_of_the_records_they_describe() {
        use serde_json::json;
        let canonical = json!([{"path": "LINK@/href", "url": "/a", "rel": "canonical"}]);
        let mut w = wat(
            "response",
            "http://h.org/a?s=1",
            "sha1:D1",
            response("200", json!({"Content-Type": "text/html"}), canonical),
        );
        // A 301 with its `Location`, a `Link` header canonical, a 404 and a robots.txt.
        w += &wat(
            "response",
            "http://h.org/old",
            "sha1:D2",
            response("301", json!({"location": "/new"}), json!([])),
        );
        w += &wat(
            "response",
            "http://h.org/b?x=1",
            "sha1:D3",
            response("200", json!({"Link": "</b>; rel=\"canonical\""}), json!([])),
        );
        w += &wat(
            "response",
            "http://h.org/gone",
            "sha1:D4",
            response("404", json!({}), json!([])),
        );
        w += &wat(
            "response",
            "http://h.org/robots.txt",
            "sha1:D5",
            response("200", json!({}), json!([])),
        );
        let (pairs, rep) = read(&w);
        let want = [
            ("digest:sha1:D1", "http://h.org/a?s=1"),
            ("canonical:http://h.org/a?s=1", "http://h.org/a?s=1"),
            ("canonical:http://h.org/a?s=1", "http://h.org/a"),
            ("redirect:http://h.org/old", "http://h.org/old"),
            ("redirect:http://h.org/old", "http://h.org/new"),
            ("digest:sha1:D3", "http://h.org/b?x=1"),
            ("canonical:http://h.org/b?x=1", "http://h.org/b?x=1"),
            ("canonical:http://h.org/b?x=1", "http://h.org/b"),
        ];
        let got: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(c, u)| (c.as_str(), u.as_str()))
            .collect();
        assert_eq!(got, want, "{rep:?}");
        assert_eq!(
            (rep.digests, rep.redirects, rep.canonicals),
            (2, 1, 2),
            "{rep:?}"
        );
        assert_eq!((rep.filtered, rep.skipped), (2, 0), "{rep:?}");
        // A request whose `Host` names another host: its URL joins nothing.
        let request = json!({"HTTP-Request-Metadata": {"Headers": {"Host": "evil.com"}}});
        let w = wat("request", "http://h.org/a?s=1", "", request)
            + &wat(
                "response",
                "http://h.org/a?s=1",
                "sha1:D1",
                response("200", json!({}), json!([])),
            );
        let (pairs, rep) = read(&w);
        assert!(pairs.is_empty(), "{pairs:?}");
        assert_eq!(rep.ambiguous, 1, "{rep:?}");
        // Not JSON: skipped and named.
        let bad = "WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: http://h.org/\r\n\
                   Content-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}\r\n\r\n";
        let (pairs, rep) = read(bad);
        assert!(pairs.is_empty());
        assert_eq!(rep.skipped, 1, "{rep:?}");
        assert!(
            rep.first_bad[0].contains("WAT record is no JSON"),
            "{rep:?}"
        );
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn record_kinds_table() {
        let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><head>\
                    <link rel=\"canonical\" href=\"/a\"></head><body>x</body></html>";
        // (records, expected pairs, filtered, skipped)
        let cases: &[(&str, &[(&str, &str)], usize, usize)] = &[
            (
                &rec("response", "http://h.org/a?s=1", "WARC-Payload-Digest: sha1:D\r\n", page),
                &[
                    ("digest:sha1:D", "http://h.org/a?s=1"),
                    ("canonical:http://h.org/a?s=1", "http://h.org/a?s=1"),
                    ("canonical:http://h.org/a?s=1", "http://h.org/a"),
                ],
                0,
                0,
            ),
            // The Link header wins over the HTML.
            (
                &rec(
                    "response",
                    "https://h.org/p",
                    "WARC-Payload-Digest: sha1:E\r\n",
                    "HTTP/1.1 200 OK\r\nLink: </node/1>; rel=\"shortlink\", </q>; rel=\"canonical\"\r\n\r\n<link rel=canonical href=/z>",
                ),
                &[
                    ("digest:sha1:E", "https://h.org/p"),
                    ("canonical:https://h.org/p", "https://h.org/p"),
                    ("canonical:https://h.org/p", "https://h.org/q"),
                ],
                0,
                0,
            ),
            // A canonical naming the page itself says nothing more.
            (
                &rec("response", "http://h.org/a", "WARC-Payload-Digest: sha1:D\r\n", page),
                &[("digest:sha1:D", "http://h.org/a")],
                0,
                0,
            ),
            (
                &rec("response", "http://h.org/x", "", "HTTP/1.1 404 Not Found\r\n\r\ngone"),
                &[],
                1,
                0,
            ),
            (
                &rec("response", "http://h.org/x", "", "HTTP/1.1 302 Found\r\nLocation: http://[::1\r\n\r\n"),
                &[],
                0,
                1,
            ),
            (
                &rec("request", "http://h.org/x", "", "GET /x HTTP/1.1\r\n\r\n"),
                &[],
                1,
                0,
            ),
            (
                &rec("revisit", "http://h.org/b", "WARC-Payload-Digest: sha1:D\r\n", "HTTP/1.1 200 OK\r\nServer: x\r\n\r\n"),
                &[("digest:sha1:D", "http://h.org/b")],
                0,
                0,
            ),
            (
                &rec("response", "dns:h.org", "", "20140325121224\nh.org. 1 IN A 1.2.3.4\n"),
                &[],
                1,
                0,
            ),
            // A record without a Content-Length (or with `-1`, hex, 24 digits) is one skip; the
            // reading resumes at the next `WARC/` line, and the records around it are read.
            (
                &format!(
                    "{}WARC/1.0\r\nWARC-Type: response\r\n\r\njunk\r\n\r\n{}",
                    rec("response", "http://h.org/y", "", "HTTP/1.1 301 Moved\r\nLocation: /z\r\n\r\n"),
                    rec("response", "http://h.org/w", "", "HTTP/1.1 301 Moved\r\nLocation: /v\r\n\r\n")
                ),
                &[
                    ("redirect:http://h.org/y", "http://h.org/y"),
                    ("redirect:http://h.org/y", "http://h.org/z"),
                    ("redirect:http://h.org/w", "http://h.org/w"),
                    ("redirect:http://h.org/w", "http://h.org/v"),
                ],
                0,
                1,
            ),
            (
                &format!(
                    "{}WARC/1.0\r\nContent-Length: -1\r\n\r\nWARC/1.0 junk\r\n\r\nWARC/1.0\r\nContent-Length: 0x10\r\n\r\n\
                     WARC/1.0\r\nContent-Length: 123456789012345678901234\r\n\r\njunk\r\n\
                     WARC/1.0\r\nContent-Length: 99999999999999\r\n\r\njunk\r\n{}",
                    rec("response", "http://h.org/y", "", "HTTP/1.1 301 Moved\r\nLocation: /z\r\n\r\n"),
                    rec("response", "http://h.org/w", "", "HTTP/1.1 301 Moved\r\nLocation: /v\r\n\r\n")
                ),
                &[
                    ("redirect:http://h.org/y", "http://h.org/y"),
                    ("redirect:http://h.org/y", "http://h.org/z"),
                    ("redirect:http://h.org/w", "http://h.org/w"),
                    ("redirect:http://h.org/w", "http://h.org/v"),
                ],
                0,
                5,
            ),
        ];
        for (data, want, nf, ns) in cases {
            let (got, rep) = read(data);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect();
            assert_eq!(got, want, "{data}");
            assert_eq!((rep.filtered, rep.skipped), (*nf, *ns), "{data}: {rep:?}");
        }
    }

    #[test]
    fn a_gzip_encoded_page_declares_its_canonical_once_decoded() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"<html><head><link rel=canonical href=/c></head>")
            .unwrap();
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend(gz.finish().unwrap());
        let mut data = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://h.org/g\r\n\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        data.extend(&block);
        data.extend(b"\r\n\r\n");
        let mut out = Vec::new();
        let rep = read_signals(&data[..], "g.warc", |c, u| out.push(format!("{c} {u}")));
        assert_eq!(rep.canonicals, 1, "{rep:?}");
        assert_eq!(out[2], "canonical:http://h.org/g http://h.org/c");
        assert!(
            out[0].starts_with("digest:fnv:"),
            "hashed without a payload digest: {out:?}"
        );
    }

    #[test]
    fn robots_txt_gives_clean_param_lines_not_a_page() {
        let body = "HTTP/1.1 200 OK\r\n\r\nUser-agent: *\nClean-param: sid /f/\nDisallow: /x\n";
        let other = "HTTP/1.1 200 OK\r\n\r\nUser-agent: *\n";
        let data = rec("response", "http://h.org/robots.txt", "", body)
            + &rec("response", "http://g.org/robots.txt", "", other)
            + &rec("response", "http://h.org/a/robots.txt", "", body);
        let (pairs, rep) = read(&data);
        assert_eq!(rep.robots, 2);
        assert_eq!(
            rep.clean_params,
            [(
                "http://h.org/robots.txt".to_string(),
                "Clean-param: sid /f/".to_string()
            )]
        );
        // Only the file that is no site's robots.txt is a page.
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].1, "http://h.org/a/robots.txt");
    }

    #[test]
    fn a_truncated_file_ends_the_reading_counted() {
        let good = rec(
            "response",
            "http://h.org/y",
            "",
            "HTTP/1.1 301 Moved\r\nLocation: /z\r\n\r\n",
        );
        let cut = rec(
            "response",
            "http://h.org/w",
            "",
            "HTTP/1.1 301 Moved\r\nLocation: /v\r\n\r\n",
        );
        let data = format!("{good}{}", &cut[..cut.len() - 20]);
        let (got, rep) = read(&data);
        assert_eq!(got.len(), 2, "the record before the cut is kept");
        assert_eq!(rep.skipped, 1);
        assert!(rep.first_bad[0].contains("truncated block"), "{rep:?}");
        // A huge header line is refused without being held.
        let huge = format!(
            "WARC/1.0\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_WARC_HEADER + 10)
        );
        let (got, rep) = read(&huge);
        assert!(got.is_empty());
        assert_eq!(rep.skipped, 1, "{rep:?}");
    }

    #[test]
    fn html_canonical_only_from_the_head() {
        for (html, want) in [
            ("<head><link rel=canonical href=/a></head>", Some("/a")),
            ("<script>var s = '<link rel=canonical href=/evil>';</script><link rel=canonical href=/a>", Some("/a")),
            ("<head><title><link rel=canonical href=/t></title></head><body><link rel=canonical href=/b>", None),
            ("<p>post</p><link rel=canonical href=/b>", None),
        ] {
            assert_eq!(html_canonical(html.as_bytes()).as_deref(), want, "{html}");
        }
    }

    #[test]
    fn link_header_forms() {
        for (v, want) in [
            ("</a>; rel=\"canonical\"", Some("/a")),
            ("<https://h.org/a>; rel=canonical", Some("https://h.org/a")),
            ("</n/1>; rel=\"shortlink\"", None),
            ("</a>; rel=\"alternate canonical\"", Some("/a")),
            ("garbage", None),
        ] {
            assert_eq!(link_canonical(v).as_deref(), want, "{v}");
        }
    }
}
