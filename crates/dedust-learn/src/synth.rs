//! Synth: a synthetic DUST web with exact ground truth.
//!
//! In: [`SynthOptions`] (sites, pages per site, seed). Out: [`SynthOutput`] — `(cluster, url)` rows
//! where URLs of one cluster carry the same content, and per site the DUST mechanisms and traps it
//! uses. Deterministic for a seed (a SplitMix64 generator, no global state).
//!
//! Each site gets a URL scheme (forum, shop, news, cms, docs) and a random subset of mechanisms:
//! session ids in the query (`sid`, `PHPSESSID`, `s=<32 hex>`), tracking parameters (`utm_*`,
//! `gclid`, `fbclid`, `ref`), `www.` and mirror hosts, `http`/`https`, default documents
//! (`index.html`, `index.php`, `default.aspx`), trailing slashes, print and AMP views, redundant
//! parameters (`mode=`, `highlight=`), case-insensitive paths, path↔query aliases
//! (`/s/1042` ≡ `/showthread.php?t=1042`). Traps are present on every site: a `page`/`sort`
//! parameter that changes content (separate clusters), a login wall where many different URLs
//! return one page, and a soft 404 where missing pages return one "not found" page.
//! With `pages`, [`pages_jsonl`] renders an HTML page per URL whose text follows the ground truth.

use std::collections::HashMap;
use std::fmt::Write;

/// Generator settings.
#[derive(Debug, Clone, Copy)]
pub struct SynthOptions {
    /// Number of sites.
    pub sites: usize,
    /// Pages (distinct contents) per site.
    pub pages: usize,
    /// Seed.
    pub seed: u64,
    /// Number of the first site: sites are numbered `host_offset ..  host_offset + sites`, and
    /// site `n` is the same whatever the offset, so two runs with disjoint ranges write the same
    /// site families on disjoint hosts (learn on one, test on the other).
    pub host_offset: usize,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            sites: 10,
            pages: 100,
            seed: 1,
            host_offset: 0,
        }
    }
}

/// What one site uses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SiteTruth {
    /// Main host.
    pub host: String,
    /// URL scheme family.
    pub kind: String,
    /// DUST mechanisms in use.
    pub mechanisms: Vec<String>,
    /// Parameter names the site's mechanisms use (session, tracking, redundant), as `name=role`.
    pub parameters: Vec<String>,
    /// Traps in use.
    pub traps: Vec<String>,
}

/// Generated data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SynthOutput {
    /// `(cluster, url)` rows, singletons included.
    pub rows: Vec<(String, String)>,
    /// Per-site truth.
    pub sites: Vec<SiteTruth>,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn hex(&mut self, n: usize) -> String {
        let mut s = String::new();
        while s.len() < n {
            let _ = write!(s, "{:016x}", self.next());
        }
        s.truncate(n);
        s
    }
    /// `n` characters of `[0-9a-v]` (PHP's default session id alphabet).
    fn base32(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| b"0123456789abcdefghijklmnopqrstuv"[self.below(32)] as char)
            .collect()
    }
    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }
}

/// All mechanism names, in the order [`synth`] may pick them.
pub const MECHANISMS: &[&str] = &[
    "session",
    "tracking",
    "www",
    "https",
    "default-doc",
    "trailing-slash",
    "print",
    "redundant",
    "amp",
    "path-alias",
];

/// Session parameter names; each site uses one. `s` and `p`-like short names also occur as
/// content parameters on other sites (the `collide` trap), so a learner must not drop them by
/// name alone.
const SESSION_NAMES: &[&str] = &[
    "sid",
    "PHPSESSID",
    "s",
    "sessionid",
    "sess",
    "zenid",
    "osCsid",
    "session_id",
];

/// Tracking parameters (`name=` gets a random click id, `name=value` is used as is); each site
/// uses two or three.
const TRACKING: &[&str] = &[
    "utm_source=newsletter",
    "utm_medium=social",
    "utm_campaign=spring",
    "gclid=",
    "fbclid=",
    "msclkid=",
    "mc_cid=",
    "ref=home",
    "src=feed",
    "yclid=",
];

/// Sites per position of the name windows (see [`window`]).
const POOL_BLOCK: usize = 25;

/// `k` names of `pool`, starting at position `si / POOL_BLOCK` (wrapping).
fn window<'a>(pool: &[&'a str], si: usize, k: usize) -> Vec<&'a str> {
    let start = si / POOL_BLOCK;
    (0..k.min(pool.len()))
        .map(|i| pool[(start + i) % pool.len()])
        .collect()
}

