//! Refine: the clusters a crawl declares (digest groups, revisits, redirects, canonicals) decided
//! again by the pages' content where the crawl holds their bodies.
//!
//! In: the declared clusters (what `learn`'s reader makes of a WARC) and the content clusters of
//! the same WARC's pages ([`crate::cluster`]: every page in exactly one). Out: the content
//! clusters, each with the URLs without a page that the declared evidence joins to it and to no
//! other content cluster (a redirect's source, a canonical target never fetched), then the
//! declared clusters that hold no page at all, as they were.
//!
//! A content cluster that takes in URLs of a declared cluster takes that cluster's id too (the
//! first one's, when several attach): the id names the signal and the URL that declared the
//! redirect or canonical (`redirect:http://h/old`), which `learn` reads as that site's consent
//! to a move.
//!
//! Invariants: every URL appears at most once in the output; two URLs with pages share an output
//! cluster only when their content joins them (a site's canonical or redirect does not overrule
//! its pages: a `?p=`-to-thread canonical whose bodies differ joins nothing); a URL without a
//! page whose declared cluster spans several content clusters is left out, counted; so is one
//! whose site's declarations of that kind (its canonicals, its redirects), where pages can check
//! them, are refuted more often than [`MAX_REFUTED`]. A declaration to another site (one site's
//! redirect or canonical naming a URL of another) attaches a URL without a page only to a
//! content cluster all on the declaring site: equal content across sites never carries another
//! site's declaration into a site's cluster.
//!
//! # Complexity
//! `O(U)` hash operations for `U` URLs in both inputs.

use crate::cluster::{clusters_from_features, page_features_with};
use crate::model::Cluster;
use crate::pages::Page;
use crate::similarity::SimOptions;
use std::collections::HashMap;

/// Fewest words a page needs (term occurrences, stop words left out) for its content to decide
/// anything: a stub (`item 7`, an empty template, an error line) reads like every other stub of
/// its site, so it keeps its declared evidence only.
pub const MIN_TERMS: u32 = 20;

/// The refined clusters and what the content changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refined {
    /// Content clusters (with their attached URLs), then the declared clusters without pages.
    pub clusters: Vec<Cluster>,
    /// URLs without a page attached to a content cluster.
    pub attached: usize,
    /// Declared clusters whose pages the content splits into two or more clusters.
    pub split: usize,
    /// URLs without a page left out because their declared cluster was split.
    pub left_out: usize,
    /// URLs without a page left out because their site's checkable declarations of that kind
    /// are refuted by the pages more often than [`MAX_REFUTED`].
    pub untrusted: usize,
    /// [`refine_by_pages`]: pages whose content was compared.
    pub pages: usize,
    /// [`refine_by_pages`]: content clusters with duplicates (before URLs were attached).
    pub duplicates: usize,
    /// [`refine_by_pages`]: pages left to their declared evidence: under [`MIN_TERMS`] words.
    pub stubs: usize,
    /// [`refine_by_pages`]: pages left out of the comparison because the declared evidence
    /// holds no capture of their URL (the reader left it out: a URL that could be read as two
    /// hosts, a request sent to another host, a robots.txt, a status other than 200).
    pub ambiguous: usize,
}

