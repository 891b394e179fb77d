//! The rule model: what a rule matches ([`Source`]), what it writes ([`Target`]), its kind, and
//! the [`Rule`] record the rule file stores (readable forms, provenance, validation numbers,
//! revocation).
//!
//! In: nothing (types and constructors). Out: [`Rule`]s that the engine
//! ([`crate::normalize`]) applies and the rule file ([`crate::rulefile`]) reads and writes.
//! Invariants: this module and the engine know nothing of learning, content or the CLI; a
//! [`Rule`] built with [`Rule::new`] has its readable forms, regex and id filled in.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The type of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CapType {
    /// `[0-9]+`
    Int,
    /// `[0-9a-fA-F]+` (values of 8 characters or more)
    Hex,
    /// `[A-Za-z]+`
    Alpha,
    /// `[A-Za-z0-9]+`
    Alnum,
    /// anything within the unit, possibly empty
    Any,
}

impl CapType {
    /// The regex (shared subset of Rust `regex` and `java.util.regex`) of one capture.
    pub fn regex(self, delim: &str) -> String {
        match self {
            CapType::Int => "[0-9]+".into(),
            CapType::Hex => "[0-9a-fA-F]+".into(),
            CapType::Alpha => "[A-Za-z]+".into(),
            CapType::Alnum => "[A-Za-z0-9]+".into(),
            CapType::Any => format!("[^{delim}]*"),
        }
    }

    /// Whether one character belongs to the class.
    pub fn accepts(self, c: char) -> bool {
        match self {
            CapType::Int => c.is_ascii_digit(),
            CapType::Hex => c.is_ascii_hexdigit(),
            CapType::Alpha => c.is_ascii_alphabetic(),
            CapType::Alnum => c.is_ascii_alphanumeric(),
            CapType::Any => true,
        }
    }

    /// The narrowest type that accepts all `values`.
    ///
    /// ```
    /// use dedust_core::CapType;
    /// assert_eq!(CapType::infer(["12", "7"]), CapType::Int);
    /// assert_eq!(CapType::infer(["26d0af1715cac27a", "ffff0000aa"]), CapType::Hex);
    /// assert_eq!(CapType::infer(["hybrid", "threaded"]), CapType::Alpha);
    /// assert_eq!(CapType::infer(["a-b", "c"]), CapType::Any);
    /// ```
    pub fn infer<'a>(values: impl IntoIterator<Item = &'a str>) -> CapType {
        let values: Vec<&str> = values.into_iter().collect();
        let all = |f: &dyn Fn(&str) -> bool| {
            !values.is_empty() && values.iter().all(|v| !v.is_empty() && f(v))
        };
        if all(&|v| v.bytes().all(|b| b.is_ascii_digit())) {
            CapType::Int
        } else if all(&|v| v.len() >= 8 && v.bytes().all(|b| b.is_ascii_hexdigit())) {
            CapType::Hex
        } else if all(&|v| v.bytes().all(|b| b.is_ascii_alphabetic())) {
            CapType::Alpha
        } else if all(&|v| v.bytes().all(|b| b.is_ascii_alphanumeric())) {
            CapType::Alnum
        } else {
            CapType::Any
        }
    }

    /// Name used in readable patterns (`int`, `hex` …).
    pub fn name(self) -> &'static str {
        match self {
            CapType::Int => "int",
            CapType::Hex => "hex",
            CapType::Alpha => "alpha",
            CapType::Alnum => "alnum",
            CapType::Any => "any",
        }
    }
}

/// One piece of a path segment or parameter value pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Piece {
    /// Literal text.
    Lit(String),
    /// A typed capture.
    Cap(CapType),
}

/// Pattern of a parameter value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValPat {
    /// Any value, or none.
    Any,
    /// A bare name without `=`.
    Bare,
    /// `=` followed by a value matching the pieces.
    Pieces(Vec<Piece>),
}

