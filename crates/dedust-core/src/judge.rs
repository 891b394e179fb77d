//! Judging validated rules: the thresholds ([`ValidateOptions`]), the verdict on one rule's
//! counts, the many → one family, the fp rate a rule is judged by, and the application order.
//!
//! In: rules whose validation numbers (`support`, `fp`, `sites`) are set. Out: verdicts and an
//! order. Invariants: pure functions of the rule records (no URL data), so `validate` deciding
//! on all data and `merge` deciding again on pooled shard evidence judge alike; [`order`] is a
//! total order (specificity, score, id).

use crate::model::{Rule, RuleKind, ValOut, ValPat};

/// Thresholds of validation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValidateOptions {
    /// Least support a rule needs.
    pub min_support: usize,
    /// Highest false-positive rate a rule may have.
    pub max_fpr: f64,
    /// Least registrable domains a cross-host rule (scope `*`) must merge duplicates on, never
    /// different content ([`Rule::sites`]).
    pub min_sites: usize,
    /// Least URLs a family of many → one rules ([`is_collapse`]: varying ids sent to one fixed
    /// page, pooled over the rules of a host that share the target) must merge (and at least
    /// [`COLLAPSE_HOST_SHARE`] of the host's URLs).
    pub min_collapse: usize,
    /// Weight, in merges, of a many → one family's pooled fp rate in the rate each of its rules
    /// is judged by ([`judged_fpr`]); 0 judges every rule by its own ratio.
    pub family_weight: f64,
    /// Judge by the one-sided 95 % Clopper–Pearson upper bound of the fp rate instead of the
    /// ratio (before shrinking toward the family).
    pub fpr_bound: bool,
    /// Keep the [`PRIORS`] (`http` ≡ `https`, `www.`, trailing slash) and the
    /// [`tracking_prior`] (`utm_*` dropped) as dedup keys unless the
    /// data refutes them, whatever their support and sites (see [`verdict`]; `--priors`, for
    /// small crawls).
    pub priors: bool,
}

/// The conventions [`ValidateOptions::priors`] keeps unless refuted: the ones the web-archive
/// key (SURT) folds on every host — `http` ≡ `https`, `www.h` ≡ `h`, `/a/b/` ≡ `/a/b`. Servers
/// answer both spellings alike so often that a learner with no evidence on them (a small crawl,
/// a few sites) need not do worse than that key; evidence still decides where there is some: a
/// data set where they merge different content rejects them, and a site where they do is
/// excepted. Off by default (every rule then needs its evidence, `--min-sites` sites for a
/// cross-host one). Dedup keys only: the crawler exports make a cross-host rule a fetch rewrite
/// on the hosts whose URLs attest it, so a prior nobody attested rewrites nothing.
pub const PRIORS: [crate::model::Convention; 3] = [
    crate::model::Convention::Https,
    crate::model::Convention::StripWww,
    crate::model::Convention::TrailingSlash,
];

/// Least share of its host's URLs a many → one family (varying ids sent to one fixed page,
/// pooled over the host's rules with that target) must merge, besides
/// [`ValidateOptions::min_collapse`] URLs. A login wall or a soft 404 answers a site-wide
/// share of its URLs (the forum's wall: 20 % of a crawl's training half); a few mangled aliases
/// that a migration map sends to one page of a large site (`/GPT-3A`, `/GPT-3Brown` → `/GPT`)
/// are not evidence that every id of the pattern is that page (at most 0.2 % of the map's
/// host: every one of its fixed-target families merged different pages in a held-out half).
pub const COLLAPSE_HOST_SHARE: f64 = 0.01;

/// The campaign parameters [`ValidateOptions::priors`] also drops unless refuted (sorted):
/// Google Analytics' `utm_*` tags, which a link carries to tell the analytics of the page it
/// points to where the visitor came from. The page is the same whatever they say: a publisher's
/// canonical drops them, and so do the tracking lists crawlers use (ClearURLs' global rule).
/// Other tracking names (`ref`, `source`, `cmp`) also carry content on some sites; they are left
/// to evidence.
pub const TRACKING_PRIOR: [&str; 6] = [
    "utm_campaign",
    "utm_content",
    "utm_id",
    "utm_medium",
    "utm_source",
    "utm_term",
];

/// The cross-host rule of [`TRACKING_PRIOR`]: every host, any path, the `utm_*` parameters
/// dropped when present, the rest kept.
///
/// ```
/// use dedust_core::__private::judge::tracking_prior;
/// let r = tracking_prior();
/// assert_eq!(
///     dedust_core::apply_rule(&r, "https://a.org/x?id=3&utm_source=rss&utm_medium=feed").as_deref(),
///     Some("https://a.org/x?id=3")
/// );
/// assert_eq!(dedust_core::apply_rule(&r, "https://a.org/x?id=3"), None);
/// ```
pub fn tracking_prior() -> Rule {
    use crate::model::{Source, Target};
    Rule::new(
        RuleKind::Drop,
        Source {
            optional: TRACKING_PRIOR.iter().map(|n| n.to_string()).collect(),
            ..Source::everywhere()
        },
        Target {
            query: Some(vec![]),
            ..Target::unchanged()
        },
    )
}

