//! Generalize: sibling candidates merged along the value-type lattice.
//!
//! In: candidate rules (as learned from pair groups, before validation). Out: extra candidates,
//! each the merge of a family of siblings — host-scoped rules of one kind that are equal but for
//! the pieces of one source path segment, with the same output — where that segment becomes one
//! capture: the literals `python`, `ubuntu`, `camera` of a soft 404's `/{word}/missing-{int}`
//! become `{alpha}`; `{alpha}-{alpha}-{alpha}` and `{alpha}-{alpha}-{alpha}-{alpha}` (a slug of
//! three or four words) become `{any}`; `item.do;jsessionid={alpha}{int}…` in a dozen run shapes
//! becomes `item.do;jsessionid={any}` (siblings of several pieces keep the literal text they all
//! start with). Types join along the lattice `int ⊂ hex ⊂ alnum ⊂ any`,
//! `alpha ⊂ alnum`. The merged rule carries the pooled provenance (clusters, URLs, examples)
//! and is validated like any candidate. Drop rules (host-scoped or cross-host) that differ only
//! in the literal value of the parameter they drop (`utm_source=rss`, `=twitter`, `=news`)
//! merge the same way into one typed drop (`utm_source={alpha}`). The siblings stay candidates
//! too, so validation and conflict resolution keep whichever form holds (the general one when
//! it merges as well as its parts, the parts when it would merge different content). Invariants: only segments whose
//! output does not spell them out are merged (a family whose targets differ is no family);
//! at least [`MIN_SIBLINGS`] siblings; deterministic (families in order of their first member).
//!
//! # Complexity
//! `O(Σ segments)` keys per rule, hashed: linear in the candidates.

use crate::rules::{CapType, Piece, Rule, RuleKind, ValPat};
use foldhash::{HashMap, HashMapExt};

/// Fewest siblings a merged candidate needs (two values are a coincidence, three a pattern).
pub const MIN_SIBLINGS: usize = 3;

/// Merged candidates for the sibling families of `rules` (see the module docs).
///
/// ```
/// use dedust_learn::{learn_candidates, Cluster, LearnOptions};
/// let mk = |id: String, u: &[String]| Cluster { id, urls: u.to_vec() };
/// let clusters: Vec<Cluster> = ["python", "ubuntu", "camera"]
///     .iter()
///     .map(|w| mk(w.to_string(), &[format!("https://s.org/{w}/missing-1"), format!("https://s.org/{w}/missing-2"), "https://s.org/x/missing-0".into()]))
///     .collect();
/// let (rules, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
/// assert!(rules.iter().any(|r| r.pattern == "*://s.org/{alpha}/missing-{int}"), "{:?}", rules.iter().map(|r| &r.pattern).collect::<Vec<_>>());
/// ```
pub fn merge_siblings(rules: &[Rule]) -> Vec<Rule> {
    // Family key: the rule with segment `i` blanked, and `i`.
    let mut families: HashMap<(String, usize), Vec<usize>> = HashMap::new();
    let mut order: Vec<(String, usize)> = Vec::new();
    for (k, r) in rules.iter().enumerate() {
        if r.is_global() || r.kind != RuleKind::Template {
            continue;
        }
        let Some(path) = &r.source.path else { continue };
        for i in 0..path.len() {
            if spelled_out(r, i) {
                continue;
            }
            let mut blank = r.source.clone();
            if let Some(p) = blank.path.as_mut() {
                p[i] = Vec::new();
            }
            let key = serde_json::to_string(&(&blank, &r.output)).expect("serializes");
            let e = families.entry((key.clone(), i)).or_default();
            if e.is_empty() {
                order.push((key, i));
            }
            e.push(k);
        }
    }
    let mut out = Vec::new();
    for key in order {
        let members = &families[&key];
        if members.len() < MIN_SIBLINGS {
            continue;
        }
        let i = key.1;
        let first = &rules[members[0]];
        let pieces: Vec<&Vec<Piece>> = members
            .iter()
            .filter_map(|&m| rules[m].source.path.as_ref().map(|p| &p[i]))
            .collect();
        let mut source = first.source.clone();
        if let Some(p) = source.path.as_mut() {
            p[i] = join_pieces(&pieces);
        }
        out.push(pooled(rules, members, source));
    }
    out.extend(merge_values(rules));
    out
}