/// Content parameters whose names are session or tracking names elsewhere.
const COLLIDE: &[&str] = &["s", "p", "ref"];

const WORDS: &[&str] = &[
    "install", "ubuntu", "kernel", "driver", "network", "guide", "review", "budget", "garden",
    "recipe", "travel", "camera", "update", "release", "python", "server", "market", "energy",
    "school", "health",
];

/// Generate a synthetic DUST web.
///
/// ```
/// let o = dedust_learn::synth::SynthOptions { sites: 2, pages: 20, seed: 7, host_offset: 0 };
/// let a = dedust_learn::synth::synth(&o);
/// assert_eq!(a, dedust_learn::synth::synth(&o));
/// assert!(a.rows.len() > 40);
/// ```
pub fn synth(o: &SynthOptions) -> SynthOutput {
    let mut rows = Vec::new();
    let mut sites = Vec::new();
    for si in o.host_offset..o.host_offset + o.sites {
        let (site_rows, truth) = site(o, si);
        rows.extend(site_rows);
        sites.push(truth);
    }
    // Rows of one cluster are adjacent already; keep generation order (deterministic).
    rows.dedup();
    SynthOutput { rows, sites }
}

/// One site: its rows and its truth. Depends only on the seed and the site number.
fn site(o: &SynthOptions, si: usize) -> (Vec<(String, String)>, SiteTruth) {
    let mut rng =
        Rng((o.seed ^ 0x5EED_D057).wrapping_add((si as u64).wrapping_mul(0xA24B_AED4_963E_E407)));
    rng.next();
    let kinds = ["forum", "shop", "news", "cms", "docs"];
    let mut rows = Vec::new();
    let kind = kinds[si % kinds.len()];
    // `.example` is reserved (RFC 2606): every site is its own registrable domain.
    let host = format!("{kind}{si}.example");
    let mut mechs: Vec<&str> = MECHANISMS
        .iter()
        .copied()
        .filter(|_| rng.chance(0.5))
        .collect();
    if mechs.is_empty() {
        mechs.push(MECHANISMS[rng.below(MECHANISMS.len())]);
    }
    let has = |m: &str| mechs.contains(&m);
    let scheme = if has("https") { "https" } else { "http" };
    // Names come from a window of each pool that moves every `POOL_BLOCK` sites, so two disjoint
    // ranges of sites share some names and not others (a learner is tested on names it learned
    // elsewhere, not on the generator's whole vocabulary).
    let session_pool = window(SESSION_NAMES, si, 5);
    let tracking_pool = window(TRACKING, si, 6);
    let sess = rng.pick(&session_pool);
    let mut tracking: Vec<&str> = Vec::new();
    while tracking.len() < 2 + rng.below(2) {
        let t = rng.pick(&tracking_pool);
        if !tracking.contains(&t) && !t.starts_with(&format!("{sess}=")) {
            tracking.push(t);
        }
    }
    let default_doc = rng.pick(&["index.html", "index.php", "default.aspx"]);
    let mirror = format!("{kind}{si}-mirror.example");
    // A content parameter named like another site's session or tracking parameter.
    let name_of = |t: &str| t.split('=').next().unwrap_or("").to_string();
    let collide = COLLIDE
        .iter()
        .copied()
        .filter(|c| *c != sess && !tracking.iter().any(|t| name_of(t) == *c))
        // vBulletin's `p` is always a post (redundant next to `t`), never a page number.
        .filter(|c| !(kind == "forum" && *c == "p"))
        .nth(rng.below(COLLIDE.len()))
        .filter(|_| rng.chance(0.5));
    for p in 0..o.pages {
        let id = 1000 + p * 7 + rng.below(5);
        let slug = format!("{}-{}", rng.pick(WORDS), rng.pick(WORDS));
        // The canonical URL of the page: path and the parameters that matter.
        let (path, mut params): (String, Vec<String>) = match kind {
            "forum" => ("/showthread.php".into(), vec![format!("t={id}")]),
            "shop" => ("/product.php".into(), vec![format!("id={id}")]),
            "news" => (format!("/news/{}/{slug}-{id}/", 2010 + p % 12), vec![]),
            "cms" => (
                "/index.php".into(),
                vec!["option=com_content".into(), format!("id={id}")],
            ),
            _ => (format!("/docs/{slug}/{id}/"), vec![]),
        };
        let cluster = format!("s{si}-p{p}");
        let url = |scheme: &str, host: &str, path: &str, params: &[String]| {
            let mut u = format!("{scheme}://{host}{path}");
            if !params.is_empty() {
                u.push('?');
                u.push_str(&params.join("&"));
            }
            u
        };
        rows.push((cluster.clone(), url(scheme, &host, &path, &params)));
        // Variants that carry the same content.
        let n_var = rng.below(4);
        for _ in 0..n_var {
            let m = mechs[rng.below(mechs.len())];
            let (mut sc, mut h, mut pa, mut pr) = (
                scheme.to_string(),
                host.clone(),
                path.clone(),
                params.clone(),
            );
            match m {
                "session" if sess == "PHPSESSID" => pr.push(format!("{sess}={}", rng.base32(26))),
                "session" => pr.push(format!("{sess}={}", rng.hex(32))),
                "tracking" => {
                    let t = tracking[rng.below(tracking.len())];
                    if t.ends_with('=') {
                        pr.push(format!("{t}{}", rng.hex(16)));
                    } else {
                        pr.push(t.to_string());
                    }
                }
                "www" => h = format!("www.{host}"),
                "https" => sc = "http".into(),
                "default-doc" if pa.ends_with('/') => pa.push_str(default_doc),
                "trailing-slash" if pa.ends_with('/') => {
                    pa.pop();
                }
                "trailing-slash" => pa.push('/'),
                "print" => pr.push("print=1".into()),
                // A case-insensitive server: the same path with other letter case.
                "case" => {
                    let seg = pa
                        .trim_start_matches('/')
                        .split('/')
                        .next()
                        .unwrap_or("")
                        .to_string();
                    let mut up = seg.clone();
                    if let Some(f) = up.get_mut(0..1) {
                        f.make_ascii_uppercase();
                    }
                    pa = pa.replacen(&seg, &up, 1);
                }
                // Path ↔ query alias: `/t/123` ≡ `/showthread.php?t=123`.
                "path-alias" if !pr.is_empty() => {
                    let id = pr
                        .iter()
                        .find_map(|p| p.strip_prefix("t=").or(p.strip_prefix("id=")))
                        .unwrap_or("0");
                    pa = format!("/{}/{id}", &kind[..1]);
                    pr.clear();
                }
                "path-alias" => pr.push(format!("id={id}")),
                "amp" if pa.ends_with('/') => pa.push_str("amp/"),
                "amp" => pr.push("amp=1".into()),
                "mirror" => h = mirror.clone(),
                // Forums: `p=<post>` is redundant next to `t=` (vBulletin); elsewhere view modes.
                "redundant" if kind == "forum" && rng.chance(0.3) => {
                    pr.push(format!("p={}", 50_000 + id * 11 + rng.below(9)))
                }
                "redundant" => pr.push(
                    rng.pick(&["mode=hybrid", "mode=threaded", "highlight="])
                        .into(),
                ),
                _ => pr.push(format!("{sess}={}", rng.hex(32))),
            }
            rows.push((cluster.clone(), url(&sc, &h, &pa, &pr)));
        }
        // Trap: a parameter that changes content gives a different cluster.
        if rng.chance(0.3) {
            let trap = if kind == "shop" {
                "sort=price"
            } else {
                "page=2"
            };
            let mut tp = params.clone();
            tp.push(trap.into());
            rows.push((format!("{cluster}-t"), url(scheme, &host, &path, &tp)));
        }
        // Trap: a content parameter named like a session/tracking parameter elsewhere.
        if let Some(c) = collide.filter(|_| rng.chance(0.25)) {
            let v = match c {
                "s" => rng.pick(WORDS).to_string(),
                "p" => (2 + rng.below(3)).to_string(),
                _ => format!("B{:06}", id * 3 + rng.below(3)),
            };
            params.push(format!("{c}={v}"));
            rows.push((format!("{cluster}-c"), url(scheme, &host, &path, &params)));
        }
    }
    // Trap: a soft 404 — missing pages answer with one "not found" page.
    let missing = format!("s{si}-notfound");
    for k in 0..(o.pages / 20).max(2) {
        let w = WORDS[(k * 7 + si) % WORDS.len()];
        rows.push((
            missing.clone(),
            format!("{scheme}://{host}/{w}/missing-{}", 900 + k * 3),
        ));
    }
    // Trap: a login wall returns one page for many different URLs of one family.
    let wall = format!("s{si}-login");
    for k in 0..(o.pages / 10).max(2) {
        rows.push((
            wall.clone(),
            format!("{scheme}://{host}/member.php?u={}", 50 + k * 13),
        ));
    }
    let mut parameters = vec![format!("{sess}=session")];
    parameters.extend(tracking.iter().map(|t| format!("{}=tracking", name_of(t))));
    let mut traps: Vec<String> = vec![
        if kind == "shop" { "sort" } else { "page" }.into(),
        "login-wall".into(),
        "soft-404".into(),
    ];
    if let Some(c) = collide {
        parameters.push(format!("{c}=content"));
        traps.push(format!("collide:{c}"));
    }
    let truth = SiteTruth {
        host,
        kind: kind.into(),
        mechanisms: mechs.iter().map(|s| s.to_string()).collect(),
        parameters,
        traps,
    };
    (rows, truth)
}