/// Whether `r` is the cross-host rule of one of the [`PRIORS`] or the [`tracking_prior`].
///
/// ```
/// use dedust_core::__private::judge::{is_prior, tracking_prior};
/// use dedust_core::{convention_rule, Convention};
/// assert!(is_prior(&convention_rule(Convention::StripWww)));
/// assert!(is_prior(&tracking_prior()));
/// assert!(!is_prior(&convention_rule(Convention::DefaultDoc("index.html".into()))));
/// ```
pub fn is_prior(r: &Rule) -> bool {
    if !r.is_global() {
        return false;
    }
    match r.kind {
        RuleKind::Convention => r.convention.as_ref().is_some_and(|c| PRIORS.contains(c)),
        RuleKind::Drop => {
            let s = &r.source;
            s.scheme.is_none()
                && s.path.is_none()
                && s.required.is_empty()
                && s.rest
                && s.optional.iter().map(String::as_str).eq(TRACKING_PRIOR)
                && r.output
                    == (crate::model::Target {
                        query: Some(vec![]),
                        ..crate::model::Target::unchanged()
                    })
        }
        _ => false,
    }
}

impl Default for ValidateOptions {
    /// `min_support = 2`, `max_fpr = 0.15`, `min_sites = 2`, `min_collapse = 10`,
    /// `family_weight = 10`, `fpr_bound = false`, `priors = false` (see README, "Choosing the
    /// thresholds").
    fn default() -> Self {
        ValidateOptions {
            min_support: 2,
            max_fpr: 0.15,
            min_sites: 2,
            min_collapse: 10,
            family_weight: 10.0,
            fpr_bound: false,
            priors: false,
        }
    }
}

/// Specificity of a rule: more literal constraints first.
pub fn specificity(r: &Rule) -> i64 {
    let s = &r.source;
    let mut k = 0i64;
    if s.scheme.is_some() {
        k += 1;
    }
    if let Some(p) = &s.path {
        k += 4;
        for seg in p {
            for piece in seg {
                k += match piece {
                    crate::model::Piece::Lit(_) => 3,
                    crate::model::Piece::Cap(_) => 1,
                };
            }
        }
    }
    for (_, v) in &s.required {
        k += match v {
            ValPat::Any => 1,
            _ => 2,
        };
    }
    if !s.rest {
        k += 2;
    }
    if r.kind == RuleKind::Alias {
        k -= 1;
    }
    k
}

/// Quality used to break conflicts: `support − 10·fp` when validated, else the URLs learned from.
#[doc(hidden)]
pub fn score(r: &Rule) -> i64 {
    match r.support {
        Some(s) => s as i64 - 10 * r.fp.unwrap_or(0) as i64,
        None => r.urls as i64,
    }
}

/// `fp / support` rounded to 4 decimals (0 without support), as rule files record it.
pub fn rounded_fpr(support: usize, fp: usize) -> f64 {
    if support == 0 {
        0.0
    } else {
        (fp as f64 / support as f64 * 10000.0).round() / 10000.0
    }
}

/// What labelled data says of one rule, whatever the thresholds on support: it never merged
/// two of the data's URLs (*untested*: the data cannot judge it), it merged some and wrong merges
/// are within the bound (*supported*), or its wrong merges pass the bound (*refuted*). A rule
/// that drops a captured value is refuted by one wrong merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Evidence {
    /// No merge on the data.
    Untested,
    /// Merges, with a false-positive rate within `max_fpr`.
    Supported,
    /// Merges, with a false-positive rate over `max_fpr`.
    Refuted,
}

impl Evidence {
    /// The word reports use: `untested`, `supported`, `refuted`.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Untested => "untested",
            Evidence::Supported => "supported",
            Evidence::Refuted => "refuted",
        }
    }
}

/// [`Evidence`] of a rule with its support and false positives set (`validate` sets them).
///
/// ```
/// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
/// use dedust_core::{evidence_of, Evidence, ValidateOptions};
/// let mut r = dedust_core::regex_rule("[?&]utm_source=[^&]*", "", "utm").unwrap();
/// let opts = ValidateOptions::default();
/// assert_eq!(evidence_of(&r, &opts), Evidence::Untested);
/// (r.support, r.fp) = (Some(10), Some(1));
/// assert_eq!(evidence_of(&r, &opts), Evidence::Supported);
/// (r.support, r.fp) = (Some(10), Some(5));
/// assert_eq!(evidence_of(&r, &opts), Evidence::Refuted);
/// # }
/// ```
pub fn evidence_of(r: &Rule, opts: &ValidateOptions) -> Evidence {
    let (sup, fp) = (r.support.unwrap_or(0), r.fp.unwrap_or(0));
    if sup == 0 {
        Evidence::Untested
    } else if fp > 0 && (discards_capture(r) || rounded_fpr(sup, fp) > opts.max_fpr) {
        Evidence::Refuted
    } else {
        Evidence::Supported
    }
}

