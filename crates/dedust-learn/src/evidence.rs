//! Evidence: what a web-archive index says about two URLs — *same*, *different* or *unknown* —
//! and the length test that judges a rule's *unknown* merges.
//!
//! In: the status-200 captures of a CDX/CDXJ index ([`Capture`]: URL, SURT key, payload digest,
//! record length, mime), in input order, from [`crate::input`]. Out: per URL its [`Facts`]
//! (record length, mime class, and the length limit of its site) in an [`IndexEvidence`],
//! returned by the reader in [`crate::ReadReport::evidence`] beside the clusters and handed to
//! learning in [`crate::LearnConfig::evidence`] (or to [`crate::LabeledUrls::attach_evidence`]);
//! validation ([`crate::validate`]) classifies each merge that joins two clusters and
//! [`judge`]s the unknown ones per rule. Cluster ids stay what they are (`digest:<d>`,
//! `redirect:<url>`): the facts never travel in them.
//!
//! The facts are keyed by the URL as the index spells it; validation, which sees
//! base-normalized URLs, looks them up through [`IndexEvidence::normalized`] (built once per
//! run with the run's [`crate::BaseOptions`]: the reader does not know them). Two index URLs
//! with one base-normalized form take the facts of the one captured first.
//!
//! The model (see also `docs/evidence.md`):
//! * *same*: an equal payload digest (a revisit record carries the digest of the capture it
//!   repeats), a redirect or canonical the site declares: today's clusters;
//! * *different*: another status or mime class (`text/html` against an image), or — for sources
//!   whose digests are reliable (truth files, WARC) — another cluster;
//! * *unknown*: two status-200 captures of one mime class with different digests from an index.
//!   Equal pages rarely share a digest in a real crawl (dates, counters, headers), so a differing
//!   digest proves nothing there.
//!
//! Unknown merges are judged per rule, never per pair: a site's *same-page noise* is a high
//! quantile ([`NOISE_QUANTILE`]) of the relative length difference `|a − b| / max(a, b)` of its
//! same-page pairs (consecutive captures of one digest, or of one URL with another digest), never
//! below [`NOISE_FLOOR`]; its *different-page spread* is a low quantile ([`SPREAD_QUANTILE`]) of
//! the difference between neighbouring index lines with different SURT keys (an index is sorted
//! by key: neighbours are the pages most alike, same template, next id), leaving out neighbours
//! inside one flat template ([`bands`] at [`NOISE_FLOOR`]: a wall served at every member URL is
//! one page, and would drive the spread to zero). The site's limit is
//! `min(noise, spread / SPREAD_MARGIN)`. A rule's unknown merges pass when the median of their
//! differences, each over its site's limit, is at most 1, over at least [`MIN_UNKNOWN`] merges
//! (grouped by host; a host with fewer joins the rest of the rule's hosts); those that fail count
//! as false positives. Record length never makes one pair *same* on its own (only a cohort of
//! many URLs of one template, below). Robots.txt, feeds,
//! revisit records (whose length is that of a header) and captures without a length stay out of
//! the statistics.
//!
//! *Length cohorts* ([`cohorts`]) propose what no digest groups: a URL template of a host whose
//! pages nearly all have one length, within the site's limit (a login wall, an error page, an
//! empty listing), pooled with the host's other templates of that length, at least
//! [`COHORT_MIN_URLS`] URLs. The reader makes each a `length:` cluster; the rules learned from it
//! are many → one templates, judged like any such family (values, share of the host).
//!
//! Invariants: inputs other than an index have no [`IndexEvidence`] (`None`), and validation
//! then counts as before; so does a [`crate::LearnConfig`] without one, whatever the input. The
//! statistics depend only on the captures in input order, not on how the reader cut the input
//! into blocks.
//!
//! # Complexity
//! `O(n)` hashing for `n` captures, plus sorting each site's pair differences and the captures
//! by template (`O(n log n)`);
//! [`IndexEvidence::normalized`] base-normalizes each URL once (`O(u)`); validation adds one
//! facts lookup per merge between two clusters and a sort of each rule's unknown merges.

use foldhash::{HashMap, HashMapExt};

/// Smallest same-page noise: 1 % of a record's length.
pub const NOISE_FLOOR: f64 = 0.01;

/// Quantile of a site's same-page differences taken as its noise.
pub const NOISE_QUANTILE: f64 = 0.9;

/// Quantile of a site's different-page differences taken as its spread.
pub const SPREAD_QUANTILE: f64 = 0.1;

/// The limit lies this many times below the different-page spread.
pub const SPREAD_MARGIN: f64 = 4.0;

/// Fewest different-page pairs a site needs for a spread of its own; a site with fewer takes
/// the spread of the whole input.
pub const MIN_SPREAD_PAIRS: usize = 20;

/// Fewest unknown merges a group needs to pass the length test.
pub const MIN_UNKNOWN: usize = 3;

/// What the index says about one URL: its record length (0: none), mime class ([`mime_class`];
/// 0: no facts) and its site's length limit in millionths (0: the site has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts {
    /// Record length (compressed WARC record, headers included); 0 when not known.
    pub len: u32,
    /// Mime class ([`mime_class`]); 0 when the URL has no facts.
    pub class: u8,
    /// The site's limit on the relative length difference, in millionths; 0: none.
    pub limit: u32,
}