/// The matching side of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Source {
    /// Scheme to match; `None` matches any.
    pub scheme: Option<String>,
    /// Host to match exactly (the rule's scope).
    pub host: String,
    /// Path segments (after the leading `/`) to match; `None` matches any path.
    pub path: Option<Vec<Vec<Piece>>>,
    /// Parameters that must occur exactly once, sorted by name.
    pub required: Vec<(String, ValPat)>,
    /// Parameters that may occur (any number of times, any value); they are dropped.
    pub optional: Vec<String>,
    /// Whether other parameters are allowed (they are kept).
    pub rest: bool,
}

/// How a target path segment is made.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SegOut {
    /// Literal text.
    Lit(String),
    /// Copy of source segment number `n`.
    Copy(usize),
    /// The value of source parameter `name` (query → path alias).
    Param(String),
}

/// How a target parameter value is made.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValOut {
    /// Copy the source parameter of the same name (with or without `=` as it was).
    Copy,
    /// A bare name.
    Bare,
    /// `=` and a literal value.
    Lit(String),
    /// `=` and source path segment number `n` (path → query alias).
    Seg(usize),
}

/// The rewriting side of a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Target {
    /// New scheme; `None` keeps it.
    pub scheme: Option<String>,
    /// New host; `None` keeps it.
    pub host: Option<String>,
    /// New path; `None` keeps it.
    pub path: Option<Vec<SegOut>>,
    /// New query parameters (plus the kept rest when the source allows it); `None` keeps the query.
    pub query: Option<Vec<(String, ValOut)>>,
}

/// The kind of a rule (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// Path/query pattern to target template.
    Template,
    /// Scheme/host alias.
    Alias,
    /// Drop one parameter in context.
    Drop,
    /// A hand-written (imported) Java regex applied to the whole URL with `replaceAll`, on any
    /// host; `regex` and `replacement` hold it (`dedust import`).
    Regex,
    /// A cross-host URL convention ([`Convention`]), learned from evidence on many sites.
    Convention,
}

/// A URL convention: two spellings that many sites serve with the same content. Each maps
/// both spellings to one of them (a dedup key, not a fetch target: an `http`-only site keeps
/// being fetched over `http`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Convention {
    /// `http` ≡ `https`: the key uses `https`.
    Https,
    /// `www.h` ≡ `h`: the key drops a leading `www.` (when a dot remains).
    StripWww,
    /// `/dir/NAME` ≡ `/dir/` for a default document NAME (`index.html`, `index.php`, …).
    DefaultDoc(String),
    /// `/a/b/` ≡ `/a/b`: the key drops one trailing slash (never the root `/`).
    TrailingSlash,
    /// `/a/WORD` ≡ `/a` and `/a/WORD/` ≡ `/a/` for a literal last segment WORD that is a word
    /// ([`suffix_like`]: no dot, not value-like), such as AMP pages' `amp`: the key drops it
    /// (never the first segment: `/amp/` is kept).
    Suffix(String),
    /// `/a/b;NAME=v` ≡ `/a/b`: the key drops a `;NAME=…` path parameter (up to the next `;`)
    /// from the path's last segment, the first one of that name: a Java servlet's
    /// `;jsessionid=`, `;sid=` (see [`path_param`]).
    PathParam(String),
    /// `L.h` ≡ `h` for a mobile or AMP host label L ([`MOBILE_LABELS`]: `m.`, `mobile.`,
    /// `amp.`): the key drops it (when a dot remains and the registrable domain is the same),
    /// as [`Convention::StripWww`] drops `www.`.
    HostLabel(String),
    /// `/Dir/Page.EXT` ≡ `/dir/page.EXT` where the path's last segment ends in `.EXT` (a
    /// lower-case extension such as `asp` or `aspx`): servers that ignore the case of paths
    /// (IIS) answer both. The key lower-cases the path's ASCII letters (not the query, and not
    /// the hex digits of a `%XX` escape); see [`lower_path`].
    LowerPath(String),
    /// `/a/file.EXT?q` ≡ `/a/file.EXT` for a static file type EXT ([`STATIC_EXTENSIONS`]: a
    /// stylesheet, script, icon, font or Flash file): a plain file server answers the same
    /// bytes whatever the query (cache busters `?ver=4.9.13`, a player's `?mediatype=audio`).
    /// The key drops the whole query; see [`static_extension`].
    StaticQuery(String),
}

