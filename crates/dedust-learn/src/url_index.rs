//! URL index: the labelled URLs a rule may match, so validation and selection visit only those.
//!
//! In: the labelled URLs (validation then reference URLs, as one list) and whether cross-host
//! rules will ask (`features`). Out: a [`UrlIndex`] holding, per URL, its host and first path
//! segment as interned ids, and lists of URL indices: a host's URLs, a first segment's URLs
//! and (with `features`) an exposure feature's URLs ([`Feature`]: `param:NAME`, `http`, `www`,
//! …). [`UrlIndex::candidates`] picks a rule's list.
//!
//! Invariants: every list of one kind is a range of one array, built by a counting sort at its
//! exact size (no `Vec` per list, no growth slack: about 4 bytes a URL per list kind and per
//! id array); the lists of a first segment and of a feature are ascending (a cross-host rule's
//! merges rely on it); a host's list holds each of its URLs once, ordered by (first-segment id,
//! index) — ids numbered as first met, not in text order — so the URLs of one (host, first
//! segment) are a range of it, found by binary search. A URL that does not split is on no list.

use crate::rules::{Rule, RuleKind};
use crate::tier::{parts_exposure, rule_feature, Feature};
use crate::tokenize::split_url;
use foldhash::{HashMap, HashSet};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::hash::Hash;

/// No id: the first segment of a URL that does not split, and (from
/// [`UrlIndex::required_first`]) a first segment no URL has. Both mean "matches no list": feature
/// lists hold only URLs that split.
const NONE: u32 = u32::MAX;

/// URLs indexed in one task (the build runs chunks in parallel).
const CHUNK: usize = 1 << 15;

/// Distinct keys and their ids, numbered as first met.
pub(crate) struct Names<K> {
    /// Key → id.
    pub(crate) ids: HashMap<K, u32>,
    /// Id → key.
    pub(crate) names: Vec<K>,
}

impl<K> Default for Names<K> {
    fn default() -> Names<K> {
        Names {
            ids: HashMap::default(),
            names: Vec::new(),
        }
    }
}

impl<K: Copy + Eq + Hash> Names<K> {
    /// The id of `k`, given a new one when first seen.
    pub(crate) fn intern(&mut self, k: K) -> u32 {
        let next = self.names.len() as u32;
        let id = *self.ids.entry(k).or_insert(next);
        if id == next {
            self.names.push(k);
        }
        id
    }

    /// `other`'s keys interned here: for each of `other`'s ids, its id here.
    pub(crate) fn absorb(&mut self, other: &Names<K>) -> Vec<u32> {
        other.names.iter().map(|&k| self.intern(k)).collect()
    }
}

/// Lists of URL indices by key id, one after another: list `k` is `items[at[k]..at[k + 1]]`.
#[derive(Default)]
struct Groups {
    at: Vec<usize>,
    items: Vec<u32>,
}

impl Groups {
    /// Every `i < len` with `key(i) != NONE`, grouped by key (ids below `n`) and ascending within
    /// a group: a stable counting sort.
    ///
    /// # Complexity
    /// `O(len + n)` time, `len' + n` words for the `len'` URLs with a key.
    fn by(len: usize, n: usize, key: impl Fn(usize) -> u32) -> Groups {
        Groups::from_pairs(
            n,
            (0..len)
                .map(|i| (key(i), i as u32))
                .filter(|&(k, _)| k != NONE),
        )
    }

