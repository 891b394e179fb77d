//! Input: duplicate clusters read from TSV, CSV, JSONL, ACHE/DUSTER lines or Common Crawl CDXJ.
//!
//! In: a file path (`-` for stdin; `.gz` is decompressed transparently) and an [`InputFormat`].
//! Out: the clusters in first-seen order and a [`ReadReport`] that counts every skipped line and
//! names the first few by line number. Formats:
//!
//! * `tsv` / `csv`: a header naming a `cluster` and a `url` column (other columns ignored);
//! * `jsonl`: `{"cluster": …, "url": …}` or `{"cluster"|"digest": …, "urls": [ … ]}`;
//! * `ache`: `content_hash url1 url2 …`, whitespace separated (ACHE / DUSTER);
//! * `cdxj`: web-archive indexes, one capture a line — CDXJ (`SURT TIMESTAMP {json}`, Common
//!   Crawl and pywb) or legacy CDX (space-separated fields named by a ` CDX N b a m s k r M S V g`
//!   header; 11 or 9 fields without one). Captures with status 200 are clustered by payload
//!   digest (cluster id `digest:<digest>`); a 3xx capture with a `Location` (CDXJ `redirect`,
//!   CDX `r`) becomes a two-URL cluster `redirect:<url>` of the URL and the absolute
//!   `Location`. A revisit record (mime `warc/revisit`, CDX `m`) with a digest and no status
//!   (or `-`, or 200) joins the group of its digest when the input holds a status-200 capture
//!   with that digest (a revisit of a 404's payload makes no cluster). Other captures (404,
//!   5xx, a 3xx without `Location`, other revisits, any robots.txt) never join a cluster and are
//!   counted as filtered. Repeated captures of one URL collapse into one. What the index says
//!   about its URLs — record length, mime class, the site's length limit — comes back beside
//!   the clusters in [`ReadReport::evidence`] ([`crate::evidence::IndexEvidence`], keyed by the
//!   URL as read), for validation to judge merges between clusters (pass it in
//!   [`crate::LearnConfig::evidence`]): equal pages rarely share a digest in a real crawl.
//!   Cluster ids carry nothing but the id, for every format.
//!
//! The format is found from the content (the first line), never from the file name: a Common
//! Crawl shard named `cdx-00187.gz` is read as CDXJ, and `cat *.cdxj | dedust learn -` works.
//! The cluster id's prefix (`digest:`, `redirect:`) is the signal the pair came from
//! ([`crate::rules::signals_of`]); `learn` records it on each rule. Clusters read from an index
//! or a WARC that share a URL are united (a page, its redirects, its canonical declarations and
//! its other captures are one page).
//!
//! Invariants: malformed lines (bad JSON, no URL, non-UTF-8 bytes, missing fields, a `Location`
//! that is no URL) are skipped and counted with their line number, never fatal; an input without
//! a single usable record is [`Error::EmptyInput`]. Once the format is known (a TSV file's
//! header, the first line of JSONL, ACHE and CDX/CDXJ), the lines are parsed in parallel blocks
//! (8 MiB) and added in order: the same clusters, counts and line numbers as reading them line
//! by line (a legacy CDX header applies to the lines after it, wherever the blocks are cut;
//! revisits wait under an id prefix of their own and join their digest's group at the end; the
//! captures the length statistics read are kept in input order). CSV is read line by line: a
//! quoted field may span lines.

use crate::error::{Error, Result};
use crate::rules::Cluster;
use dedust_io::skip_line;
pub use dedust_io::{open, read_line_capped, Line};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::io::BufRead;

/// Input format of `learn` and `evaluate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Found from the first line (the content, never the file name).
    Auto,
    /// Tab-separated with header.
    Tsv,
    /// Comma-separated with header.
    Csv,
    /// JSON lines.
    Jsonl,
    /// `hash url url …` lines.
    Ache,
    /// Web-archive indexes: CDXJ (Common Crawl, pywb) or legacy CDX lines.
    Cdxj,
    /// WARC records ([`crate::warc`]): digest groups, redirects, declared canonicals.
    Warc,
}

impl std::str::FromStr for InputFormat {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Ok(match s {
            "auto" => InputFormat::Auto,
            "tsv" => InputFormat::Tsv,
            "csv" => InputFormat::Csv,
            "jsonl" | "json" => InputFormat::Jsonl,
            "ache" | "duster" => InputFormat::Ache,
            "cdxj" | "cdx" => InputFormat::Cdxj,
            "warc" => InputFormat::Warc,
            _ => {
                return Err(format!(
                    "unknown format {s:?} (auto, tsv, csv, jsonl, ache, cdxj, warc)"
                ))
            }
        })
    }
}

/// What reading saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadReport {
    /// The format used (after detection).
    pub format: Option<InputFormat>,
    /// Lines read (including the header).
    pub lines: usize,
    /// Records (cluster, URL) accepted.
    pub records: usize,
    /// Malformed lines skipped.
    pub skipped: usize,
    /// Well-formed lines left out on purpose (captures that are neither a 200 nor a redirect
    /// with a `Location`).
    pub filtered: usize,
    /// Redirect pairs read (CDX/CDXJ/WARC 3xx captures with a `Location`).
    pub redirects: usize,
    /// CDX/CDXJ revisit records (`warc/revisit`) that joined the digest group of a status-200
    /// capture of the input (counted in `records`; a revisit of no such capture is `filtered`).
    pub revisits: usize,
    /// Declared-canonical pairs read (WARC: a page and its `rel=canonical`).
    pub canonicals: usize,
    /// Redirects and declared canonicals to another site (counted in `filtered`): no evidence
    /// of equal content; each is kept as a pair that only its declaring URL's site consents
    /// to ([`union_shared`], [`crate::rules`]), and learned from only as an alias of that site.
    pub cross_site: usize,
    /// Captures left out of every trust decision because their URL could be read as two
    /// hosts ([`dedust_core::trusted_host`]: a `\`, `@` or `%` in the authority, a non-ASCII
    /// host…), their SURT key or WARC request's `Host` names another host, or the redirect or
    /// canonical they declare is such a URL. Not counted in `skipped` nor `filtered`.
    pub ambiguous: usize,
    /// The first few ambiguous captures: (line number, why); for WARC input the number is 0 and
    /// the reason names `file#record`.
    pub first_ambiguous: Vec<(usize, String)>,
    /// WARC input: robots.txt responses read, and their `Clean-param:` lines
    /// (`(robots.txt URL, lines)`; `dedust_interop::lists::import_robots` turns them into rules).
    pub robots: usize,
    /// See [`ReadReport::robots`].
    pub clean_params: Vec<(String, String)>,
    /// The first few skipped lines: (line number, reason); for WARC input the number is 0 and
    /// the reason names `file#record` and the byte offset.
    pub first_bad: Vec<(usize, String)>,
    /// CDX/CDXJ input: length cohorts proposed ([`crate::evidence::cohorts`]: a URL template
    /// whose pages all have one record length, as a login wall served at every member URL), each
    /// a `length:` cluster, and the URLs in them.
    pub cohorts: usize,
    /// See [`ReadReport::cohorts`].
    pub cohort_urls: usize,
    /// CDX/CDXJ input whose captures give record lengths: what the index says about each
    /// status-200 URL ([`crate::evidence`]), for [`crate::LearnConfig::evidence`]. `None` for
    /// every other input.
    pub evidence: Option<crate::evidence::IndexEvidence>,
}

impl ReadReport {
    fn bad(&mut self, line: usize, why: impl Into<String>) {
        self.skipped += 1;
        if self.first_bad.len() < 5 {
            self.first_bad.push((line, why.into()));
        }
    }

    /// Count an ambiguous capture ([`ReadReport::ambiguous`]).
    fn ambiguous(&mut self, line: usize, why: impl Into<String>) {
        self.ambiguous += 1;
        if self.first_ambiguous.len() < 5 {
            self.first_ambiguous.push((line, why.into()));
        }
    }
}

/// Longest line of a cluster file (a JSONL line may hold a whole cluster's URLs). A longer line
/// is skipped and counted, streamed past without being held in memory.
pub const MAX_RECORD_LINE: u64 = 16 << 20;

struct Acc {
    /// Cluster indices by id: hashed by the id text, which lives in the cluster only (one
    /// copy of each id, where a map of `String` keys holds two).
    index: hashbrown::HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    clusters: Vec<Cluster>,
    /// Index input: the status-200 captures in input order ([`crate::evidence`]).
    captures: Vec<crate::evidence::Capture>,
    /// Where each capture's record lies, by capture ([`Files`]).
    places: Files,
}

impl Acc {
    fn new() -> Acc {
        Acc {
            index: hashbrown::HashTable::new(),
            hasher: Default::default(),
            clusters: Vec::new(),
            captures: Vec::new(),
            places: Files::default(),
        }
    }

    fn push(&mut self, cluster: &str, url: &str) {
        use std::hash::BuildHasher;
        // Files mostly list a cluster's URLs together: the cluster of the last line is tried
        // before the map (a lookup in a map of millions of ids misses the cache).
        if let Some(c) = self.clusters.last_mut().filter(|c| c.id == cluster) {
            c.urls.push(url.to_string());
            return;
        }
        let (clusters, hasher) = (&self.clusters, &self.hasher);
        let entry = self.index.entry(
            hasher.hash_one(cluster),
            |&i| clusters[i as usize].id == cluster,
            |&i| hasher.hash_one(clusters[i as usize].id.as_str()),
        );
        let i = match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get() as usize,
            hashbrown::hash_table::Entry::Vacant(e) => {
                let i = self.clusters.len();
                e.insert(i as u32);
                self.clusters.push(Cluster {
                    id: cluster.to_string(),
                    urls: Vec::new(),
                });
                i
            }
        };
        self.clusters[i].urls.push(url.to_string());
    }

    /// Add consecutive records of one cluster: as [`Acc::push`] of each of its URLs in order.
    fn push_run(&mut self, run: Cluster) {
        use std::hash::BuildHasher;
        if let Some(c) = self.clusters.last_mut().filter(|c| c.id == run.id) {
            c.urls.extend(run.urls);
            return;
        }
        let (clusters, hasher) = (&self.clusters, &self.hasher);
        let entry = self.index.entry(
            hasher.hash_one(run.id.as_str()),
            |&i| clusters[i as usize].id == run.id,
            |&i| hasher.hash_one(clusters[i as usize].id.as_str()),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => {
                let i = *e.get() as usize;
                self.clusters[i].urls.extend(run.urls);
            }
            hashbrown::hash_table::Entry::Vacant(e) => {
                e.insert(self.clusters.len() as u32);
                self.clusters.push(run);
            }
        }
    }
}

/// The format of an input whose first non-empty line is `first`: by content only (a Common Crawl
/// shard is named `cdx-00187.gz`, a pipe has no name at all).
fn detect(first: &str) -> InputFormat {
    let t = first.trim_start();
    if t.starts_with('{') {
        InputFormat::Jsonl
    } else if t.starts_with("CDX ")
        || legacy_cdx(first).is_some()
        || first.split(' ').nth(2).is_some_and(|x| x.starts_with('{'))
    {
        InputFormat::Cdxj
    } else if first.contains('\t') {
        InputFormat::Tsv
    } else if first.contains(',') && first.to_ascii_lowercase().contains("url") {
        InputFormat::Csv
    } else {
        InputFormat::Ache
    }
}

/// What a file that holds no clusters looks like from its first line, and what was probably
/// meant: a rule file (it goes to `-r`), an HTML page (`dedust cluster` makes clusters from
/// pages), Nutch's XML (`dedust import`). `None` for anything that may be clusters.
fn not_clusters(first: &str) -> Option<&'static str> {
    let t = first.trim();
    let lower = t.to_ascii_lowercase();
    if t == "{" || t.contains("\"dedust-rules\"") {
        Some("a JSON document over several lines, such as a dedust rule file, not clusters: rule files go to `-r` (normalize, export, validate, evaluate); learn reads clusters, one record a line (a `cluster<TAB>url` table, JSONL, ACHE, CDXJ) or a WARC")
    } else if lower.starts_with("<!doctype html") || lower.starts_with("<html") {
        Some("an HTML page, not clusters: to make clusters from crawled pages run `dedust cluster --pages PAGES -o clusters.tsv`, then learn from that")
    } else if lower.starts_with("<?xml") || lower.starts_with("<regex-normalize") {
        Some("XML (a Nutch regex-normalize.xml?), not clusters: turn a crawler's rule file into dedust rules with `dedust import --from nutch FILE`")
    } else {
        None
    }
}