/// The class of a mime type: `h` HTML, `f` feed, `j` script, `c` CSS, `i` image, `o` font, `a`
/// audio or video, `p` PDF, `x` anything else. Two captures of different classes are different
/// content.
///
/// ```
/// use dedust_learn::evidence::mime_class;
/// assert_eq!(mime_class("text/html; charset=UTF-8"), b'h');
/// assert_eq!(mime_class("application/rss+xml"), b'f');
/// ```
pub fn mime_class(mime: &str) -> u8 {
    let m = mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match m.as_str() {
        "text/html" | "application/xhtml+xml" => b'h',
        "application/rss+xml" | "application/atom+xml" | "application/rdf+xml" => b'f',
        "text/css" => b'c',
        "application/pdf" => b'p',
        _ if m.contains("javascript") || m.contains("ecmascript") => b'j',
        _ if m.starts_with("image/") => b'i',
        _ if m.starts_with("font/") || m.contains("font") || m.contains("opentype") => b'o',
        _ if m.starts_with("audio/") || m.starts_with("video/") => b'a',
        _ => b'x',
    }
}

/// Whether a URL is a robots.txt file (its captures form no cluster and no statistic).
pub fn is_robots(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |k| &rest[k..]);
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.eq_ignore_ascii_case("/robots.txt")
}

/// Relative length difference `|a − b| / max(a, b)` (0 for two zeros).
pub fn rel_diff(a: u32, b: u32) -> f64 {
    let m = a.max(b);
    if m == 0 {
        0.0
    } else {
        f64::from(a.abs_diff(b)) / f64::from(m)
    }
}

/// The nearest-rank quantile `q` of sorted values (`None` for none).
fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let k = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[k - 1])
}

/// One status-200 capture of an index, as the statistics need it: hashes of its URL, SURT key,
/// digest, site, host and URL template ([`template_of`]), its record length (0: none) and mime
/// class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Capture {
    pub url: u64,
    pub key: u64,
    pub digest: u64,
    pub site: u64,
    pub host: u64,
    pub template: u64,
    pub len: u32,
    pub class: u8,
}

/// The host and the URL template of `url`, hashed: the host is its authority (lower case, port
/// kept); the template that and its path with every run of digits read as one `0`, and the
/// sorted distinct names of its query parameters. `/member.php?u=12` and `/member.php?u=7`,
/// `/t-12.html` and `/t-7.html` share one; the scheme and the fragment play no part.
///
/// ```
/// use dedust_learn::evidence::template_of;
/// let (host, t) = template_of("https://h.org/member.php?u=12&s=1");
/// assert_eq!((host, t), template_of("http://H.org/member.php?s=9&u=7#top"));
/// assert_ne!(t, template_of("https://h.org/member.php?u=12").1);
/// assert_eq!(host, template_of("https://h.org/other").0);
/// assert_eq!(template_of("http://h.org/t-1.html"), template_of("http://h.org/t-20.html"));
/// assert_ne!(template_of("http://h.org/a"), template_of("http://h.org:8080/a"));
/// ```
pub fn template_of(url: &str) -> (u64, u64) {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.split('#').next().unwrap_or("");
    let (authority, path_query) = rest
        .find(['/', '?'])
        .map_or((rest, ""), |k| rest.split_at(k));
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let mut text = authority.to_ascii_lowercase();
    let host = crate::hash::fnv(&text);
    text.push(' ');
    let mut digits = false;
    for ch in path.chars() {
        let d = ch.is_ascii_digit();
        if !(d && digits) {
            text.push(if d { '0' } else { ch });
        }
        digits = d;
    }
    let mut names: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split('=').next().unwrap_or(""))
        .collect();
    names.sort_unstable();
    names.dedup();
    for n in names {
        text.push(' ');
        text.push_str(n);
    }
    (host, crate::hash::fnv(&text))
}

/// A site's length statistics ([`stats`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteStats {
    /// Same-page pairs seen.
    pub same_pairs: usize,
    /// Their [`NOISE_QUANTILE`] quantile (`None` without pairs).
    pub noise: Option<f64>,
    /// Their median.
    pub same_median: Option<f64>,
    /// Different-page pairs seen.
    pub different_pairs: usize,
    /// Their [`SPREAD_QUANTILE`] quantile (`None` below [`MIN_SPREAD_PAIRS`]).
    pub spread: Option<f64>,
    /// Their median.
    pub different_median: Option<f64>,
    /// The limit: `min(max(noise, NOISE_FLOOR), spread / SPREAD_MARGIN)` (`None` without a
    /// spread, its own or the input's).
    pub limit: Option<f64>,
}

/// Site hash → its statistics, and the pooled statistics of the whole input (site hash 0).
pub(crate) type Stats = HashMap<u64, SiteStats>;

/// The same-page and different-page pairs of captures in input order (see the module docs), per
/// site, and each site's [`SiteStats`]; the input's pooled statistics under site 0.
pub(crate) fn stats(captures: &[Capture]) -> Stats {
    // Neighbours inside one template whose pages all have one length (a login wall served at
    // every member URL) are duplicates with different digests, not different pages: they stay
    // out of the spread, which one such template could otherwise drive to zero.
    let flat: foldhash::HashSet<(u64, u64)> = bands(captures, |_| Some(NOISE_FLOOR))
        .into_iter()
        .flat_map(|b| b.urls.into_iter().map(move |u| (b.template, u)))
        .collect();
    let in_flat = |c: &Capture| flat.contains(&(c.template, c.url));
    let mut same: HashMap<u64, Vec<f64>> = HashMap::new();
    let mut diff: HashMap<u64, Vec<f64>> = HashMap::new();
    // Last length by (site, digest) and (site, URL) with its digest.
    let mut by_digest: HashMap<(u64, u64), u32> = HashMap::new();
    let mut by_url: HashMap<(u64, u64), (u32, u64)> = HashMap::new();
    let mut prev: Option<&Capture> = None;
    for c in captures.iter().filter(|c| c.len > 0 && c.class != b'f') {
        if let Some(&l) = by_digest.get(&(c.site, c.digest)) {
            same.entry(c.site).or_default().push(rel_diff(l, c.len));
        } else if let Some(&(l, d)) = by_url.get(&(c.site, c.url)) {
            if d != c.digest {
                same.entry(c.site).or_default().push(rel_diff(l, c.len));
            }
        }
        by_digest.insert((c.site, c.digest), c.len);
        by_url.insert((c.site, c.url), (c.len, c.digest));
        if let Some(p) = prev.filter(|p| {
            p.site == c.site
                && p.class == c.class
                && p.key != c.key
                && p.digest != c.digest
                && p.url != c.url
                && !(p.template == c.template && in_flat(p) && in_flat(c))
        }) {
            diff.entry(c.site).or_default().push(rel_diff(p.len, c.len));
        }
        prev = Some(c);
    }
    let mut all_same: Vec<f64> = same.values().flatten().copied().collect();
    let mut all_diff: Vec<f64> = diff.values().flatten().copied().collect();
    let pooled = site_stats(&mut all_same, &mut all_diff, None);
    let mut out = Stats::new();
    let sites: std::collections::BTreeSet<u64> = same.keys().chain(diff.keys()).copied().collect();
    for s in sites {
        let mut a = same.remove(&s).unwrap_or_default();
        let mut b = diff.remove(&s).unwrap_or_default();
        out.insert(s, site_stats(&mut a, &mut b, pooled.spread));
    }
    out.insert(0, pooled);
    out
}