    /// The `(key, item)` pairs grouped by key (ids below `n`), each group in the pairs' order:
    /// counted in one pass, written in a second.
    fn from_pairs(n: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Groups {
        let mut at = vec![0usize; n + 1];
        for (k, _) in pairs.clone() {
            at[k as usize + 1] += 1;
        }
        for g in 1..at.len() {
            at[g] += at[g - 1];
        }
        let mut fill = at.clone();
        let mut items = vec![0u32; at[n]];
        for (k, i) in pairs {
            items[fill[k as usize]] = i;
            fill[k as usize] += 1;
        }
        Groups { at, items }
    }

    /// List `k` (empty past the last).
    fn list(&self, k: u32) -> &[u32] {
        match (self.at.get(k as usize), self.at.get(k as usize + 1)) {
            (Some(&a), Some(&b)) => &self.items[a..b],
            _ => &[],
        }
    }
}

/// The URLs a rule may match ([`UrlIndex::candidates`]): a list, or every URL that splits.
pub(crate) enum Cands<'s> {
    /// These URL indices, in list order.
    List(&'s [u32]),
    /// Every URL that splits, ascending (the first-segment ids, [`NONE`] for the others).
    All(&'s [u32]),
    /// These, ascending: the union of a few lists.
    Owned(Vec<u32>),
}

impl<'s> Cands<'s> {
    /// The URL indices.
    pub(crate) fn iter(self) -> impl Iterator<Item = u32> + 's {
        let (list, all, owned): (&[u32], &[u32], Vec<u32>) = match self {
            Cands::List(l) => (l, &[], Vec::new()),
            Cands::All(f) => (&[], f, Vec::new()),
            Cands::Owned(v) => (&[], &[], v),
        };
        owned.into_iter().chain(list.iter().copied()).chain(
            all.iter()
                .enumerate()
                .filter(|&(_, &f)| f != NONE)
                .map(|(i, _)| i as u32),
        )
    }
}

/// One chunk's part of the index, with chunk-local ids (see [`UrlIndex::new`]).
struct Part<'a> {
    hosts: Names<&'a str>,
    firsts: Names<&'a str>,
    feats: Names<Feature<'a>>,
    /// Per URL: local host id, local first-segment id ([`NONE`]: the URL does not split).
    host: Vec<u32>,
    first: Vec<u32>,
    /// URL `j`'s features are `fids[fat[j]..fat[j + 1]]` (local ids).
    fat: Vec<u32>,
    fids: Vec<u32>,
    suffix_any: usize,
}

/// The labelled URLs by host, by first path segment and by exposure feature.
pub(crate) struct UrlIndex<'a> {
    /// Built with the exposure features (cross-host rules are validated).
    features: bool,
    /// Each URL's host id (`""` when the URL does not split; 4 bytes a URL, not a 16-byte
    /// `&str`).
    host: Vec<u32>,
    /// The distinct hosts.
    host_names: Names<&'a str>,
    /// Each URL's first path segment id, [`NONE`] when the URL does not split.
    first: Vec<u32>,
    /// The distinct first segments.
    first_names: Names<&'a str>,
    /// By host id: the host's URLs by (first-segment id, index).
    by_host: Groups,
    /// By first-segment id, ascending (cross-host rules with a literal first segment).
    by_first: Groups,
    /// The exposure features met (suffix words only those of the rules validated: a crawl's
    /// last path segments are too many to index them all).
    feats: Names<Feature<'a>>,
    /// By feature id, ascending.
    by_feature: Groups,
    /// How many URLs end in a suffix-like word (the exposure of every suffix convention).
    suffix_any: usize,
    /// (Host id, parameter name) of the hosts [`UrlIndex::index_params`] was given.
    params: Names<(u32, &'a str)>,
    /// By that id, the URLs holding the name, ascending.
    by_param: Groups,
    /// The ids of those hosts.
    param_hosts: HashSet<u32>,
}

/// A host with at least this many rules that need a parameter has its URLs indexed by parameter
/// name ([`UrlIndex::index_params`]): each rule then visits the URLs holding a name it needs,
/// not every URL of the host (validating thousands of one-parameter drops on one host was
/// quadratic).
pub(crate) const PARAM_INDEX_RULES: usize = 16;

