//! Validate: keep the candidate rules with enough support and a low false-positive rate, then make
//! the kept set deployable (ordered, conflict-free, idempotent).
//!
//! In: candidate [`Rule`]s and labelled, base-normalized URLs ([`LabeledUrls`]): the *validation* URLs
//! and optionally *reference* URLs (e.g. the training part) that a rewritten URL may merge with.
//! Out: the kept rules with `support`, `fp` and `fpr` recorded, in application order.
//!
//! For a rule r applied alone (with the base layer) to validation ∪ reference URLs:
//! * support(r) = validation URLs that r rewrites and whose result equals the canonical form of
//!   another URL (r caused a merge);
//! * fp(r) = those among them whose bucket (all URLs with that canonical form) is led by another
//!   ground-truth cluster: the URLs whose content a crawler would lose. (Counting every URL that
//!   shares a bucket with any other cluster would let one stray URL veto a rule that merges
//!   hundreds correctly; this count is what the `lost` metric charges.)
//! * fpr(r) = fp / support. r is kept when support ≥ `min_support` and fpr ≤ `max_fpr`.
//!
//! Then: conflicts (two kept rules that send one data URL to different canonicals) keep the better
//! rule (higher `support − 10·fp`, or more URLs learned from when not validated); the order puts more specific rules first; and rules that break
//! idempotence on the data (`normalize(normalize(u)) ≠ normalize(u)`, e.g. chains or cycles) are
//! removed, worst first, until the set is idempotent on every data URL and every rule output.
//!
//! # Complexity
//! `O(R · U_h)` rule applications, where `U_h` is the number of data URLs on a rule's host.

use crate::evidence::Facts;
pub(crate) use crate::judge::{collapse_family, score, verdict, Verdict};
pub use crate::judge::{is_collapse, judged_fpr, order, rounded_fpr, specificity, ValidateOptions};
use crate::normalize::{apply_rule, Normalizer};
use crate::rules::{Cluster, Rule, RuleKind};
pub use crate::tier::exposure_key;
pub(crate) use crate::tier::{cross_host_after_hosts, prune_attested};
use crate::tier::{domain, url_exposure, Feature};
use crate::tokenize::split_url;
use crate::url_index::{drop_heavy_hosts, UrlIndex};
use crate::BaseOptions;
use foldhash::{HashMap, HashMapExt, HashSet};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// One base-normalized URL with its ground-truth cluster, owned (validation reads them from a
/// [`LabeledUrls`]: collect them into one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Labeled {
    /// Base-normalized URL.
    pub url: String,
    /// Index of its true cluster.
    pub cluster: usize,
}

/// One labelled URL of [`LabeledUrls`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LabeledRef<'a> {
    /// Base-normalized URL.
    pub url: &'a str,
    /// Index of its true cluster.
    pub cluster: usize,
}

/// Base-normalized URLs with their true clusters, the URLs' bytes one after another in one
/// buffer: 12 bytes a URL beside its text, where a [`Labeled`] each held 32 and a heap block
/// of its own (about 0.3 GB less at 10 M URLs, and no fragments of them left behind).
///
/// ```
/// use dedust_learn::{Labeled, LabeledUrls};
/// let data: LabeledUrls = [("http://h/a", 0), ("http://h/b", 7)]
///     .into_iter()
///     .map(|(u, c)| Labeled { url: u.into(), cluster: c })
///     .collect();
/// assert_eq!((data.len(), data.url(1), data.cluster(1)), (2, "http://h/b", 7));
/// assert_eq!(data.iter().map(|l| l.url).collect::<Vec<_>>(), ["http://h/a", "http://h/b"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabeledUrls {
    /// The URLs, one after another.
    text: String,
    /// Where URL `i` ends in `text` (it starts where URL `i - 1` ends).
    ends: Ends,
    /// URL `i`'s cluster.
    clusters: Vec<usize>,
    /// Index input: URL `i`'s [`Facts`] ([`crate::evidence`]; a URL past the end has none).
    /// `None` for every other input: validation then counts as it always did.
    facts: Option<std::sync::Arc<Vec<Facts>>>,
    /// Index input with its WARC files at hand: compares two URLs' pages
    /// ([`crate::evidence::PairCheck`]), asked for a sample of each rule's unknown merges.
    check: Option<crate::evidence::PairCheck>,
}

/// Where each URL of a [`LabeledUrls`] ends in its text: 4 bytes a URL while the text is under
/// 4 GiB (10 M URLs: 40 MB less), 8 once it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Ends {
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

impl Default for Ends {
    fn default() -> Ends {
        Ends::Narrow(Vec::new())
    }
}

impl Ends {
    fn len(&self) -> usize {
        match self {
            Ends::Narrow(v) => v.len(),
            Ends::Wide(v) => v.len(),
        }
    }

    fn get(&self, i: usize) -> usize {
        match self {
            Ends::Narrow(v) => v[i] as usize,
            Ends::Wide(v) => v[i],
        }
    }

    fn push(&mut self, end: usize) {
        match self {
            Ends::Narrow(v) => match u32::try_from(end) {
                Ok(e) => v.push(e),
                Err(_) => {
                    let mut w: Vec<usize> = Vec::with_capacity(v.capacity().max(v.len() + 1));
                    w.extend(v.iter().map(|&e| e as usize));
                    w.push(end);
                    *self = Ends::Wide(w);
                }
            },
            Ends::Wide(v) => v.push(end),
        }
    }
}

impl LabeledUrls {
    /// Empty, with room for `urls` URLs of `bytes` bytes in all.
    pub fn with_capacity(urls: usize, bytes: usize) -> LabeledUrls {
        LabeledUrls {
            text: String::with_capacity(bytes),
            ends: Ends::Narrow(Vec::with_capacity(urls)),
            clusters: Vec::with_capacity(urls),
            facts: None,
            check: None,
        }
    }

    /// Empty, with room for the base-normalized URLs of `clusters`: their raw length and a
    /// margin (base normalization seldom lengthens a URL, and room never written costs no
    /// memory), so the text is not copied as it grows.
    pub(crate) fn for_clusters(clusters: &[Cluster]) -> LabeledUrls {
        let urls: usize = clusters.iter().map(|c| c.urls.len()).sum();
        let bytes: usize = clusters.iter().flat_map(|c| &c.urls).map(String::len).sum();
        LabeledUrls::with_capacity(urls, bytes + bytes / 8 + urls)
    }

    /// Add a URL of cluster `cluster`.
    pub fn push(&mut self, url: &str, cluster: usize) {
        self.text.push_str(url);
        self.ends.push(self.text.len());
        self.clusters.push(cluster);
    }

    /// Number of URLs.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.len() == 0
    }

    /// URL `i` (panics past the end).
    pub fn url(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends.get(i - 1) };
        &self.text[start..self.ends.get(i)]
    }

    /// URL `i`'s cluster (panics past the end).
    pub fn cluster(&self, i: usize) -> usize {
        self.clusters[i]
    }

    /// What an index says about URL `i` (`None`: nothing, as for every input but an index).
    fn facts(&self, i: usize) -> Option<Facts> {
        self.facts
            .as_ref()?
            .get(i)
            .copied()
            .filter(|f| f.class != 0)
    }

    /// Attach what a web-archive index says about the URLs ([`crate::ReadReport::evidence`]),
    /// so validation judges merges between two digest groups by record length
    /// ([`crate::evidence`]); `base`: the options the URLs were normalized with. Without it
    /// every merge between two clusters is a false positive.
    ///
    /// ```
    /// use dedust_learn::{labeled, read_clusters_from, BaseOptions, InputFormat};
    /// let line = |u: &str, d: &str| format!(
    ///     "org,h)/ 1 {{\"url\": \"{u}\", \"status\": \"200\", \"mime\": \"text/html\", \"digest\": \"{d}\", \"length\": \"900\"}}\n");
    /// let index = line("http://h.org/", "D1") + &line("https://h.org/", "D2");
    /// let (clusters, rep) =
    ///     read_clusters_from(std::io::Cursor::new(index), "i.cdxj", InputFormat::Auto).unwrap();
    /// // The ids are the digests; the facts come beside them.
    /// assert_eq!(clusters[0].id, "digest:D1");
    /// let base = BaseOptions::default();
    /// let (mut data, _) = labeled(&clusters, &base);
    /// data.attach_evidence(rep.evidence.as_ref().unwrap(), &base);
    /// assert_eq!(data.len(), 2);
    /// ```
    pub fn attach_evidence(
        &mut self,
        evidence: &crate::evidence::IndexEvidence,
        base: &BaseOptions,
    ) {
        self.attach_facts(&evidence.normalized(base));
    }

    /// Attach the facts of the URLs, by base-normalized URL
    /// ([`crate::evidence::IndexEvidence::normalized`]).
    pub(crate) fn attach_facts(&mut self, by_url: &HashMap<String, Facts>) {
        self.facts = Some(std::sync::Arc::new(
            (0..self.len())
                .map(|i| by_url.get(self.url(i)).copied().unwrap_or_default())
                .collect(),
        ));
    }

    /// Compare pages on demand ([`crate::evidence::PairCheck`]): a sample of each rule's
    /// unknown merges is judged by content before (and instead of) the length test.
    pub fn attach_check(&mut self, check: crate::evidence::PairCheck) {
        self.check = Some(check);
    }

    /// URL `i` with its cluster.
    pub fn get(&self, i: usize) -> LabeledRef<'_> {
        LabeledRef {
            url: self.url(i),
            cluster: self.clusters[i],
        }
    }

    /// The URLs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = LabeledRef<'_>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The URLs in order, in parallel.
    pub fn par_iter(&self) -> impl IndexedParallelIterator<Item = LabeledRef<'_>> + '_ {
        (0..self.len()).into_par_iter().map(|i| self.get(i))
    }
}

impl FromIterator<Labeled> for LabeledUrls {
    fn from_iter<I: IntoIterator<Item = Labeled>>(it: I) -> LabeledUrls {
        let it = it.into_iter();
        let mut out = LabeledUrls::with_capacity(it.size_hint().0, 0);
        for l in it {
            out.push(&l.url, l.cluster);
        }
        out
    }
}

/// No URLs (an empty part of a [`Both`]).
static NO_URLS: LabeledUrls = LabeledUrls {
    text: String::new(),
    ends: Ends::Narrow(Vec::new()),
    clusters: Vec::new(),
    facts: None,
    check: None,
};

/// Validation URLs followed by reference URLs, indexed as one list without a list of
/// references.
#[derive(Clone, Copy)]
struct Both<'a> {
    first: &'a LabeledUrls,
    then: &'a LabeledUrls,
}

impl<'a> Both<'a> {
    fn len(&self) -> usize {
        self.first.len() + self.then.len()
    }

    /// The part holding URL `i`, and `i` within it.
    fn part(&self, i: usize) -> (&'a LabeledUrls, usize) {
        match i.checked_sub(self.first.len()) {
            None => (self.first, i),
            Some(j) => (self.then, j),
        }
    }

    /// URL `i` (without reading its cluster).
    fn url(&self, i: usize) -> &'a str {
        let (p, j) = self.part(i);
        p.url(j)
    }

    /// URL `i`'s cluster (without finding its text).
    fn cluster(&self, i: usize) -> usize {
        let (p, j) = self.part(i);
        p.cluster(j)
    }

    /// What an index says about URL `i`.
    fn facts(&self, i: usize) -> Option<Facts> {
        let (p, j) = self.part(i);
        p.facts(j)
    }

    /// The page comparison of the validation URLs, if any.
    fn check(&self) -> Option<&crate::evidence::PairCheck> {
        self.first.check.as_ref()
    }

    /// Whether any URL has facts (an index input).
    fn has_facts(&self) -> bool {
        self.first.facts.is_some() || self.then.facts.is_some()
    }
}

/// Base-normalize and label the URLs of clusters (malformed URLs are left out and counted).
///
/// The label is a 64-bit hash of the cluster id, so parts of one split stay comparable. An
/// index's facts are attached apart ([`LabeledUrls::attach_evidence`]).
pub fn labeled(clusters: &[Cluster], base: &BaseOptions) -> (LabeledUrls, usize) {
    let mut out = LabeledUrls::for_clusters(clusters);
    let mut bad = 0;
    for c in clusters {
        let label = c.label();
        for u in &c.urls {
            match crate::base_normalize(u, base) {
                Ok(url) => out.push(&url, label),
                Err(_) => bad += 1,
            }
        }
    }
    (out, bad)
}

/// What validation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidateReport {
    /// Candidates in.
    pub candidates: usize,
    /// Rejected for low support.
    pub low_support: usize,
    /// Rejected for a high false-positive rate.
    pub high_fpr: usize,
    /// Removed as conflicting with a better rule.
    pub conflicts: usize,
    /// Removed to keep the set idempotent.
    pub not_idempotent: usize,
    /// Host-scoped rules removed because the cross-host rules do their work on the data.
    pub redundant: usize,
    /// Rules kept.
    pub kept: usize,
    /// Candidates the data never judged: no merge ([`dedust_core::Evidence::Untested`]).
    pub untested: usize,
    /// Candidates with merges and a false-positive rate within the bound.
    pub supported: usize,
    /// Candidates whose false-positive rate passes the bound: never kept.
    pub refuted: usize,
}

