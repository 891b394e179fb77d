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
];

const WORDS: &[&str] = &[
    "install", "ubuntu", "kernel", "driver", "network", "guide", "review", "budget", "garden",
    "recipe", "travel", "camera", "update", "release", "python", "server", "market", "energy",
    "school", "health",
];

/// Generate a synthetic DUST web.
///
/// ```
/// let o = dedust::synth::SynthOptions { sites: 2, pages: 20, seed: 7 };
/// let a = dedust::synth::synth(&o);
/// assert_eq!(a, dedust::synth::synth(&o));
/// assert!(a.rows.len() > 40);
/// ```
pub fn synth(o: &SynthOptions) -> SynthOutput {
    let mut rng = Rng(o.seed ^ 0x5EED_D057);
    let kinds = ["forum", "shop", "news", "cms", "docs"];
    let mut rows = Vec::new();
    let mut sites = Vec::new();
    for si in 0..o.sites {
        let kind = kinds[si % kinds.len()];
        let host = format!("{}{}.example.{}", kind, si, ["com", "org", "net"][si % 3]);
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
        let sess = ["sid", "PHPSESSID", "s"][rng.below(3)];
        let default_doc = ["index.html", "index.php", "default.aspx"][rng.below(3)];
        let mirror = format!("{kind}{si}-mirror.example.net");
        for p in 0..o.pages {
            let id = 1000 + p * 7 + rng.below(5);
            let slug = format!(
                "{}-{}",
                WORDS[rng.below(WORDS.len())],
                WORDS[rng.below(WORDS.len())]
            );
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
                    "session" => pr.push(format!("{sess}={}", rng.hex(32))),
                    "tracking" => {
                        let t = [
                            "utm_source=newsletter",
                            "utm_medium=social",
                            "gclid=",
                            "fbclid=",
                            "ref=home",
                        ][rng.below(5)];
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
                    "redundant" => {
                        pr.push(["mode=hybrid", "mode=threaded", "highlight="][rng.below(3)].into())
                    }
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
                params.push(trap.into());
                rows.push((format!("{cluster}-t"), url(scheme, &host, &path, &params)));
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
        sites.push(SiteTruth {
            host,
            kind: kind.into(),
            mechanisms: mechs.iter().map(|s| s.to_string()).collect(),
            traps: vec![
                if kind == "shop" { "sort" } else { "page" }.into(),
                "login-wall".into(),
                "soft-404".into(),
            ],
        });
    }
    // Rows of one cluster are adjacent already; keep generation order (deterministic).
    rows.dedup();
    SynthOutput { rows, sites }
}

/// One JSON line per URL, `{"url", "cluster", "html"}`: URLs of one cluster get the same page
/// text (their content), URLs of different clusters different text.
pub fn pages_jsonl(out: &SynthOutput) -> String {
    let mut s = String::new();
    for (c, u) in &out.rows {
        let mut rng = Rng(crate::render::fnv(c));
        let title: Vec<&str> = (0..4).map(|_| WORDS[rng.below(WORDS.len())]).collect();
        let body: Vec<String> = (0..3)
            .map(|_| {
                let words: Vec<&str> = (0..24).map(|_| WORDS[rng.below(WORDS.len())]).collect();
                format!("<p>{}.</p>", words.join(" "))
            })
            .collect();
        let html = format!(
            "<html><head><title>{}</title></head><body><h1>{}</h1>{}<p>ref {c}</p></body></html>",
            title.join(" "),
            title.join(" "),
            body.join("")
        );
        let line = serde_json::json!({ "url": u, "cluster": c, "html": html });
        s.push_str(&line.to_string());
        s.push('\n');
    }
    s
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
    fn deterministic_and_seed_sensitive() {
        let o = SynthOptions {
            sites: 5,
            pages: 50,
            seed: 1,
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
    }
}