/// Fields of a legacy CDX line without a header, by position: 11 fields (`N b a m s k r M S V
/// g`, the common form) or 9 (`N b a m s k r V g`); `None` unless the line looks like one (an
/// 8- to 14-digit timestamp, then a URL).
fn legacy_cdx(line: &str) -> Option<&'static str> {
    let f: Vec<&str> = line.split(' ').filter(|x| !x.is_empty()).collect();
    let stamp = f.get(1)?;
    let ok = (8..=14).contains(&stamp.len())
        && stamp.bytes().all(|b| b.is_ascii_digit())
        && f.get(2).is_some_and(|u| looks_like_url(u));
    match f.len() {
        11 if ok => Some("NbamskrMSVg"),
        9 if ok => Some("NbamskrVg"),
        _ => None,
    }
}

/// The columns of Common Crawl's columnar URL index in a CSV export (an Athena, DuckDB or Spark
/// query over `cc-index/table/cc-main/warc/`): one capture a row. `url` and `content_digest`
/// are needed; the others are used when the query selected them (without `fetch_status`, every
/// row is taken as a status-200 capture: the query's own filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Columnar {
    url: usize,
    digest: usize,
    key: Option<usize>,
    status: Option<usize>,
    redirect: Option<usize>,
    mime: Option<usize>,
    length: Option<usize>,
    filename: Option<usize>,
    offset: Option<usize>,
}

impl Columnar {
    /// The columns of a header (names lower-cased), if it is one of the columnar index.
    fn of(names: &[String]) -> Option<Columnar> {
        let at = |n: &str| names.iter().position(|f| f == n);
        Some(Columnar {
            url: at("url")?,
            digest: at("content_digest")?,
            key: at("url_surtkey"),
            status: at("fetch_status"),
            redirect: at("fetch_redirect"),
            mime: at("content_mime_type").or_else(|| at("content_mime_detected")),
            length: at("warc_record_length"),
            filename: at("warc_filename"),
            offset: at("warc_record_offset"),
        })
    }

    /// The capture of one row.
    fn capture(&self, fields: &[std::borrow::Cow<'_, str>]) -> Capture {
        let get = |k: Option<usize>| {
            k.and_then(|k| fields.get(k))
                .map(|f| f.trim())
                .filter(|f| !f.is_empty() && *f != "-" && !f.eq_ignore_ascii_case("null"))
                .map(str::to_string)
        };
        Capture {
            key: get(self.key),
            url: get(Some(self.url)).unwrap_or_default(),
            // Without the column the query kept only status 200 (`WHERE fetch_status = 200`).
            status: match self.status {
                Some(_) => get(self.status),
                None => Some("200".to_string()),
            },
            digest: get(Some(self.digest)),
            location: get(self.redirect),
            mime: get(self.mime),
            length: get(self.length),
            filename: get(self.filename),
            offset: get(self.offset),
        }
    }
}

/// One capture of a web-archive index line: URL, status, payload digest, redirect `Location`,
/// mime type and record length.
struct Capture {
    /// The index key (SURT) when the line has one: CDXJ's first field, CDX's `N` field.
    key: Option<String>,
    url: String,
    status: Option<String>,
    digest: Option<String>,
    location: Option<String>,
    /// CDXJ `mime`, CDX `m` (`warc/revisit` for a revisit record).
    mime: Option<String>,
    /// CDXJ `length`, CDX `S`: the compressed WARC record's length, headers included.
    length: Option<String>,
    /// CDXJ `filename`, CDX `g`: the WARC file holding the record.
    filename: Option<String>,
    /// CDXJ `offset`, CDX `V`: where the record starts in that file.
    offset: Option<String>,
}

/// Parse one CDXJ or legacy CDX line; `fields`: the legacy columns (header letters) seen so
/// far, asked for only when the line is no CDXJ line.
fn capture<'f>(
    line: &str,
    fields: impl FnOnce() -> &'f str,
) -> std::result::Result<Capture, String> {
    // CDXJ: `SURT TIMESTAMP {json}`.
    if let Some(json) = line.splitn(3, ' ').nth(2).filter(|j| j.starts_with('{')) {
        let v: serde_json::Value =
            serde_json::from_str(json).map_err(|e| format!("bad JSON: {e}"))?;
        let text = |k: &str| {
            v.get(k).and_then(|s| match s {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
        };
        let url = v
            .get("url")
            .and_then(|u| u.as_str())
            .ok_or_else(|| "no `url`".to_string())?
            .to_string();
        return Ok(Capture {
            key: line.split(' ').next().map(str::to_string),
            url,
            status: text("status"),
            digest: text("digest"),
            location: text("redirect").or_else(|| text("location")),
            mime: text("mime"),
            length: text("length"),
            filename: text("filename"),
            offset: text("offset"),
        });
    }
    let fields = fields();
    let f: Vec<&str> = line.split(' ').filter(|x| !x.is_empty()).collect();
    if f.len() != fields.len() {
        return Err(format!(
            "{} fields, the CDX header names {}",
            f.len(),
            fields.len()
        ));
    }
    let col = |c: char| {
        fields
            .find(c)
            .map(|i| f[i])
            .filter(|x| *x != "-")
            .map(str::to_string)
    };
    let url = fields
        .find('a')
        .map(|i| f[i].to_string())
        .ok_or_else(|| "the CDX header names no `a` (original URL) field".to_string())?;
    Ok(Capture {
        key: col('N'),
        url,
        status: col('s'),
        digest: col('k'),
        location: col('r'),
        mime: col('m'),
        length: col('S'),
        filename: col('g'),
        offset: col('V'),
    })
}

/// The absolute URL a `Location` names, resolved against the capture's URL; `None` for one
/// that is no URL (garbage, or a scheme other than http(s)).
pub(crate) fn resolve_location(base: &str, location: &str) -> Option<String> {
    let base = url::Url::parse(base).ok()?;
    let mut to = base.join(location.trim()).ok()?;
    to.set_fragment(None);
    matches!(to.scheme(), "http" | "https").then(|| to.to_string())
}

/// What a declared pair (a redirect's `Location`, a page's canonical) says about `url`.
pub(crate) enum Declared {
    /// `url` or the target could be read as two hosts ([`dedust_core::trusted_host`]): no
    /// evidence, and no decision.
    Ambiguous(dedust_core::Ambiguity),
    /// The pair, as cluster `{signal}:{url}` of `url` and the absolute target.
    Pair(String),
    /// The target is the URL itself (a cookie check, a self-canonical): nothing.
    Itself,
    /// The target (absolute) is on another site ([`same_site`]): no evidence of equal
    /// content, only the declaring site's consent to be aliased there ([`consent_pair`]).
    OtherSite(String),
    /// The target is no http(s) URL.
    NotUrl,
}

/// Resolve the target a page declares against its URL and judge it ([`Declared`]). Which
/// site each side is on is decided by [`dedust_core::trusted_host`] alone: a URL it cannot
/// place (and a target written with such an authority, before resolution) decides nothing.
pub(crate) fn declared(url: &str, target: &str) -> Declared {
    let from = match dedust_core::trusted_host(url) {
        Ok(h) => h,
        Err(a) => return Declared::Ambiguous(a),
    };
    let Some(to) = resolve_location(url, target) else {
        return Declared::NotUrl;
    };
    // A target with its own authority (`https://…`, `//…`, `https:\\…`) is judged as written
    // too: a parser resolving it differently must not reach another host.
    let t = target.trim();
    let own_authority = t.starts_with("//")
        || t.starts_with("\\")
        || t.split_once(':').is_some_and(|(s, _)| {
            !s.is_empty()
                && s.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
        });
    if own_authority {
        let written = match t.strip_prefix("//").or_else(|| t.strip_prefix("\\")) {
            Some(rest) => format!("{}://{rest}", url.split_once(':').map_or("http", |p| p.0)),
            None => t.to_string(),
        };
        if let Err(a) = dedust_core::trusted_host(&written) {
            return Declared::Ambiguous(a);
        }
    }
    let to_host = match dedust_core::trusted_host(&to) {
        Ok(h) => h,
        Err(a) => return Declared::Ambiguous(a),
    };
    if !same_site(&from, &to_host) {
        Declared::OtherSite(to)
    } else if to == url {
        Declared::Itself
    } else {
        Declared::Pair(to)
    }
}

/// Whether two trusted hosts are on one site (registrable domain). A redirect or a declared
/// canonical to another site is never evidence: a site may only pair its own URLs, or a page
/// of `evil.example` redirecting to two pages of `victim.example` would teach the victim's
/// rules.
pub(crate) fn same_site(a: &dedust_core::TrustedHost, b: &dedust_core::TrustedHost) -> bool {
    a.host() == b.host() || a.site() == b.site()
}

/// Why a capture's URL takes part in no trust decision: it could be read as two hosts, or the
/// index line's SURT key names another host than its URL (`key`: the line's first field, for
/// CDX(J); `None` otherwise).
pub(crate) fn untrusted_capture(url: &str, key: Option<&str>) -> Option<dedust_core::Ambiguity> {
    trusted_capture(url, key).err()
}

/// The host a capture speaks for ([`untrusted_capture`]: or why it speaks for none).
fn trusted_capture(
    url: &str,
    key: Option<&str>,
) -> std::result::Result<dedust_core::TrustedHost, dedust_core::Ambiguity> {
    let h = dedust_core::trusted_host(url)?;
    let Some(key) = key else { return Ok(h) };
    if dedust_core::__private::trust::surt_names(key, h.host()) {
        Ok(h)
    } else {
        Err(dedust_core::Ambiguity::SurtKey {
            key: key.split(')').next().unwrap_or(key).to_string(),
            host: h.host().to_string(),
        })
    }
}

/// One CSV record's cluster and URL fields (`None`: the line has too few fields): kept, or
/// counted as a bad line with the reason. (TSV records after the header, and the other line
/// formats, are read by [`line_blocks`].)
fn record(acc: &mut Acc, rep: &mut ReadReport, lineno: usize, c: Option<&str>, u: Option<&str>) {
    match checked(c, u) {
        Ok((c, u)) => {
            acc.push(c, u);
            rep.records += 1;
        }
        Err(why) => rep.bad(lineno, why),
    }
}

/// A record's cluster and URL fields, trimmed, or why the line is skipped.
fn checked<'a>(
    c: Option<&'a str>,
    u: Option<&'a str>,
) -> std::result::Result<(&'a str, &'a str), String> {
    match (c.map(str::trim), u.map(str::trim)) {
        (Some(c), Some(u)) if looks_like_url(u) && !c.is_empty() => Ok((c, u)),
        (Some(""), Some(u)) if looks_like_url(u) => Err("empty cluster id".to_string()),
        (Some(_), Some(u)) => Err(format!("not a URL: {:?}", trunc(u))),
        _ => Err("missing column".to_string()),
    }
}

/// Fields `ci` and `ui` of a TSV line, found by the tabs (memchr) as far as the later of the
/// two, without collecting the others.
fn tsv_fields(line: &str, (ci, ui): (usize, usize)) -> (Option<&str>, Option<&str>) {
    let (mut c, mut u) = (None, None);
    let ends = memchr::memchr_iter(b'\t', line.as_bytes()).chain([line.len()]);
    let mut start = 0;
    for (k, end) in ends.enumerate() {
        let f = &line[start..end];
        start = end + 1;
        if k == ci {
            c = Some(f);
        }
        if k == ui {
            u = Some(f);
        }
        if k >= ci.max(ui) {
            break;
        }
    }
    (c, u)
}

/// Why a line past [`MAX_RECORD_LINE`] is skipped.
fn too_long() -> String {
    format!("longer than {MAX_RECORD_LINE} bytes")
}

/// Bytes of a line-based input read at a time once its format is known ([`line_blocks`]).
const LINE_BLOCK: usize = 8 << 20;

/// One piece of a block of lines, parsed on its own: its lines, records, skipped lines (the
/// first few with their line number within the piece) and other counts, and its records as runs
/// of one cluster id (consecutive records of one cluster share one [`Cluster`]).
#[derive(Default)]
struct Piece {
    /// Lines, records and skipped lines (numbered within the piece).
    rep: ReadReport,
    runs: Vec<Cluster>,
    /// Index input: its status-200 captures, in order.
    captures: Vec<crate::evidence::Capture>,
    /// Where each of them lies (file ids of this piece).
    places: Files,
}

/// The WARC file names an index names (each once) and, by capture, its record's file (an
/// index into `names`; [`NO_FILE`]: not named) and offset.
#[derive(Default)]
struct Files {
    names: Vec<String>,
    ids: HashMap<String, u32>,
    at: Vec<(u32, u64)>,
}

/// A capture whose index line names no WARC file and offset.
const NO_FILE: u32 = u32::MAX;

impl Files {
    /// Record the place of the next capture.
    fn push(&mut self, file: Option<&str>, offset: Option<&str>) {
        let offset = offset.and_then(|o| o.parse::<u64>().ok());
        let (Some(name), Some(offset)) = (file.filter(|f| !f.is_empty()), offset) else {
            self.at.push((NO_FILE, 0));
            return;
        };
        let id = match self.ids.get(name) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.names.len()).unwrap_or(NO_FILE);
                if id == NO_FILE {
                    self.at.push((NO_FILE, 0));
                    return;
                }
                self.names.push(name.to_string());
                self.ids.insert(name.to_string(), id);
                id
            }
        };
        self.at.push((id, offset));
    }

    /// Append another list's places, its file ids renamed to this one's.
    fn append(&mut self, other: Files) {
        let map: Vec<u32> = other
            .names
            .into_iter()
            .map(|n| match self.ids.get(&n) {
                Some(&id) => id,
                None => {
                    let id = u32::try_from(self.names.len()).unwrap_or(NO_FILE);
                    if id != NO_FILE {
                        self.ids.insert(n.clone(), id);
                        self.names.push(n);
                    }
                    id
                }
            })
            .collect();
        self.at.extend(other.at.into_iter().map(|(f, o)| match f {
            NO_FILE => (NO_FILE, 0),
            f => (map[f as usize], o),
        }));
    }
}