/// The file types a [`Convention::StaticQuery`] may be learned for: files a web server sends
/// as they are, whatever the query. Not among them: server pages (`php`, `asp`, `jsp`…), feeds
/// and sitemaps (`xml`), documents (`pdf`: often a script's output,
/// `send-pdf.cgi/Name.pdf?acc_num=…`), raster images (resizers and image CDNs read `?w=`,
/// `?width=`, `?resize=`; hit counters draw `counter.gif?page=…`), SVG (badge and icon
/// services draw `badge.svg?style=flat`) and audio or video (pseudo-streaming servers seek with
/// `video.flv?start=…`).
pub const STATIC_EXTENSIONS: &[&str] = &[
    "css", "js", "ico", "swf", "woff", "woff2", "ttf", "otf", "eot",
];

/// The extension of a path's last segment when it names a static file type
/// ([`STATIC_EXTENSIONS`], written in lower case).
///
/// ```
/// use dedust_core::__private::model::static_extension;
/// assert_eq!(static_extension("/includes/players.js"), Some("js"));
/// assert_eq!(static_extension("/a/style.CSS"), None);
/// assert_eq!(static_extension("/showthread.php"), None);
/// ```
pub fn static_extension(path: &str) -> Option<&str> {
    path_extension(path).filter(|e| STATIC_EXTENSIONS.contains(e))
}

/// The extension of a path's last segment when it is a [`Convention::LowerPath`] candidate:
/// 1 to 5 lower-case ASCII letters or digits after the last `.`, starting with a letter.
///
/// ```
/// use dedust_core::__private::model::path_extension;
/// assert_eq!(path_extension("/News/Item.aspx"), Some("aspx"));
/// assert_eq!(path_extension("/a/Item.ASPX"), None);
/// assert_eq!(path_extension("/a.b/item"), None);
/// assert_eq!(path_extension("/a/v1.2"), None);
/// ```
pub fn path_extension(path: &str) -> Option<&str> {
    let last = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    let (_, ext) = last.rsplit_once('.')?;
    let ok = (1..=5).contains(&ext.len())
        && ext.as_bytes()[0].is_ascii_lowercase()
        && ext
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    ok.then_some(ext)
}

/// `path` with its ASCII letters lower-cased, but for the two hex digits of each `%XX` escape
/// (the base layer writes them upper-case); `None` when nothing changes.
///
/// ```
/// use dedust_core::__private::model::lower_path;
/// assert_eq!(lower_path("/News/%C3%A9T.aspx").as_deref(), Some("/news/%C3%A9t.aspx"));
/// assert_eq!(lower_path("/news/item.aspx"), None);
/// ```
pub fn lower_path(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    for i in upper_outside_escapes(b) {
        out.get_or_insert_with(|| b.to_vec())[i] = b[i].to_ascii_lowercase();
    }
    // Only ASCII bytes changed, so the text stays UTF-8.
    out.map(|v| String::from_utf8(v).expect("ASCII case change keeps UTF-8"))
}

/// Whether [`lower_path`] changes `path` (without building the new path).
///
/// ```
/// use dedust_core::__private::model::lower_path_changes;
/// assert!(lower_path_changes("/News/x.aspx"));
/// assert!(!lower_path_changes("/n/%C3%A9.aspx"));
/// ```
pub fn lower_path_changes(path: &str) -> bool {
    upper_outside_escapes(path.as_bytes()).next().is_some()
}

