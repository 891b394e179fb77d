//! Normalize: apply base normalization and a rule set to URLs.
//!
//! In: [`Rule`]s (from one or several rule files) and URLs. Out: for each URL its canonical form
//! and the id of the last rule that changed it. Rules are compiled once into an index by host, by
//! literal first path segment and by the query parameter a rule needs (its rarest required name,
//! or each name a drop removes), so the cost per URL depends on the few rules filed under its own
//! host, path and parameters, not on the size of the rule set.
//!
//! Semantics (the same as Nutch's urlnormalizer-regex with `urlnormalizer.loop.count`): the base
//! layer runs first (unless disabled); then one *pass* applies every rule in file order, each to
//! the output of the one before (a rule that does not match leaves the URL as it is); passes
//! repeat until one changes nothing, at most [`MAX_ROUNDS`] times. The result is a fixed point, so
//! `normalize(normalize(u)) == normalize(u)` whenever the rule set converges within that many
//! passes (learning removes cycles; `validate` checks it on data).
//!
//! A learned rule matches a URL when the scheme (if set) and host are equal, the URL has no port,
//! user info or fragment, each path segment matches its pattern, each required parameter occurs
//! exactly once with a matching value, and every other parameter is optional or allowed by `rest`.
//! Output parameters are sorted by name (stable), like the base layer. An imported rule
//! ([`RuleKind::Regex`]) applies to every URL as Java's `replaceAll` does; a cross-host rule
//! (scope `*`) matches every host but those in its `except` list.

use crate::base::{base_normalize, BaseError, BaseOptions};
use crate::javaregex::JavaRegex;
use crate::key_index::KeyIndex;
use crate::model::{CapType, Piece, Rule, RuleKind, SegOut, ValOut, ValPat};
use crate::url_parts::{split_ascii, split_once_ascii, split_url, PartsAt, UrlParts};
use std::collections::HashMap;

/// Most passes over the rules per URL.
pub const MAX_ROUNDS: usize = 8;

/// A compiled rule set.
#[derive(Debug, Clone)]
pub struct Normalizer {
    rules: Vec<Rule>,
    by_host: KeyIndex<HostRules>,
    /// Imported regex rules and cross-host rules (any host), in rule order.
    global: Vec<usize>,
    /// The same rules, by the feature a URL needs for each to change it.
    keyed: GlobalRules,
    /// Rules that can only change a URL with a non-empty query (required parameters, or only
    /// dropping parameters): skipped at once for URLs without one.
    needs_query: Vec<bool>,
    /// Rules that rewrite the host alone, within its registrable domain (the `www.` and
    /// host-label conventions): after one, the next look at the rules reuses the candidate list.
    host_only: Vec<bool>,
    /// The compiled pattern of each imported rule (`None` for learned rules).
    java: Vec<Option<JavaRegex>>,
    base: Option<BaseOptions>,
    /// Times an imported rule stopped at the regex backtracking limit.
    limit_hits: Counter,
    /// Rewrites refused because the output would pass [`MAX_LINE`] (a rule chain growing a URL,
    /// such as an imported `a` → `aa`).
    too_long: Counter,
    /// URLs whose rewriting was still changing them after [`MAX_ROUNDS`] passes.
    unsettled: Counter,
}

/// A count shared by the threads using one [`Normalizer`] (a clone starts from the same count).
#[derive(Debug, Default)]
struct Counter(std::sync::atomic::AtomicUsize);

impl Clone for Counter {
    fn clone(&self) -> Self {
        Counter(std::sync::atomic::AtomicUsize::new(
            self.0.load(std::sync::atomic::Ordering::Relaxed),
        ))
    }
}

/// The rules of one host: by literal first path segment, the rules with that literal merged with
/// the host's other rules (so a lookup gives one ready list); and the other rules alone. Rules
/// that need a query parameter are filed apart, under their [`param_keys`] (and their literal
/// first segment, when they have one): such a rule changes only a URL holding one of those
/// names, so a host with thousands of them (one per parameter, as validation builds) costs a URL
/// the few filed under its own parameters. All lists are in rule order.
#[derive(Debug, Clone, Default)]
struct HostRules {
    by_first: KeyIndex<Vec<usize>>,
    any: Vec<usize>,
    /// The rules with parameter keys, apart (boxed: most hosts have none, and a rule set may
    /// name millions of hosts).
    keyed: Option<Box<ParamRules>>,
}

/// A host's rules with [`param_keys`].
#[derive(Debug, Clone, Default)]
struct ParamRules {
    /// Those with a literal first segment: by it, then by a key.
    by_first: KeyIndex<KeyIndex<Vec<usize>>>,
    /// Those without one: by a key.
    any: KeyIndex<Vec<usize>>,
    /// One past the highest rule index among them.
    end: usize,
}

impl HostRules {
    /// File host rule `i`, whose [`param_keys`] are `keys`.
    fn add(&mut self, i: usize, r: &Rule, keys: Option<Vec<&str>>) {
        let lit = first_literal(r);
        if let Some(keys) = keys {
            let k = self.keyed.get_or_insert_with(Box::default);
            let by_name = match lit {
                Some(l) => k.by_first.entry(l),
                None => &mut k.any,
            };
            for n in keys {
                by_name.entry(n).push(i);
            }
            k.end = i + 1;
            return;
        }
        match lit {
            Some(l) => self.by_first.entry(l).push(i),
            None => self.any.push(i),
        }
    }

    /// The rules filed by parameter that may change a URL with parts `p`, appended to `out`
    /// (unsorted, with repeats).
    ///
    /// # Complexity
    /// At most two lookups per query parameter.
    fn push_keyed(&self, p: &UrlParts<'_>, out: &mut Vec<usize>) {
        let Some(k) = &self.keyed else { return };
        let Some(q) = p.query.filter(|q| !q.is_empty()) else {
            return;
        };
        push_by_param(&k.any, k.by_first.get(first_segment(p.path)), q, out);
    }

    /// One past the highest index of a rule filed by parameter (0 without any).
    fn keyed_end(&self) -> usize {
        self.keyed.as_ref().map_or(0, |k| k.end)
    }
}
/// The rules filed under the names of `query`'s parameters in `param` and `on_path`, appended to
/// `out`. Every pair counts, an empty one (`&&`) as the name `""`, as [`apply_parts`] reads it;
/// a name repeated next to itself is looked up once (the base layer puts repeats together).
///
/// # Complexity
/// Two lookups per parameter, plus the lists found.
fn push_by_param(
    param: &KeyIndex<Vec<usize>>,
    on_path: Option<&KeyIndex<Vec<usize>>>,
    query: &str,
    out: &mut Vec<usize>,
) {
    if param.is_empty() && on_path.is_none() {
        return;
    }
    let mut last = None;
    for kv in split_ascii(query, b'&') {
        let n = crate::base::param_name(kv);
        if last.replace(n) == Some(n) {
            continue;
        }
        if let Some(v) = param.get(n) {
            out.extend_from_slice(v);
        }
        if let Some(v) = on_path.and_then(|m| m.get(n)) {
            out.extend_from_slice(v);
        }
    }
}

/// The parameter names rule `r` is filed under in the index: a URL holding none of them is
/// one `r` cannot change. The rarest of its required names (`required[n]`: how many rules
/// require name `n`), since a URL must hold every one; else, for a rule that only drops
/// parameters, each name it drops. `None` for other rules (conventions, imported regexes, rules
/// that need no parameter).
fn param_keys<'r>(r: &'r Rule, required: &HashMap<&str, usize>) -> Option<Vec<&'r str>> {
    if r.kind == RuleKind::Regex || r.convention.is_some() {
        return None;
    }
    if let Some((n, _)) = r
        .source
        .required
        .iter()
        .min_by_key(|(n, _)| required.get(n.as_str()).copied().unwrap_or(0))
    {
        return Some(vec![n.as_str()]);
    }
    (is_drop_only(r) && !r.source.optional.is_empty())
        .then(|| r.source.optional.iter().map(String::as_str).collect())
}

/// Cross-host and imported rules by the one feature of a URL each needs to change it, so a URL
/// tries only the few that can (a cross-host `utm_source` drop is never tried on a URL without
/// that parameter). Every list is in rule order.
#[derive(Debug, Clone, Default)]
struct GlobalRules {
    /// Tried on every URL: imported regex rules, rules that need none of the features below.
    any: Vec<usize>,
    /// `https` convention: `http` URLs.
    http: Vec<usize>,
    /// `www.` convention: hosts starting with `www.`.
    www: Vec<usize>,
    /// Trailing-slash convention: paths longer than `/` ending in `/`.
    slash: Vec<usize>,
    /// Default-document conventions, by the document name (the path's last segment).
    doc: KeyIndex<Vec<usize>>,
    /// Suffix conventions, by their word (the path's last non-empty segment).
    suffix: KeyIndex<Vec<usize>>,
    /// Path-parameter conventions, by the parameter's name (in the path's last segment).
    path_param: KeyIndex<Vec<usize>>,
    /// Host-label conventions, by the label (the host's first).
    label: KeyIndex<Vec<usize>>,
    /// Lower-case-path conventions, by the extension of the path's last segment.
    lower: KeyIndex<Vec<usize>>,
    /// Static-file query conventions, by the extension of the path's last segment.
    static_query: KeyIndex<Vec<usize>>,
    /// Rules with [`param_keys`] and no literal first segment, by each key.
    param: KeyIndex<Vec<usize>>,
    /// Rules with those keys and a literal first segment (a cross-host drop or template on a
    /// path signature): by it, then by each key.
    param_by_first: KeyIndex<KeyIndex<Vec<usize>>>,
    /// Other rules whose path starts with a literal segment, by it.
    first: KeyIndex<Vec<usize>>,
    /// By rule index: filed under a feature of the host (`www`, `label`), the only features a
    /// rewrite of the host alone can change ([`GlobalRules::rehost`]).
    host_keyed: Vec<bool>,
}

