//! Similarity: measures between page features and the filtered all-pairs join.
//!
//! In: [`Features`] of pages ([`crate::tdw`]). Out: similar pairs with their score. Measures:
//! * [`Measure::Tdw`] — cosine of the TDW vectors; a pair is similar when the Jaccard of the two
//!   term sets is at least `t` and the angle between the vectors at most θ = 180·(1 − t) degrees;
//! * [`Measure::SimScore`] — share (in %) of a page's keyword hashes found in the other; the
//!   smaller of the two directions must reach `t`·100 (bands < 60, 60–70, 70–80, > 80 %; over 80 %
//!   is a near duplicate);
//! * [`Measure::Spearman`] — Spearman's rank correlation of term-frequency ranks over the union
//!   of terms (rank 1 = least frequent present term, ties get the average rank, absent terms 0;
//!   Pearson correlation of the two rank vectors), similar at ρ ≥ `t`.
//!
//! Every measure also requires |S_i − S_k| < T_s for the sentence counts when T_s is set.
//!
//! The join ([`ppjoin`]) finds exactly the pairs with Jaccard ≥ t that the all-pairs loop
//! ([`brute_force`]) finds: records are term sets ordered rare-first (global document frequency),
//! processed by size; a record is probed with its prefix of |r| − ⌈t·|r|⌉ + 1 terms, candidates
//! must pass the size filter |s| ≥ t·|r|, and the positional filter drops a candidate as soon as
//! the overlap so far plus the most still possible, 1 + min(|r| − p, |s| − q), falls below
//! ⌈t/(1+t)·(|r| + |s|)⌉ (PPJoin, Xiao et al., WWW 2008). SimScore ≥ s implies Jaccard ≥ s/(2 − s),
//! so it is joined the same way; Spearman has no such bound and compares all pairs that pass the
//! sentence filter.

use crate::tdw::Features;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A similarity measure (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// TDW cosine with the Jaccard prefilter.
    Tdw,
    /// Keyword-hash containment.
    SimScore,
    /// Spearman's rank correlation.
    Spearman,
}

impl std::str::FromStr for Measure {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tdw" => Ok(Measure::Tdw),
            "simscore" => Ok(Measure::SimScore),
            "spearman" => Ok(Measure::Spearman),
            _ => Err(format!("unknown measure {s:?} (tdw, simscore, spearman)")),
        }
    }
}

impl std::fmt::Display for Measure {
    /// The name `--measure` takes (`tdw`, `simscore`, `spearman`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Measure::Tdw => "tdw",
            Measure::SimScore => "simscore",
            Measure::Spearman => "spearman",
        })
    }
}

/// Settings of a comparison or join.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimOptions {
    /// The measure.
    pub measure: Measure,
    /// Threshold `t` in (0, 1].
    pub threshold: f64,
    /// T_s: pairs need |S_i − S_k| < T_s (`None`: no sentence filter).
    pub max_sentence_diff: Option<usize>,
}

impl Measure {
    /// The default threshold of the measure (chosen on the forum crawl and the gov.uk /
    /// article pages; see README's verifier table).
    pub fn default_threshold(self) -> f64 {
        match self {
            Measure::Tdw => 0.9,
            Measure::SimScore => 0.95,
            Measure::Spearman => 0.9,
        }
    }
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            measure: Measure::Tdw,
            threshold: Measure::Tdw.default_threshold(),
            max_sentence_diff: None,
        }
    }
}

/// Cosine of two sparse vectors (0 when one is empty).
///
/// ```
/// use std::collections::BTreeMap;
/// let a: BTreeMap<String, f64> = [("x".into(), 1.0), ("y".into(), 1.0)].into();
/// let b: BTreeMap<String, f64> = [("x".into(), 1.0)].into();
/// assert!((dedust_content::similarity::cosine(&a, &b) - 0.5f64.sqrt()).abs() < 1e-12);
/// ```
pub fn cosine(a: &BTreeMap<String, f64>, b: &BTreeMap<String, f64>) -> f64 {
    let dot: f64 = a.iter().filter_map(|(k, x)| b.get(k).map(|y| x * y)).sum();
    let na: f64 = a.values().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.values().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        (dot / (na * nb)).clamp(-1.0, 1.0)
    }
}

