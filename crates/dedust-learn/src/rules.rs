//! Rules: candidate rewrite rules from cluster consensus, generalized across the clusters of a site.
//!
//! In: duplicate clusters of base-normalized URLs. Out: candidate [`Rule`]s (not yet validated).
//!
//! Per cluster (in parallel): the URLs are tokenized, aligned ([`crate::align()`]) and read into a
//! consensus ([`crate::consensus()`]). The canonical member is the one with fewest tokens; ties go
//! to the member whose tokens fill the most-shared columns, then to `https`, then to text order, so
//! that the choice is the same in every cluster of a site. Every other member gives one *pair*
//! `member → canonical`, described unit by unit (scheme, host, path segments, query parameters):
//! a unit of the canonical that also occurs in the member is *copied*, a member unit absent from the
//! canonical is *dropped*, a canonical unit absent from the member is a *literal*.
//!
//! Pairs are grouped across clusters by a key that keeps structure (host, literal path segments such
//! as `showthread.php`, the names of the parameters that are kept) and abstracts values (numbers, ids,
//! slugs). Inside a group, literals that vary become typed captures ([`CapType`]): `{int}`, `{hex}`,
//! `{alpha}`, `{alnum}`, `{any}`; copied units are always captures, which is what lets a rule apply
//! to URLs never seen. Parameters are matched as a set, never by position; a group whose target is
//! derived from the source merges its dropped id-valued parameters into one optional set
//! (`showthread.php?t={int}&[p]&[sid]`; a setting such as `mode=hybrid` is dropped per value by a
//! drop rule instead, [`id_valued`]). Three kinds come out:
//! * [`RuleKind::Template`]: path and query patterns to a target template;
//! * [`RuleKind::Alias`]: scheme/host aliases with path and query copied (`http`→`https`, `www.`);
//! * [`RuleKind::Drop`]: drop one parameter anywhere on the host when the context parameters are
//!   present, keeping every other parameter — by name when its values are [`high_entropy`], else
//!   one rule per value (`mode=hybrid` apart from `mode=threaded`).
//!
//! The same pairs are also evidence for the **cross-host tier** (scope [`ANY_HOST`]): a parameter
//! dropped on any host (anywhere, and on one literal path such as `/showthread.php`), with a typed
//! value when high-entropy, per value otherwise; and the URL [`Convention`]s `http` ≡ `https`,
//! `www.h` ≡ `h`, `m.h` ≡ `h` (a mobile or AMP host), `/dir/NAME` ≡ `/dir/`, `/a/` ≡ `/a`, `/a/WORD/` ≡ `/a/` (a suffix such as
//! `amp`), `/a/b;NAME=v` ≡ `/a/b` (a path parameter such as `;jsessionid=`), seen in either
//! direction; and cross-host templates: a template whose target derives
//! from its source, whose path has a literal signature and that no convention explains, keyed
//! without its host (`/s/{int}` ≡ `/product.php?id={int}` on every site of one software), built
//! only from pairs of two registrable domains or more, and dropping no parameter. Validation
//! ([`crate::validate`]) pools their evidence over hosts, counts sites and adds host exceptions.
//!
//! Invariants: the output is deterministic (sorted by key, independent of thread count); every
//! rule's target, applied to a member it was learned from and matches, gives that member's
//! canonical URL (a template's optional set holds only id-valued parameters, [`id_valued`], so
//! a member carrying a setting such as `mode=threaded` is matched only once a drop removed it).

use crate::align::align;
use crate::base::{base_normalize, BaseOptions};
use crate::consensus::consensus;
use crate::family::{family_consensus, FamilyClass, FamilyConsensus, Unit};
use crate::tokenize::{split_url, tokenize, Tokens};
use crate::validate::LabeledUrls;
use dedust_core::__private::url_parts::{split_ascii, split_once_ascii};
use dedust_core::Consent;
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

pub use crate::model::*;

/// The WORD of a [`Convention::Suffix`] that `long` has after `short` (path segments; a trailing
/// empty segment, the trailing slash, is ignored on both sides).
fn suffix_of<'a, S: AsRef<str> + PartialEq>(long: &'a [S], short: &[S]) -> Option<&'a S> {
    fn trim<S: AsRef<str>>(s: &[S]) -> &[S] {
        match s.split_last() {
            Some((l, rest)) if l.as_ref().is_empty() => rest,
            _ => s,
        }
    }
    let (name, head) = trim(long).split_last()?;
    let dir_ok = head.last().is_some_and(|d| !d.as_ref().is_empty());
    (dir_ok && head == trim(short) && suffix_like(name.as_ref())).then_some(name)
}

/// The NAME of a [`Convention::PathParam`] that `long` has and `short` lacks: same segments but
/// the last, which is `short`'s plus one `;NAME=value` (`item.do;jsessionid=A1` and `item.do`).
/// NAME is a word (not value-like), so an id written after `;` is not taken for a name.
///
/// # Complexity
/// `O(n)` in the segment's length (attacker-controlled: a segment of 64 KiB of `;a=1`).
fn path_param_of<S: AsRef<str> + PartialEq>(long: &[S], short: &[S]) -> Option<String> {
    let (l, head) = long.split_last()?;
    let (s, shead) = short.split_last()?;
    let (l, s) = (l.as_ref(), s.as_ref());
    if head != shead || l.len() <= s.len() {
        return None;
    }
    let (lb, sb) = (l.as_bytes(), s.as_bytes());
    let d = lb.len() - sb.len();
    let pre = lb.iter().zip(sb).take_while(|(a, b)| a == b).count();
    let suf = lb
        .iter()
        .rev()
        .zip(sb.iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    // Removing `[k, k + d)` gives `short` when `k` is within the common prefix and `k + d` where
    // the common suffix begins; the piece is one whole `;NAME=value` when its `;` is followed by
    // no other before `k + d`, and `k + d` is the next `;` or the end.
    let lo = sb.len().saturating_sub(suf);
    let semis: Vec<usize> = l.match_indices(';').map(|(i, _)| i).collect();
    semis.iter().enumerate().find_map(|(j, &k)| {
        let next = semis.get(j + 1).copied().unwrap_or(lb.len());
        if k < lo || k > pre || next != k + d {
            return None;
        }
        let (name, _) = l[k + 1..k + d].split_once('=')?;
        (!name.is_empty() && !value_like(name)).then(|| name.to_string())
    })
}

pub use dedust_core::__private::model::{label_of, Cluster};

/// Whether a parameter's observed values are high-entropy (ids: session, click, post ids) rather
/// than a few repeated settings (`mode=hybrid`, `print=1`): 16 distinct values or more, at
/// least 3 distinct values making up at least half of the observations, or two observations of
/// two different id-shaped values. High-entropy parameters are dropped by name with a typed
/// value; low-entropy ones are learned per value (`mode=hybrid` may go while `mode=threaded`
/// stays), as in Lei et al.'s pattern tree (WWW 2010).
///
/// ```
/// use dedust_learn::rules::high_entropy;
/// assert!(high_entropy(&["a1f3", "9c2e", "77d0", "0b1a"]));
/// assert!(!high_entropy(&["hybrid", "threaded", "hybrid", "hybrid", "threaded", "hybrid"]));
/// assert!(high_entropy(&["9f8e7d6c", "0a1b2c3d"]));
/// assert!(!high_entropy(&["hybrid", "threaded"]));
/// // 20 product ids, each seen on 3 sites: ids still.
/// let ids: Vec<String> = (0..60).map(|i| (i % 20).to_string()).collect();
/// assert!(high_entropy(&ids.iter().map(String::as_str).collect::<Vec<_>>()));
/// ```
pub fn high_entropy(values: &[&str]) -> bool {
    /// Distinct values from which a parameter is an id whatever the ratio.
    const MANY_VALUES: usize = 16;
    let distinct: BTreeSet<&str> = values.iter().copied().collect();
    // With only two observations, two different id-shaped values (6+ characters with a digit)
    // are taken as ids too.
    let id_like = |v: &&str| v.len() >= 6 && v.bytes().any(|b| b.is_ascii_digit());
    // Settings take a few values; a parameter seen with many is an id, however often each
    // value recurs (pooled over sites, `id=5` is seen on every site that has a fifth product).
    distinct.len() >= MANY_VALUES
        || (distinct.len() >= 3 && distinct.len() * 2 >= values.len())
        || (distinct.len() == 2 && values.len() == 2 && distinct.iter().all(id_like))
}

/// Whether a parameter's observed values (once per cluster, bare names left out) name ids
/// rather than settings: [`high_entropy`], or every value id-shaped (6+ characters with a
/// digit: a session id seen in one cluster). A template's optional set, which drops a parameter
/// whatever its value, holds only such parameters.
///
/// ```
/// # use dedust_learn::rules::id_valued;
/// assert!(id_valued(&["9f8e7d6c"]));
/// assert!(!id_valued(&["hybrid", "threaded"]));
/// assert!(!id_valued(&["1"]));
/// assert!(!id_valued(&[]));
/// ```
pub fn id_valued(values: &[&str]) -> bool {
    let id_like = |v: &&str| v.len() >= 6 && v.bytes().any(|b| b.is_ascii_digit());
    high_entropy(values) || (!values.is_empty() && values.iter().all(id_like))
}

/// Options of candidate learning.
#[derive(Debug, Clone, Copy)]
pub struct LearnOptions {
    /// Base normalization applied first.
    pub base: BaseOptions,
    /// Largest number of members aligned per cluster; bigger clusters are sampled (deterministically).
    pub max_cluster: usize,
    /// Learn aliases between registrable domains from content equality (`--allow-cross-site`).
    /// Off by default: equal text on two sites proves only that one copied the other, so a
    /// cluster spanning several sites is learned as one cluster per site (see README, "Limits
    /// and threat model"). On, an alias still never points a site at one seen in fewer clusters.
    pub allow_cross_site: bool,
    /// A cluster spanning more registrable domains than this is boilerplate — an empty body, a
    /// parked-domain page, a server's 404 template, a counter pixel — not DUST: it is learned as
    /// one cluster per host, so it never joins hosts (`--boilerplate-sites`). Real mirrors span
    /// a few sites; the bytes of an empty page span millions.
    pub boilerplate_sites: usize,
    /// This input is one shard of a crawl learned in pieces (`--shard`): a cross-host template
    /// seen on one site only is still proposed, with [`Rule::domains`] recording its sites, for
    /// `merge` to judge on the count pooled over the shards.
    pub shard: bool,
}

/// Default of [`LearnOptions::boilerplate_sites`].
pub const BOILERPLATE_SITES: usize = 20;

impl Default for LearnOptions {
    fn default() -> Self {
        LearnOptions {
            base: BaseOptions::default(),
            max_cluster: 256,
            allow_cross_site: false,
            boilerplate_sites: BOILERPLATE_SITES,
            shard: false,
        }
    }
}

/// What candidate learning saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LearnStats {
    /// Clusters read.
    pub clusters: usize,
    /// Clusters with at least two distinct URLs after base normalization.
    pub multi: usize,
    /// URLs read.
    pub urls: usize,
    /// URLs the base layer rejected, or that parsers could read as two hosts
    /// ([`dedust_core::trusted_host`]: a `\`, `@` or `%` in the authority, a non-ASCII host…).
    pub bad_urls: usize,
    /// URLs over the learning limits ([`MAX_LEARN_URL`], [`MAX_LEARN_PARTS`]), left out.
    pub too_long: usize,
    /// Clusters larger than the cap (sampled).
    pub capped: usize,
    /// Member → canonical pairs.
    pub pairs: usize,
    /// Clusters spanning several registrable domains, learned as one cluster per site (no
    /// cross-site alias; see [`LearnOptions::allow_cross_site`]).
    pub cross_site: usize,
    /// Clusters spanning more than [`LearnOptions::boilerplate_sites`] registrable domains,
    /// learned as one cluster per host.
    pub boilerplate: usize,
    /// Candidates left out because they move URLs to another host or literal path prefix
    /// ([`dedust_core::site_move`]) without that site's consent: none of their pairs rewrites
    /// the URL that declared the redirect or canonical, and no `--allow-cross-site`. Each as
    /// `(id, pattern, target)`, in candidate order.
    pub no_consent: Vec<(String, String, String)>,
}

/// URL split into the units rules work on, borrowed from the URL (a group of a million pairs
/// holds a million of these while its rule is built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Units<'a> {
    pub scheme: &'a str,
    /// The host with its port, if any (`h.org:8080`): what a rule's scope names.
    pub host: &'a str,
    pub port: &'a str,
    pub segs: Vec<&'a str>,
    pub params: Vec<(&'a str, Option<&'a str>)>,
}