/// Support and false positives of every rule applied alone.
///
/// ```
/// use dedust_learn::{learn_candidates, rule_stats, Cluster, Labeled, LabeledUrls, LearnOptions};
/// let c = vec![Cluster { id: "a".into(), urls: vec!["http://h/x?t=1".into(), "http://h/x?s=9f8e7d&t=1".into()] }];
/// let (rules, _) = learn_candidates(&c, &LearnOptions::default(), &|_| {});
/// let v: LabeledUrls = [
///     Labeled { url: "http://h/x?t=2".into(), cluster: 0 },
///     Labeled { url: "http://h/x?s=5a4b3c&t=2".into(), cluster: 0 },
///     Labeled { url: "http://h/x?s=6a5b4c&t=3".into(), cluster: 1 },
/// ].into_iter().collect();
/// let st = rule_stats(&rules, &v, &LabeledUrls::default());
/// let i = rules.iter().position(|r| r.pattern.contains("[s]")).unwrap();
/// assert_eq!(st[i], (1, 0)); // `?s=5a4b3c&t=2` merged with `?t=2`; `?s=6a5b4c&t=3` rewritten but alone
/// ```
pub fn rule_stats(
    rules: &[Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
) -> Vec<(usize, usize)> {
    let ctx = MergeContext::new(validation, reference, rules);
    rules
        .par_iter()
        .map(|r| {
            let m = ctx.merges(r, false, None).0;
            (m.len(), m.iter().filter(|x| x.fp()).count())
        })
        .collect()
}

/// [`rule_stats`], and for cross-host rules (scope `*`) the evidence per registrable domain:
/// [`Rule::supporting`] lists the domains where the rule merged duplicates and never different
/// content ([`Rule::sites`] counts them), and [`Rule::except`] the domains where it merged
/// different content (host evidence beats global evidence). Support and fp stay pooled over all
/// domains, so a rule that is wrong on many sites is rejected by its fpr, not excepted.
///
/// ```
/// use dedust_learn::{learn_candidates, validate::rule_stats_and_sites, Cluster, Labeled, LabeledUrls, LearnOptions};
/// let mk = |id: &str, u: &[&str]| Cluster { id: id.into(), urls: u.iter().map(|s| s.to_string()).collect() };
/// let c = vec![mk("a", &["http://a.org/x?t=1", "http://a.org/x?sid=1f2e3d4c5b6a7980&t=1"]),
///              mk("b", &["http://b.org/y", "http://b.org/y?sid=8f7e6d5c4b3a2910"]),
///              mk("c", &["http://c.org/z", "http://c.org/z?sid=aa00bb11cc22dd33"])];
/// let (mut rules, _) = learn_candidates(&c, &LearnOptions::default(), &|_| {});
/// let l = |u: &str, c| Labeled { url: u.into(), cluster: c };
/// let data: LabeledUrls = [l("http://d.org/p", 0), l("http://d.org/p?sid=0123456789abcdef", 0),
///                 l("http://e.org/q", 1), l("http://e.org/q?sid=fedcba9876543210", 1),
///                 l("http://f.org/r", 2), l("http://f.org/r?sid=00112233aabbccdd", 3)]
///     .into_iter().collect();
/// let st = rule_stats_and_sites(&mut rules, &data, &LabeledUrls::default());
/// let i = rules.iter().position(|r| r.pattern == "*://*{/path}?sid={hex:sid}&{rest}").unwrap();
/// assert_eq!(st[i], (3, 1));
/// assert_eq!((rules[i].sites, rules[i].except.clone()), (Some(2), vec!["f.org".to_string()]));
/// assert_eq!(rules[i].supporting, vec!["d.org".to_string(), "e.org".to_string()]);
/// // The hosts whose own URLs attest the output (f.org merged different content).
/// assert_eq!(rules[i].attested, vec!["d.org".to_string(), "e.org".to_string()]);
/// ```
pub fn rule_stats_and_sites(
    rules: &mut [Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
) -> Vec<(usize, usize)> {
    rule_stats_rewrites(rules, validation, reference).0
}

/// [`rule_stats_and_sites`] with the cross-host parameter drops and host conventions judged
/// together, as `learn` judges them (see `joint_drops` in the source; `opts` decides which
/// rules make the world).
///
/// ```
/// use dedust_learn::{learn_candidates, validate::{labeled, rule_stats_together}, BaseOptions, Cluster, LearnOptions};
/// let c: Vec<Cluster> = ["a", "b", "c"].iter().map(|h| Cluster { id: h.to_string(), urls: vec![
///     format!("http://{h}.org/p"), format!("http://{h}.org/p?utm_medium=email&utm_source=nl{h}1"),
///     format!("http://{h}.org/p?utm_medium=social&utm_source=tw{h}2")] }).collect();
/// let (mut rules, _) = learn_candidates(&c, &LearnOptions::default(), &|_| {});
/// let data = labeled(&c, &BaseOptions::default()).0;
/// let st = rule_stats_together(&mut rules, &data, &Default::default(), &Default::default());
/// let i = rules.iter().position(|r| r.pattern.contains("?utm_source={")).unwrap();
/// assert_eq!(st[i], (6, 0)); // alone: (0, 0), utm_medium stays behind
/// ```
pub fn rule_stats_together(
    rules: &mut [Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
    opts: &ValidateOptions,
) -> Vec<(usize, usize)> {
    rule_stats_joint(rules, validation, reference, opts).0
}

/// Each host rule's rewrites of the validation URLs (`(index, hash of the output)`, by URL
/// index), kept from validation so [`select_cached`] does not compute them again; empty for
/// cross-host rules.
pub(crate) type Rewrites = Vec<RuleRewrites>;

/// One rule's rewrites ([`Rewrite`]): sorted as validation keeps them, in candidate order
/// where `deconflict` computes them (each URL once either way).
pub(crate) type RuleRewrites = Vec<Rewrite>;

/// A URL index and the 64-bit hash of a rule's output for it, in 12 bytes (a `(u32, u64)` takes
/// 16: the host rules' rewrites of 10 M URLs are kept from validation to `select`). Ordered as
/// `(index, hash)`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) struct Rewrite(u32, [u32; 2]);

impl Rewrite {
    pub(crate) fn new(url: u32, hash: u64) -> Rewrite {
        Rewrite(url, [(hash >> 32) as u32, hash as u32])
    }

    /// The URL index.
    pub(crate) fn url(self) -> u32 {
        self.0
    }

    /// The hash of the output.
    pub(crate) fn hash(self) -> u64 {
        (u64::from(self.1[0]) << 32) | u64::from(self.1[1])
    }
}

/// [`rule_stats_and_sites`], also returning the host rules' [`Rewrites`] and, when there are
/// cross-host rules, the [`exposure`] of the validation and reference URLs.
pub(crate) fn rule_stats_rewrites(
    rules: &mut [Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
) -> (Vec<(usize, usize)>, Rewrites, BTreeMap<String, usize>) {
    rule_stats_with(rules, validation, reference, None)
}

/// [`rule_stats_rewrites`] with the cross-host parameter drops judged **jointly**: each one is
/// applied with the other cross-host drops that pass `opts` (see [`joint_drops`]), so two
/// tracking parameters that always come together (`utm_source` and `utm_medium`) are each seen
/// merging duplicates, which neither does alone.
pub(crate) fn rule_stats_joint(
    rules: &mut [Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
    opts: &ValidateOptions,
) -> (Vec<(usize, usize)>, Rewrites, BTreeMap<String, usize>) {
    rule_stats_with(rules, validation, reference, Some(opts))
}

fn rule_stats_with(
    rules: &mut [Rule],
    validation: &LabeledUrls,
    reference: &LabeledUrls,
    joint: Option<&ValidateOptions>,
) -> (Vec<(usize, usize)>, Rewrites, BTreeMap<String, usize>) {
    let ctx = MergeContext::new(validation, reference, rules);
    // Host and registrable domain of every URL (only needed for cross-host rules); the domain
    // is found once per distinct host.
    let domains: Vec<String> = if rules.iter().any(Rule::is_global) {
        ctx.index
            .host_names()
            .iter()
            .map(|h| domain(&h.to_ascii_lowercase()))
            .collect()
    } else {
        Vec::new()
    };
    // Each host's domain as a number (domains numbered as first met), for counting by domain.
    let mut numbers: HashMap<&str, u32> = HashMap::new();
    let domain_ids: Vec<u32> = domains
        .iter()
        .map(|d| {
            let n = numbers.len() as u32;
            *numbers.entry(d.as_str()).or_insert(n)
        })
        .collect();
    let sites = Sites {
        index: &ctx.index,
        domains: &domains,
        domain_ids: &domain_ids,
        domain_count: numbers.len(),
    };
    let count = |m: &[Merge]| (m.len(), m.iter().filter(|x| x.fp()).count());
    // A host rule's merges are counted at once and let go (only cross-host rules' are read
    // again: joint judging, site evidence); rewrites are kept at their length.
    type Found = Vec<(Vec<Merge>, RuleRewrites)>;
    // One task per rule: a cross-host rule fires on millions of URLs where a host rule fires
    // on a few, and rayon's default split left the expensive ones to one thread.
    let (mut found, alone): (Found, Vec<(usize, usize)>) = rules
        .par_iter()
        .with_max_len(1)
        .map(|r| {
            let (m, mut w) = ctx.merges(r, true, None);
            w.shrink_to_fit();
            let st = count(&m);
            ((if r.is_global() { m } else { Vec::new() }, w), st)
        })
        .unzip();
    if let Some(opts) = joint {
        joint_drops(rules, &mut found, &ctx, &sites, opts);
    }
    let stats = rules
        .par_iter_mut()
        .with_max_len(1)
        .zip(&found)
        .zip(alone)
        .map(|((r, (m, _)), st)| {
            if r.is_global() {
                site_evidence(r, m, &sites);
                count(m)
            } else {
                st
            }
        })
        .collect();
    let rewrites = found.into_iter().map(|(_, w)| w).collect();
    (stats, rewrites, ctx.index.exposure())
}

/// A cross-host parameter drop (one name dropped on any host, anywhere or on one literal path).
fn is_global_drop(r: &Rule) -> bool {
    r.is_global() && r.kind == RuleKind::Drop
}

/// A rule judged jointly ([`joint_drops`]): a cross-host parameter drop, or a host convention
/// (`www.`, a mobile label), which merge `m.h/x` with `www.h/x` only together.
fn is_joint(r: &Rule) -> bool {
    use crate::rules::Convention as C;
    is_global_drop(r)
        || (r.is_global() && matches!(r.convention, Some(C::StripWww | C::HostLabel(_))))
}

/// A cross-host drop's parameter name and how general it is: +2 on every path (not one literal
/// path), +1 for any value of a type (not one literal value). Of two drops of one name that
/// both change a URL, the more general one does the work there.
fn drop_generality(r: &Rule) -> Option<(&str, u8)> {
    use crate::rules::{Piece, ValPat};
    if !is_global_drop(r) {
        return None;
    }
    let [(name, val)] = r.source.required.as_slice() else {
        return None;
    };
    let typed = matches!(val, ValPat::Any)
        || matches!(val, ValPat::Pieces(p) if p.iter().any(|x| matches!(x, Piece::Cap(_))));
    Some((
        name.as_str(),
        2 * u8::from(r.source.path.is_none()) + u8::from(typed),
    ))
}

/// Each URL's host and registrable domain (of a [`UrlIndex`] built with features).
struct Sites<'a> {
    index: &'a UrlIndex<'a>,
    /// By host id.
    domains: &'a [String],
    /// By host id: its domain's number, below `domain_count`.
    domain_ids: &'a [u32],
    domain_count: usize,
}

impl Sites<'_> {
    /// Host of URL `i`.
    fn host(&self, i: u32) -> &str {
        self.index.host_of(i)
    }
    /// Registrable domain of URL `i`.
    fn domain(&self, i: u32) -> &str {
        &self.domains[self.index.host_id(i) as usize]
    }
}

/// Registrable domains where a merge list has merges and none wrong.
///
/// # Complexity
/// `O(|m| + domains)`: a flag per domain number (a cross-host drop holds millions of merges;
/// a map keyed by domain name compared strings at each of them).
fn clean_sites(m: &[Merge], sites: &Sites<'_>) -> usize {
    // Per domain number: 1 merged, 2 merged wrongly.
    let mut per = vec![0u8; sites.domain_count];
    for x in m {
        let d = sites.domain_ids[sites.index.host_id(x.url()) as usize] as usize;
        per[d] |= 1 | (u8::from(x.fp()) << 1);
    }
    per.iter().filter(|&&f| f == 1).count()
}

/// Record a cross-host rule's evidence per registrable domain from its merges `m`:
/// [`Rule::supporting`], [`Rule::except`], [`Rule::sites`] and [`Rule::attested`].
fn site_evidence(r: &mut Rule, m: &[Merge], sites: &Sites<'_>) {
    let mut per: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for x in m {
        let e = per.entry(sites.domain(x.url())).or_default();
        e.0 += 1;
        e.1 += usize::from(x.fp());
    }
    r.except = per
        .iter()
        .filter(|(_, (_, fp))| *fp > 0)
        .map(|(d, _)| d.to_string())
        .collect();
    r.supporting = per
        .iter()
        .filter(|(_, (_, fp))| *fp == 0)
        .map(|(d, _)| d.to_string())
        .collect();
    r.sites = Some(r.supporting.len());
    // Attested: a merge on the host into a URL the data has, and none wrong.
    let mut per_host: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for x in m {
        let e = per_host.entry(sites.host(x.url())).or_default();
        e.0 |= x.fp();
        e.1 |= x.seen();
    }
    r.attested = per_host
        .into_iter()
        .filter(|&(_, (fp, seen))| seen && !fp)
        .map(|(h, _)| h.to_string())
        .collect();
    prune_attested(r);
}

/// Most rounds of [`joint_drops`] (each one re-judges every drop in the world the last kept).
const JOINT_ROUNDS: usize = 4;

/// Judge the cross-host parameter drops together (and the host conventions [`is_joint`]).
/// Applied alone, a drop merges nothing where pages carry two parameters that each must go
/// (`?utm_source=…&utm_medium=…`), so each would be rejected for want of support; nor does
/// `m.h` → `h` where the desktop pages live on `www.h`. Here the *world* is the set of cross-host drops that pass
/// `opts` (at first: those whose own fp rate, alone, passes `--max-fpr`); each drop is applied,
/// then the world's drops, to the URLs it changes, and those URLs merge when their result equals
/// another URL's result in that world (a URL the world leaves alone is its own result). A drop
/// is charged every wrong merge of a URL it changes — the world's mistakes included, so a
/// parameter that separates content takes its companions down with it until it leaves the
/// world. The world is then the drops whose joint verdict is keep, and all are judged again, to
/// a fixed point or [`JOINT_ROUNDS`] rounds. Drops outside the first world keep their alone
/// merges. Replaces the merges in `found` of the drops judged jointly.
///
/// # Complexity
/// Per round, one normalization (world rules) of each URL carrying a world parameter, then each
/// drop's candidate URLs once: `O(rounds · Σ_r U_r)` rule applications.
fn joint_drops(
    rules: &[Rule],
    found: &mut [(Vec<Merge>, RuleRewrites)],
    ctx: &MergeContext<'_>,
    sites: &Sites<'_>,
    opts: &ValidateOptions,
) {
    let judge = |r: &Rule, m: &[Merge]| {
        let mut t = r.clone();
        t.support = Some(m.len());
        t.fp = Some(m.iter().filter(|x| x.fp()).count());
        t.sites = Some(clean_sites(m, sites));
        verdict(&t, opts, None, None) == Verdict::Keep
    };
    let members: Vec<usize> = (0..rules.len())
        .filter(|&i| is_joint(&rules[i]))
        .filter(|&i| {
            let m = &found[i].0;
            rounded_fpr(m.len(), m.iter().filter(|x| x.fp()).count()) <= opts.max_fpr
        })
        .collect();
    if members.len() < 2 {
        return;
    }
    let mut world: Vec<usize> = members.clone();
    // The last round's world (its fingerprint: two worlds are never held at once) and the
    // drops that entered or left it since.
    let seeds = Seeds::new();
    let mut last: Option<([u64; 2], Vec<usize>)> = None;
    // After JOINT_ROUNDS rounds the world only shrinks, so it reaches a fixed point.
    for round in 0..JOINT_ROUNDS + members.len() {
        let w = World::new(ctx, world.iter().map(|&i| &rules[i]));
        // Which URLs the world changes into what (`changed` is the set of `by_image`'s URLs).
        let print = w.by_image.fingerprint(&seeds);
        // A member's merges change only when the world's results do, or when a more general
        // drop of its name came or went ([`World::covers`]).
        let redo: Vec<bool> = match &last {
            Some((p, moved)) if *p == print => members
                .iter()
                .map(|&i| {
                    let Some((name, rank)) = drop_generality(&rules[i]) else {
                        return true;
                    };
                    moved.iter().any(|&d| {
                        drop_generality(&rules[d]).is_some_and(|(n, k)| n == name && k > rank)
                    })
                })
                .collect(),
            _ => vec![true; members.len()],
        };
        let joint: Vec<Option<Vec<Merge>>> = members
            .par_iter()
            .with_max_len(1)
            .zip(&redo)
            .map(|(&i, &redo)| redo.then(|| ctx.merges(&rules[i], false, Some(&w)).0))
            .collect();
        for (&i, m) in members.iter().zip(joint) {
            if let Some(m) = m {
                found[i].0 = m;
            }
        }
        let next: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| judge(&rules[i], &found[i].0))
            .filter(|i| round + 1 < JOINT_ROUNDS || world.contains(i))
            .collect();
        if next == world || next.is_empty() {
            break;
        }
        let moved = world
            .iter()
            .filter(|i| !next.contains(i))
            .chain(next.iter().filter(|i| !world.contains(i)))
            .copied()
            .collect();
        last = Some((print, moved));
        world = next;
    }
}

/// Two random hash seeds (drawn per [`joint_drops`] call), for 128-bit fingerprints
/// ([`Images::fingerprint`]).
struct Seeds([foldhash::quality::RandomState; 2]);

impl Seeds {
    fn new() -> Seeds {
        Seeds(Default::default())
    }

    /// `feed` run on a hasher of each seed: the two hashes.
    fn each(&self, feed: impl Fn(&mut foldhash::quality::FoldHasher)) -> [u64; 2] {
        use std::hash::{BuildHasher, Hasher};
        self.0.each_ref().map(|s| {
            let mut h = s.build_hasher();
            feed(&mut h);
            h.finish()
        })
    }
}

/// The data as a set of cross-host drops leaves it ([`joint_drops`]).
struct World {
    /// The drops, in their order, without exceptions.
    norm: Normalizer,
    /// Indices into `rules` by parameter name, with their [`drop_generality`], for
    /// [`World::covers`].
    by_name: HashMap<String, Vec<(u8, usize)>>,
    /// The rules, for [`World::without`].
    rules: Vec<Rule>,
    /// By URL index: the drops change it.
    changed: Vec<bool>,
    /// Result → the URLs the drops change into it (keys of the context's
    /// [`MergeContext::hash`], so one key finds a result in both).
    by_image: Images,
}

/// Result → the URLs a [`World`] changes into it (or, for [`MergeContext::by_text`], URL text →
/// its indices), compact: one 16-byte row per URL, its result's [`Key`] (96 bits: 16 of its
/// host's hash, 80 of its own, under seeds drawn at run time) and the URL index, sorted. The URLs
/// of a result are one run of rows, ascending; no result's text is kept (a map of `String` →
/// `Vec<u32>` held about 150 bytes a result, an interned text about 90; at 10 M URLs, millions
/// of results), and the rows are hashed and sorted in parallel. A host's rows lie together, so
/// a host rule's lookups stay in a few cache-resident pages.
///
/// Two results share a run only when their 80 bits of own hash collide (and their hosts' 16):
/// for an ideal hash about `n² / 2⁸¹` for `n` results of one host (10⁻¹⁰ at 10 M); foldhash is
/// no cryptographic hash, but its seeds are drawn at run time, unknown to whoever wrote the URLs.
/// Two maps are equal when their rows are; [`Images::fingerprint`] stands for the rows, so a
/// world need not be kept to be compared with the next.
#[derive(Default)]
struct Images {
    /// `[key, URL]`, ascending.
    rows: Vec<[u32; 4]>,
    /// The rows whose key starts with the bits `b` are `rows[at[b]..at[b + 1]]` (`bits` bits, at
    /// most 2²⁴ buckets: 4 to 8 bytes a row at `spread` 0, 1 to 2 at 2), searched by halving (a
    /// host's rows share the buckets of its 16 host bits: a large host fills many of its own,
    /// and with 16 bits or fewer a bucket holds whole hosts).
    at: Vec<u32>,
    bits: u32,
}

/// The seeds of [`Images`]' hashes, drawn at run time: one pair per [`MergeContext`], so the
/// URL texts, a rule's outputs and every world's results (whose maps [`joint_drops`] compares
/// round to round) share keys.
struct ImageHash([foldhash::quality::RandomState; 2]);

impl ImageHash {
    fn new() -> ImageHash {
        ImageHash(Default::default())
    }

    /// The row of URL `url` changed into `o`.
    fn row(&self, o: &str, url: u32) -> [u32; 4] {
        let [a, b, c] = self.key(o);
        [a, b, c, url]
    }

    /// The 96 hash bits of `o` a row starts with: 16 bits of its host's hash (the text between
    /// `://` and the next `/`, `?` or `#`; empty without `://`), then 48 and 32 bits of two
    /// hashes of `o`.
    fn key(&self, o: &str) -> Key {
        use std::hash::BuildHasher;
        let host = o.find("://").map_or("", |k| {
            let rest = &o[k + 3..];
            &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())]
        });
        let hh = self.0[1].hash_one(host);
        let h1 = self.0[0].hash_one(o);
        let h2 = self.0[1].hash_one(o);
        [
            ((hh >> 48) as u32) << 16 | (h1 >> 48) as u32,
            (h1 >> 16) as u32,
            h2 as u32,
        ]
    }
}

/// The hash bits of a row ([`ImageHash::key`]).
type Key = [u32; 3];

/// The key a row starts with.
fn key_of(row: &[u32; 4]) -> Key {
    [row[0], row[1], row[2]]
}

impl Images {
    /// From rows in any order ([`ImageHash::row`]), with about `2^spread` rows a bucket (0:
    /// half a row to one).
    fn new(mut rows: Vec<[u32; 4]>, spread: u32) -> Images {
        rows.par_sort_unstable();
        let bits = (rows.len().next_power_of_two().trailing_zeros())
            .saturating_sub(spread)
            .clamp(1, 24);
        let mut at = vec![0u32; (1 << bits) + 1];
        for r in &rows {
            at[(r[0] >> (32 - bits)) as usize + 1] += 1;
        }
        for b in 1..at.len() {
            at[b] += at[b - 1];
        }
        Images { rows, at, bits }
    }

    /// A 128-bit digest of the rows under two random seeds: equal maps give equal
    /// fingerprints; different ones give equal fingerprints with negligible probability (about
    /// 2^-128 for a good hash; the seeds are drawn at run time, unknown to whoever wrote the
    /// URLs).
    fn fingerprint(&self, seeds: &Seeds) -> [u64; 2] {
        use std::hash::Hash;
        // (`at` follows from the rows.)
        seeds.each(|h| self.rows.hash(h))
    }