/// The angle (degrees) of a cosine.
pub fn angle(cos: f64) -> f64 {
    cos.clamp(-1.0, 1.0).acos().to_degrees()
}

/// θ = 180·(1 − t): the largest angle of a similar pair for threshold `t`.
///
/// ```
/// assert!((dedust_content::similarity::theta(0.9) - 18.0).abs() < 1e-9);
/// ```
pub fn theta(t: f64) -> f64 {
    180.0 * (1.0 - t)
}

/// SimScore: percentage of `a`'s keyword hashes present in `b` (0 for an empty `a`).
///
/// ```
/// use std::collections::BTreeSet;
/// let a: BTreeSet<u64> = [1, 2, 3, 4].into();
/// let b: BTreeSet<u64> = [1, 2, 3, 9].into();
/// assert_eq!(dedust_content::similarity::simscore(&a, &b), 75.0);
/// assert_eq!(dedust_content::similarity::simscore_band(75.0), "70-80");
/// ```
pub fn simscore(a: &BTreeSet<u64>, b: &BTreeSet<u64>) -> f64 {
    if a.is_empty() {
        return 0.0;
    }
    100.0 * a.intersection(b).count() as f64 / a.len() as f64
}

/// The SimScore band: `<60`, `60-70`, `70-80` or `>80` (near duplicate).
pub fn simscore_band(s: f64) -> &'static str {
    if s < 60.0 {
        "<60"
    } else if s < 70.0 {
        "60-70"
    } else if s <= 80.0 {
        "70-80"
    } else {
        ">80"
    }
}

/// Keyword hashes of a page: FNV-1a of each term.
pub fn keywords(f: &Features) -> BTreeSet<u64> {
    f.tdw.keys().map(|t| crate::hash::fnv(t)).collect()
}

/// Ranks of the values, 1 = smallest, ties averaged.
fn ranks(values: &[(String, u32)]) -> HashMap<&str, f64> {
    let mut v: Vec<&(String, u32)> = values.iter().collect();
    v.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut out = HashMap::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1].1 == v[i].1 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        for x in &v[i..=j] {
            out.insert(x.0.as_str(), r);
        }
        i = j + 1;
    }
    out
}

/// Spearman's rank correlation of two term-frequency maps (see the module docs); 0 when either
/// rank vector is constant.
///
/// ```
/// use std::collections::BTreeMap;
/// let tf = |v: &[(&str, u32)]| v.iter().map(|(k, n)| (k.to_string(), *n)).collect::<BTreeMap<_, _>>();
/// // Union w x y z; a ranks 0 3 1.5 1.5, b ranks 1 2.5 2.5 0: ρ = 2.25 / 4.5.
/// let rho = dedust_content::similarity::spearman(&tf(&[("x", 3), ("y", 1), ("z", 1)]), &tf(&[("x", 2), ("y", 2), ("w", 1)]));
/// assert!((rho - 0.5).abs() < 1e-12);
/// ```
pub fn spearman(a: &BTreeMap<String, u32>, b: &BTreeMap<String, u32>) -> f64 {
    let va: Vec<(String, u32)> = a.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let vb: Vec<(String, u32)> = b.iter().map(|(k, v)| (k.clone(), *v)).collect();
    let (ra, rb) = (ranks(&va), ranks(&vb));
    let union: BTreeSet<&str> = a.keys().chain(b.keys()).map(String::as_str).collect();
    let n = union.len() as f64;
    if n == 0.0 {
        return 0.0;
    }
    let xa: Vec<f64> = union.iter().map(|t| *ra.get(t).unwrap_or(&0.0)).collect();
    let xb: Vec<f64> = union.iter().map(|t| *rb.get(t).unwrap_or(&0.0)).collect();
    let ma = xa.iter().sum::<f64>() / n;
    let mb = xb.iter().sum::<f64>() / n;
    let cov: f64 = xa.iter().zip(&xb).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let sa: f64 = xa.iter().map(|x| (x - ma) * (x - ma)).sum();
    let sb: f64 = xb.iter().map(|y| (y - mb) * (y - mb)).sum();
    if sa == 0.0 || sb == 0.0 {
        return 0.0;
    }
    cov / (sa * sb).sqrt()
}