/// What the thresholds say of one validated rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub enum Verdict {
    /// Too few merges (or, cross-host, too few sites).
    LowSupport,
    /// The judged false-positive rate is over the bound.
    HighFpr,
    /// Kept.
    Keep,
}

/// Whether a rule maps varying values to one fixed URL (many → one): its source captures a value
/// or drops parameters, and its target copies nothing from the source; or it replaces one id by
/// another (a captured parameter value written out as one literal), whatever else it copies.
///
/// ```
/// use dedust_core::{CapType, Piece, SegOut, Source, Target, ValPat};
/// use dedust_core::{__private::judge::is_collapse, Rule, RuleKind};
/// // `m.php?u={int}` → `login.php`: every member page sent to one login wall.
/// let source = Source {
///     scheme: None,
///     host: "f.org".into(),
///     path: Some(vec![vec![Piece::Lit("m.php".into())]]),
///     required: vec![("u".into(), ValPat::Pieces(vec![Piece::Cap(CapType::Int)]))],
///     optional: vec![],
///     rest: false,
/// };
/// let target = Target { scheme: None, host: None, path: Some(vec![SegOut::Lit("login.php".into())]), query: Some(vec![]) };
/// assert!(is_collapse(&Rule::new(RuleKind::Template, source.clone(), target)));
/// // `m.php?u={int}&v={int}` → `m.php?u={u}&v=7`: `v` replaced by one literal, `u` copied.
/// let mut two = source.clone();
/// two.required.push(("v".into(), ValPat::Pieces(vec![Piece::Cap(CapType::Int)])));
/// let copy_u = |v: dedust_core::ValOut| Target {
///     scheme: None, host: None, path: None,
///     query: Some(vec![("u".into(), dedust_core::ValOut::Copy), ("v".into(), v)]),
/// };
/// assert!(is_collapse(&Rule::new(RuleKind::Template, two.clone(), copy_u(dedust_core::ValOut::Lit("7".into())))));
/// // Both copied: not many → one.
/// assert!(!is_collapse(&Rule::new(RuleKind::Template, two, copy_u(dedust_core::ValOut::Copy))));
/// ```
pub fn is_collapse(r: &Rule) -> bool {
    shape(r).is_some_and(|(fixed, replaces_id)| fixed || replaces_id)
}

/// A many → one rule whose target is one fixed URL whatever the source (a login wall, a soft
/// 404): its source captures a value or drops parameters and its target copies nothing. Unlike
/// [`is_collapse`], not a rule that replaces one id and copies the rest (its targets vary, and a
/// URL filter would block their whole family). What the crawler exports write as URL filters.
pub fn is_fixed_collapse(r: &Rule) -> bool {
    shape(r).is_some_and(|(fixed, _)| fixed)
}

/// For a template: (its target is fixed — it captures and copies nothing —, it replaces one
/// captured parameter value by a literal). `None` for other kinds.
fn shape(r: &Rule) -> Option<(bool, bool)> {
    use crate::model::{Piece, SegOut};
    if r.kind != RuleKind::Template {
        return None;
    }
    let s = &r.source;
    let captured =
        |v: &ValPat| matches!(v, ValPat::Pieces(p) if p.iter().any(|x| matches!(x, Piece::Cap(_))));
    let captures = s
        .path
        .iter()
        .flatten()
        .flatten()
        .any(|p| matches!(p, Piece::Cap(_)))
        || s.required.iter().any(|(_, v)| captured(v))
        || !s.optional.is_empty();
    let o = &r.output;
    let copies = o.path.as_ref().is_none_or(|p| {
        p.iter()
            .any(|x| matches!(x, SegOut::Copy(_) | SegOut::Param(_)))
    }) || o.query.as_ref().is_none_or(|q| {
        q.iter()
            .any(|(_, v)| matches!(v, ValOut::Copy | ValOut::Seg(_)))
    }) || s.rest;
    // One id replaced by another: a parameter whose source value is captured (varies) and whose
    // output value is one literal (`newreply.php?noquote=1&p={int}` → `…&p=12713419`), even
    // when the rule copies other values.
    let replaces_id = s.required.iter().any(|(n, v)| {
        captured(v)
            && o.query
                .iter()
                .flatten()
                .any(|(m, out)| m == n && matches!(out, ValOut::Lit(_)))
    });
    Some((captures && !copies, replaces_id))
}

