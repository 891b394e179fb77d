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
//! `^ $ ( ) (?: ) * + ? [...]` character classes without nested sets, and `\` escapes of ASCII
//! punctuation; the replacement uses `$n`. It assumes a base-normalized URL (sorted parameters, no
//! port, no user info, no fragment). Rules that keep "all other parameters" (`&{rest}`) have no
//! single-regex form and carry `regex: null`.

use crate::rules::{Piece, Rule, SegOut, ValOut, ValPat};

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

/// Fill in the readable forms, regex and id of a rule.
pub fn describe(rule: &mut Rule) {
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
        fnv(&format!("{}\u{0}{}", rule.pattern, rule.target))
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

/// 64-bit FNV-1a.
pub(crate) fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn safe_literal(s: &str) -> bool {
    !s.contains('$') && !s.contains('\\')
}

/// Regex and replacement of a rule, when expressible.
fn regex_form(rule: &Rule) -> Option<(String, String)> {
    let s = &rule.source;
    let o = &rule.output;
    let mut re = String::from("^");
    let mut rep = String::new();
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
    re.push_str(&escape(&s.host));
    // path
    let mut seg_groups: Vec<Option<usize>> = Vec::new();
    let mut path_group = None;
    match &s.path {
        None => {
            group += 1;
            path_group = Some(group);
            re.push_str("(/[^?]*)");
        }
        Some(segs) => {
            for (i, seg) in segs.iter().enumerate() {
                re.push('/');
                let copied = matches!(&o.path, Some(out) if out.contains(&SegOut::Copy(i)));
                let body = pieces_regex(seg, "/?");
                if copied || o.path.is_none() {
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
    // query
    let mut query_group = None;
    let mut param_groups: Vec<(String, usize)> = Vec::new();
    if s.rest {
        if !s.required.is_empty() || !s.optional.is_empty() {
            return None;
        }
        group += 1;
        query_group = Some(group);
        re.push_str("(\\?.*)?");
    } else {
        // Parameters appear sorted by name; each required one is a group, numbered in that order.
        let mut items: Vec<(&str, Option<&ValPat>)> = s
            .required
            .iter()
            .map(|(n, v)| (n.as_str(), Some(v)))
            .chain(s.optional.iter().map(|n| (n.as_str(), None)))
            .collect();
        items.sort_by(|a, b| a.0.cmp(b.0).then(a.1.is_some().cmp(&b.1.is_some())));
        for (n, v) in items {
            match v {
                Some(v) => {
                    group += 1;
                    param_groups.push((n.to_string(), group));
                    let body = match v {
                        ValPat::Any => "(?:=[^&]*)?".to_string(),
                        ValPat::Bare => String::new(),
                        ValPat::Pieces(p) => format!("={}", pieces_regex(p, "&")),
                    };
                    re.push_str(&format!("[?&]{}({body})", escape(n)));
                }
                None => re.push_str(&format!("(?:[?&]{}(?:=[^&]*)?)*", escape(n))),
            }
        }
    }
    re.push('$');
    // replacement
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
    let host = o.host.as_deref().unwrap_or(&s.host);
    if !safe_literal(host) {
        return None;
    }
    rep.push_str(host);
    match (&o.path, &s.path) {
        (None, None) => rep.push_str(&format!("${}", path_group?)),
        (None, Some(_)) => {
            for g in &seg_groups {
                rep.push_str(&format!("/${}", (*g)?));
            }
        }
        (Some(out), _) => {
            for seg in out {
                rep.push('/');
                match seg {
                    SegOut::Lit(l) => {
                        if !safe_literal(l) {
                            return None;
                        }
                        rep.push_str(l)
                    }
                    SegOut::Copy(j) => rep.push_str(&format!("${}", (*seg_groups.get(*j)?)?)),
                    // Path ↔ query aliases have no single-regex form here.
                    SegOut::Param(_) => return None,
                }
            }
        }
    }
    match &o.query {
        None => {
            if let Some(g) = query_group {
                rep.push_str(&format!("${g}"));
            }
        }
        Some(items) => {
            for (i, (n, v)) in items.iter().enumerate() {
                rep.push(if i == 0 { '?' } else { '&' });
                if !safe_literal(n) {
                    return None;
                }
                rep.push_str(n);
                match v {
                    ValOut::Copy => {
                        let g = param_groups.iter().find(|(m, _)| m == n)?.1;
                        rep.push_str(&format!("${g}"));
                    }
                    ValOut::Bare => {}
                    ValOut::Lit(l) => {
                        if !safe_literal(l) {
                            return None;
                        }
                        rep.push('=');
                        rep.push_str(l);
                    }
                    ValOut::Seg(_) => return None,
                }
            }
        }
    }
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
