//! Metrics: how well a canonicalization merges true duplicates and nothing else.
//!
//! In: for each test URL, its canonical form (the bucket) and its true cluster. Out: [`Metrics`].
//! Per bucket b with its majority true cluster t* (ties: smallest cluster index):
//! * reduction = Σ_b (n_b,t* − 1) / (|URLs| − |true clusters|) — share of removable duplicates
//!   removed correctly (1.0 ideal; 1.0 when there is nothing to remove);
//! * lost = Σ_b (n_b − n_b,t*) / |URLs| — share of URLs whose distinct content is skipped (0 ideal);
//! * pairwise precision/recall over URL pairs put in one bucket vs. pairs in one true cluster.
//!
//! A mean over many sites can hide one site that loses much: [`worst_host`] gives lost per
//! registrable domain and names the worst one (among domains with at least
//! [`WORST_HOST_MIN_URLS`] test URLs, so a one-URL site does not read as "100 % lost").

use foldhash::{HashMap, HashMapExt};
use serde::Serialize;

/// Evaluation numbers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metrics {
    /// Test URLs.
    pub urls: usize,
    /// True clusters among them.
    pub clusters: usize,
    /// Canonical buckets.
    pub buckets: usize,
    /// Share of removable duplicates removed correctly; `None` when there is nothing to remove
    /// (every true cluster has one URL), printed `n/a`.
    pub reduction: Option<f64>,
    /// Share of URLs whose content would be skipped.
    pub lost: f64,
    /// Pairwise precision.
    pub precision: f64,
    /// Pairwise recall; `None` when no two URLs share a true cluster (`n/a`).
    pub recall: Option<f64>,
}

fn pairs(n: usize) -> f64 {
    (n as f64) * (n as f64 - 1.0) / 2.0
}

/// Compute the metrics of `(bucket, true cluster)` assignments.
///
/// ```
/// // Three URLs of cluster 0 and one of cluster 1, all put into one bucket: a false merge.
/// let m = dedust_learn::metrics(&[("a", 0), ("a", 0), ("a", 0), ("a", 1)]);
/// assert_eq!(m.reduction, Some(1.0));
/// assert_eq!(m.lost, 0.25);
/// assert_eq!(m.precision, 0.5);
/// ```
pub fn metrics<B: AsRef<str>>(items: &[(B, usize)]) -> Metrics {
    let mut buckets: HashMap<&str, HashMap<usize, usize>> = HashMap::new();
    let mut clusters: HashMap<usize, usize> = HashMap::new();
    for (b, c) in items {
        *buckets
            .entry(b.as_ref())
            .or_default()
            .entry(*c)
            .or_default() += 1;
        *clusters.entry(*c).or_default() += 1;
    }
    let n = items.len();
    let (mut red, mut lost) = (0usize, 0usize);
    let (mut same_b, mut same_both) = (0.0, 0.0);
    for counts in buckets.values() {
        let nb: usize = counts.values().sum();
        let (_, top) = counts
            .iter()
            .map(|(c, k)| (*c, *k))
            .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
            .expect("bucket not empty");
        red += top - 1;
        lost += nb - top;
        same_b += pairs(nb);
        same_both += counts.values().map(|&k| pairs(k)).sum::<f64>();
    }
    let same_c: f64 = clusters.values().map(|&k| pairs(k)).sum();
    let removable = n - clusters.len();
    Metrics {
        urls: n,
        clusters: clusters.len(),
        buckets: buckets.len(),
        reduction: (removable > 0).then(|| red as f64 / removable as f64),
        lost: if n == 0 { 0.0 } else { lost as f64 / n as f64 },
        precision: if same_b == 0.0 {
            1.0
        } else {
            same_both / same_b
        },
        recall: (same_c > 0.0).then(|| same_both / same_c),
    }
}

/// Least test URLs a registrable domain needs to be considered by [`worst_host`] (when some
/// domain has that many; otherwise every domain is).
pub const WORST_HOST_MIN_URLS: usize = 10;