/// One JSON line per URL, `{"url", "cluster", "html"}`: URLs of one cluster get the same page
/// text (their content), URLs of different clusters different text.
pub fn pages_jsonl(out: &SynthOutput) -> String {
    let mut s = String::new();
    for (c, u) in &out.rows {
        let html = page_html(c, None);
        let line = serde_json::json!({ "url": u, "cluster": c, "html": html });
        s.push_str(&line.to_string());
        s.push('\n');
    }
    s
}

/// The page of a cluster (its content: the same text for every URL of the cluster).
fn page_html(cluster: &str, canonical: Option<&str>) -> String {
    let mut rng = Rng(crate::hash::fnv(cluster));
    let title: Vec<&str> = (0..4).map(|_| rng.pick(WORDS)).collect();
    let body: Vec<String> = (0..3)
        .map(|_| {
            let words: Vec<&str> = (0..24).map(|_| WORDS[rng.below(WORDS.len())]).collect();
            format!("<p>{}.</p>", words.join(" "))
        })
        .collect();
    let link = canonical.map_or(String::new(), |c| {
        format!("<link rel=\"canonical\" href=\"{c}\">")
    });
    format!(
        "<html><head><title>{}</title>{link}</head><body><h1>{}</h1>{}<p>ref {cluster}</p></body></html>",
        title.join(" "),
        title.join(" "),
        body.join("")
    )
}

