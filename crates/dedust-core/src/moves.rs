//! Site moves and consent: no site speaks for another. A rule that sends one site's (or one
//! path tenant's) URLs to another host or another literal path prefix is a *move*
//! ([`site_move`]); a move is kept only when the site being rewritten consented to it
//! ([`Consent`], recorded on the rule as [`Rule::consent`]).
//!
//! In: a [`Rule`] (its [`Source`](crate::Source) and [`Target`](crate::Target)), or a list of
//! them. Out: the [`Move`] the rule makes, if any; whether it may be kept ([`refused`]); a list
//! with the refused rules left out ([`drop_refused`]).
//! Invariants: the decision reads the rule's matching and rewriting sides only, never the Public
//! Suffix List (tenants of one registrable domain the list does not know, `a.wordpress.com` and
//! `b.wordpress.com`, are different sites here); adding or removing one `www.` or mobile label
//! ([`mobile_label`](crate::__private::model::mobile_label)) or changing the scheme is no move; a
//! cross-host rule (scope `*`) whose output names one literal host is always refused.
//! Complexity: `O(p²)` in the path segments `p` of one rule (a few), `O(n)` over `n` rules.

use crate::model::{Piece, Rule, SegOut};
use serde::{Deserialize, Serialize};

/// Why a rule that moves URLs ([`site_move`]) may be kept: the site it rewrites agreed.
///
/// Serialized on a rule as `"consent": {"declared": 20}` or `"consent": "allow-cross-site"`.
///
/// ```
/// use dedust_core::Consent;
/// assert_eq!(serde_json::to_string(&Consent::Declared(20)).unwrap(), r#"{"declared":20}"#);
/// assert_eq!(serde_json::to_string(&Consent::AllowCrossSite).unwrap(), r#""allow-cross-site""#);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Consent {
    /// The URLs being rewritten declared the target themselves: this many learning pairs whose
    /// rewritten member is the URL that redirected to, or declared as canonical, its target.
    Declared(usize),
    /// The user asked for aliases between sites (`learn --allow-cross-site`).
    AllowCrossSite,
}

/// What a rule moves (see [`site_move`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// The output names a host other than the source host (beyond one `www.` or mobile label).
    Host,
    /// The rule keeps the end of the path and writes a literal path prefix the source lacks
    /// (`/view/victim/{x}` → `/view/evil/{x}`).
    PathPrefix,
    /// A cross-host rule (scope `*`) whose output names one literal host: every site's URLs to
    /// one site. Never consentable.
    AnyHostToOne,
}

/// The host without one leading `www.` or mobile label (when a dot remains).
fn bare_host(h: &str) -> &str {
    match h.strip_prefix("www.") {
        Some(rest) if rest.contains('.') => rest,
        _ => crate::model::mobile_label(h).map_or(h, |(_, rest)| rest),
    }
}

/// Whether output segment `o` equals source segment `s` at source position `i`: a copy of it, or
/// the same literal.
fn same_segment(o: &SegOut, s: &[Piece], i: usize) -> bool {
    match (o, s) {
        (SegOut::Copy(j), _) => *j == i,
        (SegOut::Lit(l), [Piece::Lit(t)]) => l == t,
        (SegOut::Lit(l), []) => l.is_empty(),
        _ => false,
    }
}

/// Whether a path rewrite moves a literal prefix: aligned from the end by their common suffix,
/// the source and output paths keep something, and the output's remaining prefix holds a literal
/// segment absent from the source's remaining prefix.
fn moves_prefix(src: &[Vec<Piece>], out: &[SegOut]) -> bool {
    let common = src
        .iter()
        .enumerate()
        .rev()
        .zip(out.iter().rev())
        .take_while(|((i, s), o)| same_segment(o, s, *i))
        .count();
    if common == 0 {
        return false;
    }
    let (src_head, out_head) = (&src[..src.len() - common], &out[..out.len() - common]);
    out_head.iter().any(|o| match o {
        SegOut::Lit(l) => !src_head
            .iter()
            .any(|s| matches!(s.as_slice(), [Piece::Lit(t)] if t == l)),
        _ => false,
    })
}

