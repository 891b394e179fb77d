//! Cluster: duplicate clusters from page content, and agreement with other clusterings.
//!
//! In: [`Page`]s. Out: [`Cluster`]s — connected components of the similarity join
//! ([`crate::similarity::similar_pairs`]) — in the form `learn` reads (every page's URL appears,
//! singletons included, so validation sees the pages that have no duplicate). Invariants: the
//! output is deterministic (components named by their smallest URL, sorted); a URL captured
//! several times belongs to one cluster (captures of one URL are joined).
//!
//! # Complexity
//! Feature extraction O(total HTML) in parallel; the join as in [`crate::similarity::ppjoin`];
//! components by union-find in O(pairs · α(n)).

use crate::model::Cluster;
use crate::pages::Page;
use crate::similarity::{similar_pairs, JoinStats, SimOptions};
use crate::tdw::{features, Features, Weights};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Union-find with path halving.
struct Dsu(Vec<usize>);

impl Dsu {
    fn find(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }
}

/// Features of every page, in parallel.
pub fn page_features(pages: &[Page], w: &Weights) -> Vec<Features> {
    page_features_with(pages, w, &|| {})
}

/// [`page_features`], calling `done` once per page whose features are extracted (from the
/// worker threads; for a progress bar).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let pages = vec![dedust_content::Page { url: "https://h.org/a".into(), html: "<p>one</p>".into(), origin: "x".into() }];
/// let n = AtomicUsize::new(0);
/// let f = dedust_content::cluster::page_features_with(&pages, &Default::default(), &|| {
///     n.fetch_add(1, Ordering::Relaxed);
/// });
/// assert_eq!((f.len(), n.into_inner()), (1, 1));
/// ```
pub fn page_features_with(pages: &[Page], w: &Weights, done: &(dyn Fn() + Sync)) -> Vec<Features> {
    pages
        .par_iter()
        .map(|p| {
            let f = features(&p.url, &p.html, w);
            done();
            f
        })
        .collect()
}

/// Duplicate clusters of `pages` (see the module docs), with the join's work counts.
///
/// ```
/// use dedust_content::{pages::Page, cluster::cluster_pages};
/// let page = |u: &str, body: &str| Page { url: u.into(), html: format!("<p>{body}</p>"), origin: String::new() };
/// let pages = vec![
///     page("http://a.org/1", "zebras graze on the wide savanna at dawn"),
///     page("http://a.org/1?s=9", "zebras graze on the wide savanna at dawn"),
///     page("http://a.org/2", "quantum computers factor large numbers quickly"),
/// ];
/// let (clusters, _) = cluster_pages(&pages, &Default::default(), &Default::default());
/// assert_eq!(clusters.len(), 2);
/// assert_eq!(clusters[0].urls, vec!["http://a.org/1", "http://a.org/1?s=9"]);
/// ```
pub fn cluster_pages(pages: &[Page], o: &SimOptions, w: &Weights) -> (Vec<Cluster>, JoinStats) {
    clusters_from_features(pages, &page_features(pages, w), o)
}

/// [`cluster_pages`] with the features already extracted (`feats[i]` belongs to `pages[i]`).
pub fn clusters_from_features(
    pages: &[Page],
    feats: &[Features],
    o: &SimOptions,
) -> (Vec<Cluster>, JoinStats) {
    // Pages with identical content (soft 404s, login walls: thousands of one page) are joined
    // once: the join runs on one page per identical group, whose members then follow it.
    let groups = identical_groups(feats);
    let mut dsu = Dsu((0..pages.len()).collect());
    let stats = if groups.iter().all(|g| g.len() == 1) {
        let (pairs, stats) = similar_pairs(feats, o);
        for (i, j, _) in &pairs {
            dsu.union(*i, *j);
        }
        stats
    } else {
        let reps: Vec<Features> = groups.iter().map(|g| feats[g[0]].clone()).collect();
        let (pairs, stats) = similar_pairs(&reps, o);
        for (i, j, _) in &pairs {
            dsu.union(groups[*i][0], groups[*j][0]);
        }
        for g in groups.iter().filter(|g| g.len() > 1) {
            if crate::similarity::compare(&feats[g[0]], &feats[g[0]], o).0 {
                for &m in &g[1..] {
                    dsu.union(g[0], m);
                }
            }
        }
        stats
    };
    // Captures of one URL belong together.
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, p) in pages.iter().enumerate() {
        match first.get(p.url.as_str()) {
            Some(&k) => dsu.union(i, k),
            None => {
                first.insert(&p.url, i);
            }
        }
    }
    let mut comps: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, p) in pages.iter().enumerate() {
        comps.entry(dsu.find(i)).or_default().push(p.url.clone());
    }
    let mut clusters: Vec<Cluster> = comps
        .into_values()
        .map(|mut urls| {
            urls.sort();
            urls.dedup();
            Cluster {
                id: String::new(),
                urls,
            }
        })
        .collect();
    clusters.sort_by(|a, b| a.urls.cmp(&b.urls));
    for (k, c) in clusters.iter_mut().enumerate() {
        c.id = format!("c{k}");
    }
    (clusters, stats)
}