/// [`refine`] by the content clusters of `pages` (features and join as [`crate::cluster`],
/// with `o`, but from the page's words alone: the URL's words left out), leaving out of the
/// comparison the pages whose URL the declared evidence does not hold (the reader of the crawl
/// left their captures out: [`Refined::ambiguous`]) and the stubs (under [`MIN_TERMS`] words): such URLs count as without a page. `step` is called
/// once per page whose features are extracted (a progress bar).
///
/// ```
/// use dedust_content::{refine::refine_by_pages, Page};
/// use dedust_core::Cluster;
/// let words = "zebras graze quietly across the wide golden savanna while distant lions rest \
///     under acacia trees and herds of wildebeest move slowly toward the river crossing, \
///     watched by vultures circling high above dusty plains every morning at dawn";
/// let page = |u: &str, body: &str| Page { url: u.into(), html: format!("<p>{body}</p>"), origin: String::new() };
/// let pages = vec![
///     page("https://a.org/x", words),
///     page("https://a.org/x?s=1", words),
///     page("https://a.org/y", "item 7"),
///     page("https://a.org/z", "item 8"),
/// ];
/// // What a WARC reader declares: each 200 page in the group of its payload digest.
/// let declared = pages
///     .iter()
///     .enumerate()
///     .map(|(k, p)| Cluster { id: format!("digest:D{k}"), urls: vec![p.url.clone()] })
///     .collect();
/// let r = refine_by_pages(declared, pages, &Default::default(), &|| {});
/// assert_eq!((r.pages, r.duplicates, r.stubs), (2, 1, 2));
/// assert_eq!(r.clusters[0].urls, ["https://a.org/x", "https://a.org/x?s=1"]);
/// ```
pub fn refine_by_pages(
    declared: Vec<Cluster>,
    pages: Vec<Page>,
    o: &SimOptions,
    step: &(dyn Fn() + Sync),
) -> Refined {
    let before = pages.len();
    let known: std::collections::HashSet<&str> = declared
        .iter()
        .flat_map(|c| c.urls.iter().map(String::as_str))
        .collect();
    let pages: Vec<Page> = pages
        .into_iter()
        .filter(|p| known.contains(p.url.as_str()) && dedust_core::trusted_host(&p.url).is_ok())
        .collect();
    drop(known);
    let ambiguous = before - pages.len();
    // The page's words only: the URL's own words (`utm medium social`) would tell apart the
    // very variants being judged, and weigh most on short pages.
    let w = crate::tdw::Weights {
        url: 0.0,
        ..Default::default()
    };
    let feats = page_features_with(&pages, &w, step);
    let words = |f: &crate::tdw::Features| -> u32 { f.tf.values().sum() };
    let (pages, feats): (Vec<Page>, Vec<_>) = pages
        .into_iter()
        .zip(feats)
        .filter(|(_, f)| words(f) >= MIN_TERMS)
        .unzip();
    let stubs = before - ambiguous - pages.len();
    let (content, _) = clusters_from_features(&pages, &feats, o);
    let duplicates = content.iter().filter(|c| c.urls.len() > 1).count();
    Refined {
        pages: pages.len(),
        duplicates,
        stubs,
        ambiguous,
        ..refine(declared, content)
    }
}