    /// The URLs changed into `o`, ascending.
    ///
    /// # Complexity
    /// As [`Images::get_key`], plus hashing `o`.
    fn get<'s>(&'s self, hash: &ImageHash, o: &str) -> impl Iterator<Item = u32> + 's {
        self.get_key(hash.key(o))
    }

    /// The URLs of the result whose key is `key` ([`ImageHash::key`]), ascending. Looked up in
    /// ascending key order, buckets are read front to back.
    ///
    /// # Complexity
    /// A search by halving in one bucket: `O(log b)` for a bucket of `b` rows (about 4, or a
    /// large host's share), plus the URLs returned.
    fn get_key(&self, key: Key) -> impl Iterator<Item = u32> + '_ {
        let bucket = match self.at.len() {
            0 => &[][..],
            _ => {
                let b = (key[0] >> (32 - self.bits)) as usize;
                &self.rows[self.at[b] as usize..self.at[b + 1] as usize]
            }
        };
        let from = bucket.partition_point(|r| key_of(r) < key);
        bucket[from..]
            .iter()
            .take_while(move |r| key_of(r) == key)
            .map(|r| r[3])
    }
}

impl World {
    fn new<'r>(ctx: &MergeContext<'_>, rules: impl Iterator<Item = &'r Rule>) -> World {
        let rules: Vec<Rule> = rules
            .map(|r| {
                let mut r = r.clone();
                r.except.clear();
                r
            })
            .collect();
        // The URLs some drop may change: marked, then listed in order (a cross-host drop's
        // candidates are millions; no sort of their concatenation).
        let mut marked = vec![false; ctx.all.len()];
        for r in &rules {
            for i in ctx.index.candidates(r).iter() {
                marked[i as usize] = true;
            }
        }
        let touched: Vec<u32> = (0..marked.len() as u32)
            .filter(|&i| marked[i as usize])
            .collect();
        drop(marked);
        let mut by_name: HashMap<String, Vec<(u8, usize)>> = HashMap::new();
        for (i, r) in rules.iter().enumerate() {
            if let Some((n, k)) = drop_generality(r) {
                by_name.entry(n.to_string()).or_default().push((k, i));
            }
        }
        let norm = Normalizer::new(rules.clone(), None);
        // Each changed URL's row (no string per URL kept), in parallel.
        const CHUNK: usize = 1 << 14;
        let rows: Vec<[u32; 4]> = touched
            .par_chunks(CHUNK)
            .flat_map_iter(|chunk| {
                let mut rows = Vec::new();
                for &i in chunk {
                    let u = ctx.all.url(i as usize);
                    let o = norm.apply_rules(u.to_string()).url;
                    if o != u {
                        rows.push(ctx.hash.row(&o, i));
                    }
                }
                rows
            })
            .collect();
        let mut changed = vec![false; ctx.all.len()];
        for r in &rows {
            changed[r[3] as usize] = true;
        }
        let by_image = Images::new(rows, 0);
        World {
            norm,
            by_name,
            rules,
            changed,
            by_image,
        }
    }

    /// The world's rules less `r`.
    fn without(&self, r: &Rule) -> Normalizer {
        let rest = self
            .rules
            .iter()
            .filter(|x| x.id != r.id)
            .cloned()
            .collect();
        Normalizer::new(rest, None)
    }

    /// Whether a more general drop of the world drops `r`'s parameter from `u` ([`drop_generality`]):
    /// `r` then adds nothing there (`member.php?u=63` beside `member.php?u={int}`).
    fn covers(&self, r: &Rule, u: &str) -> bool {
        let Some((name, rank)) = drop_generality(r) else {
            return false;
        };
        self.by_name.get(name).is_some_and(|v| {
            v.iter()
                .any(|&(k, o)| k > rank && apply_rule(&self.rules[o], u).is_some_and(|x| x != u))
        })
    }
}

/// The words a URL must contain for a rule to change it
/// ([`dedust_core::__private::normalize::needed_words`]), as substring searchers: a URL
/// without them is passed over before it is split.
#[derive(Default)]
struct Words {
    all: Vec<memchr::memmem::Finder<'static>>,
    any: Vec<memchr::memmem::Finder<'static>>,
}

impl Words {
    fn of(r: &Rule) -> Words {
        let (all, any) = dedust_core::__private::normalize::needed_words(r);
        let finders = |v: Vec<&str>| {
            v.into_iter()
                .map(|w| memchr::memmem::Finder::new(w).into_owned())
                .collect()
        };
        Words {
            all: finders(all),
            any: finders(any),
        }
    }

    /// Whether `u` holds every word of `all` and one of `any` (when there are any).
    fn admit(&self, u: &str) -> bool {
        let has = |f: &memchr::memmem::Finder<'_>| f.find(u.as_bytes()).is_some();
        self.all.iter().all(has) && (self.any.is_empty() || self.any.iter().any(has))
    }
}

/// One validation URL a rule (alone) rewrites into a merge: its index, whether its bucket is
/// led by another true cluster (`fp`: content a crawler would lose), and whether the output is
/// itself a URL of the data (`seen`: not only the shared form of rewritten URLs). Packed in 4
/// bytes (index below 2^30): a cross-host drop holds millions of merges from validation to the
/// joint judging.
#[derive(Clone, Copy)]
struct Merge(u32);

impl Merge {
    const FP: u32 = 1 << 31;
    const SEEN: u32 = 1 << 30;

    fn new(url: u32, fp: bool, seen: bool) -> Merge {
        debug_assert!(
            url < Merge::SEEN,
            "URL indices below 2^30 (MergeContext::new)"
        );
        Merge(url | if fp { Merge::FP } else { 0 } | if seen { Merge::SEEN } else { 0 })
    }

    /// Index of the URL.
    fn url(self) -> u32 {
        self.0 & (Merge::SEEN - 1)
    }

    /// Its bucket is led by another true cluster.
    fn fp(self) -> bool {
        self.0 & Merge::FP != 0
    }

    /// The output is a URL of the data.
    fn seen(self) -> bool {
        self.0 & Merge::SEEN != 0
    }
}

/// An unknown merge of a rule ([`MergeContext::unknown_pair`]): its place in the rule's merges,
/// the merged URL's host id, its length ratio (`NaN`: no length test), whether a more general
/// drop of the world covers it (it earns the rule nothing if it passes), and the merged URL and
/// the URL of the page it lands on.
type Unknown = (usize, u32, f32, bool, u32, u32);

/// Judge a rule's unknown merges by their lengths ([`crate::evidence::judge`]), then, when the
/// pages are at hand, a sample of them by their pages ([`crate::evidence::by_content`]). Those
/// that pass are no false positives (dropped where the world
/// covers them); the others stay one.
fn settle_unknown(out: &mut Vec<Merge>, unknown: &[Unknown], all: Both<'_>) {
    if unknown.is_empty() {
        return;
    }
    // The length test, over the merges with a length ratio.
    let with: Vec<usize> = (0..unknown.len())
        .filter(|&k| !unknown[k].2.is_nan())
        .collect();
    let groups: Vec<(u32, f32)> = with.iter().map(|&k| (unknown[k].1, unknown[k].2)).collect();
    let mut passes = vec![false; unknown.len()];
    for (&k, pass) in with.iter().zip(crate::evidence::judge(&groups)) {
        passes[k] = pass;
    }
    if let Some(check) = all.check() {
        passes = crate::evidence::by_content(&passes, |k| {
            let (_, _, _, _, i, j) = unknown[k];
            check.same(all.url(i as usize), all.url(j as usize))
        });
    }
    let mut drop = Vec::new();
    for (&(at, _, _, covered, _, _), pass) in unknown.iter().zip(passes) {
        if pass {
            let m = out[at];
            out[at] = Merge::new(m.url(), false, m.seen());
            if covered {
                drop.push(at);
            }
        }
    }
    if !drop.is_empty() {
        let mut k = 0;
        out.retain(|_| {
            k += 1;
            drop.binary_search(&(k - 1)).is_err()
        });
    }
}

/// The labelled URLs a rule is validated on, indexed for [`MergeContext::merges`].
struct MergeContext<'a> {
    all: Both<'a>,
    /// Validation URLs are `all.first` (indices below `nv`); reference URLs follow.
    nv: usize,
    index: UrlIndex<'a>,
    /// URL text → its indices (a URL may sit in several clusters), as hashed rows
    /// ([`Images`]), about four a bucket (or a large host's share). A rule's outputs are looked up in key order, so the
    /// rows are read front to back: at 10 M URLs, a hash table probed in the rule's order
    /// missed the cache up to four times a lookup (control bytes, slot, the URL's end and
    /// text), a tenth of `learn`'s time.
    by_text: Images,
    /// The seeds of `by_text` and of every world's images.
    hash: ImageHash,
    /// By URL index: [`COPIED`], [`LATER`].
    copies: Vec<u8>,
}

/// Another index holds the same URL ([`MergeContext::copies`]).
const COPIED: u8 = 1;
/// A later index holds the same URL.
const LATER: u8 = 2;

impl<'a> MergeContext<'a> {
    /// The URLs are indexed by exposure feature too when `rules` has a cross-host rule.
    fn new(
        validation: &'a LabeledUrls,
        reference: &'a LabeledUrls,
        rules: &[Rule],
    ) -> MergeContext<'a> {
        let all = Both {
            first: validation,
            then: reference,
        };
        // URL indices are `u32`, and a [`Merge`] keeps two flags beside one (a billion URLs
        // would take some 60 GB here before this limit is near).
        assert!(all.len() < 1 << 30, "validation takes fewer than 2^30 URLs");
        let features = rules.iter().any(Rule::is_global);
        let suffixes = rules
            .iter()
            .filter(|r| r.is_global())
            .filter_map(|r| match &r.convention {
                Some(crate::rules::Convention::Suffix(w)) => Some(w.as_str()),
                _ => None,
            })
            .collect();
        let mut index = UrlIndex::new(all.len(), |i| all.url(i), features, &suffixes);
        index.index_params(&drop_heavy_hosts(rules), |i| all.url(i));
        let hash = ImageHash::new();
        let rows = (0..all.len())
            .into_par_iter()
            .map(|i| hash.row(all.url(i), i as u32))
            .collect();
        let by_text = Images::new(rows, 2);
        // Copies share a key. (Two URLs whose key bits collide pass for copies: `two_texts`
        // then compares them by text, but `injective_merges` skips the earlier one and takes
        // the other's key for its own; at 80 bits of a host's URLs, see [`Images`].)
        let mut copies = vec![0u8; all.len()];
        for run in by_text.rows.chunk_by(|a, b| key_of(a) == key_of(b)) {
            if let [rest @ .., last] = run {
                for r in rest {
                    copies[r[3] as usize] = COPIED | LATER;
                }
                if !rest.is_empty() {
                    copies[last[3] as usize] = COPIED;
                }
            }
        }
        MergeContext {
            nv: validation.len(),
            all,
            index,
            by_text,
            hash,
            copies,
        }
    }

    /// Indices of the URLs equal to `u`, ascending.
    fn exact<'b>(&'b self, u: &'b str) -> impl Iterator<Item = u32> + 'b {
        let all = self.all;
        self.by_text
            .get(&self.hash, u)
            .filter(move |&j| all.url(j as usize) == u)
    }

    /// Whether the URLs at `ids` (distinct indices) hold two different texts: without copies
    /// among them they do as soon as there are two; else by text.
    fn two_texts(&self, ids: &[u32]) -> bool {
        debug_assert!(
            {
                let mut v = ids.to_vec();
                v.sort_unstable();
                v.windows(2).all(|w| w[0] != w[1])
            },
            "distinct indices"
        );
        match ids {
            [] | [_] => false,
            _ if ids.iter().all(|&j| self.copies[j as usize] & COPIED == 0) => true,
            [first, rest @ ..] => {
                let u = self.all.url(*first as usize);
                rest.iter().any(|&j| self.all.url(j as usize) != u)
            }
        }
    }

    /// The validation URLs `r` (alone) rewrites into a merge ([`Merge`]); and, with
    /// `keep_rewrites`, for a host rule every validation URL it rewrites with the hash of the
    /// output, sorted (see [`Rewrites`]). In a `world` ([`joint_drops`]), each URL `r` rewrites
    /// goes on through the world's rules, and merges with the URLs whose result in the world
    /// equals its own.
    fn merges(
        &self,
        r: &Rule,
        keep_rewrites: bool,
        world: Option<&World>,
    ) -> (Vec<Merge>, RuleRewrites) {
        use crate::rules::Convention as C;
        if world.is_none()
            && matches!(
                r.convention,
                Some(C::Https | C::TrailingSlash | C::DefaultDoc(_) | C::Suffix(_))
            )
        {
            return (self.injective_merges(r), Vec::new());
        }
        let all = self.all;
        // URLs the rule changes (sorted below: a host's candidates come by first segment),
        // and the groups their outputs form.
        let mut out_of: Vec<u32> = Vec::new();
        // URLs `r` rewrites where a more general drop of the world does too (sorted below).
        let mut covered: Vec<u32> = Vec::new();
        // `[output's key, URL]` for every URL `r` changes ([`ImageHash::row`]: 16 bytes a URL
        // and no output text kept; a cross-host drop changes millions).
        let mut outs: Vec<[u32; 4]> = Vec::new();
        let mut rewrites: RuleRewrites = Vec::new();
        let keep = keep_rewrites && !r.is_global();
        let need = self.index.required_first(r);
        // An imported Java regex (Nutch, ClearURLs, DUD) is compiled once, not once per URL.
        let java = (r.kind == RuleKind::Regex)
            .then(|| {
                crate::javaregex::JavaRegex::new(
                    r.regex.as_deref().unwrap_or(""),
                    r.replacement.as_deref().unwrap_or(""),
                )
                .ok()
            })
            .flatten();
        let apply = |u: &str| match &java {
            Some(j) => Some(j.replace_all(u)),
            None if r.kind == RuleKind::Regex => None,
            None => apply_rule(r, u),
        };
        // A host rule's candidates are its host's URLs: most lack the parameters it needs.
        let words = match r.is_global() {
            false => Words::of(r),
            true => Words::default(),
        };
        for i in self.index.candidates(r).iter() {
            if !self.index.may_match(need, i) {
                continue;
            }
            let u = all.url(i as usize);
            if !words.admit(u) {
                continue;
            }
            // Where a more general drop does the work, `r` earns nothing, but its wrong merges
            // still count (on a site excepted from that drop, `r` makes them).
            let cov = world.is_some_and(|w| w.covers(r, u));
            if let Some(o) = apply(u).filter(|o| o != u) {
                if cov {
                    covered.push(i);
                }
                let o = match world {
                    Some(w) => w.norm.apply_rules(o).url,
                    None => o,
                };
                if keep && (i as usize) < self.nv {
                    rewrites.push(Rewrite::new(i, crate::hash::fnv(&o)));
                }
                outs.push(self.hash.row(&o, i));
                out_of.push(i);
            }
        }
        if !out_of.is_sorted() {
            out_of.sort_unstable();
        }
        if !covered.is_sorted() {
            covered.sort_unstable();
        }
        rewrites.sort_unstable();
        // By output key, the URLs of one output ascending: outputs are looked up in key order,
        // so `by_text` and a world's `by_image` are read front to back. (What a rule merges
        // does not depend on the order of its outputs. Two outputs share a group only when
        // their keys collide, see [`Images`].)
        outs.sort_unstable();
        let mut out = Vec::new();
        // Buffers reused from group to group.
        let (mut unchanged, mut bucket) = (Vec::new(), Vec::new());
        let (mut labels, mut at_o) = (Vec::new(), Vec::new());
        // The world less `r`, built the first time a bucket holds only URLs `r` rewrote.
        let without: std::cell::OnceCell<Normalizer> = std::cell::OnceCell::new();
        let mut needed: Vec<bool> = Vec::new();
        let mut unknown: Vec<Unknown> = Vec::new();
        let facts = all.has_facts();
        for group in outs.chunk_by(|a, b| key_of(a) == key_of(b)) {
            let key = key_of(&group[0]);
            // The bucket: URLs rewritten to the output `o` and unchanged URLs equal to `o`.
            unchanged.clear();
            let not_rewritten = |j: &u32| out_of.binary_search(j).is_err();
            // The data's URLs equal to `o` that `r` left alone (one search a group).
            at_o.clear();
            at_o.extend(self.by_text.get_key(key).filter(not_rewritten));
            let seen = !at_o.is_empty();
            match world {
                None => unchanged.extend_from_slice(&at_o),
                Some(w) => {
                    // The URLs the world leaves as `o`, and those it turns into `o`.
                    unchanged.extend(at_o.iter().copied().filter(|&j| !w.changed[j as usize]));
                    unchanged.extend(w.by_image.get_key(key).filter(not_rewritten));
                }
            }
            bucket.clear();
            bucket.extend(group.iter().map(|g| g[3]));
            let rewritten = bucket.len();
            bucket.extend_from_slice(&unchanged);
            // One URL (or copies of it) and nothing else: no merge.
            if !self.two_texts(&bucket) {
                continue;
            }
            let major = self.leader(&bucket, &unchanged, &mut labels);
            // In a world, `r` merges a URL only where the world less `r` would not: a bucket
            // with a URL `r` left alone needs `r`; among URLs `r` rewrote, those whose results
            // without `r` already agree merge anyway (a `sid` drop's merges are not `lang`'s).
            needed.clear();
            match world {
                Some(w) if unchanged.is_empty() => {
                    let wo = without.get_or_init(|| w.without(r));
                    let alone: Vec<String> = bucket[..rewritten]
                        .iter()
                        .map(|&j| wo.apply_rules(all.url(j as usize).to_string()).url)
                        .collect();
                    // Two results or more: every URL differs from some other one.
                    let split = alone.iter().any(|a| *a != alone[0]);
                    needed.resize(rewritten, split);
                }
                _ => needed.resize(rewritten, true),
            }
            for (&i, _) in bucket[..rewritten]
                .iter()
                .zip(&needed)
                .filter(|&(&i, &n)| n && (i as usize) < self.nv)
            {
                let fp = all.cluster(i as usize) != major;
                if !fp && covered.binary_search(&i).is_ok() {
                    continue;
                }
                if fp && facts {
                    if let Some((j, ratio)) = self.unknown_pair(i, &bucket, &unchanged, major) {
                        let cov = covered.binary_search(&i).is_ok();
                        unknown.push((out.len(), self.index.host_id(i), ratio, cov, i, j));
                    }
                }
                out.push(Merge::new(i, fp, seen));
            }
        }
        settle_unknown(&mut out, &unknown, all);
        (out, rewrites)
    }

    /// With an index's facts ([`crate::evidence`]): the merge of URL `i` into `bucket`, led by
    /// the true cluster `major` (another than `i`'s), is *unknown* — two status-200 captures of
    /// one mime class with different digests — and the leader's URL `j` is returned with the
    /// length difference over the site's limit (`NaN` when there is none: only the pages can
    /// judge it, and only when they are at hand); `None` when it is *different* or nothing is
    /// known (a false positive, as for every other input). The leader's URL is one the rule
    /// left alone (`unchanged`: the page at the output) when it has facts, else another of the
    /// bucket.
    fn unknown_pair(
        &self,
        i: u32,
        bucket: &[u32],
        unchanged: &[u32],
        major: usize,
    ) -> Option<(u32, f32)> {
        let all = self.all;
        let a = all.facts(i as usize)?;
        let (j, b) = unchanged
            .iter()
            .chain(bucket)
            .filter(|&&j| all.cluster(j as usize) == major)
            .find_map(|&j| Some((j, all.facts(j as usize)?)))?;
        match crate::evidence::unknown_ratio(a, b) {
            Some(r) => Some((j, r)),
            None if all.check().is_some() && crate::evidence::unknown(a, b) => Some((j, f32::NAN)),
            None => None,
        }
    }

    /// The true cluster that leads a bucket (URL indices; `unchanged` are those the rule left
    /// alone). Ties go to the cluster of a URL the rule left alone: a rule has to out-vote the
    /// page that already lives at its target; then to the smallest label.
    /// `labels`: a buffer.
    fn leader(&self, bucket: &[u32], unchanged: &[u32], labels: &mut Vec<usize>) -> usize {
        let all = self.all;
        // Clusters and their counts: sorted labels (buckets are mostly two or three URLs).
        labels.clear();
        labels.extend(bucket.iter().map(|&j| all.cluster(j as usize)));
        labels.sort_unstable();
        let counts = labels.chunk_by(|a, b| a == b).map(|g| (g[0], g.len()));
        let anchored = |c: usize| unchanged.iter().any(|&j| all.cluster(j as usize) == c);
        counts
            .max_by(|a, b| {
                a.1.cmp(&b.1)
                    .then_with(|| anchored(a.0).cmp(&anchored(b.0)))
                    .then_with(|| b.0.cmp(&a.0))
            })
            .map(|(c, _)| c)
            .expect("bucket not empty")
    }

    /// [`MergeContext::merges`] for a convention that sends each URL to its own output, which
    /// the convention leaves alone (`https`, trailing slash, default document): the bucket of a
    /// rewritten URL is its copies and the URLs equal to its output, so outputs are not
    /// grouped (only keyed and sorted, for the order of the lookups).
    fn injective_merges(&self, r: &Rule) -> Vec<Merge> {
        let all = self.all;
        let mut out = Vec::new();
        let need = self.index.required_first(r);
        // `[output's key, URL]` for each URL the convention changes (each text once: its last
        // copy), looked up in key order as in [`MergeContext::merges`].
        let mut outs: Vec<[u32; 4]> = Vec::new();
        for i in self.index.candidates(r).iter() {
            if self.copies[i as usize] & LATER != 0 || !self.index.may_match(need, i) {
                continue;
            }
            let u = all.url(i as usize);
            if let Some(o) = apply_rule(r, u).filter(|o| o != u) {
                outs.push(self.hash.row(&o, i));
            }
        }
        outs.sort_unstable();
        let (mut unchanged, mut bucket, mut labels) = (Vec::new(), Vec::new(), Vec::new());
        let mut unknown: Vec<Unknown> = Vec::new();
        let facts = all.has_facts();
        for row in &outs {
            let i = row[3];
            unchanged.clear();
            unchanged.extend(self.by_text.get_key(key_of(row)));
            if unchanged.is_empty() {
                continue;
            }
            bucket.clear();
            match self.copies[i as usize] & COPIED {
                0 => bucket.push(i),
                _ => bucket.extend(self.exact(all.url(i as usize))),
            }
            let rewritten = bucket.len();
            bucket.extend_from_slice(&unchanged);
            let major = self.leader(&bucket, &unchanged, &mut labels);
            for &j in bucket[..rewritten]
                .iter()
                .filter(|&&j| (j as usize) < self.nv)
            {
                let fp = all.cluster(j as usize) != major;
                if fp && facts {
                    if let Some((k, ratio)) = self.unknown_pair(j, &bucket, &unchanged, major) {
                        unknown.push((out.len(), self.index.host_id(j), ratio, false, j, k));
                    }
                }
                out.push(Merge::new(j, fp, true));
            }
        }
        settle_unknown(&mut out, &unknown, all);
        out
    }
}