/// Positions of the upper-case ASCII letters of `b` outside `%XX` escapes, in order.
fn upper_outside_escapes(b: &[u8]) -> impl Iterator<Item = usize> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            let k = i;
            if b[k] == b'%'
                && k + 2 < b.len()
                && b[k + 1].is_ascii_hexdigit()
                && b[k + 2].is_ascii_hexdigit()
            {
                i += 3;
                continue;
            }
            i += 1;
            if b[k].is_ascii_uppercase() {
                return Some(k);
            }
        }
        None
    })
}

/// The leading host labels a [`Convention::HostLabel`] may drop: the separate mobile and AMP
/// sites that declare their desktop page canonical. Other labels (`blog.`, `shop.`) name parts
/// of a site whose pages differ.
pub const MOBILE_LABELS: &[&str] = &["m", "mobile", "amp"];

/// The [`MOBILE_LABELS`] label that starts `host`, with the rest of the host.
///
/// ```
/// use dedust_core::__private::model::mobile_label;
/// assert_eq!(mobile_label("m.example.org"), Some(("m", "example.org")));
/// assert_eq!(mobile_label("mail.example.org"), None);
/// ```
pub fn mobile_label(host: &str) -> Option<(&str, &str)> {
    let (l, rest) = host.split_once('.')?;
    (MOBILE_LABELS.contains(&l) && rest.contains('.')).then_some((l, rest))
}

/// The byte range, within `path`, of the first `;NAME=…` parameter of its last segment (from
/// the `;` to the next `;` or the end of the segment), if any.
///
/// ```
/// use dedust_core::__private::model::path_param;
/// let p = "/shop/item.do;jsessionid=A1B2;x=1";
/// assert_eq!(path_param(p, "jsessionid").map(|r| &p[r]), Some(";jsessionid=A1B2"));
/// assert_eq!(path_param("/a;sid=1/b", "sid"), None); // not in the last segment
/// assert_eq!(path_param("/a;sidx=1", "sid"), None);
/// ```
pub fn path_param(path: &str, name: &str) -> Option<std::ops::Range<usize>> {
    let start = path.rfind('/').map_or(0, |i| i + 1);
    let last = &path[start..];
    let mut from = 0;
    while let Some(k) = last[from..].find(';').map(|k| from + k) {
        let rest = &last[k + 1..];
        if rest.strip_prefix(name).is_some_and(|r| r.starts_with('=')) {
            let end = rest.find(';').map_or(last.len(), |e| k + 1 + e);
            return Some(start + k..start + end);
        }
        from = k + 1;
    }
    None
}

/// The names of the `;NAME=…` parameters of a path's last segment, in order.
///
/// ```
/// use dedust_core::__private::model::path_param_names;
/// assert_eq!(path_param_names("/s/item.do;jsessionid=A;v=2").collect::<Vec<_>>(), ["jsessionid", "v"]);
/// ```
pub fn path_param_names(path: &str) -> impl Iterator<Item = &str> {
    let last = &path[path.rfind('/').map_or(0, |i| i + 1)..];
    last.split(';')
        .skip(1)
        .filter_map(|kv| kv.split_once('=').map(|(n, _)| n))
        .filter(|n| !n.is_empty())
}

/// Whether a path segment can be the WORD of a [`Convention::Suffix`]: not empty, no `.` (a
/// document name is a [`Convention::DefaultDoc`]) and not value-like (digits, `-`, `_`, long).
///
/// ```
/// use dedust_core::__private::model::suffix_like;
/// assert!(suffix_like("amp"));
/// assert!(!suffix_like("index.html") && !suffix_like("page-2") && !suffix_like(""));
/// ```
pub fn suffix_like(seg: &str) -> bool {
    !seg.is_empty() && !seg.contains('.') && !value_like(seg)
}