impl<'a> Units<'a> {
    pub(crate) fn parse(url: &'a str) -> Option<Units<'a>> {
        let p = split_url(url)?;
        if !p.userinfo.is_empty() || p.fragment.is_some() {
            return None;
        }
        let segs = if p.path.is_empty() {
            Vec::new()
        } else {
            split_ascii(&p.path[1..], b'/').collect()
        };
        let params = p
            .query
            .map(|q| {
                split_ascii(q, b'&')
                    .filter(|s| !s.is_empty())
                    .map(|kv| match split_once_ascii(kv, b'=') {
                        Some((k, v)) => (k, Some(v)),
                        None => (kv, None),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Some(Units {
            scheme: p.scheme,
            host: p.scope_host(url),
            port: p.port,
            segs,
            params,
        })
    }
}

/// Shape signature of a value-like segment: token kinds with punctuation kept.
fn shape(seg: &str) -> String {
    if is_slug(seg) {
        // One unit, whatever its word count: `/<slug>/dp/<id>` pairs of every title pool.
        return SLUG_SHAPE.to_string();
    }
    if is_code(seg) {
        // One unit, whatever its letters and digits: `B07XJ8C8F5` and `B0C1Z2QW9R` pool.
        return CODE_SHAPE.to_string();
    }
    let mut s = String::with_capacity(seg.len());
    crate::tokenize::path_tokens(seg, |kind, text| match kind {
        crate::TokenKind::Word => s.push('A'),
        crate::TokenKind::Number => s.push('9'),
        _ => s.push_str(text),
    });
    s
}

/// The shape of every slug ([`is_slug`]): no other shape holds an `S` (words are `A`).
const SLUG_SHAPE: &str = "S";

/// The shape of every product code ([`is_code`]).
const CODE_SHAPE: &str = "C";

/// Whether a path segment is a product code: ASCII letters and digits only, both present, at
/// least 6 of them (`B07XJ8C8F5`, `9780262033848X`; not `t123`, `page2`, `123456`).
fn is_code(seg: &str) -> bool {
    seg.len() >= 6
        && seg.bytes().all(|b| b.is_ascii_alphanumeric())
        && seg.bytes().any(|b| b.is_ascii_digit())
        && seg.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Whether a path segment is a slug: parts of letters, digits and percent escapes joined by
/// `-` or `_` alone, at least three parts, at least two of them not all digits
/// (`best-running-shoes-2024`, `caf%C3%A9-au-lait`; not `t-123`, `f-12.html`, `B07XJ8C8F5`,
/// `2024-05-01`).
pub(crate) fn is_slug(seg: &str) -> bool {
    let mut parts = 0;
    let mut words = 0;
    for p in seg.split(['-', '_']) {
        if p.is_empty() || !p.chars().all(|c| c.is_alphanumeric() || c == '%') {
            return false;
        }
        parts += 1;
        words += usize::from(!p.bytes().all(|b| b.is_ascii_digit()));
    }
    parts >= 3 && words >= 2
}

/// Whether a path segment is one unit for alignment: a slug ([`is_slug`]) or a product code
/// ([`is_code`]).
pub(crate) fn is_slug_unit(seg: &str) -> bool {
    is_slug(seg) || is_code(seg)
}

fn seg_tokens(seg: &str) -> Vec<(crate::TokenKind, String)> {
    let mut v = Vec::new();
    crate::tokenize::path_tokens(seg, |kind, text| v.push((kind, text.to_string())));
    v
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum SegKey {
    Lit(String),
    Shape(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum GroupKey {
    Alias {
        from: (String, String),
        to: (String, String),
    },
    Drop {
        host: String,
        context: Vec<String>,
        drop: String,
    },
    /// Cross-host: parameter `name` dropped, anywhere or on one literal path (a path signature
    /// such as `/showthread.php` that recurs across hosts running the same software).
    GlobalDrop {
        name: String,
        path: Option<Vec<String>>,
    },
    /// Cross-host: a URL convention seen in this pair.
    Convention(Convention),
    /// A template from host `from` to host `to` ([`ANY_HOST`] both for a cross-host one). It
    /// matches either scheme and keeps the input's: what it drops or moves does not depend on
    /// the scheme, and a site crawled over `http` is also linked over `https`. The pairs come
    /// with the canonical's scheme and host already (a scheme or host difference is the
    /// alias's observation), so a template never changes the scheme.
    Template {
        from: String,
        to: String,
        path: Option<(Vec<SegKey>, Vec<SegOut>)>,
        /// Source parameter names that are kept (copied) or, for literal targets, all of them.
        params: Vec<String>,
        /// Target query, `None` = copied.
        query: Option<Vec<(String, ValOut)>>,
        /// Literal target (not derived from the source): the source parameters are all required.
        literal: bool,
    },
}

/// One member → target pair of a group, its URLs borrowed from the prepared clusters (a
/// group such as a cross-host drop holds millions).
#[derive(Debug, Clone)]
struct Obs<'a> {
    cluster: usize,
    /// The cluster's signals: bit `i` for [`SIGNALS`]`[i]`; 0 for a declared cluster.
    signal: u8,
    from: Units<'a>,
    from_url: &'a str,
    to_url: &'a str,
}

/// A pair as stored while grouping: cluster, member, and whether the key is an alias key (the
/// member is then described on its own host, otherwise on the canonical one). 12 bytes, so that
/// millions of pairs fit; [`Obs`] is materialized per group when a rule is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pair {
    cluster: u32,
    member: u32,
    alias: bool,
}

/// Pick the canonical member of a cluster (index into `urls`).
/// Site-level shape of a URL: scheme, host, path with value-like segments abstracted, and the
/// sorted parameter names. Used to count how common a URL form is across the clusters of a site.
pub(crate) fn url_shape(url: &str) -> String {
    // The parts `Units::parse` would give, borrowed (this runs on every member of every cluster).
    let Some(p) = split_url(url).filter(|p| p.userinfo.is_empty() && p.fragment.is_none()) else {
        return url.to_string();
    };
    let mut s = String::with_capacity(url.len() + 8);
    s.push_str(p.scheme);
    s.push_str("://");
    s.push_str(p.scope_host(url));
    if !p.path.is_empty() {
        for seg in split_ascii(&p.path[1..], b'/') {
            s.push('/');
            if value_like(seg) {
                s.push_str(&shape(seg));
                s.push('\u{1}');
            } else {
                s.push_str(seg);
            }
        }
    }
    let mut names: Vec<&str> = p
        .query
        .map(|q| {
            split_ascii(q, b'&')
                .filter(|kv| !kv.is_empty())
                .map(dedust_core::__private::base::param_name)
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable();
    names.dedup();
    s.push('?');
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            s.push('&');
        }
        s.push_str(n);
    }
    s
}

/// Popularity key of a URL's scheme and host.
fn site_key(url: &str) -> String {
    match split_url(url) {
        Some(p) => format!("\u{2}{}://{}", p.scheme, p.scope_host(url)),
        None => String::new(),
    }
}

/// Pick the canonical member of a cluster (index into `urls`): fewest tokens; then the URL form
/// found in most clusters of the site (`popularity`), so that every cluster picks the same form;
/// then the member whose tokens fill the most-shared consensus columns; then `https`; then text.
fn canonical<S: AsRef<str>>(urls: &[S], popularity: &HashMap<String, usize>) -> usize {
    let pop: Vec<usize> = urls
        .iter()
        .map(|u| popularity.get(&url_shape(u.as_ref())).copied().unwrap_or(0))
        .collect();
    let ntok: Vec<usize> = urls
        .iter()
        .map(|u| crate::tokenize::token_count(u.as_ref()))
        .collect();
    let key = |i: usize| (ntok[i], std::cmp::Reverse(pop[i]));
    let best = (0..urls.len())
        .map(key)
        .min()
        .expect("cluster is not empty");
    let tied: Vec<usize> = (0..urls.len()).filter(|&i| key(i) == best).collect();
    if tied.len() == 1 {
        return tied[0];
    }
    // Still tied: align the cluster and prefer the member whose tokens sit in the most-shared
    // consensus columns. (Most clusters are decided above, so most are never aligned.) At most
    // `ALIGN_CAP` members are aligned — the tied ones first — so a huge tied cluster (a soft 404
    // over thousands of paths) stays cheap.
    const ALIGN_CAP: usize = 64;
    let mut chosen: Vec<usize> = tied.iter().copied().take(ALIGN_CAP).collect();
    chosen.extend(
        (0..urls.len())
            .filter(|i| !tied.contains(i))
            .take(ALIGN_CAP.saturating_sub(chosen.len())),
    );
    let toks: Vec<Tokens> = chosen.iter().map(|&i| tokenize(urls[i].as_ref())).collect();
    let c = consensus(&align(&toks));
    let occ = c.occupancy();
    let mut score = vec![0usize; urls.len()];
    for (row, &i) in chosen.iter().enumerate() {
        score[i] = c
            .columns
            .iter()
            .zip(&occ)
            .filter(|(col, _)| col.cells[row].is_some())
            .map(|(_, o)| *o)
            .sum();
    }
    tied.into_iter()
        .take(ALIGN_CAP)
        .min_by(|&a, &b| {
            score[b]
                .cmp(&score[a])
                .then_with(|| {
                    let https = |i: usize| urls[i].as_ref().starts_with("https:");
                    https(b).cmp(&https(a))
                })
                .then_with(|| urls[a].as_ref().cmp(urls[b].as_ref()))
        })
        .expect("tied is not empty")
}

/// Base-normalize, dedupe and cap one cluster's URLs; returns the sorted distinct URLs.
pub(crate) fn prepare_cluster(c: &Cluster, opts: &LearnOptions) -> PreparedCluster {
    let mut bad = 0;
    let mut too_long = 0;
    let mut set = BTreeSet::new();
    for u in &c.urls {
        match base_normalize(u, &opts.base) {
            Ok(n) if n.len() > MAX_LEARN_URL || parts(&n) > MAX_LEARN_PARTS => too_long += 1,
            // A URL parsers could read as two hosts decides nothing (`dedust_core::trusted_host`).
            Ok(n) if !trusted_normalized(u, &n) => bad += 1,
            Ok(n) => {
                set.insert(n);
            }
            Err(_) => bad += 1,
        }
    }
    (set.into_iter().collect(), bad, too_long)
}

/// Whether `url`, base-normalized to `n`, names the host the base layer read
/// ([`dedust_core::__private::trust::trusted_as`]).
fn trusted_normalized(url: &str, n: &str) -> bool {
    split_url(n).is_some_and(|p| dedust_core::__private::trust::trusted_as(url, p.host).is_ok())
}

/// A cluster after base normalization: its sorted distinct URLs, the URLs the base layer
/// rejected, and the URLs over the learning limits ([`MAX_LEARN_URL`], [`MAX_LEARN_PARTS`]).
pub(crate) type PreparedCluster = (Vec<String>, usize, usize);

/// Longest URL (bytes, after base normalization) that learning aligns; longer ones are left out
/// and counted. Alignment cost grows with the product of two URLs' token counts, so a hostile
/// 15 KB URL of 5,000 segments would cost gigabytes; real URLs stay far below.
pub const MAX_LEARN_URL: usize = 4096;

/// Most path segments plus query parameters of a URL that learning aligns (more: left out,
/// counted).
pub const MAX_LEARN_PARTS: usize = 256;

/// Path segments plus query parameters (an upper bound: `/` and `&` bytes).
fn parts(url: &str) -> usize {
    url.bytes().filter(|&b| b == b'/' || b == b'&').count()
}

/// Where `learn` puts a URL: its registrable domain and host after base normalization, or
/// `None` when learning leaves the URL out (the base layer rejects it, parsers could read it
/// as two hosts, or it is over [`MAX_LEARN_URL`] / [`MAX_LEARN_PARTS`]). Without `--allow-cross-site`, no evidence crosses
/// sites, so rows keyed by this site can be learned in separate shards; a cluster spanning more
/// than [`LearnOptions::boilerplate_sites`] sites does not even join hosts.
///
/// ```
/// use dedust_learn::learn_site;
/// let got = learn_site("HTTP://Forum.BBC.co.uk:80/a", &Default::default());
/// assert_eq!(got, Some(("bbc.co.uk".to_string(), "forum.bbc.co.uk".to_string())));
/// assert_eq!(learn_site("not a url", &Default::default()), None);
/// assert_eq!(learn_site("https://evil.org\\@victim.org/", &Default::default()), None);
/// ```
pub fn learn_site(url: &str, base: &BaseOptions) -> Option<(String, String)> {
    let n = base_normalize(url, base).ok()?;
    if n.len() > MAX_LEARN_URL || parts(&n) > MAX_LEARN_PARTS || !trusted_normalized(url, &n) {
        return None;
    }
    let host = split_url(&n)?.host;
    Some((
        crate::site::registrable_domain(host).to_string(),
        host.to_string(),
    ))
}

/// A part of a cluster split by host (order kept, parts in order of first URL).
fn per_host(urls: Vec<String>) -> Vec<Vec<String>> {
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for u in urls {
        let h = split_url(&u).map_or("", |p| p.scope_host(&u)).to_string();
        let k = *index.entry(h).or_insert_with(|| {
            parts.push(Vec::new());
            parts.len() - 1
        });
        parts[k].push(u);
    }
    parts
}

/// A cluster's sorted URLs split by registrable domain (order kept within each part, parts in
/// order of first URL). One part, without allocating, when every URL is on one site — the usual
/// case, checked by host first so the Public Suffix List is consulted only when hosts differ.
///
/// # Complexity
/// `O(n)` host comparisons; `O(n)` registrable-domain lookups (hashed) when hosts differ.
pub(crate) fn per_site(urls: Vec<String>) -> Vec<Vec<String>> {
    fn host(u: &str) -> &str {
        split_url(u).map_or("", |p| p.scope_host(u))
    }
    let site = |u: &str| crate::site::registrable_domain(host(u)).to_string();
    let first = urls.first().map_or("", |u| host(u));
    if urls.iter().all(|u| host(u) == first) {
        return vec![urls];
    }
    let first_site = site(&urls[0]);
    if urls.iter().all(|u| site(u) == first_site) {
        return vec![urls];
    }
    // Parts in order of first URL, found by hash (a boilerplate digest may span thousands of
    // sites).
    let mut parts: Vec<Vec<String>> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for u in urls {
        let k = *index.entry(site(&u)).or_insert_with(|| {
            parts.push(Vec::new());
            parts.len() - 1
        });
        parts[k].push(u);
    }
    parts
}

/// A cluster's canonical target ([`cluster_target`]): mostly one of its own URLs, held as its
/// index (at 10 M URLs, a copy of each of 5 M targets was 400 MB).
#[derive(Debug, Clone, PartialEq, Eq)]
enum ClusterTarget {
    /// `urls[i]` of the cluster.
    Member(u32),
    /// A member's path and query on the site the cluster's members favour.
    Moved(Box<str>),
}

impl ClusterTarget {
    /// The target URL, given the cluster's URLs.
    fn get<'a>(&'a self, urls: Members<'a>) -> &'a str {
        match self {
            ClusterTarget::Member(i) => urls.get(*i as usize),
            ClusterTarget::Moved(u) => u,
        }
    }
}

/// The canonical target of a cluster (its URLs sorted and distinct): the canonical member with the
/// scheme and host of the members' most common site. `None` for fewer than two sampled URLs.
fn cluster_target(
    urls: Members<'_>,
    sample: &[u32],
    popularity: &HashMap<String, usize>,
) -> Option<ClusterTarget> {
    if sample.len() < 2 {
        return None;
    }
    let members: Vec<&str> = sample.iter().map(|&m| urls.get(m as usize)).collect();
    let c = canonical(&members, popularity);
    let cp = split_url(members[c]).filter(|p| p.userinfo.is_empty() && p.fragment.is_none())?;
    // The target's scheme and host: of the members' sites, the one found in most clusters (then
    // `https`, then the shorter host), so `www.`/mirror/`http` aliases point one way site-wide even
    // where the member with fewest tokens sits on an alias.
    let mut key = String::new();
    let best_site = members
        .iter()
        .filter_map(|u| split_url(u).map(|p| (p.scheme, p.scope_host(u))))
        .map(|(sc, h)| {
            key.clear();
            key.push('\u{2}');
            key.push_str(sc);
            key.push_str("://");
            key.push_str(h);
            (popularity.get(key.as_str()).copied().unwrap_or(0), sc, h)
        })
        .max_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| (a.1 == "https").cmp(&(b.1 == "https")))
                .then_with(|| b.2.len().cmp(&a.2.len()))
                .then_with(|| (b.1, b.2).cmp(&(a.1, a.2)))
        });
    Some(match best_site {
        Some((_, sc, h)) if sc != cp.scheme || h != cp.scope_host(members[c]) => {
            let rest = &members[c][cp.scheme.len() + 3 + cp.scope_host(members[c]).len()..];
            ClusterTarget::Moved(format!("{sc}://{h}{rest}").into_boxed_str())
        }
        _ => ClusterTarget::Member(sample[c]),
    })
}

/// Group keys of every sampled member → target pair of one cluster.
///
/// A scheme/host alias between two registrable domains (possible only with
/// [`LearnOptions::allow_cross_site`]) is observed only when the target site is in more
/// clusters than the member's (`popularity`): never toward a site with less evidence.
fn observations(
    ci: usize,
    urls: Members<'_>,
    sample: &[u32],
    target: &str,
    popularity: &HashMap<String, usize>,
    (declared, consent): (bool, bool),
    out: &mut Vec<(GroupKey, Pair)>,
) {
    let Some(cu) = Units::parse(target) else {
        return;
    };
    for &m in sample {
        let u = urls.get(m as usize);
        if u == target {
            continue;
        }
        let Some(uu) = Units::parse(u) else { continue };
        if uu.port != cu.port {
            continue;
        }
        let pair = |alias: bool| Pair {
            cluster: ci as u32,
            member: m,
            alias,
        };
        // A scheme/host difference is its own (alias) observation; the rest of the pair is
        // described as if the alias had been applied, so path/query rules are learned once, on
        // the canonical host, whatever alias a member came from.
        let cross_site = uu.host != cu.host
            && crate::site::registrable_domain(uu.host) != crate::site::registrable_domain(cu.host);
        // A consent pair ([`Prepared::consent_target`]) says only that its declaring site may
        // be aliased to the target's: nothing about paths on the target's site.
        if consent {
            if cross_site {
                out.push((
                    GroupKey::Alias {
                        from: (uu.scheme.to_string(), uu.host.to_string()),
                        to: (cu.scheme.to_string(), cu.host.to_string()),
                    },
                    pair(true),
                ));
            }
            continue;
        }
        if uu.scheme != cu.scheme && !cross_site {
            out.push((GroupKey::Convention(Convention::Https), pair(true)));
        }
        if uu.host != cu.host
            && (uu.host.strip_prefix("www.") == Some(cu.host)
                || cu.host.strip_prefix("www.") == Some(uu.host))
        {
            out.push((GroupKey::Convention(Convention::StripWww), pair(true)));
        }
        // A mobile or AMP host (`m.h`) beside its desktop host (`h` or `www.h`).
        let desktop = |h: &str| h.strip_prefix("www.").unwrap_or(h).to_string();
        for (a, b) in [(&uu.host, &cu.host), (&cu.host, &uu.host)] {
            if let Some((l, rest)) = dedust_core::__private::model::mobile_label(a) {
                if !cross_site && rest == desktop(b) {
                    out.push((
                        GroupKey::Convention(Convention::HostLabel(l.to_string())),
                        pair(true),
                    ));
                    // `m.h` ≡ `www.h` is one key only with `www.h` ≡ `h` too.
                    if b.starts_with("www.") {
                        out.push((GroupKey::Convention(Convention::StripWww), pair(true)));
                    }
                }
            }
        }
        // A site's evidence: the clusters holding any URL of its registrable domain.
        let established = |host: &str| {
            popularity
                .get(&format!("\u{3}{}", crate::site::registrable_domain(host)))
                .copied()
                .unwrap_or(0)
        };
        if (uu.scheme != cu.scheme || uu.host != cu.host)
            && (!cross_site || established(cu.host) > established(uu.host))
        {
            out.push((
                GroupKey::Alias {
                    from: (uu.scheme.to_string(), uu.host.to_string()),
                    to: (cu.scheme.to_string(), cu.host.to_string()),
                },
                pair(true),
            ));
        }
        let u2 = Units {
            scheme: cu.scheme,
            host: cu.host,
            ..uu
        };
        for key in keys(&u2, &cu, uu.host == cu.host, declared) {
            out.push((key, pair(false)));
        }
    }
}

/// Materialize the pairs of one group.
fn materialize<'a>(
    pairs: &[Pair],
    prep: &'a Prepared,
    targets: &'a [Option<ClusterTarget>],
) -> Vec<Obs<'a>> {
    pairs
        .iter()
        .filter_map(|p| {
            let urls = prep.urls(p.cluster as usize);
            let from_url = urls.get(p.member as usize);
            let to_url = targets[p.cluster as usize].as_ref()?.get(urls);
            let mut from = Units::parse(from_url)?;
            if !p.alias {
                let t = split_url(to_url)?;
                from.scheme = t.scheme;
                from.host = t.host;
            }
            Some(Obs {
                cluster: p.cluster as usize,
                signal: prep.signals.get(p.cluster as usize).copied().unwrap_or(0),
                from,
                from_url,
                to_url,
            })
        })
        .collect()
}

/// Whether a last path segment names a file rather than a page: a static file type
/// ([`dedust_core::__private::model::STATIC_EXTENSIONS`]), an image, audio or video, a document,
/// an archive or a data file (`site.webmanifest`, `browserconfig.xml`: favicon boilerplate with
/// `?v=` on many sites), its extension in any case (`IMG_1234.JPG`). Its query is evidence
/// about that file, not about the site's pages.
fn is_file_name(seg: &str) -> bool {
    const MORE: &[&str] = &[
        "svg",
        "gif",
        "jpg",
        "jpeg",
        "png",
        "webp",
        "avif",
        "bmp",
        "tif",
        "tiff",
        "mp3",
        "m4a",
        "mp4",
        "mpg",
        "mpeg",
        "flv",
        "avi",
        "mov",
        "webm",
        "ogg",
        "wav",
        "pdf",
        "zip",
        "gz",
        "7z",
        "rar",
        "doc",
        "docx",
        "xls",
        "xlsx",
        "ppt",
        "pptx",
        "txt",
        "csv",
        "json",
        "xml",
        "webmanifest",
    ];
    let Some((_, ext)) = seg.rsplit_once('.') else {
        return false;
    };
    dedust_core::__private::model::STATIC_EXTENSIONS
        .iter()
        .chain(MORE)
        .any(|e| e.eq_ignore_ascii_case(ext))
}

fn sorted_params<T: Clone + Ord>(p: &[T]) -> Vec<T> {
    let mut v = p.to_vec();
    v.sort();
    v
}

/// Group keys of one pair `u → c` that share scheme and host (aliases are handled by the caller;
/// `same_host`: the member was on the canonical's host before, so the pair may be cross-host
/// evidence for a template — never a pair from an alias or mirror host).
fn keys(u: &Units, c: &Units, same_host: bool, declared: bool) -> Vec<GroupKey> {
    let mut out = Vec::new();
    let same_query = sorted_params(&u.params) == sorted_params(&c.params);
    if u.segs == c.segs && same_query {
        return out;
    }
    // Cross-host path conventions, in either direction (each is an equivalence).
    let (long, short) = if u.segs.len() > c.segs.len() {
        (&u.segs, &c.segs)
    } else {
        (&c.segs, &u.segs)
    };
    if !u.segs.is_empty() && u.segs.len() == c.segs.len() {
        // `/dir/NAME` ≡ `/dir/`: only the last segment differs, and one of them is empty.
        let n = u.segs.len();
        let (a, b) = (&u.segs[n - 1], &c.segs[n - 1]);
        if u.segs[..n - 1] == c.segs[..n - 1] && (a.is_empty() != b.is_empty()) {
            let name = if a.is_empty() { b } else { a };
            if name.contains('.') && !value_like(name) {
                out.push(GroupKey::Convention(Convention::DefaultDoc(
                    name.to_string(),
                )));
            }
        }
    }
    if let Some(name) = suffix_of(&u.segs, &c.segs).or_else(|| suffix_of(&c.segs, &u.segs)) {
        out.push(GroupKey::Convention(Convention::Suffix(name.to_string())));
    }
    if let Some(name) = path_param_of(&u.segs, &c.segs).or_else(|| path_param_of(&c.segs, &u.segs))
    {
        out.push(GroupKey::Convention(Convention::PathParam(name)));
    }
    // `/Dir/Page.aspx` ≡ `/dir/page.aspx`: paths that differ in the case of their letters only,
    // on a server that ignores it (IIS), keyed by the extension both end in.
    if same_query
        && u.segs.len() == c.segs.len()
        && u.segs
            .iter()
            .zip(&c.segs)
            .all(|(a, b)| a.eq_ignore_ascii_case(b))
    {
        let ext = |segs: &[&str]| {
            segs.last()
                .and_then(|l| dedust_core::__private::model::path_extension(l))
                .map(str::to_string)
        };
        if let (Some(a), Some(b)) = (ext(&u.segs), ext(&c.segs)) {
            if a == b {
                out.push(GroupKey::Convention(Convention::LowerPath(a)));
            }
        }
    }
    // `/a/players.js?mediatype=audio` ≡ `/a/players.js`: a static file whatever its query,
    // keyed by the file type.
    if u.segs == c.segs && !same_query && (!u.params.is_empty() || !c.params.is_empty()) {
        if let Some(e) = u
            .segs
            .last()
            .and_then(|l| dedust_core::__private::model::static_extension(l))
        {
            out.push(GroupKey::Convention(Convention::StaticQuery(e.to_string())));
        }
    }
    if long.len() == short.len() + 1 && long[..short.len()] == short[..] {
        let last = &long[short.len()];
        if last.is_empty() && short.last().is_some_and(|s| !s.is_empty()) {
            out.push(GroupKey::Convention(Convention::TrailingSlash));
        } else if last.contains('.') && !value_like(last) {
            // `/dir/NAME` ≡ `/dir/` (or `/dir`, with the trailing-slash convention)
            out.push(GroupKey::Convention(Convention::DefaultDoc(
                last.to_string(),
            )));
        }
    }
    let file_path = u.segs.last().is_some_and(|l| is_file_name(l));
    let unames: BTreeSet<&str> = u.params.iter().map(|(n, _)| *n).collect();
    let dup_names = unames.len() != u.params.len();
    let kept: Vec<&(&str, Option<&str>)> =
        c.params.iter().filter(|p| u.params.contains(p)).collect();
    let kept_names: BTreeSet<&str> = kept.iter().map(|(n, _)| *n).collect();
    let dropped: BTreeSet<&str> = u
        .params
        .iter()
        .filter(|p| !c.params.contains(p))
        .map(|(n, _)| *n)
        .filter(|n| !kept_names.contains(n))
        .collect();
    if u.segs == c.segs && !dup_names && kept.len() == c.params.len() && !dropped.is_empty() {
        for d in &dropped {
            out.push(GroupKey::Drop {
                host: u.host.to_string(),
                context: kept_names.iter().map(|s| s.to_string()).collect(),
                drop: d.to_string(),
            });
            // Also without context, so a session or tracking parameter learned on some URL
            // families is dropped on the others too (validation decides which form survives).
            if !kept_names.is_empty() {
                out.push(GroupKey::Drop {
                    host: u.host.to_string(),
                    context: Vec::new(),
                    drop: d.to_string(),
                });
            }
            // Cross-host evidence: the same parameter on any host, and on this literal path.
            // A file's query (`logo.png?v=3`, `app.js?id=7`) says nothing of other sites'
            // pages: across hosts a file counts for its own literal path (and `static_query`)
            // only. (The host drops above stay: the host's own data validates them.)
            if !file_path {
                out.push(GroupKey::GlobalDrop {
                    name: d.to_string(),
                    path: None,
                });
            }
            if !u.segs.is_empty() && u.segs.iter().all(|s| !value_like(s)) {
                out.push(GroupKey::GlobalDrop {
                    name: d.to_string(),
                    path: Some(u.segs.iter().map(|s| s.to_string()).collect()),
                });
            }
        }
    }
    // One parameter whose value alone differs between two URLs of the same content (every
    // other unit equal): evidence that on this literal path it does not separate content — a
    // login wall's `member.php?u=`, every member page the same wall, on each site running the
    // software. Cross-host and path-scoped only; validation refutes it where pages differ.
    // Not on the root nor on a default document (`/`, `/index.php`: every site's entry point,
    // where `?p=` or `?id=` is content), nor from a redirect or declared canonical.
    let generic = |segs: &[&str]| {
        segs.last().is_none_or(|l| {
            l.is_empty()
                || ["index.", "default.", "home."]
                    .iter()
                    .any(|d| l.to_ascii_lowercase().starts_with(d))
        })
    };
    if u.segs == c.segs
        && !declared
        && !dup_names
        && u.params.len() == c.params.len()
        && !generic(&u.segs)
        && u.segs.iter().all(|s| !value_like(s))
    {
        let diff: Vec<&(&str, Option<&str>)> =
            u.params.iter().filter(|p| !c.params.contains(p)).collect();
        if let [(name, Some(_))] = diff.as_slice() {
            if c.params.iter().any(|(n, v)| n == name && v.is_some()) {
                out.push(GroupKey::GlobalDrop {
                    name: name.to_string(),
                    path: Some(u.segs.iter().map(|s| s.to_string()).collect()),
                });
            }
        }
    }
    if dup_names {
        return out;
    }
    // Template: path part.
    let path = {
        let src: Vec<SegKey> = u
            .segs
            .iter()
            .map(|s| {
                if value_like(s) {
                    SegKey::Shape(shape(s))
                } else {
                    SegKey::Lit(s.to_string())
                }
            })
            .collect();
        let tgt: Vec<SegOut> = c
            .segs
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let j = if u.segs.get(i) == Some(s) {
                    Some(i)
                } else {
                    u.segs.iter().position(|x| x == s)
                };
                match j {
                    Some(j) if value_like(s) => SegOut::Copy(j),
                    _ if value_like(s) => {
                        match u.params.iter().find(|(_, v)| v.as_deref() == Some(*s)) {
                            Some((n, _)) => SegOut::Param(n.to_string()),
                            None => SegOut::Lit(s.to_string()),
                        }
                    }
                    _ => SegOut::Lit(s.to_string()),
                }
            })
            .collect();
        Some((src, tgt))
    };
    let derived_path = path.as_ref().is_none_or(|(_, t)| {
        t.iter()
            .all(|o| !matches!(o, SegOut::Lit(s) if value_like(s)))
    });
    let query: Option<Vec<(String, ValOut)>> = if same_query {
        None
    } else {
        Some(
            c.params
                .iter()
                .map(|(n, v)| {
                    let from_seg = v
                        .as_deref()
                        .filter(|val| value_like(val))
                        .and_then(|val| u.segs.iter().position(|x| *x == val));
                    let n = n.to_string();
                    if u.params.contains(&(&n, *v)) {
                        (n, ValOut::Copy)
                    } else if let Some(j) = from_seg {
                        (n, ValOut::Seg(j))
                    } else {
                        (n, v.map_or(ValOut::Bare, |v| ValOut::Lit(v.to_string())))
                    }
                })
                .collect(),
        )
    };
    let derived_query = query.as_ref().is_none_or(|q| {
        q.iter()
            .all(|(_, v)| matches!(v, ValOut::Copy | ValOut::Seg(_)))
    });
    let literal = !(derived_path && derived_query);
    let mut params: Vec<String> = if literal || query.is_none() {
        u.params.iter().map(|(n, _)| n.to_string()).collect()
    } else {
        // Kept parameters, and those whose value moves into the path.
        let mut v: Vec<String> = kept_names.iter().map(|s| s.to_string()).collect();
        if let Some((_, tgt)) = &path {
            for o in tgt {
                if let SegOut::Param(n) = o {
                    if !v.contains(n) {
                        v.push(n.clone());
                    }
                }
            }
        }
        v
    };
    params.sort();
    // Cross-host evidence: the same template on any host, when its target derives from the
    // source, its path has a literal signature (`/s/{int}` → `/product.php?id=…` recurs on
    // every site of one software) and no URL convention explains the pair.
    let signed = path.as_ref().is_some_and(|(src, _)| {
        src.iter()
            .any(|k| matches!(k, SegKey::Lit(l) if !l.is_empty()))
    });
    let convention = out.iter().any(|k| matches!(k, GroupKey::Convention(_)));
    // Without its optional parameters, a template that keeps the path and copies the query is
    // the identity (the cross-host drops do its work).
    let moves = u.segs != c.segs
        || query
            .as_ref()
            .is_some_and(|q| q.iter().any(|(_, v)| *v != ValOut::Copy));
    if !literal && signed && moves && !convention && same_host {
        out.push(GroupKey::Template {
            from: ANY_HOST.to_string(),
            to: ANY_HOST.to_string(),
            path: path.clone(),
            params: params.clone(),
            query: query.clone(),
            literal,
        });
    }
    out.push(GroupKey::Template {
        from: u.host.to_string(),
        to: c.host.to_string(),
        path: if literal {
            // A literal target needs the source path spelled out even when equal.
            Some(path.unwrap_or_else(|| {
                (
                    u.segs
                        .iter()
                        .map(|s| {
                            if value_like(s) {
                                SegKey::Shape(shape(s))
                            } else {
                                SegKey::Lit(s.to_string())
                            }
                        })
                        .collect(),
                    c.segs.iter().map(|s| SegOut::Lit(s.to_string())).collect(),
                )
            }))
        } else {
            path
        },
        params,
        query: if literal {
            Some(query.unwrap_or_else(|| {
                c.params
                    .iter()
                    .map(|(n, v)| {
                        (
                            n.to_string(),
                            v.map_or(ValOut::Bare, |v| ValOut::Lit(v.to_string())),
                        )
                    })
                    .collect()
            }))
        } else {
            query
        },
        literal,
    });
    out
}