/// Judge a rule whose `support`, `fp` (and, cross-host, `sites`) are set; `family` is the pooled
/// `(support, fp)` of its many → one family, if it has one ([`collapse_family`]); `pooled_sites`
/// the registrable domains its site family holds on ([`family_sites`]), when it has one: a
/// cross-host rule needs `min_sites` of its own or of its family. With
/// [`ValidateOptions::priors`], one of the [`PRIORS`] needs no support and no sites: it is kept
/// unless its own ratio `fp / support` is over `max_fpr` (the ratio, not a bound: a prior's
/// evidence is read against the prior, and one clean merge must not count against it).
#[doc(hidden)]
pub fn verdict(
    r: &Rule,
    opts: &ValidateOptions,
    family: Option<(usize, usize)>,
    pooled_sites: Option<usize>,
) -> Verdict {
    let (sup, fp) = (r.support.unwrap_or(0), r.fp.unwrap_or(0));
    if opts.priors && is_prior(r) {
        return if rounded_fpr(sup, fp) > opts.max_fpr {
            Verdict::HighFpr
        } else {
            Verdict::Keep
        };
    }
    let sites = r.sites.max(pooled_sites.filter(|_| r.sites > Some(0)));
    if rewrites_ordinal_value(r) || !ordinal_drops_seen_enough(r) {
        return Verdict::LowSupport;
    }
    // A site's one literal tag (`?ref=rss` on this host) needs one merge less.
    let min_support = match drops_literal_tag(r) {
        true => opts.min_support.saturating_sub(1).max(1),
        false => opts.min_support,
    };
    if sup < min_support || sup == 0 || (r.is_global() && sites < Some(opts.min_sites)) {
        Verdict::LowSupport
    } else if (fp > 0 && discards_capture(r)) || judged_fpr(sup, fp, family, opts) > opts.max_fpr {
        Verdict::HighFpr
    } else {
        Verdict::Keep
    }
}

/// Whether `r` is a host rule that only drops parameters whose value it matches as one literal
/// that is no number (`?ref=rss`, `?wt_mc=rss.red.ho`, `?tag=topStories1` on one host): a
/// site's own tracking tag. Such a rule rewrites nothing but URLs carrying that exact tag on
/// that host, so one merge is evidence enough ([`verdict`] asks one merge less of it than of
/// other rules); a number (an id, a page) or a typed value (`?ref={alpha}`) still needs the
/// full support.
///
/// ```
/// use dedust_core::{Piece, Rule, RuleKind, Source, Target, ValPat};
/// use dedust_core::__private::judge::drops_literal_tag;
/// let drop = |host: &str, v: ValPat| {
///     let source = Source {
///         scheme: None,
///         host: host.into(),
///         path: None,
///         required: vec![("ref".into(), v)],
///         optional: vec![],
///         rest: true,
///     };
///     let target = Target { scheme: None, host: None, path: None, query: Some(vec![]) };
///     Rule::new(RuleKind::Drop, source, target)
/// };
/// let lit = |v: &str| ValPat::Pieces(vec![Piece::Lit(v.into())]);
/// assert!(drops_literal_tag(&drop("h.org", lit("rss"))));
/// assert!(!drops_literal_tag(&drop("h.org", lit("1288031"))));
/// assert!(!drops_literal_tag(&drop("*", lit("rss"))));
/// assert!(!drops_literal_tag(&drop("h.org", ValPat::Any)));
/// ```
pub fn drops_literal_tag(r: &Rule) -> bool {
    let (RuleKind::Drop, Some(out), false) = (r.kind, &r.output.query, r.is_global()) else {
        return false;
    };
    if !r.source.optional.is_empty() {
        return false;
    }
    let mut dropped = r
        .source
        .required
        .iter()
        .filter(|(n, _)| !out.iter().any(|(o, _)| o == n))
        .peekable();
    dropped.peek().is_some()
        && dropped.all(|(_, v)| literal(v).is_some_and(|x| x.bytes().any(|b| !b.is_ascii_digit())))
}

/// The one literal value `v` matches, when it is one.
fn literal(v: &ValPat) -> Option<&str> {
    match v {
        ValPat::Pieces(p) => match p.as_slice() {
            [crate::model::Piece::Lit(x)] => Some(x),
            _ => None,
        },
        _ => None,
    }
}

/// `value` as an integer up to [`ORDINAL_MAX`] written without a leading zero: what an
/// ordinal's value looks like.
fn small_integer(value: &str) -> Option<u64> {
    value
        .parse::<u64>()
        .ok()
        .filter(|&n| n <= ORDINAL_MAX && !(value.starts_with('0') && n > 0))
}