/// One rewrite rule, as stored in the rule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// Stable id (`r` + a hash of the pattern and target).
    pub id: String,
    /// The kind.
    pub kind: RuleKind,
    /// The host the rule applies to.
    pub scope: String,
    /// Readable pattern, e.g. `https://h.org/showthread.php?t={int:t}&[p]&[sid]`.
    pub pattern: String,
    /// Readable target, e.g. `https://h.org/showthread.php?t={t}`.
    pub target: String,
    /// Whole-URL regex (shared subset of Rust `regex` and `java.util.regex`), when expressible.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// Replacement for [`Rule::regex`] with `$n` groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// Matching side.
    pub source: Source,
    /// Rewriting side.
    pub output: Target,
    /// Number of clusters the rule was learned from (a drop with a typed value: added up over
    /// its values, so a cluster showing two values counts twice).
    pub clusters: usize,
    /// Number of distinct URLs it was learned from (a drop with a typed value: added up over its
    /// values).
    pub urls: usize,
    /// Up to 3 example clusters (a few URLs each; a drop with a typed value: the 3 smallest of
    /// its per-value examples, so one cluster may show twice).
    pub examples: Vec<Vec<String>>,
    /// Validation: URLs the rule rewrote that merged with another URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support: Option<usize>,
    /// Validation: those merged with a URL of another true cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp: Option<usize>,
    /// Validation: fp / support.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fpr: Option<f64>,
    /// Cross-host rules (scope [`ANY_HOST`]): registrable domains on which validation saw the
    /// rule merge duplicates and never different content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sites: Option<usize>,
    /// Cross-host rules: registrable domains where the rule does not apply, because there it
    /// merged different content or the host's own rules use what it changes (host evidence beats
    /// global evidence). Sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
    /// Cross-host evidence only (the rule file's `evidence`): the registrable domains where the
    /// candidate merged duplicates and never different content, so `merge` can unite them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supporting: Vec<String>,
    /// Cross-host rules: the hosts whose own URLs attest the target form — validation saw the
    /// rule send a URL of the host to another URL of it with the same content, and never to
    /// different content. The crawler exports make a cross-host rule a fetch rewrite on these
    /// hosts only (a dedup key elsewhere). Sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attested: Vec<String>,
    /// For [`RuleKind::Convention`]: the convention applied (source/output are then unused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub convention: Option<Convention>,
    /// The signals the rule was learned from, when its clusters came from a crawl's own
    /// declarations ([`signals_of`]): clusters per signal (`digest`, `redirect`, `canonical`).
    /// Empty for clusters given as such (a TSV of duplicate clusters).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub signals: BTreeMap<String, usize>,
    /// Why the rule may move URLs to another host or literal path prefix
    /// ([`site_move`](crate::site_move)): the rewritten URLs declared the target themselves
    /// (redirects, canonicals), or the user allowed aliases between sites. Absent on every rule
    /// that moves nothing; a rule that moves URLs without it is left out when a rule file is read
    /// ([`crate::RuleFile::parse`]) and never learned. See [`crate::Consent`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<crate::moves::Consent>,
    /// Registrable domains a cross-host template was learned from, recorded only by one shard of
    /// a crawl learned in pieces (`learn --shard`): a single run proposes such a template only
    /// from clusters on two sites at least, so shards propose it from one and
    /// [`merge`](crate::merge()) sums this over the shards (a site lies in one shard) and keeps
    /// the candidate only when the sum reaches 2. Absent otherwise (and in merged rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domains: Option<usize>,
    /// When and from what the rule was learned (`learn` and `import` write it; `merge` keeps the
    /// newest). Absent in files written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learned: Option<Learned>,
    /// Set when the content of a later crawl refuted the rule (`verify --revoke`). A revoked rule
    /// stays in the file as a record; `normalize`, the exports, `evaluate`, `validate` and
    /// `verify` leave it out, and `merge` keeps it revoked unless an input learned it again
    /// after the revocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<Revoked>,
    /// The consensus of the family of clusters the rule was learned from (`learn` writes it;
    /// provenance, as [`Rule::learned`]: two runs that learn one rule from other samples of its
    /// family may record other values). Absent in files written before it and in imported rules.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus: Option<ConsensusRecord>,
}