/// One site's statistics from its pair differences (sorted here); `fallback`: the spread to
/// use when the site has too few different-page pairs of its own.
fn site_stats(same: &mut [f64], diff: &mut [f64], fallback: Option<f64>) -> SiteStats {
    same.sort_by(f64::total_cmp);
    diff.sort_by(f64::total_cmp);
    let noise = quantile(same, NOISE_QUANTILE);
    let spread = (diff.len() >= MIN_SPREAD_PAIRS)
        .then(|| quantile(diff, SPREAD_QUANTILE))
        .flatten()
        .or(fallback);
    SiteStats {
        same_pairs: same.len(),
        noise,
        same_median: quantile(same, 0.5),
        different_pairs: diff.len(),
        spread,
        different_median: quantile(diff, 0.5),
        limit: spread.map(|s| noise.unwrap_or(0.0).max(NOISE_FLOOR).min(s / SPREAD_MARGIN)),
    }
}

/// Fewest distinct URLs of one template that may form a [`Band`].
pub const BAND_MIN_URLS: usize = 3;

/// Share of a template's distinct URLs that must lie within the tolerance of their median
/// length for the template to form a [`Band`].
pub const BAND_SHARE: f64 = 0.9;

/// Fewest distinct URLs of a length cohort ([`cohorts`]).
pub const COHORT_MIN_URLS: usize = 8;

/// One URL template of a host whose HTML pages all have about one record length: at least
/// [`BAND_SHARE`] of its (at least [`BAND_MIN_URLS`]) distinct URLs lie within the tolerance of
/// their median. `urls`: those that do (URL hashes, in order of first capture).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    pub site: u64,
    pub host: u64,
    pub template: u64,
    pub median: u32,
    pub urls: Vec<u64>,
}

/// The [`Band`]s of the captures' HTML pages with a length (each URL's first capture), the
/// tolerance per site from `tol` (`None`: the site has none and no band).
///
/// # Complexity
/// `O(n log n)` for `n` captures (grouped by sorting).
pub(crate) fn bands(captures: &[Capture], tol: impl Fn(u64) -> Option<f64>) -> Vec<Band> {
    // (site, host, template, URL, rank, length), each URL's first capture kept. The host is
    // part of the key, so two hosts whose templates' hashes collide never share a band.
    let mut rows: Vec<(u64, u64, u64, u64, usize, u32)> = captures
        .iter()
        .enumerate()
        .filter(|(_, c)| c.len > 0 && c.class == b'h')
        .map(|(k, c)| (c.site, c.host, c.template, c.url, k, c.len))
        .collect();
    rows.sort_unstable();
    rows.dedup_by_key(|r| (r.0, r.1, r.2, r.3));
    let mut out = Vec::new();
    for group in rows.chunk_by(|a, b| (a.0, a.1, a.2) == (b.0, b.1, b.2)) {
        if group.len() < BAND_MIN_URLS {
            continue;
        }
        let Some(t) = tol(group[0].0) else { continue };
        let mut lens: Vec<u32> = group.iter().map(|r| r.5).collect();
        lens.sort_unstable();
        let median = lens[(lens.len() - 1) / 2];
        let mut urls: Vec<(usize, u64)> = group
            .iter()
            .filter(|r| rel_diff(r.5, median) <= t)
            .map(|r| (r.4, r.3))
            .collect();
        if (urls.len() as f64) < BAND_SHARE * group.len() as f64 {
            continue;
        }
        urls.sort_unstable();
        out.push(Band {
            site: group[0].0,
            host: group[0].1,
            template: group[0].2,
            median,
            urls: urls.into_iter().map(|(_, u)| u).collect(),
        });
    }
    out
}