/// Lost content on one registrable domain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostLost {
    /// The registrable domain.
    pub host: String,
    /// Its test URLs.
    pub urls: usize,
    /// Those in a bucket led by another true cluster.
    pub lost_urls: usize,
    /// `lost_urls / urls`.
    pub lost: f64,
}

/// The registrable domain with the highest lost share (then the most lost URLs, then the
/// smallest name), among domains with at least [`WORST_HOST_MIN_URLS`] URLs when there are any.
/// `domains[i]` is the domain of `items[i]`. `None` for no items.
///
/// ```
/// let items = [("a", 0), ("a", 0), ("a", 1), ("b", 2)];
/// let w = dedust_learn::metrics::worst_host(&items, &["x.org", "x.org", "y.org", "z.org"]).unwrap();
/// assert_eq!((w.host.as_str(), w.lost_urls, w.lost), ("y.org", 1, 1.0));
/// ```
pub fn worst_host<B: AsRef<str>, D: AsRef<str>>(
    items: &[(B, usize)],
    domains: &[D],
) -> Option<HostLost> {
    let mut buckets: HashMap<&str, HashMap<usize, usize>> = HashMap::new();
    for (b, c) in items {
        *buckets
            .entry(b.as_ref())
            .or_default()
            .entry(*c)
            .or_default() += 1;
    }
    let top: HashMap<&str, usize> = buckets
        .iter()
        .map(|(b, counts)| {
            let (c, _) = counts
                .iter()
                .map(|(c, k)| (*c, *k))
                .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
                .expect("bucket not empty");
            (*b, c)
        })
        .collect();
    let mut per: HashMap<&str, (usize, usize)> = HashMap::new();
    for ((b, c), d) in items.iter().zip(domains) {
        let e = per.entry(d.as_ref()).or_default();
        e.0 += 1;
        e.1 += usize::from(top[b.as_ref()] != *c);
    }
    let big = per.values().any(|&(n, _)| n >= WORST_HOST_MIN_URLS);
    per.into_iter()
        .filter(|(_, (n, _))| !big || *n >= WORST_HOST_MIN_URLS)
        .map(|(d, (n, l))| HostLost {
            host: d.to_string(),
            urls: n,
            lost_urls: l,
            lost: l as f64 / n as f64,
        })
        .max_by(|a, b| {
            a.lost
                .total_cmp(&b.lost)
                .then(a.lost_urls.cmp(&b.lost_urls))
                .then_with(|| b.host.cmp(&a.host))
        })
}

/// Metrics of no normalization, the base layer alone, and base layer + rules on the same URLs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// URLs as they are.
    pub none: Metrics,
    /// Base normalization only.
    pub base: Metrics,
    /// Base normalization and the rules.
    pub rules: Metrics,
    /// With the rules: the registrable domain that loses the largest share of its URLs.
    pub worst_host: Option<HostLost>,
    /// URLs the rules rewrote (their canonical form differs from the base layer's).
    pub rewritten: usize,
    /// Of those, the URLs whose canonical form is no URL of the evaluated data: a dedup key
    /// nobody has seen fetched (e.g. `https` on a site only seen over `http`), fine for the
    /// already-seen check, not proven as a URL to fetch.
    pub unobserved: usize,
    /// Of the rewritten URLs, those alone in their bucket with the rules: their target is
    /// absent from the test half, so whether the rewrite loses content is not judged there
    /// (see [`Comparison::lost_interval`]).
    pub unjudged: usize,
}

impl Comparison {
    /// Lost with the rules as an interval: `[judged, judged + unjudged]`, the share the test
    /// half shows lost, and that share plus the rewritten URLs it cannot judge
    /// ([`Comparison::unjudged`], over the test URLs) — each might merge with an absent,
    /// different page.
    ///
    /// ```
    /// use dedust_learn::{metrics::compare, rules::{convention_rule, Convention}, BaseOptions, Cluster};
    /// let test = vec![
    ///     Cluster { id: "a".into(), urls: vec!["http://h.org/x".into(), "https://h.org/x".into()] },
    ///     Cluster { id: "b".into(), urls: vec!["http://h.org/y".into()] },
    /// ];
    /// let c = compare(&test, vec![convention_rule(Convention::Https)], &BaseOptions::default());
    /// // `http://h.org/x` meets its pair (judged: nothing lost); `http://h.org/y` is rewritten
    /// // to a URL the test half does not hold.
    /// assert_eq!(c.unjudged, 1);
    /// assert_eq!(c.lost_interval(), (0.0, 1.0 / 3.0));
    /// ```
    pub fn lost_interval(&self) -> (f64, f64) {
        let extra = match self.rules.urls {
            0 => 0.0,
            n => self.unjudged as f64 / n as f64,
        };
        (self.rules.lost, self.rules.lost + extra)
    }
}