/// What a rule file records of a learned rule's consensus: the family's clusters read column by
/// column (see `dedust_learn::family`).
///
/// ```
/// use dedust_core::__private::model::ConsensusRecord;
/// let r: ConsensusRecord = serde_json::from_str(
///     r#"{"family":"*://f.org/s.php?[mode]&t={int}","clusters":2,"urls":4,"columns":["?mode optional alpha hybrid","?t capture int 1 2"]}"#,
/// ).unwrap();
/// assert_eq!(r.clusters, 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsensusRecord {
    /// The consensus in the pattern notation: invariant units literal, captures typed
    /// (`{int}`), variants as their values (`{forum.php|index.php}`), optional parameters in
    /// brackets, parameters found in some clusters only in parentheses.
    pub family: String,
    /// Clusters of the family read.
    pub clusters: usize,
    /// Their URLs read.
    pub urls: usize,
    /// Every column that is not invariant: `unit class type value…` (`?p optional int 7 9`;
    /// units `scheme`, `host`, `/N` for the N-th path segment, `?name`; classes `capture`,
    /// `variant`, `optional`, `partial`; at most four values, then `…`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
}

/// Provenance of a rule: when and from what it was learned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Learned {
    /// UTC time, RFC 3339 (`2026-11-24T20:31:00Z`): the run's clock, or `SOURCE_DATE_EPOCH`
    /// when set (reproducible files).
    pub at: String,
    /// The inputs, as named on the command line (`-` for stdin).
    pub from: Vec<String>,
}

/// A revocation: the content of a later crawl refuted the rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Revoked {
    /// UTC time, RFC 3339, as [`Learned::at`].
    pub at: String,
    /// The pages that refuted it, as named on the command line.
    pub by: String,
    /// Crawled page pairs the rule merged.
    pub pairs: usize,
    /// Of those, the pairs whose content differs.
    pub refuted: usize,
}

/// The signals a cluster may come from, by its id's prefix (`redirect:http://h/old`): a payload
/// digest group of 200 captures, a redirect (URL and `Location`), a declared canonical (page and
/// its `rel=canonical`), a length cohort of an index (pages of one URL template that all have
/// one record length).
pub const SIGNALS: [&str; 4] = ["digest", "redirect", "canonical", "length"];

/// The signals of a cluster id: `["redirect"]` for `redirect:http://h/old`, `["digest",
/// "redirect"]` for a united `digest+redirect:…`; none for any other id. Readers of crawl
/// records name their clusters so (the `input` readers); every signal is evidence validated like
/// any other, and a cluster counts once for each of its signals.
///
/// ```
/// let s: Vec<&str> = dedust_core::__private::model::signals_of("digest+redirect:http://h/old").collect();
/// assert_eq!(s, ["digest", "redirect"]);
/// assert_eq!(dedust_core::__private::model::signals_of("c0042").count(), 0);
/// assert_eq!(dedust_core::__private::model::signals_of("digest+mine:x").count(), 0);
/// ```
pub fn signals_of(id: &str) -> impl Iterator<Item = &'static str> + '_ {
    let prefix = id.split_once(':').map_or("", |(p, _)| p);
    let known = !prefix.is_empty() && prefix.split('+').all(|p| SIGNALS.contains(&p));
    prefix
        .split('+')
        .filter(move |_| known)
        .filter_map(|p| SIGNALS.iter().copied().find(|s| *s == p))
}

/// The scope (and `source.host`) of a cross-host rule: it applies to every host, those in
/// [`Rule::except`] excepted — hosts never seen in training included.
pub const ANY_HOST: &str = "*";