/// The consent of a merge of rules: their declared pairs added up, else the user's
/// `--allow-cross-site` when one of them carries it, else none (a merge of moves that carry no
/// consent is left out; of rules that move nothing, it moves nothing either).
///
/// ```
/// use dedust_core::Consent;
/// use dedust_learn::generalize::pooled_consent;
/// assert_eq!(pooled_consent([Some(Consent::Declared(2)), Some(Consent::Declared(3))]), Some(Consent::Declared(5)));
/// assert_eq!(pooled_consent([Some(Consent::AllowCrossSite), None]), Some(Consent::AllowCrossSite));
/// assert_eq!(pooled_consent([None, None]), None);
/// ```
pub fn pooled_consent(
    consents: impl IntoIterator<Item = Option<dedust_core::Consent>>,
) -> Option<dedust_core::Consent> {
    use dedust_core::Consent;
    let (mut declared, mut allowed) = (0, false);
    for c in consents.into_iter().flatten() {
        match c {
            Consent::Declared(n) => declared += n,
            Consent::AllowCrossSite => allowed = true,
        }
    }
    if declared > 0 {
        Some(Consent::Declared(declared))
    } else {
        allowed.then_some(Consent::AllowCrossSite)
    }
}

/// The merge of the sibling `members` of `rules` with the merged `source`: the first member's
/// kind and output, the pooled provenance (clusters, URLs and signals added up, the 3 smallest
/// examples).
fn pooled(rules: &[Rule], members: &[usize], source: crate::rules::Source) -> Rule {
    let first = &rules[members[0]];
    let mut merged = Rule::new(first.kind, source, first.output.clone());
    merged.clusters = members.iter().map(|&m| rules[m].clusters).sum();
    merged.urls = members.iter().map(|&m| rules[m].urls).sum();
    for &m in members.iter() {
        for (k, n) in &rules[m].signals {
            *merged.signals.entry(k.clone()).or_insert(0) += n;
        }
    }
    merged.consent = pooled_consent(members.iter().map(|&m| rules[m].consent));
    merged.examples = crate::rules::smallest_examples(
        members
            .iter()
            .flat_map(|&m| rules[m].examples.iter().cloned())
            .collect(),
    );
    merged
}

/// Value families: drop rules (host-scoped or cross-host) equal but for the literal value of
/// the parameter they drop (`utm_source=rss`, `utm_source=twitter`, `utm_source=news` — a
/// low-entropy parameter is learned per value, see [`crate::rules::high_entropy`]) become one
/// drop of the least type accepting the values (`utm_source={alpha}`), which also holds for
/// values never seen in learning. Two values stay apart (`mode=hybrid` and `mode=threaded` are
/// judged one by one); from [`MIN_SIBLINGS`] on, validation judges the pooled rule, and a value
/// that merges different content fails it (the per-value siblings stay candidates).
fn merge_values(rules: &[Rule]) -> Vec<Rule> {
    let mut families: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (k, r) in rules.iter().enumerate() {
        if r.kind != RuleKind::Drop {
            continue;
        }
        // The dropped parameter: the one required with a literal value (context parameters
        // are required with any value and kept).
        let lit = r.source.required.iter().position(
            |(_, v)| matches!(v, ValPat::Pieces(p) if matches!(p.as_slice(), [Piece::Lit(_)])),
        );
        let Some(j) = lit else { continue };
        let mut blank = r.source.clone();
        blank.required[j].1 = ValPat::Any;
        let key = serde_json::to_string(&(&blank, &r.output, j)).expect("serializes");
        let e = families.entry(key.clone()).or_default();
        if e.is_empty() {
            order.push(key);
        }
        e.push((k, j));
    }
    let mut out = Vec::new();
    for key in order {
        let members = &families[&key];
        if members.len() < MIN_SIBLINGS {
            continue;
        }
        let (first, j) = members[0];
        let values: Vec<&Vec<Piece>> = members
            .iter()
            .filter_map(|&(m, j)| match &rules[m].source.required[j].1 {
                ValPat::Pieces(p) => Some(p),
                _ => None,
            })
            .collect();
        let mut source = rules[first].source.clone();
        source.required[j].1 = ValPat::Pieces(vec![Piece::Cap(join(&values))]);
        let idx: Vec<usize> = members.iter().map(|&(m, _)| m).collect();
        out.push(pooled(rules, &idx, source));
    }
    out
}