/// The crawl of an output as WARC records (uncompressed; one `Vec` per record, for one gzip
/// member each), the way a crawler meets the sites: in each cluster, the URL with the fewest
/// bytes is the page; about one other URL in four answers `301` to it (`Location` relative
/// when on the same host), the rest serve the same page. Half the sites (by host) declare the
/// page's URL as `rel=canonical` in every copy (as CMSs do); the others declare nothing. No
/// `WARC-Payload-Digest` is written: a reader hashes the payload (equal pages, equal hashes).
pub fn warc_records(out: &SynthOutput) -> Vec<Vec<u8>> {
    let mut by_cluster: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (c, u) in &out.rows {
        let i = *index.entry(c.as_str()).or_insert_with(|| {
            by_cluster.push((c.as_str(), Vec::new()));
            by_cluster.len() - 1
        });
        by_cluster[i].1.push(u.as_str());
    }
    let mut recs = Vec::with_capacity(out.rows.len());
    fn host(u: &str) -> &str {
        crate::tokenize::split_url(u).map_or("", |p| p.host)
    }
    for (c, urls) in by_cluster {
        let page = *urls
            .iter()
            .min_by(|a, b| a.len().cmp(&b.len()).then(a.cmp(b)))
            .expect("a cluster has a URL");
        let declares = crate::hash::fnv(host(page)).is_multiple_of(2);
        let html = page_html(c, declares.then_some(page));
        for &u in &urls {
            let moved = u != page && crate::hash::fnv(u).is_multiple_of(4);
            let http = if moved {
                let loc = match crate::tokenize::split_url(page) {
                    // Relative on the same scheme and host.
                    Some(p) if u.starts_with(&page[..p.scheme.len() + 3 + p.host.len()]) => {
                        &page[p.scheme.len() + 3 + p.host.len()..]
                    }
                    _ => page,
                };
                format!("HTTP/1.1 301 Moved Permanently\r\nLocation: {loc}\r\nContent-Length: 0\r\n\r\n")
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{html}",
                    html.len()
                )
            };
            let mut r = format!(
                "WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: {u}\r\n\
                 WARC-Date: 2026-01-01T00:00:00Z\r\n\
                 WARC-Record-ID: <urn:uuid:{:016x}-{:016x}>\r\n\
                 Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n",
                crate::hash::fnv(c),
                crate::hash::fnv(u),
                http.len()
            )
            .into_bytes();
            r.extend_from_slice(http.as_bytes());
            r.extend_from_slice(b"\r\n\r\n");
            recs.push(r);
        }
    }
    recs
}

