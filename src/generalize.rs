//! Generalize: sibling candidates of one host merged along the value-type lattice.
//!
//! In: candidate rules (as learned from pair groups, before validation). Out: extra candidates,
//! each the merge of a family of siblings — host-scoped rules of one kind that are equal but for
//! the pieces of one source path segment, with the same output — where that segment becomes one
//! capture: the literals `python`, `ubuntu`, `camera` of a soft 404's `/{word}/missing-{int}`
//! become `{alpha}`; `{alpha}-{alpha}-{alpha}` and `{alpha}-{alpha}-{alpha}-{alpha}` (a slug of
//! three or four words) become `{any}`. Types join along the lattice `int ⊂ hex ⊂ alnum ⊂ any`,
//! `alpha ⊂ alnum`. The merged rule carries the pooled provenance (clusters, URLs, examples)
//! and is validated like any candidate: the siblings stay candidates too, so validation and
//! conflict resolution keep whichever form holds (the general one when it merges as well as its
//! parts, the parts when it would merge different content). Invariants: only segments whose
//! output does not spell them out are merged (a family whose targets differ is no family);
//! at least [`MIN_SIBLINGS`] siblings; deterministic (families in order of their first member).
//!
//! # Complexity
//! `O(Σ segments)` keys per rule, hashed: linear in the candidates.

use crate::rules::{CapType, Piece, Rule, RuleKind};
use std::collections::HashMap;

/// Fewest siblings a merged candidate needs (two values are a coincidence, three a pattern).
pub const MIN_SIBLINGS: usize = 3;

/// Merged candidates for the sibling families of `rules` (see the module docs).
///
/// ```
/// use dedust::{learn_candidates, Cluster, LearnOptions};
/// let mk = |id: String, u: &[String]| Cluster { id, urls: u.to_vec() };
/// let clusters: Vec<Cluster> = ["python", "ubuntu", "camera"]
///     .iter()
///     .map(|w| mk(w.to_string(), &[format!("https://s.org/{w}/missing-1"), format!("https://s.org/{w}/missing-2"), "https://s.org/x/missing-0".into()]))
///     .collect();
/// let (rules, _) = learn_candidates(&clusters, &LearnOptions::default(), &|_| {});
/// assert!(rules.iter().any(|r| r.pattern == "https://s.org/{alpha}/missing-{int}"), "{:?}", rules.iter().map(|r| &r.pattern).collect::<Vec<_>>());
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
        let t = join(&pieces);
        let mut source = first.source.clone();
        if let Some(p) = source.path.as_mut() {
            p[i] = vec![Piece::Cap(t)];
        }
        let mut merged = Rule::new(first.kind, source, first.output.clone());
        merged.clusters = members.iter().map(|&m| rules[m].clusters).sum();
        merged.urls = members.iter().map(|&m| rules[m].urls).sum();
        merged.examples = members
            .iter()
            .flat_map(|&m| rules[m].examples.iter().take(1).cloned())
            .take(3)
            .collect();
        out.push(merged);
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