/// Compare no normalization, the base layer and `rules` on the URLs of `test` clusters.
///
/// URLs the base layer rejects stay their own bucket in every row.
///
/// ```
/// use dedust_learn::{compare, BaseOptions, Cluster};
/// let test = vec![Cluster { id: "a".into(), urls: vec!["http://h/x".into(), "HTTP://H/x".into()] }];
/// let c = compare(&test, vec![], &BaseOptions::default());
/// assert_eq!((c.none.reduction, c.base.reduction), (Some(0.0), Some(1.0)));
/// assert_eq!((c.rewritten, c.unobserved), (0, 0));
/// ```
pub fn compare(
    test: &[crate::Cluster],
    rules: Vec<crate::Rule>,
    base: &crate::BaseOptions,
) -> Comparison {
    compare_seen(test, rules, base, &[])
}

/// [`compare`], where the URLs of `seen` (e.g. the training part) also count as observed for
/// [`Comparison::unobserved`].
///
/// ```
/// use dedust_learn::{metrics::{compare, compare_seen}, rules::{convention_rule, Convention}, BaseOptions, Cluster};
/// let mk = |id: &str, u: &[&str]| Cluster { id: id.into(), urls: u.iter().map(|s| s.to_string()).collect() };
/// let rules = vec![convention_rule(Convention::Https)];
/// let test = vec![mk("c", &["http://h.org/z"])];
/// let base = BaseOptions::default();
/// let c = compare(&test, rules.clone(), &base);
/// assert_eq!((c.rewritten, c.unobserved), (1, 1));
/// // Seen in the training part, the output is an observed URL.
/// let seen = vec![mk("d", &["https://h.org/z"])];
/// assert_eq!(compare_seen(&test, rules, &base, &seen).unobserved, 0);
/// ```
pub fn compare_seen(
    test: &[crate::Cluster],
    rules: Vec<crate::Rule>,
    base: &crate::BaseOptions,
    seen: &[crate::Cluster],
) -> Comparison {
    let label = |c: &crate::Cluster| c.label();
    let raw: Vec<(String, usize)> = test
        .iter()
        .flat_map(|c| c.urls.iter().map(move |u| (u.clone(), label(c))))
        .collect();
    let run = |n: &crate::Normalizer| -> Vec<(String, usize)> {
        raw.iter()
            .map(|(u, c)| {
                (
                    n.normalize(u).map(|x| x.url).unwrap_or_else(|_| u.clone()),
                    *c,
                )
            })
            .collect()
    };
    let with_rules = crate::Normalizer::new(rules, Some(*base));
    let only_base = crate::Normalizer::new(vec![], Some(*base));
    let ruled = run(&with_rules);
    let based = run(&only_base);
    let domains: Vec<String> = raw
        .iter()
        .map(|(u, _)| crate::site::domain_of_url(u).unwrap_or_default())
        .collect();
    let seen: Vec<String> = seen
        .iter()
        .flat_map(|c| &c.urls)
        .filter_map(|u| crate::base_normalize(u, base).ok())
        .collect();
    let observed: std::collections::HashSet<&str> = based
        .iter()
        .map(|(u, _)| u.as_str())
        .chain(seen.iter().map(String::as_str))
        .collect();
    let changed = || ruled.iter().zip(&based).filter(|(r, b)| r.0 != b.0);
    let mut sizes: HashMap<&str, usize> = HashMap::with_capacity(ruled.len());
    for (u, _) in &ruled {
        *sizes.entry(u.as_str()).or_default() += 1;
    }
    Comparison {
        none: metrics(&raw),
        base: metrics(&based),
        rules: metrics(&ruled),
        worst_host: worst_host(&ruled, &domains),
        rewritten: changed().count(),
        unobserved: changed()
            .filter(|(r, _)| !observed.contains(r.0.as_str()))
            .count(),
        unjudged: changed().filter(|(r, _)| sizes[r.0.as_str()] == 1).count(),
    }
}