/// What a line of one format does to a [`Piece`]: `(piece, state, line number within the
/// piece, line)`, the line without its line end, not blank. The state is what earlier lines
/// set for later ones (a legacy CDX header); `()` for the other formats.
type LineFn<'f, S> = &'f (dyn Fn(&mut Piece, &mut S, usize, &str) + Sync);

impl Piece {
    /// A record of cluster `c` and URL `u`.
    fn push(&mut self, c: &str, u: &str) {
        match self.runs.last_mut().filter(|r| r.id == c) {
            Some(r) => r.urls.push(u.to_string()),
            None => {
                // Most clusters are two URLs.
                let mut urls = Vec::with_capacity(2);
                urls.push(u.to_string());
                self.runs.push(Cluster {
                    id: c.to_string(),
                    urls,
                })
            }
        }
    }

    /// Add the piece to what was read: its runs in order, its counts, and its skipped lines
    /// numbered after `lineno` (the lines before it), which moves past its lines.
    fn add_to(self, acc: &mut Acc, rep: &mut ReadReport, lineno: &mut usize) {
        for (k, why) in self.rep.first_bad {
            if rep.first_bad.len() < 5 {
                rep.first_bad.push((*lineno + k, why));
            }
        }
        rep.skipped += self.rep.skipped;
        rep.records += self.rep.records;
        rep.lines += self.rep.lines;
        rep.filtered += self.rep.filtered;
        rep.redirects += self.rep.redirects;
        rep.cross_site += self.rep.cross_site;
        for (k, why) in self.rep.first_ambiguous {
            if rep.first_ambiguous.len() < 5 {
                rep.first_ambiguous.push((*lineno + k, why));
            }
        }
        rep.ambiguous += self.rep.ambiguous;
        *lineno += self.rep.lines;
        for run in self.runs {
            acc.push_run(run);
        }
        acc.captures.extend(self.captures);
        acc.places.append(self.places);
    }