impl GlobalRules {
    /// File rule `i`, whose [`param_keys`] are `keys`, under the feature it needs.
    fn add(&mut self, i: usize, r: &Rule, keys: Option<Vec<&str>>) {
        use crate::model::Convention as C;
        // A rule needing a parameter (the tracking prior, a cross-host drop or template on a
        // path) changes only a URL holding one of its keys: filed under each (and its literal
        // first segment, when it has one).
        if let Some(keys) = keys {
            let by_name = match first_literal(r) {
                Some(l) => self.param_by_first.entry(l),
                None => &mut self.param,
            };
            for n in keys {
                by_name.entry(n).push(i);
            }
            return;
        }
        let list = match (&r.convention, r.kind) {
            (_, RuleKind::Regex) => &mut self.any,
            (Some(C::Https), _) => &mut self.http,
            (Some(C::StripWww), _) => {
                self.mark_host_keyed(i);
                &mut self.www
            }
            (Some(C::TrailingSlash), _) => &mut self.slash,
            (Some(C::DefaultDoc(n)), _) => self.doc.entry(n),
            (Some(C::Suffix(n)), _) => self.suffix.entry(n),
            (Some(C::PathParam(n)), _) => self.path_param.entry(n),
            (Some(C::HostLabel(l)), _) => {
                self.mark_host_keyed(i);
                self.label.entry(l)
            }
            (Some(C::LowerPath(e)), _) => self.lower.entry(e),
            (Some(C::StaticQuery(e)), _) => self.static_query.entry(e),
            (None, _) => match first_literal(r) {
                Some(l) => self.first.entry(l),
                None => &mut self.any,
            },
        };
        list.push(i);
    }

    fn mark_host_keyed(&mut self, i: usize) {
        if self.host_keyed.len() <= i {
            self.host_keyed.resize(i + 1, false);
        }
        self.host_keyed[i] = true;
    }

    /// `out`, [`GlobalRules::for_url`]'s list for a URL, made the list for `p`: the same URL
    /// with another host (scheme, path and query as they were). Only the host's features are
    /// looked at again.
    ///
    /// # Complexity
    /// Linear in the (short) list, plus the host's two lookups.
    fn rehost(&self, p: &UrlParts<'_>, out: &mut Vec<usize>) {
        out.retain(|&i| !self.host_keyed.get(i).copied().unwrap_or(false));
        let n = out.len();
        if p.host.starts_with("www.") {
            out.extend_from_slice(&self.www);
        }
        self.push_label(p, out);
        if out.len() > n {
            out.sort_unstable();
            out.dedup();
        }
    }

    /// The host-label rules for `p`'s first label, into `out`.
    fn push_label(&self, p: &UrlParts<'_>, out: &mut Vec<usize>) {
        if !self.label.is_empty() {
            if let Some(v) = crate::model::mobile_label(p.host).and_then(|(l, _)| self.label.get(l))
            {
                out.extend_from_slice(v);
            }
        }
    }

    /// The rules that may change a URL with parts `p` (only `any` when it does not split), in
    /// rule order, into `out`.
    ///
    /// # Complexity
    /// One lookup per query parameter, two for the last path segment and one for the first, then
    /// a sort of the (few) rules found.
    fn for_url(&self, p: Option<&crate::url_parts::UrlParts<'_>>, out: &mut Vec<usize>) {
        out.clear();
        out.extend_from_slice(&self.any);
        let Some(p) = p else { return };
        if p.scheme == "http" {
            out.extend_from_slice(&self.http);
        }
        if p.host.starts_with("www.") {
            out.extend_from_slice(&self.www);
        }
        if p.path.len() > 1 && p.path.ends_with('/') {
            out.extend_from_slice(&self.slash);
        }
        if !self.doc.is_empty() {
            if let Some(v) = self.doc.get(last_segment(p.path)) {
                out.extend_from_slice(v);
            }
        }
        if !self.suffix.is_empty() {
            let body = p.path.strip_suffix('/').unwrap_or(p.path);
            if let Some(v) = self.suffix.get(last_segment(body)) {
                out.extend_from_slice(v);
            }
        }
        self.push_label(p, out);
        // Both keyed by the path's extension, found once (a rule of an unknown static type
        // never applies: `apply_convention` checks the type).
        let by_ext = !self.lower.is_empty() || (!self.static_query.is_empty() && p.query.is_some());
        if let Some(e) = by_ext
            .then(|| crate::model::path_extension(p.path))
            .flatten()
        {
            if let Some(v) = self.lower.get(e) {
                if crate::model::lower_path_changes(p.path) {
                    out.extend_from_slice(v);
                }
            }
            if let Some(v) = self.static_query.get(e).filter(|_| p.query.is_some()) {
                out.extend_from_slice(v);
            }
        }
        if !self.path_param.is_empty() {
            for n in crate::model::path_param_names(p.path) {
                if let Some(v) = self.path_param.get(n) {
                    out.extend_from_slice(v);
                }
            }
        }
        if !self.first.is_empty() {
            if let Some(v) = self.first.get(first_segment(p.path)) {
                out.extend_from_slice(v);
            }
        }
        let on_path = match self.param_by_first.is_empty() {
            true => None,
            false => self.param_by_first.get(first_segment(p.path)),
        };
        push_by_param(&self.param, on_path, p.query.unwrap_or(""), out);
        out.sort_unstable();
        out.dedup();
    }
}

/// The literal first path segment of a rule's pattern, if it has one.
fn first_literal(r: &Rule) -> Option<&str> {
    match r.source.path.as_ref()?.first()?.as_slice() {
        [Piece::Lit(l)] => Some(l),
        [] => Some(""),
        _ => None,
    }
}

/// The last segment of a path: the text after its last `/` (all of it without one), as
/// `path.rsplit('/').next()` gives it.
fn last_segment(path: &str) -> &str {
    memchr::memrchr(b'/', path.as_bytes()).map_or(path, |k| &path[k + 1..])
}

/// The first path segment of a URL path (`""` for `/` or no path).
fn first_segment(path: &str) -> &str {
    let p = path.get(1..).unwrap_or("");
    match memchr::memchr(b'/', p.as_bytes()) {
        Some(k) => &p[..k],
        None => p,
    }
}

/// The two candidate lists of one URL, kept between the steps of its rewriting so they are not
/// allocated again: the any-host rules ([`GlobalRules::for_url`]) and, when its host has
/// rules filed by parameter it may need, the host's ([`Normalizer::host_rules_for`]).
#[derive(Debug, Default)]
struct Candidates {
    global: Vec<usize>,
    host: Vec<usize>,
}

/// Outcome of [`Normalizer::normalize_line_into`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineStatus {
    /// A URL; its canonical form is in the buffer.
    Url {
        /// Whether the canonical bytes differ from the input line.
        changed: bool,
        /// The last rule that changed it.
        rule: Option<usize>,
    },
    /// Not a usable URL; pass the line through.
    Bad(BadLine),
}

/// The result of normalizing one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The canonical URL.
    pub url: String,
    /// Index (into the rule list) of the last rule that changed it.
    pub rule: Option<usize>,
}

impl Normalizer {
    /// Compile rules (kept in the given order); `base: None` turns the base layer off.
    ///
    /// ```
    /// use dedust_core::__private::model::{convention_rule, Convention};
    /// use dedust_core::{BaseOptions, Normalizer};
    /// let rules = vec![convention_rule(Convention::StripWww)];
    /// let n = Normalizer::new(rules, Some(BaseOptions::default()));
    /// assert_eq!(n.normalize("HTTP://WWW.H.ORG/other?b=1&a=2").unwrap().url, "http://h.org/other?a=2&b=1");
    /// ```
    ///
    /// An imported Java-regex rule whose pattern does not compile — every one when the crate is
    /// built without its `java-regex` feature — never applies ([`Normalizer::java_rules_off`]
    /// counts them); [`crate::RuleFile::parse`] refuses such files before they get here.
    pub fn new(rules: Vec<Rule>, base: Option<BaseOptions>) -> Normalizer {
        let mut by_host: KeyIndex<HostRules> = KeyIndex::default();
        let mut global = Vec::new();
        let mut keyed = GlobalRules::default();
        let mut java = Vec::with_capacity(rules.len());
        // How many rules require each parameter name (a rule is filed under its rarest).
        let mut required: HashMap<&str, usize> = HashMap::new();
        for r in &rules {
            for (n, _) in &r.source.required {
                *required.entry(n.as_str()).or_default() += 1;
            }
        }
        for (i, r) in rules.iter().enumerate() {
            let keys = param_keys(r, &required);
            if r.kind == RuleKind::Regex {
                // Rule files are checked on load; a pattern that fails here never matches.
                java.push(
                    JavaRegex::new(
                        r.regex.as_deref().unwrap_or(""),
                        r.replacement.as_deref().unwrap_or(""),
                    )
                    .ok(),
                );
                global.push(i);
                keyed.add(i, r, keys);
                continue;
            }
            java.push(None);
            if r.is_global() {
                // Cross-host rules apply to every host, like imported ones.
                global.push(i);
                keyed.add(i, r, keys);
                continue;
            }
            by_host.entry(&r.source.host).add(i, r, keys);
        }
        for h in by_host.values_mut() {
            for list in h.by_first.values_mut() {
                list.extend_from_slice(&h.any);
                list.sort_unstable();
            }
        }
        let needs_query: Vec<bool> = rules
            .iter()
            .map(|r| {
                r.kind != RuleKind::Regex && (!r.source.required.is_empty() || is_drop_only(r))
            })
            .collect();
        use crate::model::Convention as C;
        let host_only = rules
            .iter()
            .map(|r| {
                r.kind != RuleKind::Regex
                    && matches!(r.convention, Some(C::StripWww | C::HostLabel(_)))
            })
            .collect();
        Normalizer {
            rules,
            by_host,
            global,
            keyed,
            needs_query,
            host_only,
            java,
            base,
            limit_hits: Counter::default(),
            too_long: Counter::default(),
            unsettled: Counter::default(),
        }
    }

