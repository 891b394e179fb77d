//! Verify: check by page content that the URLs a rule merges carry the same page.
//!
//! In: rules and crawled [`Page`]s. Out: one [`RuleCheck`] per rule: the page pairs it merges,
//! how many the content confirms and how many it refutes under a [`SimOptions`] measure.
//! A rule *merges* a page when, applied alone to the page's base-normalized URL, it rewrites it;
//! the page is paired with the page already at the rewritten URL if one was crawled, else with the
//! first (by URL) page the rule sends to the same URL. Invariants: one capture per URL (the first
//! read); rules keep their order; pages whose URL the base layer rejects, or that parsers could
//! read as two hosts (`dedust_core::trusted_host`), are skipped.

use crate::base::{base_normalize, BaseOptions};
use crate::model::Rule;
use crate::normalize::Normalizer;
use crate::pages::Page;
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
    /// Per registrable domain of the merged page: (confirmed, refuted) pairs. `verify --revoke`
    /// excepts the refuting sites from a cross-host rule instead of revoking it everywhere.
    pub by_domain: BTreeMap<String, (usize, usize)>,
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
/// use dedust_content::{pages::Page, verify::verify_rules};
/// let page = |u: &str, body: &str| Page { url: u.into(), html: format!("<p>{body}</p>"), origin: String::new() };
/// // A rule dropping `?s=1` (an imported regex here; learned rules are checked the same way).
/// let rules = vec![dedust_core::regex_rule("\\?s=1$", "", "drop-s").unwrap()];
/// let pages = vec![page("http://a.org/y?s=1", "zebras at dawn on the savanna"),
///                  page("http://a.org/y", "zebras at dawn on the savanna")];
/// let checks = verify_rules(&rules, &pages, &Default::default(), &Default::default());
/// // The rule merges the two pages: confirmed by content.
/// assert_eq!((checks[0].pairs, checks[0].confirmed), (1, 1));
/// ```
pub fn verify_rules(
    rules: &[Rule],
    pages: &[Page],
    base: &BaseOptions,
    o: &SimOptions,
) -> Vec<RuleCheck> {
    verify_rules_with(rules, pages, base, o, &|_, _| {})
}

/// What [`verify_rules_with`] reports one step of: a page's features extracted, a rule's
/// merges checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyStage {
    /// Features of one distinct page (of the total given with it).
    Features,
    /// The merges of one rule.
    Rules,
}

impl VerifyStage {
    /// A short label (`features`, `rules`).
    pub fn name(self) -> &'static str {
        match self {
            VerifyStage::Features => "features",
            VerifyStage::Rules => "rules",
        }
    }
}

/// [`verify_rules`], calling `done(stage, total)` once per finished step (from the worker
/// threads; for a progress bar): every page's features first, then every rule.
pub fn verify_rules_with(
    rules: &[Rule],
    pages: &[Page],
    base: &BaseOptions,
    o: &SimOptions,
    done: &(dyn Fn(VerifyStage, usize) + Sync),
) -> Vec<RuleCheck> {
    // One capture per base-normalized URL.
    let mut by_url: BTreeMap<String, usize> = BTreeMap::new();
    for (i, p) in pages.iter().enumerate() {
        // A page whose URL parsers could read as two hosts speaks for no site: it neither
        // confirms nor refutes a rule (nor excepts a site from one).
        if dedust_core::trusted_host(&p.url).is_err() {
            continue;
        }
        if let Ok(u) = base_normalize(&p.url, base) {
            by_url.entry(u).or_insert(i);
        }
    }
    let urls: Vec<(&String, usize)> = by_url.iter().map(|(u, i)| (u, *i)).collect();
    let feats: HashMap<usize, crate::tdw::Features> = urls
        .par_iter()
        .map(|(_, i)| {
            let f = features(&pages[*i].url, &pages[*i].html, &Weights::default());
            done(VerifyStage::Features, urls.len());
            (*i, f)
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
                    let d = crate::site::domain_of_url(&pages[m].url).unwrap_or_default();
                    let e = check.by_domain.entry(d).or_default();
                    if compare(&feats[&anchor], &feats[&m], o).0 {
                        check.confirmed += 1;
                        e.0 += 1;
                    } else {
                        check.refuted += 1;
                        e.1 += 1;
                    }
                }
            }
            done(VerifyStage::Rules, rules.len());
            check
        })
        .collect()
}
/// What `verify --revoke` does with a rule, given its [`RuleCheck`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revocation {
    /// Content does not refute it (refuted share at most the bound).
    Keep,
    /// Revoke it everywhere.
    Revoke,
    /// A cross-host rule refuted on some sites only: those registrable domains become exceptions
    /// (host evidence beats global evidence); the rule stays for the others.
    Except(Vec<String>),
}