/// Filter candidates by their stats and make the kept set deployable.
///
/// `stats[i]` belongs to `rules[i]`; `data` are all labelled URLs (used for conflicts and the
/// idempotence check).
pub fn select(
    rules: Vec<Rule>,
    stats: &[(usize, usize)],
    data: &LabeledUrls,
    opts: &ValidateOptions,
) -> (Vec<Rule>, ValidateReport) {
    select_cached(rules, stats, None, data, opts, None, false)
}

/// [`select`] keeping every rule the data does not refute: a rule the thresholds reject for
/// too little evidence (no merge at all, fewer than `min_support`, too few sites, a many → one
/// family too small) is kept unless its wrong merges pass the bound
/// ([`dedust_core::Evidence::Refuted`]). For hand-kept lists, whose rules mostly name
/// parameters a given crawl never shows. Conflicts and idempotence are resolved as in
/// [`select`].
///
/// ```
/// use dedust_learn::{labeled, rule_stats, select, select_unrefuted, Cluster};
/// use dedust_core::ValidateOptions;
/// let c = vec![Cluster { id: "a".into(), urls: vec!["http://h.org/x?t=1".into()] }];
/// let (data, _) = labeled(&c, &Default::default());
/// # #[cfg(feature = "java-regex")] {
/// let r = dedust_core::regex_rule("[?&]utm_source=[^&]*", "", "utm").unwrap();
/// let st = rule_stats(std::slice::from_ref(&r), &data, &Default::default());
/// let opts = ValidateOptions::default();
/// assert_eq!(select(vec![r.clone()], &st, &data, &opts).0.len(), 0);
/// let (kept, rep) = select_unrefuted(vec![r], &st, &data, &opts);
/// assert_eq!((kept.len(), rep.untested, rep.refuted), (1, 1, 0));
/// # }
/// ```
pub fn select_unrefuted(
    rules: Vec<Rule>,
    stats: &[(usize, usize)],
    data: &LabeledUrls,
    opts: &ValidateOptions,
) -> (Vec<Rule>, ValidateReport) {
    select_cached(rules, stats, None, data, opts, None, true)
}

/// [`select`], reusing the host rules' rewrites of `data` from validation when `rewrites` (one
/// entry per rule, [`rule_stats_rewrites`] on `data` itself) is given; with `unrefuted`, as
/// [`select_unrefuted`].
pub(crate) fn select_cached(
    rules: Vec<Rule>,
    stats: &[(usize, usize)],
    rewrites: Option<Rewrites>,
    data: &LabeledUrls,
    opts: &ValidateOptions,
    decided: Option<&std::collections::BTreeSet<String>>,
    unrefuted: bool,
) -> (Vec<Rule>, ValidateReport) {
    let mut rep = ValidateReport {
        candidates: rules.len(),
        ..Default::default()
    };
    let mut rules = rules;
    for (r, &(sup, fp)) in rules.iter_mut().zip(stats) {
        r.support = Some(sup);
        r.fp = Some(fp);
        r.fpr = Some(rounded_fpr(sup, fp));
        match dedust_core::evidence_of(r, opts) {
            dedust_core::Evidence::Untested => rep.untested += 1,
            dedust_core::Evidence::Supported => rep.supported += 1,
            dedust_core::Evidence::Refuted => rep.refuted += 1,
        }
    }
    // Pooled counts of each many → one family, over all its candidates (and how many).
    let mut pooled: HashMap<(String, String), (usize, usize, usize)> = HashMap::new();
    for r in &rules {
        if let Some((h, t)) = collapse_family(r) {
            let e = pooled.entry((h.to_string(), t.to_string())).or_default();
            e.0 += r.support.unwrap_or(0);
            e.1 += r.fp.unwrap_or(0);
            e.2 += 1;
        }
    }
    // Sites pooled over each convention family (default documents), on every candidate.
    let family_sites = crate::judge::family_sites(&rules, opts);
    let family_pooled: Vec<Option<usize>> = rules
        .iter()
        .map(|r| crate::judge::pooled_sites(r, &family_sites))
        .collect();
    let cache: Vec<Option<RuleRewrites>> = match rewrites {
        Some(w) => w.into_iter().map(Some).collect(),
        None => vec![None; rules.len()],
    };
    let mut kept: Vec<(Rule, Option<RuleRewrites>)> = Vec::new();
    for ((r, c), pooled_sites) in rules.into_iter().zip(cache).zip(family_pooled) {
        // A rule alone in its family is judged by its own evidence only.
        let family = collapse_family(&r)
            .and_then(|(h, t)| pooled.get(&(h.to_string(), t.to_string())).copied())
            .filter(|&(_, _, n)| n > 1)
            .map(|(s, f, _)| (s, f));
        // A cross-host tier decided on pooled evidence overrides this input's own numbers (a
        // candidate left out counts as low support: pooled, it fell short).
        let v = match decided {
            Some(d) if r.is_global() && d.contains(&r.id) => Verdict::Keep,
            Some(_) if r.is_global() => Verdict::LowSupport,
            _ => verdict(&r, opts, family, pooled_sites),
        };
        let refuted = || dedust_core::evidence_of(&r, opts) == dedust_core::Evidence::Refuted;
        match v {
            Verdict::LowSupport if unrefuted && !refuted() => kept.push((r, c)),
            Verdict::LowSupport => rep.low_support += 1,
            Verdict::HighFpr => rep.high_fpr += 1,
            Verdict::Keep => kept.push((r, c)),
        }
    }
    // Many → one: a family of rules sending varying ids to one fixed page (a login wall, a
    // soft 404) is kept only when, pooled over the family, it merged enough distinct URLs:
    // `min_collapse`…
    let mut family: HashMap<(&str, &str), usize> = HashMap::new();
    let many_to_one = |r: &Rule| is_collapse(r) || crate::judge::discards_every_capture(r);
    for (r, _) in kept.iter().filter(|(r, _)| many_to_one(r)) {
        *family
            .entry((r.source.host.as_str(), r.target.as_str()))
            .or_default() += r.support.unwrap_or(0);
    }
    // … and at least a share of its host's URLs (`COLLAPSE_HOST_SHARE`): a login wall or a
    // soft 404 is a site-wide mechanism, while a few mangled aliases of one page of a large
    // site (a migration map's typos sent to `/GPT`) say nothing of the ids never seen.
    let mut host_urls: HashMap<&str, usize> = family.keys().map(|(h, _)| (*h, 0)).collect();
    if !host_urls.is_empty() {
        for i in 0..data.len() {
            let u = data.url(i);
            if let Some(n) = split_url(u).and_then(|p| host_urls.get_mut(p.scope_host(u))) {
                *n += 1;
            }
        }
    }
    let weak: HashSet<(String, String)> = family
        .into_iter()
        .filter(|((h, _), n)| {
            let share = crate::judge::COLLAPSE_HOST_SHARE * host_urls[h] as f64;
            *n < opts.min_collapse || (*n as f64) < share
        })
        .map(|((h, t), _)| (h.to_string(), t.to_string()))
        .collect();
    let before = kept.len();
    kept.retain(|(r, _)| {
        unrefuted || !(many_to_one(r) && weak.contains(&(r.source.host.clone(), r.target.clone())))
    });
    rep.low_support += before - kept.len();
    let (kept, cache): (Vec<Rule>, Vec<_>) = kept.into_iter().unzip();
    let (kept, conflicts, removed, redundant) = finalize_counts(kept, cache, data);
    rep.conflicts = conflicts;
    rep.not_idempotent = removed;
    rep.redundant = redundant;
    rep.kept = kept.len();
    (kept, rep)
}

/// Make a rule set deployable on `data`: conflicts removed (better rule kept), specific rules
/// first, idempotent. Returns the rules, the number of conflicts and of idempotence removals.
pub fn finalize(rules: Vec<Rule>, data: &LabeledUrls) -> (Vec<Rule>, usize, usize) {
    let cache = vec![None; rules.len()];
    let (kept, conflicts, removed, _) = finalize_counts(rules, cache, data);
    (kept, conflicts, removed)
}

/// [`finalize`], also counting the host rules removed as redundant.
/// `cache[i]`: rule i's rewrites of `data` when known ([`Rewrites`]).
fn finalize_counts(
    rules: Vec<Rule>,
    cache: Vec<Option<RuleRewrites>>,
    data: &LabeledUrls,
) -> (Vec<Rule>, usize, usize, usize) {
    let (kept, conflicts) = deconflict(rules, cache, data);
    let mut kept = cross_host_after_hosts(kept);
    order(&mut kept);
    let (mut kept, mut removed, mut trails) = make_idempotent(kept, data);
    if host_rules_win(&mut kept, data, &trails) {
        let (k, r, t) = make_idempotent(kept, data);
        (kept, trails) = (k, t);
        removed += r;
    }
    let before = kept.len();
    let (kept, dropped) = without_redundant(kept, data, &trails);
    let redundant = before - kept.len();
    // Fewer rules compose differently (a host rule may send a URL to another host whose trail
    // the per-host check did not follow): check again when rules went.
    let (mut kept, removed_after) = if dropped.is_empty() {
        (kept, 0)
    } else {
        recheck_idempotent(kept, data, &trails, &dropped)
    };
    // Exceptions added on the way (host rules that win, idempotence) leave `attested`.
    for r in kept.iter_mut().filter(|r| r.is_global()) {
        prune_attested(r);
    }
    (kept, conflicts, removed + removed_after, redundant)
}

/// Host evidence wins over a cross-host template or alias: on a registrable domain where such a
/// rule `g` sends URLs of a cluster to a canonical form other than the one the host's own rules
/// give its cluster-mates (`/d/x/7/?mode=hybrid` → `/d/x/7?id=7` by the cross-host template
/// after the `mode=hybrid` drop, while the host's template sends `/d/x/7/` to `/d/x/7`), and
/// more often than `g` gives a URL the form of a cluster-mate `g` did not touch there, the domain becomes an
/// exception of `g`. Cross-host drops and conventions compose with host rules and are left to
/// the idempotence check. Returns whether an exception was added.
///
/// # Complexity
/// One pass over the trails finds the clusters a cross-host template or alias touched; their
/// URLs are split, sorted by (cluster, domain), and each group's trails are read again and
/// counted by canonical form: `O(U)` plus `O(U_g log U_g)` for the `U_g` touched URLs (all in
/// parallel).
fn host_rules_win(rules: &mut [Rule], data: &LabeledUrls, trails: &Trails) -> bool {
    let moves = |i: u32| {
        let r = &rules[i as usize];
        r.is_global() && matches!(r.kind, RuleKind::Template | RuleKind::Alias)
    };
    let touched: HashSet<usize> = data
        .par_iter()
        .zip(trails.par_iter())
        .filter(|(_, (_, fired, _))| fired.iter().any(|&i| moves(i)))
        .map(|(l, _)| l.cluster)
        .collect();
    if touched.is_empty() {
        return false;
    }
    // The URLs of those clusters by (cluster, domain), gathered and sorted in parallel (an
    // alias or a `www.` convention touches millions of clusters): 32 bytes a URL, its trail
    // read again per group.
    let mut rows: Vec<(usize, &str, u32)> = data
        .par_iter()
        .enumerate()
        .filter(|(_, l)| touched.contains(&l.cluster))
        .filter_map(|(i, l)| {
            let p = split_url(l.url)?;
            Some((l.cluster, crate::site::registrable_domain(p.host), i as u32))
        })
        .collect();
    drop(touched);
    rows.par_sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    // Each URL's canonical hash, its cross-host templates and aliases (each once: a rule may
    // fire in two passes), and whether a host rule fired.
    let row = |i: u32| {
        let (canon, fired, _) = trails.get(i as usize);
        let mut moved: Vec<u32> = fired.iter().copied().filter(|&i| moves(i)).collect();
        moved.sort_unstable();
        moved.dedup();
        let by_host = fired.iter().any(|&i| !rules[i as usize].is_global());
        (canon, moved, by_host)
    };
    // Per (rule, domain): URLs it sent away from the host's form, URLs it joined to the form of
    // a mate it did not touch (two URLs it sent to one wrong form do not vouch for each other).
    type Tally<'a> = BTreeMap<(u32, &'a str), (usize, usize)>;
    let tally: Tally<'_> = rows
        .par_chunk_by(|a, b| a.0 == b.0 && a.1 == b.1)
        .fold(Tally::new, |mut tally, group| {
            let d = group[0].1;
            let rows: Vec<(u64, Vec<u32>, bool)> = group.iter().map(|&(_, _, i)| row(i)).collect();
            let urls = rows.iter();
            let host_forms: HashSet<u64> = urls
                .clone()
                .filter(|(_, moved, by_host)| *by_host && moved.is_empty())
                .map(|(c, _, _)| *c)
                .collect();
            // Per canonical form: its URLs, and how many of them each rule touched (linear in
            // the group, however many URLs share one form: a login wall's thousands).
            let mut forms: HashMap<u64, (usize, BTreeMap<u32, usize>)> = HashMap::new();
            for (canon, moved, _) in urls.clone() {
                let e = forms.entry(*canon).or_default();
                e.0 += 1;
                for &g in moved {
                    *e.1.entry(g).or_default() += 1;
                }
            }
            for (canon, moved, _) in urls {
                let split = !host_forms.is_empty() && !host_forms.contains(canon);
                let (n, with) = &forms[canon];
                for &g in moved {
                    let joined = *n > with.get(&g).copied().unwrap_or(0);
                    let t = tally.entry((g, d)).or_default();
                    t.0 += usize::from(split);
                    t.1 += usize::from(joined);
                }
            }
            tally
        })
        .reduce(Tally::new, |mut a, b| {
            for (k, (split, joined)) in b {
                let t = a.entry(k).or_default();
                t.0 += split;
                t.1 += joined;
            }
            a
        });
    let mut added = false;
    for ((g, d), (split, joined)) in tally {
        if split > joined {
            let r = &mut rules[g as usize];
            if let Err(k) = r.except.binary_search_by(|e| e.as_str().cmp(d)) {
                r.except.insert(k, d.to_string());
                added = true;
            }
        }
    }
    added
}

/// A URL whose canonical form the rules change again: (the rule to blame, the URL, its
/// canonical form).
type Bad = (usize, String, String);