/// Refine `declared` by `content` (see the module docs).
///
/// ```
/// use dedust_content::refine::refine;
/// use dedust_core::Cluster;
/// let c = |id: &str, urls: &[&str]| Cluster { id: id.into(), urls: urls.iter().map(|u| u.to_string()).collect() };
/// // The crawl declares: http → https redirect (no body on the http side), and a canonical
/// // from a post view to its thread, whose bodies differ.
/// let declared = vec![
///     c("redirect:http://a.org/x", &["http://a.org/x", "https://a.org/x"]),
///     c("canonical:https://a.org/t?p=5", &["https://a.org/t?p=5", "https://a.org/t"]),
/// ];
/// let content = vec![
///     c("k1", &["https://a.org/x"]),
///     c("k2", &["https://a.org/t?p=5"]),
///     c("k3", &["https://a.org/t"]),
/// ];
/// let r = refine(declared, content);
/// assert_eq!(r.clusters[0].urls, ["https://a.org/x", "http://a.org/x"]);
/// assert_eq!(r.clusters[0].id, "redirect:http://a.org/x");
/// assert_eq!(r.clusters.len(), 3);
/// assert_eq!((r.attached, r.split, r.left_out, r.untrusted), (1, 1, 0, 0));
/// ```
pub fn refine(declared: Vec<Cluster>, mut content: Vec<Cluster>) -> Refined {
    let mut of: HashMap<&str, usize> = HashMap::new();
    for (k, c) in content.iter().enumerate() {
        for u in &c.urls {
            of.entry(u.as_str()).or_insert(k);
        }
    }
    // Pass 1: each declared cluster's content clusters, and per (site, kind) how often the
    // pages agree with what the site declared where both ends have one.
    let pages_of = |d: &Cluster| -> Vec<usize> {
        let mut v: Vec<usize> = d
            .urls
            .iter()
            .filter_map(|u| of.get(u.as_str()).copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut checked: HashMap<(String, String), (usize, usize)> = HashMap::new();
    let found: Vec<Vec<usize>> = declared.iter().map(pages_of).collect();
    for (d, k) in declared.iter().zip(&found) {
        let with_page = d
            .urls
            .iter()
            .filter(|u| of.contains_key(u.as_str()))
            .count();
        let e = checked.entry(site_kind(d)).or_default();
        match k.len() {
            0 => {}
            1 if with_page >= 2 => e.0 += 1,
            1 => {}
            _ => e.1 += 1,
        }
    }
    let trusted = |d: &Cluster| {
        let (agree, refuted) = checked.get(&site_kind(d)).copied().unwrap_or_default();
        refuted as f64 <= MAX_REFUTED * (agree + refuted) as f64
    };
    // Pass 2: attach what a trusted declaration joins to one content cluster.
    let mut attach: Vec<(usize, String)> = Vec::new();
    let mut renamed: Vec<Option<String>> = vec![None; content.len()];
    let mut rest: Vec<Cluster> = Vec::new();
    let (mut split, mut left_out, mut untrusted) = (0, 0, 0);
    for (d, k) in declared.into_iter().zip(found) {
        let without_page = d
            .urls
            .iter()
            .filter(|u| !of.contains_key(u.as_str()))
            .count();
        match k.as_slice() {
            [] => rest.push(d),
            [_] if without_page > 0 && !trusted(&d) => untrusted += without_page,
            // Another site's URL is attached only where the content cluster is the declaring
            // site's alone ([`declarer_site`]).
            [k] if without_page > 0
                && declarer_site(&d).is_some_and(|(site, spans)| {
                    spans
                        && !content[*k]
                            .urls
                            .iter()
                            .all(|u| site_of(u) == Some(site.clone()))
                }) =>
            {
                left_out += without_page;
            }
            [k] => {
                if without_page > 0 && renamed[*k].is_none() {
                    renamed[*k] = Some(d.id.clone());
                }
                attach.extend(
                    d.urls
                        .into_iter()
                        .filter(|u| !of.contains_key(u.as_str()))
                        .map(|u| (*k, u)),
                );
            }
            _ => {
                split += 1;
                left_out += without_page;
            }
        }
    }
    drop(of);
    // A URL two declared clusters attach (overlapping input) goes in once.
    attach.sort_unstable();
    attach.dedup();
    let attached = attach.len();
    for (k, u) in attach {
        content[k].urls.push(u);
    }
    for (c, id) in content.iter_mut().zip(renamed) {
        if let Some(id) = id {
            c.id = id;
        }
    }
    content.extend(rest);
    Refined {
        clusters: content,
        attached,
        split,
        left_out,
        untrusted,
        ..Refined::default()
    }
}

/// The registrable domain of a URL, as the base layer's trusted parse reads it.
fn site_of(u: &str) -> Option<String> {
    dedust_core::trusted_host(u)
        .ok()
        .map(|h| h.site().to_string())
}

/// The site of the URL that declared cluster `d` (its id's text after a `redirect:` or
/// `canonical:` prefix) and whether `d` spans sites; `None` for any other cluster.
fn declarer_site(d: &Cluster) -> Option<(String, bool)> {
    let (prefix, url) = d.id.split_once(':')?;
    if !prefix
        .split('+')
        .all(|p| matches!(p, "redirect" | "canonical"))
    {
        return None;
    }
    let site = site_of(url)?;
    let spans = d.urls.iter().any(|u| site_of(u).as_ref() != Some(&site));
    Some((site, spans))
}

/// Most share of a site's checkable declarations (of one kind) its pages may refute while its
/// uncheckable ones are still taken: a site whose canonicals name another page often (a post
/// view declaring its thread) is not believed where no page can check it.
pub const MAX_REFUTED: f64 = 0.15;

/// A declared cluster's site (the registrable domain of its first URL) and kind (its id's
/// signal prefix: `redirect`, `canonical`, `digest`…).
fn site_kind(d: &Cluster) -> (String, String) {
    let site = d
        .urls
        .first()
        .and_then(|u| dedust_core::split_url(u))
        .map_or("", |p| crate::site::registrable_domain(p.host));
    let kind = d.id.split_once(':').map_or("", |(k, _)| k);
    (site.to_string(), kind.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(id: &str, urls: &[&str]) -> Cluster {
        Cluster {
            id: id.into(),
            urls: urls.iter().map(|u| u.to_string()).collect(),
        }
    }

    /// (declared, content, expected clusters as URL lists, attached, split, left out)
    #[test]
    fn table() {
        type Case = (
            Vec<Cluster>,
            Vec<Cluster>,
            Vec<Vec<&'static str>>,
            (usize, usize, usize, usize),
        );
        let cases: Vec<Case> = vec![
            // Nothing declared: the content clusters as they are.
            (
                vec![],
                vec![c("k", &["a", "b"])],
                vec![vec!["a", "b"]],
                (0, 0, 0, 0),
            ),
            // A declared cluster without pages stays (an index's digest group).
            (
                vec![c("d", &["x", "y"])],
                vec![c("k", &["a"])],
                vec![vec!["a"], vec!["x", "y"]],
                (0, 0, 0, 0),
            ),
            // Declared pages that content keeps apart stay apart; the bodiless member of that
            // declared cluster goes nowhere.
            (
                vec![c("d", &["a", "b", "r"])],
                vec![c("k1", &["a"]), c("k2", &["b"])],
                vec![vec!["a"], vec!["b"]],
                (0, 1, 1, 0),
            ),
            // Content joins what the crawl never declared.
            (
                vec![],
                vec![c("k", &["a", "a?s=1"])],
                vec![vec!["a", "a?s=1"]],
                (0, 0, 0, 0),
            ),
            // Two redirects into one page.
            (
                vec![c("d", &["r1", "a", "r2"])],
                vec![c("k", &["a"])],
                vec![vec!["a", "r1", "r2"]],
                (2, 0, 0, 0),
            ),
            // A site whose checkable canonicals the pages refute is not believed where no page
            // can check it.
            (
                vec![
                    c(
                        "canonical:https://s.org/a",
                        &["https://s.org/a", "https://s.org/b"],
                    ),
                    c(
                        "canonical:https://s.org/c",
                        &["https://s.org/c", "https://s.org/x"],
                    ),
                ],
                vec![
                    c("k1", &["https://s.org/a"]),
                    c("k2", &["https://s.org/b"]),
                    c("k3", &["https://s.org/c"]),
                ],
                vec![
                    vec!["https://s.org/a"],
                    vec!["https://s.org/b"],
                    vec!["https://s.org/c"],
                ],
                (0, 1, 0, 1),
            ),
            // … while its redirects, another kind, still count.
            (
                vec![
                    c(
                        "canonical:https://s.org/a",
                        &["https://s.org/a", "https://s.org/b"],
                    ),
                    c(
                        "redirect:http://s.org/c",
                        &["http://s.org/c", "https://s.org/c"],
                    ),
                ],
                vec![
                    c("k1", &["https://s.org/a"]),
                    c("k2", &["https://s.org/b"]),
                    c("k3", &["https://s.org/c"]),
                ],
                vec![
                    vec!["https://s.org/a"],
                    vec!["https://s.org/b"],
                    vec!["https://s.org/c", "http://s.org/c"],
                ],
                (1, 1, 0, 0),
            ),
            // A page declaring a canonical on another site, whose text copies a page of that
            // site: the canonical target (no page) never joins the copied page's cluster.
            (
                vec![c(
                    "canonical:https://evil.example/e",
                    &["https://evil.example/e", "https://victim.example/t"],
                )],
                vec![c(
                    "k",
                    &["https://evil.example/e", "https://victim.example/v1"],
                )],
                vec![vec!["https://evil.example/e", "https://victim.example/v1"]],
                (0, 0, 1, 0),
            ),
            // … while a page alone in its cluster keeps the pair (its site's consent).
            (
                vec![c(
                    "canonical:https://evil.example/e",
                    &["https://evil.example/e", "https://victim.example/t"],
                )],
                vec![c("k", &["https://evil.example/e"])],
                vec![vec!["https://evil.example/e", "https://victim.example/t"]],
                (1, 0, 0, 0),
            ),
        ];
        for (declared, content, want, counts) in cases {
            let r = refine(declared.clone(), content.clone());
            let got: Vec<Vec<&str>> = r
                .clusters
                .iter()
                .map(|c| c.urls.iter().map(String::as_str).collect())
                .collect();
            assert_eq!(got, want, "{declared:?} {content:?}");
            let got_counts = (r.attached, r.split, r.left_out, r.untrusted);
            assert_eq!(got_counts, counts, "{declared:?}");
        }
    }
}
