//! Render: the readable pattern/target, the regex form and the id of a rule.
//!
//! In: a [`Rule`] whose `source` and `output` are set. Out: the same rule with `pattern`,
//! `target`, `regex`, `replacement` and `id` filled in.
//!
//! Readable notation: literals as they are; `{int}` `{hex}` `{alpha}` `{alnum}` `{any}` for
//! captures (`{int:t}` in a parameter value), `[name]` for an optional parameter that is dropped,
//! `name=*` for a parameter that must be present with any value, `{/path}` for any path,
//! `{?query}` / `&{rest}` for a query (or the other parameters) kept as they are, `*://` for any
//! scheme; on the target side `{t}` copies parameter `t` and `{seg0}` copies path segment 0.
//!
//! The regex form uses only syntax that Rust `regex` and `java.util.regex` read the same way:
//! `^ $ ( ) (?: ) | * + ?`, character classes `[...]` / `[^...]` without nested sets or
//! intersections and with `\` escapes of ASCII punctuation only, `\` escapes of ASCII punctuation
//! outside classes, and ASCII text; no look-around, no back-references, no `\w \d \s \b`
//! (ASCII in Java, Unicode in Rust), no lazy or possessive quantifiers, no inline flags. The
//! replacement uses `$n` never followed by a letter, digit or `_`, and otherwise only literal text
//! without `$` or `\`. The regex matches the whole URL (`^…$`), so Java's `replaceAll`,
//! `matches()` + `appendReplacement` and Rust's `replace` agree.
//!
//! It holds for the parameters in any order, as a crawler sees them before (or without) a
//! normalizer that sorts the query: a required parameter is matched once wherever it stands (the
//! regex spells out every order of at most three required parameters; a rule with more has no
//! regex form), the other parameters around it must not be named like it, and a rule keeping the
//! rest of the query keeps it in its order. So a crawler applying the regex gets the engine's
//! result with the kept parameters in their original order (equal once sorted by name). A
//! parameter dropped by name (an optional one) may recur anywhere: each application drops one run
//! of it, and the crawler's further passes the others. Rules whose output inserts new parameters
//! among kept unknown ones (`&{rest}` with a literal or moved value), or drop several parameters
//! while keeping the rest, carry `regex: null`.

use crate::model::{Piece, Rule, SegOut, ValOut, ValPat};

fn pieces_text(p: &[Piece], name: Option<&str>) -> String {
    let mut s = String::new();
    for piece in p {
        match piece {
            Piece::Lit(l) => s.push_str(l),
            Piece::Cap(t) => match name {
                Some(n) => s.push_str(&format!("{{{}:{n}}}", t.name())),
                None => s.push_str(&format!("{{{}}}", t.name())),
            },
        }
    }
    s
}