/// A share with `digits` decimals, or `n/a` when undefined (as `evaluate` and `report` print it).
///
/// ```
/// assert_eq!(dedust_learn::metrics::share(Some(0.5), 3), "0.500");
/// assert_eq!(dedust_learn::metrics::share(None, 3), "n/a");
/// ```
pub fn share(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "n/a".to_string(), |x| format!("{x:.digits$}"))
}

impl Metrics {
    /// The row every table prints (`evaluate`'s text, the report's HTML): URLs, true
    /// clusters, buckets, reduction, lost, precision, recall, with their precision
    /// (`n/a` for an undefined share).
    ///
    /// ```
    /// let m = dedust_learn::metrics(&[("a", 0), ("a", 0), ("b", 1)]);
    /// assert_eq!(m.cells(), ["3", "2", "2", "1.000", "0.0000", "1.000", "1.000"]);
    /// ```
    pub fn cells(&self) -> [String; 7] {
        [
            self.urls.to_string(),
            self.clusters.to_string(),
            self.buckets.to_string(),
            share(self.reduction, 3),
            format!("{:.4}", self.lost),
            format!("{:.3}", self.precision),
            share(self.recall, 3),
        ]
    }
}

/// Mean of several metrics (counts summed; a share undefined in some parts is the mean of the
/// others, `None` when undefined in all).
pub fn mean(ms: &[Metrics]) -> Metrics {
    let n = ms.len().max(1) as f64;
    let avg = |f: &dyn Fn(&Metrics) -> f64| ms.iter().map(f).sum::<f64>() / n;
    let avg_some = |f: &dyn Fn(&Metrics) -> Option<f64>| {
        let v: Vec<f64> = ms.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    Metrics {
        urls: ms.iter().map(|m| m.urls).sum(),
        clusters: ms.iter().map(|m| m.clusters).sum(),
        buckets: ms.iter().map(|m| m.buckets).sum(),
        reduction: avg_some(&|m| m.reduction),
        lost: avg(&|m| m.lost),
        precision: avg(&|m| m.precision),
        recall: avg_some(&|m| m.recall),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::type_complexity)]
    fn table() {
        // (assignments, reduction, lost, precision, recall)
        let cases: &[(&[(&str, usize)], Option<f64>, f64, f64, Option<f64>)] = &[
            // Identity: nothing merged.
            (
                &[("a", 0), ("b", 0), ("c", 1)],
                Some(0.0),
                0.0,
                1.0,
                Some(0.0),
            ),
            // Perfect.
            (
                &[("a", 0), ("a", 0), ("c", 1)],
                Some(1.0),
                0.0,
                1.0,
                Some(1.0),
            ),
            // One false merge: bucket a holds 0,0,1 → t* = 0.
            (
                &[("a", 0), ("a", 0), ("a", 1), ("d", 1)],
                Some(0.5),
                0.25,
                1.0 / 3.0,
                Some(0.5),
            ),
            // Split cluster: 0 in two buckets.
            (
                &[("a", 0), ("a", 0), ("b", 0), ("b", 0)],
                Some(2.0 / 3.0),
                0.0,
                1.0,
                Some(1.0 / 3.0),
            ),
            // Nothing removable: reduction and recall are undefined, not 1.
            (&[("a", 0), ("b", 1)], None, 0.0, 1.0, None),
        ];
        for (items, r, l, p, rc) in cases {
            let m = metrics(items);
            let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
            let close_opt = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => close(a, b),
                (a, b) => a == b,
            };
            assert!(
                close_opt(m.reduction, *r) && close(m.lost, *l),
                "{items:?}: {m:?}"
            );
            assert!(
                close(m.precision, *p) && close_opt(m.recall, *rc),
                "{items:?}: {m:?}"
            );
        }
    }
}