/// Whether template `r` discards a value it captures, or a literal path segment, while copying
/// another value (`/doc/{any}/{file}` → `/{file}`, `/doc/sr/{file}` → `/{file}`,
/// `/id/{int}/{slug}` → `/id/{int}`): its targets vary, yet two pages that differ in the
/// discarded part alone meet. One such collision in the data is a page lost for every
/// family that shares the kept part (two papers named `2020-chen.pdf` in two directories), so
/// [`verdict`] keeps such a rule only without any (a redirect map learned on half of its URLs
/// merges 794 URLs of the other half with a different page at `--max-fpr`, 214 with this).
/// Rules whose target is fixed (a login wall: [`is_fixed_collapse`]) are judged with their
/// family instead.
///
/// ```
/// use dedust_core::{CapType, Piece, Rule, RuleKind, SegOut, Source, Target};
/// use dedust_core::__private::judge::discards_capture;
/// let cap = |c| vec![Piece::Cap(c)];
/// let source = Source {
///     scheme: None,
///     host: "h.org".into(),
///     path: Some(vec![vec![Piece::Lit("doc".into())], cap(CapType::Any), cap(CapType::Any)]),
///     required: vec![],
///     optional: vec![],
///     rest: false,
/// };
/// let to = |path| Target { scheme: None, host: None, path: Some(path), query: None };
/// // `/doc/{any}/{any}` → `/{seg2}`: the directory is discarded.
/// assert!(discards_capture(&Rule::new(RuleKind::Template, source.clone(), to(vec![SegOut::Copy(2)]))));
/// // `/doc/{any}/{any}` → `/doc/{seg1}/{seg2}` discards nothing; → `/login` copies nothing.
/// let all = vec![SegOut::Lit("doc".into()), SegOut::Copy(1), SegOut::Copy(2)];
/// assert!(!discards_capture(&Rule::new(RuleKind::Template, source.clone(), to(all))));
/// assert!(!discards_capture(&Rule::new(RuleKind::Template, source.clone(), to(vec![SegOut::Lit("login".into())]))));
/// // `/doc/{any}/{any}` → `/{seg1}/{seg2}`: the literal directory is discarded.
/// assert!(discards_capture(&Rule::new(RuleKind::Template, source, to(vec![SegOut::Copy(1), SegOut::Copy(2)]))));
/// ```
pub fn discards_capture(r: &Rule) -> bool {
    use crate::model::{Piece, SegOut};
    if r.kind != RuleKind::Template {
        return false;
    }
    let (s, o) = (&r.source, &r.output);
    let captured = |p: &[Piece]| p.iter().any(|x| matches!(x, Piece::Cap(_)));
    let seg_used = |j: usize| seg_written(o, j);
    let param_used = |n: &str| param_written(o, n);
    // A literal segment is kept when the output writes it anywhere (`/a/{id}` → `/{id}/a`).
    let lit_used = |j: usize, p: &[Piece]| {
        seg_used(j)
            || o.path.as_ref().is_some_and(|out| {
                out.iter()
                    .any(|x| matches!((x, p), (SegOut::Lit(l), [Piece::Lit(m)]) if l == m))
            })
    };
    let (mut kept, mut lost) = (false, false);
    for (j, p) in s.path.iter().flatten().enumerate() {
        match captured(p) {
            true => {
                kept |= seg_used(j);
                lost |= !seg_used(j);
            }
            false => lost |= !lit_used(j, p),
        }
    }
    for (n, v) in &s.required {
        if matches!(v, ValPat::Pieces(p) if captured(p)) {
            kept |= param_used(n);
            lost |= !param_used(n);
        }
    }
    kept && lost
}

/// Whether a template's output writes source path segment `j` (copied, or as a parameter).
fn seg_written(o: &crate::model::Target, j: usize) -> bool {
    use crate::model::SegOut;
    o.path.as_ref().is_none_or(|p| p.contains(&SegOut::Copy(j)))
        || o.query
            .as_ref()
            .is_some_and(|q| q.iter().any(|(_, v)| *v == ValOut::Seg(j)))
}

/// Whether a template's output writes the value of source parameter `n`.
fn param_written(o: &crate::model::Target, n: &str) -> bool {
    use crate::model::SegOut;
    o.query
        .as_ref()
        .is_none_or(|q| q.iter().any(|(m, v)| m == n && *v == ValOut::Copy))
        || o.path
            .as_ref()
            .is_some_and(|p| p.iter().any(|x| matches!(x, SegOut::Param(m) if m == n)))
}

/// A template that captures values and writes none of them: every URL of its pattern goes to one
/// path whatever its ids say, its query passed through aside (`/doc/{int}{?query}` →
/// `/dics{?query}`). Such rules are held to their many → one family's bounds
/// ([`ValidateOptions::min_collapse`], [`COLLAPSE_HOST_SHARE`]) as [`is_collapse`] rules are.
///
/// ```
/// use dedust_core::{CapType, Piece, Rule, RuleKind, SegOut, Source, Target};
/// use dedust_core::__private::judge::discards_every_capture;
/// let source = Source {
///     path: Some(vec![vec![Piece::Lit("doc".into())], vec![Piece::Cap(CapType::Int)]]),
///     ..Source { host: "h.org".into(), ..Source::everywhere() }
/// };
/// let to = |path| Target { path: Some(path), ..Target::unchanged() };
/// let dics = to(vec![SegOut::Lit("dics".into())]);
/// assert!(discards_every_capture(&Rule::new(RuleKind::Template, source.clone(), dics)));
/// let kept = to(vec![SegOut::Lit("d".into()), SegOut::Copy(1)]);
/// assert!(!discards_every_capture(&Rule::new(RuleKind::Template, source, kept)));
/// ```
pub fn discards_every_capture(r: &Rule) -> bool {
    use crate::model::Piece;
    if r.kind != RuleKind::Template {
        return false;
    }
    let (s, o) = (&r.source, &r.output);
    let captured = |p: &[Piece]| p.iter().any(|x| matches!(x, Piece::Cap(_)));
    let mut any = false;
    for (j, p) in s.path.iter().flatten().enumerate() {
        if captured(p) {
            if seg_written(o, j) {
                return false;
            }
            any = true;
        }
    }
    for (n, v) in &s.required {
        if matches!(v, ValPat::Pieces(p) if captured(p)) {
            if param_written(o, n) {
                return false;
            }
            any = true;
        }
    }
    any
}