/// Escape a literal for the regex subset (escapes every ASCII punctuation character).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_ascii_punctuation()
            && c != '/'
            && c != '='
            && c != '&'
            && c != '-'
            && c != '_'
            && c != '%'
            && c != '~'
        {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn pieces_regex(p: &[Piece], delim: &str) -> String {
    p.iter()
        .map(|piece| match piece {
            Piece::Lit(l) => escape(l),
            Piece::Cap(t) => t.regex(delim),
        })
        .collect()
}

/// Readable pattern and target of a URL convention.
/// On host `h` (`*` for every host; for `StripWww`, a host that starts with `www.`).
fn convention_text(c: &crate::model::Convention, h: &str) -> (String, String) {
    use crate::model::Convention as C;
    match c {
        C::Https => (
            format!("http://{h}{{/path}}{{?query}}"),
            format!("https://{h}{{/path}}{{?query}}"),
        ),
        C::StripWww if h == crate::model::ANY_HOST => (
            "*://www.*{/path}{?query}".into(),
            "*://*{/path}{?query}".into(),
        ),
        C::StripWww => (
            format!("*://{h}{{/path}}{{?query}}"),
            format!(
                "*://{}{{/path}}{{?query}}",
                h.strip_prefix("www.").unwrap_or(h)
            ),
        ),
        C::DefaultDoc(n) => (
            format!("*://{h}{{/path}}/{n}{{?query}}"),
            format!("*://{h}{{/path}}/{{?query}}"),
        ),
        C::TrailingSlash => (
            format!("*://{h}{{/path}}/{{?query}}"),
            format!("*://{h}{{/path}}{{?query}}"),
        ),
        C::Suffix(n) => (
            format!("*://{h}{{/path}}/{n}[/]{{?query}}"),
            format!("*://{h}{{/path}}[/]{{?query}}"),
        ),
        C::HostLabel(l) if h == crate::model::ANY_HOST => (
            format!("*://{l}.*{{/path}}{{?query}}"),
            "*://*{/path}{?query}".into(),
        ),
        C::HostLabel(l) => (
            format!("*://{h}{{/path}}{{?query}}"),
            format!(
                "*://{}{{/path}}{{?query}}",
                h.strip_prefix(&format!("{l}.")).unwrap_or(h)
            ),
        ),
        C::PathParam(n) => (
            format!("*://{h}{{/path}};{n}={{value}}{{?query}}"),
            format!("*://{h}{{/path}}{{?query}}"),
        ),
        C::LowerPath(e) => (
            format!("*://{h}{{/Path}}.{e}{{?query}}"),
            format!("*://{h}{{/path}}.{e}{{?query}}"),
        ),
        C::StaticQuery(e) => (
            format!("*://{h}{{/path}}.{e}?{{query}}"),
            format!("*://{h}{{/path}}.{e}"),
        ),
    }
}

/// Fill in the readable forms, regex and id of a rule.
pub fn describe(rule: &mut Rule) {
    if let Some(c) = &rule.convention {
        (rule.pattern, rule.target) = convention_text(c, &rule.source.host);
        rule.regex = None;
        rule.replacement = None;
        rule.id = format!(
            "r{:016x}",
            crate::hash::fnv(&format!("{}\u{0}{}", rule.pattern, rule.target))
        );
        return;
    }
    let s = &rule.source;
    let o = &rule.output;
    // --- readable pattern
    let mut pat = match &s.scheme {
        Some(sc) => format!("{sc}://"),
        None => "*://".to_string(),
    };
    pat.push_str(&s.host);
    match &s.path {
        None => pat.push_str("{/path}"),
        Some(segs) => {
            for seg in segs {
                pat.push('/');
                pat.push_str(&pieces_text(seg, None));
            }
        }
    }
    // Required parameters first, then the optional ones, each sorted by name.
    let mut q: Vec<String> = Vec::new();
    for (n, v) in &s.required {
        q.push(match v {
            ValPat::Any => format!("{n}=*"),
            ValPat::Bare => n.clone(),
            ValPat::Pieces(p) => format!("{n}={}", pieces_text(p, Some(n))),
        });
    }
    for n in &s.optional {
        q.push(format!("[{n}]"));
    }
    if s.rest {
        q.push(if q.is_empty() {
            "{?query}".into()
        } else {
            "{rest}".into()
        });
    }
    push_query(&mut pat, &q);
    // --- readable target
    let mut tgt = match (&o.scheme, &s.scheme) {
        (Some(sc), _) | (None, Some(sc)) => format!("{sc}://"),
        (None, None) => "*://".into(),
    };
    tgt.push_str(o.host.as_deref().unwrap_or(&s.host));
    match (&o.path, &s.path) {
        (None, None) => tgt.push_str("{/path}"),
        (None, Some(segs)) => {
            for seg in segs {
                tgt.push('/');
                tgt.push_str(&pieces_text(seg, None));
            }
        }
        (Some(out), _) => {
            for seg in out {
                tgt.push('/');
                match seg {
                    SegOut::Lit(l) => tgt.push_str(l),
                    SegOut::Copy(j) => tgt.push_str(&format!("{{seg{j}}}")),
                    SegOut::Param(n) => tgt.push_str(&format!("{{{n}}}")),
                }
            }
        }
    }
    let mut tq: Vec<String> = match &o.query {
        None => vec![],
        Some(items) => items
            .iter()
            .map(|(n, v)| match v {
                ValOut::Copy => format!("{n}={{{n}}}"),
                ValOut::Bare => n.clone(),
                ValOut::Lit(l) => format!("{n}={l}"),
                ValOut::Seg(j) => format!("{n}={{seg{j}}}"),
            })
            .collect(),
    };
    if o.query.is_none() || s.rest {
        tq.push(if tq.is_empty() {
            "{?query}".into()
        } else {
            "{rest}".into()
        });
    }
    push_query(&mut tgt, &tq);
    rule.pattern = pat;
    rule.target = tgt;
    let (re, rep) = regex_form(rule).unzip();
    rule.regex = re;
    rule.replacement = rep;
    rule.id = format!(
        "r{:016x}",
        crate::hash::fnv(&format!("{}\u{0}{}", rule.pattern, rule.target))
    );
}

fn push_query(out: &mut String, q: &[String]) {
    for (i, t) in q.iter().enumerate() {
        if t == "{?query}" {
            out.push_str(t);
            continue;
        }
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(t);
    }
}

fn safe_literal(s: &str) -> bool {
    !s.contains('$') && !s.contains('\\')
}

/// A growing regex with numbered groups, for the query part.
struct Builder {
    re: String,
    groups: usize,
    /// Groups that capture a parameter's value: (name, group, whether `=` is inside the group).
    params: Vec<(String, usize, bool)>,
    capture: bool,
}

/// Longest regex produced (every order of three context parameters on either side of a dropped
/// one takes about 22 KB).
const MAX_REGEX: usize = 32 * 1024;

/// A regex for one parameter (`[^&#]*`) whose name is none of `names` (ASCII names only).
fn not_named(names: &[&str]) -> Option<String> {
    if names.iter().any(|n| !n.is_ascii()) {
        return None;
    }
    Some(not_named_from(names, 0))
}

fn class_escape(c: char) -> String {
    if c.is_ascii_punctuation() {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

fn not_named_from(names: &[&str], depth: usize) -> String {
    let mut alts: Vec<String> = Vec::new();
    // The name ends here (then `=` and a value, or nothing).
    if !names.iter().any(|n| n.len() == depth) {
        alts.push("(?:=[^&#]*)?".into());
    }
    let mut next: Vec<char> = names
        .iter()
        .filter_map(|n| n[depth..].chars().next())
        .collect();
    next.sort_unstable();
    next.dedup();
    let excl: String = next.iter().map(|&c| class_escape(c)).collect();
    alts.push(format!("[^{excl}=&#][^&#]*"));
    for c in next {
        let sub: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| n[depth..].starts_with(c))
            .collect();
        alts.push(format!(
            "{}{}",
            escape(&c.to_string()),
            not_named_from(&sub, depth + 1)
        ));
    }
    format!("(?:{})", alts.join("|"))
}

impl Builder {
    fn new(capture: bool) -> Builder {
        Builder {
            re: String::new(),
            groups: 0,
            params: Vec::new(),
            capture,
        }
    }

    fn group(&mut self, body: &str) {
        self.groups += 1;
        self.re.push('(');
        self.re.push_str(body);
        self.re.push(')');
    }

    /// One parameter with this name and value pattern (its value captured when the builder
    /// captures); `first`: no `&` before it.
    fn param(&mut self, name: &str, vp: &ValPat, first: bool) -> Option<()> {
        if self.re.len() > MAX_REGEX {
            return None;
        }
        if !first {
            self.re.push('&');
        }
        self.re.push_str(&escape(name));
        let (eq, body) = match vp {
            ValPat::Any => (true, "(?:=[^&#]*)?".to_string()),
            ValPat::Bare => (false, String::new()),
            ValPat::Pieces(p) => {
                self.re.push('=');
                (false, pieces_regex(p, "&#"))
            }
        };
        if self.capture && *vp != ValPat::Bare {
            self.group(&body);
            self.params.push((name.to_string(), self.groups, eq));
        } else {
            self.re.push_str(&format!("(?:{body})"));
        }
        Some(())
    }
}

/// Most required parameters whose orders a regex spells out (`k!` alternatives).
const MAX_PERMUTED: usize = 3;

/// Every order of `items`, the given order first; `None` for more than [`MAX_PERMUTED`].
///
/// # Complexity
/// `O(k · k!)` for `k` items.
fn permutations<T: Copy>(items: &[T]) -> Option<Vec<Vec<T>>> {
    if items.len() > MAX_PERMUTED {
        return None;
    }
    if items.is_empty() {
        return Some(vec![vec![]]);
    }
    let mut out = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.to_vec();
        let first = rest.remove(i);
        for mut p in permutations(&rest)? {
            p.insert(0, first);
            out.push(p);
        }
    }
    Some(out)
}

impl Builder {
    /// `items` once each in this order, with runs of `fill` parameters before, between and
    /// after them; no `&` before the first parameter; at least one parameter. A fill parameter
    /// that comes first must match `edge` (`None`: no fill parameters at all, so `items` must
    /// not be empty).
    fn chain_start(
        &mut self,
        items: &[(&str, &ValPat)],
        fill: Option<&str>,
        edge: &str,
    ) -> Option<()> {
        let Some(f) = fill else {
            for (i, &(n, vp)) in items.iter().enumerate() {
                self.param(n, vp, i == 0)?;
            }
            return (!items.is_empty()).then_some(());
        };
        if items.is_empty() {
            self.re.push_str(&format!("{edge}(?:&{f})*"));
            return Some(());
        }
        for (i, &(n, vp)) in items.iter().enumerate() {
            if i == 0 {
                self.re.push_str(&format!("(?:{edge}(?:&{f})*&)?"));
            }
            self.param(n, vp, i == 0)?;
            self.re.push_str(&format!("(?:&{f})*"));
        }
        Some(())
    }

    /// [`Builder::chain_start`] with the constraint at the other end: a fill parameter that
    /// comes last must match `edge`.
    fn chain_end(&mut self, items: &[(&str, &ValPat)], fill: &str, edge: &str) -> Option<()> {
        if items.is_empty() {
            self.re.push_str(&format!("(?:{fill}&)*{edge}"));
            return Some(());
        }
        for (i, &(n, vp)) in items.iter().enumerate() {
            if i == 0 {
                self.re.push_str(&format!("(?:{fill}&)*"));
            }
            self.param(n, vp, i == 0)?;
            if i + 1 < items.len() {
                self.re.push_str(&format!("(?:&{fill})*"));
            } else {
                self.re.push_str(&format!("(?:(?:&{fill})*&{edge})?"));
            }
        }
        Some(())
    }

    /// `items` once each, with fill runs around them, every parameter after a `&`; may match
    /// nothing. A fill parameter that comes first must match `edge`.
    fn tail_start(&mut self, items: &[(&str, &ValPat)], fill: &str, edge: &str) -> Option<()> {
        self.re.push_str(&format!("(?:&{edge}(?:&{fill})*)?"));
        for &(n, vp) in items {
            self.param(n, vp, false)?;
            self.re.push_str(&format!("(?:&{fill})*"));
        }
        Some(())
    }
}

/// Regex and replacement of a learned rule, when expressible (see the module docs).
pub fn regex_form(rule: &Rule) -> Option<(String, String)> {
    // Cross-host rules are dedup-key rules: never exported as a rewrite of every host.
    if rule.is_global() {
        return None;
    }
    // A convention scoped to one host (a cross-host rule exported on that host).
    if let Some(c) = &rule.convention {
        return convention_regex(c, std::slice::from_ref(&rule.source.host));
    }
    regex_form_at(rule, &escape(&rule.source.host), None)
}

/// Regex and replacement of a cross-host rule as a fetch rewrite on `hosts` only (the hosts
/// whose own URLs attest its output, [`Rule::attested`]): the rule's regex form with the host
/// an alternation of `hosts`, or for a URL convention its own regex. `None` when the rule has no
/// regex form or `hosts` is empty.
///
/// # Complexity
/// O(rule size + total length of `hosts`).
pub fn regex_form_on_hosts(rule: &Rule, hosts: &[String]) -> Option<(String, String)> {
    if hosts.is_empty() {
        return None;
    }
    if let Some(c) = &rule.convention {
        return convention_regex(c, hosts);
    }
    if rule.output.host.is_some() {
        return None;
    }
    let alt = alternation(hosts.iter().map(String::as_str));
    regex_form_at(rule, &format!("({alt})"), Some(()))
}

/// The scheme, path and query of a base-normalized URL without port, user info or fragment
/// (the URLs rules apply to): `(scheme)://` … `(path and query)`.
const SCHEME_RE: &str = "([a-z][a-z0-9+.-]*)";

/// Escaped hosts joined by `|` (the body of a host alternation).
fn alternation<'a>(hosts: impl IntoIterator<Item = &'a str>) -> String {
    hosts.into_iter().map(escape).collect::<Vec<_>>().join("|")
}