/// Length cohorts: the pages of a site that look like one page served under many URLs (a
/// login wall, an error page, an empty listing), found from record lengths alone. The
/// [`Band`]s of each host at its site's limit ([`SiteStats::limit`]; a site without a spread of
/// its own has none, and the tolerance never exceeds [`NOISE_FLOOR`]), pooled when their medians
/// lie within the limit of the first one's (one wall behind several scripts; never across hosts,
/// so one tenant of a shared domain cannot join another's pages); a pool of at least
/// [`COHORT_MIN_URLS`] URLs is a cohort. Each cohort: its URL hashes, in order of first
/// capture. The reader proposes each as a `length:` cluster; what learning makes of it is
/// judged like any family (a many → one template needs `--min-collapse` values and a share of
/// its host).
///
/// # Complexity
/// `O(n log n)` for `n` captures.
pub(crate) fn cohorts(captures: &[Capture], st: &Stats) -> Vec<Vec<u64>> {
    // The site's own limit (not the input's spread, which other sites set), never above the
    // noise floor (a site's noise is its own to inflate; its cohorts' width is not).
    let limit = |site: u64| {
        st.get(&site)
            .filter(|s| s.different_pairs >= MIN_SPREAD_PAIRS)
            .and_then(|s| s.limit)
            .map(|l| l.min(NOISE_FLOOR))
    };
    let mut bands = bands(captures, limit);
    bands.sort_by_key(|b| (b.site, b.host, b.median, b.template));
    let mut out = Vec::new();
    for site in bands.chunk_by(|a, b| (a.site, a.host) == (b.site, b.host)) {
        let Some(l) = limit(site[0].site) else {
            continue;
        };
        let mut k = 0;
        while k < site.len() {
            let anchor = site[k].median;
            let end = k + site[k..]
                .iter()
                .take_while(|b| rel_diff(b.median, anchor) <= l)
                .count();
            let urls: Vec<u64> = site[k..end]
                .iter()
                .flat_map(|b| b.urls.iter().copied())
                .collect();
            if urls.len() >= COHORT_MIN_URLS {
                out.push(urls);
            }
            k = end;
        }
    }
    out
}

/// The limit in millionths ([`Facts::limit`]).
pub(crate) fn limit_ppm(s: Option<&SiteStats>) -> u32 {
    s.and_then(|s| s.limit)
        .map_or(0, |l| (l * 1e6).round().clamp(1.0, u32::MAX as f64) as u32)
}

/// What a web-archive index says about its URLs: each status-200 URL's [`Facts`], keyed by the
/// URL as the index spells it. Returned by the reader ([`crate::ReadReport::evidence`]; `None`
/// for every other input, and for an index that gives no record lengths) and handed to
/// validation through [`crate::LearnConfig::evidence`].
///
/// ```
/// use dedust_learn::evidence::{Facts, IndexEvidence};
/// use dedust_learn::BaseOptions;
/// let f = Facts { len: 9754, class: b'h', limit: 4500 };
/// let mut ev = IndexEvidence::default();
/// ev.insert("http://h.org/a#top", f);
/// // The first facts of a URL stay.
/// ev.insert("http://h.org/a#top", Facts { len: 1, ..f });
/// assert_eq!(ev.get("http://h.org/a#top"), Some(f));
/// assert_eq!(ev.len(), 1);
/// // Validation looks URLs up in their base-normalized form.
/// let by_norm = ev.normalized(&BaseOptions::default());
/// assert_eq!(by_norm.get("http://h.org/a"), Some(&f));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexEvidence {
    /// URL as read → (rank of insertion, its facts, where its record lies).
    by_url: HashMap<String, (u32, Facts, Option<Place>)>,
    /// The WARC files the index names ([`Place::file`]), as it spells them.
    files: Vec<String>,
}

/// Where a capture's WARC record lies, as its index line says (CDXJ `filename`, `offset`,
/// `length`; CDX `g`, `V`, `S`; the columnar index's `warc_filename`, `warc_record_offset`,
/// `warc_record_length`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The file, an index into [`IndexEvidence::files`].
    pub file: u32,
    /// The byte where the record (a gzip member, in a `.warc.gz`) starts.
    pub offset: u64,
    /// The record's length in the file.
    pub len: u32,
}

impl IndexEvidence {
    /// Record the facts of `url`, unless it has some already (the first capture's stay).
    pub fn insert(&mut self, url: &str, facts: Facts) {
        self.insert_at(url, facts, None);
    }

    /// Record the facts of `url` and where its record lies, unless it has facts already.
    pub fn insert_at(&mut self, url: &str, facts: Facts, place: Option<Place>) {
        let rank = u32::try_from(self.by_url.len()).unwrap_or(u32::MAX);
        if !self.by_url.contains_key(url) {
            self.by_url.insert(url.to_string(), (rank, facts, place));
        }
    }

    /// Name the WARC files that [`Place::file`] indexes.
    pub fn set_files(&mut self, files: Vec<String>) {
        self.files = files;
    }

    /// The WARC files the index names, as it spells them.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Where the record of `url` (spelled as the index spells it) lies, if the index says.
    pub fn place(&self, url: &str) -> Option<Place> {
        self.by_url.get(url).and_then(|e| e.2)
    }

    /// The facts of `url`, spelled as the index spells it.
    pub fn get(&self, url: &str) -> Option<Facts> {
        self.by_url.get(url).map(|&(_, f, _)| f)
    }

    /// How many URLs have facts.
    pub fn len(&self) -> usize {
        self.by_url.len()
    }

    /// Whether no URL has facts.
    pub fn is_empty(&self) -> bool {
        self.by_url.is_empty()
    }

    /// Each URL (as read) with its facts, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Facts)> {
        self.by_url.iter().map(|(u, &(_, f, _))| (u.as_str(), f))
    }

    /// The facts by base-normalized URL, as validation looks them up: of several URLs with one
    /// normalized form, the first inserted (the first captured) gives its facts; a URL the base
    /// layer rejects has none.
    ///
    /// # Complexity
    /// `O(u)` base normalizations for `u` URLs.
    pub fn normalized(&self, base: &crate::BaseOptions) -> HashMap<String, Facts> {
        let mut best: HashMap<String, (u32, Facts)> = HashMap::with_capacity(self.by_url.len());
        for (u, &(rank, f, _)) in &self.by_url {
            let Ok(n) = crate::base_normalize(u, base) else {
                continue;
            };
            let e = best.entry(n).or_insert((rank, f));
            if rank < e.0 {
                *e = (rank, f);
            }
        }
        best.into_iter().map(|(n, (_, f))| (n, f)).collect()
    }

    /// Where each record lies, by base-normalized URL, with the URL as the index spells it
    /// (as [`IndexEvidence::normalized`]: the first captured of several URLs with one
    /// normalized form; URLs without a place left out).
    pub fn places_normalized(&self, base: &crate::BaseOptions) -> HashMap<String, (String, Place)> {
        let mut best: HashMap<String, (u32, &str, Place)> =
            HashMap::with_capacity(self.by_url.len());
        for (u, &(rank, _, p)) in &self.by_url {
            let Some(p) = p else { continue };
            let Ok(n) = crate::base_normalize(u, base) else {
                continue;
            };
            let e = best.entry(n).or_insert((rank, u.as_str(), p));
            if rank < e.0 {
                *e = (rank, u.as_str(), p);
            }
        }
        best.into_iter()
            .map(|(n, (_, u, p))| (n, (u.to_string(), p)))
            .collect()
    }
}