/// Indices of `feats` grouped by identical content (term vectors and sentence count; the URL
/// is ignored), groups in order of their first member.
///
/// # Complexity
/// `O(total features)` to hash, plus a full comparison per page against its group's first.
fn identical_groups(feats: &[Features]) -> Vec<Vec<usize>> {
    use std::hash::{Hash, Hasher};
    let key = |f: &Features| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        f.sentences.hash(&mut h);
        for (t, n) in &f.tf {
            t.hash(&mut h);
            n.hash(&mut h);
        }
        for (t, w) in &f.tdw {
            t.hash(&mut h);
            w.to_bits().hash(&mut h);
        }
        h.finish()
    };
    let same =
        |a: &Features, b: &Features| a.sentences == b.sentences && a.tf == b.tf && a.tdw == b.tdw;
    let keys: Vec<u64> = feats.par_iter().map(key).collect();
    let mut by_key: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, k) in keys.into_iter().enumerate() {
        let slot = by_key.entry(k).or_default();
        match slot
            .iter()
            .find(|&&g| same(&feats[groups[g][0]], &feats[i]))
        {
            Some(&g) => groups[g].push(i),
            None => {
                slot.push(groups.len());
                groups.push(vec![i]);
            }
        }
    }
    groups
}

/// Pairwise agreement of `pred` with `truth` over the URLs both contain: (precision, recall) of
/// the URL pairs put together (1.0 when there is nothing to get wrong).
///
/// ```
/// use dedust_content::cluster::pair_agreement;
/// use dedust_core::Cluster;
/// let c = |id: &str, u: &[&str]| Cluster { id: id.into(), urls: u.iter().map(|s| s.to_string()).collect() };
/// let truth = vec![c("t1", &["a", "b", "c"]), c("t2", &["d"])];
/// let pred = vec![c("p1", &["a", "b"]), c("p2", &["c", "d"])];
/// // pred pairs: ab (right), cd (wrong); truth pairs: ab ac bc.
/// assert_eq!(pair_agreement(&pred, &truth), (0.5, 1.0 / 3.0));
/// ```
pub fn pair_agreement(pred: &[Cluster], truth: &[Cluster]) -> (f64, f64) {
    let label = |cs: &[Cluster]| -> HashMap<String, usize> {
        let mut m = HashMap::new();
        for (k, c) in cs.iter().enumerate() {
            for u in &c.urls {
                m.insert(u.clone(), k);
            }
        }
        m
    };
    let (lp, lt) = (label(pred), label(truth));
    let common: HashSet<&String> = lp.keys().filter(|u| lt.contains_key(*u)).collect();
    let groups = |l: &HashMap<String, usize>| -> HashMap<usize, Vec<&String>> {
        let mut g: HashMap<usize, Vec<&String>> = HashMap::new();
        for u in &common {
            g.entry(l[*u]).or_default().push(u);
        }
        g
    };
    let pairs = |g: &HashMap<usize, Vec<&String>>| -> usize {
        g.values()
            .map(|v| v.len() * (v.len().saturating_sub(1)) / 2)
            .sum()
    };
    let (gp, gt) = (groups(&lp), groups(&lt));
    let (np, nt) = (pairs(&gp), pairs(&gt));
    // Pairs together in both: for each (pred, truth) label combination, C(n, 2).
    let mut both: HashMap<(usize, usize), usize> = HashMap::new();
    for u in &common {
        *both.entry((lp[*u], lt[*u])).or_insert(0) += 1;
    }
    let tp: usize = both.values().map(|n| n * n.saturating_sub(1) / 2).sum();
    let p = if np == 0 { 1.0 } else { tp as f64 / np as f64 };
    let r = if nt == 0 { 1.0 } else { tp as f64 / nt as f64 };
    (p, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #10: identical pages (a soft 404 served under thousands of URLs) are joined once;
    /// the clusters are those of the join over every page.
    #[test]
    fn identical_pages_are_joined_once_with_the_same_clusters() {
        let page = |u: String, body: &str| Page {
            url: u,
            html: body.to_string(),
            origin: String::new(),
        };
        let wall = "<p>please log in to see this page of the forum members area</p>";
        let mut pages: Vec<Page> = (0..300)
            .map(|i| page(format!("http://s.org/?id={i}"), wall))
            .collect();
        pages.push(page(
            "http://s.org/a".into(),
            "<p>zebras graze on the savanna at dawn</p>",
        ));
        pages.push(page(
            "http://s.org/a?x=1".into(),
            "<p>zebras graze on the savanna at dawn!</p>",
        ));
        pages.push(page("http://s.org/e1".into(), ""));
        pages.push(page("http://s.org/e2".into(), ""));
        pages.push(page(
            "http://s.org/b".into(),
            "<p>quantum computers factor numbers</p>",
        ));
        let w = Weights::default();
        let feats = page_features(&pages, &w);
        for m in ["tdw", "simscore", "spearman"] {
            let measure: crate::similarity::Measure = m.parse().unwrap();
            let o = SimOptions {
                measure,
                threshold: measure.default_threshold(),
                max_sentence_diff: None,
            };
            let (got, stats) = clusters_from_features(&pages, &feats, &o);
            // The reference: the join over every page.
            let (pairs, _) = similar_pairs(&feats, &o);
            let mut dsu = Dsu((0..pages.len()).collect());
            for (i, j, _) in &pairs {
                dsu.union(*i, *j);
            }
            let mut want: BTreeMap<usize, Vec<String>> = BTreeMap::new();
            for (i, p) in pages.iter().enumerate() {
                want.entry(dsu.find(i)).or_default().push(p.url.clone());
            }
            let mut want: Vec<Vec<String>> = want
                .into_values()
                .map(|mut v| {
                    v.sort();
                    v
                })
                .collect();
            want.sort();
            let got: Vec<Vec<String>> = got.into_iter().map(|c| c.urls).collect();
            assert_eq!(got, want, "{m}");
            // (Spearman finds no order in a page whose terms all occur once.)
            if m != "spearman" {
                assert!(got.iter().any(|c| c.len() == 300), "{m}");
            }
            assert_eq!(stats.records, 5, "{m}: one record per distinct content");
        }
    }
}