/// Regex and replacement of a URL convention on `hosts` (mirrors the engine's
/// `apply_convention`; rules never apply to URLs with a port, user info or fragment, and the
/// regexes cannot match those either).
fn convention_regex(c: &crate::model::Convention, hosts: &[String]) -> Option<(String, String)> {
    use crate::model::Convention as C;
    let q = "((?:\\?[^#]*)?)";
    // The hosts as a regex alternation (the arms that keep the host).
    let all = alternation(hosts.iter().map(String::as_str));
    Some(match c {
        // A regex replacement cannot change case (Java's `replaceAll` has no `\L`): a dedup key
        // of dedust's own engine only, never exported.
        C::LowerPath(_) => return None,
        C::Https => (
            format!("^http://({})((?:/[^?#]*)?(?:\\?[^#]*)?)$", all),
            "https://$1$2".into(),
        ),
        C::StripWww => {
            let bare: Vec<&str> = hosts
                .iter()
                .map(|h| h.strip_prefix("www."))
                .collect::<Option<_>>()?;
            (
                format!(
                    "^{SCHEME_RE}://www\\.({})((?:/[^?#]*)?(?:\\?[^#]*)?)$",
                    alternation(bare)
                ),
                "$1://$2$3".into(),
            )
        }
        C::HostLabel(label) => {
            let prefix = format!("{label}.");
            let bare: Vec<&str> = hosts
                .iter()
                .map(|h| h.strip_prefix(prefix.as_str()))
                .collect::<Option<_>>()?;
            (
                // Every leading copy of the label, as the engine drops them in one step.
                format!(
                    "^{SCHEME_RE}://(?:{}\\.)+({})((?:/[^?#]*)?(?:\\?[^#]*)?)$",
                    escape(label),
                    alternation(bare)
                ),
                "$1://$2$3".into(),
            )
        }
        C::DefaultDoc(name) => {
            if name.is_empty() || name.contains(['/', '?', '#']) {
                return None;
            }
            (
                format!(
                    "^{SCHEME_RE}://({})((?:/[^?#]*)?/){}{q}$",
                    all,
                    escape(name)
                ),
                "$1://$2$3$4".into(),
            )
        }
        C::TrailingSlash => (
            format!("^{SCHEME_RE}://({})(/[^?#]*[^/?#])/{q}$", all),
            "$1://$2$3$4".into(),
        ),
        // `/dir/WORD/` → `/dir/` and `/dir/WORD` → `/dir`; `dir` is never empty.
        C::Suffix(name) => {
            if !crate::model::suffix_like(name) || name.contains(['/', '?', '#']) {
                return None;
            }
            (
                format!(
                    "^{SCHEME_RE}://({})(/[^?#]*[^/?#])/{}(/?){q}$",
                    all,
                    escape(name)
                ),
                "$1://$2$3$4$5".into(),
            )
        }
        // `/a/file.js?v=3` → `/a/file.js`: the extension ends the last segment.
        C::StaticQuery(ext) => {
            if !crate::model::STATIC_EXTENSIONS.contains(&ext.as_str()) {
                return None;
            }
            (
                format!(
                    "^{SCHEME_RE}://({})(/(?:[^?#]*/)?[^/?#]*\\.{})\\?[^#]*$",
                    all,
                    escape(ext)
                ),
                "$1://$2$3".into(),
            )
        }
        // `/dir/item.do;NAME=v;x=1` → `/dir/item.do;x=1`: the first `;NAME=` of the last
        // segment (the lazy path stops at it; what follows holds no `/`).
        C::PathParam(name) => {
            if name.is_empty() || name.contains(['/', '?', '#', ';', '=']) {
                return None;
            }
            (
                format!(
                    "^{SCHEME_RE}://({})(/[^?#]*?);{}=[^;/?#]*([^/?#]*){q}$",
                    all,
                    escape(name)
                ),
                "$1://$2$3$4$5".into(),
            )
        }
    })
}