/// The move a rule makes, if any: [`Move::AnyHostToOne`], [`Move::Host`] or
/// [`Move::PathPrefix`] (in that order of precedence). Scheme changes, `www.` and mobile labels,
/// parameter drops, query rewrites and prefix removals are no moves.
///
/// ```
/// use dedust_core::{site_move, Move, Rule, RuleKind, Source, Target, SegOut, Piece, CapType};
/// let on = |host: &str| Source { host: host.into(), ..Source::everywhere() };
/// let to = |host: &str| Target { host: Some(host.into()), ..Target::unchanged() };
/// let alias = |a: &str, b: &str| Rule::new(RuleKind::Alias, on(a), to(b));
/// assert_eq!(site_move(&alias("victim.wordpress.com", "evil.wordpress.com")), Some(Move::Host));
/// assert_eq!(site_move(&alias("www.a.org", "a.org")), None);
/// assert_eq!(site_move(&alias("*", "evil.com")), Some(Move::AnyHostToOne));
/// // `/view/victim/{any}` → `/view/evil/{0…}` on one host.
/// let lit = |s: &str| vec![Piece::Lit(s.into())];
/// let src = Source { path: Some(vec![lit("view"), lit("victim"), vec![Piece::Cap(CapType::Any)]]), ..on("sites.google.com") };
/// let out = Target { path: Some(vec![SegOut::Lit("view".into()), SegOut::Lit("evil".into()), SegOut::Copy(2)]), ..Target::unchanged() };
/// assert_eq!(site_move(&Rule::new(RuleKind::Template, src, out)), Some(Move::PathPrefix));
/// ```
pub fn site_move(rule: &Rule) -> Option<Move> {
    let (s, o) = (&rule.source, &rule.output);
    if let Some(h) = &o.host {
        if rule.is_global() {
            return Some(Move::AnyHostToOne);
        }
        if *h != s.host && bare_host(h) != bare_host(&s.host) {
            return Some(Move::Host);
        }
    }
    match (&s.path, &o.path) {
        (Some(src), Some(out)) if moves_prefix(src, out) => Some(Move::PathPrefix),
        _ => None,
    }
}

/// The move of a rule that may not be kept: it moves URLs ([`site_move`]) and carries no
/// [`Consent`], or it sends every site's URLs to one host (never consentable).
///
/// ```
/// use dedust_core::{refused, Consent, Move, Rule, RuleKind, Source, Target};
/// let mut r = Rule::new(
///     RuleKind::Alias,
///     Source { host: "old.example.org".into(), ..Source::everywhere() },
///     Target { host: Some("new.example.org".into()), ..Target::unchanged() },
/// );
/// assert_eq!(refused(&r), Some(Move::Host));
/// r.consent = Some(Consent::Declared(20));
/// assert_eq!(refused(&r), None);
/// ```
pub fn refused(rule: &Rule) -> Option<Move> {
    match site_move(rule)? {
        Move::AnyHostToOne => Some(Move::AnyHostToOne),
        m if rule.consent.is_none() => Some(m),
        _ => None,
    }
}

/// Leave out the rules [`refused`] refuses (order kept); returns how many were left out.
///
/// ```
/// use dedust_core::{drop_refused, Rule, RuleKind, Source, Target};
/// let alias = Rule::new(
///     RuleKind::Alias,
///     Source { host: "victim.com".into(), ..Source::everywhere() },
///     Target { host: Some("evil.com".into()), ..Target::unchanged() },
/// );
/// let mut rules = vec![alias];
/// assert_eq!(drop_refused(&mut rules), 1);
/// assert!(rules.is_empty());
/// ```
pub fn drop_refused(rules: &mut Vec<Rule>) -> usize {
    let before = rules.len();
    rules.retain(|r| refused(r).is_none());
    before - rules.len()
}