impl Rule {
    /// A rule with its readable forms, regex and id filled in ([`crate::render::describe`]); no
    /// provenance or validation numbers yet. The scope is the source host.
    pub fn new(kind: RuleKind, source: Source, output: Target) -> Rule {
        let mut rule = Rule::bare(kind, source, output);
        crate::render::describe(&mut rule);
        rule
    }

    /// A rule with empty readable forms, no regex and no id (the caller fills them in, as
    /// [`Rule::new`] does from the source and output; an imported regex rule from its pattern).
    pub(crate) fn bare(kind: RuleKind, source: Source, output: Target) -> Rule {
        Rule {
            id: String::new(),
            kind,
            scope: source.host.clone(),
            pattern: String::new(),
            target: String::new(),
            regex: None,
            replacement: None,
            source,
            output,
            clusters: 0,
            urls: 0,
            examples: vec![],
            support: None,
            fp: None,
            fpr: None,
            sites: None,
            except: vec![],
            supporting: vec![],
            attested: vec![],
            convention: None,
            signals: BTreeMap::new(),
            consent: None,
            domains: None,
            learned: None,
            revoked: None,
            consensus: None,
        }
    }

    /// Whether the rule is in the cross-host tier (scope [`ANY_HOST`]).
    pub fn is_global(&self) -> bool {
        self.source.host == ANY_HOST
    }

    /// Whether the rule may apply to a URL on `host` (its scope, less its exceptions: registrable
    /// domains, so a refuted site's other hosts are excepted too).
    pub fn applies_to_host(&self, host: &str) -> bool {
        if self.is_global() {
            self.except.is_empty() || {
                let d = crate::site::registrable_domain(host);
                self.except.binary_search_by(|e| e.as_str().cmp(d)).is_err()
            }
        } else {
            self.source.host == host
        }
    }
}

impl Source {
    /// Every URL: any scheme, any host ([`ANY_HOST`]), any path, every parameter kept. Narrow it
    /// with struct update syntax (`Source { required: …, ..Source::everywhere() }`).
    pub fn everywhere() -> Source {
        Source {
            scheme: None,
            host: ANY_HOST.to_string(),
            path: None,
            required: vec![],
            optional: vec![],
            rest: true,
        }
    }
}

impl Target {
    /// Changes nothing: scheme, host, path and query kept (`query: Some(vec![])` then writes
    /// only the kept rest: a parameter drop).
    pub fn unchanged() -> Target {
        Target {
            scheme: None,
            host: None,
            path: None,
            query: None,
        }
    }
}

/// The rule of a cross-host URL convention.
pub fn convention_rule(c: Convention) -> Rule {
    let mut rule = Rule::new(
        RuleKind::Convention,
        Source::everywhere(),
        Target::unchanged(),
    );
    rule.convention = Some(c);
    crate::render::describe(&mut rule);
    rule
}

/// Whether a path segment looks like a value (id, slug, hash) rather than a fixed name.
#[doc(hidden)]
pub fn value_like(seg: &str) -> bool {
    seg.bytes().any(|b| b.is_ascii_digit())
        || seg.len() > 24
        || seg.bytes().any(|b| matches!(b, b'-' | b'_' | b'+' | b','))
        || seg.contains('%')
}

/// A duplicate cluster: an id and its URLs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// Cluster id (ground truth label).
    pub id: String,
    /// Member URLs as read.
    pub urls: Vec<String>,
}

impl Cluster {
    /// The cluster's truth label: a 64-bit hash of its id ([`label_of`]), so parts of one split,
    /// and validation and metrics, label a cluster alike.
    pub fn label(&self) -> usize {
        label_of(&self.id)
    }
}

/// The truth label of a cluster id (see [`Cluster::label`]).
///
/// ```
/// let c = dedust_core::Cluster { id: "t1".into(), urls: vec![] };
/// assert_eq!(c.label(), dedust_core::__private::model::label_of("t1"));
/// ```
pub fn label_of(id: &str) -> usize {
    crate::hash::fnv(id) as usize
}