    /// The lines of `bytes` (each ended by `\n`, but for the input's last), as
    /// [`read_clusters_from`] reads them once the format is known: a line past
    /// [`MAX_RECORD_LINE`] or not UTF-8 is skipped, a blank one passed over, the others go to
    /// `line_fn` with `state`.
    fn parse<S>(bytes: &[u8], state: &mut S, line_fn: LineFn<'_, S>) -> Piece {
        let mut p = Piece::default();
        let mut start = 0;
        while start < bytes.len() {
            let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |k| start + k);
            let raw = &bytes[start..end];
            start = end + 1;
            p.rep.lines += 1;
            let n = p.rep.lines;
            let text = match line_text(raw) {
                Ok(text) => text,
                Err(why) => {
                    p.rep.bad(n, why);
                    continue;
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            line_fn(&mut p, state, n, text);
        }
        p
    }
}

/// A line's bytes (without its `\n`) as text without its line end, or why it is skipped: longer
/// than [`MAX_RECORD_LINE`], or not UTF-8. ([`Piece::parse`] reads lines with it, and
/// [`cdx_state`] finds header lines with it, so both see the same lines.)
fn line_text(mut raw: &[u8]) -> std::result::Result<&str, String> {
    if raw.len() as u64 > MAX_RECORD_LINE {
        return Err(too_long());
    }
    while let [rest @ .., b'\r' | b'\n'] = raw {
        raw = rest;
    }
    std::str::from_utf8(raw).map_err(|_| "not UTF-8".to_string())
}

/// A TSV record line once the columns `cols` are known.
fn tsv_line(cols: (usize, usize)) -> impl Fn(&mut Piece, &mut (), usize, &str) + Sync {
    move |p, _, n, line| {
        let (c, u) = tsv_fields(line, cols);
        match checked(c, u) {
            Ok((c, u)) => {
                p.rep.records += 1;
                p.push(c, u);
            }
            Err(why) => p.rep.bad(n, why),
        }
    }
}

/// A JSONL line: `{"cluster"|"digest"|"id": …, "url": …, "urls": [ … ]}`.
fn jsonl_line(p: &mut Piece, _: &mut (), n: usize, line: &str) {
    let v: serde_json::Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            p.rep.bad(n, format!("bad JSON: {e}"));
            return;
        }
    };
    let cl = ["cluster", "digest", "id"]
        .iter()
        .find_map(|k| v.get(*k))
        .map(|c| match c {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    let Some(cl) = cl else {
        p.rep.bad(n, "no `cluster` or `digest`");
        return;
    };
    let mut urls: Vec<&str> = Vec::new();
    if let Some(u) = v.get("url").and_then(|u| u.as_str()) {
        urls.push(u);
    }
    if let Some(a) = v.get("urls").and_then(|u| u.as_array()) {
        urls.extend(a.iter().filter_map(|x| x.as_str()));
    }
    let good: Vec<&str> = urls.into_iter().filter(|u| looks_like_url(u)).collect();
    if good.is_empty() {
        p.rep.bad(n, "no usable `url` or `urls`");
        return;
    }
    for u in good {
        p.push(&cl, u);
        p.rep.records += 1;
    }
}

/// An ACHE / DUSTER line: `content_hash url1 url2 …`.
fn ache_line(p: &mut Piece, _: &mut (), n: usize, line: &str) {
    let mut it = line.split_whitespace();
    let Some(h) = it.next() else { return };
    let urls: Vec<&str> = it.filter(|u| looks_like_url(u)).collect();
    if urls.is_empty() {
        p.rep.bad(n, "no URL after the content hash");
        return;
    }
    for u in urls {
        p.push(h, u);
        p.rep.records += 1;
    }
}

/// The field letters a legacy ` CDX …` header line names, when `line` is one.
fn cdx_header_of(line: &str) -> Option<String> {
    let h = line.trim_start().strip_prefix("CDX ")?;
    Some(h.split(' ').filter(|x| !x.is_empty()).collect())
}

/// A CDXJ or legacy CDX line; `header` holds the field letters of the last ` CDX …` header.
fn cdxj_line(p: &mut Piece, header: &mut Option<String>, n: usize, line: &str) {
    if let Some(h) = cdx_header_of(line) {
        *header = Some(h);
        return;
    }
    // Without a header, each line by its field count (11 or 9).
    let fields = || {
        header
            .as_deref()
            .or_else(|| legacy_cdx(line))
            .unwrap_or("NbamskrMSVg")
    };
    match capture(line, fields) {
        Ok(c) => index_capture(p, n, c),
        Err(why) => p.rep.bad(n, why),
    }
}

/// What one capture of a web-archive index (a CDXJ or CDX line, a row of Common Crawl's
/// columnar index) does to a [`Piece`]: a status-200 capture joins its digest's group (its
/// facts kept as evidence), a revisit its digest's, a 3xx with a `Location` makes a redirect
/// pair; robots.txt and anything else is filtered, counted.
fn index_capture(p: &mut Piece, n: usize, c: Capture) {
    if !looks_like_url(&c.url) {
        p.rep.bad(n, format!("not a URL: {:?}", trunc(&c.url)));
        return;
    }
    let host = match trusted_capture(&c.url, c.key.as_deref()) {
        Ok(h) => h,
        Err(why) => {
            p.rep.ambiguous(n, format!("{:?}: {why}", trunc(&c.url)));
            return;
        }
    };
    let status = c.status.as_deref().unwrap_or("");
    let revisit = c.mime.as_deref() == Some("warc/revisit");
    if crate::evidence::is_robots(&c.url) {
        // A crawl's robots.txt is no page of the site: no cluster, no evidence.
        p.rep.filtered += 1;
    } else if revisit && matches!(status, "" | "-" | "200") && c.digest.is_some() {
        // Folded into the digest's group in `finish` when the input holds a 200 of it.
        let d = c.digest.as_deref().unwrap_or("");
        p.push(&format!("{REVISIT}{d}"), &c.url);
    } else if status == "200" && !revisit {
        match &c.digest {
            Some(d) => {
                p.push(&format!("digest:{d}"), &c.url);
                p.rep.records += 1;
                let hash = crate::hash::fnv;
                let (host_of, template) = crate::evidence::template_of(&c.url);
                p.captures.push(crate::evidence::Capture {
                    url: hash(&c.url),
                    key: c.key.as_deref().map_or_else(|| hash(&c.url), hash),
                    digest: hash(d),
                    site: hash(host.site()),
                    host: host_of,
                    template,
                    len: c
                        .length
                        .as_deref()
                        .and_then(|l| l.parse().ok())
                        .unwrap_or(0),
                    class: crate::evidence::mime_class(c.mime.as_deref().unwrap_or("")),
                });
                p.places.push(c.filename.as_deref(), c.offset.as_deref());
            }
            None => p.rep.bad(n, "no `digest`"),
        }
    } else if status.len() == 3 && status.starts_with('3') && c.location.is_some() {
        let loc = c.location.as_deref().unwrap_or("");
        match declared(&c.url, loc) {
            Declared::Pair(to) => {
                let id = format!("redirect:{}", c.url);
                p.push(&id, &c.url);
                p.push(&id, &to);
                p.rep.records += 1;
                p.rep.redirects += 1;
            }
            Declared::OtherSite(to) => {
                let id = format!("redirect:{}", c.url);
                p.push(&id, &c.url);
                p.push(&id, &to);
                p.rep.filtered += 1;
                p.rep.cross_site += 1;
            }
            Declared::Itself => p.rep.filtered += 1,
            Declared::Ambiguous(why) => p
                .rep
                .ambiguous(n, format!("`Location` {:?}: {why}", trunc(loc))),
            Declared::NotUrl => p
                .rep
                .bad(n, format!("`Location` is no URL: {:?}", trunc(loc))),
        }
    } else {
        p.rep.filtered += 1;
    }
}

/// The state after the lines of `bytes` (whole lines, as [`Piece::parse`] gets them) for
/// [`cdxj_line`]: the last ` CDX …` header among them, found by a search for `CDX ` (header
/// lines are rare; the other lines are not parsed).
///
/// # Complexity
/// `O(n)` for `n` bytes: each line holding `CDX ` is looked at once, however often it holds it
/// (a line of `CDX CDX …` must not cost its length squared).
fn cdx_state(header: &mut Option<String>, bytes: &[u8]) {
    let finder = memchr::memmem::Finder::new(b"CDX ");
    // The start of a line not looked at yet.
    let mut from = 0;
    while let Some(k) = finder.find(&bytes[from..]) {
        let at = from + k;
        let start = memchr::memrchr(b'\n', &bytes[from..at]).map_or(from, |j| from + j + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |j| at + j);
        if let Some(h) = line_text(&bytes[start..end]).ok().and_then(cdx_header_of) {
            *header = Some(h);
        }
        if end >= bytes.len() {
            break;
        }
        from = end + 1;
    }
}

/// The rest of a line-based input once its format is known (`rep.lines` lines read so far),
/// read in blocks of `block_size` bytes ([`LINE_BLOCK`]) whose lines are parsed in parallel by
/// `line_fn`, then added in order: the same clusters, counts and messages as reading it line by
/// line. `state` is what the lines so far set for the next ones; `advance` brings a state past
/// a piece's lines without parsing them (each piece starts from the state the pieces before it
/// leave). A line longer than [`MAX_RECORD_LINE`] is skipped and counted, streamed past without
/// being held whole (a block holds at most one such cap beside `block_size` bytes).
///
/// # Complexity
/// `O(n)` for `n` bytes, parsed on every thread; adding the runs of one cluster id is one hash
/// lookup a run, in order.
fn line_blocks<S: Clone + Send>(
    r: &mut impl BufRead,
    acc: &mut Acc,
    rep: &mut ReadReport,
    (state, advance): (&mut S, fn(&mut S, &[u8])),
    line_fn: LineFn<'_, S>,
    block_size: usize,
) -> std::io::Result<()> {
    use rayon::prelude::*;
    use std::io::Read;
    // The lines read so far (the header and those before it).
    let mut lineno = rep.lines;
    // One buffer for every block (fresh memory is costly: a page is zeroed on first touch):
    // the part of a line a block ends with is moved to its front for the next one.
    let mut block: Vec<u8> = Vec::new();
    loop {
        let before = block.len();
        (&mut *r).take(block_size as u64).read_to_end(&mut block)?;
        let end = block.len() == before;
        // Whole lines only; the rest waits for the next block. (What was carried holds no
        // newline: only the bytes just read are searched.)
        let cut = if end {
            block.len()
        } else {
            memchr::memrchr(b'\n', &block[before..]).map_or(0, |k| before + k + 1)
        };
        // A line already longer than the cap: counted, and read past up to its end.
        let long = (block.len() - cut) as u64 > MAX_RECORD_LINE;
        // Pieces of about a megabyte, cut after a newline, parsed in parallel.
        let mut bounds = vec![0];
        while let Some(&at) = bounds.last().filter(|&&at| at < cut) {
            let next = (at + (1 << 20)).min(cut);
            let next = match memchr::memchr(b'\n', &block[next..cut]) {
                Some(k) => next + k + 1,
                None => cut,
            };
            bounds.push(next);
        }
        // Each piece's starting state, then the state after the block.
        let mut starts: Vec<S> = Vec::with_capacity(bounds.len());
        for w in bounds.windows(2) {
            starts.push(state.clone());
            advance(state, &block[w[0]..w[1]]);
        }
        let pieces: Vec<Piece> = bounds
            .par_windows(2)
            .zip(starts)
            .map(|(w, mut s)| Piece::parse(&block[w[0]..w[1]], &mut s, line_fn))
            .collect();
        for p in pieces {
            p.add_to(acc, rep, &mut lineno);
        }
        if long {
            block.clear();
            block.shrink_to(block_size);
            lineno += 1;
            rep.lines += 1;
            rep.bad(lineno, too_long());
            skip_line(r)?;
        } else if cut > 0 {
            block.copy_within(cut.., 0);
            block.truncate(block.len() - cut);
        }
        if end {
            return Ok(());
        }
    }
}

/// No state between lines (every format but legacy CDX).
fn no_state(_: &mut (), _: &[u8]) {}

/// Line `lineno` (`line`, already counted in `rep.lines`: the line the format was found on),
/// then the rest of the input in blocks ([`line_blocks`]).
fn then_blocks<S: Clone + Send>(
    r: &mut impl BufRead,
    acc: &mut Acc,
    rep: &mut ReadReport,
    (lineno, line): (usize, &str),
    (state, advance): (&mut S, fn(&mut S, &[u8])),
    line_fn: LineFn<'_, S>,
) -> std::io::Result<()> {
    let mut first = Piece::default();
    line_fn(&mut first, state, 1, line);
    first.add_to(acc, rep, &mut (lineno - 1));
    line_blocks(r, acc, rep, (state, advance), line_fn, LINE_BLOCK)
}

fn looks_like_url(u: &str) -> bool {
    // A space inside a URL is common in real lists (`…#What to Expect`); the base layer's
    // WHATWG parser percent-encodes it, as `normalize` does. Other white space is a framing error.
    // (ASCII text, nearly every URL, is checked byte by byte — `\t` to `\r` are the bytes 9 to
    // 13, tested without an early exit so the loop runs on whole vectors; Unicode white space
    // needs chars.)
    let b = u.as_bytes();
    let framing = if u.is_ascii() {
        b.iter()
            .fold(false, |f, &c| f | (c.wrapping_sub(b'\t') < 5))
    } else {
        u.chars().any(|c| c.is_whitespace() && c != ' ')
    };
    // `://`, found from the colons (the first is nearly always the scheme's).
    let sep = memchr::memchr_iter(b':', b).any(|i| b[i + 1..].starts_with(b"//"));
    sep && !framing
}

/// Read clusters from a path (`-` = stdin).
///
/// ```
/// let dir = std::env::temp_dir().join("dedust-doc-input");
/// std::fs::create_dir_all(&dir).unwrap();
/// let p = dir.join("c.tsv");
/// std::fs::write(&p, "cluster\turl\na\thttp://h/1\na\thttp://h/1?x\nb\tnot a url\n").unwrap();
/// let (c, rep) = dedust_learn::read_clusters(p.to_str().unwrap(), dedust_learn::InputFormat::Auto).unwrap();
/// assert_eq!((c.len(), c[0].urls.len(), rep.skipped), (1, 2, 1));
/// ```
pub fn read_clusters(path: &str, format: InputFormat) -> Result<(Vec<Cluster>, ReadReport)> {
    let r = open(path)?;
    read_clusters_from(r, path, format)
}

/// Read clusters from an open reader; `name` is used in messages and for format detection.
pub fn read_clusters_from(
    mut r: impl BufRead,
    name: &str,
    format: InputFormat,
) -> Result<(Vec<Cluster>, ReadReport)> {
    let mut rep = ReadReport::default();
    let mut acc = Acc::new();
    // WARC records are not lines: found from the first bytes.
    let warc = match format {
        InputFormat::Warc => true,
        InputFormat::Auto => r
            .fill_buf()
            .map_err(|e| Error::Io {
                path: name.to_string(),
                source: e,
            })?
            .starts_with(b"WARC/"),
        _ => false,
    };
    if warc {
        let w = crate::warc::read_signals(r, name, |c, u| acc.push(c, u));
        rep.format = Some(InputFormat::Warc);
        rep.lines = w.records;
        rep.records = w.digests + w.redirects + w.canonicals;
        rep.redirects = w.redirects;
        rep.canonicals = w.canonicals;
        rep.cross_site = w.cross_site;
        rep.filtered = w.filtered;
        rep.skipped = w.skipped;
        rep.ambiguous = w.ambiguous;
        rep.first_ambiguous = w.first_ambiguous.into_iter().map(|m| (0, m)).collect();
        rep.robots = w.robots;
        rep.clean_params = w.clean_params;
        rep.first_bad = w.first_bad.into_iter().map(|m| (0, m)).collect();
        return finish(acc, rep, name);
    }
    let mut buf = Vec::new();
    let mut fmt = format;
    let mut cols: Option<(usize, usize)> = None;
    // Common Crawl's columnar index as CSV: its columns, and the captures read so far.
    let mut columnar: Option<(Columnar, Piece)> = None;
    // Legacy CDX columns (header letters), once a ` CDX …` header named them.
    let mut cdx_header: Option<String> = None;
    let mut lineno = 0usize;
    // A CSV record whose quoted field spans lines, and the line it started on.
    let mut pending = String::new();
    let mut pending_line = 0usize;
    loop {
        let got = read_line_capped(&mut r, &mut buf, MAX_RECORD_LINE).map_err(|e| Error::Io {
            path: name.to_string(),
            source: e,
        })?;
        if got == Line::End {
            if !pending.is_empty() {
                rep.bad(pending_line, "quoted field never closed");
            }
            break;
        }
        lineno += 1;
        rep.lines += 1;
        if got == Line::Cut {
            rep.bad(lineno, too_long());
            continue;
        }
        if lineno == 1 && buf.starts_with(b"\xEF\xBB\xBF") {
            buf.drain(..3);
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        let Ok(line) = std::str::from_utf8(&buf) else {
            rep.bad(lineno, "not UTF-8");
            continue;
        };
        if line.trim().is_empty() && pending.is_empty() {
            continue;
        }
        if fmt == InputFormat::Auto {
            if let Some(hint) = not_clusters(line) {
                return Err(Error::Format {
                    path: name.to_string(),
                    line: lineno,
                    message: hint.to_string(),
                });
            }
            fmt = detect(line);
        }
        rep.format = Some(fmt);
        // RFC 4180: a quoted field may hold line breaks; the record goes on until it closes.
        let joined;
        let (line, lineno) =
            if fmt == InputFormat::Csv && (!pending.is_empty() || csv_fields(line).is_none()) {
                if pending.is_empty() {
                    pending_line = lineno;
                } else {
                    pending.push('\n');
                }
                pending.push_str(line);
                // A stray quote must not swallow the rest of the file: a quoted field spans at most
                // `CSV_FIELD_LINES` lines and `CSV_FIELD_BYTES` (a URL record is far shorter).
                let open = csv_fields(&pending).is_none();
                if open
                    && lineno - pending_line + 1 < CSV_FIELD_LINES
                    && pending.len() < CSV_FIELD_BYTES
                {
                    continue;
                }
                if open {
                    // Every line the open quote took is lost: each one counts.
                    let lines = lineno - pending_line + 1;
                    rep.bad(
                        pending_line,
                        format!(
                            "quoted field not closed within {CSV_FIELD_LINES} lines \
                             ({lines} lines skipped)"
                        ),
                    );
                    rep.skipped += lines - 1;
                    pending.clear();
                    continue;
                }
                joined = std::mem::take(&mut pending);
                (joined.as_str(), pending_line)
            } else {
                (line, lineno)
            };
        match fmt {
            InputFormat::Tsv | InputFormat::Csv => {
                let fields = split_fields(line, fmt == InputFormat::Tsv);
                if let Some((c, piece)) = &mut columnar {
                    index_capture(piece, lineno, c.capture(&fields));
                    continue;
                }
                let Some((ci, ui)) = cols else {
                    let lower: Vec<String> = fields
                        .iter()
                        .map(|f| f.trim().to_ascii_lowercase())
                        .collect();
                    let ci = lower
                        .iter()
                        .position(|f| f == "cluster" || f == "digest" || f == "cluster_id");
                    let ui = lower.iter().position(|f| f == "url");
                    if let (None, Some(c)) = (ci, Columnar::of(&lower)) {
                        columnar = Some((c, Piece::default()));
                        continue;
                    }
                    match (ci, ui) {
                        (Some(c), Some(u)) if fmt == InputFormat::Tsv => {
                            // The records, in parallel blocks.
                            let state = (&mut (), no_state as fn(&mut (), &[u8]));
                            line_blocks(
                                &mut r,
                                &mut acc,
                                &mut rep,
                                state,
                                &tsv_line((c, u)),
                                LINE_BLOCK,
                            )
                            .map_err(|e| Error::Io {
                                path: name.to_string(),
                                source: e,
                            })?;
                            break;
                        }
                        (Some(c), Some(u)) => cols = Some((c, u)),
                        _ => {
                            return Err(Error::Format {
                                path: name.to_string(),
                                line: lineno,
                                message: format!(
                                    "header must name `cluster` and `url` columns (or, for Common Crawl's columnar index, `url` and `content_digest`), got {line:?}"
                                ),
                            })
                        }
                    }
                    continue;
                };
                let field = |k: usize| fields.get(k).map(|f| f.as_ref());
                record(&mut acc, &mut rep, lineno, field(ci), field(ui));
            }
            // This line, then the rest in parallel blocks.
            InputFormat::Jsonl | InputFormat::Ache => {
                let f: LineFn<'_, ()> = match fmt {
                    InputFormat::Jsonl => &jsonl_line,
                    _ => &ache_line,
                };
                let state = (&mut (), no_state as fn(&mut (), &[u8]));
                then_blocks(&mut r, &mut acc, &mut rep, (lineno, line), state, f).map_err(|e| {
                    Error::Io {
                        path: name.to_string(),
                        source: e,
                    }
                })?;
                break;
            }
            InputFormat::Cdxj => {
                let state = (&mut cdx_header, cdx_state as fn(&mut Option<String>, &[u8]));
                then_blocks(
                    &mut r,
                    &mut acc,
                    &mut rep,
                    (lineno, line),
                    state,
                    &cdxj_line,
                )
                .map_err(|e| Error::Io {
                    path: name.to_string(),
                    source: e,
                })?;
                break;
            }
            InputFormat::Auto | InputFormat::Warc => unreachable!("format detected above"),
        }
    }
    if let Some((_, mut piece)) = columnar {
        // Its rows were counted as lines already, and numbered as the file's.
        piece.rep.lines = 0;
        let mut at = 0;
        piece.add_to(&mut acc, &mut rep, &mut at);
        rep.format = Some(InputFormat::Cdxj);
    }
    finish(acc, rep, name)
}

/// The cluster id prefix of revisit records until [`finish`] folds them into their digest's
/// group (`revisit:` is no signal: a group never keeps it).
const REVISIT: &str = "revisit:";

/// The clusters read, repeated captures of one URL collapsed; an error when there are none.
/// Index input: revisits join the group of their digest when the input holds a status-200
/// capture of it (else they are `filtered`), and the URLs' facts go to `rep.evidence`
/// ([`crate::evidence`]).
fn finish(mut acc: Acc, mut rep: ReadReport, name: &str) -> Result<(Vec<Cluster>, ReadReport)> {
    if rep.format == Some(InputFormat::Cdxj) {
        fold_revisits(&mut acc, &mut rep);
    }
    // Collapse repeated captures of one URL inside a cluster (first occurrence kept).
    for c in &mut acc.clusters {
        dedup_urls(&mut c.urls);
    }
    if acc.clusters.is_empty() {
        // Name the first lines and why: malformed ones, then those no trust decision took.
        let mut first = rep.first_bad.clone();
        first.extend(
            rep.first_ambiguous
                .iter()
                .map(|(n, why)| (*n, format!("ambiguous: {why}"))),
        );
        first.truncate(5);
        return Err(Error::EmptyInput {
            path: name.to_string(),
            skipped: rep.skipped,
            first,
        });
    }
    let clusters = match rep.format {
        Some(InputFormat::Cdxj) => {
            let st = crate::evidence::stats(&acc.captures);
            let cohorts = length_cohorts(&acc.clusters, &acc.captures, &st);
            rep.cohorts = cohorts.len();
            rep.cohort_urls = cohorts.iter().map(|c| c.urls.len()).sum();
            acc.clusters.extend(cohorts);
            let clusters = union_shared(acc.clusters);
            rep.evidence = evidence_of(&clusters, &acc.captures, &acc.places, &st);
            clusters
        }
        Some(InputFormat::Warc) => union_shared(acc.clusters),
        _ => acc.clusters,
    };
    Ok((clusters, rep))
}

/// Fold each `revisit:<d>` cluster into `digest:<d>` (its URLs after the group's), or drop it,
/// counted as filtered, when the input holds no status-200 capture of `d` (a revisit of a 404's
/// payload makes no cluster).
///
/// # Complexity
/// `O(c)` for `c` clusters (hashed ids).
fn fold_revisits(acc: &mut Acc, rep: &mut ReadReport) {
    if !acc.clusters.iter().any(|c| c.id.starts_with(REVISIT)) {
        return;
    }
    let at: HashMap<&str, usize> = acc
        .clusters
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((c.id.strip_prefix("digest:")?, i)))
        .collect();
    let moves: Vec<(usize, Option<usize>)> = acc
        .clusters
        .iter()
        .enumerate()
        .filter_map(|(i, c)| Some((i, c.id.strip_prefix(REVISIT)?)))
        .map(|(i, d)| (i, at.get(d).copied()))
        .collect();
    for (i, to) in moves {
        let urls = std::mem::take(&mut acc.clusters[i].urls);
        match to {
            Some(j) => {
                rep.records += urls.len();
                rep.revisits += urls.len();
                acc.clusters[j].urls.extend(urls);
            }
            None => rep.filtered += urls.len(),
        }
    }
    acc.clusters.retain(|c| !c.id.starts_with(REVISIT));
}