    /// The rules, in application order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Imported regex rules that grow a URL every time they apply, found when the rules are
    /// loaded: each is applied again and again to probe URLs (every letter, digit and URL
    /// punctuation in path and query), and one whose output is longer after each of
    /// [`MAX_ROUNDS`] applications is reported (an `a` → `aa` rule). Such rules still run; the
    /// engine refuses any rewrite whose output passes [`MAX_LINE`]. Indices into
    /// [`Normalizer::rules`].
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// let grow = dedust_core::regex_rule("a", "aa", "x").unwrap();
    /// let fine = dedust_core::regex_rule("[?&]s=[0-9a-f]+", "", "y").unwrap();
    /// let n = dedust_core::Normalizer::new(vec![fine, grow], None);
    /// assert_eq!(n.growing_rules(), vec![1]);
    /// # }
    /// ```
    pub fn growing_rules(&self) -> Vec<usize> {
        const PROBES: [&str; 2] = [
            "http://www.example.org/abcdefghijklmnopqrstuvwxyz/ABCDEFGHIJKLMNOPQRSTUVWXYZ/0123456789/-._~!$'()*+,;=:@%20/index.html?a=1&b=x&c=&d",
            "https://example.org/",
        ];
        self.java
            .iter()
            .enumerate()
            .filter_map(|(i, re)| re.as_ref().map(|re| (i, re)))
            .filter(|(_, re)| {
                PROBES.iter().any(|p| {
                    let mut cur = p.to_string();
                    (0..MAX_ROUNDS).all(|_| {
                        let next = re.replace_all(&cur);
                        let grew = next.len() > cur.len();
                        cur = next;
                        grew && cur.len() <= MAX_LINE
                    })
                })
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Imported Java-regex rules that never apply: their pattern did not compile, or the crate
    /// was built without its `java-regex` feature.
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// let r = dedust_core::regex_rule("a+", "b", "x").unwrap();
    /// let n = dedust_core::Normalizer::new(vec![r], None);
    /// assert_eq!(n.java_rules_off(), 0);
    /// # }
    /// ```
    pub fn java_rules_off(&self) -> usize {
        self.rules
            .iter()
            .zip(&self.java)
            .filter(|(r, j)| r.kind == RuleKind::Regex && j.is_none())
            .count()
    }

    /// Normalize one URL: base layer, then rules to a fixed point.
    pub fn normalize(&self, url: &str) -> Result<Normalized, BaseError> {
        let b = match &self.base {
            Some(o) => base_normalize(url, o)?,
            None => url.to_string(),
        };
        Ok(self.apply_rules(b))
    }

    /// Apply the rules only (the input is taken as already base-normalized).
    pub fn apply_rules(&self, url: String) -> Normalized {
        self.rewrite(&url).unwrap_or(Normalized { url, rule: None })
    }

    /// The rules' fixed point for `url`, or `None` when no rule changes it (no allocation then).
    fn rewrite(&self, url: &str) -> Option<Normalized> {
        self.rewrite_rounds(url, None).0
    }

    /// [`Normalizer::rewrite`], and whether a pass changed nothing within [`MAX_ROUNDS`] (the
    /// result is then a fixed point: normalizing it again changes nothing).
    /// `at`: where `url`'s parts lie, when the step that built it knows.
    fn rewrite_rounds(&self, url: &str, at: Option<PartsAt>) -> (Option<Normalized>, bool) {
        let mut last = None;
        let (out, fixed) = self.fixpoint(url, at, |i| last = Some(i));
        (out.map(|url| Normalized { url, rule: last }), fixed)
    }

    /// The passes over the rules behind every public rewrite: in each pass every rule, in rule
    /// order, is tried once on the URL as the rules before it left it; passes repeat until one
    /// changes nothing or [`MAX_ROUNDS`] have run. Calls `fired` with each rule that changed the
    /// URL, in order; returns the output (`None` when nothing changed) and whether the last pass
    /// changed nothing.
    ///
    /// A pass ends with a look at the rules after the last one that fired, on the URL it made;
    /// the next pass starts with the same URL, so it is split and looked up once for both, and
    /// the next pass tries only the rules before that point (the others were just tried on the
    /// same text, and a rule's output depends only on its input). So a rule tried at a pass's
    /// end is not tried again on the same text: [`Normalizer::too_long_rewrites`] and
    /// [`Normalizer::regex_limit_hits`] count it once there, where a loop of whole passes would
    /// count it twice (outputs are the same).
    ///
    /// `at` is where `url`'s parts lie, when known (the base layer's fast path says); a rule
    /// that builds its output from parts (conventions, drops) says where the output's lie, so
    /// such URLs are not split again.
    ///
    /// # Complexity
    /// One split and one candidate lookup per rewrite, plus one; see [`Normalizer::candidates`].
    fn fixpoint(
        &self,
        url: &str,
        mut at: Option<PartsAt>,
        mut fired: impl FnMut(usize),
    ) -> (Option<String>, bool) {
        let mut cur: Option<String> = None;
        let mut buf = Candidates::default();
        let (mut from, mut round, mut changed, mut rehost) = (0, 0, false, false);
        loop {
            // A pass that changed the URL may be followed by another, if one is left.
            let wrap = changed && round + 1 < MAX_ROUNDS;
            let u = cur.as_deref().unwrap_or(url);
            match self.next_change(u, at, rehost, from, wrap, &mut buf) {
                Some((i, out, out_at, wrapped)) => {
                    round += usize::from(wrapped);
                    fired(i);
                    cur = Some(out);
                    // `buf` holds the candidates of the URL this rule changed.
                    rehost = out_at.is_some() && self.host_only[i];
                    at = out_at;
                    from = i + 1;
                    changed = true;
                }
                // Nothing changed in the last pass (the first, or the one `wrap` began), or the
                // passes ran out after one that changed the URL.
                None => {
                    // The passes ran out after one that changed the URL: one more look says
                    // whether that pass happened to end at a fixed point.
                    let fixed = !changed
                        || wrap
                        || self
                            .next_change(
                                cur.as_deref().unwrap_or(url),
                                at,
                                false,
                                0,
                                false,
                                &mut buf,
                            )
                            .is_none();
                    if !fixed {
                        self.unsettled
                            .0
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    return (cur, fixed);
                }
            }
        }
    }

    /// [`Normalizer::apply_rules`], and whether the result is known to be a fixed point (a pass
    /// over the rules changed nothing within [`MAX_ROUNDS`]); when it is not, normalizing it
    /// again may change it.
    ///
    /// ```
    /// let n = dedust_core::Normalizer::new(vec![], None);
    /// let (out, fixed) = n.apply_rules_fixed("http://h.org/a".to_string());
    /// assert_eq!((out.url.as_str(), fixed), ("http://h.org/a", true));
    /// ```
    pub fn apply_rules_fixed(&self, url: String) -> (Normalized, bool) {
        let (out, fixed) = self.rewrite_rounds(&url, None);
        (out.unwrap_or(Normalized { url, rule: None }), fixed)
    }

    /// [`Normalizer::apply_rules_fixed`] with the trail: the output (`None` when no rule changed
    /// the URL), every rule that changed it on the way, in order, and whether a pass changed
    /// nothing within [`MAX_ROUNDS`]. Same rounds as [`Normalizer::apply_rules`].
    #[doc(hidden)]
    pub fn trace_fixed(&self, url: &str) -> (Option<String>, Vec<u32>, bool) {
        let mut trail = Vec::new();
        let (out, fixed) = self.fixpoint(url, None, |i| trail.push(i as u32));
        (out, trail, fixed)
    }

    /// The fixed point of the rules for `url` (taken as base-normalized) and every rule that
    /// changed it on the way, in order (indices into [`Normalizer::rules`]). For analysis, not
    /// the hot path.
    pub fn trace(&self, url: &str) -> (String, Vec<usize>) {
        let mut trail = Vec::new();
        let (out, _) = self.fixpoint(url, None, |i| trail.push(i));
        (out.unwrap_or_else(|| url.to_string()), trail)
    }

    /// The host's rules that may change a URL with parts `p`, in rule order: the list for its
    /// path ([`Normalizer::list_of`]) merged with the rules filed under its parameters,
    /// built in `out` only when there are some.
    fn host_rules_for<'a>(
        rules: Option<&'a HostRules>,
        p: &UrlParts<'_>,
        out: &'a mut Vec<usize>,
    ) -> &'a [usize] {
        let list = Self::list_of(rules, p.path);
        let Some(h) = rules else { return list };
        out.clear();
        h.push_keyed(p, out);
        if out.is_empty() {
            return list;
        }
        out.extend_from_slice(list);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The host's rules (looked up) that may match a URL with path `path`: one precomputed
    /// list, the rules filed by parameter apart ([`Normalizer::host_rules_for`] adds them).
    fn list_of<'a>(rules: Option<&'a HostRules>, path: &str) -> &'a [usize] {
        match rules {
            Some(h) => h
                .by_first
                .get(first_segment(path))
                .map_or(h.any.as_slice(), |v| v.as_slice()),
            None => &[],
        }
    }

    /// Indices of the rules that may match, in rule order: the host's list `a` merged with the
    /// any-host rules `b` that may change the URL ([`GlobalRules::for_url`]).
    ///
    /// # Complexity
    /// One hash lookup for the host and one for the first path segment give `a`
    /// ([`Normalizer::host_rules_for`]); the merge is linear in the two short lists: independent of
    /// the total number of rules.
    fn candidates<'a>(a: &'a [usize], b: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        let (mut i, mut j) = (0, 0);
        std::iter::from_fn(move || {
            let next = match (a.get(i), b.get(j)) {
                (Some(&x), Some(&y)) if x < y => {
                    i += 1;
                    x
                }
                (_, Some(&y)) => {
                    j += 1;
                    y
                }
                (Some(&x), None) => {
                    i += 1;
                    x
                }
                (None, None) => return None,
            };
            Some(next)
        })
    }