/// Least distinct values, and least clusters, an ordinal parameter dropped whatever its value
/// ([`ordinal_drops`]) must be seen merged with (`?page=2`, `=3`, `=26` of three threads).
pub const ORDINAL_MIN_SEEN: usize = 3;

/// The parameters `r` drops whatever their value (its optional ones) that its examples show as
/// an ordinal: every value an integer up to [`ORDINAL_MAX`], one at least 2 (page numbers,
/// offsets), found from the values' shape, not the name. None for a rule with a fixed target
/// ([`is_fixed_collapse`]: a login wall's small user ids are no pages). A crawler that fetched such a rule's
/// rewrite would never fetch page 2 of a long thread: the crawler exports keep it as a dedup key
/// only, and [`verdict`] asks for [`ORDINAL_MIN_SEEN`] distinct values and clusters.
///
/// ```
/// use dedust_core::{Rule, RuleKind, Source, Target, ValPat};
/// use dedust_core::__private::judge::ordinal_drops;
/// let source = Source {
///     scheme: None,
///     host: "f.org".into(),
///     path: None,
///     required: vec![("t".into(), ValPat::Any)],
///     optional: vec!["page".into(), "s".into()],
///     rest: true,
/// };
/// let target = Target { scheme: None, host: None, path: None, query: Some(vec![]) };
/// let mut r = Rule::new(RuleKind::Drop, source, target);
/// r.examples = vec![
///     vec!["https://f.org/t.php?t=1".into(), "https://f.org/t.php?page=2&s=ab12&t=1".into()],
///     vec!["https://f.org/t.php?t=2".into(), "https://f.org/t.php?page=26&t=2".into()],
/// ];
/// assert_eq!(ordinal_drops(&r), ["page"]);
/// ```
pub fn ordinal_drops(r: &Rule) -> Vec<&str> {
    ordinal_values(r)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// For each optional parameter of `r` whose every value in the examples is an integer up to
/// [`ORDINAL_MAX`] ([`small_integer`]), one at least 2: its distinct values.
fn ordinal_values(r: &Rule) -> Vec<(&str, Vec<u64>)> {
    use crate::url_parts::{split_ascii, split_url};
    // A fixed target (a login wall answering `?u=50`, `?u=51`, …) is no page of a sequence: it
    // is judged with its family.
    if is_fixed_collapse(r) {
        return Vec::new();
    }
    let mut out: Vec<(&str, Vec<u64>, bool)> = r
        .source
        .optional
        .iter()
        .map(|n| (n.as_str(), Vec::new(), true))
        .collect();
    for u in r.examples.iter().flatten() {
        let Some(q) = split_url(u).and_then(|p| p.query) else {
            continue;
        };
        for pair in split_ascii(q, b'&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if let Some(o) = out.iter_mut().find(|o| o.0 == name) {
                match small_integer(value) {
                    Some(n) => {
                        if !o.1.contains(&n) {
                            o.1.push(n);
                        }
                    }
                    None => o.2 = false,
                }
            }
        }
    }
    out.into_iter()
        .filter(|(_, v, ok)| *ok && v.iter().any(|&n| n >= 2))
        .map(|(n, v, _)| (n, v))
        .collect()
}

/// Whether every ordinal parameter `r` drops ([`ordinal_drops`]) is seen with at least
/// [`ORDINAL_MIN_SEEN`] distinct values over at least as many clusters.
fn ordinal_drops_seen_enough(r: &Rule) -> bool {
    ordinal_values(r)
        .iter()
        .all(|(_, v)| v.len() >= ORDINAL_MIN_SEEN && r.clusters >= ORDINAL_MIN_SEEN)
}

/// Largest literal value [`rewrites_ordinal_value`] reads as an ordinal's (a page number or an
/// offset); a larger number is an id.
pub const ORDINAL_MAX: u64 = 10_000;