fn value_pieces(values: &[&str], copied: bool) -> Vec<Piece> {
    let first = values[0];
    if !copied && values.iter().all(|v| *v == first) {
        return if first.is_empty() {
            vec![]
        } else {
            vec![Piece::Lit(first.to_string())]
        };
    }
    vec![Piece::Cap(CapType::infer(values.iter().copied()))]
}

fn seg_pieces(values: &[&str], copied: bool) -> Vec<Piece> {
    let first = values[0];
    if !copied && values.iter().all(|v| *v == first) {
        return if first.is_empty() {
            vec![]
        } else {
            vec![Piece::Lit(first.to_string())]
        };
    }
    // Slugs and codes are one unit: a capture of any slug, not of this many words; of any
    // code, not of this order of letters and digits.
    if values.iter().all(|v| is_slug(v)) {
        return vec![Piece::Cap(CapType::Any)];
    }
    if values.iter().all(|v| is_code(v)) {
        return vec![Piece::Cap(CapType::Alnum)];
    }
    // Same shape in the group: token by token.
    let toks: Vec<Vec<(crate::TokenKind, String)>> = values.iter().map(|v| seg_tokens(v)).collect();
    let n = toks[0].len();
    if n == 0 || toks.iter().any(|t| t.len() != n) {
        return vec![Piece::Cap(CapType::infer(values.iter().copied()))];
    }
    let mut pieces: Vec<Piece> = Vec::new();
    for k in 0..n {
        let (kind, text) = &toks[0][k];
        let constant = toks.iter().all(|t| t[k].1 == *text);
        let piece = match kind {
            crate::TokenKind::Number if copied || !constant => Piece::Cap(CapType::Int),
            crate::TokenKind::Word if !constant => Piece::Cap(CapType::Alpha),
            _ => Piece::Lit(text.clone()),
        };
        match (pieces.last_mut(), piece) {
            (Some(Piece::Lit(prev)), Piece::Lit(s)) => prev.push_str(&s),
            (_, p) => pieces.push(p),
        }
    }
    // A capture followed by a literal starting in its class would read differently as a regex.
    for w in pieces.windows(2) {
        if let (Piece::Cap(t), Piece::Lit(s)) = (&w[0], &w[1]) {
            if s.chars().next().is_some_and(|c| t.accepts(c)) {
                return vec![Piece::Cap(CapType::Any)];
            }
        }
    }
    pieces
}