/// What validation makes of a merge of URL `a` into a bucket led by another cluster, whose URL
/// is `b`: `None` when it is *different* (or nothing says otherwise: the merge stays a false
/// positive), or the *unknown* merge's length difference over `a`'s site limit.
pub(crate) fn unknown_ratio(a: Facts, b: Facts) -> Option<f32> {
    let known = a.class != 0 && b.class != 0;
    if !known || a.class != b.class || a.len == 0 || b.len == 0 || a.limit == 0 {
        return None;
    }
    Some((rel_diff(a.len, b.len) / (f64::from(a.limit) / 1e6)) as f32)
}

/// Whether a merge between two captures is *unknown* whatever their lengths say: both have
/// facts and one mime class.
pub(crate) fn unknown(a: Facts, b: Facts) -> bool {
    a.class != 0 && a.class == b.class
}

/// Most unknown merges of one rule whose pages are compared ([`by_content`]).
pub const CHECK_SAMPLE: usize = 16;

/// A sample with more than this share of different pages (of at least [`MIN_VERDICTS`]
/// verdicts) vetoes the rule's other unknown merges, whatever their lengths say.
pub const MAX_DIFFERENT_SHARE: f64 = 0.25;

/// Fewest verdicts a sample needs to veto.
pub const MIN_VERDICTS: usize = 2;

/// Compares the pages of two URLs (base-normalized, as validation sees them): `Some(true)`
/// same page, `Some(false)` different pages, `None` when it cannot tell (a page not at hand,
/// unreadable, too short to judge). Given to [`crate::LearnConfig::check`] when an index's
/// WARC files are at hand (`dedust learn INDEX --warcs DIR`); validation asks it about a
/// sample of each rule's unknown merges ([`by_content`]). It must answer the same for the
/// same pair every time (it is asked from several threads, in no set order).
///
/// ```
/// use dedust_learn::evidence::PairCheck;
/// let check = PairCheck::new(|a, b| Some(a.trim_end_matches('/') == b.trim_end_matches('/')));
/// assert_eq!(check.same("http://h/a/", "http://h/a"), Some(true));
/// ```
#[derive(Clone)]
pub struct PairCheck(std::sync::Arc<SamePages>);

/// The comparison a [`PairCheck`] holds.
type SamePages = dyn Fn(&str, &str) -> Option<bool> + Send + Sync;

impl PairCheck {
    /// Wrap a comparison.
    pub fn new(f: impl Fn(&str, &str) -> Option<bool> + Send + Sync + 'static) -> PairCheck {
        PairCheck(std::sync::Arc::new(f))
    }

    /// Whether the pages of `a` and `b` are one (`None`: cannot tell).
    pub fn same(&self, a: &str, b: &str) -> Option<bool> {
        (self.0)(a, b)
    }
}

impl std::fmt::Debug for PairCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PairCheck")
    }
}