/// Domain-dictionary relevance: +1 for each term occurrence in `dict`, −1 for each other one.
///
/// ```
/// use std::collections::{BTreeMap, BTreeSet};
/// let tf: BTreeMap<String, u32> = [("linux".into(), 2), ("cake".into(), 1)].into();
/// let dict: BTreeSet<String> = ["linux".to_string()].into();
/// assert_eq!(dedust_content::similarity::relevance(&tf, &dict), 1);
/// ```
pub fn relevance(tf: &BTreeMap<String, u32>, dict: &BTreeSet<String>) -> i64 {
    tf.iter()
        .map(|(t, n)| {
            if dict.contains(t) {
                i64::from(*n)
            } else {
                -i64::from(*n)
            }
        })
        .sum()
}

/// ⌈x⌉ robust to float noise just above an integer.
fn ceil(x: f64) -> usize {
    (x - 1e-9).ceil().max(0.0) as usize
}

/// Overlap of two sorted token lists.
fn overlap(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut o) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                o += 1;
                i += 1;
                j += 1;
            }
        }
    }
    o
}

/// Jaccard ≥ t for overlap `o` of sets of sizes `la`, `lb` (o / (la + lb − o) ≥ t).
fn jaccard_ok(o: usize, la: usize, lb: usize, t: f64) -> bool {
    o >= ceil(t / (1.0 + t) * (la + lb) as f64)
}

/// Work done by a join.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JoinStats {
    /// Records joined.
    pub records: usize,
    /// Pairs whose overlap was computed in full.
    pub verified: usize,
    /// Pairs found.
    pub found: usize,
}

fn sentences_ok(s: &[usize], a: usize, b: usize, ts: Option<usize>) -> bool {
    ts.is_none_or(|ts| s[a].abs_diff(s[b]) < ts)
}

/// All pairs `(i, j)`, `i < j`, with Jaccard(records i, j) ≥ `t` and sentence counts closer than
/// `ts` — by comparing every pair (the reference for [`ppjoin`]). Empty records pair with nothing.
///
/// # Complexity
/// O(n² · L) for n records of length ≤ L.
pub fn brute_force(
    records: &[Vec<u32>],
    sentences: &[usize],
    t: f64,
    ts: Option<usize>,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..records.len() {
        for j in i + 1..records.len() {
            let (a, b) = (&records[i], &records[j]);
            if a.is_empty() || b.is_empty() || !sentences_ok(sentences, i, j, ts) {
                continue;
            }
            if jaccard_ok(overlap(a, b), a.len(), b.len(), t) {
                out.push((i, j));
            }
        }
    }
    out
}

/// The same pairs as [`brute_force`], found with size, prefix and positional filtering.
/// `records` are sorted token lists in one global order (rarest token first works best).
///
/// # Complexity
/// O(Σ prefix-list lengths + verified pairs · L); near-linear when rare tokens separate pages.
///
/// ```
/// use dedust_content::similarity::{brute_force, ppjoin};
/// let r = vec![vec![1, 2, 3, 4], vec![1, 2, 3, 5], vec![6, 7, 8, 9], vec![1, 2, 3, 4, 5]];
/// let s = vec![0; 4];
/// let (pairs, _) = ppjoin(&r, &s, 0.6, None);
/// assert_eq!(pairs, brute_force(&r, &s, 0.6, None));
/// assert_eq!(pairs, vec![(0, 1), (0, 3), (1, 3)]);
/// ```
pub fn ppjoin(
    records: &[Vec<u32>],
    sentences: &[usize],
    t: f64,
    ts: Option<usize>,
) -> (Vec<(usize, usize)>, JoinStats) {
    ppjoin_with(records, sentences, t, ts, Filters::ALL)
}

/// Which filters [`ppjoin_with`] applies (each one alone must not change the result).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filters {
    /// Size filter |s| ≥ t·|r|.
    pub size: bool,
    /// Probe and index only the prefix (otherwise every term).
    pub prefix: bool,
    /// Positional filter.
    pub positional: bool,
}

impl Filters {
    /// All filters on.
    pub const ALL: Filters = Filters {
        size: true,
        prefix: true,
        positional: true,
    };
}