/// Whether `r` drops a parameter whose value it matches as one literal integer from 2 to
/// [`ORDINAL_MAX`] (`?page=2`, `?start=20`), or writes it out as another literal (`?page=3` →
/// `?page=2`): one later value of an ordinal (a page number, an offset). Such merges are often truly equal in a crawl (a short thread clamps page 2 onto its
/// only page), yet a rule learned from them stops a crawler from ever fetching page 2 of a long
/// one: one value is never evidence for the parameter, whatever the support ([`verdict`] reads
/// it as too little). Found from the value's shape, not the parameter's name; `0` and `1` (a
/// first page, a flag such as `?m=1`) are not in it.
///
/// ```
/// use dedust_core::{Piece, Rule, RuleKind, Source, Target, ValOut, ValPat};
/// use dedust_core::__private::judge::rewrites_ordinal_value;
/// // `?page=V` dropped, the rest of the query kept.
/// let drop = |v: &str| {
///     let source = Source {
///         scheme: None,
///         host: "h.org".into(),
///         path: None,
///         required: vec![("page".into(), ValPat::Pieces(vec![Piece::Lit(v.into())]))],
///         optional: vec![],
///         rest: true,
///     };
///     let target = Target { scheme: None, host: None, path: None, query: Some(vec![]) };
///     Rule::new(RuleKind::Drop, source, target)
/// };
/// assert!(rewrites_ordinal_value(&drop("2")) && rewrites_ordinal_value(&drop("40")));
/// assert!(!rewrites_ordinal_value(&drop("1")) && !rewrites_ordinal_value(&drop("rss")));
/// assert!(!rewrites_ordinal_value(&drop("1288031")));
/// // `?page=3` → `?page=2` (a short thread's last page), and `?page=3` kept as it is.
/// let mut to2 = drop("3");
/// to2.output.query = Some(vec![("page".into(), ValOut::Lit("2".into()))]);
/// assert!(rewrites_ordinal_value(&to2));
/// to2.output.query = Some(vec![("page".into(), ValOut::Copy)]);
/// assert!(!rewrites_ordinal_value(&to2));
/// ```
pub fn rewrites_ordinal_value(r: &Rule) -> bool {
    let Some(out) = &r.output.query else {
        return false;
    };
    r.source.required.iter().any(|(name, v)| {
        let Some(x) = literal(v).filter(|x| small_integer(x).is_some_and(|n| n >= 2)) else {
            return false;
        };
        match out.iter().find(|(n, _)| n == name) {
            None => true,
            Some((_, ValOut::Lit(o))) => o != x,
            Some(_) => false,
        }
    })
}

/// The family a cross-host convention pools its sites with: default documents named `index`
/// or `default` with a server-page extension (`index.php`, `index.html`, `default.aspx`, …,
/// any case) are one mechanism — a server answering for the directory — so evidence that
/// `index.php` is the directory on three sites also speaks for `index.html` seen on one. A feed
/// or a backup (`index.xml`, `index.php.bak`) is not in it; other rules have no family.
///
/// ```
/// use dedust_core::__private::judge::site_family;
/// use dedust_core::{convention_rule, Convention};
/// let doc = |n: &str| convention_rule(Convention::DefaultDoc(n.into()));
/// assert!(site_family(&doc("Default.aspx")).is_some());
/// assert!(site_family(&doc("index.xml")).is_none());
/// assert!(site_family(&doc("home.html")).is_none());
/// assert!(site_family(&convention_rule(Convention::TrailingSlash)).is_none());
/// ```
pub fn site_family(r: &Rule) -> Option<&'static str> {
    const PAGES: &[&str] = &["html", "htm", "shtml", "php", "asp", "aspx", "jsp", "cfm"];
    match &r.convention {
        Some(crate::model::Convention::DefaultDoc(name)) if r.is_global() => {
            let (stem, ext) = name.split_once('.')?;
            let page = PAGES.iter().any(|p| p.eq_ignore_ascii_case(ext));
            let dir = ["index", "default"]
                .iter()
                .any(|d| d.eq_ignore_ascii_case(stem));
            (page && dir).then_some("default-doc")
        }
        _ => None,
    }
}

/// Registrable domains each site family ([`site_family`]) holds on: the union of
/// [`Rule::supporting`] over the family's rules that pass `min_support` and `max_fpr` on their
/// own (a member that merged different content adds nothing). The same sets from one run's
/// candidates and from `merge`'s pooled evidence, whose `supporting` lists are united.
///
/// # Complexity
/// `O(R + S log S)` for `R` rules and `S` supporting domains of family members.
pub fn family_sites<'r>(
    rules: impl IntoIterator<Item = &'r Rule>,
    opts: &ValidateOptions,
) -> std::collections::BTreeMap<&'static str, std::collections::BTreeSet<&'r str>> {
    let mut sets: std::collections::BTreeMap<&'static str, std::collections::BTreeSet<&str>> =
        Default::default();
    for r in rules {
        let Some(f) = site_family(r) else { continue };
        let (sup, fp) = (r.support.unwrap_or(0), r.fp.unwrap_or(0));
        if sup == 0 || sup < opts.min_support || judged_fpr(sup, fp, None, opts) > opts.max_fpr {
            continue;
        }
        sets.entry(f)
            .or_default()
            .extend(r.supporting.iter().map(String::as_str));
    }
    sets
}

/// The sites `r` may count from its family ([`family_sites`]): the family's domains less the
/// ones where `r` itself merged different content (its `except`), for [`verdict`]'s
/// `pooled_sites`; `None` outside a family.
pub fn pooled_sites(
    r: &Rule,
    families: &std::collections::BTreeMap<&'static str, std::collections::BTreeSet<&str>>,
) -> Option<usize> {
    let set = families.get(site_family(r)?)?;
    Some(
        set.iter()
            .filter(|d| r.except.binary_search_by(|e| e.as_str().cmp(d)).is_err())
            .count(),
    )
}

/// The many → one family a rule belongs to: its host and its fixed target. The rules of one
/// family (`member.php?u=`, `private.php?u=`, `newreply.php?p=` all sent to one login page) are
/// evidence for each other.
#[doc(hidden)]
pub fn collapse_family(r: &Rule) -> Option<(&str, &str)> {
    is_collapse(r).then_some((r.source.host.as_str(), r.target.as_str()))
}