impl PartialEq for PairCheck {
    fn eq(&self, other: &PairCheck) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for PairCheck {}

/// Judge a rule's `n` unknown merges by their pages, where the length test (`by_length`, by
/// merge) judged them all: `ask(k)` compares merge `k`'s two pages for at most
/// [`CHECK_SAMPLE`] merges spread evenly over the `n` (a deterministic sample). A compared
/// merge passes when its pages are one and fails when they are not, whatever its length; the
/// others keep the length test's verdict, unless the sample found more than
/// [`MAX_DIFFERENT_SHARE`] of its pages different (of at least [`MIN_VERDICTS`] verdicts):
/// then they fail. Pages never pass a merge they were not compared for.
///
/// # Complexity
/// `O(n)` plus at most [`CHECK_SAMPLE`] comparisons.
pub(crate) fn by_content(
    by_length: &[bool],
    mut ask: impl FnMut(usize) -> Option<bool>,
) -> Vec<bool> {
    let n = by_length.len();
    let picks = n.min(CHECK_SAMPLE);
    let mut verdict: Vec<Option<bool>> = vec![None; n];
    for s in 0..picks {
        let k = s * n / picks;
        verdict[k] = ask(k);
    }
    let judged = verdict.iter().filter(|v| v.is_some()).count();
    let different = verdict.iter().filter(|v| **v == Some(false)).count();
    let veto = judged >= MIN_VERDICTS && different as f64 > MAX_DIFFERENT_SHARE * judged as f64;
    verdict
        .into_iter()
        .zip(by_length)
        .map(|(v, &len)| v.unwrap_or(len && !veto))
        .collect()
}

/// The length test of one rule's unknown merges, `(group, ratio)` each ([`unknown_ratio`]; the
/// group is the merged URL's host): a group of at least [`MIN_UNKNOWN`] merges is judged alone,
/// the others together; a group passes when the median of its ratios (the upper one) is at
/// most 1. Returns, by merge, whether it passes.
///
/// # Complexity
/// `O(k log k)` for `k` unknown merges.
pub(crate) fn judge(unknown: &[(u32, f32)]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..unknown.len()).collect();
    order.sort_by_key(|&k| unknown[k].0);
    let mut group_of = vec![0usize; unknown.len()];
    // Group 0: the hosts with too few merges of their own; then one group per large host.
    let mut groups: Vec<Vec<f32>> = vec![Vec::new()];
    for run in order.chunk_by(|&a, &b| unknown[a].0 == unknown[b].0) {
        let g = if run.len() >= MIN_UNKNOWN {
            groups.push(Vec::new());
            groups.len() - 1
        } else {
            0
        };
        for &k in run {
            group_of[k] = g;
            groups[g].push(unknown[k].1);
        }
    }
    let pass: Vec<bool> = groups
        .iter_mut()
        .map(|r| {
            r.sort_by(f32::total_cmp);
            r.len() >= MIN_UNKNOWN && r[r.len() / 2] <= 1.0
        })
        .collect();
    group_of.iter().map(|&g| pass[g]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_test_table() {
        // (unknown merges as (host, ratio), passes by merge)
        type Case<'a> = (&'a [(u32, f32)], &'a [bool]);
        let cases: &[Case<'_>] = &[
            // Nothing to judge.
            (&[], &[]),
            // One pair, however close, is never same on its own; nor two.
            (&[(1, 0.0)], &[false]),
            (&[(1, 0.1), (1, 0.2)], &[false, false]),
            // Three close pairs pass; one far pair among them goes with the others.
            (&[(1, 0.1), (1, 0.2), (1, 5.0)], &[true, true, true]),
            // The median decides: two of three far fail all three.
            (&[(1, 0.1), (1, 3.0), (1, 5.0)], &[false, false, false]),
            // At the limit passes; the upper median of four.
            (&[(1, 1.0), (1, 1.0), (1, 1.0)], &[true, true, true]),
            (&[(1, 0.1), (1, 0.2), (1, 2.0), (1, 3.0)], &[false; 4]),
            // A host with enough merges is judged alone; small hosts together.
            (
                &[(1, 0.1), (1, 0.1), (1, 0.1), (2, 9.0), (3, 0.5), (4, 0.5)],
                &[true, true, true, true, true, true],
            ),
            (
                &[(1, 9.0), (1, 9.0), (1, 9.0), (2, 0.1), (3, 0.1), (4, 0.1)],
                &[false, false, false, true, true, true],
            ),
            (&[(2, 0.1), (3, 0.1)], &[false, false]),
        ];
        for (unknown, want) in cases {
            assert_eq!(judge(unknown), *want, "{unknown:?}");
        }
    }

    #[test]
    fn by_content_table() {
        // (length test by merge, pages' verdict by merge when asked, passes)
        type Case<'a> = (&'a [bool], &'a [Option<bool>], &'a [bool]);
        let (t, f) = (Some(true), Some(false));
        let cases: &[Case<'_>] = &[
            (&[], &[], &[]),
            // Every merge compared: each by its own pages, whatever its length.
            (&[false, true, false], &[t, f, t], &[true, false, true]),
            // No verdict: the lengths judge.
            (&[true, false], &[None, None], &[true, false]),
            // Twenty merges, sixteen compared (all but 4, 9, 14, 19), all the same page: the
            // four others keep their lengths' verdicts.
            (
                &[
                    false, true, true, true, false, true, true, true, true, true, true, true, true,
                    true, true, true, true, true, true, true,
                ],
                &[t; 20],
                &[
                    true, true, true, true, false, true, true, true, true, true, true, true, true,
                    true, true, true, true, true, true, true,
                ],
            ),
            // One of three compared pages different (over a quarter): the unjudged one fails.
            (
                &[true, true, true, true],
                &[t, f, t, None],
                &[true, false, true, false],
            ),
            // One of four: it alone fails.
            (
                &[true; 5],
                &[t, f, t, t, None],
                &[true, false, true, true, true],
            ),
        ];
        for &(len, verdicts, want) in cases {
            let mut asked = Vec::new();
            let got = by_content(len, |k| {
                asked.push(k);
                verdicts[k]
            });
            assert!(asked.len() <= CHECK_SAMPLE, "{asked:?}");
            assert_eq!(got, want, "{len:?} {verdicts:?}");
        }
    }