/// [`ppjoin`] with a choice of filters (for tests and measurements).
pub fn ppjoin_with(
    records: &[Vec<u32>],
    sentences: &[usize],
    t: f64,
    ts: Option<usize>,
    filters: Filters,
) -> (Vec<(usize, usize)>, JoinStats) {
    assert!(t > 0.0 && t <= 1.0, "threshold must be in (0, 1]");
    let mut order: Vec<usize> = (0..records.len())
        .filter(|&i| !records[i].is_empty())
        .collect();
    order.sort_by_key(|&i| (records[i].len(), i));
    let mut index: HashMap<u32, Vec<(u32, u32)>> = HashMap::new();
    let mut acc: Vec<i64> = vec![0; records.len()];
    const PRUNED: i64 = i64::MIN / 2;
    let mut touched: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut stats = JoinStats {
        records: order.len(),
        ..Default::default()
    };
    for &x in &order {
        let rx = &records[x];
        let lx = rx.len();
        let prefix = if filters.prefix {
            (lx + 1 - ceil(t * lx as f64)).min(lx)
        } else {
            lx
        };
        let min_size = if filters.size {
            t * lx as f64 - 1e-9
        } else {
            0.0
        };
        for (i, w) in rx.iter().take(prefix).enumerate() {
            let Some(list) = index.get(w) else { continue };
            for &(y, j) in list {
                let (y, j) = (y as usize, j as usize);
                let ly = records[y].len();
                if (ly as f64) < min_size || acc[y] == PRUNED {
                    continue;
                }
                if acc[y] == 0 {
                    touched.push(y);
                }
                let alpha = ceil(t / (1.0 + t) * (lx + ly) as f64) as i64;
                let ubound = 1 + (lx - i - 1).min(ly - j - 1) as i64;
                if !filters.positional || acc[y] + ubound >= alpha {
                    acc[y] += 1;
                } else {
                    acc[y] = PRUNED;
                }
            }
        }
        for &y in &touched {
            if acc[y] > 0 && sentences_ok(sentences, x, y, ts) {
                stats.verified += 1;
                let ry = &records[y];
                if jaccard_ok(overlap(rx, ry), lx, ry.len(), t) {
                    out.push((x.min(y), x.max(y)));
                }
            }
            acc[y] = 0;
        }
        touched.clear();
        for (i, w) in rx.iter().take(prefix).enumerate() {
            index.entry(*w).or_default().push((x as u32, i as u32));
        }
    }
    out.sort_unstable();
    stats.found = out.len();
    (out, stats)
}

/// Term sets of pages as token lists in one rare-first order (document frequency, then term).
pub fn records(pages: &[Features]) -> Vec<Vec<u32>> {
    weighted_records(pages)
        .into_iter()
        .map(|r| r.into_iter().map(|x| x.0).collect())
        .collect()
}

/// [`records`] with each term's TDW weight.
fn weighted_records(pages: &[Features]) -> Vec<Vec<(u32, f64)>> {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for p in pages {
        for t in p.tdw.keys() {
            *df.entry(t.as_str()).or_insert(0) += 1;
        }
    }
    let mut terms: Vec<(&str, usize)> = df.into_iter().collect();
    terms.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
    let id: HashMap<&str, u32> = terms
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (*t, i as u32))
        .collect();
    pages
        .iter()
        .map(|p| {
            let mut v: Vec<(u32, f64)> = p.tdw.iter().map(|(t, w)| (id[t.as_str()], *w)).collect();
            v.sort_unstable_by_key(|x| x.0);
            v
        })
        .collect()
}

/// (common terms, dot product) of two weighted records sorted by term id.
fn sparse_dot(a: &[(u32, f64)], b: &[(u32, f64)]) -> (usize, f64) {
    let (mut i, mut j, mut common, mut dot) = (0, 0, 0usize, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                dot += a[i].1 * b[j].1;
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    (common, dot)
}

/// Cosine of two weighted records sorted by term id, given their norms.
fn sparse_cosine(a: &[(u32, f64)], b: &[(u32, f64)], na: f64, nb: f64) -> f64 {
    let dot = sparse_dot(a, b).1;
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        (dot / (na * nb)).clamp(-1.0, 1.0)
    }
}