/// Whether the output writes segment `i` of the source as a literal (then siblings differing
/// there are different rules, not one).
fn spelled_out(r: &Rule, i: usize) -> bool {
    use crate::rules::SegOut;
    let Some(src) = r.source.path.as_ref().and_then(|p| p.get(i)) else {
        return true;
    };
    let lit = match src.as_slice() {
        [Piece::Lit(l)] => l,
        _ => return false,
    };
    r.output
        .path
        .as_ref()
        .is_some_and(|o| o.iter().any(|s| matches!(s, SegOut::Lit(x) if x == lit)))
}

/// The merged segment: one capture of the least type accepting every sibling's pieces when each
/// is one literal or one capture; else the literal text they all start with (`;jsessionid=`,
/// `item-`), then `{any}`.
fn join_pieces(pieces: &[&Vec<Piece>]) -> Vec<Piece> {
    if pieces.iter().all(|p| p.len() == 1) {
        return vec![Piece::Cap(join(pieces))];
    }
    let lead = |p: &Vec<Piece>| match p.first() {
        Some(Piece::Lit(l)) => l.clone(),
        _ => String::new(),
    };
    let mut prefix = lead(pieces[0]);
    for p in &pieces[1..] {
        let l = lead(p);
        let common = prefix
            .char_indices()
            .zip(l.chars())
            .find(|((_, a), b)| a != b)
            .map_or(prefix.len().min(l.len()), |((k, _), _)| k);
        prefix.truncate(common);
    }
    if prefix.is_empty() {
        vec![Piece::Cap(CapType::Any)]
    } else {
        vec![Piece::Lit(prefix), Piece::Cap(CapType::Any)]
    }
}