/// What the index says about the clusters' URLs ([`crate::evidence::IndexEvidence`]): a URL's
/// record length and mime class are those of its first status-200 capture, its limit that of
/// its site ([`crate::evidence::stats`]); URLs are inserted in the order of their first capture.
/// `None` when no capture gives a length (nothing to judge).
///
/// # Complexity
/// `O(n + u)` hashing for `n` captures and `u` URLs, plus the statistics' sorts.
fn evidence_of(
    clusters: &[Cluster],
    captures: &[crate::evidence::Capture],
    places: &Files,
    st: &crate::evidence::Stats,
) -> Option<crate::evidence::IndexEvidence> {
    use crate::evidence::{limit_ppm, Facts, IndexEvidence, Place};
    if !captures.iter().any(|c| c.len > 0) {
        return None;
    }
    // URL hash → (rank of its first capture, facts).
    let mut facts: HashMap<u64, (usize, Facts)> = HashMap::with_capacity(captures.len());
    for (k, c) in captures.iter().enumerate() {
        facts.entry(c.url).or_insert_with(|| {
            let f = Facts {
                len: if c.class == b'f' { 0 } else { c.len },
                class: c.class,
                limit: limit_ppm(st.get(&c.site)),
            };
            (k, f)
        });
    }
    let mut found: Vec<(usize, &str, Facts)> = clusters
        .iter()
        .flat_map(|c| &c.urls)
        .filter_map(|u| {
            let &(k, f) = facts.get(&crate::hash::fnv(u))?;
            Some((k, u.as_str(), f))
        })
        .collect();
    found.sort_by_key(|&(k, u, _)| (k, u));
    let mut ev = IndexEvidence::default();
    ev.set_files(places.names.clone());
    for (k, u, f) in found {
        let place = match places.at.get(k) {
            Some(&(file, offset)) if file != NO_FILE && captures[k].len > 0 => Some(Place {
                file,
                offset,
                len: captures[k].len,
            }),
            _ => None,
        };
        ev.insert_at(u, f, place);
    }
    Some(ev)
}

/// The index's length cohorts ([`crate::evidence::cohorts`]) as `length:<first URL>` clusters
/// of the URLs as read (each URL's spelling from the cluster it was first read into).
/// [`union_shared`] then joins each with its members' digest groups.
///
/// # Complexity
/// `O(u)` hashing for `u` URL occurrences, plus [`crate::evidence::cohorts`].
fn length_cohorts(
    clusters: &[Cluster],
    captures: &[crate::evidence::Capture],
    st: &crate::evidence::Stats,
) -> Vec<Cluster> {
    let cohorts = crate::evidence::cohorts(captures, st);
    if cohorts.is_empty() {
        return Vec::new();
    }
    let wanted: HashSet<u64> = cohorts.iter().flatten().copied().collect();
    let mut spelled: HashMap<u64, &str> = HashMap::with_capacity(wanted.len());
    for u in clusters.iter().flat_map(|c| &c.urls) {
        let h = crate::hash::fnv(u);
        if wanted.contains(&h) {
            spelled.entry(h).or_insert(u.as_str());
        }
    }
    cohorts
        .into_iter()
        .filter_map(|c| {
            let mut urls: Vec<String> = c
                .iter()
                .filter_map(|h| spelled.get(h).map(|u| u.to_string()))
                .collect();
            // A URL of another host under a colliding hash joins no cohort.
            let host = crate::evidence::template_of(urls.first()?).0;
            urls.retain(|u| crate::evidence::template_of(u).0 == host);
            let id = format!("length:{}", urls.first()?);
            Some(Cluster { id, urls })
        })
        .collect()
}

/// Each URL of `urls` once, the first occurrence kept. Most clusters are one or two URLs:
/// compared directly; larger ones through a set of borrowed URLs (no copy of each).
///
/// # Complexity
/// `O(n)` expected for `n` URLs.
fn dedup_urls(urls: &mut Vec<String>) {
    match urls.len() {
        0 | 1 => {}
        2 => {
            if urls[0] == urls[1] {
                urls.pop();
            }
        }
        _ => {
            let keep: Vec<bool> = {
                let mut seen = HashSet::with_capacity(urls.len());
                urls.iter().map(|u| seen.insert(u.as_str())).collect()
            };
            let mut k = keep.iter();
            urls.retain(|_| *k.next().unwrap_or(&true));
        }
    }
}