/// Score of a pair under a measure: cosine (Tdw), the smaller SimScore in % (SimScore), ρ
/// (Spearman); and whether the pair is similar (the Jaccard and sentence conditions included).
pub fn compare(a: &Features, b: &Features, o: &SimOptions) -> (bool, f64) {
    if o.max_sentence_diff
        .is_some_and(|ts| a.sentences.abs_diff(b.sentences) >= ts)
    {
        return (false, score(a, b, o.measure));
    }
    let s = score(a, b, o.measure);
    let ok = match o.measure {
        Measure::Tdw => {
            let (ka, kb): (BTreeSet<&String>, BTreeSet<&String>) =
                (a.tdw.keys().collect(), b.tdw.keys().collect());
            let ov = ka.intersection(&kb).count();
            !ka.is_empty()
                && !kb.is_empty()
                && jaccard_ok(ov, ka.len(), kb.len(), o.threshold)
                && angle(s) <= theta(o.threshold) + 1e-9
        }
        Measure::SimScore => s >= 100.0 * o.threshold - 1e-9,
        Measure::Spearman => s >= o.threshold - 1e-12,
    };
    (ok, s)
}

fn score(a: &Features, b: &Features, m: Measure) -> f64 {
    match m {
        Measure::Tdw => cosine(&a.tdw, &b.tdw),
        Measure::SimScore => {
            let (ka, kb) = (keywords(a), keywords(b));
            simscore(&ka, &kb).min(simscore(&kb, &ka))
        }
        Measure::Spearman => spearman(&a.tf, &b.tf),
    }
}

/// A page's term ranks (by term id) with the sums Spearman's ρ needs.
struct Ranked {
    ranks: Vec<(u32, f64)>,
    sum: f64,
    sum_sq: f64,
}

impl Ranked {
    /// ρ of two pages: Pearson over the union of terms, absent terms ranked 0.
    fn rho(&self, o: &Ranked) -> f64 {
        let (a, b) = (&self.ranks, &o.ranks);
        let (common, sxy) = sparse_dot(a, b);
        let n = (a.len() + b.len() - common) as f64;
        if n == 0.0 {
            return 0.0;
        }
        let cov = sxy - self.sum * o.sum / n;
        let va = self.sum_sq - self.sum * self.sum / n;
        let vb = o.sum_sq - o.sum * o.sum / n;
        if va <= 1e-12 || vb <= 1e-12 {
            return 0.0;
        }
        cov / (va * vb).sqrt()
    }
}

fn rank_vectors(pages: &[Features]) -> Vec<Ranked> {
    let mut id: HashMap<&str, u32> = HashMap::new();
    for p in pages {
        for t in p.tf.keys() {
            let n = id.len() as u32;
            id.entry(t.as_str()).or_insert(n);
        }
    }
    pages
        .iter()
        .map(|p| {
            let v: Vec<(String, u32)> = p.tf.iter().map(|(k, n)| (k.clone(), *n)).collect();
            let r = ranks(&v);
            let mut ranks: Vec<(u32, f64)> = r.iter().map(|(t, x)| (id[t], *x)).collect();
            ranks.sort_by_key(|x| x.0);
            let sum = ranks.iter().map(|x| x.1).sum();
            let sum_sq = ranks.iter().map(|x| x.1 * x.1).sum();
            Ranked { ranks, sum, sum_sq }
        })
        .collect()
}