/// The least capture type accepting every sibling's pieces at the merged segment.
fn join(pieces: &[&Vec<Piece>]) -> CapType {
    let mut lits: Vec<&str> = Vec::new();
    let mut t: Option<CapType> = None;
    let up = |a: Option<CapType>, b: CapType| -> CapType {
        match a {
            None => b,
            Some(a) if a == b => a,
            Some(a) => {
                use CapType::*;
                match (a, b) {
                    (Int, Hex) | (Hex, Int) => Hex,
                    (Any, _) | (_, Any) => Any,
                    _ => Alnum,
                }
            }
        }
    };
    for p in pieces {
        match p.as_slice() {
            [Piece::Lit(l)] => lits.push(l),
            [Piece::Cap(c)] => t = Some(up(t, *c)),
            _ => return CapType::Any,
        }
    }
    if !lits.is_empty() {
        t = Some(up(t, CapType::infer(lits)));
    }
    t.unwrap_or(CapType::Any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::CapType::*;

    /// Issue #9: one session id in a dozen letter/digit run shapes is one rule, not one per
    /// shape, and it holds on shapes never seen in learning.
    #[test]
    fn a_session_id_in_many_shapes_is_one_rule() {
        let runs = ["AB", "x", "12", "7", "QQ", "z9"];
        let mut seed = 3u64;
        let mut pick = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let clusters: Vec<crate::Cluster> = (0..40)
            .map(|n| {
                let mut urls = vec![format!("https://j.org/shop/item.do?id={n}")];
                for _ in 0..2 {
                    let sid: String = (0..2 + pick() % 4)
                        .map(|_| runs[pick() % runs.len()])
                        .collect();
                    urls.push(format!(
                        "https://j.org/shop/item.do;jsessionid={sid}?id={n}"
                    ));
                }
                crate::Cluster {
                    id: format!("c{n}"),
                    urls,
                }
            })
            .collect();
        let cfg = crate::LearnConfig {
            validate: Some(Default::default()),
            ..Default::default()
        };
        let out = crate::learn(&clusters, &cfg, &|_, _, _| {});
        let patterns: Vec<&str> = out.file.rules.iter().map(|r| r.pattern.as_str()).collect();
        assert_eq!(
            patterns,
            ["*://j.org/shop/item.do;jsessionid={any}{?query}"],
            "{patterns:?}"
        );
        let n = crate::Normalizer::new(out.file.rules, None);
        let unseen = "https://j.org/shop/item.do;jsessionid=Zz0-9a?id=77";
        assert_eq!(
            n.apply_rules(unseen.into()).url,
            "https://j.org/shop/item.do?id=77"
        );
    }

    /// A tracking parameter whose values are few per site but differ between sites
    /// (`utm_source=rss` on one, `=twitter` on another) is one drop, which holds for values and
    /// sites never seen in learning; two values stay apart, and a value that merges different
    /// content keeps the pooled rule out.
    #[test]
    fn drops_of_several_values_pool_into_one_rule() {
        // (values per site (each site's pages carry its value), a refuting value, URL → want)
        let cases: Vec<(&[&str], Option<&str>, &str, &str)> = vec![
            (
                &["rss", "twitter", "news", "mail"],
                None,
                "https://new.example/a/9?utm_source=facebook",
                "https://new.example/a/9",
            ),
            // Two values: per value only, an unseen one is kept.
            (
                &["rss", "twitter"],
                None,
                "https://new.example/a/9?utm_source=facebook",
                "https://new.example/a/9?utm_source=facebook",
            ),
            // `v=print` separates content on one site: the pooled rule fails validation.
            (
                &["rss", "twitter", "news"],
                Some("print"),
                "https://new.example/a/9?utm_source=facebook",
                "https://new.example/a/9?utm_source=facebook",
            ),
        ];
        for (values, refute, url, want) in cases {
            let mut clusters = Vec::new();
            for (s, v) in values.iter().enumerate() {
                for n in 0..12 {
                    let page = format!("https://site{s}.example/a/{n}");
                    clusters.push(crate::Cluster {
                        id: format!("s{s}-{n}"),
                        urls: vec![page.clone(), format!("{page}?utm_source={v}")],
                    });
                }
            }
            if let Some(v) = refute {
                for n in 0..12 {
                    let page = format!("https://other.example/a/{n}");
                    clusters.push(crate::Cluster {
                        id: format!("o-{n}"),
                        urls: vec![page.clone()],
                    });
                    clusters.push(crate::Cluster {
                        id: format!("o-{n}-v"),
                        urls: vec![format!("{page}?utm_source={v}")],
                    });
                }
            }
            let cfg = crate::LearnConfig {
                validate: Some(Default::default()),
                ..Default::default()
            };
            let out = crate::learn(&clusters, &cfg, &|_, _, _| {});
            let n = crate::Normalizer::new(out.file.rules.clone(), None);
            let patterns: Vec<&str> = out.file.rules.iter().map(|r| r.pattern.as_str()).collect();
            assert_eq!(
                n.apply_rules(url.into()).url,
                want,
                "{values:?} {patterns:?}"
            );
            // Every value is still dropped where it was seen.
            for (s, v) in values.iter().enumerate() {
                let seen = format!("https://site{s}.example/a/99?utm_source={v}");
                assert_eq!(
                    n.apply_rules(seen).url,
                    format!("https://site{s}.example/a/99"),
                    "{values:?} {patterns:?}"
                );
            }
        }
    }

    #[test]
    fn multi_piece_siblings_keep_their_common_literal_start() {
        let lit = |s: &str| Piece::Lit(s.into());
        let a = vec![
            lit("item.do;jsessionid="),
            Piece::Cap(Alpha),
            Piece::Cap(Int),
        ];
        let b = vec![lit("item.do;jsessionid="), Piece::Cap(Int), lit("x")];
        let c = vec![lit("item.do;jsessionid=ab"), Piece::Cap(Alnum)];
        assert_eq!(
            join_pieces(&[&a, &b, &c]),
            vec![lit("item.do;jsessionid="), Piece::Cap(Any)]
        );
        let d = vec![Piece::Cap(Alpha), lit("-"), Piece::Cap(Alpha)];
        assert_eq!(join_pieces(&[&a, &d]), vec![Piece::Cap(Any)]);
        assert_eq!(
            join_pieces(&[&vec![lit("python")], &vec![lit("ubuntu")]]),
            vec![Piece::Cap(Alpha)]
        );
    }

    #[test]
    fn types_join_along_the_lattice() {
        let lit = |s: &str| vec![Piece::Lit(s.into())];
        let cap = |t| vec![Piece::Cap(t)];
        let slug = vec![Piece::Cap(Alpha), Piece::Lit("-".into()), Piece::Cap(Alpha)];
        let cases: Vec<(Vec<Vec<Piece>>, CapType)> = vec![
            (vec![lit("python"), lit("ubuntu")], Alpha),
            (vec![lit("12"), lit("7")], Int),
            (vec![lit("12"), cap(Alpha)], Alnum),
            (vec![cap(Int), cap(Hex)], Hex),
            (vec![cap(Int), cap(Alpha)], Alnum),
            (vec![cap(Alnum), cap(Any)], Any),
            (vec![slug.clone(), cap(Alpha)], Any),
            (vec![lit("a-b"), lit("c")], Any),
        ];
        for (pieces, want) in cases {
            let refs: Vec<&Vec<Piece>> = pieces.iter().collect();
            assert_eq!(join(&refs), want, "{pieces:?}");
        }
    }
}