impl<'a> UrlIndex<'a> {
    /// Index `len` URLs, URL `i` being `url(i)`. `features`: also index by exposure feature
    /// ([`UrlIndex::candidates`] of cross-host rules needs it; host rules do not), suffix words
    /// only when in `suffixes`.
    ///
    /// # Complexity
    /// `O(n)` for `n` URLs: URLs are split and their keys interned in parallel chunks, then
    /// each list kind is one counting sort (a host's URLs scattered from the first-segment
    /// lists, so they come by first segment). Memory: 4 bytes a URL per list kind and per id
    /// array, plus the chunks' local ids while they are merged.
    pub(crate) fn new(
        len: usize,
        url: impl Fn(usize) -> &'a str + Sync,
        features: bool,
        suffixes: &HashSet<&str>,
    ) -> UrlIndex<'a> {
        assert!(
            u32::try_from(len).is_ok_and(|n| n < NONE),
            "URL indices are u32"
        );
        let parts: Vec<Part<'a>> = (0..len.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let range = c * CHUNK..((c + 1) * CHUNK).min(len);
                let mut p = Part {
                    hosts: Names::default(),
                    firsts: Names::default(),
                    feats: Names::default(),
                    host: Vec::with_capacity(range.len()),
                    first: Vec::with_capacity(range.len()),
                    fat: Vec::with_capacity(if features { range.len() + 1 } else { 0 }),
                    fids: Vec::new(),
                    suffix_any: 0,
                };
                let mut keys = Vec::new();
                if features {
                    p.fat.push(0);
                }
                for i in range {
                    let parts = split_url(url(i));
                    p.host
                        .push(p.hosts.intern(parts.map_or("", |s| s.scope_host(url(i)))));
                    let Some(s) = parts else {
                        p.first.push(NONE);
                        if features {
                            p.fat.push(p.fids.len() as u32);
                        }
                        continue;
                    };
                    let rest = s.path.get(1..).unwrap_or("");
                    let first = dedust_core::__private::url_parts::split_ascii(rest, b'/')
                        .next()
                        .unwrap_or("");
                    p.first.push(p.firsts.intern(first));
                    if features {
                        keys.clear();
                        parts_exposure(&s, &mut keys);
                        for &k in &keys {
                            if let Feature::Suffix(w) = k {
                                p.suffix_any += 1;
                                if !suffixes.contains(w) {
                                    continue;
                                }
                            }
                            let f = p.feats.intern(k);
                            p.fids.push(f);
                        }
                        p.fat.push(p.fids.len() as u32);
                    }
                }
                p
            })
            .collect();
        // Global ids, in chunk order (a chunk's local ids mapped through its table).
        let (mut host_names, mut first_names, mut feats) =
            (Names::default(), Names::default(), Names::default());
        let maps: Vec<[Vec<u32>; 3]> = parts
            .iter()
            .map(|p| {
                [
                    host_names.absorb(&p.hosts),
                    first_names.absorb(&p.firsts),
                    feats.absorb(&p.feats),
                ]
            })
            .collect();
        let (mut host, mut first) = (vec![0u32; len], vec![NONE; len]);
        let mut parts = parts;
        host.par_chunks_mut(CHUNK)
            .zip(first.par_chunks_mut(CHUNK))
            .zip(parts.par_iter_mut())
            .zip(&maps)
            .for_each(|(((h, f), p), m)| {
                for (x, &l) in h.iter_mut().zip(&p.host) {
                    *x = m[0][l as usize];
                }
                for (x, &l) in f.iter_mut().zip(&p.first) {
                    *x = if l == NONE { NONE } else { m[1][l as usize] };
                }
                // The local ids are done with (their memory goes before the lists are built).
                (p.host, p.first) = (Vec::new(), Vec::new());
            });
        // By first segment (ascending), then a host's URLs in that order: (first id, index).
        let by_first = Groups::by(len, first_names.names.len(), |i| first[i]);
        let by_host = Groups::from_pairs(
            host_names.names.len(),
            by_first.items.iter().map(|&i| (host[i as usize], i)),
        );
        // Features: each URL on its features' lists, in URL order.
        let by_feature = Groups::from_pairs(
            feats.names.len(),
            parts.iter().zip(&maps).enumerate().flat_map(|(c, (p, m))| {
                p.fat.windows(2).enumerate().flat_map(move |(j, w)| {
                    p.fids[w[0] as usize..w[1] as usize]
                        .iter()
                        .map(move |&f| (m[2][f as usize], (c * CHUNK + j) as u32))
                })
            }),
        );
        let suffix_any = parts.iter().map(|p| p.suffix_any).sum();
        UrlIndex {
            features,
            host,
            host_names,
            first,
            first_names,
            by_host,
            by_first,
            feats,
            by_feature,
            suffix_any,
            params: Names::default(),
            by_param: Groups::default(),
            param_hosts: HashSet::default(),
        }
    }

    /// Index the URLs of `hosts` by parameter name too (URL `i` being `url(i)`, as given to
    /// [`UrlIndex::new`]): [`UrlIndex::candidates`] of a rule on one of them that needs a
    /// parameter (a required name, or a drop) is then the URLs holding its rarest required name,
    /// or a name it drops.
    ///
    /// # Complexity
    /// Linear in those hosts' URLs and their parameters; 4 bytes a parameter.
    pub(crate) fn index_params(&mut self, hosts: &HashSet<&str>, url: impl Fn(usize) -> &'a str) {
        let mut names: Names<(u32, &'a str)> = Names::default();
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for h in hosts {
            let Some(&hid) = self.host_names.ids.get(*h) else {
                continue;
            };
            self.param_hosts.insert(hid);
            for &i in self.by_host.list(hid) {
                let Some(q) = split_url(url(i as usize)).and_then(|p| p.query) else {
                    continue;
                };
                // Every pair, an empty one as the name `""` (as the engine reads a query).
                for kv in dedust_core::__private::url_parts::split_ascii(q, b'&') {
                    let n = dedust_core::__private::base::param_name(kv);
                    pairs.push((names.intern((hid, n)), i));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        self.by_param = Groups::from_pairs(names.names.len(), pairs.iter().copied());
        self.params = names;
    }

    /// Per exposure key, how many URLs have it (see [`crate::validate::exposure`]; with
    /// `features` only).
    pub(crate) fn exposure(&self) -> BTreeMap<String, usize> {
        self.feats
            .names
            .iter()
            .enumerate()
            .filter(|(_, k)| !matches!(k, Feature::Suffix(_)))
            .map(|(f, k)| (*k, self.by_feature.list(f as u32).len()))
            .chain([(Feature::Suffix(""), self.suffix_any)])
            .filter(|&(_, n)| n > 0)
            .map(|(k, n)| (k.key(), n))
            .collect()
    }

    /// For a cross-host rule found through its feature and whose path starts with a literal
    /// segment: that segment's id (the candidates with another first segment cannot match;
    /// [`NONE`], no URL's, when no URL has it).
    pub(crate) fn required_first(&self, r: &Rule) -> Option<u32> {
        if !self.features || rule_feature(r).is_none() {
            return None;
        }
        first_literal(r).map(|l| self.first_names.ids.get(l).copied().unwrap_or(NONE))
    }

    /// Whether candidate `i` of `r` can match, given [`UrlIndex::required_first`] `need`.
    pub(crate) fn may_match(&self, need: Option<u32>, i: u32) -> bool {
        need.is_none_or(|l| self.first[i as usize] == l)
    }

    /// The distinct hosts, by id.
    pub(crate) fn host_names(&self) -> &[&'a str] {
        &self.host_names.names
    }

    /// Host id of URL `i`.
    pub(crate) fn host_id(&self, i: u32) -> u32 {
        self.host[i as usize]
    }

    /// Host of URL `i`.
    pub(crate) fn host_of(&self, i: u32) -> &'a str {
        self.host_names.names[self.host[i as usize] as usize]
    }

    /// The URLs of `host` that split (by first segment, then index).
    pub(crate) fn host_urls(&self, host: &str) -> &[u32] {
        self.host_names
            .ids
            .get(host)
            .map_or(&[], |&h| self.by_host.list(h))
    }

    /// Indices of the URLs `r` may match: ascending for a cross-host rule; for a host rule by
    /// (first-segment id, index), or ascending when it comes from the parameter index.
    pub(crate) fn candidates(&self, r: &Rule) -> Cands<'_> {
        if let Some(k) = rule_feature(r) {
            return Cands::List(
                self.feats
                    .ids
                    .get(&k)
                    .map_or(&[], |&f| self.by_feature.list(f)),
            );
        }
        // Imported regexes may change any URL, unless scoped to a host (a robots.txt's rules
        // apply to its own host only: their regexes say so, and they are tried there only).
        if r.kind == RuleKind::Regex && r.source.host.is_empty() {
            return Cands::All(&self.first);
        }
        let lit = first_literal(r).map(|l| self.first_names.ids.get(l).copied());
        if r.is_global() {
            return match lit {
                Some(f) => Cands::List(f.map_or(&[], |f| self.by_first.list(f))),
                None => Cands::All(&self.first),
            };
        }
        let Some(&h) = self.host_names.ids.get(r.source.host.as_str()) else {
            return Cands::List(&[]);
        };
        if let Some(c) = self.param_candidates(r, h, lit) {
            return c;
        }
        Cands::List(match lit {
            Some(Some(f)) => self.host_segment(h, f),
            Some(None) => &[],
            None => self.by_host.list(h),
        })
    }

    /// The URLs of host `h` whose first segment has id `f` (a range of the host's list).
    fn host_segment(&self, h: u32, f: u32) -> &[u32] {
        let list = self.by_host.list(h);
        let key = |i: &u32| self.first[*i as usize];
        let lo = list.partition_point(|i| key(i) < f);
        &list[lo..lo + list[lo..].partition_point(|i| key(i) == f)]
    }
}

impl UrlIndex<'_> {
    /// [`UrlIndex::candidates`] of host rule `r` on host `h` (first-segment id `lit`, see there)
    /// from the parameter index, when its host is indexed, `r` needs a parameter
    /// ([`needed_words`](dedust_core::__private::normalize::needed_words)) and the lists to
    /// read are shorter than the URLs of its literal first segment: the URLs holding its
    /// required name with the fewest URLs, or else a name it drops; ascending.
    fn param_candidates(&self, r: &Rule, h: u32, lit: Option<Option<u32>>) -> Option<Cands<'_>> {
        if r.kind == RuleKind::Regex || !self.param_hosts.contains(&h) {
            return None;
        }
        // Reading more than the segment's own URLs gains nothing.
        let cap = match lit {
            Some(Some(f)) => self.host_segment(h, f).len(),
            Some(None) => return None,
            None => usize::MAX,
        };
        let list = |n: &str| {
            self.params
                .ids
                .get(&(h, n))
                .map_or(&[][..], |&k| self.by_param.list(k))
        };
        let on_path = |&i: &u32| match lit {
            Some(Some(f)) => self.first[i as usize] == f,
            Some(None) => false,
            None => true,
        };
        let (all, any) = dedust_core::__private::normalize::needed_words(r);
        if let Some(rarest) = all.iter().map(|n| list(n)).min_by_key(|l| l.len()) {
            return (rarest.len() < cap)
                .then(|| Cands::Owned(rarest.iter().copied().filter(on_path).collect()));
        }
        if any.is_empty() || any.iter().map(|n| list(n).len()).sum::<usize>() >= cap {
            return None;
        }
        let mut out: Vec<u32> = any
            .iter()
            .flat_map(|n| list(n).iter().copied())
            .filter(on_path)
            .collect();
        out.sort_unstable();
        out.dedup();
        Some(Cands::Owned(out))
    }
}