    /// How many times an imported regex rule stopped at the regex engine's backtracking limit
    /// (the URL was left as it was from that point), over every call so far.
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// let r = dedust_core::regex_rule("(a|a)+(?<!x)!|z", "Z", "redos").unwrap();
    /// let n = dedust_core::Normalizer::new(vec![r], None);
    /// n.apply_rules(format!("http://h.org/{}?q=z", "a".repeat(40)));
    /// assert_eq!(n.regex_limit_hits(), 1);
    /// # }
    /// ```
    pub fn regex_limit_hits(&self) -> usize {
        self.limit_hits.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many rewrites were refused because their output would pass [`MAX_LINE`] bytes (a
    /// rule, or a chain of rules, that keeps growing a URL), over every call so far.
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// let r = dedust_core::regex_rule("a", "aa", "grow").unwrap();
    /// let n = dedust_core::Normalizer::new(vec![r], None);
    /// let out = n.apply_rules(format!("http://h.org/{}", "a".repeat(1000)));
    /// assert!(out.url.len() <= dedust_core::MAX_LINE);
    /// assert_eq!(n.too_long_rewrites(), 1);
    /// # }
    /// ```
    pub fn too_long_rewrites(&self) -> usize {
        self.too_long.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many URLs the rules were still changing after [`MAX_ROUNDS`] passes (their output
    /// is not a fixed point: normalizing it again may change it), over every call so far. Learned
    /// rule sets converge; imported ones may not (a chain of 30 regex steps written in reverse
    /// order, two rules undoing each other).
    ///
    /// ```
    /// # #[cfg(feature = "java-regex")] { // imported Java regexes need the default feature
    /// // Ten steps in reverse file order: one step a pass, more than the passes there are.
    /// let rules: Vec<_> = (0..10).rev()
    ///     .map(|i| dedust_core::regex_rule(&format!("/s{i}$"), &format!("/s{}", i + 1), "chain").unwrap())
    ///     .collect();
    /// let n = dedust_core::Normalizer::new(rules, None);
    /// let (out, fixed) = n.apply_rules_fixed("http://h.org/s0".into());
    /// assert!(!fixed && out.url != "http://h.org/s10");
    /// assert_eq!(n.unsettled_urls(), 1);
    /// # }
    /// ```
    pub fn unsettled_urls(&self) -> usize {
        self.unsettled.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The first rule that changes `url`, and its output.
    pub fn apply_once(&self, url: &str) -> Option<(usize, String)> {
        self.apply_from(url, 0)
    }

    /// Apply rule `i` to `url` (`p` is `url` split, when it splits); with the output, where its
    /// parts lie when the rule built it from parts.
    fn apply_one(
        &self,
        i: usize,
        url: &str,
        p: Option<&UrlParts<'_>>,
    ) -> Option<(String, Option<PartsAt>)> {
        match &self.java[i] {
            Some(re) => {
                let (out, hit) = re.replace_all_checked(url);
                if hit {
                    self.limit_hits
                        .0
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                // An imported rule writes text, not the base form (Nutch's session-id rule
                // leaves a query it cut unsorted): its output goes through the base layer again,
                // so the result is in the form every other rule matches, and normalizing it again
                // changes nothing. (An output the base layer refuses is kept as written.)
                let out = match &self.base {
                    Some(b) if out != url => base_normalize(&out, b).unwrap_or(out),
                    _ => out,
                };
                Some((out, None))
            }
            None => apply_parts(&self.rules[i], url, p?),
        }
    }

    /// The first rule at index `from` or later that changes `url`, and its output.
    fn apply_from(&self, url: &str, from: usize) -> Option<(usize, String)> {
        self.next_change(url, None, false, from, false, &mut Candidates::default())
            .map(|(i, out, _, _)| (i, out))
    }

    /// The first rule at index `from` or later that changes `url`; failing that, when `wrap`,
    /// the first before `from` (the start of the next pass, `true` in the answer); with the
    /// output, where its parts lie when the rule says. `at` is where `url`'s parts lie, when
    /// known. `buf.global` holds the any-host candidate list on return; with `rehost` (only with
    /// `at`), it holds on entry the list of a URL that differed from `url` in its host alone.
    fn next_change(
        &self,
        url: &str,
        at: Option<PartsAt>,
        rehost: bool,
        from: usize,
        wrap: bool,
        bufs: &mut Candidates,
    ) -> Option<(usize, String, Option<PartsAt>, bool)> {
        let known = at.map(|a| a.parts(url));
        debug_assert!(known.is_none() || known == split_url(url), "{url}");
        let (rules, p) = if self.global.is_empty() {
            // Host rules only: most URLs are on a host without rules, answered before the split.
            let (host, auth_end) = match known {
                Some(p) => (
                    p.scope_host(url),
                    p.path.as_ptr() as usize - url.as_ptr() as usize,
                ),
                None => host_of(url)?,
            };
            let rules = self.by_host.get(host);
            let lo = if wrap { 0 } else { from };
            if !self.may_apply(rules, &url[auth_end..], lo) {
                return None;
            }
            (rules, known.or_else(|| split_url(url)))
        } else {
            // `host_of` and `split_url` find the same host (tested), so the split's serves.
            let p = known.or_else(|| split_url(url));
            (p.and_then(|p| self.by_host.get(p.scope_host(url))), p)
        };
        let has_query = p.is_some_and(|p| p.query.is_some_and(|q| !q.is_empty()));
        let Candidates { global: buf, host } = bufs;
        let a = match &p {
            Some(p) => Self::host_rules_for(rules, p, host),
            None => &[][..],
        };
        match (rehost, known) {
            (true, Some(p)) => {
                self.keyed.rehost(&p, buf);
                debug_assert_eq!(*buf, {
                    let mut fresh = Vec::new();
                    if !self.global.is_empty() {
                        self.keyed.for_url(Some(&p), &mut fresh);
                    }
                    fresh
                });
            }
            _ => {
                buf.clear();
                if !self.global.is_empty() {
                    self.keyed.for_url(p.as_ref(), buf);
                }
            }
        }
        let try_rule = |i: usize| {
            if !has_query && self.needs_query[i] {
                return None;
            }
            self.apply_one(i, url, p.as_ref())
                .filter(|(o, _)| o != url)
                .filter(|(o, _)| {
                    // A rule that would grow the URL past any real URL's length does not
                    // apply: chains such as `a` → `aa` stop here.
                    let ok = o.len() <= MAX_LINE;
                    if !ok {
                        self.too_long
                            .0
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    ok
                })
                .map(|(o, at)| (i, o, at))
        };
        let b = buf.as_slice();
        if let Some((i, o, at)) = Self::candidates(a, b)
            .skip_while(|&i| i < from)
            .find_map(try_rule)
        {
            return Some((i, o, at, false));
        }
        if !wrap {
            return None;
        }
        Self::candidates(a, b)
            .take_while(|&i| i < from)
            .find_map(try_rule)
            .map(|(i, o, at)| (i, o, at, true))
    }

    /// Whether any of the host's rules at `from` or later may apply to a URL whose text after
    /// the authority is `rest`: a look at the path and query without the full split. It finds
    /// the path and query as [`split_url`] does, so it never says no when the split would find a
    /// rule to try.
    fn may_apply(&self, rules: Option<&HostRules>, rest: &str, from: usize) -> bool {
        let (path, has_query) = path_and_query(rest);
        (has_query && rules.is_some_and(|h| h.keyed_end() > from))
            || Self::list_of(rules, path)
                .iter()
                .any(|&i| i >= from && (has_query || !self.needs_query[i]))
    }

    /// All rules that match `url`, with their outputs.
    pub fn all_matches(&self, url: &str) -> Vec<(usize, String)> {
        let p = split_url(url);
        let mut host = Vec::new();
        let a = match &p {
            Some(p) => Self::host_rules_for(self.by_host.get(p.scope_host(url)), p, &mut host),
            None => &[][..],
        };
        let mut b = Vec::new();
        self.keyed.for_url(p.as_ref(), &mut b);
        Self::candidates(a, &b)
            .filter_map(|i| self.apply_one(i, url, p.as_ref()).map(|(o, _)| (i, o)))
            .collect()
    }

    /// Normalize one input line into `buf` without allocating on the common path (a plain
    /// `http(s)` URL on a host without rules).
    ///
    /// ```
    /// use dedust_core::LineStatus;
    /// let n = dedust_core::Normalizer::new(vec![], Some(Default::default()));
    /// let mut buf = String::new();
    /// let st = n.normalize_line_into(b"http://A.org/?b=1&a=2", &mut buf);
    /// assert_eq!(st, LineStatus::Url { changed: true, rule: None });
    /// assert_eq!(buf, "http://a.org/?a=2&b=1");
    /// ```
    pub fn normalize_line_into(&self, line: &[u8], buf: &mut String) -> LineStatus {
        if line.len() > MAX_LINE {
            return LineStatus::Bad(BadLine::TooLong);
        }
        let Ok(s) = std::str::from_utf8(line) else {
            return LineStatus::Bad(BadLine::NotUtf8);
        };
        self.normalize_str_into(s, buf)
    }

    /// [`Normalizer::normalize_line_into`] for text already known to be UTF-8 (a `str` from an
    /// embedding language): the same answers, without the UTF-8 check.
    ///
    /// ```
    /// use dedust_core::LineStatus;
    /// let n = dedust_core::Normalizer::new(vec![], Some(Default::default()));
    /// let mut buf = String::new();
    /// let st = n.normalize_str_into("http://A.org/?b=1&a=2", &mut buf);
    /// assert_eq!(st, LineStatus::Url { changed: true, rule: None });
    /// assert_eq!(buf, "http://a.org/?a=2&b=1");
    /// ```
    pub fn normalize_str_into(&self, s: &str, buf: &mut String) -> LineStatus {
        let line = s.as_bytes();
        if line.len() > MAX_LINE {
            return LineStatus::Bad(BadLine::TooLong);
        }
        // A URL starts with a visible ASCII byte: only other lines need the Unicode trim.
        let visible = s.as_bytes().first().is_some_and(u8::is_ascii_graphic);
        if !visible && s.trim().is_empty() {
            return LineStatus::Bad(BadLine::Empty);
        }
        let mut at = None;
        match &self.base {
            Some(o) => {
                at = crate::base::fast_base_at(s, o, buf);
                if at.is_none() {
                    match crate::base::slow_base(s, o) {
                        Ok(x) => {
                            buf.clear();
                            buf.push_str(&x);
                        }
                        Err(_) => return LineStatus::Bad(BadLine::NotUrl),
                    }
                }
            }
            None => {
                if split_url(s).is_none() && !has_scheme(s) {
                    return LineStatus::Bad(BadLine::NotUrl);
                }
                buf.clear();
                buf.push_str(s);
            }
        }
        let mut rule = None;
        if !self.by_host.is_empty() || !self.global.is_empty() {
            if let Some(n) = self.rewrite_rounds(buf, at).0 {
                rule = n.rule;
                // Copied, not moved in: the buffer keeps its capacity for the next line.
                buf.clear();
                buf.push_str(&n.url);
            }
        }
        LineStatus::Url {
            changed: buf.as_bytes() != line,
            rule,
        }
    }
}

/// Whether `s` starts with a URL scheme and `:` (`file:/x`, `mailto:a`): with the base layer
/// off, such lines are URLs for imported regex rules even when they have no authority.
fn has_scheme(s: &str) -> bool {
    let b = s.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().position(|&c| c == b':').is_some_and(|k| {
            b[..k]
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
        })
}

/// Longest line `normalize` accepts as a URL (longer lines are passed through as bad).
pub const MAX_LINE: usize = 64 * 1024;

/// The outcome for one input line of `dedust normalize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineResult {
    /// A URL and its canonical form.
    Url(Normalized),
    /// A line that is not a usable URL; it is passed through unchanged.
    Bad(BadLine),
}

/// Why a line was passed through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BadLine {
    /// Empty or blank.
    Empty,
    /// Over [`MAX_LINE`] bytes.
    TooLong,
    /// Not valid UTF-8.
    NotUtf8,
    /// Rejected by the URL parser.
    NotUrl,
}

impl BadLine {
    /// Short name used in `--tsv` and `--stats`.
    pub fn name(self) -> &'static str {
        match self {
            BadLine::Empty => "empty",
            BadLine::TooLong => "too-long",
            BadLine::NotUtf8 => "not-utf8",
            BadLine::NotUrl => "not-url",
        }
    }
}

impl Normalizer {
    /// Classify and normalize one input line (without its line terminator).
    ///
    /// ```
    /// use dedust_core::{BadLine, BaseOptions, LineResult, Normalizer};
    /// let n = Normalizer::new(vec![], Some(BaseOptions::default()));
    /// assert!(matches!(n.normalize_line(b"HTTP://A.ORG"), LineResult::Url(u) if u.url == "http://a.org/"));
    /// assert_eq!(n.normalize_line(b"\xff"), LineResult::Bad(BadLine::NotUtf8));
    /// assert_eq!(n.normalize_line(b"  "), LineResult::Bad(BadLine::Empty));
    /// ```
    pub fn normalize_line(&self, line: &[u8]) -> LineResult {
        let mut buf = String::new();
        match self.normalize_line_into(line, &mut buf) {
            LineStatus::Url { rule, .. } => LineResult::Url(Normalized { url: buf, rule }),
            LineStatus::Bad(b) => LineResult::Bad(b),
        }
    }
}

/// Whether the pieces of a path segment or value pattern match all of `s`.
///
/// # Complexity
/// With at most one capture, the backtracking below is `O(|s|²)` at worst; with several (a
/// learned `{any}{alpha}{any}`), a backtracking matcher is exponential, so the positions
/// reachable after each piece are tracked instead: `O(pieces · |s|)`.
fn match_pieces(p: &[Piece], s: &str) -> bool {
    if p.iter().filter(|x| matches!(x, Piece::Cap(_))).count() > 1 {
        return match_pieces_linear(p, s);
    }
    match_pieces_backtrack(p, s)
}

/// [`match_pieces`] by the set of positions reachable after each piece (no backtracking).
fn match_pieces_linear(p: &[Piece], s: &str) -> bool {
    let n = s.len();
    let mut cur = vec![false; n + 1];
    cur[0] = true;
    let mut next = vec![false; n + 1];
    // Char boundaries, and the char starting at each.
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    for piece in p {
        next.iter_mut().for_each(|x| *x = false);
        match piece {
            Piece::Lit(l) => {
                for i in (0..=n).filter(|&i| cur[i]) {
                    if s[i..].starts_with(l.as_str()) {
                        next[i + l.len()] = true;
                    }
                }
            }
            Piece::Cap(t) => {
                // `{any}` may be empty; other types take at least one char. One sweep: while
                // the chars since some reachable start are all accepted, each char's end is
                // reachable.
                let any = *t == CapType::Any;
                let mut open = false;
                for &(i, c) in &chars {
                    if cur[i] {
                        open = true;
                        next[i] |= any;
                    }
                    if open && t.accepts(c) {
                        next[i + c.len_utf8()] = true;
                    } else {
                        open = false;
                    }
                }
                next[n] |= cur[n] && any;
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    cur[n]
}

fn match_pieces_backtrack(p: &[Piece], s: &str) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some((Piece::Lit(l), rest)) => s
            .strip_prefix(l.as_str())
            .is_some_and(|r| match_pieces_backtrack(rest, r)),
        Some((Piece::Cap(t), rest)) => {
            let max = s
                .char_indices()
                .find(|(_, c)| !t.accepts(*c))
                .map_or(s.len(), |(i, _)| i);
            let min = usize::from(*t != CapType::Any);
            // Longest first, as a backtracking regex engine does.
            let mut k = max;
            loop {
                if k < min {
                    return false;
                }
                if s.is_char_boundary(k) && match_pieces_backtrack(rest, &s[k..]) {
                    return true;
                }
                if k == 0 {
                    return false;
                }
                k -= 1;
            }
        }
    }
}

fn match_val(v: &ValPat, value: Option<&str>) -> bool {
    match (v, value) {
        (ValPat::Any, _) => true,
        (ValPat::Bare, None) => true,
        (ValPat::Pieces(p), Some(s)) => match_pieces(p, s),
        _ => false,
    }
}

/// Apply one rule to a base-normalized URL; `None` when it does not match (or, for a rule that
/// only drops optional parameters, when none of them is present: the URL would not change).
///
/// ```
/// use dedust_core::{CapType, Piece, Source, Target, ValOut, ValPat};
/// use dedust_core::{apply_rule, Rule, RuleKind};
/// let source = Source {
///     scheme: Some("https".into()),
///     host: "f.org".into(),
///     path: Some(vec![vec![Piece::Lit("s.php".into())]]),
///     required: vec![("t".into(), ValPat::Pieces(vec![Piece::Cap(CapType::Int)]))],
///     optional: vec!["mode".into()],
///     rest: false,
/// };
/// let target = Target { scheme: None, host: None, path: None, query: Some(vec![("t".into(), ValOut::Copy)]) };
/// let r = &Rule::new(RuleKind::Template, source, target);
/// assert_eq!(r.pattern, "https://f.org/s.php?t={int:t}&[mode]");
/// assert_eq!(apply_rule(r, "https://f.org/s.php?mode=y&t=99").as_deref(), Some("https://f.org/s.php?t=99"));
/// assert_eq!(apply_rule(r, "https://f.org/s.php?p=1&t=99"), None);
/// ```
pub fn apply_rule(rule: &Rule, url: &str) -> Option<String> {
    apply_parts(rule, url, &split_url(url)?).map(|(out, _)| out)
}

/// Words a URL must contain for [`apply_rule`] to change it: every name in the first list, and
/// one name in the second when it is not empty (the parameters a rule requires; the ones a rule
/// that only drops parameters drops). A test of the URL's text before it is split, where a rule
/// is tried on many URLs; a necessary condition only. Both lists are empty for conventions and
/// imported regexes.
///
/// ```
/// use dedust_core::__private::normalize::needed_words;
/// use dedust_core::{CapType, Piece, Rule, RuleKind, Source, Target, ValOut, ValPat};
/// let int = ValPat::Pieces(vec![Piece::Cap(CapType::Int)]);
/// let source = |required: Vec<(String, ValPat)>, rest| Source {
///     scheme: None,
///     host: "f.org".into(),
///     path: None,
///     required,
///     optional: vec!["mode".into(), "sid".into()],
///     rest,
/// };
/// let keep = |names: &[&str]| Target {
///     scheme: None,
///     host: None,
///     path: None,
///     query: Some(names.iter().map(|n| (n.to_string(), ValOut::Copy)).collect()),
/// };
/// // A template needs its required parameter; what it drops is optional.
/// let t = Rule::new(RuleKind::Template, source(vec![("t".into(), int.clone())], false), keep(&["t"]));
/// assert_eq!(needed_words(&t), (vec!["t"], vec![]));
/// // A drop changes a URL only where one of its names is.
/// let d = Rule::new(RuleKind::Drop, source(vec![], true), keep(&[]));
/// assert_eq!(needed_words(&d), (vec![], vec!["mode", "sid"]));
/// assert_eq!(dedust_core::apply_rule(&d, "http://f.org/a?x=1"), None);
/// ```
pub fn needed_words(rule: &Rule) -> (Vec<&str>, Vec<&str>) {
    if rule.convention.is_some() || rule.kind == RuleKind::Regex {
        return (Vec::new(), Vec::new());
    }
    let all = rule
        .source
        .required
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    let any = match is_drop_only(rule) {
        true => rule.source.optional.iter().map(String::as_str).collect(),
        false => Vec::new(),
    };
    (all, any)
}

/// [`apply_rule`] on a URL already split (the engine splits once per URL, not once per rule);
/// with the output, where its parts lie when they are known without splitting it (conventions;
/// rules that change only the query).
fn apply_parts(rule: &Rule, url: &str, p: &UrlParts<'_>) -> Option<(String, Option<PartsAt>)> {
    let p = *p;
    let s = &rule.source;
    // Cross-host rules check their exceptions (a registrable-domain lookup) only once they match.
    // A host rule's scope names the port (`h.org:8080`); cross-host rules never apply on a port.
    let global = rule.is_global();
    if (if global {
        !p.port.is_empty()
    } else {
        p.scope_host(url) != s.host
    }) || !p.userinfo.is_empty()
        || p.fragment.is_some()
    {
        return None;
    }
    if let Some(c) = &rule.convention {
        return apply_convention(c, &p).filter(|_| rule.applies_to_host(p.host));
    }
    if let Some(sc) = &s.scheme {
        if p.scheme != sc {
            return None;
        }
    }
    // A rule that only drops optional parameters changes nothing when none of them is there:
    // say so before splitting anything (the common case for session/tracking rules).
    let o = &rule.output;
    if is_drop_only(rule) {
        let q = p.query.unwrap_or("");
        let present = split_ascii(q, b'&')
            .any(|kv| s.optional.iter().any(|n| crate::base::param_name(kv) == n));
        if !present {
            return None;
        }
    }
    // Every required parameter must be there: say so before splitting anything (cross-host
    // drops are tried on every URL with a query).
    if !s.required.is_empty() {
        let q = p.query.unwrap_or("");
        if !s
            .required
            .iter()
            .all(|(n, _)| split_ascii(q, b'&').any(|kv| crate::base::param_name(kv) == n))
        {
            return None;
        }
    }
    // Without optional or other parameters, the URL must have exactly the required ones
    // (each once): count before splitting anything.
    if !s.rest && s.optional.is_empty() {
        let n = p.query.map_or(0, |q| {
            split_ascii(q, b'&').filter(|x| !x.is_empty()).count()
        });
        if n != s.required.len() {
            return None;
        }
    }
    // Path segments, split only when the rule matches or copies them.
    let copies_segs = o
        .path
        .as_ref()
        .is_some_and(|t| t.iter().any(|x| matches!(x, SegOut::Copy(_))))
        || o.query
            .as_ref()
            .is_some_and(|q| q.iter().any(|(_, v)| matches!(v, ValOut::Seg(_))));
    let segs: Vec<&str> = if p.path.is_empty() || (s.path.is_none() && !copies_segs) {
        Vec::new()
    } else {
        split_ascii(&p.path[1..], b'/').collect()
    };
    if let Some(pat) = &s.path {
        if pat.len() != segs.len() || !pat.iter().zip(&segs).all(|(pp, seg)| match_pieces(pp, seg))
        {
            return None;
        }
    }
    // Split once: a URL of hundreds of parameters costs linear time, not quadratic. Each
    // parameter: as written, its name, its value, and whether it is a required one.
    let mut params: Vec<(&str, &str, Option<&str>, bool)> = p
        .query
        .map(|q| {
            split_ascii(q, b'&')
                .filter(|x| !x.is_empty())
                .map(|kv| match split_once_ascii(kv, b'=') {
                    Some((k, v)) => (kv, k, Some(v), false),
                    None => (kv, kv, None, false),
                })
                .collect()
        })
        .unwrap_or_default();
    for (name, vp) in &s.required {
        let mut found = false;
        for (_, n, v, used) in params.iter_mut() {
            if n == name {
                if found || !match_val(vp, *v) {
                    return None;
                }
                found = true;
                *used = true;
            }
        }
        if !found {
            return None;
        }
    }
    // The value of required parameter `k` (there once: checked above).
    let req_val = |k: usize| {
        let name = &s.required[k].0;
        params.iter().find(|x| x.1 == name).and_then(|x| x.2)
    };
    // The other parameters, kept as they are (unless optional).
    let is_rest =
        |x: &(&str, &str, Option<&str>, bool)| !x.3 && !s.optional.iter().any(|o| o == x.1);
    if !s.rest && params.iter().any(is_rest) {
        return None;
    }
    if global && !rule.applies_to_host(p.host) {
        return None;
    }
    // Build the output.
    let mut out = String::with_capacity(url.len());
    out.push_str(o.scheme.as_deref().unwrap_or(p.scheme));
    out.push_str("://");
    match &o.host {
        Some(h) => out.push_str(h),
        None => out.push_str(p.scope_host(url)),
    }
    let host_end = out.len();
    match &o.path {
        None => out.push_str(p.path),
        Some(tpl) => {
            for seg in tpl {
                out.push('/');
                match seg {
                    SegOut::Lit(l) => out.push_str(l),
                    SegOut::Copy(j) => out.push_str(segs.get(*j)?),
                    SegOut::Param(n) => {
                        let k = s.required.iter().position(|(m, _)| m == n)?;
                        out.push_str(req_val(k)?);
                    }
                }
            }
        }
    }
    /// One output parameter, borrowed from the rule or the URL: `name=value`, a bare name, or
    /// a parameter of the URL as it was.
    enum Param<'x> {
        Pair(&'x str, &'x str),
        Name(&'x str),
        Raw(&'x str),
    }
    impl Param<'_> {
        fn name(&self) -> &str {
            match self {
                Param::Pair(n, _) | Param::Name(n) | Param::Raw(n) => crate::base::param_name(n),
            }
        }
    }
    // Where the parts lie, when only the query may differ from the input's form: scheme, host
    // and path as they were (a rule file's literals could hold any byte; checked below).
    let path_end = out.len();
    let same_prefix = o.scheme.is_none() && o.host.is_none() && o.path.is_none();
    let at = |out: &str| {
        (same_prefix && memchr::memchr(b'#', &out.as_bytes()[path_end..]).is_none())
            .then(|| {
                PartsAt::rebuilt(
                    p.scheme,
                    &out[p.scheme.len() + 3..host_end],
                    path_end - host_end,
                )
            })
            .flatten()
    };
    let query: Vec<Param> = match &o.query {
        None => match p.query {
            Some(q) if s.rest => {
                out.push('?');
                out.push_str(q);
                let at = at(&out);
                return Some((out, at));
            }
            _ => Vec::new(),
        },
        Some(items) => {
            let mut q: Vec<Param> = Vec::with_capacity(items.len() + params.len());
            for (n, v) in items {
                q.push(match v {
                    ValOut::Copy => {
                        let k = s.required.iter().position(|(m, _)| m == n)?;
                        match req_val(k) {
                            Some(val) => Param::Pair(n, val),
                            None => Param::Name(n),
                        }
                    }
                    ValOut::Bare => Param::Name(n),
                    ValOut::Lit(l) => Param::Pair(n, l),
                    ValOut::Seg(j) => Param::Pair(n, segs.get(*j)?),
                });
            }
            q.extend(
                params
                    .iter()
                    .filter(|x| is_rest(x))
                    .map(|x| Param::Raw(x.0)),
            );
            // Stable: parameters of one name keep their order.
            q.sort_by(|a, b| a.name().cmp(b.name()));
            q
        }
    };
    for (i, part) in query.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        match part {
            Param::Pair(n, v) => {
                out.push_str(n);
                out.push('=');
                out.push_str(v);
            }
            Param::Name(n) | Param::Raw(n) => out.push_str(n),
        }
    }
    let at = at(&out);
    Some((out, at))
}

/// `scheme://host` and the path pieces, then `?query` when there is one: one allocation of the
/// exact size, and where the parts lie (cheaper than `format!` on this path: conventions run on
/// every URL). The parts are known for a host without `:` only ([`PartsAt::rebuilt`]).
fn build(
    scheme: &str,
    host: &str,
    path: &[&str],
    query: Option<&str>,
) -> (String, Option<PartsAt>) {
    let path_len: usize = path.iter().map(|x| x.len()).sum();
    let q = query.map_or(0, |q| q.len() + 1);
    let mut s = String::with_capacity(scheme.len() + 3 + host.len() + path_len + q);
    s.push_str(scheme);
    s.push_str("://");
    s.push_str(host);
    for x in path {
        s.push_str(x);
    }
    if let Some(q) = query {
        s.push('?');
        s.push_str(q);
    }
    (s, PartsAt::rebuilt(scheme, host, path_len))
}

/// Apply a URL convention to a URL without port, user info or fragment; `None` when it does not
/// change the URL. With the output, where its parts lie when that is known ([`build`]).
fn apply_convention(
    c: &crate::model::Convention,
    p: &UrlParts<'_>,
) -> Option<(String, Option<PartsAt>)> {
    use crate::model::Convention as C;
    // The output is built only once the convention applies.
    let (scheme, host, path, query) = (p.scheme, p.host, p.path, p.query);
    match c {
        C::Https => (scheme == "http").then(|| build("https", host, &[path], query)),
        // Only when the bare host is the same registrable domain: `www.co.uk` is not `co.uk`.
        C::StripWww => {
            crate::site::www_is_same_site(host).then(|| build(scheme, &host[4..], &[path], query))
        }
        C::DefaultDoc(name) => {
            let dir = path.strip_suffix(name.as_str())?.strip_suffix('/')?;
            Some(build(scheme, host, &[dir, "/"], query))
        }
        C::TrailingSlash => {
            let trimmed = path
                .strip_suffix('/')
                .filter(|t| !t.is_empty() && !t.ends_with('/'))?;
            Some(build(scheme, host, &[trimmed], query))
        }
        C::Suffix(name) => {
            let (body, slash) = path.strip_suffix('/').map_or((path, ""), |b| (b, "/"));
            // Never the first segment (`/amp/` stays: a site's root is not a suffix form), nor
            // after an empty segment (`/x//amp` stays, as the export regex leaves it).
            let dir = body
                .strip_suffix(name.as_str())?
                .strip_suffix('/')
                .filter(|d| !d.is_empty() && !d.ends_with('/'))?;
            Some(build(scheme, host, &[dir, slash], query))
        }
        // Every leading copy of the label at once (`m.m.h` → `h`), so one pass is a fixed point.
        C::HostLabel(label) => {
            let site = crate::site::registrable_domain(host);
            let mut h = host;
            while let Some((l, rest)) = crate::model::mobile_label(h) {
                if l != label || crate::site::registrable_domain(rest) != site {
                    break;
                }
                h = rest;
            }
            (h != host).then(|| build(scheme, h, &[path], query))
        }
        C::LowerPath(ext) => {
            if crate::model::path_extension(path) != Some(ext.as_str()) {
                return None;
            }
            let lower = crate::model::lower_path(path)?;
            Some(build(scheme, host, &[&lower], query))
        }
        C::StaticQuery(ext) => (query.is_some()
            && crate::model::static_extension(path) == Some(ext.as_str()))
        .then(|| build(scheme, host, &[path], None)),
        C::PathParam(name) => {
            let r = crate::model::path_param(path, name)?;
            Some(build(
                scheme,
                host,
                &[&path[..r.start], &path[r.end..]],
                query,
            ))
        }
    }
}

/// Whether a rule only drops optional parameters (keeping scheme, host, path and the rest): it
/// changes only a URL holding one of them.
pub(crate) fn is_drop_only(rule: &Rule) -> bool {
    let (s, o) = (&rule.source, &rule.output);
    s.rest
        && rule.kind != RuleKind::Regex
        && rule.convention.is_none()
        && o.scheme.is_none()
        && o.host.is_none()
        && o.path.is_none()
        && o.query.as_ref().is_some_and(|q| {
            q.len() == s.required.len() && q.iter().all(|(_, v)| *v == ValOut::Copy)
        })
}

/// The host of a URL with its port, exactly as [`UrlParts::scope_host`] finds it, and where the
/// authority ends, without splitting the rest (the key of the rule index, checked before the
/// full split).
fn host_of(url: &str) -> Option<(&str, usize)> {
    let b = url.as_bytes();
    let colon = b.iter().position(|&c| c == b':')?;
    if b.get(colon + 1..colon + 3) != Some(b"//") {
        return None;
    }
    let a0 = colon + 3;
    let (mut h0, mut last_colon, mut i) = (a0, None, a0);
    while i < b.len() && !matches!(b[i], b'/' | b'?' | b'#') {
        match b[i] {
            b'@' => {
                h0 = i + 1;
                last_colon = None;
            }
            b':' => last_colon = Some(i),
            _ => {}
        }
        i += 1;
    }
    let bracketed = i > h0 && b[i - 1] == b']';
    let host = match last_colon {
        Some(k) if !bracketed && k + 1 == i => &url[h0..k],
        _ => &url[h0..i],
    };
    Some((host, i))
}

/// The path of the text after a URL's authority, and whether a non-empty query follows it (as
/// [`split_url`] finds them).
fn path_and_query(rest: &str) -> (&str, bool) {
    let b = rest.as_bytes();
    let end = b
        .iter()
        .position(|&c| c == b'?' || c == b'#')
        .unwrap_or(b.len());
    let has_query = b.get(end) == Some(&b'?') && b.get(end + 1).is_some_and(|&c| c != b'#');
    (&rest[..end], has_query)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{convention_rule, Convention, Source, Target, ANY_HOST};

    /// Issue #10: several captures in one segment match in linear time, exactly as the
    /// backtracking matcher decides (random pieces and strings, and a hostile 800-char segment).
    #[test]
    fn pieces_match_the_same_without_backtracking() {
        let types = [
            CapType::Int,
            CapType::Hex,
            CapType::Alpha,
            CapType::Alnum,
            CapType::Any,
        ];
        let lits = ["-", "a", "1", "_x", "é"];
        let alphabet: Vec<char> = "a1-_xé9F".chars().collect();
        let mut seed = 7u64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for _ in 0..20_000 {
            let pieces: Vec<Piece> = (0..1 + next(5))
                .map(|_| match next(2) {
                    0 => Piece::Lit(lits[next(lits.len())].to_string()),
                    _ => Piece::Cap(types[next(types.len())]),
                })
                .collect();
            let s: String = (0..next(9))
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            assert_eq!(
                match_pieces_linear(&pieces, &s),
                match_pieces_backtrack(&pieces, &s),
                "{pieces:?} on {s:?}"
            );
        }
        // `{any}-{any}-{any}-{any}!` on 800 dashes: exponential for a backtracking matcher.
        let mut p = Vec::new();
        for _ in 0..4 {
            p.push(Piece::Cap(CapType::Any));
            p.push(Piece::Lit("-".into()));
        }
        p.push(Piece::Lit("!".into()));
        assert!(!match_pieces(&p, &"-".repeat(800)));
        assert!(match_pieces(&p, &format!("{}!", "-".repeat(800))));
    }

    /// The rules' fixed point by trying every rule on every pass, in file order.
    fn brute(rules: &[Rule], url: &str) -> String {
        let mut cur = url.to_string();
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for r in rules {
                if let Some(o) = apply_rule(r, &cur).filter(|o| *o != cur) {
                    cur = o;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        cur
    }

    #[test]
    fn cross_host_rules_looked_up_by_feature_act_as_if_all_were_tried() {
        let drop = |name: &str| {
            Rule::new(
                RuleKind::Template,
                Source {
                    required: vec![(name.into(), ValPat::Any)],
                    ..Source::everywhere()
                },
                Target {
                    query: Some(vec![]),
                    ..Target::unchanged()
                },
            )
        };
        let rules = vec![
            drop("utm_source"),
            drop("sid"),
            convention_rule(Convention::Https),
            convention_rule(Convention::StripWww),
            convention_rule(Convention::DefaultDoc("index.html".into())),
            convention_rule(Convention::TrailingSlash),
            convention_rule(Convention::Suffix("amp".into())),
            // A cross-host template (`/s/{int}` → `/product.php?id={seg1}`), found by its first
            // path segment.
            Rule::new(
                RuleKind::Template,
                Source {
                    scheme: None,
                    host: ANY_HOST.into(),
                    path: Some(vec![
                        vec![Piece::Lit("s".into())],
                        vec![Piece::Cap(CapType::Int)],
                    ]),
                    required: vec![],
                    optional: vec![],
                    rest: false,
                },
                Target {
                    scheme: None,
                    host: None,
                    path: Some(vec![SegOut::Lit("product.php".into())]),
                    query: Some(vec![("id".into(), ValOut::Seg(1))]),
                },
            ),
        ];
        let n = Normalizer::new(rules.clone(), None);
        for u in [
            "http://www.a.org/s/12",
            "https://a.org/s/12?sid=3",
            "https://a.org/s/x",
            "https://a.org/t/s/12",
            "https://a.org/x/amp/?sid=1",
            "https://a.org/x/amp",
            "http://a.org/amp/",
            "https://a.org/xamp/",
            "https://a.org/amp.html",
            "http://www.a.org/x/index.html?sid=1&utm_source=y",
            "https://a.org/x/?b=2",
            "https://a.org/?utm_source=x",
            "https://a.org/index.html",
            "http://www.co.uk/a/",
            "https://a.org/x?a=1&sid=2&sidx=3",
            "https://a.org/x?sidx=3",
            "https://a.org/",
            "https://a.org",
            // Hosts with `:` (an empty port after a port-like label, IPv6): a rebuilt URL may
            // split into another host and port, so the engine splits it again.
            "http://www.a.org:8:/x",
            "http://www.a.org:8:/x?sid=1&b=2",
            "http://www.a.org::/x",
            "http://www.a.org:/x/index.html",
            "http://[::1]/x/index.html?sid=1",
        ] {
            assert_eq!(n.apply_rules(u.to_string()).url, brute(&rules, u), "{u}");
        }
        assert_eq!(
            n.apply_rules("http://www.a.org/x/index.html?sid=1&utm_source=y".into())
                .url,
            "https://a.org/x"
        );
        assert_eq!(
            n.apply_rules("http://www.a.org/s/12?sid=3".into()).url,
            "https://a.org/product.php?id=12"
        );
    }

    /// Rules filed by parameter ([`param_keys`]: host and cross-host rules, with and without a
    /// literal first segment, required names shared or not, drops of optional names) are found
    /// for every URL that one of them changes: the engine equals trying every rule, on a host
    /// with many such rules, over URLs holding every mix of the names.
    #[test]
    fn rules_filed_by_parameter_act_as_if_all_were_tried() {
        let path = |first: Option<&str>| {
            first.map(|l| vec![vec![Piece::Lit(l.into())], vec![Piece::Cap(CapType::Int)]])
        };
        // On `scope`, with `required` names (`x` literal `1`, others any value) and `optional`
        // ones dropped; `rest`; path `/{first}/{int}` or any.
        let rule =
            |scope: &str, first: Option<&str>, required: &[&str], optional: &[&str], rest| {
                Rule::new(
                    RuleKind::Template,
                    Source {
                        scheme: None,
                        host: scope.into(),
                        path: path(first),
                        required: required
                            .iter()
                            .map(|n| {
                                let v = match n.starts_with('x') {
                                    true => ValPat::Pieces(vec![Piece::Lit("1".into())]),
                                    false => ValPat::Any,
                                };
                                (n.to_string(), v)
                            })
                            .collect(),
                        optional: optional.iter().map(|n| n.to_string()).collect(),
                        rest,
                    },
                    Target {
                        query: Some(
                            required
                                .iter()
                                .filter(|n| !n.starts_with('x'))
                                .map(|n| (n.to_string(), ValOut::Copy))
                                .collect(),
                        ),
                        ..Target::unchanged()
                    },
                )
            };
        let mut rules = Vec::new();
        for (k, first) in [None, Some("p"), Some("q")].into_iter().enumerate() {
            for x in 0..6 {
                let xn = format!("x{}", x + 6 * k);
                rules.push(rule("h.org", first, &["id", &xn], &[], true));
                rules.push(rule("h.org", first, &["id"], &[&xn, "s"], true));
                rules.push(rule("h.org", first, &["id"], &[&xn], false));
                rules.push(rule(ANY_HOST, first, &[&xn], &[], true));
            }
            rules.push(rule("h.org", first, &[], &["s", "sid"], true));
            rules.push(rule(ANY_HOST, first, &[], &["utm"], true));
        }
        // A drop of the empty name: an empty pair (`&&`) holds it.
        rules.push(rule("h.org", None, &[], &["", "e"], true));
        let host_only: Vec<Rule> = rules.iter().filter(|r| !r.is_global()).cloned().collect();
        // `www.` stripped first: the host's rules are looked up again for the new host.
        let mut with_www = vec![convention_rule(Convention::StripWww)];
        with_www.extend(rules.iter().cloned());
        let names = ["id", "s", "sid", "utm", "x0", "x3", "x7", "x13", "x17", "y"];
        let mut urls = Vec::new();
        for host in ["h.org", "o.org", "www.h.org"] {
            for first in ["p", "q", "r"] {
                for mask in 0u32..(1 << names.len()) {
                    if mask.count_ones() > 4 {
                        continue;
                    }
                    let query: Vec<String> = names
                        .iter()
                        .enumerate()
                        .filter(|(b, _)| mask & (1 << b) != 0)
                        .map(|(_, n)| format!("{n}=1"))
                        .collect();
                    // (An empty query is not one: `?` alone is the base layer's to remove.)
                    let q = match query.is_empty() {
                        true => String::new(),
                        false => format!("?{}", query.join("&")),
                    };
                    urls.push(format!("https://{host}/{first}/7{q}"));
                }
            }
        }
        // Empty pairs, unsorted and repeated names (the base layer off), and the parts that
        // keep a host rule from matching.
        for q in [
            "b=1&&a=2",
            "id=1&x0=1&",
            "&id=1&s=2",
            "s=1&id=2&s=3",
            "id=1&id=2&x0=1",
        ] {
            for host in ["h.org", "h.org:8080", "u@h.org", "www.h.org"] {
                urls.push(format!("https://{host}/p/7?{q}"));
                urls.push(format!("https://{host}/p/7?{q}#f"));
            }
        }
        for set in [&rules, &host_only, &with_www] {
            let n = Normalizer::new(set.clone(), None);
            for u in &urls {
                assert_eq!(n.apply_rules(u.clone()).url, brute(set, u), "{u}");
            }
        }
        assert!(urls.len() > 3000);
        // Filed by parameter, not by path: a URL holding one drop's name tries that one.
        assert_eq!(
            Normalizer::new(rules, None)
                .apply_rules("https://h.org/p/7?id=3&x6=1".into())
                .url,
            "https://h.org/p/7?id=3"
        );
    }

    /// A suffix convention drops exactly one whole last segment and keeps the slash form.
    #[test]
    fn suffix_convention_table() {
        let c = Convention::Suffix("amp".into());
        for (url, want) in [
            ("https://a.org/x/amp/", Some("https://a.org/x/")),
            ("https://a.org/x/amp", Some("https://a.org/x")),
            ("https://a.org/x/amp?a=1", Some("https://a.org/x?a=1")),
            ("https://a.org/amp/", None),
            ("https://a.org/amp", None),
            ("https://a.org/x//amp", None),
            ("https://a.org//amp?a=1", None),
            ("https://a.org/x/amp/amp", Some("https://a.org/x/amp")),
            ("https://a.org/x/camp/", None),
            ("https://a.org/amp/x", None),
            ("https://a.org/x/", None),
            ("https://a.org/", None),
        ] {
            assert_eq!(convention_out(&c, url).as_deref(), want, "{url}");
        }
    }

    /// `c` applied to `url`, checking that the parts it says its output has are the ones
    /// `split_url` finds there (the engine takes them instead of splitting again).
    fn convention_out(c: &Convention, url: &str) -> Option<String> {
        let (out, at) = apply_convention(c, &split_url(url).unwrap())?;
        if let Some(at) = at {
            assert_eq!(Some(at.parts(&out)), split_url(&out), "{url} → {out}");
        }
        Some(out)
    }

    /// Each case's URL through convention `c` in the engine and through its export regex on
    /// `hosts` (Java `replaceAll` semantics: one match, `$n` groups): `want`, or the URL as it
    /// was for `None`. Returns the rule, for checks of its notation.
    fn check_convention(c: Convention, hosts: &[&str], cases: &[(&str, Option<&str>)]) -> Rule {
        let rule = convention_rule(c.clone());
        let hosts: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        let (re, rep) = crate::render::regex_form_on_hosts(&rule, &hosts).unwrap();
        let re = regex::Regex::new(&re).unwrap();
        for &(url, want) in cases {
            assert_eq!(convention_out(&c, url).as_deref(), want, "{url}");
            let java = re.replace(url, rep.as_str());
            assert_eq!(java, want.unwrap_or(url), "regex on {url}");
        }
        rule
    }

    /// A host-label convention drops a leading mobile label when the registrable domain stays,
    /// and its export regex (on the hosts that attest it) agrees.
    #[test]
    fn host_label_convention_table() {
        let cases = [
            ("https://m.a.org/x?y=1", Some("https://a.org/x?y=1")),
            ("http://m.a.org/", Some("http://a.org/")),
            ("https://m.b.co.uk/n", Some("https://b.co.uk/n")),
            ("https://m.m.a.org/x", Some("https://a.org/x")),
            ("https://m.co.uk/", None),
            ("https://mobile.a.org/", None),
            ("https://www.a.org/", None),
            ("https://am.a.org/", None),
        ];
        let c = Convention::HostLabel("m".into());
        let rule = check_convention(c, &["m.a.org", "m.b.co.uk"], &cases);
        assert_eq!(rule.pattern, "*://m.*{/path}{?query}");
    }

    /// A path-parameter convention drops the first `;NAME=…` of the last segment only, and its
    /// export regex (Java `replaceAll` semantics: one match, `$n` groups) gives the same URL.
    #[test]
    fn path_param_convention_table() {
        let cases = [
            (
                "https://a.org/x/item.do;jsessionid=A1B2",
                Some("https://a.org/x/item.do"),
            ),
            (
                "https://a.org/x/item.do;jsessionid=A1B2?id=3",
                Some("https://a.org/x/item.do?id=3"),
            ),
            ("https://a.org/x/;jsessionid=A1", Some("https://a.org/x/")),
            ("http://a.org/;jsessionid=A1", Some("http://a.org/")),
            (
                "https://a.org/i.do;v=2;jsessionid=A;w=3",
                Some("https://a.org/i.do;v=2;w=3"),
            ),
            (
                "https://a.org/i.do;jsessionid=A;jsessionid=B",
                Some("https://a.org/i.do;jsessionid=B"),
            ),
            ("https://a.org/i.do;jsessionid=", Some("https://a.org/i.do")),
            ("https://a.org/a;jsessionid=A/b", None),
            ("https://a.org/i.do;jsessionidx=A", None),
            ("https://a.org/i.do;xjsessionid=A", None),
            ("https://a.org/i.do?jsessionid=A", None),
            ("https://a.org/", None),
        ];
        check_convention(
            Convention::PathParam("jsessionid".into()),
            &["a.org"],
            &cases,
        );
    }

    /// A static-file query convention drops the whole query of URLs whose last segment names
    /// a file of its type; the export regex does what the engine does.
    #[test]
    fn static_query_convention_table() {
        let cases = [
            (
                "https://a.org/inc/players.js?mediatype=audio",
                Some("https://a.org/inc/players.js"),
            ),
            (
                "http://a.org/a.min.js?v=3&x=1",
                Some("http://a.org/a.min.js"),
            ),
            ("http://a.org/x.js?", Some("http://a.org/x.js")),
            ("http://a.org/x.js", None),
            ("http://a.org/x.JS?v=1", None),
            ("http://a.org/x.json?v=1", None),
            ("http://a.org/x.js/y?v=1", None),
            ("http://a.org/page.php?f=x.js", None),
            ("http://a.org/?f=x.js", None),
        ];
        let rule = check_convention(Convention::StaticQuery("js".into()), &["a.org"], &cases);
        let n = Normalizer::new(vec![rule.clone()], None);
        for (url, want) in cases {
            let got = n.apply_rules(url.to_string()).url;
            assert_eq!(got, want.unwrap_or(url), "engine on {url}");
        }
        assert_eq!(
            (rule.pattern.as_str(), rule.target.as_str()),
            ("*://*{/path}.js?{query}", "*://*{/path}.js")
        );
    }

    /// A lower-case-path convention lower-cases the path (not the query, not an escape's hex
    /// digits) of URLs whose last segment ends in its extension, written in lower case; it has
    /// no regex form (a replacement cannot change case), and the engine finds it through the
    /// path's extension.
    #[test]
    fn lower_path_convention_table() {
        let cases = [
            (
                "https://a.org/News/Item.aspx?Q=Big",
                Some("https://a.org/news/item.aspx?Q=Big"),
            ),
            (
                "http://a.org/D%C3%A9j%C3%A0/X.aspx",
                Some("http://a.org/d%C3%A9j%C3%A0/x.aspx"),
            ),
            ("https://a.org/news/item.aspx", None),
            ("https://a.org/News/Item.ASPX", None),
            ("https://a.org/News/Item.asp", None),
            ("https://a.org/News.aspx/Item", None),
            ("https://a.org/News/", None),
            // `%ZZ` and a cut `%4` are no escapes: their letters are lower-cased.
            (
                "https://a.org/A%ZZ/%4A%%4B/%4.aspx",
                Some("https://a.org/a%zz/%4A%%4B/%4.aspx"),
            ),
        ];
        let c = Convention::LowerPath("aspx".into());
        let rule = convention_rule(c.clone());
        assert_eq!(rule.pattern, "*://*{/Path}.aspx{?query}");
        assert!(crate::render::regex_form_on_hosts(&rule, &["a.org".into()]).is_none());
        let n = Normalizer::new(vec![rule], None);
        for (url, want) in cases {
            assert_eq!(convention_out(&c, url).as_deref(), want, "{url}");
            assert_eq!(
                n.apply_rules(url.to_string()).url,
                want.unwrap_or(url),
                "{url}"
            );
            // Idempotent.
            let once = want.unwrap_or(url);
            assert_eq!(n.apply_rules(once.to_string()).url, once, "{url}");
        }
        let long = format!("https://a.org/{}X.aspx", "Ab%4C".repeat(12_000));
        let out = n.apply_rules(long.clone()).url;
        assert_eq!(out.len(), long.len());
        assert!(!crate::model::lower_path_changes(&out[13..]));
    }

    #[test]
    fn host_path_and_query_agree_with_split_url() {
        for u in [
            "http://a.org/x",
            "https://a.org",
            "http://u:p@a.org:8080/x?y#z",
            "http://a.org:80a/",
            "http://[::1]/",
            "http://[::1]:8080/x",
            "http://a@b@c.org/",
            "http://a.org?q=http://b.org/",
            "http://a.org#x",
            "mailto:a@b.org",
            "file:///x",
            "x:/a://b.org/",
            "http://:80/",
            "http://a.org/x?",
            "http://a.org/x?#f",
            "http://a.org/x#f?q=1",
            "http://a.org?a=1",
            "http://a.org/p/q?a=1#x",
            "http://a.org/p/q/?&",
        ] {
            if let Some(p) = split_url(u) {
                let (host, end) = host_of(u).expect(u);
                assert_eq!(host, p.scope_host(u), "{u}");
                let has_query = p.query.is_some_and(|q| !q.is_empty());
                assert_eq!(path_and_query(&u[end..]), (p.path, has_query), "{u}");
            }
        }
    }

    #[test]
    fn pieces_table() {
        use CapType::*;
        let lit = |s: &str| Piece::Lit(s.into());
        let cases: Vec<(Vec<Piece>, &str, bool)> = vec![
            (
                vec![lit("t-"), Piece::Cap(Int), lit(".html")],
                "t-123.html",
                true,
            ),
            (
                vec![lit("t-"), Piece::Cap(Int), lit(".html")],
                "t-.html",
                false,
            ),
            (
                vec![lit("t-"), Piece::Cap(Int), lit(".html")],
                "t-12a.html",
                false,
            ),
            (vec![Piece::Cap(Any)], "", true),
            (vec![Piece::Cap(Any), lit("x")], "abx", true),
            (vec![Piece::Cap(Alpha), Piece::Cap(Int)], "abc12", true),
            (vec![Piece::Cap(Hex)], "DEADbeef", true),
            (vec![], "", true),
            (vec![], "a", false),
        ];
        for (p, s, want) in cases {
            assert_eq!(match_pieces(&p, s), want, "{p:?} on {s:?}");
        }
    }
}