    #[test]
    fn unknown_ratio_table() {
        let f = |len, class, limit| Facts { len, class, limit };
        for (a, b, want) in [
            // 1 % apart, limit 1 %: ratio 1.
            (f(1000, b'h', 10_000), f(990, b'h', 10_000), Some(1.0)),
            (f(1000, b'h', 5_000), f(1000, b'h', 5_000), Some(0.0)),
            // Another mime class: different.
            (f(1000, b'h', 10_000), f(1000, b'i', 10_000), None),
            // No length, no limit, no facts: nothing says unknown.
            (f(0, b'h', 10_000), f(1000, b'h', 10_000), None),
            (f(1000, b'h', 0), f(1000, b'h', 10_000), None),
            (f(1000, b'h', 10_000), Facts::default(), None),
        ] {
            let got = unknown_ratio(a, b);
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-4, "{a:?} {b:?}: {g}"),
                _ => assert_eq!(got, want, "{a:?} {b:?}"),
            }
        }
    }

    #[test]
    fn statistics_table() {
        let c = |url: u64, key: u64, digest: u64, len: u32| Capture {
            url,
            key,
            digest,
            site: 7,
            host: 7,
            template: url,
            len,
            class: b'h',
        };
        // Same-page: one digest twice (1000, 1010), one URL twice with another digest
        // (2000, 2040). Different: neighbours with another key.
        let mut caps = vec![
            c(1, 1, 1, 1000),
            c(2, 1, 1, 1010),
            c(3, 2, 2, 2000),
            c(3, 2, 3, 2040),
        ];
        for k in 0..40u32 {
            let n = 100 + u64::from(k);
            caps.push(c(n, n, n, 3000 + 300 * (k % 2)));
        }
        let s = stats(&caps);
        let site = &s[&7];
        assert_eq!((site.same_pairs, site.different_pairs), (2, 41));
        assert!((site.noise.unwrap() - 0.0196).abs() < 1e-3, "{site:?}");
        // Neighbours differ by 300 / 3300 (and 1000 between the first groups).
        assert!(
            (site.spread.unwrap() - 300.0 / 3300.0).abs() < 1e-9,
            "{site:?}"
        );
        // The limit: the noise, under a quarter of the spread.
        assert!(
            (site.limit.unwrap() - 40.0 / 2040.0).abs() < 1e-9,
            "{site:?}"
        );
        // Feeds, and captures without a length, stay out.
        let mut feed = c(9, 9, 9, 500);
        feed.class = b'f';
        let s = stats(&[feed, c(10, 10, 10, 0)]);
        assert_eq!(s[&0].same_pairs + s[&0].different_pairs, 0);
        assert_eq!(s[&0].limit, None);
        // Too few different pairs: the input's spread (none here).
        let s = stats(&caps[..4]);
        assert_eq!(s[&7].spread, None);
    }

    /// One site: a listing of 150 pages whose lengths grow by 2 % (neighbours 2 % apart), a wall
    /// served under two scripts (30 and 10 URLs within 0.1 % of 7,000 bytes), a third script
    /// with 3 wall pages, a template with 10 of its 14 pages at the wall's length (not flat
    /// enough) and a small template of 5 equal pages at another length (too few alone).
    fn walled_site() -> Vec<Capture> {
        let mut caps = Vec::new();
        let mut add = |template: u64, len: u32| {
            let n = caps.len() as u64 + 1;
            caps.push(Capture {
                url: n,
                key: n,
                digest: n,
                site: 7,
                host: 7,
                template,
                len,
                class: b'h',
            });
        };
        for k in 0..150i32 {
            add(1, (10_000.0 * 1.02f64.powi(k)) as u32);
        }
        for k in 0..30u32 {
            add(2, 7_000 + k % 5);
        }
        for k in 0..10u32 {
            add(3, 7_003 - k % 3);
        }
        for k in 0..3u32 {
            add(4, 7_001 + k);
        }
        for k in 0..14u32 {
            add(5, if k < 10 { 7_000 } else { 9_000 + 500 * k });
        }
        for _ in 0..5 {
            add(6, 3_000);
        }
        caps
    }

    #[test]
    fn a_flat_template_leaves_the_spread_alone_and_forms_a_cohort() {
        let caps = walled_site();
        let st = stats(&caps);
        let site = &st[&7];
        // The wall's neighbours (0.1 % apart) are not the site's different pages: the spread
        // is the listing's and the other templates', not the wall's.
        assert!(site.spread.unwrap() > 0.015, "{site:?}");
        let limit = site.limit.unwrap();
        assert!(limit > 0.002 && limit <= NOISE_FLOOR, "{site:?}");
        let got = cohorts(&caps, &st);
        // One cohort: the three wall scripts pooled (30 + 10 + 3), not the half-wall template,
        // not the five equal pages (too few), not the listing.
        assert_eq!(got.len(), 1, "{got:?}");
        let want: Vec<u64> = (151..=193).collect();
        assert_eq!(got[0], want);
        // Blind to templates, the wall's neighbours would drive the spread to zero, and with it
        // the limit every unknown merge of the site is judged by.
        let blind: Vec<Capture> = caps
            .iter()
            .map(|c| Capture {
                template: c.url,
                ..*c
            })
            .collect();
        let st = stats(&blind);
        assert!(st[&7].spread.unwrap() < 0.001, "{:?}", st[&7]);
        assert!(cohorts(&blind, &st).is_empty());
        // A site without a limit has no cohort.
        assert!(cohorts(&caps, &Stats::new()).is_empty());
        // Two hosts of one site, 5 equal pages each: pooled only within a host, so no cohort;
        // the same 10 pages on one host are one.
        let mut two = caps.clone();
        for (k, host) in [(0u64, 70u64), (1, 71)] {
            for j in 0..5u64 {
                let n = 1_000 + 10 * k + j;
                two.push(Capture {
                    url: n,
                    key: n,
                    digest: n,
                    site: 7,
                    host,
                    template: 80 + k,
                    len: 4_000,
                    class: b'h',
                });
            }
        }
        let st = stats(&two);
        assert_eq!(cohorts(&two, &st).len(), 1);
        for c in &mut two[caps.len()..] {
            c.host = 70;
        }
        let st = stats(&two);
        assert_eq!(cohorts(&two, &st).len(), 2);
    }

    #[test]
    fn bands_table() {
        // (lengths of one template's URLs, tolerance, a band?)
        let cases: &[(&[u32], f64, bool)] = &[
            (&[1000, 1000, 1000], 0.01, true),
            // Two URLs are never a band.
            (&[1000, 1000], 0.01, false),
            // Nine of ten within 1 % of the median: a band; eight of ten: none.
            (
                &[1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 2000],
                0.01,
                true,
            ),
            (
                &[1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 3000, 2000],
                0.01,
                false,
            ),
            // At the tolerance passes; just over it does not.
            (&[1000, 1010, 990], 0.01, true),
            (&[1000, 1020, 980], 0.01, false),
        ];
        for &(lens, tol, want) in cases {
            let caps: Vec<Capture> = lens
                .iter()
                .enumerate()
                .map(|(k, &len)| Capture {
                    url: k as u64,
                    key: k as u64,
                    digest: k as u64,
                    site: 1,
                    host: 1,
                    template: 9,
                    len,
                    class: b'h',
                })
                .collect();
            assert_eq!(!bands(&caps, |_| Some(tol)).is_empty(), want, "{lens:?}");
            // A feed or a capture without a length is no page of a band.
            let feeds: Vec<Capture> = caps.iter().map(|c| Capture { class: b'f', ..*c }).collect();
            assert!(bands(&feeds, |_| Some(tol)).is_empty());
        }
        // Repeated captures of one URL count once (its first length).
        let c = |url: u64, len: u32| Capture {
            url,
            key: url,
            digest: url,
            site: 1,
            host: 1,
            template: 9,
            len,
            class: b'h',
        };
        assert!(bands(&[c(1, 1000), c(1, 1000), c(1, 1000)], |_| Some(0.01)).is_empty());
    }

    /// An index of one site whose pages were captured over http and https, two with one digest,
    /// 38 with different digests: `learn` keeps the https alias when the two captures' lengths agree within the
    /// site's limit, and counts its merges as false positives when they do not (or when the
    /// index gives no lengths: as before).
    #[test]
    fn unknown_merges_judged_by_length_in_learn() {
        let index = |https_len: &dyn Fn(u32) -> Option<u32>| {
            let mut s = String::new();
            for k in 0..40u32 {
                let len = 5000 + 137 * (k % 5) + 61 * k;
                for (scheme, l) in [("http", Some(len)), ("https", https_len(len))] {
                    let length = l.map_or(String::new(), |l| format!(r#", "length": "{l}""#));
                    // Two pages share a digest over both schemes: the pairs learning starts from.
                    let digest = if k < 2 { "http" } else { scheme };
                    s += &format!(
                        "org,h)/p{k} 2024 {{\"url\": \"{scheme}://h.org/p{k}\", \"status\": \"200\", \
                         \"mime\": \"text/html\", \"digest\": \"{digest}{k}\"{length}}}\n"
                    );
                }
            }
            s
        };
        let learn = |data: String| {
            let (clusters, rep) = crate::input::read_clusters_from(
                std::io::Cursor::new(data.into_bytes()),
                "i.cdxj",
                crate::InputFormat::Auto,
            )
            .unwrap();
            let cfg = crate::LearnConfig {
                validate: Some(Default::default()),
                evidence: rep.evidence.map(std::sync::Arc::new),
                ..Default::default()
            };
            let alias = |out: crate::LearnOutput| {
                out.all_candidates
                    .into_iter()
                    .find(|r| r.pattern.starts_with("http://h.org"))
                    .map(|r| (r.support, r.fp, out.file.rules.iter().any(|k| k.id == r.id)))
            };
            let got = alias(crate::learn(&clusters, &cfg, &|_, _, _| {}));
            // `learn_owned` reads the same facts from the config.
            let owned = alias(crate::learn_owned(clusters.clone(), &cfg, &|_, _, _| {}));
            assert_eq!(got, owned);
            // Without the evidence in the config, a differing digest is a false positive.
            let plain = crate::LearnConfig {
                evidence: None,
                ..cfg
            };
            let without = alias(crate::learn(&clusters, &plain, &|_, _, _| {}));
            assert_eq!(without, Some((Some(40), Some(38), false)));
            got
        };
        // Close: a few bytes of headers apart.
        let close = learn(index(&|l| Some(l + 3 + l % 7)));
        assert_eq!(close, Some((Some(40), Some(0), true)));
        // Far: a tenth apart, as different pages are.
        let far = learn(index(&|l| Some(l + l / 10)));
        assert_eq!(far, Some((Some(40), Some(38), false)));
        // No lengths: nothing to judge, a differing digest is a false positive as before.
        let none = learn(index(&|_| None).replace("length", "x"));
        assert_eq!(none, Some((Some(40), Some(38), false)));
    }

    /// The limits `docs/evidence.md` reports, on the real Common Crawl shard (skipped with a
    /// notice when the shared datasets are absent, failing when `CI=true`).
    #[test]
    fn common_crawl_limits() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/datasets/webarchive/cc-main-2024-30-cdx-00187.cdxj");
        if !p.exists() {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "{}",
                p.display()
            );
            eprintln!("SKIP: shared dataset {} not found", p.display());
            return;
        }
        let (clusters, rep) =
            crate::read_clusters(p.to_str().unwrap(), crate::InputFormat::Auto).unwrap();
        let ev = rep.evidence.expect("an index with lengths has evidence");
        let mut limits = std::collections::BTreeMap::new();
        for u in clusters.iter().flat_map(|c| &c.urls) {
            let site = dedust_core::trusted_host(u).unwrap().site().to_string();
            limits.insert(site, ev.get(u).map(|f| f.limit));
        }
        // The ids are the digests, as for every input.
        assert!(clusters
            .iter()
            .all(|c| c.id.starts_with("digest:") && !c.id.contains('\u{1f}')));
        // missiondefrance.fr: min(max(0.0033, 0.01), 0.0213 / 4); mnhn.fr: 0.00045 / 4.
        assert_eq!(limits["missiondefrance.fr"], Some(5328));
        assert_eq!(limits["mnhn.fr"], Some(114));
    }

    #[test]
    fn robots_and_classes() {
        for (u, want) in [
            ("http://h.org/robots.txt", true),
            ("https://h.org/ROBOTS.TXT?x=1", true),
            ("https://h.org/a/robots.txt", false),
            ("https://h.org/", false),
        ] {
            assert_eq!(is_robots(u), want, "{u}");
        }
        for (m, want) in [
            ("text/html", b'h'),
            ("application/xhtml+xml", b'h'),
            ("application/x-javascript", b'j'),
            ("image/svg+xml", b'i'),
            ("application/octet-stream", b'x'),
            ("text/css", b'c'),
        ] {
            assert_eq!(mime_class(m), want, "{m}");
        }
    }
}
