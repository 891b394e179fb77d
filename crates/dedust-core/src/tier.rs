//! The cross-host tier's rule-level helpers: the URL feature a cross-host rule needs
//! ([`exposure_key`]), the parameter a cross-host drop removes, and how cross-host rules sit
//! next to host rules (host evidence wins: `cross_host_after_hosts`).
//!
//! In: rules (and, for `parts_exposure`, a split URL). Out: keys, exceptions, the rules kept.
//! Invariants: no URL data beyond the one URL given; registrable domains come from
//! [`crate::site`].

use crate::model::Rule;
use crate::url_parts::UrlParts;
use std::collections::{HashMap, HashSet};

/// Drop from a cross-host rule's `attested` hosts the ones whose domain is excepted.
#[doc(hidden)]
pub fn prune_attested(r: &mut Rule) {
    let except = &r.except;
    r.attested.retain(|h| {
        except
            .binary_search(&crate::site::registrable_domain(h).to_string())
            .is_err()
    });
}

/// The exposure key of a cross-host candidate: what a URL must have for the rule to touch it
/// (`param:NAME` for a drop, the convention otherwise); `None` for other rules.
///
/// ```
/// let r = dedust_core::__private::model::convention_rule(dedust_core::Convention::StripWww);
/// assert_eq!(dedust_core::__private::tier::exposure_key(&r).as_deref(), Some("www"));
/// ```
pub fn exposure_key(r: &Rule) -> Option<String> {
    rule_feature(r).map(|f| f.key())
}