/// The warning a command prints after leaving out `n` refused rules of `what` (a file name or a
/// command): `WHAT: dropped N rules that move URLs to another host or path prefix without that
/// site's consent`.
///
/// ```
/// assert_eq!(
///     dedust_core::__private::moves::dropped_message("r.json", 2),
///     "r.json: dropped 2 rules that move URLs to another host or path prefix without that site's consent"
/// );
/// ```
pub fn dropped_message(what: &str, n: usize) -> String {
    format!(
        "{what}: dropped {n} rules that move URLs to another host or path prefix without that site's consent"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CapType, RuleKind, Source, Target};

    fn lit(s: &str) -> Vec<Piece> {
        vec![Piece::Lit(s.into())]
    }

    fn cap() -> Vec<Piece> {
        vec![Piece::Cap(CapType::Any)]
    }

    fn l(s: &str) -> SegOut {
        SegOut::Lit(s.into())
    }

    #[test]
    fn host_moves_table() {
        // (source host, source scheme, output host, output scheme, move)
        type Case<'a> = (
            &'a str,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
            Option<Move>,
        );
        let cases: &[Case] = &[
            ("victim.com", None, Some("evil.com"), None, Some(Move::Host)),
            (
                "victim.wordpress.com",
                None,
                Some("evil.wordpress.com"),
                None,
                Some(Move::Host),
            ),
            (
                "old.example.org",
                Some("http"),
                Some("new.example.org"),
                Some("https"),
                Some(Move::Host),
            ),
            ("www.a.org", None, Some("a.org"), None, None),
            ("a.org", None, Some("www.a.org"), None, None),
            ("m.a.org", None, Some("a.org"), None, None),
            ("m.a.org", None, Some("www.a.org"), None, None),
            ("amp.a.org", None, Some("a.org"), None, None),
            // Two labels, or a label on another name, are moves.
            ("www.m.a.org", None, Some("a.org"), None, Some(Move::Host)),
            ("www.a.org", None, Some("b.org"), None, Some(Move::Host)),
            // `www.com` is no `www.` label of `com`.
            ("www.com", None, Some("com"), None, Some(Move::Host)),
            // Scheme only, or nothing.
            ("a.org", Some("http"), None, Some("https"), None),
            ("a.org", None, Some("a.org"), None, None),
            ("a.org", None, None, None, None),
            // Every site to one: always.
            ("*", None, Some("evil.com"), None, Some(Move::AnyHostToOne)),
            ("*", None, None, Some("https"), None),
        ];
        for &(sh, ss, oh, os, want) in cases {
            let r = Rule::new(
                RuleKind::Alias,
                Source {
                    host: sh.into(),
                    scheme: ss.map(Into::into),
                    ..Source::everywhere()
                },
                Target {
                    host: oh.map(Into::into),
                    scheme: os.map(Into::into),
                    ..Target::unchanged()
                },
            );
            assert_eq!(site_move(&r), want, "{sh} → {oh:?}");
        }
    }

    #[test]
    fn path_prefix_moves_table() {
        // (source path, output path, move?)
        type Case = (Option<Vec<Vec<Piece>>>, Option<Vec<SegOut>>, bool);
        let cases: Vec<(&str, Case)> = vec![
            (
                "/view/victim/{x} → /view/evil/{x}",
                (
                    Some(vec![lit("view"), lit("victim"), cap()]),
                    Some(vec![l("view"), l("evil"), SegOut::Copy(2)]),
                    true,
                ),
            ),
            (
                "/view/{x} → /view/evil/{x}",
                (
                    Some(vec![lit("view"), cap()]),
                    Some(vec![l("view"), l("evil"), SegOut::Copy(1)]),
                    true,
                ),
            ),
            (
                "/view/victim/about → /view/evil/about (literal kept)",
                (
                    Some(vec![lit("view"), lit("victim"), lit("about")]),
                    Some(vec![l("view"), l("evil"), l("about")]),
                    true,
                ),
            ),
            (
                "/@victim/{x} → /@evil/{x}",
                (
                    Some(vec![lit("@victim"), cap()]),
                    Some(vec![l("@evil"), SegOut::Copy(1)]),
                    true,
                ),
            ),
            (
                "/amp/article/{id} → /article/{id} (prefix removed)",
                (
                    Some(vec![lit("amp"), lit("article"), cap()]),
                    Some(vec![l("article"), SegOut::Copy(2)]),
                    false,
                ),
            ),
            (
                "/forum.php → /index.php (nothing kept)",
                (
                    Some(vec![lit("forum.php")]),
                    Some(vec![l("index.php")]),
                    false,
                ),
            ),
            (
                "/a/{id}/ → /a/{id}",
                (
                    Some(vec![lit("a"), cap(), vec![]]),
                    Some(vec![l("a"), SegOut::Copy(1)]),
                    false,
                ),
            ),
            (
                "/a/{id} → /a/{id}/",
                (
                    Some(vec![lit("a"), cap()]),
                    Some(vec![l("a"), SegOut::Copy(1), l("")]),
                    false,
                ),
            ),
            (
                "/showthread.php?t={t} → /f/{t} (a query value into the path)",
                (
                    Some(vec![lit("showthread.php")]),
                    Some(vec![l("f"), SegOut::Param("t".into())]),
                    false,
                ),
            ),
            (
                "/x/{id} → /y/x/{id} reordered: the kept tail is `x/{id}`, `y` is new",
                (
                    Some(vec![lit("x"), cap()]),
                    Some(vec![l("y"), l("x"), SegOut::Copy(1)]),
                    true,
                ),
            ),
            (
                "/a/b/{id} → /b/a/{id}: only literals of the source's own prefix",
                (
                    Some(vec![lit("a"), lit("b"), cap()]),
                    Some(vec![l("b"), l("a"), SegOut::Copy(2)]),
                    false,
                ),
            ),
            (
                "query only (path kept)",
                (Some(vec![lit("p")]), None, false),
            ),
            ("any path", (None, Some(vec![l("x")]), false)),
        ];
        for (name, (src, out, want)) in cases {
            let r = Rule::new(
                RuleKind::Template,
                Source {
                    host: "sites.google.com".into(),
                    path: src,
                    rest: false,
                    ..Source::everywhere()
                },
                Target {
                    path: out,
                    ..Target::unchanged()
                },
            );
            assert_eq!(site_move(&r) == Some(Move::PathPrefix), want, "{name}");
        }
    }

    #[test]
    fn consent_keeps_a_move_but_never_one_to_one_host_from_every_site() {
        let mk = |src: &str, out: &str, consent: Option<Consent>| {
            let mut r = Rule::new(
                RuleKind::Alias,
                Source {
                    host: src.into(),
                    ..Source::everywhere()
                },
                Target {
                    host: Some(out.into()),
                    ..Target::unchanged()
                },
            );
            r.consent = consent;
            r
        };
        let cases = [
            (mk("victim.com", "evil.com", None), false),
            (
                mk("victim.com", "evil.com", Some(Consent::Declared(3))),
                true,
            ),
            (
                mk("victim.com", "evil.com", Some(Consent::AllowCrossSite)),
                true,
            ),
            (mk("*", "evil.com", Some(Consent::AllowCrossSite)), false),
            (mk("*", "evil.com", Some(Consent::Declared(9))), false),
            (mk("www.a.org", "a.org", None), true),
        ];
        let mut all: Vec<Rule> = cases.iter().map(|(r, _)| r.clone()).collect();
        for (r, kept) in &cases {
            assert_eq!(refused(r).is_none(), *kept, "{} {:?}", r.pattern, r.consent);
        }
        assert_eq!(drop_refused(&mut all), 3);
        assert_eq!(all.len(), 3);
    }
}