/// The false-positive rate a rule with `support` merges, `fp` of them wrong, is judged by.
///
/// The rule's own estimate e is `fp / support`, or with [`ValidateOptions::fpr_bound`] the
/// one-sided 95 % Clopper–Pearson upper bound. A rule in a many → one `family` (pooled
/// `(support, fp)` over the family's candidates, the rule included) is shrunk toward the
/// family's pooled rate p with weight m = [`ValidateOptions::family_weight`]:
/// `(support · e + m · p) / (support + m)`. A rule alone in its family is passed `None` by
/// learning's selection (`dedust::validate::select`) and judged by e alone.
///
/// ```
/// use dedust_core::__private::judge::{judged_fpr, ValidateOptions};
/// let o = ValidateOptions::default();
/// assert_eq!(judged_fpr(14, 3, None, &o), 3.0 / 14.0);
/// // The same rule in a family that merged 101 URLs with 3 wrong: (3 + 10 · 3/101) / 24.
/// assert!((judged_fpr(14, 3, Some((101, 3)), &o) - 0.1373).abs() < 1e-4);
/// // The bound of 0 wrong in 2 is far from 0.
/// assert!(judged_fpr(2, 0, None, &ValidateOptions { fpr_bound: true, ..o }) > 0.7);
/// ```
pub fn judged_fpr(
    support: usize,
    fp: usize,
    family: Option<(usize, usize)>,
    opts: &ValidateOptions,
) -> f64 {
    if support == 0 {
        return 0.0;
    }
    let own = if opts.fpr_bound {
        clopper_pearson_upper(fp, support, 0.05)
    } else {
        fp as f64 / support as f64
    };
    match family {
        Some((fs, ff)) if fs > 0 && opts.family_weight > 0.0 => {
            let (n, m) = (support as f64, opts.family_weight);
            (n * own + m * (ff as f64 / fs as f64)) / (n + m)
        }
        _ => own,
    }
}

/// One-sided `1 − alpha` Clopper–Pearson upper bound of a binomial rate with `x` successes in
/// `n` trials: the p with P(X ≤ x | n, p) = alpha (1 when x = n), by bisection.
///
/// # Complexity
/// `O(x)` per evaluation of the binomial tail, 60 bisection steps.
fn clopper_pearson_upper(x: usize, n: usize, alpha: f64) -> f64 {
    if x >= n {
        return 1.0;
    }
    // ln P(X ≤ x) by log-sum-exp over the terms k = 0..=x.
    let ln_cdf = |p: f64| -> f64 {
        let (lp, lq) = (p.ln(), (1.0 - p).ln());
        let mut term = n as f64 * lq; // ln C(n, 0) p^0 q^n
        let mut terms = Vec::with_capacity(x + 1);
        terms.push(term);
        for k in 0..x {
            term += ((n - k) as f64 / (k + 1) as f64).ln() + lp - lq;
            terms.push(term);
        }
        let top = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        top + terms.iter().map(|t| (t - top).exp()).sum::<f64>().ln()
    };
    let target = alpha.ln();
    let (mut lo, mut hi) = (x as f64 / n as f64, 1.0);
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if ln_cdf(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// Application order: host-scoped rules before cross-host ones (host evidence wins); among
/// cross-host rules parameter drops first and conventions last, `lower_path` last of all (a
/// cross-host template names its source's whole query and path,
/// `index.php?id={int}&option=com_content`, so it must see the URL after the noise is dropped
/// and before `index.php` becomes `/`); then more specific first, then better, then id.
pub fn order(rules: &mut [Rule]) {
    // Lower-casing a path comes after the other conventions: a default document is matched
    // as written (`/Dir/Default.aspx` → `/Dir/` before `/dir/default.aspx`).
    let stage = |r: &Rule| match (r.is_global(), r.kind) {
        (false, _) => 0,
        (true, RuleKind::Drop) => 1,
        (true, RuleKind::Convention)
            if matches!(r.convention, Some(crate::model::Convention::LowerPath(_))) =>
        {
            4
        }
        (true, RuleKind::Convention) => 3,
        (true, _) => 2,
    };
    rules.sort_by(|a, b| {
        stage(a)
            .cmp(&stage(b))
            .then_with(|| specificity(b).cmp(&specificity(a)))
            .then_with(|| score(b).cmp(&score(a)))
            .then_with(|| a.id.cmp(&b.id))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clopper_pearson_upper_bounds() {
        // (wrong, merges, bound): 0 of n has the closed form 1 − 0.05^(1/n).
        for (x, n, want) in [
            (0, 1, 0.95),
            (0, 2, 0.776_393),
            (0, 19, 0.145_869),
            (0, 100, 0.029_513),
            (5, 5, 1.0),
        ] {
            let got = clopper_pearson_upper(x, n, 0.05);
            assert!((got - want).abs() < 1e-5, "{x}/{n}: {got}");
        }
        // More wrong merges, a higher bound; always at least the ratio.
        let mut last = 0.0;
        for x in 0..14 {
            let b = clopper_pearson_upper(x, 14, 0.05);
            assert!(b > last && b >= x as f64 / 14.0, "{x}: {b}");
            last = b;
        }
    }
}