/// Values once per cluster (an id repeated by a cluster's members is one observation), bare
/// names left out: the sample [`high_entropy`] judges.
fn distinct_per_cluster<'a>(
    values: impl Iterator<Item = (usize, Option<&'a str>)>,
) -> Vec<&'a str> {
    let set: BTreeSet<(usize, &str)> = values.filter_map(|(c, v)| v.map(|v| (c, v))).collect();
    set.into_iter().map(|(_, v)| v).collect()
}

/// The observed values of parameter `name` in a group's pairs, once per cluster.
fn drop_values<'a>(name: &str, obs: &'a [Obs]) -> Vec<&'a str> {
    distinct_per_cluster(obs.iter().filter_map(|o| {
        o.from
            .params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| (o.cluster, *v))
    }))
}

/// [`drop_values`] of every parameter name of a group's pairs at once (one pass, where a call
/// per name is quadratic in a group of thousands of names).
fn drop_values_by_name<'a>(obs: &'a [Obs]) -> HashMap<&'a str, Vec<&'a str>> {
    let mut by: HashMap<&str, BTreeSet<(usize, &str)>> = HashMap::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for o in obs {
        seen.clear();
        for &(n, v) in &o.from.params {
            // The first occurrence of a name in a URL, as `drop_values` finds it.
            if seen.insert(n) {
                let set = by.entry(n).or_default();
                if let Some(v) = v {
                    set.insert((o.cluster, v));
                }
            }
        }
    }
    by.into_iter()
        .map(|(n, set)| (n, set.into_iter().map(|(_, v)| v).collect()))
        .collect()
}

/// Drop rules of one group (scope `host`, or [`ANY_HOST`]; the `context` parameters must be
/// present and are kept): one rule with a typed value when the parameter's values are
/// [`high_entropy`], else one rule per value seen (bare names and empty values included).
fn build_drops(
    host: &str,
    context: &[String],
    name: &str,
    path: &Option<Vec<String>>,
    obs: &[Obs],
) -> Vec<Rule> {
    let value = |o: &Obs| -> Option<Option<String>> {
        o.from
            .params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.map(str::to_string))
    };
    let with: Vec<(&Obs, Option<String>)> = obs
        .iter()
        .filter_map(|o| value(o).map(|v| (o, v)))
        .collect();
    let valued = distinct_per_cluster(with.iter().map(|(o, v)| (o.cluster, v.as_deref())));
    let mut by_val: BTreeMap<&Option<String>, Vec<Obs>> = BTreeMap::new();
    for (o, v) in &with {
        by_val.entry(v).or_default().push((*o).clone());
    }
    let record = |of: &[Obs]| -> Record {
        let (c, u, e) = provenance(of);
        (c, u, e, signals(of))
    };
    let variants: Vec<(ValPat, Record)> = if high_entropy(&valued) {
        let t = CapType::infer(valued.iter().copied());
        // A typed drop's record is its per-value drops' records added up, as when they merge
        // into it (`generalize`, lower entropy) — so it does not depend on which way the drop
        // was typed, and adds up over disjoint shards of sites (`learn --shard`, `merge`).
        let mut sum: Record = (0, 0, Vec::new(), BTreeMap::new());
        for (_, of) in by_val
            .iter()
            .filter(|(v, _)| v.as_deref().is_some_and(|v| !v.is_empty()))
        {
            let (c, u, e, sig) = record(of);
            sum.0 += c;
            sum.1 += u;
            sum.2.extend(e);
            for (k, n) in sig {
                *sum.3.entry(k).or_insert(0) += n;
            }
        }
        sum.2 = smallest_examples(sum.2);
        vec![(ValPat::Pieces(vec![Piece::Cap(t)]), sum)]
    } else {
        by_val
            .iter()
            .map(|(v, of)| {
                let pat = match v {
                    None => ValPat::Bare,
                    Some(v) if v.is_empty() => ValPat::Pieces(vec![]),
                    Some(v) => ValPat::Pieces(vec![Piece::Lit(v.clone())]),
                };
                (pat, record(of))
            })
            .collect()
    };
    variants
        .into_iter()
        .map(|(pat, (clusters, urls, examples, sig))| {
            let mut required: Vec<(String, ValPat)> = context
                .iter()
                .map(|n| (n.clone(), ValPat::Any))
                .chain(std::iter::once((name.to_string(), pat)))
                .collect();
            required.sort();
            let mut rule = Rule::new(
                RuleKind::Drop,
                Source {
                    scheme: None,
                    host: host.to_string(),
                    path: path.as_ref().map(|segs| {
                        segs.iter()
                            .map(|s| {
                                if s.is_empty() {
                                    vec![]
                                } else {
                                    vec![Piece::Lit(s.clone())]
                                }
                            })
                            .collect()
                    }),
                    required,
                    optional: vec![],
                    rest: true,
                },
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(context.iter().map(|n| (n.clone(), ValOut::Copy)).collect()),
                },
            );
            rule.clusters = clusters;
            rule.urls = urls;
            rule.examples = examples;
            rule.signals = sig;
            rule
        })
        .collect()
}

/// A rule's learning record: clusters, distinct URLs, examples, clusters per signal.
type Record = (usize, usize, Vec<Vec<String>>, BTreeMap<String, usize>);

/// The 3 smallest example lists, each once: how a rule merged from parts (a typed drop from its
/// values, `generalize`'s siblings, `merge`'s shards) picks its examples.
pub(crate) fn smallest_examples(mut examples: Vec<Vec<String>>) -> Vec<Vec<String>> {
    examples.sort_unstable();
    examples.dedup();
    examples.truncate(3);
    examples
}

/// Clusters per signal among `obs` (empty when none came from a signal).
fn signals(obs: &[Obs]) -> BTreeMap<String, usize> {
    let mut seen: Vec<(usize, u8)> = obs
        .iter()
        .filter(|o| o.signal > 0)
        .map(|o| (o.cluster, o.signal))
        .collect();
    seen.sort_unstable();
    seen.dedup();
    let mut out = BTreeMap::new();
    for (_, bits) in seen {
        for (i, s) in SIGNALS.iter().enumerate() {
            if bits & (1 << i) != 0 {
                *out.entry(s.to_string()).or_insert(0) += 1;
            }
        }
    }
    out
}

/// Where a group was learned from: its clusters, distinct URLs and up to 3 example clusters.
///
/// # Complexity
/// `O(n log n)` for `n` observations (distinct URLs are counted by hashing: a cross-host
/// group holds millions, whose sort by text was most of this); only the 3 example lists are
/// copied.
fn provenance(obs: &[Obs]) -> (usize, usize, Vec<Vec<String>>) {
    // (A cluster's target is shared by its pairs: about one distinct URL a pair.)
    let urls = {
        let mut urls: foldhash::HashSet<&str> = foldhash::HashSet::with_capacity(obs.len());
        for o in obs {
            urls.insert(o.from_url);
            urls.insert(o.to_url);
        }
        urls.len()
    };
    // Per cluster: its canonical URL(s), sorted, then its other members, sorted (each URL once,
    // at most 4); the three smallest such lists are the examples, so that the choice does not
    // depend on the input order.
    let mut by_cluster: Vec<&Obs> = obs.iter().collect();
    by_cluster.sort_unstable_by_key(|o| o.cluster);
    let mut lists: Vec<Vec<&str>> = Vec::new();
    for group in by_cluster.chunk_by(|a, b| a.cluster == b.cluster) {
        let mut tos: Vec<&str> = group.iter().map(|o| o.to_url).collect();
        let mut froms: Vec<&str> = group.iter().map(|o| o.from_url).collect();
        tos.sort_unstable();
        tos.dedup();
        froms.sort_unstable();
        froms.dedup();
        let mut ex: Vec<&str> = Vec::with_capacity(4);
        for u in tos.into_iter().chain(froms) {
            if !ex.contains(&u) && ex.len() < 4 {
                ex.push(u);
            }
        }
        lists.push(ex);
    }
    let clusters = lists.len();
    if lists.len() > 3 {
        lists.select_nth_unstable(3);
        lists.truncate(3);
    }
    lists.sort_unstable();
    // A new vector: collected in place, the examples would keep `lists`' allocation, one slot
    // per cluster of the group (at 10 M URLs, tens of megabytes for one cross-host rule).
    let mut examples = Vec::with_capacity(lists.len());
    examples.extend(
        lists
            .into_iter()
            .map(|l| l.into_iter().map(str::to_string).collect()),
    );
    (clusters, urls, examples)
}

/// How many registrable domains the pairs `obs` come from.
fn domains(obs: &[Obs]) -> usize {
    let mut hosts: Vec<&str> = obs.iter().map(|o| o.from.host).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let mut d: Vec<&str> = hosts
        .into_iter()
        .map(crate::site::registrable_domain)
        .collect();
    d.sort_unstable();
    d.dedup();
    d.len()
}