/// One data URL's run under a rule set: the hash of its canonical form, the rules that fired
/// (indices into the rule set, in order), and whether a pass changed nothing within
/// [`crate::normalize::MAX_ROUNDS`].
type Trail<'t> = (u64, &'t [u32], bool);

/// Every data URL's [`Trail`] under the rule set [`make_idempotent`] accepted, by URL index:
/// in blocks of [`TRAIL_BLOCK`] URLs, each block's fired rules in one array (17 bytes a URL
/// and 4 a rule fired, where a tuple with a boxed slice took 32 and an allocation).
struct Trails(Vec<TrailBlock>);

/// URLs per [`TrailBlock`] (the unit of parallel work too).
const TRAIL_BLOCK: usize = 1 << 14;

/// The trails of [`TRAIL_BLOCK`] consecutive URLs.
#[derive(Default)]
struct TrailBlock {
    canon: Vec<u64>,
    fixed: Vec<bool>,
    /// URL `j`'s fired rules end at `ends[j]` in `fired`.
    ends: Vec<usize>,
    fired: Vec<u32>,
}

impl TrailBlock {
    fn push(&mut self, canon: u64, fired: &[u32], fixed: bool) {
        self.canon.push(canon);
        self.fixed.push(fixed);
        self.fired.extend_from_slice(fired);
        self.ends.push(self.fired.len());
    }
}

impl Trails {
    /// URL `i`'s trail.
    fn get(&self, i: usize) -> Trail<'_> {
        let b = &self.0[i / TRAIL_BLOCK];
        let j = i % TRAIL_BLOCK;
        let start = if j == 0 { 0 } else { b.ends[j - 1] };
        (b.canon[j], &b.fired[start..b.ends[j]], b.fixed[j])
    }

    /// Every trail, by URL index.
    fn par_iter(&self) -> impl IndexedParallelIterator<Item = Trail<'_>> + '_ {
        let n = self.0.iter().map(|b| b.canon.len()).sum::<usize>();
        (0..n).into_par_iter().map(|i| self.get(i))
    }
}

/// For a run that did not reach a fixed point: the [`Bad`] entry when normalizing the output
/// again changes it.
fn not_idempotent(n: &Normalizer, url: &str, out: Option<String>, fired: &[u32]) -> Option<Bad> {
    let once = out.unwrap_or_else(|| url.to_string());
    let twice = n.apply_rules(once.clone());
    (twice.url != once)
        .then(|| {
            twice
                .rule
                .or(fired.last().map(|&i| i as usize))
                .map(|r| (r, url.to_string(), once))
        })
        .flatten()
}

/// [`make_idempotent`] after host rules (`dropped`, indices into the rule set `trails` was
/// taken under) went: a URL whose trail holds none of them, and whose run reached a fixed
/// point, is normalized exactly as before (at every step the same rule is the first to change
/// it, and the last pass still changes nothing), so only the other URLs are checked; the full
/// check runs when one of them is not idempotent.
fn recheck_idempotent(
    rules: Vec<Rule>,
    data: &LabeledUrls,
    trails: &Trails,
    dropped: &HashSet<usize>,
) -> (Vec<Rule>, usize) {
    let n = Normalizer::new(rules.clone(), None);
    let any_bad = data
        .par_iter()
        .zip(trails.par_iter())
        .any(|(l, (_, fired, fixed))| {
            if fixed && !fired.iter().any(|k| dropped.contains(&(*k as usize))) {
                return false;
            }
            let (out, fired, fixed) = n.trace_fixed(l.url);
            !fixed && not_idempotent(&n, l.url, out, &fired).is_some()
        });
    if any_bad {
        let (rules, removed, _) = make_idempotent(rules, data);
        (rules, removed)
    } else {
        (rules, 0)
    }
}

/// The canonical form of `url` under the host rules `current` and the cross-host rules (for a
/// URL of another host that a host rule touches).
fn with_out(current: &[usize], url: &str, set: &dyn Fn(&[usize], usize) -> Normalizer) -> String {
    set(current, usize::MAX).apply_rules(url.to_string()).url
}

/// A rule's kind, source and output with the scope host left out: the tie-break between equally
/// scored rules before their ids (hashes that name the host), so that one crawl served on
/// `h:8765` keeps the rules it keeps on `h` (scoped with the port).
fn host_free(r: &Rule) -> String {
    let source = dedust_core::Source {
        host: String::new(),
        ..r.source.clone()
    };
    format!("{:?}{:?}{:?}", r.kind, source, r.output)
}

/// Remove host-scoped rules that other rules make redundant: a host rule goes when, without it,
/// every data URL it rewrites still gets the same canonical form (the cross-host rules and the
/// host's other rules — such as a merged sibling from [`crate::generalize`] — do its work). One
/// rule per mechanism, not one per host or per value shape.
/// Weakest rules are tried first; order is kept.
///
/// # Complexity
/// Per host with `k` rules and `U_h` data URLs: one traced run of the host's rules plus the
/// cross-host rules over the `U_h` URLs, then per tried rule one rule set built and run on the
/// URLs where that rule fired (or that an earlier removal touched).
fn without_redundant(
    rules: Vec<Rule>,
    data: &LabeledUrls,
    trails: &Trails,
) -> (Vec<Rule>, HashSet<usize>) {
    // Only host rules look for candidates here.
    let mut index = UrlIndex::new(data.len(), |i| data.url(i), false, &Default::default());
    index.index_params(&drop_heavy_hosts(&rules), |i| data.url(i));
    // Cross-host rules as the engine needs them: without their evidence lists, which can name
    // every site and would be copied for every host and every tried rule.
    let global: Vec<Rule> = rules
        .iter()
        .filter(|r| r.is_global())
        .map(|r| Rule {
            supporting: Vec::new(),
            attested: Vec::new(),
            examples: Vec::new(),
            ..r.clone()
        })
        .collect();
    let mut hosts: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, r) in rules.iter().enumerate() {
        if !r.is_global() && r.kind != RuleKind::Regex {
            hosts.entry(r.source.host.as_str()).or_default().push(i);
        }
    }
    let mut hosts: Vec<(&str, Vec<usize>)> = hosts.into_iter().collect();
    hosts.sort_unstable();
    let set = |host_rules: &[usize], skip: usize| -> Normalizer {
        let rs: Vec<Rule> = host_rules
            .iter()
            .filter(|&&i| i != skip)
            .map(|&i| rules[i].clone())
            .chain(global.iter().cloned())
            .collect();
        Normalizer::new(rs, None)
    };
    let drop: HashSet<usize> = hosts
        .par_iter()
        .with_max_len(1)
        .flat_map_iter(|(host, idx)| {
            let mut current: Vec<usize> = idx.clone();
            let mut tries = idx.clone();
            tries.sort_by(|&a, &b| {
                score(&rules[a])
                    .cmp(&score(&rules[b]))
                    .then_with(|| host_free(&rules[a]).cmp(&host_free(&rules[b])))
                    .then_with(|| rules[a].id.cmp(&rules[b].id))
            });
            // Each URL's canonical form (hashed) and, per host rule, the URLs where it fired
            // (alone or after another rule): from the run over all rules, where no rule of
            // another host fired on the URL (then only this host's rules and the cross-host ones
            // did, as here); else from a traced run of this host's rules.
            let urls: &[u32] = index.host_urls(host);
            let with = set(&current, usize::MAX);
            let mut canon: HashMap<u32, u64> = HashMap::with_capacity(urls.len());
            let mut fired: HashMap<usize, Vec<u32>> = HashMap::new();
            for &u in urls {
                let (h, by, _) = trails.get(u as usize);
                let elsewhere = by.iter().any(|&k| {
                    let r = &rules[k as usize];
                    !r.is_global() && r.source.host != *host
                });
                if !elsewhere {
                    for &k in by {
                        if !rules[k as usize].is_global() {
                            fired.entry(k as usize).or_default().push(u);
                        }
                    }
                    canon.insert(u, h);
                    continue;
                }
                let (out, by) = with.trace(data.url(u as usize));
                for k in by {
                    if let Some(&r) = current.get(k) {
                        fired.entry(r).or_default().push(u);
                    }
                }
                canon.insert(u, crate::hash::fnv(&out));
            }
            let mut dropped = Vec::new();
            // A rule went after a check of its URLs (which re-traced them).
            let mut retraced = false;
            for t in tries {
                // Only URLs where `t` fired can change without it: elsewhere the same rules fire
                // in the same order. (A removal re-traces the URLs it touched, so `fired` follows
                // the rules that took over; a stale entry only costs a check.)
                let mut touched: Vec<u32> = fired.get(&t).cloned().unwrap_or_default();
                touched.sort_unstable();
                touched.dedup();
                if touched.is_empty() {
                    // It fires nowhere now. After a checked removal (which re-traced the URLs it
                    // handed to other rules), without it nothing changes. Else it never fired on
                    // the host's data: another rule always got there first. It goes when it
                    // would rewrite some data URL alone (it is shadowed there).
                    if retraced
                        || index.candidates(&rules[t]).iter().any(|i| {
                            let u = data.url(i as usize);
                            apply_rule(&rules[t], u).is_some_and(|o| o != u)
                        })
                    {
                        current.retain(|&i| i != t);
                        dropped.push(t);
                    }
                    continue;
                }
                let without = set(&current, t);
                let rest: Vec<usize> = current.iter().copied().filter(|&i| i != t).collect();
                // The host rules that fire on each touched URL without `t`.
                let mut now: Vec<(u32, Vec<usize>)> = Vec::with_capacity(touched.len());
                let same = touched.iter().all(|&u| {
                    let url = data.url(u as usize);
                    let want = canon
                        .get(&u)
                        .copied()
                        .unwrap_or_else(|| crate::hash::fnv(&with_out(&current, url, &set)));
                    let (out, by) = without.trace(url);
                    now.push((
                        u,
                        by.into_iter()
                            .filter_map(|k| rest.get(k).copied())
                            .collect(),
                    ));
                    crate::hash::fnv(&out) == want
                });
                if same {
                    current = rest;
                    dropped.push(t);
                    retraced = true;
                    for (u, by) in now {
                        for r in by {
                            fired.entry(r).or_default().push(u);
                        }
                    }
                }
            }
            dropped
        })
        .collect();
    let kept = rules
        .iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, r)| r.clone())
        .collect();
    (kept, drop)
}

/// Per exposure key, how many of `data`'s URLs a cross-host candidate of that key could touch.
pub fn exposure(data: &LabeledUrls) -> BTreeMap<String, usize> {
    let counts = data
        .par_iter()
        .fold(HashMap::new, |mut m: HashMap<Feature, usize>, l| {
            let mut keys = Vec::new();
            url_exposure(l.url, &mut keys);
            for k in keys {
                // One key for every suffix word (see [`Feature::Suffix`]).
                let k = match k {
                    Feature::Suffix(_) => Feature::Suffix(""),
                    k => k,
                };
                *m.entry(k).or_default() += 1;
            }
            m
        })
        .reduce(HashMap::new, |mut a, b| {
            for (k, v) in b {
                *a.entry(k).or_default() += v;
            }
            a
        });
    counts.into_iter().map(|(k, v)| (k.key(), v)).collect()
}

/// Greedy: accept rules best first unless one accepted rule sends a data URL elsewhere.
/// Cross-host rules are not claimed here: each drops one parameter or maps two spellings of a
/// convention to one, which composes with the host rules (they run after the host rules in every
/// pass); where a host rule uses the parameter, the host becomes an exception
/// ([`cross_host_after_hosts`]), and where a host rule undoes a convention, the idempotence
/// check makes the host an exception.
fn deconflict(
    rules: Vec<Rule>,
    cache: Vec<Option<RuleRewrites>>,
    data: &LabeledUrls,
) -> (Vec<Rule>, usize) {
    let mut pairs: Vec<(Rule, Option<RuleRewrites>)> = rules.into_iter().zip(cache).collect();
    pairs.sort_by(|(a, _), (b, _)| {
        a.is_global()
            .cmp(&b.is_global())
            .then_with(|| score(b).cmp(&score(a)))
            .then_with(|| specificity(b).cmp(&specificity(a)))
            .then_with(|| host_free(a).cmp(&host_free(b)))
            .then_with(|| a.id.cmp(&b.id))
    });
    let (rules, mut cache): (Vec<Rule>, Vec<_>) = pairs.into_iter().unzip();
    // The index is needed only for host rules whose rewrites validation did not keep.
    let uncached = rules
        .iter()
        .zip(&cache)
        .any(|(r, c)| !r.is_global() && c.is_none());
    let src = if uncached { data } else { &NO_URLS };
    let mut index = UrlIndex::new(src.len(), |i| src.url(i), false, &Default::default());
    index.index_params(&drop_heavy_hosts(&rules), |i| src.url(i));
    // Rules best first; a rule is kept unless a kept rule sends one of its URLs elsewhere.
    // Outputs are compared by a 64-bit hash, so memory stays one entry per claimed URL. Two
    // parameter drops do not conflict when neither needs what the other drops: each removes
    // its own parameter and the passes compose them (`?highlight=&p=5&t=1` is sent to
    // `?p=5&t=1` by one and `?highlight=&t=1` by the other, and to `?t=1` by both); a drop of
    // `p` kept where `t` is present and a drop of `t` kept where `p` is do conflict (the first
    // to fire disables the other), and so do a drop and a template or alias.
    let mut claimed: HashMap<u32, (u64, Option<usize>)> = HashMap::new();
    let mut keep = vec![false; rules.len()];
    let mut removed = 0;
    // Each rule's rewrites, computed in parallel a batch of rules at a time (most rules touch
    // a few URLs), then claimed in order.
    const BATCH: usize = 512;
    for (b, batch) in rules.chunks(BATCH).enumerate() {
        let known = &mut cache[b * BATCH..(b * BATCH + batch.len())];
        let outs: Vec<RuleRewrites> = batch
            .par_iter()
            .zip(known.par_iter_mut())
            .map(|(r, known)| {
                if r.is_global() {
                    return Vec::new();
                }
                if let Some(v) = known.take() {
                    return v;
                }
                index
                    .candidates(r)
                    .iter()
                    .filter_map(|i| {
                        let u = data.url(i as usize);
                        apply_rule(r, u)
                            .filter(|o| o != u)
                            .map(|o| Rewrite::new(i, crate::hash::fnv(&o)))
                    })
                    .collect()
            })
            .collect();
        for (j, (r, outs)) in batch.iter().zip(outs).enumerate() {
            let k = b * BATCH + j;
            if r.is_global() {
                keep[k] = true;
                continue;
            }
            if outs.iter().any(|w| {
                claimed.get(&w.url()).is_some_and(|&(c, by)| {
                    c != w.hash() && !by.is_some_and(|o| rules_compose(r, &rules[o]))
                })
            }) {
                removed += 1;
                continue;
            }
            keep[k] = true;
            for w in outs {
                // A rule kept beside a scheme-only alias takes the URL's claim over: the rules
                // after it must compose with it, not only with the alias.
                let e = claimed.entry(w.url()).or_insert((w.hash(), Some(k)));
                if e.1.is_some_and(|o| o != k && scheme_only(&rules[o])) {
                    *e = (w.hash(), Some(k));
                }
            }
        }
    }
    let kept = rules
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(r, _)| r)
        .collect();
    (kept, removed)
}

/// Whether two host rules that send one URL to different outputs compose in the passes instead
/// of conflicting: two drops where neither drops what the other needs ([`drops_compose`]), or
/// an alias that changes the scheme alone ([`scheme_only`]) and a rule that matches either
/// scheme and keeps scheme and host (a host template or drop): each rewrites its own part of
/// the URL, and the two orders give one output.
fn rules_compose(a: &Rule, b: &Rule) -> bool {
    // Matching either scheme too: a rule bound to one (an older rule file's) would not meet
    // the alias's output.
    let keeps_site = |r: &Rule| {
        r.source.scheme.is_none() && r.output.scheme.is_none() && r.output.host.is_none()
    };
    if a.kind == RuleKind::Drop && b.kind == RuleKind::Drop {
        return drops_compose(a, b);
    }
    (scheme_only(a) && keeps_site(b)) || (scheme_only(b) && keeps_site(a))
}

/// Whether `r` is an alias that changes the scheme alone (`http://a.org` → `https://a.org`).
fn scheme_only(r: &Rule) -> bool {
    r.kind == RuleKind::Alias
        && r.output.host.is_none()
        && r.output.path.is_none()
        && r.output.query.is_none()
}

/// Whether two host drop rules compose: neither drops a parameter the other needs present
/// (its context, the parameters its target copies).
fn drops_compose(a: &Rule, b: &Rule) -> bool {
    fn needs(r: &Rule, name: &str) -> bool {
        r.output.query.iter().flatten().any(|(n, _)| n == name)
    }
    fn dropped(r: &Rule) -> impl Iterator<Item = &String> {
        r.source
            .required
            .iter()
            .map(|(n, _)| n)
            .filter(move |n| !needs(r, n))
            .chain(&r.source.optional)
    }
    !dropped(a).any(|n| needs(b, n)) && !dropped(b).any(|n| needs(a, n))
}

/// Remove rules until normalize∘normalize = normalize on every data URL and rule output. Where a
/// cross-host rule takes part (it changes the URL or its first output), the URL's hosts become
/// exceptions of that rule instead: the host's own rules win.
fn make_idempotent(mut rules: Vec<Rule>, data: &LabeledUrls) -> (Vec<Rule>, usize, Trails) {
    let mut removed = 0;
    loop {
        let n = Normalizer::new(rules.clone(), None);
        // Bad URLs are rare: gathered aside (with their index, to keep the data's order).
        let found = std::sync::Mutex::new(Vec::new());
        let trails: Vec<TrailBlock> = (0..data.len().div_ceil(TRAIL_BLOCK))
            .into_par_iter()
            .map(|b| {
                let mut block = TrailBlock::default();
                for i in b * TRAIL_BLOCK..((b + 1) * TRAIL_BLOCK).min(data.len()) {
                    let url = data.url(i);
                    let (out, fired, fixed) = n.trace_fixed(url);
                    let canon = crate::hash::fnv(out.as_deref().unwrap_or(url));
                    if !fixed {
                        if let Some(b) = not_idempotent(&n, url, out, &fired) {
                            found.lock().expect("not poisoned").push((i, b));
                        }
                    }
                    block.push(canon, &fired, fixed);
                }
                block.fired.shrink_to_fit();
                block
            })
            .collect();
        let mut found = found.into_inner().expect("not poisoned");
        found.sort_unstable_by_key(|(i, _)| *i);
        let bad: Vec<Bad> = found.into_iter().map(|(_, b)| b).collect();
        if bad.is_empty() {
            return (rules, removed, Trails(trails));
        }
        let mut excepted = false;
        for (_, url, once) in &bad {
            for r in rules.iter_mut().filter(|r| r.is_global()) {
                for u in [url, once] {
                    if apply_rule(r, u).is_some_and(|o| o != *u) {
                        if let Some(p) = split_url(u) {
                            let d = domain(p.host);
                            if let Err(k) = r.except.binary_search(&d) {
                                r.except.insert(k, d);
                                excepted = true;
                            }
                        }
                    }
                }
            }
        }
        if excepted {
            continue;
        }
        let bad: HashSet<usize> = bad.into_iter().map(|(r, _, _)| r).collect();
        // Drop the worst offending rule, then check again.
        let worst = *bad
            .iter()
            .min_by(|&&a, &&b| {
                score(&rules[a])
                    .cmp(&score(&rules[b]))
                    .then_with(|| host_free(&rules[b]).cmp(&host_free(&rules[a])))
                    .then_with(|| rules[b].id.cmp(&rules[a].id))
            })
            .expect("non-empty");
        rules.remove(worst);
        removed += 1;
    }
}