/// The decision for `r` whose merges `c` checked, with `max_refuted` the highest refuted share a
/// rule (or, for a cross-host rule, a site) may have. A host rule is revoked when its refuted
/// share is over the bound. A cross-host rule is judged per registrable domain: the domains over
/// the bound become exceptions, unless they hold more than half of the rule's checked pairs —
/// then the rule is wrong where it was mostly seen, and it is revoked.
///
/// ```
/// use dedust_content::verify::{revocation, Revocation, RuleCheck};
/// let r = dedust_core::convention_rule(dedust_core::Convention::StripWww);
/// let mut c = RuleCheck { pairs: 10, confirmed: 8, refuted: 2, ..Default::default() };
/// c.by_domain.insert("a.org".into(), (8, 0));
/// c.by_domain.insert("b.org".into(), (0, 2));
/// assert_eq!(revocation(&r, &c, 0.1), Revocation::Except(vec!["b.org".into()]));
/// ```
pub fn revocation(r: &Rule, c: &RuleCheck, max_refuted: f64) -> Revocation {
    if !r.is_global() {
        return if c.pairs > 0 && c.refuted_share() > max_refuted {
            Revocation::Revoke
        } else {
            Revocation::Keep
        };
    }
    let over: Vec<(&String, usize)> = c
        .by_domain
        .iter()
        .filter(|(_, &(ok, bad))| bad > 0 && bad as f64 / (ok + bad) as f64 > max_refuted)
        .map(|(d, &(ok, bad))| (d, ok + bad))
        .collect();
    if over.is_empty() {
        return Revocation::Keep;
    }
    let seen_there: usize = over.iter().map(|(_, n)| n).sum();
    if 2 * seen_there > c.pairs {
        Revocation::Revoke
    } else {
        Revocation::Except(over.into_iter().map(|(d, _)| d.clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_counts_every_page_then_every_rule() {
        use std::sync::Mutex;
        let page = |u: &str, t: &str| Page {
            url: u.into(),
            html: format!("<p>{t}</p>"),
            origin: "t".into(),
        };
        let pages = vec![
            page("https://www.a.org/x", "one two three"),
            page("https://a.org/x", "one two three"),
            page("https://a.org/y", "four five six"),
            // The same URL twice: one distinct page.
            page("https://a.org/y", "four five six"),
        ];
        let rules = vec![
            crate::model::convention_rule(crate::model::Convention::StripWww),
            crate::javaregex::regex_rule("/y$", "/x", "t").unwrap(),
        ];
        let seen = Mutex::new(Vec::new());
        let checks = verify_rules_with(
            &rules,
            &pages,
            &Default::default(),
            &Default::default(),
            &|s, n| seen.lock().unwrap().push((s, n)),
        );
        let seen = seen.into_inner().unwrap();
        let f = seen
            .iter()
            .filter(|s| **s == (VerifyStage::Features, 3))
            .count();
        let r = seen
            .iter()
            .filter(|s| **s == (VerifyStage::Rules, 2))
            .count();
        assert_eq!((f, r, seen.len()), (3, 2, 5), "{seen:?}");
        // Features come first, and the result is what verify_rules gives.
        assert!(seen[..3].iter().all(|s| s.0 == VerifyStage::Features));
        assert_eq!(
            checks,
            verify_rules(&rules, &pages, &Default::default(), &Default::default())
        );
        assert_eq!((checks[0].confirmed, checks[1].refuted), (1, 1));
    }

    #[test]
    fn revocation_table() {
        let global = crate::model::convention_rule(crate::model::Convention::StripWww);
        let host = crate::javaregex::regex_rule("a", "b", "x").map(|mut r| {
            r.source.host = "a.org".into();
            r.scope = "a.org".into();
            r
        });
        let host = host.unwrap();
        let check = |doms: &[(&str, usize, usize)]| {
            let mut c = RuleCheck::default();
            for &(d, ok, bad) in doms {
                c.pairs += ok + bad;
                c.confirmed += ok;
                c.refuted += bad;
                c.by_domain.insert(d.into(), (ok, bad));
            }
            c
        };
        let ex = |d: &[&str]| Revocation::Except(d.iter().map(|s| s.to_string()).collect());
        // (rule, per-domain (confirmed, refuted), decision at max_refuted 0.1)
        type Case<'a> = (&'a Rule, Vec<(&'a str, usize, usize)>, Revocation);
        let cases: Vec<Case> = vec![
            (&host, vec![], Revocation::Keep),
            (&host, vec![("a.org", 9, 1)], Revocation::Keep),
            (&host, vec![("a.org", 8, 2)], Revocation::Revoke),
            (
                &global,
                vec![("a.org", 9, 0), ("b.org", 5, 0)],
                Revocation::Keep,
            ),
            // One site of three refutes it: that site is excepted.
            (
                &global,
                vec![("a.org", 9, 0), ("b.org", 0, 3), ("c.org", 4, 0)],
                ex(&["b.org"]),
            ),
            // Below the bound overall, but one site over it: still excepted there.
            (
                &global,
                vec![("a.org", 40, 0), ("b.org", 1, 1)],
                ex(&["b.org"]),
            ),
            // Wrong where most of its pairs are: revoked everywhere.
            (
                &global,
                vec![("a.org", 2, 0), ("b.org", 1, 5)],
                Revocation::Revoke,
            ),
        ];
        for (r, doms, want) in cases {
            assert_eq!(revocation(r, &check(&doms), 0.1), want, "{doms:?}");
        }
    }
}