/// The `clusters.tsv` text of an output (header `cluster<TAB>url`).
pub fn to_tsv(out: &SynthOutput) -> String {
    let mut s = String::from("cluster\turl\n");
    for (c, u) in &out.rows {
        let _ = writeln!(s, "{c}\t{u}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn host_offset_gives_the_same_sites_on_disjoint_hosts() {
        let all = synth(&SynthOptions {
            sites: 10,
            pages: 20,
            seed: 5,
            host_offset: 0,
        });
        let a = synth(&SynthOptions {
            sites: 5,
            pages: 20,
            seed: 5,
            host_offset: 0,
        });
        let b = synth(&SynthOptions {
            sites: 5,
            pages: 20,
            seed: 5,
            host_offset: 5,
        });
        let mut joined = a.rows.clone();
        joined.extend(b.rows.clone());
        assert_eq!(joined, all.rows, "sites depend on their number only");
        let hosts = |o: &SynthOutput| -> HashSet<String> {
            o.rows
                .iter()
                .map(|(_, u)| crate::site::domain_of_url(u).unwrap())
                .collect()
        };
        assert!(hosts(&a).is_disjoint(&hosts(&b)));
        // Different host sets draw different session names.
        let names = |o: &SynthOutput| -> HashSet<String> {
            o.sites.iter().map(|s| s.parameters[0].clone()).collect()
        };
        let wide = |off| {
            synth(&SynthOptions {
                sites: 40,
                pages: 2,
                seed: 5,
                host_offset: off,
            })
        };
        assert_ne!(names(&wide(0)), names(&wide(40)));
    }

    #[test]
    fn deterministic_and_seed_sensitive() {
        let o = SynthOptions {
            sites: 5,
            pages: 50,
            seed: 1,
            host_offset: 0,
        };
        assert_eq!(synth(&o), synth(&o));
        assert_ne!(synth(&o), synth(&SynthOptions { seed: 2, ..o }));
    }

    #[test]
    fn every_mechanism_and_trap_appears() {
        let out = synth(&SynthOptions {
            sites: 20,
            pages: 40,
            seed: 3,
            host_offset: 0,
        });
        let used: HashSet<&str> = out
            .sites
            .iter()
            .flat_map(|s| s.mechanisms.iter().map(|m| m.as_str()))
            .collect();
        for m in MECHANISMS {
            assert!(used.contains(m), "mechanism {m} never used");
        }
        let urls: Vec<&str> = out.rows.iter().map(|(_, u)| u.as_str()).collect();
        for needle in [
            "utm_",
            "www.",
            "index.html",
            "print=1",
            "mode=",
            "page=2",
            "member.php",
        ] {
            assert!(urls.iter().any(|u| u.contains(needle)), "{needle} missing");
        }
    }

    #[test]
    fn page_content_follows_truth() {
        let out = synth(&SynthOptions {
            sites: 3,
            pages: 30,
            seed: 4,
            host_offset: 0,
        });
        let text = pages_jsonl(&out);
        let mut by_cluster: HashMap<String, String> = HashMap::new();
        let mut bodies: HashMap<String, String> = HashMap::new();
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let (c, html) = (v["cluster"].as_str().unwrap(), v["html"].as_str().unwrap());
            if let Some(prev) = by_cluster.insert(c.to_string(), html.to_string()) {
                assert_eq!(prev, html, "one cluster, one content");
            }
            if let Some(other) = bodies.insert(html.to_string(), c.to_string()) {
                assert_eq!(other, c, "two clusters share a page");
            }
        }
        assert_eq!(text.lines().count(), out.rows.len());
    }

    #[test]
    fn truth_is_consistent() {
        // A URL never belongs to two clusters, and trap URLs are in their own cluster.
        let out = synth(&SynthOptions {
            sites: 10,
            pages: 60,
            seed: 9,
            host_offset: 0,
        });
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (c, u) in &out.rows {
            if let Some(prev) = seen.insert(u, c) {
                assert_eq!(prev, c, "{u} in two clusters");
            }
            if u.contains("page=2") || u.contains("sort=price") {
                assert!(c.ends_with("-t"), "{u} should be a trap cluster");
            }
        }
        // A content parameter named like a session or tracking parameter elsewhere occurs.
        assert!(out
            .sites
            .iter()
            .any(|s| s.traps.iter().any(|t| t.starts_with("collide:"))));
    }
}