/// All similar pairs of `pages` `(i, j, score)`, `i < j`, with the join's work counts.
pub fn similar_pairs(pages: &[Features], o: &SimOptions) -> (Vec<(usize, usize, f64)>, JoinStats) {
    let sentences: Vec<usize> = pages.iter().map(|p| p.sentences).collect();
    let weighted = weighted_records(pages);
    let recs: Vec<Vec<u32>> = weighted
        .iter()
        .map(|r| r.iter().map(|x| x.0).collect())
        .collect();
    let (cands, stats) = match o.measure {
        Measure::Tdw => ppjoin(&recs, &sentences, o.threshold, o.max_sentence_diff),
        Measure::SimScore => {
            let s = o.threshold;
            ppjoin(&recs, &sentences, s / (2.0 - s), o.max_sentence_diff)
        }
        Measure::Spearman => {
            // No set bound exists for ρ: every pair that passes the sentence filter, with the
            // rank vectors prepared once per page (a pair then costs one merge).
            let ranked = rank_vectors(pages);
            let n = pages.len();
            use rayon::prelude::*;
            let out: Vec<(usize, usize, f64)> = (0..n)
                .into_par_iter()
                .flat_map_iter(|i| {
                    let ranked = &ranked;
                    let sentences = &sentences;
                    (i + 1..n).filter_map(move |j| {
                        if !sentences_ok(sentences, i, j, o.max_sentence_diff) {
                            return None;
                        }
                        let rho = ranked[i].rho(&ranked[j]);
                        (rho >= o.threshold - 1e-12).then_some((i, j, rho))
                    })
                })
                .collect();
            let stats = JoinStats {
                records: n,
                verified: n * n.saturating_sub(1) / 2,
                found: out.len(),
            };
            return (out, stats);
        }
    };
    // The join already checked the sentence filter and Jaccard ≥ t; what is left is cheap.
    use rayon::prelude::*;
    let norms: Vec<f64> = weighted
        .iter()
        .map(|r| r.iter().map(|x| x.1 * x.1).sum::<f64>().sqrt())
        .collect();
    let out: Vec<(usize, usize, f64)> = cands
        .par_iter()
        .filter_map(|&(i, j)| match o.measure {
            Measure::Tdw => {
                let c = sparse_cosine(&weighted[i], &weighted[j], norms[i], norms[j]);
                (angle(c) <= theta(o.threshold) + 1e-9).then_some((i, j, c))
            }
            _ => {
                let ov = overlap(&recs[i], &recs[j]) as f64;
                let s = 100.0 * ov / recs[i].len().max(recs[j].len()) as f64;
                (s >= 100.0 * o.threshold - 1e-9).then_some((i, j, s))
            }
        })
        .collect();
    let stats = JoinStats {
        found: out.len(),
        ..stats
    };
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_records(n: usize, vocab: u32, seed: u64) -> (Vec<Vec<u32>>, Vec<usize>) {
        let mut s = seed;
        let mut next = |m: u64| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) % m
        };
        let mut recs: Vec<Vec<u32>> = Vec::new();
        for i in 0..n {
            // Half the records are noisy copies of an earlier one, so many pairs are near.
            let mut r: BTreeSet<u32> = if i > 0 && next(2) == 0 {
                let base = recs[next(i as u64) as usize].clone();
                base.into_iter().filter(|_| next(10) != 0).collect()
            } else {
                BTreeSet::new()
            };
            for _ in 0..next(12) {
                r.insert(next(u64::from(vocab)) as u32);
            }
            recs.push(r.into_iter().collect());
        }
        let sentences = (0..n).map(|_| next(6) as usize).collect();
        (recs, sentences)
    }

    #[test]
    fn ppjoin_equals_brute_force() {
        for (seed, t, ts) in [
            (1, 0.5, None),
            (2, 0.8, None),
            (3, 0.9, Some(2)),
            (4, 1.0, None),
            (5, 0.3, Some(4)),
            (6, 0.65, None),
        ] {
            let (r, s) = random_records(300, 60, seed);
            let (fast, stats) = ppjoin(&r, &s, t, ts);
            let slow = brute_force(&r, &s, t, ts);
            assert_eq!(fast, slow, "seed {seed} t {t}");
            assert!(!slow.is_empty(), "seed {seed}: the case proves nothing");
            assert!(stats.verified <= 300 * 299 / 2);
        }
    }

    #[test]
    fn each_filter_alone_is_exact() {
        let (r, s) = random_records(200, 40, 9);
        for t in [0.4, 0.7, 0.9] {
            let want = brute_force(&r, &s, t, Some(3));
            let mut work = Vec::new();
            for bits in 0..8u8 {
                let f = Filters {
                    size: bits & 1 != 0,
                    prefix: bits & 2 != 0,
                    positional: bits & 4 != 0,
                };
                let (got, st) = ppjoin_with(&r, &s, t, Some(3), f);
                assert_eq!(got, want, "{f:?} t {t}");
                work.push(st.verified);
            }
            // All filters on verify no more pairs than none at all.
            assert!(work[7] <= work[0], "t {t}: {work:?}");
        }
    }

    #[test]
    fn measures_table() {
        let page = |pairs: &[(&str, u32)], sentences| Features {
            url: String::new(),
            tdw: pairs
                .iter()
                .map(|(k, n)| (k.to_string(), f64::from(*n)))
                .collect(),
            tf: pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            sentences,
        };
        let a = page(&[("x", 3), ("y", 1), ("z", 1)], 5);
        let b = page(&[("x", 3), ("y", 1), ("z", 1)], 5);
        let c = page(&[("x", 1), ("q", 4)], 9);
        let o = |m, t, ts| SimOptions {
            measure: m,
            threshold: t,
            max_sentence_diff: ts,
        };
        // (a, b, options, similar?)
        let cases = [
            (&a, &b, o(Measure::Tdw, 0.9, None), true),
            (&a, &c, o(Measure::Tdw, 0.5, None), false),
            (&a, &c, o(Measure::Tdw, 0.2, None), true),
            (&a, &b, o(Measure::SimScore, 0.8, None), true),
            (&a, &c, o(Measure::SimScore, 0.3, None), true),
            (&a, &c, o(Measure::SimScore, 0.4, None), false),
            (&a, &b, o(Measure::Spearman, 0.99, None), true),
            (&a, &c, o(Measure::Spearman, 0.0, None), false),
            (&a, &c, o(Measure::SimScore, 0.3, Some(4)), false),
            (&a, &c, o(Measure::SimScore, 0.3, Some(5)), true),
        ];
        for (x, y, opts, want) in cases {
            assert_eq!(compare(x, y, &opts).0, want, "{opts:?}");
        }
        // Identical vectors: angle 0; orthogonal: 90.
        assert!(angle(cosine(&a.tdw, &b.tdw)).abs() < 1e-6);
        let d = page(&[("w", 1)], 0);
        assert!((angle(cosine(&a.tdw, &d.tdw)) - 90.0).abs() < 1e-9);
    }

    #[test]
    fn fast_spearman_equals_the_definition() {
        let mk = |v: &[(&str, u32)]| Features {
            url: String::new(),
            tdw: v
                .iter()
                .map(|(k, n)| (k.to_string(), f64::from(*n)))
                .collect(),
            tf: v.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
            sentences: 0,
        };
        let pages = vec![
            mk(&[("x", 3), ("y", 1), ("z", 1)]),
            mk(&[("x", 2), ("y", 2), ("w", 1)]),
            mk(&[("a", 5), ("x", 1), ("q", 2), ("r", 2)]),
            mk(&[("x", 3), ("y", 1), ("z", 1)]),
        ];
        let r = rank_vectors(&pages);
        for i in 0..pages.len() {
            for j in 0..pages.len() {
                let slow = spearman(&pages[i].tf, &pages[j].tf);
                assert!((r[i].rho(&r[j]) - slow).abs() < 1e-9, "{i} {j}");
            }
        }
    }

    #[test]
    fn join_equals_pairwise_compare() {
        let mut pages = Vec::new();
        let words = [
            "ant", "bee", "cat", "dog", "eel", "fox", "gnu", "hen", "ibis", "jay",
        ];
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..120 {
            let mut tdw = BTreeMap::new();
            let mut tf = BTreeMap::new();
            for _ in 0..1 + next(7) {
                let w = words[next(words.len() as u64) as usize].to_string();
                let n = 1 + next(3) as u32;
                *tdw.entry(w.clone()).or_insert(0.0) +=
                    f64::from(n) * [0.5, 1.0, 2.0][next(3) as usize];
                *tf.entry(w).or_insert(0) += n;
            }
            pages.push(Features {
                url: String::new(),
                tdw,
                tf,
                sentences: next(4) as usize,
            });
        }
        for m in [Measure::Tdw, Measure::SimScore, Measure::Spearman] {
            for t in [0.5, 0.75, 0.9] {
                let o = SimOptions {
                    measure: m,
                    threshold: t,
                    max_sentence_diff: Some(2),
                };
                let (fast, _) = similar_pairs(&pages, &o);
                let fast: Vec<(usize, usize)> = fast.into_iter().map(|(i, j, _)| (i, j)).collect();
                let mut slow = Vec::new();
                for i in 0..pages.len() {
                    for j in i + 1..pages.len() {
                        if compare(&pages[i], &pages[j], &o).0 {
                            slow.push((i, j));
                        }
                    }
                }
                assert_eq!(fast, slow, "{m:?} {t}");
                assert!(!slow.is_empty(), "{m:?} {t}: proves nothing");
            }
        }
    }

    #[test]
    fn bands() {
        for (s, b) in [
            (10.0, "<60"),
            (60.0, "60-70"),
            (79.9, "70-80"),
            (80.0, "70-80"),
            (80.1, ">80"),
        ] {
            assert_eq!(simscore_band(s), b);
        }
    }
}
