//! Verify: check by page content that the URLs a rule merges carry the same page.
//!
//! In: rules and crawled [`Page`]s. Out: one [`RuleCheck`] per rule: the page pairs it merges,
//! how many the content confirms and how many it refutes under a [`SimOptions`] measure.
//! A rule *merges* a page when, applied alone to the page's base-normalized URL, it rewrites it;
//! the page is paired with the page already at the rewritten URL if one was crawled, else with the
//! first (by URL) page the rule sends to the same URL. Invariants: one capture per URL (the first
//! read); rules keep their order; pages whose URL the base layer rejects are skipped.

use crate::base::{base_normalize, BaseOptions};
use crate::normalize::Normalizer;
use crate::pages::Page;
use crate::rules::Rule;
use crate::similarity::{compare, SimOptions};
use crate::tdw::{features, Weights};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};

/// The content evidence for one rule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleCheck {
    /// Pairs of crawled pages the rule merges.
    pub pairs: usize,
    /// Pairs the content calls duplicates.
    pub confirmed: usize,
    /// Pairs the content calls different.
    pub refuted: usize,
}

impl RuleCheck {
    /// refuted / pairs (0 without pairs).
    pub fn refuted_share(&self) -> f64 {
        if self.pairs == 0 {
            0.0
        } else {
            self.refuted as f64 / self.pairs as f64
        }
    }
}

/// Check every rule against the pages (see the module docs).
///
/// ```
/// use dedust::{pages::Page, verify::verify_rules, learn_candidates, Cluster};
/// let page = |u: &str, body: &str| Page { url: u.into(), html: format!("<p>{body}</p>"), origin: String::new() };
/// let c = vec![Cluster { id: "a".into(), urls: vec!["http://a.org/x?s=1".into(), "http://a.org/x".into()] }];
/// let (rules, _) = learn_candidates(&c, &Default::default(), &|_| {});
/// let pages = vec![page("http://a.org/y?s=1", "zebras at dawn on the savanna"),
///                  page("http://a.org/y", "zebras at dawn on the savanna")];
/// let checks = verify_rules(&rules, &pages, &Default::default(), &Default::default());
/// // The host rule dropping `s=1` merges the two pages: confirmed by content.
/// let i = rules.iter().position(|r| r.pattern == "*://a.org{/path}?s=1&{rest}").unwrap();
/// assert_eq!((checks[i].pairs, checks[i].confirmed), (1, 1));
/// ```
pub fn verify_rules(
    rules: &[Rule],
    pages: &[Page],
    base: &BaseOptions,
    o: &SimOptions,
) -> Vec<RuleCheck> {
    // One capture per base-normalized URL.
    let mut by_url: BTreeMap<String, usize> = BTreeMap::new();
    for (i, p) in pages.iter().enumerate() {
        if let Ok(u) = base_normalize(&p.url, base) {
            by_url.entry(u).or_insert(i);
        }
    }
    let urls: Vec<(&String, usize)> = by_url.iter().map(|(u, i)| (u, *i)).collect();
    let feats: HashMap<usize, crate::tdw::Features> = urls
        .par_iter()
        .map(|(_, i)| {
            (
                *i,
                features(&pages[*i].url, &pages[*i].html, &Weights::default()),
            )
        })
        .collect();
    rules
        .par_iter()
        .map(|r| {
            let n = Normalizer::new(vec![r.clone()], None);
            let mut buckets: BTreeMap<String, Vec<usize>> = BTreeMap::new();
            for (u, i) in &urls {
                if let Some((_, out)) = n.apply_once(u) {
                    buckets.entry(out).or_default().push(*i);
                }
            }
            let mut check = RuleCheck::default();
            for (target, members) in buckets {
                let (anchor, rest): (usize, &[usize]) = match by_url.get(&target) {
                    Some(&a) => (a, &members),
                    None => (members[0], &members[1..]),
                };
                for &m in rest {
                    check.pairs += 1;
                    if compare(&feats[&anchor], &feats[&m], o).0 {
                        check.confirmed += 1;
                    } else {
                        check.refuted += 1;
                    }
                }
            }
            check
        })
        .collect()
}