/// How clusters are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// Whole clusters go to one side.
    Cluster,
    /// Each cluster's URLs are spread over the sides.
    Url,
    /// Whole registrable domains go to one side ([`crate::site::registrable_domain`]): rules are
    /// tested on sites never seen in learning. A cluster goes with the domain most of its URLs
    /// are on (ties: the smallest domain name).
    Host,
}

impl std::str::FromStr for SplitMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "cluster" => Ok(SplitMode::Cluster),
            "url" => Ok(SplitMode::Url),
            "host" => Ok(SplitMode::Host),
            _ => Err(format!("unknown split {s:?} (cluster, url, host)")),
        }
    }
}

impl std::fmt::Display for SplitMode {
    /// The name `--split` takes (`url`, `cluster`, `host`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SplitMode::Cluster => "cluster",
            SplitMode::Url => "url",
            SplitMode::Host => "host",
        })
    }
}

/// Which part (0, 1, 2 …) an item falls in, for cumulative `fractions`; deterministic in `seed`.
fn part(key: &str, seed: u64, fractions: &[f64]) -> usize {
    // FNV alone mixes the last bytes poorly into the high bits: finish with SplitMix64.
    let mut h = crate::hash::fnv(&format!("{seed}\u{0}{key}"));
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D049BB133111EB);
    h ^= h >> 31;
    let x = (h >> 11) as f64 / (1u64 << 53) as f64;
    let mut acc = 0.0;
    for (i, f) in fractions.iter().enumerate() {
        acc += f;
        if x < acc {
            return i;
        }
    }
    fractions.len() - 1
}