fn build_rule(key: &GroupKey, obs: &[Obs]) -> Option<Rule> {
    let (clusters, urls, examples) = provenance(obs);
    let (kind, source, output) = match key {
        GroupKey::GlobalDrop { .. } => unreachable!("built by build_drops"),
        GroupKey::Convention(c) => {
            let mut r = convention_rule(c.clone());
            r.clusters = clusters;
            r.urls = urls;
            r.examples = examples;
            r.signals = signals(obs);
            return Some(r);
        }
        GroupKey::Alias { from, to } => (
            RuleKind::Alias,
            Source {
                scheme: Some(from.0.clone()),
                host: from.1.clone(),
                path: None,
                required: vec![],
                optional: vec![],
                rest: true,
            },
            Target {
                scheme: (from.0 != to.0).then(|| to.0.clone()),
                host: (from.1 != to.1).then(|| to.1.clone()),
                path: None,
                query: None,
            },
        ),
        GroupKey::Drop {
            host,
            context,
            drop,
        } => (
            RuleKind::Drop,
            Source {
                scheme: None,
                host: host.clone(),
                path: None,
                required: context.iter().map(|n| (n.clone(), ValPat::Any)).collect(),
                optional: vec![drop.clone()],
                rest: true,
            },
            Target {
                scheme: None,
                host: None,
                path: None,
                query: Some(context.iter().map(|n| (n.clone(), ValOut::Copy)).collect()),
            },
        ),
        GroupKey::Template {
            from,
            to,
            path,
            params,
            query,
            literal,
        } => {
            let src_path = path.as_ref().map(|(src, tgt)| {
                src.iter()
                    .enumerate()
                    .map(|(i, k)| match k {
                        SegKey::Lit(s) => {
                            if s.is_empty() {
                                vec![]
                            } else {
                                vec![Piece::Lit(s.clone())]
                            }
                        }
                        SegKey::Shape(_) => {
                            let vals: Vec<&str> = obs.iter().map(|o| o.from.segs[i]).collect();
                            let copied = tgt.contains(&SegOut::Copy(i))
                                || query
                                    .as_ref()
                                    .is_some_and(|q| q.iter().any(|(_, v)| *v == ValOut::Seg(i)));
                            seg_pieces(&vals, copied)
                        }
                    })
                    .collect::<Vec<_>>()
            });
            let mut copied_names: BTreeSet<&str> = query
                .as_ref()
                .map(|q| {
                    q.iter()
                        .filter(|(_, v)| *v == ValOut::Copy)
                        .map(|(n, _)| n.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if let Some((_, tgt)) = path {
                for o in tgt {
                    if let SegOut::Param(n) = o {
                        copied_names.insert(n.as_str());
                    }
                }
            }
            let mut required = Vec::new();
            let mut optional: BTreeSet<String> = BTreeSet::new();
            if query.is_some() {
                for name in params {
                    let vals: Vec<Option<&str>> = obs
                        .iter()
                        .map(|o| {
                            o.from
                                .params
                                .iter()
                                .find(|(n, _)| n == name)
                                .and_then(|(_, v)| v.as_deref())
                        })
                        .collect();
                    let pat = if vals.iter().all(|v| v.is_none()) {
                        ValPat::Bare
                    } else if vals.iter().any(|v| v.is_none()) {
                        ValPat::Any
                    } else {
                        let vs: Vec<&str> = vals.iter().map(|v| v.unwrap()).collect();
                        ValPat::Pieces(value_pieces(&vs, copied_names.contains(name.as_str())))
                    };
                    required.push((name.clone(), pat));
                }
                // A cross-host template drops no parameter of unknown role: on other sites the
                // same names may carry content (the cross-host drops decide parameters one by
                // one). A parameter every source carries with one value (`option=com_content`
                // of `index.php?option=com_content&id=N` → `/c/N`) is part of the software's
                // signature: required with that value, it narrows the rule.
                if !literal && from == ANY_HOST {
                    let first = &obs[0].from.params;
                    for &(n, v) in first {
                        let Some(v) = v else { continue };
                        if params.iter().any(|p| p == n) {
                            continue;
                        }
                        let everywhere = obs.iter().all(|o| {
                            o.from.params.iter().filter(|(m, _)| *m == n).count() == 1
                                && o.from.params.contains(&(n, Some(v)))
                        });
                        if everywhere {
                            required
                                .push((n.to_string(), ValPat::Pieces(vec![Piece::Lit(v.into())])));
                        }
                    }
                    required.sort_by(|a, b| a.0.cmp(&b.0));
                }
                if !literal && from != ANY_HOST {
                    for o in obs {
                        for &(n, _) in &o.from.params {
                            if !params.iter().any(|p| p == n) {
                                optional.insert(n.to_string());
                            }
                        }
                    }
                    // The optional set drops a parameter whatever its value: where the target
                    // derives from the source, only ids may go there. A setting (`mode=hybrid`,
                    // `print=1`, `highlight=`) is left to the per-value drops, so `mode=threaded`
                    // is not dropped with `mode=hybrid`; the template then matches a URL
                    // carrying it once a drop has removed it. A many → one target (a login
                    // wall) copies nothing, so whatever it drops ends on the one page.
                    let derives = path.as_ref().is_some_and(|(_, t)| {
                        t.iter()
                            .any(|o| matches!(o, SegOut::Copy(_) | SegOut::Param(_)))
                    }) || query.as_ref().is_some_and(|q| {
                        q.iter()
                            .any(|(_, v)| matches!(v, ValOut::Copy | ValOut::Seg(_)))
                    });
                    if derives {
                        let values = drop_values_by_name(obs);
                        optional.retain(|n| {
                            id_valued(values.get(n.as_str()).map_or(&[][..], Vec::as_slice))
                        });
                    }
                }
            }
            (
                RuleKind::Template,
                Source {
                    // Any scheme (see `GroupKey::Template`).
                    scheme: None,
                    host: from.clone(),
                    path: src_path,
                    required,
                    optional: optional.into_iter().collect(),
                    rest: query.is_none(),
                },
                Target {
                    scheme: None,
                    host: (from != to).then(|| to.clone()),
                    path: path.as_ref().map(|(_, t)| t.clone()),
                    query: query.clone(),
                },
            )
        }
    };
    let mut rule = Rule::new(kind, source, output);
    rule.clusters = clusters;
    rule.urls = urls;
    rule.examples = examples;
    rule.signals = signals(obs);
    Some(rule)
}

/// Most clusters of one family read into its consensus ([`family_of`]): an even sample of a
/// bigger family (validation checks every pair of it).
const FAMILY_CLUSTERS: usize = 256;

/// The consensus of a group's family ([`crate::family`]): per cluster (at most
/// [`FAMILY_CLUSTERS`], evenly spread over the group's clusters), its target and its members in
/// the group. `obs` is sorted by cluster.
///
/// # Complexity
/// `O(FAMILY_CLUSTERS · members · L)` beside a pass over `obs`.
fn family_of(obs: &[Obs]) -> FamilyConsensus {
    let chunks: Vec<&[Obs]> = obs.chunk_by(|a, b| a.cluster == b.cluster).collect();
    let step = chunks.len().div_ceil(FAMILY_CLUSTERS).max(1);
    let rows: Vec<Vec<&str>> = chunks
        .iter()
        .step_by(step)
        .map(|c| {
            let mut v: Vec<&str> = Vec::with_capacity(c.len() + 1);
            v.push(c[0].to_url);
            for o in *c {
                if !v.contains(&o.from_url) {
                    v.push(o.from_url);
                }
            }
            v
        })
        .collect();
    family_consensus(rows.iter().map(Vec::as_slice))
}

/// A template group's pairs, split so that a parameter the family rewrites inside one cluster
/// (a [`FamilyClass::Variant`] column the target writes with a literal value: pages `2` and `3`
/// of one thread both shown as its page `1`) is literal in every rule, never a capture: one part
/// per combination of such values (`None`: one part, `obs`). Variation across clusters (an id)
/// stays a capture; so does a many → one target (a login wall, a soft 404: it copies nothing),
/// where the variation inside the cluster is the mechanism, judged as a family
/// (`--min-collapse` in validation). Path segments are left to the token-by-token typing of
/// [`seg_pieces`]: a segment such as `item.do;jsessionid=A1` varies inside a cluster in its
/// value only, and its literal part stays literal there.
fn literal_variants<'a>(
    key: &GroupKey,
    obs: &[Obs<'a>],
    family: &FamilyConsensus,
) -> Option<Vec<Vec<Obs<'a>>>> {
    let GroupKey::Template {
        path,
        params,
        query: Some(q),
        ..
    } = key
    else {
        return None;
    };
    // A many → one target copies nothing.
    let copies = path.as_ref().is_some_and(|(_, t)| {
        t.iter()
            .any(|o| matches!(o, SegOut::Copy(_) | SegOut::Param(_)))
    }) || q
        .iter()
        .any(|(_, v)| matches!(v, ValOut::Copy | ValOut::Seg(_)));
    if !copies {
        return None;
    }
    // A kept parameter the target writes with a literal value (`page=2` → `page=1`).
    let names: Vec<&str> = params
        .iter()
        .filter(|n| {
            q.iter()
                .any(|(m, v)| m == *n && matches!(v, ValOut::Lit(_) | ValOut::Bare))
                && family
                    .column(&Unit::Param(n.to_string()))
                    .is_some_and(|c| c.class == FamilyClass::Variant)
        })
        .map(String::as_str)
        .collect();
    if names.is_empty() {
        return None;
    }
    let mut parts: BTreeMap<Vec<Option<&str>>, Vec<Obs<'a>>> = BTreeMap::new();
    for o in obs {
        let k: Vec<Option<&str>> = names
            .iter()
            .map(|n| {
                o.from
                    .params
                    .iter()
                    .find(|(m, _)| m == n)
                    .and_then(|(_, v)| *v)
            })
            .collect();
        parts.entry(k).or_default().push(o.clone());
    }
    // Split only into a few parts, each with evidence enough to be judged (two pairs): values
    // that differ in every cluster (a random `page=` per cluster) are not one cluster's rewrite,
    // and a part per value would be thousands of candidates of support 1.
    if parts.len() < 2 || parts.len() > MAX_LITERAL_PARTS || parts.values().any(|p| p.len() < 2) {
        return None;
    }
    Some(parts.into_values().collect())
}

/// Most parts [`literal_variants`] splits a group into.
const MAX_LITERAL_PARTS: usize = 8;

/// The consensus candidate of a host template's family: the template with every parameter
/// column the family drops inside a cluster ([`FamilyClass::Optional`], the target not holding
/// it) in one optional block, judged as one rule, where the template alone drops fewer (it
/// drops by name only ids, [`id_valued`]). A setting joins the block only when the family
/// drops it with two values at least (`mode=hybrid` and `mode=threaded`): dropped by name, a
/// setting seen with one value (`mode=print`) would take its other values along, which the data
/// never showed; it stays with the per-value drops. `None` when the block holds fewer than two
/// parameters or adds none.
fn joint_drop(key: &GroupKey, rule: &Rule, family: &FamilyConsensus) -> Option<Rule> {
    let GroupKey::Template {
        from,
        query: Some(q),
        literal: false,
        params,
        ..
    } = key
    else {
        return None;
    };
    if from == ANY_HOST {
        return None;
    }
    let block: BTreeSet<String> = family
        .columns
        .iter()
        .filter(|c| c.class == FamilyClass::Optional)
        .filter(|c| {
            let v: Vec<&str> = c.values.iter().map(String::as_str).collect();
            v.len() >= 2 || c.more || id_valued(&v)
        })
        .filter_map(|c| match &c.unit {
            Unit::Param(n) => Some(n),
            _ => None,
        })
        .filter(|n| !params.contains(n) && !q.iter().any(|(m, _)| m == *n))
        .cloned()
        .collect();
    let have: BTreeSet<&String> = rule.source.optional.iter().collect();
    if block.len() < 2 || block.iter().all(|n| have.contains(n)) {
        return None;
    }
    let mut source = rule.source.clone();
    // The template's own block too (ids a sampled family may not show).
    source.optional = block
        .iter()
        .chain(rule.source.optional.iter())
        .cloned()
        .collect::<BTreeSet<String>>()
        .into_iter()
        .collect();
    let mut j = Rule::new(rule.kind, source, rule.output.clone());
    j.clusters = rule.clusters;
    j.urls = rule.urls;
    j.examples = rule.examples.clone();
    j.signals = rule.signals.clone();
    Some(j)
}

/// Base-normalized clusters: per cluster its sorted distinct URLs, the members aligned (all, or an
/// even sample of [`LearnOptions::max_cluster`]) and its label (a hash of its id).
///
/// The URLs are held as validation will read them ([`LabeledUrls`]: one buffer of text, each
/// URL with its cluster's label), cluster after cluster: about 16 bytes a URL beside its text,
/// where a `String` in a `Vec` per cluster held 24 and a heap block of its own (about 0.45 GB
/// less at 10 M URLs), and [`Prepared::into_labeled`] gives them to validation without a copy.
///
/// ```
/// use dedust_learn::rules::{Cluster, LearnOptions, Prepared};
/// let c = Cluster { id: "a".into(), urls: vec!["HTTP://F.org/x?b=1&a=2".into(), "https://f.org/x".into()] };
/// let (prep, _) = Prepared::new(&[c], &LearnOptions::default());
/// assert_eq!(prep.len(), 1);
/// let urls = prep.urls(0);
/// assert_eq!((urls.len(), urls.get(0), urls.get(1)), (2, "http://f.org/x?a=2&b=1", "https://f.org/x"));
/// assert_eq!(prep.sample(0), &[0, 1]);
/// ```
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Every cluster's sorted distinct URLs, cluster after cluster, with its label.
    data: LabeledUrls,
    /// Cluster `c`'s URLs are `data`'s `starts[c]..starts[c + 1]`.
    starts: Vec<usize>,
    /// The even samples of the clusters over [`LearnOptions::max_cluster`], by cluster (sorted);
    /// every other cluster aligns all its members.
    capped: Vec<(usize, Vec<u32>)>,
    /// `0, 1, 2, …` as long as the largest cluster not capped: its sample.
    all: Vec<u32>,
    /// Signals per cluster ([`signals_of`] its id): bit `i` for [`SIGNALS`]`[i]`, 0 for none.
    pub signals: Vec<u8>,
    /// The declaring URL of each redirect or canonical cluster ([`declarer_of`]), by cluster,
    /// sorted: a pair whose member is it rewrites a URL that consented ([`Consent`]).
    declarers: Vec<(u32, Box<str>)>,
    /// Whether aliases between registrable domains may be learned
    /// ([`LearnOptions::allow_cross_site`]).
    pub allow_cross_site: bool,
    /// One shard of a crawl ([`LearnOptions::shard`]).
    pub shard: bool,
    /// URLs per host (scope host), counted the first time a consent to move a whole host to
    /// another site is judged ([`consented`]).
    host_urls: std::sync::OnceLock<HashMap<String, usize>>,
}

impl Default for Prepared {
    /// No clusters.
    fn default() -> Prepared {
        Prepared {
            data: LabeledUrls::default(),
            starts: vec![0],
            capped: Vec::new(),
            all: Vec::new(),
            signals: Vec::new(),
            declarers: Vec::new(),
            allow_cross_site: false,
            shard: false,
            host_urls: std::sync::OnceLock::new(),
        }
    }
}

/// One prepared cluster's URLs (a view into [`Prepared`]).
#[derive(Clone, Copy)]
pub struct Members<'a> {
    data: &'a LabeledUrls,
    start: usize,
    end: usize,
}

impl std::fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<'a> Members<'a> {
    /// Number of URLs.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the cluster has none.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// URL `i` (panics past the end).
    pub fn get(&self, i: usize) -> &'a str {
        assert!(i < self.len(), "member {i} of {}", self.len());
        self.data.url(self.start + i)
    }

    /// The URLs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a str> + 'a {
        let data = self.data;
        (self.start..self.end).map(move |i| data.url(i))
    }
}

/// Clusters prepared per block: only one block's normalized URLs are held as `String`s at once.
const PREPARE_BLOCK: usize = 1 << 16;

/// One raw cluster, base-normalized and split per site: its parts, what the base layer rejected
/// and what is over the learning limits, and what the split counts.
struct Split {
    parts: Vec<Vec<String>>,
    bad: usize,
    too_long: usize,
    multi: bool,
    boilerplate: bool,
    cross_site: bool,
    label: usize,
    signal: u8,
    /// The URL that declared the redirect or canonical (the cluster id's text after its signal
    /// prefix), base-normalized.
    declarer: Option<String>,
}

/// The URL that declared a redirect or canonical cluster: its id's text after the signal prefix
/// (`redirect:http://h/old`), base-normalized; `None` for other clusters and for a united
/// cluster whose id kept another member's text (`digest+redirect:D1`).
fn declarer_of(id: &str, signal: u8, base: &BaseOptions) -> Option<String> {
    if signal & DECLARED_SIGNALS == 0 {
        return None;
    }
    let (_, url) = id.split_once(':')?;
    base_normalize(url, base).ok()
}

/// The bits of [`SIGNALS`] whose clusters a URL declared itself (`redirect`, `canonical`).
const DECLARED_SIGNALS: u8 = 0b110;

fn split_cluster(c: &Cluster, opts: &LearnOptions) -> Split {
    let (urls, bad, too_long) = prepare_cluster(c, opts);
    let multi = urls.len() >= 2;
    let mut parts = per_site(urls);
    let sites = parts.len();
    let (mut boilerplate, mut cross_site) = (false, false);
    let signal = signals_of(&c.id)
        .filter_map(|s| SIGNALS.iter().position(|x| *x == s))
        .fold(0u8, |m, i| m | 1 << i);
    let declarer = declarer_of(&c.id, signal, &opts.base);
    // One URL's redirect or canonical to one URL of another site: that site's consent to be
    // aliased there, learned from only in that direction ([`Prepared::consent_target`]).
    let consent = sites == 2
        && signal & !DECLARED_SIGNALS == 0
        && parts.iter().all(|p| p.len() == 1)
        && declarer
            .as_deref()
            .is_some_and(|d| parts.iter().any(|p| p[0] == d));
    if sites > opts.boilerplate_sites {
        boilerplate = true;
        parts = parts.into_iter().flat_map(per_host).collect();
    } else if sites > 1 && (opts.allow_cross_site || consent) {
        parts = vec![parts.concat()];
        parts[0].sort_unstable();
    } else if sites > 1 {
        cross_site = true;
    }
    Split {
        parts,
        bad,
        too_long,
        multi,
        boilerplate,
        cross_site,
        label: c.label(),
        signal,
        declarer,
    }
}

impl Prepared {
    /// Base-normalize clusters (in parallel).
    pub fn new(clusters: &[Cluster], opts: &LearnOptions) -> (Prepared, LearnStats) {
        let (mut prep, mut stats) = Prepared::start(clusters, opts);
        for block in clusters.chunks(PREPARE_BLOCK) {
            prep.add(block, opts, &mut stats);
        }
        prep.finish();
        (prep, stats)
    }

    /// Like [`Prepared::new`], consuming the clusters so each raw URL is freed as soon as its
    /// block is prepared (peak memory of `learn` on big inputs).
    pub fn from_owned(clusters: Vec<Cluster>, opts: &LearnOptions) -> (Prepared, LearnStats) {
        let (mut prep, mut stats) = Prepared::start(&clusters, opts);
        let mut rest = clusters.into_iter();
        loop {
            let block: Vec<Cluster> = rest.by_ref().take(PREPARE_BLOCK).collect();
            if block.is_empty() {
                break;
            }
            prep.add(&block, opts, &mut stats);
            // Freed here, by the thread that read them (an allocator returns a thread's pages
            // sooner when that thread frees them).
            drop(block);
        }
        prep.finish();
        (prep, stats)
    }

    /// Empty, with room for the clusters' URLs ([`LabeledUrls::for_clusters`]).
    fn start(clusters: &[Cluster], opts: &LearnOptions) -> (Prepared, LearnStats) {
        let urls = clusters.iter().map(|c| c.urls.len()).sum();
        let prep = Prepared {
            data: LabeledUrls::for_clusters(clusters),
            starts: vec![0],
            allow_cross_site: opts.allow_cross_site,
            shard: opts.shard,
            ..Default::default()
        };
        let stats = LearnStats {
            clusters: clusters.len(),
            urls,
            ..Default::default()
        };
        (prep, stats)
    }

    /// Add a block of clusters, in order (normalized and split in parallel).
    fn add(&mut self, block: &[Cluster], opts: &LearnOptions, stats: &mut LearnStats) {
        let split: Vec<Split> = block.par_iter().map(|c| split_cluster(c, opts)).collect();
        for s in split {
            stats.bad_urls += s.bad;
            stats.too_long += s.too_long;
            stats.multi += usize::from(s.multi);
            stats.boilerplate += usize::from(s.boilerplate);
            stats.cross_site += usize::from(s.cross_site);
            for urls in s.parts {
                if let Some(d) = &s.declarer {
                    self.declarers
                        .push((self.len() as u32, d.clone().into_boxed_str()));
                }
                self.push(&urls, s.label, opts, stats);
                self.signals.push(s.signal);
            }
        }
    }

    /// Add one cluster (sorted distinct URLs), sampled to [`LearnOptions::max_cluster`].
    fn push(&mut self, urls: &[String], label: usize, opts: &LearnOptions, stats: &mut LearnStats) {
        let n = urls.len();
        if n > opts.max_cluster {
            stats.capped += 1;
            let sample = (0..opts.max_cluster)
                .map(|i| (i * n / opts.max_cluster) as u32)
                .collect();
            self.capped.push((self.len(), sample));
        } else if n > self.all.len() {
            self.all = (0..n as u32).collect();
        }
        for u in urls {
            self.data.push(u, label);
        }
        self.starts.push(self.data.len());
    }