/// Signal clusters that share a URL, united (connected components) within each site: a page,
/// the URL that redirects to it, the one that declares it canonical and the other captures of
/// its payload are one page. Clusters are united per site: a cluster spanning sites takes part
/// through its per-site parts, so a URL of one site never links pages of another (a page of
/// `evil.example` captured with the payloads of two `victim.example` pages does not make those
/// pages one). A cluster none of whose parts is united with another is kept whole (a digest
/// group spanning sites, which `learn` splits per site unless `--allow-cross-site`). A redirect
/// or canonical to another site links nothing on the target's site (each of its URLs there is
/// a part of its own), and a pair of one declaring URL and its one target is kept whole even
/// beside the target's own capture (the consent `learn` reads it as, [`crate::rules`]). The united
/// cluster keeps the first id's text after its signal prefix, under all the signals joined
/// (`digest+redirect:…`, see [`crate::rules::signals_of`]). Clusters given as such (TSV, JSON
/// lines) are never united: they are the user's truth.
///
/// # Complexity
/// `O(u · α(p))` for `u` URL occurrences and `p` per-site parts (union-find by URL; sites by
/// hash).
fn union_shared(clusters: Vec<Cluster>) -> Vec<Cluster> {
    fn find(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    // Per-site parts: (original cluster, its id, URLs), in order of first URL. A redirect or
    // canonical spanning sites is its declaring site's word only: its URLs on the other site
    // are parts of one URL each, so it never links two pages there.
    let mut parts: Vec<(usize, String, Vec<String>)> = Vec::new();
    let mut parts_of: Vec<Vec<usize>> = Vec::with_capacity(clusters.len());
    let mut consent: Vec<bool> = Vec::with_capacity(clusters.len());
    // Declared clusters spanning sites: never kept whole unless a consent pair.
    let mut scattered: Vec<bool> = Vec::with_capacity(clusters.len());
    for (i, c) in clusters.into_iter().enumerate() {
        let mut mine: Vec<usize> = Vec::new();
        let declarer = declared_only(&c.id);
        let sites = crate::rules::per_site(c.urls);
        let spans = sites.len() > 1;
        for urls in sites {
            match declarer {
                Some(d) if spans && !urls.iter().any(|u| u == d) => {
                    for u in urls {
                        parts.push((i, c.id.clone(), vec![u]));
                        mine.push(parts.len() - 1);
                    }
                }
                _ => {
                    parts.push((i, c.id.clone(), urls));
                    mine.push(parts.len() - 1);
                }
            }
        }
        consent.push(spans && declarer.is_some() && mine.len() == 2);
        scattered.push(spans && declarer.is_some());
        parts_of.push(mine);
    }
    let mut parent: Vec<usize> = (0..parts.len()).collect();
    {
        let mut owner: HashMap<&str, usize> = HashMap::new();
        for (k, (_, _, urls)) in parts.iter().enumerate() {
            for u in urls {
                match owner.get(u.as_str()) {
                    Some(&j) => {
                        let (a, b) = (find(&mut parent, k), find(&mut parent, j));
                        if a != b {
                            // The earlier part leads (first-seen order is kept).
                            parent[a.max(b)] = a.min(b);
                        }
                    }
                    None => {
                        owner.insert(u.as_str(), k);
                    }
                }
            }
        }
    }
    let roots: Vec<usize> = (0..parts.len()).map(|k| find(&mut parent, k)).collect();
    let mut size = vec![0usize; parts.len()];
    for &r in &roots {
        size[r] += 1;
    }
    // A cross-site pair a URL declared ({declarer, target}, [`declared_only`]) stays whole
    // when each of its two parts' components holds no URL beyond the part and no other such
    // pair: what else it meets there (the target's own capture) adds nothing and is absorbed.
    // Anything more (a target other pages share, a target two declarers name, a declarer with
    // two targets) and the pair is split as any cluster, whatever the input's order.
    let mut urls_in = vec![0usize; parts.len()];
    // (Counted only when there is a pair to judge: most indexes hold none.)
    if consent.iter().any(|&c| c) {
        let mut seen: HashSet<&str> = HashSet::new();
        for (k, (_, _, urls)) in parts.iter().enumerate() {
            for u in urls {
                if seen.insert(u.as_str()) {
                    urls_in[roots[k]] += 1;
                }
            }
        }
    }
    // Components wanted by candidate pairs, and by how many.
    let mut wanted: HashMap<usize, usize> = HashMap::new();
    for (i, mine) in parts_of.iter().enumerate() {
        if consent[i] {
            for &k in mine {
                *wanted.entry(roots[k]).or_default() += 1;
            }
        }
    }
    let mut claimed: HashMap<usize, usize> = HashMap::new();
    for (i, mine) in parts_of.iter().enumerate() {
        let keep = consent[i]
            && mine
                .iter()
                .all(|&k| urls_in[roots[k]] == parts[k].2.len() && wanted[&roots[k]] == 1);
        if keep {
            claimed.extend(mine.iter().map(|&k| (roots[k], i)));
        } else {
            consent[i] = false;
        }
    }
    // Components, each at its first part; clusters kept whole where nothing united them.
    let mut out: Vec<Option<Cluster>> = Vec::new();
    let mut at: HashMap<usize, usize> = HashMap::new();
    let mut signals: Vec<std::collections::BTreeSet<&'static str>> = Vec::new();
    // Whether a slot's id is already that of a part joining two URLs or more.
    let mut named: Vec<bool> = Vec::new();
    let mut parts: Vec<Option<(usize, String, Vec<String>)>> =
        parts.into_iter().map(Some).collect();
    for (i, mine) in parts_of.iter().enumerate() {
        let whole = consent[i] || (!scattered[i] && mine.iter().all(|&k| size[roots[k]] == 1));
        if whole {
            let mut c: Option<Cluster> = None;
            for &k in mine {
                let (_, id, urls) = parts[k].take().expect("each part once");
                match &mut c {
                    Some(c) => c.urls.extend(urls),
                    None => c = Some(Cluster { id, urls }),
                }
            }
            out.push(c);
            signals.push(Default::default());
            named.push(true);
            continue;
        }
        for &k in mine {
            let r = roots[k];
            if claimed.get(&r).is_some_and(|&j| j != i) {
                // A URL a consent pair holds (its own capture, another redirect to it).
                parts[k] = None;
                continue;
            }
            let slot = *at.entry(r).or_insert_with(|| {
                out.push(None);
                signals.push(Default::default());
                named.push(false);
                out.len() - 1
            });
            let (_, id, urls) = parts[k].take().expect("each part once");
            // A part of one URL (a page's own digest, a cross-site group's share of this site)
            // joins nothing by itself: its signal is no evidence of the united cluster.
            if urls.len() >= 2 {
                signals[slot].extend(crate::rules::signals_of(&id));
            }
            // The id is the first part's of two URLs or more (a one-URL part, which joins
            // nothing, names the cluster only when no part joins anything).
            let joins = urls.len() >= 2;
            match &mut out[slot] {
                Some(lead) => {
                    if joins && !named[slot] {
                        lead.id = id;
                        named[slot] = true;
                    }
                    lead.urls.extend(urls)
                }
                None => {
                    out[slot] = Some(Cluster { id, urls });
                    named[slot] = joins;
                }
            }
        }
    }
    out.into_iter()
        .zip(signals)
        .filter_map(|(c, sig)| {
            let mut c = c?;
            // Each URL once, in first-seen order (linear: a united digest group may be huge).
            dedup_urls(&mut c.urls);
            let (prefix, rest) = c.id.split_once(':').unwrap_or(("", c.id.as_str()));
            let names: Vec<&str> = sig.iter().copied().collect();
            let names = names.join("+");
            if !sig.is_empty() && names != prefix {
                c.id = format!("{names}:{rest}");
            }
            Some(c)
        })
        .collect()
}

/// The URL that declared a cluster whose signals are all declarations (`redirect:…`,
/// `canonical:…`, `redirect+canonical:…`): its id's text after the prefix. `None` for any
/// cluster a digest, a length cohort or the user's own id made.
fn declared_only(id: &str) -> Option<&str> {
    let (_, rest) = id.split_once(':')?;
    let mut any = false;
    for s in crate::rules::signals_of(id) {
        if !matches!(s, "redirect" | "canonical") {
            return None;
        }
        any = true;
    }
    any.then_some(rest)
}

/// Group `(cluster, url)` rows into clusters, in first-seen order.
pub fn rows_to_clusters(rows: &[(String, String)]) -> Vec<Cluster> {
    let mut acc = Acc::new();
    for (c, u) in rows {
        acc.push(c, u);
    }
    acc.clusters
}

fn trunc(s: &str) -> String {
    s.chars().take(80).collect()
}

/// Most lines one quoted CSV field may span.
const CSV_FIELD_LINES: usize = 8;

/// Most bytes one quoted CSV field may span.
const CSV_FIELD_BYTES: usize = 64 << 10;

/// The fields of one CSV record (RFC 4180 quoting, read by `csv-core`), or `None` when the text
/// ends inside a quoted field (the record goes on on the next line).
fn csv_fields(text: &str) -> Option<Vec<String>> {
    use csv_core::{ReadRecordResult, Reader};
    let mut input = Vec::with_capacity(text.len() + 1);
    input.extend_from_slice(text.as_bytes());
    // The terminator closes the record unless it falls inside quotes.
    input.push(b'\n');
    let mut rdr = Reader::new();
    let mut out = vec![0u8; input.len()];
    let mut ends = vec![0usize; 8];
    let (mut i, mut o, mut e) = (0, 0, 0);
    loop {
        let (res, ni, no, ne) = rdr.read_record(&input[i..], &mut out[o..], &mut ends[e..]);
        (i, o, e) = (i + ni, o + no, e + ne);
        match res {
            ReadRecordResult::Record => break,
            ReadRecordResult::OutputFull => out.resize(out.len() * 2, 0),
            ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
            // Out of input inside a quoted field (a blank text never gets here: callers skip it).
            ReadRecordResult::InputEmpty | ReadRecordResult::End => return None,
        }
    }
    let mut start = 0;
    Some(
        ends[..e]
            .iter()
            .map(|&end| {
                let f = String::from_utf8_lossy(&out[start..end]).into_owned();
                start = end;
                f
            })
            .collect(),
    )
}

/// Split a TSV line (tabs, no quoting), or a CSV record.
/// The fields of a TSV or CSV line: borrowed from the line where no unquoting is needed (every
/// TSV field), so a 10 M-line TSV costs no string per field.
fn split_fields(line: &str, tsv: bool) -> Vec<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    if tsv {
        return line.split('\t').map(Cow::Borrowed).collect();
    }
    match csv_fields(line) {
        Some(v) => v.into_iter().map(Cow::Owned).collect(),
        None => vec![Cow::Borrowed(line)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_like_url_table() {
        for (u, want) in [
            ("http://h/1", true),
            ("https://x.org/a#What to Expect", true),
            ("https://x.org/a b?q=c d", true),
            ("not a url", false),
            ("http://h/1\nx", false),
            ("http://h/\u{0b}1", false),
            ("http://h/\u{3000}1", false),
        ] {
            assert_eq!(looks_like_url(u), want, "{u:?}");
        }
        // Read and learned from, as `normalize` reads it: the space is percent-encoded.
        let dir = std::env::temp_dir().join(format!("dedust-space-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("c.tsv");
        std::fs::write(
            &p,
            "cluster\turl\na\thttps://x.org/a b\na\thttps://x.org/a b?s=1\n",
        )
        .unwrap();
        let (c, rep) = read_clusters(p.to_str().unwrap(), InputFormat::Auto).unwrap();
        assert_eq!((c.len(), c[0].urls.len(), rep.skipped), (1, 2, 0));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn csv_fields_table() {
        let v = |x: &[&str]| Some(x.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        for (text, want) in [
            ("a,b", v(&["a", "b"])),
            ("\"http://h/1?a=1,2\",x", v(&["http://h/1?a=1,2", "x"])),
            ("\"say \"\"hi\"\"\",x", v(&["say \"hi\"", "x"])),
            ("a,,", v(&["a", "", ""])),
            (
                "x,\"http://h/1\nhttp://h/2\"",
                v(&["x", "http://h/1\nhttp://h/2"]),
            ),
            // A quote inside an unquoted field is text.
            ("a\"b,c", v(&["a\"b", "c"])),
            // Open quotes: the record goes on.
            ("x,\"http://h/3", None),
            ("\"a\nb", None),
        ] {
            assert_eq!(csv_fields(text), want, "{text:?}");
        }
    }

    fn read(name: &str, data: &[u8]) -> Result<(Vec<Cluster>, ReadReport)> {
        read_clusters_from(std::io::Cursor::new(data.to_vec()), name, InputFormat::Auto)
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn formats_table() {
        // (name, content, clusters, records, skipped, filtered)
        let cases: &[(&str, &[u8], usize, usize, usize, usize)] = &[
            ("a.tsv", b"cluster\turl\nx\thttp://h/1\nx\thttp://h/2\ny\thttp://h/3\n", 2, 3, 0, 0),
            ("a.tsv", b"id\tcluster\turl\n1\tx\thttp://h/1\n2\tx\tbad\n", 1, 1, 1, 0),
            ("a.csv", b"url,cluster\n\"http://h/1?a=1,2\",x\nhttp://h/2,x\n", 1, 2, 0, 0),
            // A stray quote takes 8 lines with it, and each of them counts.
            (
                "a.csv",
                b"url,cluster\n\"http://h/0,x\nhttp://h/1,x\nhttp://h/2,x\nhttp://h/3,x\nhttp://h/4,x\n\
                  http://h/5,x\nhttp://h/6,x\nhttp://h/7,x\nhttp://h/8,x\nhttp://h/9,x\n",
                1,
                2,
                8,
                0,
            ),
            (
                "a.jsonl",
                b"{\"cluster\":\"x\",\"url\":\"http://h/1\"}\n{\"digest\":\"y\",\"urls\":[\"http://h/2\",\"http://h/3\"]}\n{oops\n",
                2,
                3,
                1,
                0,
            ),
            ("a.txt", b"abc http://h/1 http://h/2\ndef\n", 1, 2, 1, 0),
            (
                "a.cdxj",
                b"h)/ 2024 {\"url\": \"http://h/\", \"status\": \"200\", \"digest\": \"D1\"}\nh)/ 2025 {\"url\": \"http://h/\", \"status\": \"200\", \"digest\": \"D1\"}\nh)/ 2025 {\"url\": \"https://h/\", \"status\": \"200\", \"digest\": \"D1\"}\nh)/x 2025 {\"url\": \"https://h/x\", \"mime\": \"warc/revisit\", \"digest\": \"D1\"}\n",
                // The revisit joins the group of its digest.
                1,
                4,
                0,
                0,
            ),
            ("a.tsv", b"cluster\turl\nx\thttp://h/\xff\xfe\nx\thttp://h/2\n", 1, 1, 1, 0),
            // A byte order mark before the header or the first record is skipped.
            ("a.tsv", b"\xEF\xBB\xBFcluster\turl\nx\thttp://h/1\n", 1, 1, 0, 0),
            ("a.jsonl", b"\xEF\xBB\xBF{\"cluster\":\"x\",\"url\":\"http://h/1\"}\n", 1, 1, 0, 0),
            // A quoted field over two lines is one record (a bad URL here), not two.
            ("a.csv", b"cluster,url\n\"x\ny\",http://h/1\nz,http://h/2\n", 2, 2, 0, 0),
            ("a.csv", b"cluster,url\nx,\"http://h/1\nhttp://h/2\"\nz,http://h/3\n", 1, 1, 1, 0),
            ("a.csv", b"cluster,url\nx,http://h/1\nz,\"http://h/3\n", 1, 1, 1, 0),
            // Common Crawl's columnar index as CSV: a digest group (http and https), a redirect
            // pair; robots.txt and a 404 filtered; a 200 without a digest skipped.
            (
                "cc.csv",
                b"url_surtkey,url,fetch_status,content_digest,content_mime_type,warc_record_length,fetch_redirect\n\
                  h)/,http://h/,200,D1,text/html,900,\n\
                  h)/,https://h/,200,D1,text/html,905,\n\
                  h)/old,http://h/old,301,D2,text/html,300,https://h/new\n\
                  h)/robots.txt,http://h/robots.txt,200,D3,text/plain,100,\n\
                  h)/y,http://h/y,404,D4,text/html,100,\n\
                  h)/z,http://h/z,200,,text/html,100,\n",
                2,
                3,
                1,
                2,
            ),
            // The query kept status 200 only: no `fetch_status` column.
            ("cc.csv", b"url,content_digest\nhttp://h/a,D1\nhttp://h/b,D1\nhttp://h/c,D2\n", 2, 3, 0, 0),
        ];
        for (name, data, nc, nr, ns, nf) in cases {
            let (c, rep) = read(name, data).unwrap();
            assert_eq!(
                (c.len(), rep.records, rep.skipped, rep.filtered),
                (*nc, *nr, *ns, *nf),
                "{name}: {:?}",
                String::from_utf8_lossy(data)
            );
        }
    }

    #[test]
    fn open_skips_a_byte_order_mark_plain_or_gzipped() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("dedust-bom-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = b"\xEF\xBB\xBFhttp://h/1\n";
        let plain = dir.join("u.txt");
        std::fs::write(&plain, text).unwrap();
        let gz = dir.join("u.txt.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(text).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        for p in [plain, gz] {
            let mut s = String::new();
            open(p.to_str().unwrap())
                .unwrap()
                .read_to_string(&mut s)
                .unwrap();
            assert_eq!(s, "http://h/1\n", "{}", p.display());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn web_archive_indexes_table() {
        // (name, content, expected clusters "id url url…", skipped, filtered)
        let cdx11 = " CDX N b a m s k r M S V g\n\
            h)/a 20240101000000 http://h/a text/html 200 D1 - - 10 0 f.warc.gz\n\
            h)/b 20240101000000 http://h/b text/html 200 D1 - - 10 0 f.warc.gz\n\
            h)/old 20240101000000 http://h/old text/html 301 D2 /a - 10 0 f.warc.gz\n\
            h)/gone 20240101000000 http://h/gone text/html 404 D3 - - 10 0 f.warc.gz\n\
            h)/loop 20240101000000 http://h/loop text/html 302 D4 http://h/loop - 10 0 f.warc.gz\n\
            h)/bad 20240101000000 http://h/bad text/html 302 D5 http://[::1 - 10 0 f.warc.gz\n\
            h)/short 20240101000000 http://h/short text/html 200\n";
        let cases: &[(&str, &str, &[&str], usize, usize)] = &[
            (
                "index.txt",
                cdx11,
                // The redirect and the digest group share `http://h/a`: one page.
                &["digest+redirect:D1 http://h/a http://h/b http://h/old"],
                2,
                2,
            ),
            // No header: 9 fields (`N b a m s k r V g`), a relative `Location`.
            (
                "-",
                "h)/x 20240101000000 https://h/x text/html 302 D - 0 f.warc.gz\n\
                 h)/y 20240101000000 https://h/y text/html 302 D ../z?a=1 0 f.warc.gz\n",
                &["redirect:https://h/y https://h/y https://h/z?a=1"],
                0,
                1,
            ),
            // A Common Crawl shard's name says nothing; the content is CDXJ (with `redirect`).
            (
                "cdx-00187.gz",
                "h)/ 2024 {\"url\": \"http://h/\", \"status\": \"301\", \"redirect\": \"https://h/\"}\n\
                 h)/ 2024 {\"url\": \"https://h/\", \"status\": \"200\", \"digest\": \"D\"}\n\
                 h)/?a={x} 2024 {\"url\": \"https://h/?a={x}\", \"status\": \"500\"}\n",
                // The digest group is one URL: only the redirect joins the two.
                &["redirect:http://h/ http://h/ https://h/"],
                0,
                1,
            ),
        ];
        for (name, data, want, ns, nf) in cases {
            let (c, rep) = read(name, data.as_bytes()).unwrap();
            let got: Vec<String> = c
                .iter()
                .map(|c| format!("{} {}", c.id, c.urls.join(" ")))
                .collect();
            assert_eq!(got, *want, "{name}");
            assert_eq!(
                (rep.skipped, rep.filtered),
                (*ns, *nf),
                "{name}: {:?}",
                rep.first_bad
            );
            assert_eq!(rep.format, Some(InputFormat::Cdxj), "{name}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn revisits_join_only_a_200s_group() {
        let line = |u: &str, json: &str| format!("x 2024 {{\"url\": \"{u}\", {json}}}\n");
        let ok = |d: &str| format!(r#""status": "200", "mime": "text/html", "digest": "{d}""#);
        let rev = |d: &str| format!(r#""mime": "warc/revisit", "digest": "{d}""#);
        // (lines, clusters "id url…", records, revisits, filtered)
        let cases: Vec<(String, &[&str], usize, usize, usize)> = vec![
            // A revisit joins the 200's group, before or after it in the input.
            (
                line("http://h.org/b", &rev("D1")) + &line("http://h.org/a", &ok("D1")),
                &["digest:D1 http://h.org/a http://h.org/b"],
                2,
                1,
                0,
            ),
            // A revisit of a 404's payload, or of a digest never captured: no cluster.
            (
                line("http://h.org/c", r#""status": "404", "digest": "D2""#)
                    + &line("http://h.org/d", &rev("D2"))
                    + &line("http://h.org/e", &rev("D9"))
                    + &line("http://h.org/a", &ok("D1")),
                &["digest:D1 http://h.org/a"],
                1,
                0,
                3,
            ),
            // A revisit with a status 200 or `-` joins too; its repeats count, one URL kept.
            (
                line("http://h.org/a", &ok("D1"))
                    + &line(
                        "https://h.org/a",
                        r#""status": "200", "mime": "warc/revisit", "digest": "D1""#,
                    )
                    + &line(
                        "https://h.org/a",
                        r#""status": "-", "mime": "warc/revisit", "digest": "D1""#,
                    ),
                &["digest:D1 http://h.org/a https://h.org/a"],
                3,
                2,
                0,
            ),
            // robots.txt forms no cluster, whatever its status.
            (
                line("http://h.org/robots.txt", &ok("D1"))
                    + &line("https://h.org/robots.txt", &rev("D1"))
                    + &line("http://h.org/a", &ok("D1")),
                &["digest:D1 http://h.org/a"],
                1,
                0,
                2,
            ),
        ];
        for (data, want, records, revisits, filtered) in cases {
            let (c, rep) = read("i.cdxj", data.as_bytes()).unwrap();
            let got: Vec<String> = c
                .iter()
                .map(|c| format!("{} {}", c.id, c.urls.join(" ")))
                .collect();
            assert_eq!(got, want, "{data}");
            assert_eq!(
                (rep.records, rep.revisits, rep.filtered),
                (records, revisits, filtered),
                "{data}"
            );
        }
        // Legacy CDX: `m` is the mime, `s` `-` for a revisit.
        let cdx = " CDX N b a m s k r M S V g\n\
            h)/a 2024 http://h/a text/html 200 D1 - - 10 0 f.warc.gz\n\
            h)/a 2024 https://h/a warc/revisit - D1 - - 10 0 f.warc.gz\n";
        let (c, rep) = read("i.cdx", cdx.as_bytes()).unwrap();
        assert_eq!(c[0].urls, ["http://h/a", "https://h/a"]);
        assert_eq!(rep.revisits, 1);
    }

    /// Review of #11: another site's URLs never join or link a site's clusters. A page of
    /// `evil.example` captured with the payloads of two victim pages, and redirecting to two
    /// more, makes no victim-only cluster of two pages.
    #[test]
    fn another_site_cannot_unite_a_sites_pages() {
        let line = |u: &str, json: &str| format!("x 2024 {{\"url\": \"{u}\", {json}}}\n");
        let mut data = String::new();
        data += &line(
            "https://victim.example/a",
            r#""status": "200", "digest": "A""#,
        );
        data += &line(
            "https://victim.example/b",
            r#""status": "200", "digest": "B""#,
        );
        data += &line(
            "https://evil.example/x",
            r#""status": "200", "digest": "A""#,
        );
        data += &line(
            "https://evil.example/x",
            r#""status": "200", "digest": "B""#,
        );
        for to in ["https://victim.example/c", "https://victim.example/d"] {
            data += &line(
                "https://evil.example/y",
                &format!(r#""status": "302", "redirect": "{to}""#),
            );
        }
        let (clusters, rep) = read("i.cdxj", data.as_bytes()).unwrap();
        assert_eq!(rep.cross_site, 2);
        for c in &clusters {
            let victims = c.urls.iter().filter(|u| u.contains("victim")).count();
            assert!(victims <= 1, "{clusters:?}");
        }
    }

    /// A redirect to another site is kept as one pair of its declaring URL and its target
    /// (the declaring site's consent), absorbing the target's own capture and later
    /// redirects to it; a declarer with two targets, or a target that shares a payload with
    /// another page, makes no pair. No cluster ever holds two URLs of the target's site.
    #[test]
    fn cross_site_declarations_are_consent_pairs_or_nothing() {
        let line = |u: &str, json: &str| format!("x 2024 {{\"url\": \"{u}\", {json}}}\n");
        let to = |t: &str| format!(r#""status": "301", "redirect": "{t}""#);
        let page = |d: &str| format!(r#""status": "200", "digest": "{d}""#);
        // (lines, clusters as `id urls…`)
        let cases: Vec<(Vec<String>, Vec<&str>)> = vec![
            // The pair, and the target's own capture absorbed.
            (
                vec![
                    line("https://old.org/p", &to("https://new.org/p")),
                    line("https://new.org/p", &page("A")),
                ],
                vec!["redirect:https://old.org/p https://old.org/p https://new.org/p"],
            ),
            // A second site's redirect to the same target: no pair, whatever the order.
            (
                vec![
                    line("https://old.org/p", &to("https://new.org/p")),
                    line("https://other.org/q", &to("https://new.org/p")),
                    line("https://new.org/p", &page("A")),
                ],
                vec![
                    "redirect:https://old.org/p https://old.org/p",
                    "redirect:https://old.org/p https://new.org/p",
                    "redirect:https://other.org/q https://other.org/q",
                ],
            ),
            // Two targets: no pair, and the targets stay apart.
            (
                vec![
                    line("https://old.org/p", &to("https://new.org/a")),
                    line("https://old.org/p", &to("https://new.org/b")),
                ],
                vec![
                    "redirect:https://old.org/p https://old.org/p",
                    "redirect:https://old.org/p https://new.org/a",
                    "redirect:https://old.org/p https://new.org/b",
                ],
            ),
            // The target shares its payload with another page: the site's own group, no pair.
            (
                vec![
                    line("https://old.org/p", &to("https://new.org/a")),
                    line("https://new.org/a", &page("A")),
                    line("https://new.org/a?x=1", &page("A")),
                ],
                vec![
                    "redirect:https://old.org/p https://old.org/p",
                    "digest:A https://new.org/a https://new.org/a?x=1",
                ],
            ),
        ];
        for (lines, want) in cases {
            let data = lines.concat();
            let (c, rep) = read("i.cdxj", data.as_bytes()).unwrap();
            let got: Vec<String> = c
                .iter()
                .map(|c| format!("{} {}", c.id, c.urls.join(" ")))
                .collect();
            assert_eq!(got, want, "{data}");
            assert!(rep.cross_site >= 1);
        }
    }

    #[test]
    fn format_is_found_from_content_not_name() {
        for (name, data, want) in [
            ("x.cdxj", "cluster\turl\na\thttp://h/\n", InputFormat::Tsv),
            (
                "x.tsv",
                "{\"cluster\": \"a\", \"url\": \"http://h/\"}\n",
                InputFormat::Jsonl,
            ),
            (
                "x.csv",
                "h)/ 2024 {\"url\": \"http://h/\", \"status\": 200, \"digest\": \"D\"}\n",
                InputFormat::Cdxj,
            ),
            ("-", "abc http://h/1 http://h/2\n", InputFormat::Ache),
        ] {
            let (_, rep) = read(name, data.as_bytes()).unwrap();
            assert_eq!(rep.format, Some(want), "{name}: {data}");
        }
    }

    #[test]
    fn cdxj_collapses_repeated_captures() {
        let (c, _) = read(
            "a.cdxj",
            b"h)/ 1 {\"url\": \"http://h/\", \"status\": 200, \"digest\": \"D\"}\nh)/ 2 {\"url\": \"http://h/\", \"status\": 200, \"digest\": \"D\"}\n",
        )
        .unwrap();
        assert_eq!(c[0].urls, vec!["http://h/".to_string()]);
    }

    #[test]
    fn tsv_lines_read_as_one_piece_whatever_the_block_size() {
        // Runs of one id, an id coming back later, CRLF, blank lines, bad lines of each kind,
        // non-UTF-8 bytes, a last line without a newline; and a line past the cap.
        let mut body: Vec<u8> = Vec::new();
        for i in 0..40 {
            let line = match i % 10 {
                0 => format!("c{}\thttp://h.org/{i}\r\n", i / 20),
                1 => "\n".to_string(),
                2 => format!("\thttp://h.org/{i}\n"),
                3 => format!("c{}\tnot a url\n", i % 3),
                4 => "lonely\n".to_string(),
                5 => format!("c9\thttp://h.org/é{i}\n"),
                _ => format!("c{}\thttp://h.org/{i}\n", i % 3),
            };
            body.extend_from_slice(line.as_bytes());
            if i == 25 {
                body.extend_from_slice(b"c1\thttp://h.org/\xff\xfe\n");
            }
        }
        body.extend_from_slice(b"c2\thttp://h.org/last");
        let read = |body: &[u8], block: usize| {
            let (mut acc, mut rep) = (Acc::new(), ReadReport::default());
            let mut r = std::io::Cursor::new(body.to_vec());
            rep.lines = 1;
            let state = (&mut (), no_state as fn(&mut (), &[u8]));
            line_blocks(&mut r, &mut acc, &mut rep, state, &tsv_line((0, 1)), block).unwrap();
            let clusters: Vec<(String, Vec<String>)> =
                acc.clusters.into_iter().map(|c| (c.id, c.urls)).collect();
            (
                clusters,
                rep.lines - 1,
                rep.records,
                rep.skipped,
                rep.first_bad,
            )
        };
        // The reference: one piece, line by line, runs added in order.
        let whole = Piece::parse(&body, &mut (), &tsv_line((0, 1)));
        let mut acc = Acc::new();
        for run in whole.runs {
            acc.push_run(run);
        }
        let want_clusters: Vec<(String, Vec<String>)> =
            acc.clusters.into_iter().map(|c| (c.id, c.urls)).collect();
        let want_bad: Vec<(usize, String)> = whole
            .rep
            .first_bad
            .into_iter()
            .map(|(k, w)| (k + 1, w))
            .collect();
        assert_eq!(whole.rep.lines, 41 + 1);
        assert_eq!(want_bad[0], (4, "empty cluster id".to_string()));
        assert!(want_clusters
            .iter()
            .any(|(id, u)| id == "c1" && u.len() > 3));
        for block in [1, 2, 7, 64, 1000, LINE_BLOCK] {
            let got = read(&body, block);
            assert_eq!(got.0, want_clusters, "block {block}");
            assert_eq!(
                (got.1, got.2, got.3),
                (whole.rep.lines, whole.rep.records, whole.rep.skipped),
                "block {block}"
            );
            assert_eq!(got.4, want_bad, "block {block}");
        }
        // The same lines read one by one (the CSV reader, on the same text with commas): the
        // same clusters, counts and messages.
        let csv: Vec<u8> = body
            .iter()
            .map(|&b| if b == b'\t' { b',' } else { b })
            .collect();
        let as_file = |head: &[u8], rest: &[u8], f| {
            let mut file = head.to_vec();
            file.extend_from_slice(rest);
            let (c, rep) = read_clusters_from(std::io::Cursor::new(file), "t", f).unwrap();
            let c: Vec<(String, Vec<String>)> = c.into_iter().map(|c| (c.id, c.urls)).collect();
            (c, rep.lines, rep.records, rep.skipped, rep.first_bad)
        };
        assert_eq!(
            as_file(b"cluster\turl\n", &body, InputFormat::Tsv),
            as_file(b"cluster,url\n", &csv, InputFormat::Csv)
        );
        // A line past the cap, with and without its newline, between two records: skipped and
        // counted at its line number, never held whole beside a block; cut at the block's end
        // (small blocks) or inside one (a block larger than the line).
        let long = vec![b'x'; MAX_RECORD_LINE as usize + 10];
        for tail in [&b"\nc\thttp://h.org/b\n"[..], b""] {
            let mut body = b"c\thttp://h.org/a\n".to_vec();
            body.extend_from_slice(&long);
            body.extend_from_slice(tail);
            for block in [7, 1 << 20, MAX_RECORD_LINE as usize + 100] {
                let (clusters, lines, records, skipped, bad) = read(&body, block);
                let urls = if tail.is_empty() { 1 } else { 2 };
                assert_eq!(clusters[0].1.len(), urls, "block {block}");
                assert_eq!(
                    (lines, records, skipped),
                    (urls + 1, urls, 1),
                    "block {block}"
                );
                let why = format!("longer than {MAX_RECORD_LINE} bytes");
                assert_eq!(bad, vec![(3, why)], "block {block}");
            }
        }
    }

    #[test]
    fn line_formats_read_as_one_piece_whatever_the_block_size() {
        // What each piece reads: clusters, counts and the first skipped lines.
        type Got = (
            Vec<(String, Vec<String>)>,
            [usize; 6],
            Vec<(usize, String)>,
            Vec<crate::evidence::Capture>,
        );
        fn got(acc: Acc, rep: ReadReport) -> Got {
            let c = acc.clusters.into_iter().map(|c| (c.id, c.urls)).collect();
            let n = [
                rep.lines,
                rep.records,
                rep.skipped,
                rep.filtered,
                rep.redirects,
                rep.cross_site,
            ];
            (c, n, rep.first_bad, acc.captures)
        }
        fn check<S: Clone + Send>(
            body: &[u8],
            s0: S,
            advance: fn(&mut S, &[u8]),
            f: LineFn<'_, S>,
        ) {
            let mut acc = Acc::new();
            let (mut rep, mut lineno) = (ReadReport::default(), 0);
            Piece::parse(body, &mut s0.clone(), f).add_to(&mut acc, &mut rep, &mut lineno);
            let want = got(acc, rep);
            assert!(want.1[1] > 3 && want.1[2] > 0, "{want:?}");
            for block in [1, 2, 7, 64, 1000, LINE_BLOCK] {
                let (mut acc, mut rep) = (Acc::new(), ReadReport::default());
                let mut r = std::io::Cursor::new(body.to_vec());
                let mut s = s0.clone();
                line_blocks(&mut r, &mut acc, &mut rep, (&mut s, advance), f, block).unwrap();
                assert_eq!(got(acc, rep), want, "block {block}");
            }
        }
        // CDX: CDXJ lines, then a legacy header, its lines, another header naming the fields in
        // another order and its lines; "CDX " inside a line, a header line that is not UTF-8
        // (no header), a redirect, a redirect to another site, a 404, bad lines.
        let mut cdx =
            b"org,h)/ 1 {\"url\": \"http://h.org/a\", \"status\": \"200\", \"digest\": \"D1\"}\n\
            org,h)/ 1 {\"url\": \"http://h.org/b\", \"status\": \"200\", \"digest\": \"D1\"}\n\
            org,h)/ 1 {\"url\": \"https://h.org/b\", \"mime\": \"warc/revisit\", \"digest\": \"D1\"}\n\
            org,h)/ 1 {\"url\": \"https://h.org/q\", \"mime\": \"warc/revisit\", \"digest\": \"D7\"}\n\
            org,h)/ 1 {bad json\n\
            \n\
             CDX N b a m s k r M S V g\n\
            org,h)/c 1 http://h.org/c text/html 200 D2 - - 10 0 f.warc.gz\n\
            org,h)/c 1 https://h.org/c warc/revisit - D2 - - 10 0 f.warc.gz\n\
            org,h)/d 1 http://h.org/CDX%20d text/html 200 D2 - - 10 0 f.warc.gz\n\
            org,h)/e 1 http://h.org/e text/html 301 D3 /c - 10 0 f.warc.gz\n\
            org,h)/f 1 http://h.org/f text/html 301 D3 http://other.net/ - 10 0 f.warc.gz\n\
            org,h)/g 1 http://h.org/g text/html 404 D4 - - 10 0 f.warc.gz\r\n"
                .to_vec();
        cdx.extend_from_slice(b" CDX a N b s k \xff\norg,h)/z 1 x CDX a\n");
        cdx.extend_from_slice(
            b"org,h)/h 1 http://h.org/h text/html 200 D2 - - 10 0 f.warc.gz\n \
              CDX a b N s k\n\
              http://h.org/i 1 org,h)/i 200 D2\n\
              http://h.org/j 1 org,h)/j 200 D5\n\
              http://h.org/k 1 org,h)/k 200\n\
              http://h.org/l 1 org,h)/l 200 D5\n",
        );
        // A line of `CDX ` over and over (no header: looked at once, not once a match), then
        // one more line.
        cdx.push(b'x');
        cdx.extend_from_slice(&b"CDX ".repeat(1 << 16));
        cdx.extend_from_slice(b"\nhttp://h.org/m 1 h)/m 200 D5");
        check(&cdx, None, cdx_state, &cdxj_line);
        // JSONL and ACHE: no state between lines.
        let jsonl = b"{\"cluster\": \"a\", \"url\": \"http://h.org/1\"}\n\
            {\"digest\": \"a\", \"urls\": [\"http://h.org/2\", \"nope\", \"http://h.org/3\"]}\n\
            {\"cluster\": 7, \"url\": \"http://h.org/4\"}\n\
            not json\n\
            {\"url\": \"http://h.org/5\"}\n\
            \n\
            {\"id\": \"a\", \"url\": \"http://h.org/6\"}";
        check(jsonl, (), no_state, &jsonl_line);
        let ache = b"H1 http://h.org/1 http://h.org/2\nH2 nope\n\nH1 http://h.org/3\nH3 http://h.org/4 x\nH4";
        check(ache, (), no_state, &ache_line);
    }

    #[test]
    fn errors() {
        assert!(matches!(read("a.tsv", b""), Err(Error::EmptyInput { .. })));
        assert!(matches!(
            read("a.tsv", b"a\tb\nx\ty\n"),
            Err(Error::Format { line: 1, .. })
        ));
        assert!(matches!(
            read("a.jsonl", b"{bad\n"),
            Err(Error::EmptyInput { skipped: 1, .. })
        ));
        assert!(matches!(
            read("crawl.gz", b"WARC/1.1\r\nWARC-Type: warcinfo\r\n"),
            Err(Error::EmptyInput { skipped: 1, .. })
        ));
        // An input where every line is bad names the first ones and why.
        let e = read("i.cdxj", b"x 2024 {\"url\": 5}\nx 2024 {bad\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("2 malformed lines skipped"), "{e}");
        assert!(e.contains("\n  line 1: no `url`"), "{e}");
        assert!(e.contains("\n  line 2: bad JSON"), "{e}");
        // Each skipped line says what is wrong with it.
        let (_, rep) = read(
            "a.tsv",
            b"cluster\turl\n \thttp://h/1\nc\tnot a url\nc\nc\thttp://h/2\n",
        )
        .unwrap();
        let why: Vec<&str> = rep.first_bad.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            why,
            [
                "empty cluster id",
                "not a URL: \"not a url\"",
                "missing column"
            ]
        );
    }
}