/// [`regex_form`] with the host written as `host_re`: a literal, or (with `captured`) one
/// capture group whose text the replacement copies.
fn regex_form_at(rule: &Rule, host_re: &str, captured: Option<()>) -> Option<(String, String)> {
    let s = &rule.source;
    let o = &rule.output;
    let mut re = String::from("^");
    let rep = String::new();
    let mut group = 0usize;
    let mut scheme_group = None;
    match &s.scheme {
        Some(sc) => re.push_str(&escape(sc)),
        None => {
            group += 1;
            scheme_group = Some(group);
            re.push_str("([a-z][a-z0-9+.-]*)");
        }
    }
    re.push_str("://");
    re.push_str(host_re);
    let host_group = captured.map(|()| {
        group += 1;
        group
    });
    // path
    let mut seg_groups: Vec<Option<usize>> = Vec::new();
    let mut path_group = None;
    match &s.path {
        None => {
            group += 1;
            path_group = Some(group);
            re.push_str("(/[^?#]*)");
        }
        Some(segs) => {
            for (i, seg) in segs.iter().enumerate() {
                re.push('/');
                let copied = match &o.path {
                    Some(out) => out.contains(&SegOut::Copy(i)),
                    None => true,
                } || o
                    .query
                    .as_ref()
                    .is_some_and(|q| q.iter().any(|(_, v)| *v == ValOut::Seg(i)));
                let body = pieces_regex(seg, "/?#");
                if copied {
                    group += 1;
                    seg_groups.push(Some(group));
                    re.push('(');
                    re.push_str(&body);
                    re.push(')');
                } else {
                    seg_groups.push(None);
                    re.push_str(&body);
                }
            }
        }
    }
    // Parameters by name (the order of a base-normalized query).
    let mut anchors: Vec<(&str, Option<&ValPat>)> = s
        .required
        .iter()
        .map(|(n, v)| (n.as_str(), Some(v)))
        .chain(s.optional.iter().map(|n| (n.as_str(), None)))
        .collect();
    anchors.sort_by(|a, b| a.0.cmp(b.0));
    if anchors.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    // Only-drop rules, whose output parameters all are required ones (the engine's early check).
    let drop_only = crate::normalize::is_drop_only(rule)
        && o.query
            .iter()
            .flatten()
            .all(|(n, _)| s.required.iter().any(|(m, _)| m == n));
    let mut query_rep = String::new();
    if s.rest && anchors.is_empty() {
        // The whole query is kept as it is.
        group += 1;
        re.push_str("(\\?[^#]*)?");
        if o.query.as_ref().is_some_and(|q| !q.is_empty()) {
            return None;
        }
        if o.query.is_none() {
            query_rep = format!("${group}");
        }
    } else if s.rest {
        // Only "drop one parameter, keep everything else" has a regex form: every occurrence
        // of an optional name, or the one occurrence of a required name with a value pattern
        // (a value drop such as `mode=hybrid`).
        // The other required parameters are copied as they are.
        let kept_as_is = |q: &[(String, ValOut)]| {
            q.iter().all(|(n, v)| {
                *v == ValOut::Copy && s.required.iter().filter(|(m, _)| m == n).count() == 1
            })
        };
        let gone: Vec<&(String, ValPat)> = s
            .required
            .iter()
            .filter(|(n, _)| !o.query.iter().flatten().any(|(m, _)| m == n))
            .collect();
        let value_drop = s.optional.is_empty()
            && gone.len() == 1
            && o.scheme.is_none()
            && o.host.is_none()
            && o.path.is_none()
            && o.query
                .as_ref()
                .is_some_and(|q| q.len() + 1 == s.required.len() && kept_as_is(q));
        let (x, block) = if value_drop {
            let (x, vp) = (gone[0].0.as_str(), &gone[0].1);
            let mut one = Builder::new(false);
            one.param(x, vp, true)?;
            (x, one.re)
        } else if drop_only && s.optional.len() == 1 {
            let x = s.optional[0].as_str();
            let one = format!("{}(?:=[^&#]*)?", escape(x));
            (x, format!("{one}(?:&{one})*"))
        } else {
            return None;
        };
        // The query in any order: the context parameters (kept as they are) once each, in any
        // order and on either side of the dropped block, among other parameters — not named
        // like an anchor, except that a dropped optional name may recur elsewhere (each run of
        // it goes in a pass of its own, as the engine's passes would drop it at once).
        let ctx: Vec<(&str, &ValPat)> = s
            .required
            .iter()
            .filter(|(n, _)| n != x)
            .map(|(n, v)| (n.as_str(), v))
            .collect();
        let names: Vec<&str> = anchors
            .iter()
            .map(|a| a.0)
            .filter(|n| value_drop || *n != x)
            .collect();
        let f = not_named(&names)?;
        // Beside the block, no parameter named like the dropped one: the block is a whole run.
        let edge = if value_drop {
            f.clone()
        } else {
            not_named(&[names.as_slice(), &[x]].concat())?
        };
        let orders = permutations(&ctx)?;
        let mut b = Builder::new(false);
        let mut alts: Vec<String> = Vec::new();
        let mut n = 0;
        // Parameters before the block (at least one), then the rest.
        for order in &orders {
            for j in 0..=order.len() {
                b.re.clear();
                b.re.push_str("(\\?");
                b.chain_end(&order[..j], &f, &edge)?;
                b.re.push_str(&format!(")&{block}("));
                b.tail_start(&order[j..], &f, &edge)?;
                b.re.push(')');
                alts.push(std::mem::take(&mut b.re));
                n += 2;
                // Stop as soon as the alternatives pass the limit (long names, three
                // context parameters), before building the rest.
                if alts.iter().map(String::len).sum::<usize>() > MAX_REGEX {
                    return None;
                }
            }
        }
        // The block first, then at least one parameter.
        for order in &orders {
            b.re.clear();
            b.re.push_str(&format!("(\\?){block}&("));
            b.chain_start(order, Some(&f), &edge)?;
            b.re.push(')');
            alts.push(std::mem::take(&mut b.re));
            n += 2;
            if alts.iter().map(String::len).sum::<usize>() > MAX_REGEX {
                return None;
            }
        }
        // The block alone.
        if ctx.is_empty() {
            alts.push(format!("\\?{block}"));
        }
        let q = format!("(?:{})", alts.join("|"));
        if q.len() > MAX_REGEX {
            return None;
        }
        re.push_str(&q);
        for g in group + 1..=group + n {
            query_rep.push_str(&format!("${g}"));
        }
        group += n;
    } else {
        // The query in any order: each required parameter once, in any order, among any number
        // of the optional (dropped) ones, and no other parameter.
        let reqs: Vec<(&str, &ValPat)> =
            anchors.iter().filter_map(|&(n, v)| Some((n, v?))).collect();
        let opts: Vec<String> = anchors
            .iter()
            .filter(|a| a.1.is_none())
            .map(|a| escape(a.0))
            .collect();
        let dropped = (!opts.is_empty()).then(|| format!("(?:{})(?:=[^&#]*)?", opts.join("|")));
        let mut b = Builder::new(true);
        b.groups = group;
        if !anchors.is_empty() {
            b.re.push_str("(?:\\?(?:");
            for (i, order) in permutations(&reqs)?.iter().enumerate() {
                if i > 0 {
                    b.re.push('|');
                }
                b.chain_start(order, dropped.as_deref(), dropped.as_deref().unwrap_or(""))?;
            }
            b.re.push_str("))");
            if reqs.is_empty() {
                b.re.push('?');
            }
        }
        if b.re.len() > MAX_REGEX {
            return None;
        }
        re.push_str(&b.re);
        group = b.groups;
        let groups_of = |n: &str| -> Vec<(usize, bool)> {
            b.params
                .iter()
                .filter(|(m, _, _)| m == n)
                .map(|(_, g, eq)| (*g, *eq))
                .collect()
        };
        let refs =
            |gs: &[(usize, bool)]| gs.iter().map(|(g, _)| format!("${g}")).collect::<String>();
        // Path segments may take a parameter's value (query → path alias).
        if let Some(out) = &o.path {
            for seg in out {
                if let SegOut::Param(n) = seg {
                    let gs = groups_of(n);
                    if gs.is_empty() || gs.iter().any(|(_, eq)| *eq) {
                        return None;
                    }
                }
            }
        }
        if let Some(items) = &o.query {
            let mut items: Vec<&(String, ValOut)> = items.iter().collect();
            items.sort_by(|a, b| a.0.cmp(&b.0));
            for (i, (n, v)) in items.iter().enumerate() {
                query_rep.push(if i == 0 { '?' } else { '&' });
                if !safe_literal(n) {
                    return None;
                }
                query_rep.push_str(n);
                match v {
                    ValOut::Copy => {
                        let gs = groups_of(n);
                        match s.required.iter().find(|(m, _)| m == n)?.1 {
                            ValPat::Bare => {}
                            ValPat::Any => query_rep.push_str(&refs(&gs)),
                            ValPat::Pieces(_) => {
                                query_rep.push('=');
                                query_rep.push_str(&refs(&gs));
                            }
                        }
                    }
                    ValOut::Bare => {}
                    ValOut::Lit(l) => {
                        if !safe_literal(l) {
                            return None;
                        }
                        query_rep.push('=');
                        query_rep.push_str(l);
                    }
                    ValOut::Seg(j) => {
                        query_rep.push('=');
                        query_rep.push_str(&format!("${}", (*seg_groups.get(*j)?)?));
                    }
                }
            }
        }
        // Path from parameters, written below once the path groups are known.
        if let Some(out) = &o.path {
            let mut path_rep = String::new();
            for seg in out {
                path_rep.push('/');
                match seg {
                    SegOut::Lit(l) => {
                        if !safe_literal(l) {
                            return None;
                        }
                        path_rep.push_str(l)
                    }
                    SegOut::Copy(j) => path_rep.push_str(&format!("${}", (*seg_groups.get(*j)?)?)),
                    SegOut::Param(n) => path_rep.push_str(&refs(&groups_of(n))),
                }
            }
            return finish(
                re,
                rep,
                rule,
                (scheme_group, host_group),
                Some(path_rep),
                &seg_groups,
                path_group,
                &query_rep,
            );
        }
    }
    let _ = group;
    finish(
        re,
        rep,
        rule,
        (scheme_group, host_group),
        None,
        &seg_groups,
        path_group,
        &query_rep,
    )
}