    fn finish(&mut self) {
        self.starts.shrink_to_fit();
        self.signals.shrink_to_fit();
        self.declarers.shrink_to_fit();
    }

    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are no clusters.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Cluster `c`'s sorted distinct URLs (panics past the end).
    pub fn urls(&self, c: usize) -> Members<'_> {
        Members {
            data: &self.data,
            start: self.starts[c],
            end: self.starts[c + 1],
        }
    }

    /// The URL that declared cluster `c` (a redirect's source, a page declaring its canonical),
    /// base-normalized, if any.
    pub fn declarer(&self, c: usize) -> Option<&str> {
        self.declarers
            .binary_search_by_key(&(c as u32), |(k, _)| *k)
            .ok()
            .map(|i| &*self.declarers[i].1)
    }

    /// Cluster `c` is one URL's redirect or canonical to one URL of another registrable
    /// domain (kept whole by the reader and [`Prepared::new`]): the index of that target among
    /// its URLs. Such a pair is its declaring site's consent to be aliased there, never
    /// evidence about the target's site: it is learned from only as the declarer → target
    /// alias ([`observations`]), and [`consented`] counts it.
    pub fn consent_target(&self, c: usize) -> Option<u32> {
        let sig = self.signals[c];
        if sig == 0 || sig & !DECLARED_SIGNALS != 0 {
            return None;
        }
        let urls = self.urls(c);
        if urls.len() != 2 {
            return None;
        }
        let d = self.declarer(c)?;
        let at = (0..2).find(|&i| urls.get(i) == d)?;
        let site =
            |u: &str| split_url(u).map(|p| crate::site::registrable_domain(p.host).to_string());
        let (a, b) = (site(urls.get(0))?, site(urls.get(1))?);
        (a != b).then_some(1 - at as u32)
    }

    /// How many distinct URLs of the data are on `host` (a scope host: with its port).
    fn urls_on(&self, host: &str) -> usize {
        let counts = self.host_urls.get_or_init(|| {
            let mut seen: foldhash::HashSet<&str> = foldhash::HashSet::new();
            let mut m: HashMap<String, usize> = HashMap::new();
            for c in 0..self.len() {
                for u in self.urls(c).iter() {
                    if seen.insert(u) {
                        if let Some(p) = split_url(u) {
                            *m.entry(p.scope_host(u).to_string()).or_default() += 1;
                        }
                    }
                }
            }
            m
        });
        counts.get(host).copied().unwrap_or(0)
    }

    /// Cluster `c`'s members that take part in alignment (indices into [`Prepared::urls`]).
    pub fn sample(&self, c: usize) -> &[u32] {
        match self.capped.binary_search_by_key(&c, |&(k, _)| k) {
            Ok(k) => &self.capped[k].1,
            Err(_) => &self.all[..self.starts[c + 1] - self.starts[c]],
        }
    }

    /// The labelled URLs, for validation (no copy).
    pub fn into_labeled(self) -> LabeledUrls {
        self.data
    }

    #[cfg(test)]
    fn url_lists(&self) -> Vec<Vec<String>> {
        (0..self.len())
            .map(|c| self.urls(c).iter().map(String::from).collect())
            .collect()
    }
}

/// Least share of a host's URLs that must declare a move of the whole host to another site
/// ([`consented`]).
pub const MIN_MOVED_SHARE: f64 = 0.9;

/// `rules` built from the pairs `obs`, split into those that may be kept and those that move
/// URLs to another host or literal path prefix ([`dedust_core::site_move`]) without consent.
/// A move is consented when some of its pairs rewrite the very URL that declared the redirect
/// or canonical ([`Consent::Declared`], counting those pairs), or with `--allow-cross-site`
/// ([`Consent::AllowCrossSite`]); a cross-host rule naming one literal host never is. The
/// Public Suffix List plays no part: tenants of one registrable domain are sites of their own.
/// A whole host moved to another registrable domain needs [`MIN_MOVED_SHARE`] of the host's
/// URLs in the data to have declared it.
///
/// # Complexity
/// `O(n)` for `n` pairs of a move (declarers are looked up by binary search); nothing for the
/// other rules.
fn consented(rules: Vec<Rule>, obs: &[Obs], prep: &Prepared) -> (Vec<Rule>, Vec<Rule>) {
    let mut out = (Vec::new(), Vec::new());
    for mut r in rules {
        match dedust_core::site_move(&r) {
            None => out.0.push(r),
            Some(dedust_core::Move::AnyHostToOne) => out.1.push(r),
            Some(_) => {
                let mut declared = obs
                    .iter()
                    .filter(|o| {
                        o.signal & DECLARED_SIGNALS != 0
                            && prep.declarer(o.cluster) == Some(o.from_url)
                    })
                    .count();
                // A whole host sent to another site needs nearly all of the host's URLs to
                // declare it: a site whose outlink redirector (`/go/N` → another site) is
                // consistent has not moved its other pages there.
                let whole_host = r.kind == dedust_core::RuleKind::Alias
                    && r.output.host.as_deref().is_some_and(|to| {
                        crate::site::registrable_domain(to)
                            != crate::site::registrable_domain(&r.source.host)
                    });
                if whole_host
                    && (declared as f64) < MIN_MOVED_SHARE * prep.urls_on(&r.source.host) as f64
                {
                    declared = 0;
                }
                r.consent = if declared > 0 {
                    Some(Consent::Declared(declared))
                } else if prep.allow_cross_site {
                    Some(Consent::AllowCrossSite)
                } else {
                    None
                };
                if r.consent.is_some() {
                    out.0.push(r);
                } else {
                    out.1.push(r);
                }
            }
        }
    }
    out
}

/// Learn candidate rules from clusters (no validation).
///
/// `progress` is called with the number of clusters done so far (from several threads).
///
/// ```
/// use dedust_learn::{learn_candidates, Cluster, LearnOptions};
/// let mk = |id: &str, urls: &[&str]| Cluster { id: id.into(), urls: urls.iter().map(|s| s.to_string()).collect() };
/// let clusters = vec![
///     mk("a", &["https://f.org/show.php?t=1", "https://f.org/show.php?t=1&mode=hybrid"]),
///     mk("b", &["https://f.org/show.php?t=2", "https://f.org/show.php?p=7104213&t=2"]),
/// ];
/// let (rules, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
/// // `p` (an id) is dropped by name; `mode` (a setting) per value, by a drop rule.
/// assert!(rules.iter().any(|r| r.pattern == "*://f.org/show.php?t={int:t}&[p]"));
/// assert!(rules.iter().any(|r| r.pattern == "*://f.org{/path}?mode=hybrid&{rest}"));
/// ```
pub fn learn_candidates(
    clusters: &[Cluster],
    opts: &LearnOptions,
    progress: &(dyn Fn(usize) + Sync),
) -> (Vec<Rule>, LearnStats) {
    let (prep, stats) = Prepared::new(clusters, opts);
    let (rules, stats) = candidates_from(&prep, stats, progress);
    (rules, stats)
}