/// An exposure key borrowed from a URL or a rule (see [`exposure_key`] for its text form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[doc(hidden)]
pub enum Feature<'a> {
    /// `http`.
    Http,
    /// `www`.
    Www,
    /// `slash`.
    Slash,
    /// `doc:NAME`.
    Doc(&'a str),
    /// `param:NAME`.
    Param(&'a str),
    /// `suffix`: a path ending in a suffix-like word (the word is kept for the index, but the
    /// key names none, so a crawl's every last word is not a key).
    Suffix(&'a str),
    /// `pparam:NAME`: a `;NAME=…` parameter in the path's last segment.
    PathParam(&'a str),
    /// `label:L`: a host starting with a mobile or AMP label ([`crate::model::MOBILE_LABELS`]).
    Label(&'a str),
    /// `lower:EXT`: a path with an upper-case letter outside its `%XX` escapes whose last
    /// segment ends in `.EXT` ([`crate::model::path_extension`]).
    Lower(&'a str),
    /// `squery:EXT`: a URL with a query whose path names a static file `….EXT`
    /// ([`crate::model::static_extension`]).
    StaticQuery(&'a str),
}

impl Feature<'_> {
    /// The text form ([`exposure_key`]).
    pub fn key(&self) -> String {
        match self {
            Feature::Http => "http".into(),
            Feature::Www => "www".into(),
            Feature::Slash => "slash".into(),
            Feature::Doc(n) => format!("doc:{n}"),
            Feature::Param(n) => format!("param:{n}"),
            Feature::Suffix(_) => "suffix".into(),
            Feature::PathParam(n) => format!("pparam:{n}"),
            Feature::Label(l) => format!("label:{l}"),
            Feature::Lower(e) => format!("lower:{e}"),
            Feature::StaticQuery(e) => format!("squery:{e}"),
        }
    }
}

/// The feature a cross-host rule needs in a URL to touch it ([`exposure_key`]).
#[doc(hidden)]
pub fn rule_feature(r: &Rule) -> Option<Feature<'_>> {
    use crate::model::Convention as C;
    if !r.is_global() {
        return None;
    }
    match &r.convention {
        Some(C::Https) => Some(Feature::Http),
        Some(C::StripWww) => Some(Feature::Www),
        Some(C::TrailingSlash) => Some(Feature::Slash),
        Some(C::DefaultDoc(n)) => Some(Feature::Doc(n)),
        Some(C::Suffix(n)) => Some(Feature::Suffix(n)),
        Some(C::PathParam(n)) => Some(Feature::PathParam(n)),
        Some(C::HostLabel(l)) => Some(Feature::Label(l)),
        Some(C::LowerPath(e)) => Some(Feature::Lower(e)),
        Some(C::StaticQuery(e)) => Some(Feature::StaticQuery(e)),
        None => dropped_param(r).map(Feature::Param),
    }
}

/// The exposure features of one base-normalized URL (see [`exposure_key`]), each once.
#[doc(hidden)]
pub fn url_exposure<'a>(url: &'a str, out: &mut Vec<Feature<'a>>) {
    if let Some(p) = crate::url_parts::split_url(url) {
        parts_exposure(&p, out);
    }
}

/// [`url_exposure`] of a URL already split.
#[doc(hidden)]
pub fn parts_exposure<'a>(p: &UrlParts<'a>, out: &mut Vec<Feature<'a>>) {
    if p.scheme == "http" {
        out.push(Feature::Http);
    }
    if p.host.starts_with("www.") {
        out.push(Feature::Www);
    }
    if let Some((l, _)) = crate::model::mobile_label(p.host) {
        out.push(Feature::Label(l));
    }
    if p.path.len() > 1 && p.path.ends_with('/') {
        out.push(Feature::Slash);
    }
    if let Some(last) = p.path.rsplit('/').next().filter(|l| l.contains('.')) {
        out.push(Feature::Doc(last));
    }
    // A suffix word: the last non-empty segment, never the first one nor after `//`.
    let body = p.path.strip_suffix('/').unwrap_or(p.path);
    if let Some((dir, last)) = body.rsplit_once('/') {
        if !dir.is_empty() && !dir.ends_with('/') && crate::model::suffix_like(last) {
            out.push(Feature::Suffix(last));
        }
    }
    // The extension first: a look at the last segment rules out most URLs before a scan.
    if let Some(e) = crate::model::path_extension(p.path) {
        if crate::model::lower_path_changes(p.path) {
            out.push(Feature::Lower(e));
        }
        if p.query.is_some() && crate::model::STATIC_EXTENSIONS.contains(&e) {
            out.push(Feature::StaticQuery(e));
        }
    }
    // Each name once, however often a (hostile) segment repeats it: a URL is one candidate.
    let mut names: Vec<&str> = crate::model::path_param_names(p.path).collect();
    names.sort_unstable();
    names.dedup();
    out.extend(names.into_iter().map(Feature::PathParam));
    out.extend(
        crate::base::param_names(p.query)
            .into_iter()
            .map(Feature::Param),
    );
}

/// The registrable domain of a host, owned.
#[doc(hidden)]
pub fn domain(host: &str) -> String {
    crate::site::registrable_domain(host).to_string()
}

/// The parameter a cross-host drop rule removes (its one required parameter, not copied; the
/// path kept: a cross-host template that moves the value into the path is no drop).
fn dropped_param(r: &Rule) -> Option<&str> {
    match (r.source.required.as_slice(), &r.output.query) {
        ([(name, _)], Some(q)) if q.is_empty() && r.output.path.is_none() => Some(name),
        _ => None,
    }
}

/// Cross-host rules next to the host-scoped ones:
/// * host evidence wins: a host whose kept rules use a parameter (required with its value
///   copied, or moved into the path) is added to the exceptions of every cross-host rule that
///   drops that parameter;
/// * one rule per mechanism: a cross-host drop on one literal path is removed when the same drop
///   on any path is kept.
#[doc(hidden)]
pub fn cross_host_after_hosts(rules: Vec<Rule>) -> Vec<Rule> {
    let mut uses: HashMap<&str, Vec<String>> = HashMap::new();
    for r in rules.iter().filter(|r| !r.is_global()) {
        let Some(q) = &r.output.query else { continue };
        for (n, v) in q {
            if *v == crate::model::ValOut::Copy {
                uses.entry(n.as_str())
                    .or_default()
                    .push(domain(&r.source.host));
            }
        }
        for seg in r.output.path.iter().flatten() {
            if let crate::model::SegOut::Param(n) = seg {
                uses.entry(n.as_str())
                    .or_default()
                    .push(domain(&r.source.host));
            }
        }
    }
    let anywhere: HashSet<(String, String)> = rules
        .iter()
        .filter(|r| r.is_global() && r.source.path.is_none())
        .filter_map(|r| {
            dropped_param(r).map(|n| (n.to_string(), format!("{:?}", r.source.required)))
        })
        .collect();
    let extra: Vec<Option<Vec<String>>> = rules
        .iter()
        .map(|r| {
            let n = dropped_param(r).filter(|_| r.is_global())?;
            uses.get(n).cloned()
        })
        .collect();
    rules
        .into_iter()
        .zip(extra)
        .filter(|(r, _)| {
            !(r.is_global()
                && r.source.path.is_some()
                && dropped_param(r).is_some_and(|n| {
                    anywhere.contains(&(n.to_string(), format!("{:?}", r.source.required)))
                }))
        })
        .map(|(mut r, extra)| {
            if let Some(hosts) = extra {
                r.except.extend(hosts);
                r.except.sort_unstable();
                r.except.dedup();
            }
            r
        })
        .collect()
}