/// The registrable domain most of a cluster's URLs are on (ties: the smallest name; URLs that do
/// not split count as the domain `""`).
fn cluster_domain(c: &Cluster) -> String {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for u in &c.urls {
        let d = crate::site::domain_of_url(u).unwrap_or_default();
        *counts.entry(d).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .map(|(d, _)| d)
        .unwrap_or_default()
}

/// Split clusters into parts with the given fractions (e.g. `[0.6, 0.2, 0.2]`).
///
/// Each part keeps the original cluster ids, so labels stay comparable across parts.
///
/// ```
/// use dedust_learn::{split_clusters, Cluster, SplitMode};
/// let c: Vec<Cluster> = (0..100).map(|i| Cluster { id: format!("c{i}"), urls: vec![format!("http://h/{i}")] }).collect();
/// let a = split_clusters(&c, SplitMode::Cluster, &[0.5, 0.5], 7);
/// let b = split_clusters(&c, SplitMode::Cluster, &[0.5, 0.5], 7);
/// assert_eq!(a, b);
/// assert_eq!(a[0].len() + a[1].len(), 100);
/// ```
pub fn split_clusters(
    clusters: &[Cluster],
    mode: SplitMode,
    fractions: &[f64],
    seed: u64,
) -> Vec<Vec<Cluster>> {
    let mut parts: Vec<Vec<Cluster>> = vec![Vec::new(); fractions.len()];
    for c in clusters {
        match mode {
            SplitMode::Cluster => parts[part(&c.id, seed, fractions)].push(c.clone()),
            SplitMode::Host => {
                parts[part(&cluster_domain(c), seed, fractions)].push(c.clone());
            }
            SplitMode::Url => {
                let mut per: Vec<Vec<String>> = vec![Vec::new(); fractions.len()];
                for u in &c.urls {
                    per[part(&format!("{}\u{0}{u}", c.id), seed, fractions)].push(u.clone());
                }
                for (i, urls) in per.into_iter().enumerate() {
                    if !urls.is_empty() {
                        parts[i].push(Cluster {
                            id: c.id.clone(),
                            urls,
                        });
                    }
                }
            }
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{learn_candidates, LearnOptions};

    fn mk(id: &str, urls: &[&str]) -> Cluster {
        Cluster {
            id: id.into(),
            urls: urls.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The rules learned and selected from `clusters` with default options (cross-host
    /// evidence per site included).
    fn learned(clusters: &[Cluster]) -> Vec<Rule> {
        let (mut cands, _) = learn_candidates(clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(clusters, &BaseOptions::default());
        let st = rule_stats_and_sites(&mut cands, &data, &LabeledUrls::default());
        select(cands, &st, &data, &ValidateOptions::default()).0
    }

    #[test]
    fn a_host_template_wins_over_a_cross_host_template_that_splits_its_clusters() {
        use crate::rules::{CapType, Piece, SegOut, Source, Target, ValOut, ValPat};
        let seg = |s: &str| vec![Piece::Lit(s.into())];
        let int = || vec![Piece::Cap(CapType::Int)];
        // Cross-host: `/d/N/` → `/d/N/?id=N` (what two other sites showed).
        let g = Rule::new(
            RuleKind::Template,
            Source {
                scheme: None,
                host: "*".into(),
                path: Some(vec![seg("d"), int(), vec![]]),
                required: vec![],
                optional: vec![],
                rest: false,
            },
            Target {
                scheme: None,
                host: None,
                path: None,
                query: Some(vec![("id".into(), ValOut::Seg(1))]),
            },
        );
        // Host a.org: `/d/N/?s=…` → `/d/N` (its own template), and a session parameter `x`
        // dropped by a host drop first: `/d/N/?x=1` → `/d/N/`, which `g` then sends away.
        let h = Rule::new(
            RuleKind::Template,
            Source {
                scheme: Some("https".into()),
                host: "a.org".into(),
                path: Some(vec![seg("d"), int(), vec![]]),
                required: vec![],
                optional: vec!["s".into()],
                rest: false,
            },
            Target {
                scheme: None,
                host: None,
                path: Some(vec![SegOut::Copy(0), SegOut::Copy(1)]),
                query: Some(vec![]),
            },
        );
        let x = Rule::new(
            RuleKind::Drop,
            Source {
                scheme: None,
                host: "a.org".into(),
                path: None,
                required: vec![("x".into(), ValPat::Pieces(vec![Piece::Lit("1".into())]))],
                optional: vec![],
                rest: true,
            },
            Target {
                scheme: None,
                host: None,
                path: None,
                query: Some(vec![]),
            },
        );
        // A second session parameter `y`: `/d/N/?x=1&y=1` reaches the form `g` gives `/d/N/?x=1`,
        // which does not make the two vouch for `g` (neither is a form the host gives).
        let mut y = x.clone();
        y.source.required = vec![("y".into(), ValPat::Pieces(vec![Piece::Lit("1".into())]))];
        dedust_core::describe(&mut y);
        let lab = |url: &str, cluster: usize| Labeled {
            url: url.into(),
            cluster,
        };
        let mut data = vec![];
        for n in 1..=3 {
            data.push(lab(&format!("https://a.org/d/{n}/?s=9f8e7d{n}"), n));
            data.push(lab(&format!("https://a.org/d/{n}/?x=1"), n));
            data.push(lab(&format!("https://a.org/d/{n}/?x=1&y=1"), n));
            // b.org has no rule of its own: `g` merges its pages.
            data.push(lab(&format!("https://b.org/d/{n}/"), 10 + n));
            data.push(lab(&format!("https://b.org/d/{n}/?id={n}"), 10 + n));
        }
        let data: LabeledUrls = data.into_iter().collect();
        let (kept, _, _) = finalize(vec![g.clone(), h, x, y], &data);
        let g = kept.iter().find(|r| r.id == g.id).expect("g kept");
        assert_eq!(g.except, vec!["a.org".to_string()]);
        let n = Normalizer::new(kept.clone(), None);
        let key = |u: &str| n.apply_rules(u.to_string()).url;
        assert_eq!(
            key("https://a.org/d/1/?x=1"),
            key("https://a.org/d/1/?s=9f8e7d1")
        );
        assert_eq!(
            key("https://a.org/d/1/?x=1&y=1"),
            key("https://a.org/d/1/?s=9f8e7d1")
        );
        assert_eq!(key("https://b.org/d/1/"), "https://b.org/d/1/?id=1");
    }

    #[test]
    fn host_drops_and_a_scheme_alias_compose_unless_one_needs_what_the_other_changes() {
        use crate::rules::{CapType, Piece, Source, Target, ValOut, ValPat};
        // Drop `name` where the `context` parameters are present (and kept).
        let drop = |name: &str, context: &[&str]| {
            let mut required: Vec<(String, ValPat)> = context
                .iter()
                .map(|c| (c.to_string(), ValPat::Any))
                .chain([(
                    name.to_string(),
                    ValPat::Pieces(vec![Piece::Cap(CapType::Int)]),
                )])
                .collect();
            required.sort();
            Rule::new(
                RuleKind::Drop,
                Source {
                    scheme: None,
                    host: "a.org".into(),
                    path: None,
                    required,
                    optional: vec![],
                    rest: true,
                },
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(
                        context
                            .iter()
                            .map(|c| (c.to_string(), ValOut::Copy))
                            .collect(),
                    ),
                },
            )
        };
        // URLs of one cluster.
        let one = |urls: &[&str]| -> LabeledUrls {
            urls.iter()
                .map(|u| Labeled {
                    url: u.to_string(),
                    cluster: 0,
                })
                .collect()
        };
        let data = one(&["https://a.org/s?h=1&p=5&t=1", "https://a.org/s?t=1"]);
        // `h` and `p` dropped where `t` is: both kept, composed to `?t=1`.
        let (kept, conflicts, _) = finalize(vec![drop("h", &["t"]), drop("p", &["t"])], &data);
        assert_eq!((kept.len(), conflicts), (2, 0));
        let n = Normalizer::new(kept, None);
        assert_eq!(
            n.apply_rules(data.url(0).to_string()).url,
            "https://a.org/s?t=1"
        );
        // `p` dropped where `t` is, `t` dropped where `p` is: whichever fires first disables the
        // other, so they conflict and one goes.
        let (kept, conflicts, _) = finalize(vec![drop("p", &["t"]), drop("t", &["p"])], &data);
        assert_eq!((kept.len(), conflicts), (1, 1));
        // An alias that changes the scheme alone and a rule keeping scheme and host (a drop
        // matching either scheme) rewrite different parts of `http://a.org/s?h=1&p=5&t=1`:
        // both kept, composed to one key. An alias that also changes the host does conflict.
        let alias = |to_host: Option<&str>| {
            Rule::new(
                RuleKind::Alias,
                Source {
                    scheme: Some("http".into()),
                    host: "a.org".into(),
                    path: None,
                    required: vec![],
                    optional: vec![],
                    rest: true,
                },
                Target {
                    scheme: Some("https".into()),
                    host: to_host.map(String::from),
                    path: None,
                    query: None,
                },
            )
        };
        let data = one(&["http://a.org/s?h=1&p=5&t=1", "https://a.org/s?t=1"]);
        let (kept, conflicts, _) = finalize(
            vec![alias(None), drop("h", &["t"]), drop("p", &["t"])],
            &data,
        );
        assert_eq!((kept.len(), conflicts), (3, 0));
        let n = Normalizer::new(kept, None);
        assert_eq!(
            n.apply_rules(data.url(0).to_string()).url,
            "https://a.org/s?t=1"
        );
        let (kept, conflicts, _) = finalize(vec![alias(Some("b.a.org")), drop("h", &["t"])], &data);
        assert_eq!((kept.len(), conflicts), (1, 1));
        // Rules kept beside the alias still conflict with each other: `p` dropped where `t` is
        // and `t` where `p` is (each disables the other) keep one, also when the alias (the
        // better rule) claims the URL first.
        let mut first = alias(None);
        first.urls = 100;
        let (kept, conflicts, _) =
            finalize(vec![first, drop("p", &["t"]), drop("t", &["p"])], &data);
        assert_eq!((kept.len(), conflicts), (2, 1));
    }

    #[test]
    fn few_values_never_collapse_to_a_fixed_page() {
        // A redirect map: 2–6 old ids answer with one page. Validation alone sees no false
        // positive, but a rule `/a/{int}` → `/a/191842` would send every unseen id there.
        for n in 2..=6 {
            let mut urls: Vec<String> = (0..n)
                .map(|i| format!("https://r.org/a/{}", 1000 + i))
                .collect();
            urls.push("https://r.org/a/191842".into());
            let mut clusters = vec![Cluster {
                id: "map".into(),
                urls,
            }];
            clusters
                .extend((0..20).map(|i| mk(&format!("s{i}"), &[&format!("https://r.org/b/{i}")])));
            let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
            assert!(cands.iter().any(is_collapse), "{n}: the candidate exists");
            let (data, _) = labeled(&clusters, &BaseOptions::default());
            let st = rule_stats(&cands, &data, &LabeledUrls::default());
            let (kept, _) = select(cands, &st, &data, &ValidateOptions::default());
            assert!(!kept.iter().any(is_collapse), "{n}: {kept:#?}");
        }
        // With enough distinct values (a login wall) the family is kept.
        let mut urls: Vec<String> = (0..12)
            .map(|i| format!("https://r.org/m.php?u={}", 50 + i))
            .collect();
        urls.push("https://r.org/login.php".into());
        let clusters = vec![Cluster {
            id: "wall".into(),
            urls,
        }];
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats(&cands, &data, &LabeledUrls::default());
        let (kept, _) = select(cands, &st, &data, &ValidateOptions::default());
        assert!(kept.iter().any(is_collapse), "{kept:#?}");
    }

    #[test]
    fn wall_family_vouches_for_a_noisy_member() {
        // One login wall answers three id patterns; a few `n.php?p=` ids answer another page
        // (closed threads, each its own page). Alone, `n.php?p={int}` → wall is 3 wrong in 15 (0.2 > 0.15); in a
        // family that merged 40 more URLs without a mistake it is judged (3 + 10·3/55) / 25.
        let mut urls: Vec<String> = (0..20)
            .map(|i| format!("https://r.org/m.php?u={}", 50 + i))
            .chain((0..20).map(|i| format!("https://r.org/p.php?do=pm&u={}", 90 + i)))
            .chain((0..12).map(|i| format!("https://r.org/n.php?p={}", 300 + i)))
            .collect();
        urls.push("https://r.org/login.php".into());
        let mut clusters = vec![Cluster {
            id: "wall".into(),
            urls,
        }];
        clusters.extend((7..10).map(|i| {
            mk(
                &format!("closed{i}"),
                &[&format!("https://r.org/n.php?p={i}")],
            )
        }));
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats(&cands, &data, &LabeledUrls::default());
        let noisy = |kept: &[Rule]| {
            kept.iter().any(|r| {
                is_collapse(r) && r.pattern.contains("n.php") && r.target.contains("login")
            })
        };
        let (kept, _) = select(cands.clone(), &st, &data, &ValidateOptions::default());
        assert!(noisy(&kept), "{kept:#?}");
        let raw = ValidateOptions {
            family_weight: 0.0,
            ..Default::default()
        };
        let (kept, _) = select(cands, &st, &data, &raw);
        assert!(!noisy(&kept), "{kept:#?}");
        assert!(kept
            .iter()
            .any(|r| is_collapse(r) && r.pattern.contains("m.php")));
    }

    #[test]
    fn attested_hosts_have_the_output_among_their_urls() {
        // Learned where `sid` goes: a.org and b.org.
        let mut clusters = Vec::new();
        for h in ["a.org", "b.org"] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/p{i}"),
                        &format!("http://{h}/p{i}?sid={:016x}", 0xabc0 + i),
                    ],
                ));
            }
        }
        let (mut cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        // Validated where d.org has the form without `sid`; e.org only has two session
        // variants of one page (they merge, but nobody saw the page without `sid`).
        let l = |u: &str, c| Labeled {
            url: u.into(),
            cluster: c,
        };
        let data = vec![
            l("http://d.org/q", 0),
            l("http://d.org/q?sid=0123456789abcdef", 0),
            l("http://e.org/q?sid=0123456789abcdef", 1),
            l("http://e.org/q?sid=fedcba9876543210", 1),
        ];
        let data: LabeledUrls = data.into_iter().collect();
        let st = rule_stats_and_sites(&mut cands, &data, &LabeledUrls::default());
        let i = cands
            .iter()
            .position(|r| r.pattern == "*://*{/path}?sid={hex:sid}&{rest}")
            .expect("typed cross-host drop");
        assert_eq!(st[i], (3, 0));
        assert_eq!(cands[i].sites, Some(2));
        assert_eq!(cands[i].attested, vec!["d.org".to_string()]);
        // An exception added later takes the host out.
        let mut r = cands[i].clone();
        r.except = vec!["d.org".into()];
        prune_attested(&mut r);
        assert!(r.attested.is_empty());
    }

    #[test]
    fn default_documents_pool_their_sites_as_one_mechanism() {
        // `index.php` is the directory on a.org and b.org; `index.html` on c.org only, and
        // `home.html` (not a default-document name) on d.org only.
        let mut clusters = Vec::new();
        for (h, doc) in [
            ("a.org", "index.php"),
            ("b.org", "index.php"),
            ("c.org", "index.html"),
            ("d.org", "home.html"),
        ] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/d{i}/"),
                        &format!("http://{h}/d{i}/{doc}"),
                    ],
                ));
            }
        }
        let kept_conventions = |clusters: &[Cluster]| -> Vec<String> {
            learned(clusters)
                .iter()
                .filter(|r| r.kind == RuleKind::Convention)
                .map(|r| r.pattern.clone())
                .collect()
        };
        let kept = kept_conventions(&clusters);
        assert!(
            kept.contains(&"*://*{/path}/index.php{?query}".to_string()),
            "{kept:?}"
        );
        // One site of its own, three with its family.
        assert!(
            kept.contains(&"*://*{/path}/index.html{?query}".to_string()),
            "{kept:?}"
        );
        assert!(!kept.iter().any(|p| p.contains("home.html")), "{kept:?}");
        // Without the family's other sites, one site is not enough.
        let alone: Vec<Cluster> = clusters
            .into_iter()
            .filter(|c| c.id.starts_with("c.org"))
            .collect();
        assert_eq!(kept_conventions(&alone), Vec::<String>::new());
    }

    #[test]
    fn case_insensitive_paths_are_learned_across_sites_by_extension() {
        // IIS sites answer `/News/Item1.aspx` and `/news/item1.aspx` alike; on d.org (a server
        // that minds case) the two are different pages.
        let mut clusters = Vec::new();
        for h in ["a.org", "b.net", "c.com"] {
            for i in 0..4 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/News/Item{i}.aspx?id={i}"),
                        &format!("http://{h}/news/item{i}.aspx?id={i}"),
                    ],
                ));
            }
        }
        clusters.push(mk("d1", &["http://d.org/Docs/Page1.aspx"]));
        clusters.push(mk("d2", &["http://d.org/docs/page1.aspx"]));
        let kept = learned(&clusters);
        let g = kept
            .iter()
            .find(|r| r.pattern == "*://*{/Path}.aspx{?query}")
            .expect("kept");
        assert_eq!((g.sites, g.except.clone()), (Some(3), vec!["d.org".into()]));
        let n = Normalizer::new(kept.clone(), None);
        let key = |u: &str| n.apply_rules(u.to_string()).url;
        // A site never seen: one key for both spellings; the query keeps its case.
        assert_eq!(
            key("http://new.example/Shop/Cart.aspx?Q=A"),
            "http://new.example/shop/cart.aspx?Q=A"
        );
        assert_eq!(
            key("http://d.org/Docs/Page2.aspx"),
            "http://d.org/Docs/Page2.aspx"
        );
        // Another extension is not the same server.
        assert_eq!(
            key("http://new.example/Shop/Cart.php"),
            "http://new.example/Shop/Cart.php"
        );
    }

    #[test]
    fn static_files_ignore_their_query_across_sites_by_file_type() {
        // A script is the same file whatever its cache buster on a.org, b.net and c.com; on
        // d.org a script generator reads its query (different files).
        let mut clusters = Vec::new();
        for h in ["a.org", "b.net", "c.com"] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/js/app{i}.js"),
                        &format!("http://{h}/js/app{i}.js?v={}", i + 7),
                    ],
                ));
            }
        }
        clusters.push(mk("d1", &["http://d.org/gen.js?lang=en"]));
        clusters.push(mk("d2", &["http://d.org/gen.js?lang=fr"]));
        let kept = learned(&clusters);
        let g = kept
            .iter()
            .find(|r| r.pattern == "*://*{/path}.js?{query}")
            .expect("kept");
        assert_eq!((g.sites, g.except.clone()), (Some(3), vec!["d.org".into()]));
        let n = Normalizer::new(kept.clone(), None);
        let key = |u: &str| n.apply_rules(u.to_string()).url;
        // A site never seen: one key for every query of its scripts, not of its pages.
        assert_eq!(
            key("http://new.example/a/b.js?ver=4.1"),
            "http://new.example/a/b.js"
        );
        assert_eq!(
            key("http://new.example/a/b.php?ver=4.1"),
            "http://new.example/a/b.php?ver=4.1"
        );
        assert_eq!(
            key("http://d.org/gen.js?lang=de"),
            "http://d.org/gen.js?lang=de"
        );
    }

    #[test]
    fn a_files_query_is_no_evidence_about_pages() {
        // Images with cache busters on three sites: `v` is noise on those files, which says
        // nothing of `watch?v=` on a site never seen.
        let mut clusters = Vec::new();
        for h in ["a.org", "b.net", "c.com"] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/img/logo{i}.png"),
                        &format!("http://{h}/img/logo{i}.png?v={}", 1578219993 + i),
                    ],
                ));
            }
        }
        let kept = learned(&clusters);
        let n = Normalizer::new(kept.clone(), None);
        let key = |u: &str| n.apply_rules(u.to_string()).url;
        assert_eq!(
            key("http://new.example/watch?v=dQw4w9WgXcQ"),
            "http://new.example/watch?v=dQw4w9WgXcQ"
        );
        assert!(
            kept.iter().all(|r| r.scope != "*"),
            "no cross-host rule from files' queries: {:?}",
            kept.iter().map(|r| &r.pattern).collect::<Vec<_>>()
        );
    }

    #[test]
    fn cross_host_rule_gets_exceptions_and_needs_two_sites() {
        // `ref` is tracking on a.org and b.org and content on c.org.
        let mut clusters = Vec::new();
        for h in ["a.org", "b.org"] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}/p/{i}"),
                        &format!("http://{h}/p/{i}?ref=home"),
                    ],
                ));
            }
        }
        clusters.push(mk("c1", &["http://c.org/q"]));
        clusters.push(mk("c2", &["http://c.org/q?ref=home"]));
        let (mut cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats_and_sites(&mut cands, &data, &LabeledUrls::default());
        let (kept, _) = select(cands.clone(), &st, &data, &ValidateOptions::default());
        let g = kept
            .iter()
            .find(|r| r.pattern == "*://*{/path}?ref=home&{rest}")
            .expect("kept");
        assert_eq!(
            (g.sites, g.except.clone()),
            (Some(2), vec!["c.org".to_string()])
        );
        let n = Normalizer::new(kept.clone(), None);
        assert_eq!(
            n.apply_rules("http://c.org/q?ref=home".into()).url,
            "http://c.org/q?ref=home"
        );
        assert_eq!(
            n.apply_rules("http://new.net/z?ref=home".into()).url,
            "http://new.net/z"
        );
        // Seen on one site only: not enough for the cross-host tier.
        let one: Vec<Cluster> = clusters
            .into_iter()
            .filter(|c| c.id.starts_with("a.org"))
            .collect();
        let (mut cands, _) = learn_candidates(&one, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&one, &BaseOptions::default());
        let st = rule_stats_and_sites(&mut cands, &data, &LabeledUrls::default());
        let (kept, _) = select(cands, &st, &data, &ValidateOptions::default());
        assert!(!kept.iter().any(|r| r.is_global()), "{kept:#?}");
    }

    #[test]
    fn trap_rule_is_rejected() {
        // `p` without `t` identifies a post: a rule dropping `p` merges different content.
        let clusters = vec![
            mk(
                "a",
                &["https://f.org/s.php?p=1", "https://f.org/s.php?p=1&x=1"],
            ),
            mk(
                "b",
                &["https://f.org/s.php?p=2", "https://f.org/s.php?p=2&x=1"],
            ),
            mk(
                "c",
                &[
                    "https://f.org/m.php?u=1",
                    "https://f.org/m.php?u=2",
                    "https://f.org/m.php?u=4",
                ],
            ),
            mk("d", &["https://f.org/m.php?u=3"]),
        ];
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats(&cands, &data, &LabeledUrls::default());
        let (kept, rep) = select(
            cands,
            &st,
            &data,
            &ValidateOptions {
                min_support: 1,
                max_fpr: 0.0,
                ..Default::default()
            },
        );
        // Dropping x is kept (one rule for it: the template or the drop, whichever the other
        // leaves redundant); `m.php?u={int}` → fixed target merges cluster d: rejected.
        let n = Normalizer::new(kept.clone(), None);
        assert_eq!(
            n.apply_rules("https://f.org/s.php?p=2&x=1".into()).url,
            "https://f.org/s.php?p=2",
            "{kept:#?}"
        );
        assert!(
            !kept.iter().any(|r| r.pattern.contains("m.php")),
            "{kept:#?}"
        );
        assert!(rep.high_fpr >= 1);
    }

    #[test]
    fn session_drop_generalizes_to_unseen_url_families() {
        // One cluster per URL family: only the context-free drop rule has support 2.
        let clusters = vec![
            mk(
                "a",
                &[
                    "https://f.org/a.php?x=1",
                    "https://f.org/a.php?s=9f8e7d6c&x=1",
                ],
            ),
            mk(
                "b",
                &[
                    "https://f.org/b.php?y=2",
                    "https://f.org/b.php?s=0a1b2c3d&y=2",
                ],
            ),
            mk("c", &["https://f.org/c.php?z=3"]),
        ];
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats(&cands, &data, &LabeledUrls::default());
        let (kept, _) = select(cands, &st, &data, &ValidateOptions::default());
        let n = Normalizer::new(kept, None);
        let out = n.apply_rules("https://f.org/c.php?s=ffee0011&z=3".into());
        assert_eq!(out.url, "https://f.org/c.php?z=3");
    }

    /// Learn (validated, defaults) on `clusters`: the key of a URL under the learned rules
    /// (base layer on), and the rules' patterns.
    /// Clusters `{h}{i}` for each site `h` and `i` in `0..n`, of the URLs `urls(h, i)`.
    fn on_sites(
        sites: &[&str],
        n: usize,
        urls: impl Fn(&str, usize) -> Vec<String>,
    ) -> Vec<Cluster> {
        let mut out = Vec::new();
        for h in sites {
            for i in 0..n {
                out.push(Cluster {
                    id: format!("{h}{i}"),
                    urls: urls(h, i),
                });
            }
        }
        out
    }

    fn learned_keys(clusters: &[Cluster]) -> (impl Fn(&str) -> String, Vec<String>) {
        let cfg = crate::LearnConfig {
            validate: Some(Default::default()),
            ..Default::default()
        };
        let out = crate::learn(clusters, &cfg, &|_, _, _| {});
        let rules = out.file.rules.iter().map(|r| r.pattern.clone()).collect();
        let n = crate::Normalizer::new(out.file.rules, Some(BaseOptions::default()));
        let key = move |u: &str| n.normalize(u).map(|x| x.url).unwrap_or_default();
        (key, rules)
    }

    #[test]
    fn login_walls_seen_on_two_sites_merge_member_pages_of_a_site_never_seen() {
        // Four sites answer every `member.php?u=N` with one login wall; on c.org member pages
        // differ (a logged-in crawl). On z.net, never seen, member pages share one key; c.org
        // is excepted and its member pages stay apart.
        let mut clusters = Vec::new();
        for h in ["a", "b", "d", "e"] {
            let urls: Vec<String> = (1..8)
                .map(|i| format!("http://{h}.org/member.php?u={i}"))
                .collect();
            clusters.push(Cluster {
                id: format!("{h}-wall"),
                urls,
            });
        }
        for i in 1..4 {
            clusters.push(mk(
                &format!("c{i}"),
                &[&format!("http://c.org/member.php?u={i}")],
            ));
        }
        let (key, rules) = learned_keys(&clusters);
        assert_eq!(
            key("http://z.net/member.php?u=3"),
            key("http://z.net/member.php?u=41"),
            "{rules:?}"
        );
        assert_ne!(
            key("http://c.org/member.php?u=3"),
            key("http://c.org/member.php?u=4"),
            "{rules:?}"
        );
        // Only member pages: other paths keep their `u`.
        assert_ne!(key("http://z.net/p.php?u=3"), key("http://z.net/p.php?u=4"));
    }

    /// `--priors`: `http` ≡ `https`, `www.` and the trailing slash are dedup keys on a host
    /// never seen even when the crawl is one site that shows none of them; data that shows them
    /// merging different content rejects them (or excepts the one site where they do); off,
    /// nothing is kept without evidence.
    #[test]
    fn priors_hold_without_evidence_and_fall_to_refuting_data() {
        use crate::rules::Convention as C;
        // One site, a session id only: nothing about the conventions.
        let one = on_sites(&["a"], 4, |h, i| {
            vec![
                format!("http://{h}.org/t?t={i}"),
                format!("http://{h}.org/t?t={i}&sid=9f{i}e7d6c5"),
            ]
        });
        // `www.h/x` and `h/x` are different pages on three sites (two apps on one domain).
        let refuted = on_sites(&["a", "b", "c"], 4, |h, i| {
            vec![format!("http://{h}.org/p/{i}")]
        })
        .into_iter()
        .chain(
            on_sites(&["a", "b", "c"], 4, |h, i| {
                vec![format!("http://www.{h}.org/p/{i}")]
            })
            .into_iter()
            .map(|mut c| {
                c.id += "w";
                c
            }),
        )
        .collect::<Vec<_>>();
        // Nine sites where `www.` is the same page, one (`j`) where it is not.
        let mut one_off = on_sites(&["a", "b", "c", "d", "e", "f", "g", "h", "i"], 2, |h, i| {
            vec![
                format!("http://{h}.org/p/{i}"),
                format!("http://www.{h}.org/p/{i}"),
            ]
        });
        one_off.extend(on_sites(&["j"], 2, |h, i| {
            vec![format!("http://{h}.org/p/{i}")]
        }));
        one_off.extend(on_sites(&["jw"], 2, |_, i| {
            vec![format!("http://www.j.org/p/{i}")]
        }));
        let www = C::StripWww;
        // (clusters, priors, convention, kept, its exceptions)
        type Case<'a> = (&'a [Cluster], bool, C, bool, &'a [&'a str]);
        let cases: Vec<Case> = vec![
            (&one, true, www.clone(), true, &[]),
            // Its session-id rule matches either scheme: the `https` prior needs no exception.
            (&one, true, C::Https, true, &[]),
            (&one, true, C::TrailingSlash, true, &[]),
            (&one, false, www.clone(), false, &[]),
            (&one, false, C::Https, false, &[]),
            (&refuted, true, www.clone(), false, &[]),
            (&refuted, false, www.clone(), false, &[]),
            (&one_off, true, www.clone(), true, &["j.org"]),
            (&one_off, false, www.clone(), true, &["j.org"]),
        ];
        for (clusters, priors, conv, kept, except) in cases {
            let cfg = crate::LearnConfig {
                validate: Some(ValidateOptions {
                    priors,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let out = crate::learn(clusters, &cfg, &|_, _, _| {});
            let rule = out
                .file
                .rules
                .iter()
                .find(|r| r.is_global() && r.convention.as_ref() == Some(&conv));
            let what = format!("{conv:?} priors={priors} on {} clusters", clusters.len());
            assert_eq!(rule.is_some(), kept, "{what}");
            if let Some(r) = rule {
                assert_eq!(r.except, except, "{what}");
            }
            assert_eq!(out.file.validation.unwrap().priors, priors, "{what}");
        }
        // What the one-site crawl's priors do on a host never seen (its `sid` drop stays on
        // its own host: one site is no cross-host evidence).
        let cfg = crate::LearnConfig {
            validate: Some(ValidateOptions {
                priors: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        let n = crate::Normalizer::new(
            crate::learn(&one, &cfg, &|_, _, _| {}).file.rules,
            Some(BaseOptions::default()),
        );
        let key = |u: &str| n.normalize(u).map(|x| x.url).unwrap_or_default();
        assert_eq!(
            key("http://www.z.net/doc/?sid=77aa"),
            "https://z.net/doc?sid=77aa"
        );
        // The host's own `sid` drop matches whichever scheme the prior leaves.
        assert_eq!(key("http://a.org/t?sid=77aa&t=1"), "https://a.org/t?t=1");
        assert_eq!(
            key("http://www.a.org/t/?sid=77aa&t=1"),
            "https://a.org/t?t=1"
        );
        assert_eq!(key("https://a.org/t?t=1&sid=9"), "https://a.org/t?t=1");
        assert_eq!(key("https://z.net/"), "https://z.net/");
        // Two `http`-only sites (whose `www.` is learned from them): their session-id rules
        // match either scheme, so a `www.` spelling, which the `https` prior and the `www.`
        // convention rewrite in one pass, still meets the host's rule and shares the bare URL's
        // key.
        let http_only = on_sites(&["a", "b"], 10, |h, i| {
            let sess = if h == "a" { "sid" } else { "sess" };
            if i < 5 {
                vec![
                    format!("http://{h}.org/t?t={i}"),
                    format!("http://{h}.org/t?t={i}&{sess}=9f{i}e7d6c5"),
                ]
            } else {
                vec![
                    format!("http://{h}.org/p/{i}"),
                    format!("http://www.{h}.org/p/{i}"),
                ]
            }
        });
        let out = crate::learn(&http_only, &cfg, &|_, _, _| {});
        let https = out
            .file
            .rules
            .iter()
            .find(|r| r.convention == Some(C::Https))
            .expect("the https prior is kept");
        let n = crate::Normalizer::new(out.file.rules.clone(), Some(BaseOptions::default()));
        let key = |u: &str| n.normalize(u).map(|x| x.url).unwrap_or_default();
        assert!(https.except.is_empty(), "{:?}", https.except);
        assert!(
            out.file
                .rules
                .iter()
                .any(|r| r.scope == "a.org" && r.source.scheme.is_none()),
            "{:#?}",
            out.file.rules
        );
        assert_eq!(
            key("http://www.a.org/t?t=7&sid=abcdef12"),
            key("http://a.org/t?t=7")
        );
        assert_eq!(key("http://www.z.net/x"), "https://z.net/x");
    }

    #[test]
    fn java_session_path_parameters_seen_on_two_sites_merge_on_a_site_never_seen() {
        // Servlet containers write the session into the path (`item.do;jsessionid=…`): seen on
        // three sites, a convention for every host; a `;v=` that names versions stays.
        let mut clusters = on_sites(&["a", "b", "c"], 3, |h, i| {
            vec![
                format!("http://{h}.org/shop/item.do?id={i}"),
                format!("http://{h}.org/shop/item.do;jsessionid=9F{i}C0A1{h}77E2?id={i}"),
            ]
        });
        for h in ["a", "b", "c"] {
            clusters.push(mk(&format!("{h}v1"), &[&format!("http://{h}.org/doc;v=1")]));
            clusters.push(mk(&format!("{h}v2"), &[&format!("http://{h}.org/doc;v=2")]));
        }
        let (key, rules) = learned_keys(&clusters);
        assert!(
            rules.contains(&"*://*{/path};jsessionid={value}{?query}".to_string()),
            "{rules:?}"
        );
        assert_eq!(
            key("http://z.net/portal/view.do;jsessionid=0A1B2C3D?x=1"),
            "http://z.net/portal/view.do?x=1"
        );
        assert_ne!(key("http://z.net/doc;v=1"), key("http://z.net/doc;v=2"));
    }

    #[test]
    fn mobile_hosts_seen_on_three_sites_merge_on_a_site_never_seen() {
        // `m.h/x` declares `www.h/x` on three sites: neither `m.` → `` nor `www.` → `` merges
        // them alone; judged together both are kept, and an unseen site's mobile and desktop
        // pages share one key. Other labels (`mail.`) are not mobile hosts.
        let clusters = on_sites(&["a", "b", "c"], 3, |h, i| {
            vec![
                format!("https://www.{h}.org/news/{i}-story"),
                format!("https://m.{h}.org/news/{i}-story"),
            ]
        });
        let (key, rules) = learned_keys(&clusters);
        assert!(
            rules.contains(&"*://m.*{/path}{?query}".to_string()),
            "{rules:?}"
        );
        assert_eq!(
            key("https://m.z.net/a/1?x=1"),
            key("https://www.z.net/a/1?x=1")
        );
        assert_eq!(key("https://m.z.net/a/1"), "https://z.net/a/1");
        assert_eq!(key("https://mail.z.net/a"), "https://mail.z.net/a");
        assert_eq!(key("https://m.co.uk/"), "https://m.co.uk/");
    }

    #[test]
    fn a_drop_gets_no_credit_for_merges_its_world_makes_anyway() {
        // `lang=en` is seen dropped once. Elsewhere, URLs with `lang=en` merge only because
        // their session ids go: the `sid` drop's merges, not `lang`'s, which must not ride
        // along into a rule for every host.
        let mut clusters = vec![mk("a0", &["http://a.org/doc", "http://a.org/doc?lang=en"])];
        for h in ["b", "c", "d"] {
            for i in 0..3 {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}.org/q{i}?lang=en&sid=0f9e8d7c6b5a{h}{i}1"),
                        &format!("http://{h}.org/q{i}?lang=en&sid=1a2b3c4d5e6f{h}{i}2"),
                        &format!("http://{h}.org/q{i}?lang=en"),
                    ],
                ));
                clusters.push(mk(
                    &format!("{h}{i}-www"),
                    &[
                        &format!("http://www.{h}.org/p{i}?lang=en"),
                        &format!("http://{h}.org/p{i}?lang=en"),
                    ],
                ));
            }
        }
        let (key, rules) = learned_keys(&clusters);
        // No cross-host `lang` drop (a.org may keep its own literal tag: one merge is enough
        // for a host rule dropping one literal that is no number).
        assert!(
            !rules
                .iter()
                .any(|r| r.contains("lang=") && r.starts_with("*://*")),
            "{rules:?}"
        );
        assert_ne!(
            key("http://z.net/doc?lang=en"),
            "http://z.net/doc",
            "{rules:?}"
        );
        // The session drop itself is kept and merges on a host never seen.
        assert_eq!(
            key("http://z.net/q?lang=en&sid=00aa11bb22cc33dd"),
            key("http://z.net/q?lang=en")
        );
    }

    #[test]
    fn images_group_urls_by_result_and_compare_as_maps() {
        // (URL, result) pairs, in any order, as World::new's chunks give them.
        let hash = ImageHash::new();
        let rows = |pairs: &[(u32, &str)]| -> Vec<[u32; 4]> {
            pairs.iter().map(|&(u, o)| hash.row(o, u)).collect()
        };
        let pairs = [
            (12, "h/a"),
            (1, "h/a"),
            (2, "h/b"),
            (4, "h/a"),
            (7, ""),
            (9, "h/b"),
        ];
        let a = Images::new(rows(&pairs), 0);
        let cases: &[(&str, &[u32])] = &[
            ("h/a", &[1, 4, 12]),
            ("h/b", &[2, 9]),
            ("", &[7]),
            ("h/", &[]),
            ("h/ab", &[]),
        ];
        // Whatever the rows a bucket (all in one bucket at 3), by text or by key.
        for spread in 0..4 {
            let x = Images::new(rows(&pairs), spread);
            for &(o, want) in cases {
                assert_eq!(x.get(&hash, o).collect::<Vec<_>>(), want, "{o:?} {spread}");
                let by_key: Vec<u32> = x.get_key(hash.key(o)).collect();
                assert_eq!(by_key, want, "{o:?} {spread}");
            }
        }
        // The same map from another order is equal; another URL or result is not.
        let same = Images::new(
            rows(&[
                (1, "h/a"),
                (2, "h/b"),
                (4, "h/a"),
                (7, ""),
                (9, "h/b"),
                (12, "h/a"),
            ]),
            0,
        );
        let seeds = Seeds::new();
        let print = |x: &Images| x.fingerprint(&seeds);
        assert_eq!(print(&a), print(&same));
        let moved = Images::new(
            rows(&[
                (1, "h/a"),
                (2, "h/b"),
                (4, "h/a"),
                (7, ""),
                (9, "h/a"),
                (12, "h/a"),
            ]),
            0,
        );
        assert_ne!(print(&a), print(&moved));
        assert_eq!(
            print(&Images::new(Vec::new(), 0)),
            print(&Images::default())
        );
        assert_eq!(Images::default().get(&hash, "").count(), 0);
        // Other seeds, other rows: a map is compared only with maps of the same seeds.
        assert_ne!(ImageHash::new().row("h/a", 1), hash.row("h/a", 1));
        // A host's keys start alike (its rows lie together); the host ends at `/`, `?` or `#`.
        let top = |u: &str| hash.key(u)[0] >> 16;
        for u in [
            "http://a.org",
            "http://a.org/x",
            "https://a.org?q",
            "ftp://a.org#f",
        ] {
            assert_eq!(top(u), top("http://a.org/y/z"), "{u}");
        }
        assert_eq!(top("no scheme/a"), top("other"));
    }

    #[test]
    fn a_urls_copies_are_found_by_text_and_compared_by_text() {
        // "h/a" sits in two clusters (indices 0 and 3); the reference part follows.
        let part = |v: &[(&str, usize)]| -> LabeledUrls {
            v.iter()
                .map(|&(u, c)| Labeled {
                    url: u.into(),
                    cluster: c,
                })
                .collect()
        };
        let validation = part(&[
            ("http://h/a", 1),
            ("http://h/b", 1),
            ("http://h/c", 2),
            ("http://h/a", 2),
        ]);
        let reference = part(&[("http://h/b", 5), ("http://h/d", 6)]);
        let ctx = MergeContext::new(&validation, &reference, &[]);
        let exact = |u: &str| ctx.exact(u).collect::<Vec<_>>();
        assert_eq!(exact("http://h/a"), [0, 3]);
        assert_eq!(exact("http://h/b"), [1, 4]);
        assert_eq!(exact("http://h/d"), [5]);
        assert_eq!(exact("http://h/"), Vec::<u32>::new());
        let flags = [COPIED | LATER, COPIED | LATER, 0, COPIED, COPIED, 0];
        assert_eq!(ctx.copies, flags);
        let cases: &[(&[u32], bool)] = &[
            (&[], false),
            (&[0], false),
            (&[0, 3], false),
            (&[3, 0], false),
            (&[1, 4], false),
            (&[0, 1], true),
            (&[2, 5], true),
            (&[0, 3, 2], true),
            (&[1, 4, 0, 3], true),
        ];
        for &(ids, want) in cases {
            assert_eq!(ctx.two_texts(ids), want, "{ids:?}");
        }
    }

    #[test]
    fn a_url_a_host_rule_changes_holds_the_words_it_needs() {
        // Every candidate learned from a synthetic web (templates, drops, aliases, conventions)
        // against every URL of it: where the rule changes a URL, the URL holds its words.
        let s = crate::synth::synth(&crate::synth::SynthOptions {
            sites: 6,
            pages: 60,
            seed: 5,
            host_offset: 0,
        });
        let clusters = crate::input::rows_to_clusters(&s.rows);
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let (mut changed, mut screened) = (0, 0);
        for r in cands.iter().filter(|r| r.kind != RuleKind::Regex) {
            let words = Words::of(r);
            for l in data.iter() {
                let admit = words.admit(l.url);
                screened += usize::from(!admit);
                if apply_rule(r, l.url).is_some_and(|o| o != l.url) {
                    changed += 1;
                    assert!(admit, "{} changes {} without its words", r.pattern, l.url);
                }
            }
        }
        assert!(changed > 1000 && screened > 10_000, "{changed} {screened}");
    }

    #[test]
    fn url_ends_widen_past_4_gib() {
        let mut e = Ends::default();
        let big = u32::MAX as usize + 10;
        for end in [5, u32::MAX as usize, big, big + 3] {
            e.push(end);
        }
        assert!(matches!(e, Ends::Wide(_)));
        let got: Vec<usize> = (0..e.len()).map(|i| e.get(i)).collect();
        assert_eq!(got, [5, u32::MAX as usize, big, big + 3]);
    }

    #[test]
    fn packed_merges_and_rewrites_keep_their_fields_and_order() {
        for (url, fp, seen) in [
            (0, false, false),
            (7, true, false),
            ((1 << 30) - 1, true, true),
        ] {
            let m = Merge::new(url, fp, seen);
            assert_eq!((m.url(), m.fp(), m.seen()), (url, fp, seen));
        }
        let hashes = [0, 1, u64::from(u32::MAX), 1 << 32, u64::MAX];
        let mut w: Vec<Rewrite> = [3u32, 1]
            .iter()
            .flat_map(|&u| hashes.iter().rev().map(move |&h| Rewrite::new(u, h)))
            .collect();
        w.sort_unstable();
        let back: Vec<(u32, u64)> = w.iter().map(|x| (x.url(), x.hash())).collect();
        let mut want: Vec<(u32, u64)> = [3u32, 1]
            .iter()
            .flat_map(|&u| hashes.iter().map(move |&h| (u, h)))
            .collect();
        want.sort_unstable();
        assert_eq!(back, want);
    }

    #[test]
    fn a_url_repeating_a_path_parameter_counts_once() {
        // An attacker's URL repeats `;sid=` thousands of times: it is one candidate URL of the
        // path-parameter convention, not one per repeat (which would drown its false positives).
        let rule = crate::rules::convention_rule(crate::rules::Convention::PathParam("sid".into()));
        let rep = ";sid=1".repeat(2000);
        let l = |u: String, c| Labeled { url: u, cluster: c };
        let data = vec![
            l(format!("http://a.org/x{rep}"), 0),
            l("http://a.org/x;sid=2".to_string(), 0),
            l("http://c.org/p;sid=1".into(), 1),
            l("http://c.org/p;sid=2".into(), 2),
            l("http://c.org/p".into(), 3),
        ];
        let data: LabeledUrls = data.into_iter().collect();
        let st = rule_stats(&[rule], &data, &LabeledUrls::default());
        assert!(st[0].0 <= 5 && st[0].1 >= 2, "{st:?}");
    }

    #[test]
    fn tracking_parameters_that_come_together_are_judged_together() {
        // Three sites link their pages with `utm_source` and `utm_medium` together, never one
        // alone: dropped alone, neither merges anything. Judged with the other cross-host drops,
        // both are kept, and a site never seen gets one key for its tracked links. On d.org,
        // `ref` names pages and is seen dropped once: it must not ride along.
        let mut clusters = on_sites(&["a", "b", "c"], 3, |h, i| {
            let page = format!("http://{h}.org/post/{i}");
            vec![
                page.clone(),
                format!("{page}?utm_medium=social&utm_source=tw{i}"),
                format!("{page}?utm_medium=email&utm_source=nl{h}{i}"),
            ]
        });
        for i in 0..3 {
            clusters.push(mk(
                &format!("d{i}"),
                &[&format!("http://d.org/item?ref={i}")],
            ));
        }
        clusters.push(mk(
            "d-x",
            &[
                "http://d.org/list",
                "http://d.org/list?ref=top&utm_source=x",
            ],
        ));
        let (key, rules) = learned_keys(&clusters);
        assert_eq!(
            key("http://z.net/a?utm_medium=social&utm_source=fb&k=1"),
            "http://z.net/a?k=1",
            "{rules:?}"
        );
        assert_ne!(
            key("http://d.org/item?ref=1"),
            key("http://d.org/item?ref=2")
        );
        assert!(!rules.iter().any(|r| r.contains("ref=")), "{rules:?}");
        // Alone, neither drop merges a URL.
        let cfg = crate::LearnConfig::default();
        let (mut cands, _) = learn_candidates(&clusters, &cfg.learn, &|_| {});
        let data = labeled(&clusters, &BaseOptions::default()).0;
        let alone = rule_stats_and_sites(&mut cands.clone(), &data, &LabeledUrls::default());
        let joint = rule_stats_joint(
            &mut cands,
            &data,
            &LabeledUrls::default(),
            &Default::default(),
        )
        .0;
        let i = cands
            .iter()
            .position(|r| r.pattern.contains("?utm_source={"))
            .expect("a typed utm_source drop");
        // The 18 tracked links of a, b and c; not d.org's, where `ref` (out of the world) stays.
        assert_eq!((alone[i], joint[i]), ((0, 0), (18, 0)));
    }

    #[test]
    fn a_drop_of_one_value_adds_nothing_where_its_parameter_is_dropped_whatever_the_value() {
        // `ref` is dropped with any value on three sites, and `ref=nav` is also seen: jointly,
        // the value's own rule merges nothing the typed one does not, and is not kept.
        let mut clusters = Vec::new();
        for h in ["a", "b", "c"] {
            for (i, v) in ["nav", "hp1", "ft22", "nav"].iter().enumerate() {
                clusters.push(mk(
                    &format!("{h}{i}"),
                    &[
                        &format!("http://{h}.org/p{i}"),
                        &format!("http://{h}.org/p{i}?ref={v}{h}"),
                    ],
                ));
                clusters.push(mk(
                    &format!("{h}{i}n"),
                    &[
                        &format!("http://{h}.org/q{i}"),
                        &format!("http://{h}.org/q{i}?ref=nav"),
                    ],
                ));
            }
        }
        let (key, rules) = learned_keys(&clusters);
        assert_eq!(key("http://z.net/x?ref=nav"), "http://z.net/x", "{rules:?}");
        let refs: Vec<&String> = rules.iter().filter(|r| r.contains("ref=")).collect();
        assert_eq!(refs.len(), 1, "{rules:?}");
        assert!(refs[0].contains("ref={"), "{rules:?}");
    }

    #[test]
    fn cross_host_template_sees_the_url_after_drops_and_before_conventions() {
        // Four sites of one CMS: `/c/N` ≡ `index.php?option=com_content&id=N`, with a noise
        // parameter and `index.php` as default document. On a site never seen, the template must
        // fire after the noise is dropped and before `index.php` becomes `/`.
        let mut clusters = Vec::new();
        for h in ["a", "b", "c", "d"] {
            for i in 0..4 {
                let u = |p: &str| format!("http://{h}.org{p}");
                let q = format!("/index.php?option=com_content&id={i}");
                clusters.push(Cluster {
                    id: format!("{h}{i}"),
                    urls: vec![
                        u(&format!("/c/{i}")),
                        u(&q),
                        u(&format!("{q}&mode=threaded")),
                    ],
                });
                clusters.push(Cluster {
                    id: format!("{h}p{i}"),
                    urls: vec![
                        u(&format!("/p/{i}.html")),
                        u(&format!("/p/{i}.html?mode=threaded")),
                    ],
                });
            }
            clusters.push(mk(
                &format!("{h}-dir"),
                &[
                    &format!("http://{h}.org/d/"),
                    &format!("http://{h}.org/d/index.php"),
                ],
            ));
        }
        let (key, rules) = learned_keys(&clusters);
        for u in [
            "http://z.net/index.php?option=com_content&id=9&mode=threaded",
            "http://z.net/index.php?id=9&option=com_content",
            "http://z.net/c/9",
        ] {
            assert_eq!(key(u), key("http://z.net/c/9"), "{u}: {rules:#?}");
        }
        // Without the signature parameter, another site's `index.php?id=` is left alone.
        assert_ne!(key("http://z.net/index.php?id=9"), key("http://z.net/c/9"));
    }

    #[test]
    fn cross_host_merges_count_as_support() {
        // `www.` alias: the rewritten URL lands on another host's URL; that is a merge.
        let clusters: Vec<Cluster> = (0..3)
            .map(|i| {
                mk(
                    &format!("c{i}"),
                    &[
                        &format!("http://www.h.org/a/{i}"),
                        &format!("http://h.org/a/{i}"),
                    ],
                )
            })
            .collect();
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = rule_stats(&cands, &data, &LabeledUrls::default());
        let i = cands
            .iter()
            .position(|r| r.kind == RuleKind::Alias)
            .expect("alias rule");
        assert_eq!(st[i], (3, 0));
    }

    #[test]
    fn split_modes_are_deterministic_and_complete() {
        let c: Vec<Cluster> = (0..50)
            .map(|i| {
                mk(
                    &format!("c{i}"),
                    &[&format!("http://h/{i}"), &format!("http://h/{i}?x=1")],
                )
            })
            .collect();
        for mode in [SplitMode::Cluster, SplitMode::Url] {
            let a = split_clusters(&c, mode, &[0.6, 0.2, 0.2], 1);
            assert_eq!(a, split_clusters(&c, mode, &[0.6, 0.2, 0.2], 1));
            assert_ne!(a, split_clusters(&c, mode, &[0.6, 0.2, 0.2], 2));
            let n: usize = a.iter().flatten().map(|c| c.urls.len()).sum();
            assert_eq!(n, 100);
            if mode == SplitMode::Cluster {
                let ids: HashSet<&String> = a[0].iter().map(|c| &c.id).collect();
                assert!(a[1].iter().all(|c| !ids.contains(&c.id)));
            }
        }
    }

    #[test]
    fn cycles_are_broken() {
        // Two clusters whose canonical choices point at each other's shapes.
        let clusters = vec![
            mk("a", &["http://h/a?k=1", "http://h/b?k=1"]),
            mk("b", &["http://h/b?k=2&z=1", "http://h/b?k=2"]),
        ];
        let (cands, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
        let (data, _) = labeled(&clusters, &BaseOptions::default());
        let st = vec![(5, 0); cands.len()];
        let (kept, _) = select(cands, &st, &data, &ValidateOptions::default());
        let n = Normalizer::new(kept, None);
        for l in data.iter() {
            let once = n.apply_rules(l.url.to_string()).url;
            assert_eq!(n.apply_rules(once.clone()).url, once);
        }
    }
}