/// Learn candidate rules from prepared clusters.
///
/// # Complexity
/// Alignment dominates: `O(Σ_c n_c · (|V_c| + |E_c|) · L)` over clusters `c` (near-linear in URLs for
/// real clusters; big clusters are sampled). Pairs are stored in 12 bytes each while grouping.
pub fn candidates_from(
    prep: &Prepared,
    mut stats: LearnStats,
    progress: &(dyn Fn(usize) + Sync),
) -> (Vec<Rule>, LearnStats) {
    let total = prep.len();
    // How many clusters hold each URL form and each site.
    let popularity: HashMap<String, usize> = (0..total)
        .into_par_iter()
        .fold(HashMap::new, |mut m: HashMap<String, usize>, c| {
            let urls = prep.urls(c);
            if urls.len() >= 2 {
                let mut shapes: BTreeSet<String> = prep
                    .sample(c)
                    .iter()
                    .map(|&i| urls.get(i as usize))
                    .flat_map(|u| [url_shape(u), site_key(u)])
                    .collect();
                // Per registrable domain too, for the cross-site alias guard.
                if prep.allow_cross_site {
                    for u in prep.sample(c).iter().map(|&i| urls.get(i as usize)) {
                        if let Some(p) = split_url(u) {
                            shapes.insert(format!(
                                "\u{3}{}",
                                crate::site::registrable_domain(p.host)
                            ));
                        }
                    }
                }
                for sh in shapes {
                    *m.entry(sh).or_default() += 1;
                }
            }
            m
        })
        .reduce(HashMap::new, |mut a, b| {
            for (k, v) in b {
                *a.entry(k).or_default() += v;
            }
            a
        });
    // Align each cluster and pick its canonical target.
    let done = std::sync::atomic::AtomicUsize::new(0);
    let targets: Vec<Option<ClusterTarget>> = (0..total)
        .into_par_iter()
        .map(|c| {
            let t = match prep.consent_target(c) {
                Some(m) => Some(ClusterTarget::Member(m)),
                None => cluster_target(prep.urls(c), prep.sample(c), &popularity),
            };
            let d = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            if d.is_multiple_of(1024) {
                progress(d);
            }
            t
        })
        .collect();
    progress(total);
    // Group the pairs by key, folding per thread so keys are not held once per pair.
    type Groups = HashMap<GroupKey, Vec<Pair>>;
    let (groups, pairs): (Groups, usize) = (0..total)
        .into_par_iter()
        .fold(
            || (Groups::new(), 0usize, Vec::new()),
            |(mut m, mut n, mut buf), c| {
                if let Some(t) = targets[c].as_ref().map(|t| t.get(prep.urls(c))) {
                    buf.clear();
                    // A redirect or a declared canonical (`old id → new id`) is no evidence that
                    // an id does not separate content.
                    let declared = prep.signals[c] & 0b110 != 0;
                    observations(
                        c,
                        prep.urls(c),
                        prep.sample(c),
                        t,
                        &popularity,
                        (declared, prep.consent_target(c).is_some()),
                        &mut buf,
                    );
                    for (k, p) in buf.drain(..) {
                        n += usize::from(
                            matches!(&k, GroupKey::Template { from, .. } if from != ANY_HOST),
                        );
                        m.entry(k).or_default().push(p);
                    }
                }
                (m, n, buf)
            },
        )
        .map(|(m, n, _)| (m, n))
        .reduce(
            || (Groups::new(), 0),
            |(mut a, na), (b, nb)| {
                for (k, mut v) in b {
                    a.entry(k).or_default().append(&mut v);
                }
                (a, na + nb)
            },
        );
    stats.pairs = pairs;
    let mut groups: Vec<(GroupKey, Vec<Pair>)> = groups.into_iter().collect();
    groups.par_sort_by(|a, b| a.0.cmp(&b.0));
    // One task per group: a few groups (a convention, a tracking parameter pooled over every
    // host) hold most pairs, and rayon's default split left them to one thread.
    let built: Vec<(Vec<Rule>, Vec<Rule>)> = groups
        .par_iter_mut()
        .with_max_len(1)
        .map(|(k, pairs)| {
            pairs.sort_unstable();
            let obs = materialize(pairs, prep, &targets);
            let family = family_of(&obs);
            let rules: Vec<Rule> = match k {
                GroupKey::GlobalDrop { name, path } => build_drops(ANY_HOST, &[], name, path, &obs),
                // A cross-host template needs evidence from two sites at least; a shard counts
                // its sites for `merge` to add up.
                GroupKey::Template { from, .. } if from == ANY_HOST && prep.shard => {
                    let d = domains(&obs);
                    build_rule(k, &obs)
                        .map(|mut r| {
                            r.domains = Some(d);
                            r
                        })
                        .into_iter()
                        .collect()
                }
                GroupKey::Template { from, .. } if from == ANY_HOST && domains(&obs) < 2 => {
                    Vec::new()
                }
                // A host-scoped drop by name (any value) only for high-entropy values.
                GroupKey::Drop {
                    host,
                    context,
                    drop,
                } if !high_entropy(&drop_values(drop, &obs)) => {
                    build_drops(host, context, drop, &None, &obs)
                }
                GroupKey::Template { .. } => {
                    let mut rules: Vec<Rule> = match literal_variants(k, &obs, &family) {
                        Some(parts) => parts.iter().filter_map(|p| build_rule(k, p)).collect(),
                        None => build_rule(k, &obs).into_iter().collect(),
                    };
                    if let Some(j) = rules.first().and_then(|r| joint_drop(k, r, &family)) {
                        rules.push(j);
                    }
                    rules
                }
                _ => build_rule(k, &obs).into_iter().collect(),
            };
            let rules = rules
                .into_iter()
                .map(|mut r| {
                    r.consensus = Some(family.record(&r.scope));
                    r
                })
                .collect();
            consented(rules, &obs, prep)
        })
        .collect();
    let mut rules: Vec<Rule> = Vec::new();
    for (kept, refused) in built {
        rules.extend(kept);
        stats
            .no_consent
            .extend(refused.into_iter().map(|r| (r.id, r.pattern, r.target)));
    }
    // Identical rules from different keys collapse into the first.
    let mut seen = BTreeSet::new();
    rules.retain(|r| seen.insert((r.source.clone(), r.output.clone(), r.convention.clone())));
    // Sibling rules merged along the value-type lattice (extra candidates; validation decides).
    for m in crate::generalize::merge_siblings(&rules) {
        // (A merge of consented moves carries their pooled consent.)
        if dedust_core::refused(&m).is_none()
            && seen.insert((m.source.clone(), m.output.clone(), m.convention.clone()))
        {
            rules.push(m);
        }
    }
    (rules, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`drop_values_by_name`] gives each name what [`drop_values`] gives it alone: repeated
    /// names (first occurrence), bare names, values repeated within and across clusters.
    #[test]
    fn drop_values_by_name_equals_one_name_at_a_time() {
        let urls = [
            "https://h.org/p?a=1&b=2&a=3",
            "https://h.org/p?a=1&c",
            "https://h.org/p?b=&c=x&d=9",
            "https://h.org/p?a=4&b=2",
            "https://h.org/p?c=x&c=y",
        ];
        let obs: Vec<Obs> = urls
            .iter()
            .enumerate()
            .map(|(k, u)| Obs {
                cluster: k / 2,
                signal: 0,
                from: Units::parse(u).unwrap(),
                from_url: u,
                to_url: u,
            })
            .collect();
        let all = drop_values_by_name(&obs);
        for n in ["a", "b", "c", "d", "e"] {
            let want = drop_values(n, &obs);
            let got = all.get(n).cloned().unwrap_or_default();
            assert_eq!(got, want, "{n}");
        }
        // Once per cluster, the first occurrence in a URL (`a=3` is a repeat).
        assert_eq!(all["a"], ["1", "4"]);
    }

    #[test]
    fn slugs_table() {
        for (seg, want) in [
            ("best-running-shoes-2024", true),
            ("caf%C3%A9-au-lait", true),
            ("a_b_c", true),
            ("top-10-shoes", true),
            ("t-123", false),
            ("f-12.html", false),
            ("a-b", false),
            ("B07XJ8C8F5", false),
            ("2024-05-01", false),
            ("10-20-shoes", false),
            ("a--b-c", false),
            ("showthread.php", false),
        ] {
            assert_eq!(is_slug(seg), want, "{seg}");
        }
        // Every slug has one shape, whatever its word count; other shapes keep their tokens.
        assert_eq!(shape("a-b-c"), shape("best-running-shoes-for-men"));
        assert_ne!(shape("t-123"), shape("t-123-x"));
        for (seg, want) in [
            ("B07XJ8C8F5", true),
            ("9780262033848X", true),
            ("t123", false),
            ("page22", true),
            ("123456", false),
            ("abcdef", false),
            ("ab-12cd", false),
        ] {
            assert_eq!(is_code(seg), want, "{seg}");
        }
        assert_eq!(shape("B07XJ8C8F5"), shape("B0C1Z2QW9R"));
        assert_eq!(
            seg_pieces(&["B07XJ8C8F5", "B0C1Z2QW9R"], true),
            vec![Piece::Cap(CapType::Alnum)]
        );
        // Slugs of any word count are one capture.
        assert_eq!(
            seg_pieces(&["a-b-c", "d-e-f"], false),
            vec![Piece::Cap(CapType::Any)]
        );
        assert_eq!(
            seg_pieces(&["t-1", "t-2"], false),
            vec![Piece::Lit("t-".into()), Piece::Cap(CapType::Int)]
        );
    }

    /// No site speaks for another: copiers on another tenant of a shared domain (whatever the
    /// Public Suffix List says) or under another path tenant get no rule moving the victim's
    /// URLs; a migration the old URLs declared (redirects from them) is learned, with its consent
    /// recorded; the same pairs declared by the new URLs are not. Each copier case is learned
    /// again with `--allow-cross-site` to show its move would be learned (the data proves
    /// something).
    #[test]
    fn moves_are_learned_only_with_the_moved_sites_consent() {
        let mk = |id: String, urls: Vec<String>| Cluster { id, urls };
        // A copier re-serving 20 victim pages, plus 10 pages of its own with a tracking
        // parameter (so the copier is the better-established form and a rule would point the
        // victim at it).
        let copied = |victim: &dyn Fn(usize) -> String, evil: &dyn Fn(usize) -> String| {
            let mut c: Vec<Cluster> = (0..20)
                .map(|n| mk(format!("digest:D{n}"), vec![victim(n), evil(n)]))
                .collect();
            c.extend((0..10).map(|n| {
                let own = evil(100 + n);
                mk(
                    format!("digest:E{n}"),
                    vec![own.clone(), format!("{own}?utm_source=x")],
                )
            }));
            c
        };
        let redirects = |declared_by_old: bool| -> Vec<Cluster> {
            (0..20)
                .map(|n| {
                    let (old, new) = (
                        format!("http://old.example.org/x/{n}"),
                        format!("http://new.example.org/x/{n}"),
                    );
                    let by = if declared_by_old { &old } else { &new };
                    mk(format!("redirect:{by}"), vec![old.clone(), new])
                })
                .collect()
        };
        let host = |h: &'static str| move |n: usize| format!("https://{h}/p/{n}");
        let tenant =
            |t: &'static str| move |n: usize| format!("https://sites.google.com/view/{t}/page{n}");
        // (name, clusters, a URL of the moved site and what it may become, allow-cross-site
        // rewrites it too)
        type Case = (&'static str, Vec<Cluster>, String, Option<String>, bool);
        let cases: Vec<Case> = vec![
            (
                "wordpress tenants",
                copied(&host("victim.wordpress.com"), &host("evil.wordpress.com")),
                "https://victim.wordpress.com/p/55".into(),
                None,
                true,
            ),
            (
                "tenants of a domain the list does not know",
                copied(
                    &host("victim.tenants-example.net"),
                    &host("evil.tenants-example.net"),
                ),
                "https://victim.tenants-example.net/p/55".into(),
                None,
                true,
            ),
            (
                "path tenants",
                copied(&tenant("victim"), &tenant("evil")),
                "https://sites.google.com/view/victim/page3".into(),
                None,
                true,
            ),
            (
                "a migration the old URLs declared",
                redirects(true),
                "http://old.example.org/x/77".into(),
                Some("http://new.example.org/x/77".into()),
                true,
            ),
            (
                "the same pairs declared by the new URLs",
                redirects(false),
                "http://old.example.org/x/77".into(),
                None,
                true,
            ),
        ];
        for (name, clusters, url, want, moved_when_allowed) in cases {
            let run = |allow_cross_site: bool| {
                let cfg = crate::LearnConfig {
                    learn: LearnOptions {
                        allow_cross_site,
                        ..Default::default()
                    },
                    validate: Some(Default::default()),
                    ..Default::default()
                };
                let out = crate::learn(&clusters, &cfg, &|_, _, _| {});
                let n = dedust_core::Normalizer::new(out.file.rules.clone(), None);
                let got = n.normalize(&url).expect("a URL").url;
                (got, out)
            };
            let (got, out) = run(false);
            assert_eq!(
                got,
                want.clone().unwrap_or(url.clone()),
                "{name}: {:#?}",
                out.file.rules
            );
            let moves: Vec<&Rule> = out
                .file
                .rules
                .iter()
                .filter(|r| dedust_core::site_move(r).is_some())
                .collect();
            match &want {
                // The consent is recorded: 20 pairs declared by the URLs they rewrite.
                Some(_) => assert!(
                    moves
                        .iter()
                        .any(|r| r.consent == Some(Consent::Declared(20))),
                    "{name}: {moves:#?}"
                ),
                None => {
                    assert!(moves.is_empty(), "{name}: {moves:#?}");
                    assert!(!out.stats.no_consent.is_empty(), "{name}: nothing refused");
                }
            }
            let (allowed, out) = run(true);
            assert_eq!(
                allowed != url,
                moved_when_allowed,
                "{name} with --allow-cross-site: {allowed}"
            );
            if want.is_none() {
                assert!(
                    out.file
                        .rules
                        .iter()
                        .filter(|r| dedust_core::site_move(r).is_some())
                        .all(|r| r.consent == Some(Consent::AllowCrossSite)),
                    "{name}"
                );
            }
        }
    }

    fn mk(id: &str, urls: &[&str]) -> Cluster {
        Cluster {
            id: id.into(),
            urls: urls.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn learn(cl: &[Cluster]) -> Vec<(String, String)> {
        let (rules, _) = learn_candidates(cl, &LearnOptions::default(), &|_| {});
        rules.into_iter().map(|r| (r.pattern, r.target)).collect()
    }

    /// Issue #10: two 15 KB URLs of 5,000 segments cost gigabytes to align; learning leaves URLs
    /// over the limits out and counts them.
    #[test]
    fn urls_over_the_learning_limits_are_left_out() {
        let deep = |k: usize| {
            let segs: Vec<String> = (0..5000).map(|i| format!("s{}", (i * k) % 10)).collect();
            format!("https://d.org/{}", segs.join("/"))
        };
        let long = format!("https://d.org/{}", "x".repeat(MAX_LEARN_URL));
        let many = format!(
            "https://d.org/p?{}",
            (0..300)
                .map(|i| format!("a{i}=1"))
                .collect::<Vec<_>>()
                .join("&")
        );
        let ok = "https://d.org/p?a=1";
        let cl = [mk("c", &[&deep(1), &deep(3), &long, &many, ok])];
        let (prep, stats) = Prepared::new(&cl, &LearnOptions::default());
        assert_eq!((stats.too_long, stats.bad_urls), (4, 0));
        assert_eq!(prep.url_lists(), vec![vec![ok.to_string()]]);
    }

    #[test]
    fn an_empty_preparation_learns_nothing() {
        let prep = Prepared::default();
        assert_eq!((prep.len(), prep.is_empty()), (0, true));
        let (rules, stats) = candidates_from(&prep, LearnStats::default(), &|_| {});
        assert_eq!((rules.len(), stats.pairs), (0, 0));
        let (prep, stats) = Prepared::new(&[], &LearnOptions::default());
        assert_eq!(
            (prep.len(), stats.clusters, prep.into_labeled().len()),
            (0, 0, 0)
        );
    }

    #[test]
    fn clusters_split_per_registrable_domain() {
        let v = |u: &[&str]| u.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases: [(&[&str], &[&[&str]]); 4] = [
            (&[], &[&[]]),
            (
                &["http://a.org/1", "https://a.org/1?x"],
                &[&["http://a.org/1", "https://a.org/1?x"]],
            ),
            // `www.` and other subdomains are the same site.
            (
                &["http://a.org/1", "http://www.a.org/1"],
                &[&["http://a.org/1", "http://www.a.org/1"]],
            ),
            (
                &[
                    "http://a.co/1",
                    "http://b.org/1",
                    "http://c.a.co/1",
                    "http://x.b.org/2",
                ],
                &[
                    &["http://a.co/1", "http://c.a.co/1"],
                    &["http://b.org/1", "http://x.b.org/2"],
                ],
            ),
        ];
        for (urls, want) in cases {
            let want: Vec<Vec<String>> = want.iter().map(|p| v(p)).collect();
            assert_eq!(per_site(v(urls)), want, "{urls:?}");
        }
        let (prep, stats) = Prepared::new(
            &[mk(
                "c",
                &["http://a.co/1", "http://b.org/1", "http://b.org/1?s=2"],
            )],
            &LearnOptions::default(),
        );
        assert_eq!((prep.len(), stats.cross_site, stats.clusters), (2, 1, 1));
        assert_eq!(
            prep.data.cluster(prep.starts[0]),
            prep.data.cluster(prep.starts[1]),
            "one truth cluster for validation"
        );
    }

    #[test]
    fn boilerplate_clusters_split_per_host() {
        // One digest on three sites, one of them with two hosts: (bound, allow cross-site) →
        // (parts, boilerplate, cross_site).
        let urls = [
            "http://a.co/e",
            "http://www.a.co/e",
            "http://b.org/e",
            "http://c.net/e",
        ];
        for (bound, cross, want) in [
            (2, false, (4, 1, 0)),
            (2, true, (4, 1, 0)),
            (3, false, (3, 0, 1)),
            (3, true, (1, 0, 0)),
            (20, false, (3, 0, 1)),
        ] {
            let opts = LearnOptions {
                boilerplate_sites: bound,
                allow_cross_site: cross,
                ..Default::default()
            };
            let (prep, stats) = Prepared::new(&[mk("c", &urls)], &opts);
            assert_eq!(
                (prep.len(), stats.boilerplate, stats.cross_site),
                want,
                "bound {bound}, cross-site {cross}"
            );
            // Every part is one host or (not boilerplate) one site; no URL lost.
            assert_eq!(prep.url_lists().iter().map(Vec::len).sum::<usize>(), 4);
        }
        // learn_site says where each URL goes, as Prepared splits it.
        let site = |u: &str| learn_site(u, &Default::default()).map(|(s, h)| s + "|" + &h);
        assert_eq!(site("http://WWW.A.co/e").as_deref(), Some("a.co|www.a.co"));
        assert_eq!(site("http://c.net/e").as_deref(), Some("c.net|c.net"));
        let long = format!("http://c.net/{}", "a/".repeat(300));
        assert_eq!(site(&long), None, "over MAX_LEARN_PARTS: left out by learn");
    }

    #[test]
    fn path_param_of_table() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (long, short, want) in [
            (
                v(&["s", "item.do;jsessionid=A1"]),
                v(&["s", "item.do"]),
                Some("jsessionid"),
            ),
            (
                v(&["s", "i.do;v=2;sid=9;w=1"]),
                v(&["s", "i.do;v=2;w=1"]),
                Some("sid"),
            ),
            (v(&[";sid=9"]), v(&[""]), Some("sid")),
            (
                v(&["s", "item.do;jsessionid=A1"]),
                v(&["t", "item.do"]),
                None,
            ),
            (v(&["s", "item.do;a=1;b=2"]), v(&["s", "item.do"]), None),
            (v(&["s", "item.do;123=4"]), v(&["s", "item.do"]), None),
            (v(&["s", "item.do;=4"]), v(&["s", "item.do"]), None),
            (v(&["s", "item.dox"]), v(&["s", "item.do"]), None),
        ] {
            assert_eq!(path_param_of(&long, &short).as_deref(), want, "{long:?}");
        }
        // A hostile segment of 16 k path parameters is one pass, not one per parameter.
        let big = ";a=1".repeat(16 * 1024);
        assert_eq!(path_param_of(&v(&[&format!("x{big}")]), &v(&["x"])), None);
        assert_eq!(
            path_param_of(&v(&[&format!("x;sid=1{big}")]), &v(&[&format!("x{big}")])).as_deref(),
            Some("sid")
        );
    }

    /// A typed drop's learning record (clusters, URLs, examples) is the same whether it was typed
    /// at once (one site: six ids, each seen once, read as ids) or merged from per-value drops
    /// (eight sites: the same six values, each seen eight times, read as settings), and it adds
    /// up over disjoint shards of sites, as `merge` adds the shards' records.
    #[test]
    fn a_typed_drop_records_the_same_whichever_way_it_was_typed() {
        let ids = [50, 63, 76, 89, 102, 115];
        let site = |s: usize| {
            let urls: Vec<String> = ids
                .iter()
                .map(|u| format!("http://s{s}.example/member.php?u={u}"))
                .chain(std::iter::once(format!("http://s{s}.example/member.php")))
                .collect();
            Cluster {
                id: format!("login{s}"),
                urls,
            }
        };
        let typed = |cl: &[Cluster]| -> Rule {
            let (rules, _) = learn_candidates(cl, &LearnOptions::default(), &|_| {});
            rules
                .into_iter()
                .find(|r| r.is_global() && r.pattern == "*://*/member.php?u={int:u}&{rest}")
                .unwrap_or_else(|| {
                    panic!("no typed cross-host drop of `u` from {} sites", cl.len())
                })
        };
        let all: Vec<Cluster> = (0..8).map(site).collect();
        let whole = typed(&all);
        let parts: Vec<Rule> = all.chunks(1).map(typed).collect();
        assert_eq!(
            whole.clusters,
            parts.iter().map(|r| r.clusters).sum::<usize>()
        );
        assert_eq!(whole.urls, parts.iter().map(|r| r.urls).sum::<usize>());
        let mut ex: Vec<Vec<String>> = parts.iter().flat_map(|r| r.examples.clone()).collect();
        ex.sort();
        ex.dedup();
        ex.truncate(3);
        assert_eq!(whole.examples, ex);
        assert!(
            whole.clusters > 8,
            "per value and cluster: {}",
            whole.clusters
        );
    }

    #[test]
    fn cross_host_candidates_table() {
        // (clusters, a cross-host pattern that must be a candidate, one that must not)
        let cases: Vec<(Vec<Cluster>, &str, &str)> = vec![
            // High-entropy values: one typed rule, not one per value.
            (
                vec![
                    mk(
                        "a",
                        &["http://a.org/x", "http://a.org/x?sid=0a1b2c3d4e5f6a7b"],
                    ),
                    mk(
                        "b",
                        &["http://b.org/y", "http://b.org/y?sid=99aa88bb77cc66dd"],
                    ),
                    mk(
                        "c",
                        &["http://b.org/z", "http://b.org/z?sid=1234567890abcdef"],
                    ),
                ],
                "*://*{/path}?sid={hex:sid}&{rest}",
                "*://*{/path}?sid=0a1b2c3d4e5f6a7b&{rest}",
            ),
            // Low-entropy values: per value, so `mode=threaded` can be judged apart.
            (
                vec![
                    mk(
                        "a",
                        &[
                            "http://a.org/s.php?t=1",
                            "http://a.org/s.php?mode=hybrid&t=1",
                        ],
                    ),
                    mk(
                        "b",
                        &[
                            "http://b.org/s.php?t=2",
                            "http://b.org/s.php?mode=hybrid&t=2",
                        ],
                    ),
                    mk(
                        "c",
                        &[
                            "http://b.org/s.php?t=3",
                            "http://b.org/s.php?mode=threaded&t=3",
                        ],
                    ),
                ],
                "*://*{/path}?mode=hybrid&{rest}",
                "*://*{/path}?mode={alpha:mode}&{rest}",
            ),
            // The same drop on a literal path (a path signature), and anywhere.
            (
                vec![mk(
                    "a",
                    &[
                        "http://a.org/s.php?t=1",
                        "http://a.org/s.php?mode=hybrid&t=1",
                    ],
                )],
                "*://*/s.php?mode=hybrid&{rest}",
                "*://*/s.php?t={int:t}&[mode]",
            ),
            // A value that alone varies among URLs of one content (a login wall's member pages):
            // dropped on that literal path across hosts, never on every path.
            (
                vec![mk(
                    "w",
                    &[
                        "http://a.org/member.php?u=102",
                        "http://a.org/member.php?u=5",
                        "http://a.org/member.php?u=77",
                        "http://a.org/member.php?u=9",
                    ],
                )],
                "*://*/member.php?u={int:u}&{rest}",
                "*://*{/path}?u={int:u}&{rest}",
            ),
            // Conventions, in either direction.
            (
                vec![mk("a", &["http://www.a.org/x", "http://a.org/x"])],
                "*://www.*{/path}{?query}",
                "http://*{/path}{?query}",
            ),
            (
                vec![mk("a", &["http://a.org/x", "https://a.org/x"])],
                "http://*{/path}{?query}",
                "*://www.*{/path}{?query}",
            ),
            (
                vec![mk("a", &["http://a.org/d/", "http://a.org/d/index.php"])],
                "*://*{/path}/index.php{?query}",
                "*://*{/path}/{?query}",
            ),
            (
                vec![mk("a", &["http://a.org/d/", "http://a.org/d"])],
                "*://*{/path}/{?query}",
                "*://*{/path}/d{?query}",
            ),
            // A suffix word (AMP pages), never the first segment nor a value.
            (
                vec![
                    mk("a", &["http://a.org/x/y/", "http://a.org/x/y/amp/"]),
                    mk("b", &["http://a.org/amp/", "http://a.org/"]),
                    mk("c", &["http://a.org/n/1", "http://a.org/n/1/2019"]),
                ],
                "*://*{/path}/amp[/]{?query}",
                "*://*{/path}/y[/]{?query}",
            ),
            // The same template on two sites: a cross-host template that drops no parameter.
            (
                vec![
                    mk(
                        "a",
                        &[
                            "http://a.org/s/12",
                            "http://a.org/product.php?id=12&sid=0a1b2c3d4e5f6a7b",
                        ],
                    ),
                    mk("b", &["http://b.org/s/7", "http://b.org/product.php?id=7"]),
                ],
                "*://*/product.php?id={int:id}",
                "*://*/product.php?id={int:id}&[sid]",
            ),
            // A parameter every source carries with one value is the software's signature:
            // required with that value (never dropped by name), so other sites' `id=` pages
            // without it stay apart.
            (
                vec![
                    mk(
                        "a",
                        &[
                            "http://a.org/c/12",
                            "http://a.org/index.php?id=12&option=com_content",
                        ],
                    ),
                    mk(
                        "b",
                        &[
                            "http://b.org/c/7",
                            "http://b.org/index.php?id=7&option=com_content",
                        ],
                    ),
                ],
                "*://*/index.php?id={int:id}&option=com_content",
                "*://*/index.php?id={int:id}",
            ),
            // One whose value varies is no signature: the template does not match it.
            (
                vec![
                    mk(
                        "a",
                        &["http://a.org/c/12", "http://a.org/index.php?id=12&v=1"],
                    ),
                    mk(
                        "b",
                        &["http://b.org/c/7", "http://b.org/index.php?id=7&v=2"],
                    ),
                ],
                "*://*/index.php?id={int:id}",
                "*://*/index.php?id={int:id}&v={int:v}",
            ),
            // A member on another host (here `www.`): no cross-host template from the pair.
            (
                vec![
                    mk(
                        "a",
                        &["http://www.a.org/s/12", "http://a.org/product.php?id=12"],
                    ),
                    mk(
                        "b",
                        &["http://www.b.org/s/7", "http://b.org/product.php?id=7"],
                    ),
                ],
                "*://www.*{/path}{?query}",
                "*://*/product.php?id={int:id}",
            ),
            // On one site only: a host template, no cross-host one.
            (
                vec![
                    mk(
                        "a",
                        &[
                            "http://a.org/s/12",
                            "http://a.org/product.php?id=12&sid=0a1b2c3d4e5f6a7b",
                        ],
                    ),
                    mk("b", &["http://a.org/s/7", "http://a.org/product.php?id=7"]),
                ],
                "*://a.org/product.php?id={int:id}&[sid]",
                "*://*/product.php?id={int:id}",
            ),
        ];
        for (clusters, want, not) in cases {
            let got = learn(&clusters);
            assert!(
                !got.iter().any(|(p, _)| p.contains("{/path}/2019")
                    || p.ends_with("/amp/{?query}") && p.starts_with("*://*{/path}")),
                "a value or a first segment taken for a suffix: {got:#?}"
            );
            assert!(
                got.iter().any(|(p, _)| p == want),
                "{want} missing in {got:#?}"
            );
            assert!(!got.iter().any(|(p, _)| p == not), "{not} in {got:#?}");
        }
    }

    #[test]
    fn cross_host_rules_apply_to_unseen_hosts_but_not_exceptions() {
        let mut r = convention_rule(Convention::StripWww);
        let n = crate::Normalizer::new(vec![r.clone()], None);
        assert_eq!(
            n.apply_rules("http://www.never-seen.net/a?b=1".into()).url,
            "http://never-seen.net/a?b=1"
        );
        r.except = vec!["keep.net".into()];
        let n = crate::Normalizer::new(vec![r], None);
        assert_eq!(
            n.apply_rules("http://www.keep.net/a".into()).url,
            "http://www.keep.net/a"
        );
        // Conventions never touch the root, a bare suffix, or a URL already in key form.
        let table = [
            (Convention::TrailingSlash, "http://h.org/", None),
            (
                Convention::TrailingSlash,
                "http://h.org/a/?x=1",
                Some("http://h.org/a?x=1"),
            ),
            (Convention::TrailingSlash, "http://h.org/a//", None),
            (Convention::StripWww, "http://www.com/", None),
            (Convention::StripWww, "http://www.co.uk/", None),
            (Convention::StripWww, "http://www.github.io/x", None),
            (
                Convention::StripWww,
                "http://www.bbc.co.uk/x",
                Some("http://bbc.co.uk/x"),
            ),
            (Convention::Https, "https://h.org/a", None),
            (
                Convention::Https,
                "http://h.org/a?b",
                Some("https://h.org/a?b"),
            ),
            (
                Convention::DefaultDoc("index.html".into()),
                "http://h.org/d/index.html?x=1",
                Some("http://h.org/d/?x=1"),
            ),
            (
                Convention::DefaultDoc("index.html".into()),
                "http://h.org/d/myindex.html",
                None,
            ),
            (
                Convention::DefaultDoc("index.html".into()),
                "http://h.org/index.html",
                Some("http://h.org/"),
            ),
        ];
        for (c, url, want) in table {
            let r = convention_rule(c.clone());
            assert_eq!(
                dedust_core::apply_rule(&r, url).as_deref(),
                want,
                "{c:?} on {url}"
            );
        }
    }

    #[test]
    fn a_template_drops_ids_by_name_and_settings_per_value() {
        // A host template (its target copies `t`) over pairs that drop a setting (`mode`, two
        // values) and a session id: the id joins its optional set, the setting does not — a
        // `[mode]` would drop `mode=threaded` with `mode=hybrid`.
        let clusters: Vec<Cluster> = (0..4)
            .map(|i| {
                let mode = ["hybrid", "threaded"][i % 2];
                mk(
                    &format!("c{i}"),
                    &[
                        &format!("https://f.org/show.php?t={i}&mode={mode}"),
                        &format!("https://f.org/show.php?t={i}&sid=4f3c2b1a{i:02}"),
                        &format!("https://f.org/show.php?t={i}"),
                    ],
                )
            })
            .collect();
        let (rules, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let templates: Vec<&str> = rules
            .iter()
            .filter(|r| r.kind == RuleKind::Template && !r.is_global())
            .map(|r| r.pattern.as_str())
            .collect();
        assert!(
            templates.contains(&"*://f.org/show.php?t={int:t}&[sid]"),
            "{templates:#?}"
        );
        // The pair template never drops `mode` by name; the family's joint block (every
        // parameter dropped inside its clusters, one candidate judged as one rule) does.
        let with_mode: Vec<&&str> = templates.iter().filter(|p| p.contains("[mode]")).collect();
        assert_eq!(
            with_mode,
            [&"*://f.org/show.php?t={int:t}&[mode]&[sid]"],
            "{templates:#?}"
        );
        for v in ["hybrid", "threaded"] {
            let want = format!("*://f.org{{/path}}?mode={v}&{{rest}}");
            assert!(rules.iter().any(|r| r.pattern == want), "{want}");
        }
        // A many → one target (a login wall) copies nothing: it keeps every parameter optional.
        let mut wall: Vec<String> = (0..12)
            .map(|i| format!("https://f.org/p.php?do=pm&u={}", 50 + i))
            .collect();
        wall.push("https://f.org/login.php".into());
        let wall = mk("wall", &wall.iter().map(String::as_str).collect::<Vec<_>>());
        let (rules, _) = learn_candidates(&[wall], &LearnOptions::default(), &|_| {});
        assert!(
            rules
                .iter()
                .any(|r| r.pattern == "*://f.org/p.php?[do]&[u]"
                    && r.target == "*://f.org/login.php"),
            "{:#?}",
            rules.iter().map(|r| &r.pattern).collect::<Vec<_>>()
        );
    }

    #[test]
    fn generation_table() {
        let cases: Vec<(Vec<Cluster>, (&str, &str))> = vec![
            // A host template keeping the scheme matches either (`*://`); an alias keeps its own.
            (
                vec![
                    mk(
                        "a",
                        &[
                            "https://f.org/s.php?t=1",
                            "https://f.org/s.php?t=1&mode=hybrid",
                        ],
                    ),
                    mk(
                        "b",
                        &[
                            "https://f.org/s.php?t=2",
                            "https://f.org/s.php?t=2&sid=9f8e7d6c1a",
                        ],
                    ),
                ],
                // `mode=hybrid` is a setting: dropped per value, not in the optional set.
                ("*://f.org/s.php?t={int:t}&[sid]", "*://f.org/s.php?t={t}"),
            ),
            (
                vec![mk("a", &["https://f.org/g.php", "https://f.org/g.php/"])],
                ("*://f.org/g.php/{?query}", "*://f.org/g.php{?query}"),
            ),
            (
                vec![
                    mk("a", &["http://f.org/a/1", "https://f.org/a/1"]),
                    mk("b", &["http://f.org/b?x=1", "https://f.org/b?x=1"]),
                ],
                (
                    "http://f.org{/path}{?query}",
                    "https://f.org{/path}{?query}",
                ),
            ),
            (
                vec![mk("a", &["http://www.f.org/a", "http://f.org/a"])],
                (
                    "http://www.f.org{/path}{?query}",
                    "http://f.org{/path}{?query}",
                ),
            ),
            (
                // Login wall: every `u` maps to one member of the cluster.
                vec![mk(
                    "a",
                    &[
                        "https://f.org/m.php?u=1",
                        "https://f.org/m.php?u=22",
                        "https://f.org/m.php?u=333",
                    ],
                )],
                ("*://f.org/m.php?u={int:u}", "*://f.org/m.php?u=1"),
            ),
            (
                // Value-like path segments generalize token by token.
                vec![
                    mk(
                        "a",
                        &["https://f.org/t-12.html", "https://f.org/t-12.html/print"],
                    ),
                    mk(
                        "b",
                        &["https://f.org/t-345.html", "https://f.org/t-345.html/print"],
                    ),
                ],
                (
                    "*://f.org/t-{int}.html/print{?query}",
                    "*://f.org/{seg0}{?query}",
                ),
            ),
            (
                // Query → path alias: the parameter value becomes a path segment.
                vec![
                    mk(
                        "a",
                        &["https://f.org/p/123", "https://f.org/product.php?id=123"],
                    ),
                    mk(
                        "b",
                        &["https://f.org/p/77", "https://f.org/product.php?id=77"],
                    ),
                ],
                ("*://f.org/product.php?id={int:id}", "*://f.org/p/{id}"),
            ),
        ];
        for (clusters, (pat, tgt)) in cases {
            let got = learn(&clusters);
            assert!(
                got.iter().any(|(p, t)| p == pat && t == tgt),
                "wanted {pat} -> {tgt}, got {got:#?}"
            );
        }
    }

    #[test]
    fn canonical_prefers_fewest_tokens_then_https() {
        let urls: Vec<String> = ["https://h/a?t=1&p=2", "https://h/a?t=1", "http://h/a?t=1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(canonical(&urls, &HashMap::new()), 1);
        // Same token count: the form most clusters use wins over `https`.
        let urls: Vec<String> = ["https://h/a?t=1", "http://h/a?t=1"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let pop: HashMap<String, usize> = [
            (url_shape("http://h/a?t=1"), 5),
            (url_shape("https://h/a?t=1"), 2),
        ]
        .into_iter()
        .collect();
        assert_eq!(canonical(&urls, &pop), 1);
    }

    #[test]
    fn huge_tied_cluster_learns() {
        // A soft 404: thousands of different paths, one page, all tied for canonical.
        let urls: Vec<String> = (0..5000)
            .map(|i| format!("https://h.org/missing/page-{i}"))
            .collect();
        let c = Cluster {
            id: "404".into(),
            urls,
        };
        let opts = LearnOptions {
            max_cluster: 5000,
            ..Default::default()
        };
        let (rules, stats) = learn_candidates(&[c], &opts, &|_| {});
        assert_eq!(stats.pairs, 4999);
        assert!(
            rules
                .iter()
                .any(|r| r.pattern == "*://h.org/missing/page-{int}"),
            "{rules:#?}"
        );
    }

    #[test]
    fn cap_type_inference() {
        let cases: &[(&[&str], CapType)] = &[
            (&["1", "22"], CapType::Int),
            (&["deadbeef00", "0123456789abcdef"], CapType::Hex),
            (&["abc", "XYZ"], CapType::Alpha),
            (&["abc", "12x"], CapType::Alnum),
            (&["a b", "c"], CapType::Any),
            (&[""], CapType::Any),
        ];
        for (vals, want) in cases {
            assert_eq!(CapType::infer(vals.iter().copied()), *want, "{vals:?}");
        }
    }

    #[test]
    fn deterministic_across_threads() {
        let mut cl = Vec::new();
        for i in 0..200 {
            cl.push(mk(
                &format!("c{i}"),
                &[
                    &format!("https://f.org/s.php?t={i}"),
                    &format!("https://f.org/s.php?t={i}&p={}", i * 7),
                    &format!("http://www.f.org/s.php?t={i}"),
                ],
            ));
        }
        let a = serde_json::to_string(&learn_candidates(&cl, &LearnOptions::default(), &|_| {}).0)
            .unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| {
            serde_json::to_string(&learn_candidates(&cl, &LearnOptions::default(), &|_| {}).0)
                .unwrap()
        });
        assert_eq!(a, b);
    }
}

#[cfg(test)]
mod family_tests {
    use super::*;

    fn mk(id: &str, urls: &[&str]) -> Cluster {
        Cluster {
            id: id.into(),
            urls: urls.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn candidates(cl: &[Cluster]) -> Vec<Rule> {
        learn_candidates(cl, &LearnOptions::default(), &|_| {}).0
    }

    #[test]
    fn every_candidate_records_its_family_consensus() {
        // Five URLs, three optional parameters (ids): one host template drops them together,
        // and records one consensus with the three optional columns.
        let cl = [mk(
            "c",
            &[
                "https://f.org/s.php?t=1",
                "https://f.org/s.php?a=9f8e7d6c&t=1",
                "https://f.org/s.php?b=0a1b2c3d&t=1",
                "https://f.org/s.php?c=77d0aa11&t=1",
                "https://f.org/s.php?a=9f8e7d6c&b=0a1b2c3d&t=1",
            ],
        )];
        let rules = candidates(&cl);
        let host: Vec<&Rule> = rules
            .iter()
            .filter(|r| r.scope == "f.org" && r.kind == RuleKind::Template)
            .collect();
        // One host template: its optional block is the consensus's three optional columns.
        assert_eq!(host.len(), 1, "{rules:#?}");
        let r = host[0];
        assert_eq!(r.pattern, "*://f.org/s.php?t={int:t}&[a]&[b]&[c]");
        let c = r
            .consensus
            .as_ref()
            .expect("a learned rule records its consensus");
        assert_eq!(c.family, "*://f.org/s.php?[a]&[b]&[c]&t=1");
        assert_eq!((c.clusters, c.urls), (1, 5));
        for n in ["a", "b", "c"] {
            assert!(
                c.columns
                    .iter()
                    .any(|e| e.starts_with(&format!("?{n} optional hex"))),
                "{c:?}"
            );
        }
        // Every candidate learned from clusters records one.
        assert!(rules.iter().all(|r| r.consensus.is_some()), "{rules:#?}");
    }

    #[test]
    fn variation_inside_one_cluster_is_never_a_capture() {
        // (clusters, a pattern that must not be learned, one that must)
        type Case = (
            &'static [(&'static str, &'static [&'static str])],
            &'static str,
            &'static str,
        );
        let cases: &[Case] = &[
            // Pages 2 and 3 of a thread shown as its page 1: not "every page is page 1".
            (
                &[
                    (
                        "a",
                        &[
                            "https://f.org/s.php?page=1&t=12",
                            "https://f.org/s.php?page=2&t=12",
                            "https://f.org/s.php?page=3&t=12",
                        ],
                    ),
                    (
                        "b",
                        &[
                            "https://f.org/s.php?page=1&t=40",
                            "https://f.org/s.php?page=2&t=40",
                            "https://f.org/s.php?page=3&t=40",
                        ],
                    ),
                ],
                "*://f.org/s.php?page={int",
                "*://f.org/s.php?page=2&t={int:t}",
            ),
            // Across clusters the same shape is a capture: `/t/N/` ≡ `/t/N`.
            (
                &[
                    ("a", &["https://f.org/t/12", "https://f.org/t/12/x-y-z-1"]),
                    ("b", &["https://f.org/t/40", "https://f.org/t/40/p-q-r-2"]),
                ],
                "*://f.org/t/12/",
                "*://f.org/t/{int",
            ),
        ];
        for (clusters, never, want) in cases {
            let cl: Vec<Cluster> = clusters.iter().map(|(id, u)| mk(id, u)).collect();
            let pats: Vec<String> = candidates(&cl).into_iter().map(|r| r.pattern).collect();
            assert!(
                !pats.iter().any(|p| p.starts_with(never)),
                "{never}: {pats:#?}"
            );
            assert!(
                pats.iter().any(|p| p.starts_with(want)),
                "{want}: {pats:#?}"
            );
        }
    }
}