/// Close the regex and write the replacement: scheme, host, path (given, or copied), query.
#[allow(clippy::too_many_arguments)]
fn finish(
    mut re: String,
    mut rep: String,
    rule: &Rule,
    (scheme_group, host_group): (Option<usize>, Option<usize>),
    path_rep: Option<String>,
    seg_groups: &[Option<usize>],
    path_group: Option<usize>,
    query_rep: &str,
) -> Option<(String, String)> {
    let s = &rule.source;
    let o = &rule.output;
    re.push('$');
    match (&o.scheme, &s.scheme) {
        (Some(sc), _) | (None, Some(sc)) => {
            if !safe_literal(sc) {
                return None;
            }
            rep.push_str(sc)
        }
        (None, None) => rep.push_str(&format!("${}", scheme_group?)),
    }
    rep.push_str("://");
    if let Some(g) = host_group {
        rep.push_str(&format!("${g}"));
    } else {
        let host = o.host.as_deref().unwrap_or(&s.host);
        if !safe_literal(host) {
            return None;
        }
        rep.push_str(host);
    }
    match (path_rep, &s.path) {
        (Some(p), _) => rep.push_str(&p),
        (None, None) => rep.push_str(&format!("${}", path_group?)),
        (None, Some(_)) => {
            for g in seg_groups {
                rep.push_str(&format!("/${}", (*g)?));
            }
        }
    }
    rep.push_str(query_rep);
    // `$1` followed by a word character reads differently in Rust and Java.
    let b = rep.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'$' {
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                return None;
            }
        }
    }
    Some((re, rep))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CapType, RuleKind, Source, Target};

    fn rule(kind: RuleKind, source: Source, output: Target) -> Rule {
        let mut r = Rule::bare(kind, source, output);
        describe(&mut r);
        r
    }

    fn src(required: &[(&str, ValPat)], optional: &[&str], rest: bool) -> Source {
        Source {
            scheme: None,
            host: "h.org".into(),
            path: None,
            required: required
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
            optional: optional.iter().map(|n| n.to_string()).collect(),
            rest,
        }
    }

    /// Random base-normalized URLs on h.org: names from a set built to collide with the rules'
    /// names by prefix, sorted stably by name, sometimes repeated, sometimes with `?` in values.
    fn urls() -> Vec<String> {
        let names = ["", "p", "pa", "page", "pages", "q", "t", "tt", "u", "z"];
        let values = ["", "=", "=1", "=ab", "=x?y", "=12a"];
        let mut seed: u64 = 7;
        let mut next = |n: usize| {
            seed = seed.wrapping_add(0x9e3779b97f4a7c15);
            let mut z = seed;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
            ((z ^ (z >> 31)) % n as u64) as usize
        };
        let mut out = vec![];
        // Most URLs draw from every name; one in eight from a few, so that rules needing
        // exactly three parameters match some.
        let few = ["p", "q", "t", "z"];
        for i in 0..4000 {
            let k = next(6);
            let pool: &[&str] = if i % 8 == 0 { &few } else { &names };
            let mut pairs: Vec<String> = (0..k)
                .map(|_| format!("{}{}", pool[next(pool.len())], values[next(values.len())]))
                .filter(|p| !p.is_empty())
                .collect();
            pairs.sort_by(|a, b| crate::base::param_name(a).cmp(crate::base::param_name(b)));
            let path = ["/", "/a", "/a/b.php"][next(3)];
            let scheme = ["http", "https"][next(2)];
            let q = if pairs.is_empty() {
                String::new()
            } else {
                format!("?{}", pairs.join("&"))
            };
            out.push(format!("{scheme}://h.org{path}{q}"));
        }
        out
    }

    /// Rules of every kind the regex form covers, over names that collide by prefix.
    fn test_rules() -> Vec<Rule> {
        use ValPat::*;
        let int = || Pieces(vec![Piece::Cap(CapType::Int)]);
        let drop = |req: &[(&str, ValPat)], opt: &str| {
            let q = req
                .iter()
                .map(|(n, _)| (n.to_string(), ValOut::Copy))
                .collect();
            rule(
                RuleKind::Drop,
                src(req, &[opt], true),
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(q),
                },
            )
        };
        // A value drop: the one occurrence of `name` with a matching value goes, the rest stays.
        let value_drop = |name: &str, v: ValPat| {
            rule(
                RuleKind::Drop,
                src(&[(name, v)], &[], true),
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(vec![]),
                },
            )
        };
        let lit = |l: &str| Pieces(vec![Piece::Lit(l.into())]);
        vec![
            // `mode=hybrid` goes where `t` is there (kept as it is).
            rule(
                RuleKind::Drop,
                src(&[("p", lit("ab")), ("t", Any)], &[], true),
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(vec![("t".into(), ValOut::Copy)]),
                },
            ),
            rule(
                RuleKind::Drop,
                src(&[("q", int()), ("u", Any)], &[], true),
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(vec![("u".into(), ValOut::Copy)]),
                },
            ),
            value_drop("page", int()),
            value_drop("p", lit("ab")),
            value_drop("t", Bare),
            value_drop("pa", Any),
            value_drop("q", lit("")),
            drop(&[], "page"),
            drop(&[], "p"),
            drop(&[("t", Any)], "page"),
            drop(&[("p", Any), ("t", Any)], "pa"),
            drop(&[("page", Any)], "z"),
            drop(&[("t", int())], "pa"),
            rule(
                RuleKind::Template,
                src(&[("t", int())], &["p", "page"], false),
                Target {
                    scheme: Some("https".into()),
                    host: None,
                    path: Some(vec![SegOut::Lit("t".into()), SegOut::Param("t".into())]),
                    query: Some(vec![("u".into(), ValOut::Lit("1".into()))]),
                },
            ),
            rule(
                RuleKind::Template,
                src(&[("q", Any), ("t", Bare)], &["u"], false),
                Target {
                    scheme: None,
                    host: None,
                    path: None,
                    query: Some(vec![("t".into(), ValOut::Copy), ("q".into(), ValOut::Copy)]),
                },
            ),
            rule(
                RuleKind::Alias,
                src(&[], &[], true),
                Target {
                    scheme: None,
                    host: Some("www.h.org".into()),
                    path: None,
                    query: None,
                },
            ),
            rule(
                RuleKind::Template,
                src(&[("p", Any), ("q", int()), ("t", Bare)], &["z"], false),
                Target {
                    scheme: None,
                    host: None,
                    path: Some(vec![SegOut::Param("q".into())]),
                    query: Some(vec![("p".into(), ValOut::Copy), ("t".into(), ValOut::Copy)]),
                },
            ),
            drop(&[("p", Any), ("q", Any), ("t", Any)], "u"),
        ]
    }

    #[test]
    fn regex_form_equals_engine_on_random_sorted_queries() {
        let rules = test_rules();
        let urls = urls();
        for r in &rules {
            let re = r
                .regex
                .as_ref()
                .unwrap_or_else(|| panic!("no regex: {}", r.pattern));
            let rep = r.replacement.as_ref().unwrap();
            let re = regex::Regex::new(re).unwrap();
            let mut hits = 0;
            for u in &urls {
                let engine = crate::normalize::apply_rule(r, u);
                let via = re
                    .is_match(u)
                    .then(|| re.replace(u, rep.as_str()).into_owned());
                assert_eq!(engine, via, "{} on {u}\nregex {re}\nrep {rep}", r.pattern);
                hits += usize::from(engine.is_some());
            }
            assert!(hits > 0, "{} never applied", r.pattern);
        }
    }

    /// The query's parameters stably sorted by name (what the base layer does).
    fn sorted(u: &str) -> String {
        match u.split_once('?') {
            None => u.to_string(),
            Some((head, q)) => {
                let mut ps: Vec<&str> = q.split('&').collect();
                ps.sort_by(|a, b| crate::base::param_name(a).cmp(crate::base::param_name(b)));
                format!("{head}?{}", ps.join("&"))
            }
        }
    }

    #[test]
    fn regex_form_equals_engine_whatever_the_parameter_order() {
        // Each sorted URL with its parameters shuffled (equal names keep their relative order,
        // which the base layer's stable sort keeps too): the regex, applied as a crawler does
        // (again while it changes something, at most eight times), gives the engine's result on
        // the sorted URL, once its kept parameters are sorted.
        let mut seed: u64 = 11;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n as u64) as usize
        };
        let mut shuffled = Vec::new();
        for u in urls() {
            let Some((head, q)) = u.split_once('?') else {
                shuffled.push((u.clone(), u));
                continue;
            };
            let mut groups: Vec<Vec<&str>> = Vec::new();
            for p in q.split('&') {
                match groups.last_mut() {
                    Some(g) if crate::base::param_name(g[0]) == crate::base::param_name(p) => {
                        g.push(p)
                    }
                    _ => groups.push(vec![p]),
                }
            }
            let mut out = Vec::new();
            while groups.iter().any(|g| !g.is_empty()) {
                let live: Vec<usize> = (0..groups.len())
                    .filter(|&i| !groups[i].is_empty())
                    .collect();
                let i = live[next(live.len())];
                out.push(groups[i].remove(0));
            }
            shuffled.push((u.clone(), format!("{head}?{}", out.join("&"))));
        }
        let unsorted = shuffled.iter().filter(|(s, u)| s != u).count();
        assert!(unsorted > 1000, "{unsorted}");
        for r in &test_rules() {
            let re = regex::Regex::new(r.regex.as_ref().unwrap()).unwrap();
            let rep = r.replacement.as_ref().unwrap();
            let (mut hits, mut moved) = (0, 0);
            for (sorted_url, u) in &shuffled {
                let engine = crate::normalize::apply_rule(r, sorted_url);
                let mut via = u.clone();
                for _ in 0..8 {
                    let next = re.replace(&via, rep.as_str()).into_owned();
                    if next == via {
                        break;
                    }
                    via = next;
                }
                let via = (via != *u || re.is_match(u)).then(|| sorted(&via));
                assert_eq!(engine, via, "{} on {u}\nregex {re}\nrep {rep}", r.pattern);
                hits += usize::from(engine.is_some());
                moved += usize::from(engine.is_some() && sorted_url != u);
            }
            assert!(
                moved > 0,
                "{} never applied to a shuffled query ({hits} hits)",
                r.pattern
            );
        }
    }

    #[test]
    fn permutations_table() {
        assert_eq!(permutations::<u8>(&[]), Some(vec![vec![]]));
        assert_eq!(permutations(&[1]), Some(vec![vec![1]]));
        assert_eq!(
            permutations(&[1, 2, 3]).unwrap(),
            vec![
                vec![1, 2, 3],
                vec![1, 3, 2],
                vec![2, 1, 3],
                vec![2, 3, 1],
                vec![3, 1, 2],
                vec![3, 2, 1]
            ]
        );
        assert_eq!(permutations(&[1, 2, 3, 4]), None);
    }

    #[test]
    fn not_named_table() {
        let re = regex::Regex::new(&format!("^{}$", not_named(&["p", "page"]).unwrap())).unwrap();
        for (elem, want) in [
            ("p", false),
            ("p=1", false),
            ("page=x", false),
            ("pa=1", true),
            ("pages", true),
            ("", true),
            ("=1", true),
            ("q", true),
        ] {
            assert_eq!(re.is_match(elem), want, "{elem}");
        }
    }
}