/// The hosts of `rules` with at least [`PARAM_INDEX_RULES`] rules that need a parameter (for
/// [`UrlIndex::index_params`]).
pub(crate) fn drop_heavy_hosts<'r>(rules: impl IntoIterator<Item = &'r Rule>) -> HashSet<&'r str> {
    let mut n: HashMap<&str, usize> = HashMap::default();
    for r in rules {
        if !r.is_global() && r.kind != RuleKind::Regex && {
            let (all, any) = dedust_core::__private::normalize::needed_words(r);
            !all.is_empty() || !any.is_empty()
        } {
            *n.entry(r.source.host.as_str()).or_default() += 1;
        }
    }
    n.into_iter()
        .filter(|&(_, k)| k >= PARAM_INDEX_RULES)
        .map(|(h, _)| h)
        .collect()
}

/// The literal first path segment a rule requires (`""` for the path `/`), if any.
fn first_literal(r: &Rule) -> Option<&str> {
    match r.source.path.as_ref().and_then(|p| p.first()) {
        Some(seg) => match seg.as_slice() {
            [crate::rules::Piece::Lit(l)] => Some(l.as_str()),
            [] => Some(""),
            _ => None,
        },
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_ids_across_absorbed_chunks() {
        let (mut all, mut ids) = (Names::default(), Vec::new());
        for chunk in [&["a", "b", "a"][..], &["c", "a"], &[], &["b", "", "c"]] {
            let mut local = Names::default();
            let local_ids: Vec<u32> = chunk.iter().map(|n| local.intern(*n)).collect();
            let map = all.absorb(&local);
            ids.extend(local_ids.iter().map(|&l| map[l as usize]));
        }
        let names: Vec<&str> = ids.iter().map(|&i| all.names[i as usize]).collect();
        assert_eq!(names, ["a", "b", "a", "c", "a", "b", "", "c"]);
        assert_eq!(all.names.len(), 4);
        assert_eq!(all.ids.get("c"), Some(&ids[3]));
    }

    #[test]
    fn groups_are_a_stable_counting_sort() {
        let keys = [2, NONE, 0, 2, 0, 1, NONE, 2];
        let g = Groups::by(keys.len(), 4, |i| keys[i]);
        let lists: Vec<&[u32]> = (0..5).map(|k| g.list(k)).collect();
        assert_eq!(lists, [&[2, 4][..], &[5], &[0, 3, 7], &[], &[]]);
    }

    fn index(urls: &[&'static str]) -> UrlIndex<'static> {
        let urls = urls.to_vec();
        let suffixes = HashSet::default();
        // Leaked: the index borrows the URLs for the test's length.
        let urls: &'static [&'static str] = Box::leak(urls.into_boxed_slice());
        UrlIndex::new(urls.len(), |i| urls[i], true, &suffixes)
    }

    #[test]
    fn lists_cover_each_url_once_and_across_chunks() {
        // More URLs than a chunk, on three hosts, so lists join chunks.
        let mut urls: Vec<&'static str> = Vec::new();
        for i in 0..(CHUNK + 500) {
            let u = match i % 3 {
                0 => format!("http://a.org/x/{i}?p={i}"),
                1 => format!("https://b.org/y/{i}"),
                _ => format!("https://a.org/y/{i}?q=1"),
            };
            urls.push(Box::leak(u.into_boxed_str()));
        }
        urls.push("not a url");
        let ix = index(&urls);
        let a = ix.host_urls("a.org");
        assert_eq!(a.len(), (CHUNK + 500).div_ceil(3) * 2 - 1);
        // By first segment, ascending within one.
        let x_end = a
            .iter()
            .position(|&i| ix.first[i as usize] != ix.first[a[0] as usize]);
        let (x, y) = a.split_at(x_end.unwrap());
        assert!(x.is_sorted() && y.is_sorted() && x.len() + y.len() == a.len());
        let p = ix.feats.ids[&Feature::Param("p")];
        let list = ix.by_feature.list(p);
        assert!(list.is_sorted() && list.len() == (CHUNK + 500).div_ceil(3));
        assert!(list.iter().all(|&i| i % 3 == 0));
        let http = ix.by_feature.list(ix.feats.ids[&Feature::Http]);
        assert_eq!(http, list);
        assert_eq!(ix.exposure()["http"], list.len());
        // Every URL but the broken one is among "all".
        let all: Vec<u32> = Cands::All(&ix.first).iter().collect();
        assert_eq!(all, (0..(CHUNK + 500) as u32).collect::<Vec<_>>());
        assert_eq!(ix.host_of((CHUNK + 500) as u32), "");
    }
    /// With its host indexed by parameter, a rule's candidates hold every URL it changes, and
    /// only URLs holding a name it needs: fewer than the host's list.
    #[test]
    fn parameter_candidates_hold_every_url_a_rule_changes() {
        use crate::rules::{CapType, Piece, Source, Target, ValOut, ValPat};
        let mut urls: Vec<&'static str> = Vec::new();
        let names = ["id", "s", "x1", "x2", "y"];
        for first in ["p", "q"] {
            for mask in 0u32..32 {
                let q: Vec<String> = names
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| mask & (1 << b) != 0)
                    .map(|(_, n)| format!("{n}=1"))
                    .collect();
                for host in ["h.org", "o.org"] {
                    let u = format!("https://{host}/{first}/3?{}", q.join("&"));
                    urls.push(Box::leak(u.into_boxed_str()));
                }
            }
        }
        let rule = |first: Option<&str>, required: &[&str], optional: &[&str]| {
            Rule::new(
                RuleKind::Template,
                Source {
                    scheme: None,
                    host: "h.org".into(),
                    path: first
                        .map(|l| vec![vec![Piece::Lit(l.into())], vec![Piece::Cap(CapType::Int)]]),
                    required: required
                        .iter()
                        .map(|n| (n.to_string(), ValPat::Any))
                        .collect(),
                    optional: optional.iter().map(|n| n.to_string()).collect(),
                    rest: true,
                },
                Target {
                    query: Some(
                        required
                            .iter()
                            .map(|n| (n.to_string(), ValOut::Copy))
                            .collect(),
                    ),
                    ..Target::unchanged()
                },
            )
        };
        let mut rules = Vec::new();
        for first in [None, Some("p")] {
            rules.push(rule(first, &["id"], &["x1"]));
            rules.push(rule(first, &["id", "x2"], &["s"]));
            rules.push(rule(first, &[], &["s", "x2"]));
            rules.push(rule(first, &["y"], &["x1", "x2"]));
        }
        while rules.len() < PARAM_INDEX_RULES {
            rules.push(rule(Some("z"), &["id"], &["s"]));
        }
        let plain = index(&urls);
        let mut ix = index(&urls);
        let hosts = drop_heavy_hosts(&rules);
        assert_eq!(hosts.iter().copied().collect::<Vec<_>>(), ["h.org"]);
        ix.index_params(&hosts, |i| urls[i]);
        for r in &rules {
            let changes = |i: &u32| {
                let u = urls[*i as usize];
                dedust_core::apply_rule(r, u).is_some_and(|o| o != u)
            };
            let got: Vec<u32> = ix.candidates(r).iter().collect();
            assert!(got.is_sorted(), "{}", r.pattern);
            let mut want: Vec<u32> = plain.candidates(r).iter().filter(changes).collect();
            want.sort_unstable();
            assert_eq!(
                got.iter().copied().filter(changes).collect::<Vec<_>>(),
                want,
                "{}",
                r.pattern
            );
            let needed = |i: &u32| {
                let u = urls[*i as usize];
                let has = |n: &str| u.contains(&format!("{n}="));
                match r.source.required.is_empty() {
                    // The list of one required name (the rarest).
                    false => r.source.required.iter().any(|(n, _)| has(n)),
                    true => r.source.optional.iter().any(|n| has(n)),
                }
            };
            let host = plain.candidates(r).iter().count();
            if r.source.path.is_none() {
                // Read from the parameter index: fewer than the host's URLs.
                assert!(got.iter().all(needed), "{}", r.pattern);
                assert!(got.len() < host, "{}", r.pattern);
            } else {
                // The segment's URLs are no more than the name's: read as before.
                assert_eq!(got.len(), host, "{}", r.pattern);
            }
        }
    }
}
