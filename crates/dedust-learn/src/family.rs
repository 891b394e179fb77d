//! Family: the consensus of a family of duplicate clusters, read column by column.
//!
//! In: the URLs of the clusters of one *family* — the clusters whose pairs share one structural
//! key of [`crate::rules`] (host or cross-host scope, literal path segments and path shape, the
//! parameter names kept) — cluster by cluster, each cluster's canonical target first. Out: a
//! [`FamilyConsensus`], one [`FamilyColumn`] per URL unit: the scheme, the host, each path
//! segment by position (a slug is one unit), each query parameter by name (rules match the query
//! as a set, never by position). Each column is classed by where its values vary:
//! * [`FamilyClass::Invariant`] — one value in every URL of the family;
//! * [`FamilyClass::Capture`] — constant inside each cluster, different across clusters (the
//!   thread id, the slug): what a rule copies or types by the value lattice
//!   (`int` ⊂ `hex` ⊂ `alnum`, `alpha` ⊂ `alnum`, `slug`, `any`);
//! * [`FamilyClass::Variant`] — two values inside one cluster (`forum.php` and `index.php`): what a
//!   rule rewrites; a rule keeps it literal, never a capture;
//! * [`FamilyClass::Optional`] — in some URLs of a cluster and not in others: what a rule drops,
//!   all such columns of a family together;
//! * [`FamilyClass::Partial`] — in some clusters only, never absent inside one.
//!
//! For two URLs the columns are the diff of their units; with a partial-order alignment of
//! their tokens ([`crate::align()`], [`crate::consensus()`]) read unit by unit it agrees: a
//! parameter is optional, variant or invariant in both (a property test below). Across a family
//! the units are matched by key (position, name), which is what the family's structural key fixes;
//! the alignment graph of a family is drawn by [`family_svg`].
//!
//! Invariants: the columns are in URL order (scheme, host, segments, parameters by name); a
//! column's distinct values are counted up to [`MAX_VALUES`] and typed from those; the output does
//! not depend on the order of the clusters' members.
//!
//! # Complexity
//! `O(Σ |URL| · log u)` time for the family's URLs, `u` the units of one URL; memory
//! `O(units · MAX_VALUES)`, whatever the family's size (a cross-host convention holds millions
//! of pairs).

use crate::rules::{is_slug, is_slug_unit, Units};
use crate::tokenize::{tokenize, Token, TokenKind, Tokens};
use dedust_core::__private::model::{CapType, ConsensusRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Distinct values a column keeps to type and show (more are counted as "more").
pub const MAX_VALUES: usize = 64;

/// Most columns a [`ConsensusRecord`] lists.
pub const MAX_RECORD_COLUMNS: usize = 32;

/// Most characters of a unit name or value in a [`ConsensusRecord`].
pub const MAX_RECORD_TEXT: usize = 64;

/// Most characters of a [`ConsensusRecord`]'s family line.
pub const MAX_RECORD_LINE: usize = 512;

/// A URL unit: the key columns are matched by.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Unit {
    /// The scheme.
    Scheme,
    /// The host (with its port).
    Host,
    /// Path segment `i` (0 = the first after `/`).
    Seg(usize),
    /// The query parameter of this name.
    Param(String),
}

impl std::fmt::Display for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unit::Scheme => f.write_str("scheme"),
            Unit::Host => f.write_str("host"),
            Unit::Seg(i) => write!(f, "/{}", i + 1),
            Unit::Param(n) => write!(f, "?{n}"),
        }
    }
}

/// Where a column's values vary (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FamilyClass {
    /// One value everywhere.
    Invariant,
    /// Constant inside each cluster, different across clusters.
    Capture,
    /// Two values inside one cluster.
    Variant,
    /// Present in some URLs of a cluster, absent in others.
    Optional,
    /// Present in some clusters only.
    Partial,
}

impl FamilyClass {
    /// Lower-case name, as the rule file writes it.
    pub fn name(self) -> &'static str {
        match self {
            FamilyClass::Invariant => "invariant",
            FamilyClass::Capture => "capture",
            FamilyClass::Variant => "variant",
            FamilyClass::Optional => "optional",
            FamilyClass::Partial => "partial",
        }
    }
}

/// One column of a family's consensus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyColumn {
    /// The unit.
    pub unit: Unit,
    /// Its class.
    pub class: FamilyClass,
    /// The type of its values by the lattice: `int`, `hex`, `alpha`, `alnum`, `slug`, `any`.
    pub ty: &'static str,
    /// Its distinct values (sorted; at most [`MAX_VALUES`]).
    pub values: Vec<String>,
    /// Whether it had more distinct values than [`MAX_VALUES`].
    pub more: bool,
}

/// The consensus of a family of clusters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FamilyConsensus {
    /// Clusters read.
    pub clusters: usize,
    /// URLs read (each cluster's distinct URLs).
    pub urls: usize,
    /// The columns, in URL order.
    pub columns: Vec<FamilyColumn>,
}

#[derive(Default)]
struct Acc {
    values: BTreeSet<String>,
    more: bool,
    clusters: usize,
    within_gap: bool,
    within_var: bool,
}

impl Acc {
    fn add(&mut self, v: &str) {
        if self.values.len() < MAX_VALUES {
            self.values.insert(v.to_string());
        } else if !self.values.contains(v) {
            self.more = true;
        }
    }
}

/// The units of one URL with their values (a bare parameter's value is empty); `None` for a
/// URL the rules do not describe (user info, fragment, no authority).
fn units(url: &str) -> Option<Vec<(Unit, &str)>> {
    let u = Units::parse(url)?;
    let mut v = Vec::with_capacity(2 + u.segs.len() + u.params.len());
    v.push((Unit::Scheme, u.scheme));
    v.push((Unit::Host, u.host));
    v.extend(u.segs.iter().enumerate().map(|(i, s)| (Unit::Seg(i), *s)));
    for (n, val) in &u.params {
        // A repeated name (`a=1&a=2`) is one unit: its first value.
        if !v.iter().any(|(k, _)| matches!(k, Unit::Param(m) if m == n)) {
            v.push((Unit::Param(n.to_string()), val.unwrap_or("")));
        }
    }
    Some(v)
}

/// The value type of a column by the lattice (`slug` for slugs, else [`CapType::infer`]).
fn type_of(values: &BTreeSet<String>) -> &'static str {
    if !values.is_empty() && values.iter().all(|v| is_slug(v)) {
        return "slug";
    }
    CapType::infer(values.iter().map(String::as_str)).name()
}

/// Read a family's consensus from its clusters' URLs (each cluster a list of URLs; the order
/// inside a cluster does not matter; a URL the rules do not describe is left out).
///
/// ```
/// use dedust_learn::family::{family_consensus, FamilyClass, Unit};
/// let a = ["https://f.org/s.php?t=1", "https://f.org/s.php?mode=x&t=1", "https://f.org/s.php?p=7&t=1"];
/// let b = ["https://f.org/s.php?t=2", "https://f.org/s.php?p=9&t=2"];
/// let c = family_consensus([&a[..], &b[..]]);
/// let class = |u: Unit| c.columns.iter().find(|c| c.unit == u).unwrap().class;
/// assert_eq!(class(Unit::Seg(0)), FamilyClass::Invariant);
/// assert_eq!(class(Unit::Param("t".into())), FamilyClass::Capture);
/// assert_eq!(class(Unit::Param("p".into())), FamilyClass::Optional);
/// assert_eq!(class(Unit::Param("mode".into())), FamilyClass::Optional);
/// assert_eq!(c.record("f.org").family, "*://f.org/s.php?[mode]&[p]&t={int}");
/// ```
///
/// # Complexity
/// See the module docs.
pub fn family_consensus<'a, C, S>(clusters: C) -> FamilyConsensus
where
    C: IntoIterator<Item = &'a [S]>,
    S: AsRef<str> + 'a,
{
    let mut acc: BTreeMap<Unit, Acc> = BTreeMap::new();
    let (mut nclusters, mut nurls) = (0, 0);
    let mut cell: BTreeMap<Unit, (usize, Option<&str>, bool)> = BTreeMap::new();
    for cluster in clusters {
        let rows: Vec<Vec<(Unit, &str)>> =
            cluster.iter().filter_map(|u| units(u.as_ref())).collect();
        if rows.is_empty() {
            continue;
        }
        nclusters += 1;
        nurls += rows.len();
        // Per unit: how many rows have it, its first value, whether a second differs.
        cell.clear();
        for row in &rows {
            for (unit, v) in row {
                let e = cell.entry(unit.clone()).or_insert((0, Some(*v), false));
                e.0 += 1;
                if e.1 != Some(*v) {
                    e.2 = true;
                }
            }
        }
        for (unit, (n, _, differs)) in &cell {
            let a = acc.entry(unit.clone()).or_default();
            a.clusters += 1;
            a.within_gap |= *n < rows.len();
            a.within_var |= *differs;
        }
        for row in &rows {
            for (unit, v) in row {
                acc.get_mut(unit).expect("counted above").add(v);
            }
        }
    }
    let columns = acc
        .into_iter()
        .map(|(unit, a)| {
            let class = if a.within_gap {
                FamilyClass::Optional
            } else if a.within_var {
                FamilyClass::Variant
            } else if a.clusters < nclusters {
                FamilyClass::Partial
            } else if a.values.len() > 1 || a.more {
                FamilyClass::Capture
            } else {
                FamilyClass::Invariant
            };
            let ty = type_of(&a.values);
            FamilyColumn {
                unit,
                class,
                ty,
                values: a.values.into_iter().collect(),
                more: a.more,
            }
        })
        .collect();
    FamilyConsensus {
        clusters: nclusters,
        urls: nurls,
        columns,
    }
}

impl FamilyConsensus {
    /// The column of `unit`, if the family has it.
    pub fn column(&self, unit: &Unit) -> Option<&FamilyColumn> {
        self.columns.iter().find(|c| &c.unit == unit)
    }

    /// The consensus as a line in the rule pattern's notation: invariant units literal, captures
    /// typed (`{int}`), variant units as their values (`{forum.php|index.php}`), optional
    /// parameters in brackets (`[p]`), partial ones in parentheses; the scheme as `*` and the host
    /// as `scope` when they vary.
    pub fn line(&self, scope: &str) -> String {
        let mut s = String::new();
        let show = |c: &FamilyColumn| -> String {
            match c.class {
                FamilyClass::Invariant => c.values.first().cloned().unwrap_or_default(),
                FamilyClass::Capture => format!("{{{}}}", c.ty),
                FamilyClass::Variant => format!("{{{}}}", show_values(c, 4)),
                FamilyClass::Optional | FamilyClass::Partial => String::new(),
            }
        };
        // Rules match either scheme: the scheme column is shown in [`FamilyConsensus::record`].
        s.push_str("*://");
        s.push_str(scope);
        for c in &self.columns {
            if let Unit::Seg(_) = c.unit {
                match c.class {
                    FamilyClass::Optional => {
                        let _ = write!(s, "[/{}]", show_values(c, 2));
                    }
                    FamilyClass::Partial => {
                        let _ = write!(s, "(/{})", show_values(c, 2));
                    }
                    _ => {
                        s.push('/');
                        s.push_str(&show(c));
                    }
                }
            }
        }
        let mut first = true;
        for c in &self.columns {
            if let Unit::Param(n) = &c.unit {
                s.push(if first { '?' } else { '&' });
                first = false;
                match c.class {
                    FamilyClass::Optional => {
                        let _ = write!(s, "[{n}]");
                    }
                    FamilyClass::Partial => {
                        let _ = write!(s, "({n})");
                    }
                    _ => {
                        let v = show(c);
                        if v.is_empty() {
                            s.push_str(n);
                        } else {
                            let _ = write!(s, "{n}={v}");
                        }
                    }
                }
            }
        }
        s
    }

    /// The record a rule file keeps of this consensus ([`ConsensusRecord`]): the family line
    /// ([`FamilyConsensus::line`]), the clusters and URLs read, and one entry per column that is
    /// not invariant, `unit class type values…` (at most 4 values shown).
    ///
    /// Bounded whatever the URLs (attacker-controlled names and values): at most
    /// [`MAX_RECORD_COLUMNS`] columns (then one `… N more columns` entry), each name and value
    /// cut to [`MAX_RECORD_TEXT`] characters, the family line to [`MAX_RECORD_LINE`].
    pub fn record(&self, scope: &str) -> ConsensusRecord {
        let cut = |t: &str, n: usize| -> String {
            if t.chars().count() > n {
                t.chars().take(n).collect::<String>() + "…"
            } else {
                t.to_string()
            }
        };
        let varying: Vec<&FamilyColumn> = self
            .columns
            .iter()
            .filter(|c| c.class != FamilyClass::Invariant)
            .collect();
        let mut columns: Vec<String> = varying
            .iter()
            .take(MAX_RECORD_COLUMNS)
            .map(|c| {
                let mut e = format!(
                    "{} {} {}",
                    cut(&c.unit.to_string(), MAX_RECORD_TEXT),
                    c.class.name(),
                    c.ty
                );
                for v in c.values.iter().take(4) {
                    e.push(' ');
                    e.push_str(&if v.is_empty() {
                        "\"\"".to_string()
                    } else {
                        cut(v, MAX_RECORD_TEXT)
                    });
                }
                if c.values.len() > 4 || c.more {
                    e.push_str(" …");
                }
                e
            })
            .collect();
        if varying.len() > MAX_RECORD_COLUMNS {
            columns.push(format!(
                "… {} more columns",
                varying.len() - MAX_RECORD_COLUMNS
            ));
        }
        ConsensusRecord {
            family: cut(&self.line(scope), MAX_RECORD_LINE),
            clusters: self.clusters,
            urls: self.urls,
            columns,
        }
    }
}

/// A column's first `n` values joined by `|`, then `|…` when it has more.
fn show_values(c: &FamilyColumn, n: usize) -> String {
    let mut v = c
        .values
        .iter()
        .take(n)
        .cloned()
        .collect::<Vec<_>>()
        .join("|");
    if c.values.len() > n || c.more {
        v.push_str("|…");
    }
    v
}

/// Tokens of a URL for aligning a family: [`tokenize`]'s, with every slug path segment (and
/// every product code) joined back into one unit, so that an alignment never matches one
/// slug's words with another's.
///
/// ```
/// use dedust_learn::family::family_tokens;
/// let t = family_tokens("https://h.org/p/best-running-shoes-2024?id=3");
/// assert!(t.0.iter().any(|t| t.text == "best-running-shoes-2024"));
/// assert_eq!(t.rebuild(), "https://h.org/p/best-running-shoes-2024?id=3");
/// ```
pub fn family_tokens(url: &str) -> Tokens {
    let toks = tokenize(url);
    let mut out: Vec<Token> = Vec::with_capacity(toks.0.len());
    let mut seg: Vec<Token> = Vec::new();
    let flush = |seg: &mut Vec<Token>, out: &mut Vec<Token>| {
        let text: String = seg.iter().map(|t| t.text.as_str()).collect();
        if seg.len() > 1 && is_slug_unit(&text) {
            out.push(Token {
                kind: TokenKind::Word,
                text,
            });
            seg.clear();
        } else {
            out.append(seg);
        }
    };
    for t in toks.0 {
        match t.kind {
            TokenKind::Word | TokenKind::Number | TokenKind::Punct => seg.push(t),
            _ => {
                flush(&mut seg, &mut out);
                out.push(t);
            }
        }
    }
    flush(&mut seg, &mut out);
    Tokens(out)
}

/// Most URLs of a family [`family_svg`] aligns and draws.
pub const SVG_MAX_URLS: usize = 24;

/// The alignment graph of a family's URLs (at most [`SVG_MAX_URLS`], the first clusters' first),
/// drawn as an SVG: one box per node (its tokens, and how many URLs pass through it), laid out
/// by breadth-first consensus column; edges follow token order; a node some URLs skip (an
/// optional column) is dashed; a node holding several texts (a variant) is shaded. All text is
/// escaped.
///
/// ```
/// use dedust_learn::family::family_svg;
/// let (svg, nodes) = family_svg(&[vec!["http://h/a?t=1".to_string(), "http://h/a?mode=x&t=1".to_string()]]);
/// assert!(svg.starts_with("<svg") && svg.contains("stroke-dasharray"));
/// assert_eq!(svg.matches("<rect class=\"node").count(), nodes);
/// ```
///
/// # Complexity
/// The alignment's ([`crate::align()`]) on at most [`SVG_MAX_URLS`] URLs.
pub fn family_svg(clusters: &[Vec<String>]) -> (String, usize) {
    let urls: Vec<&String> = clusters.iter().flatten().take(SVG_MAX_URLS).collect();
    let seqs: Vec<Tokens> = urls.iter().map(|u| family_tokens(u)).collect();
    let a = crate::align(&seqs);
    let c = crate::consensus(&a);
    let esc = crate::report::esc;
    // Column of every node: its breadth-first order; rows: nodes sharing a depth stack.
    let mut depth = vec![0usize; a.node_count()];
    for s in 0..a.sequences() {
        let p = a.path(s);
        for w in p.windows(2) {
            depth[w[1]] = depth[w[1]].max(depth[w[0]] + 1);
        }
    }
    // Longest-path depth needs a topological pass: repeat until stable (paths are short).
    loop {
        let mut changed = false;
        for s in 0..a.sequences() {
            let p = a.path(s);
            for w in p.windows(2) {
                if depth[w[1]] < depth[w[0]] + 1 {
                    depth[w[1]] = depth[w[0]] + 1;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut row = vec![0usize; a.node_count()];
    let mut used: BTreeMap<usize, usize> = BTreeMap::new();
    for col in &c.columns {
        let d = depth[col.node];
        let r = used.entry(d).or_default();
        row[col.node] = *r;
        *r += 1;
    }
    let label = |id: usize| -> String {
        let n = a.node(id);
        let t = n.texts();
        let mut s = t.iter().take(3).copied().collect::<Vec<_>>().join(" | ");
        if t.len() > 3 {
            s.push_str(" | …");
        }
        if s.chars().count() > 28 {
            s = s.chars().take(27).collect::<String>() + "…";
        }
        s
    };
    let (w, h) = (190usize, 54usize);
    let x = |id: usize| 10 + depth[id] * (w + 30);
    let y = |id: usize| 40 + row[id] * (h + 20);
    let width = 20 + (depth.iter().max().copied().unwrap_or(0) + 1) * (w + 30);
    let height = 80 + (used.values().max().copied().unwrap_or(1)) * (h + 20);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"monospace\" font-size=\"12\">"
    );
    let _ = write!(
        s,
        "<style>.node{{fill:#fff;stroke:#333}}.optional{{stroke-dasharray:5 3}}.variant{{fill:#fde8c8}}</style><text x=\"10\" y=\"20\">{} URLs, {} clusters, {} nodes</text>",
        urls.len(),
        clusters.len(),
        a.node_count()
    );
    let mut edges: BTreeSet<(usize, usize)> = BTreeSet::new();
    for sq in 0..a.sequences() {
        for wv in a.path(sq).windows(2) {
            edges.insert((wv[0], wv[1]));
        }
    }
    for (p, q) in edges {
        let (x1, y1, x2, y2) = (x(p) + w, y(p) + h / 2, x(q), y(q) + h / 2);
        if depth[q] == depth[p] + 1 {
            let _ = write!(
                s,
                "<line x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"#888\"/>"
            );
        } else {
            // An edge past a column (a gap) arcs below the boxes it skips.
            let below = y(p).max(y(q)) + h + 12;
            let _ = write!(
                s,
                "<path d=\"M{x1} {y1} C{} {below} {} {below} {x2} {y2}\" fill=\"none\" stroke=\"#888\"/>",
                x1 + 40,
                x2 - 40
            );
        }
    }
    for col in &c.columns {
        let id = col.node;
        let through = col.cells.iter().filter(|c| c.is_some()).count();
        let class = match col.class {
            crate::ColumnClass::Invariant => "node",
            crate::ColumnClass::Variant => "node variant",
            crate::ColumnClass::Optional if a.node(id).texts().len() > 1 => "node optional variant",
            crate::ColumnClass::Optional => "node optional",
        };
        let _ = write!(
            s,
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"{w}\" height=\"{h}\" rx=\"4\"/><text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" fill=\"#666\">{:?} · {through}/{} URLs</text>",
            x(id),
            y(id),
            x(id) + 6,
            y(id) + 20,
            esc(&label(id)),
            x(id) + 6,
            y(id) + 40,
            col.kind,
            a.sequences()
        );
    }
    s.push_str("</svg>\n");
    (s, a.node_count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{align, consensus, ColumnClass};

    /// Per parameter name, the class the two-row partial-order alignment gives it.
    fn aligned_param_classes(a: &str, b: &str) -> BTreeMap<String, FamilyClass> {
        let c = consensus(&align(&[family_tokens(a), family_tokens(b)]));
        let mut out = BTreeMap::new();
        for col in &c.columns {
            if col.kind != TokenKind::Param {
                continue;
            }
            let name = col
                .cells
                .iter()
                .flatten()
                .map(|t| crate::base::param_name(t).to_string())
                .next()
                .unwrap();
            let class = match col.class {
                ColumnClass::Invariant => FamilyClass::Invariant,
                ColumnClass::Variant => FamilyClass::Variant,
                ColumnClass::Optional => FamilyClass::Optional,
            };
            out.insert(name, class);
        }
        out
    }

    /// For two URLs, the unit diff and the alignment class every parameter alike (the diff
    /// stands in for the alignment on two-URL clusters).
    #[test]
    fn two_url_diff_equals_the_two_row_alignment() {
        // A small deterministic generator: xorshift over parameter subsets and values.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let names = ["a", "id", "mode", "p", "s", "t", "utm_source", "z"];
        let values = ["1", "2", "hybrid", "x9", "", "abc", "12345678"];
        let mut checked = 0;
        for _ in 0..2000 {
            let ra = next() | 1 << 20;
            let rb = next() | 1 << 20;
            let (va, vb) = (next(), next());
            let url = |r: u64, mut seed: u64| -> String {
                let mut q: Vec<String> = Vec::new();
                for (i, n) in names.iter().enumerate() {
                    if (r >> i) & 1 == 1 {
                        let v = values[(seed % values.len() as u64) as usize];
                        seed /= values.len() as u64;
                        q.push(if v.is_empty() {
                            n.to_string()
                        } else {
                            format!("{n}={v}")
                        });
                    }
                }
                let path = if r >> 20 & 1 == 1 {
                    "/show.php"
                } else {
                    "/f/best-running-shoes-2024"
                };
                if q.is_empty() {
                    format!("https://h.org{path}")
                } else {
                    format!("https://h.org{path}?{}", q.join("&"))
                }
            };
            let (a, b) = (url(ra, va), url(rb, vb));
            let fam = family_consensus([&[a.clone(), b.clone()][..]]);
            let diff: BTreeMap<String, FamilyClass> = fam
                .columns
                .iter()
                .filter_map(|c| match &c.unit {
                    Unit::Param(n) => Some((n.clone(), c.class)),
                    _ => None,
                })
                .collect();
            assert_eq!(diff, aligned_param_classes(&a, &b), "{a} {b}");
            // The path: one unit, the same in both.
            assert_eq!(
                fam.column(&Unit::Seg(0)).unwrap().class,
                FamilyClass::Invariant
            );
            checked += 1;
        }
        assert_eq!(checked, 2000);
    }

    #[test]
    fn classes_table() {
        // (clusters, unit, class, type)
        type Case = (
            &'static [&'static [&'static str]],
            Unit,
            FamilyClass,
            &'static str,
        );
        let cases: &[Case] = &[
            // Five URLs with three optional parameters: one consensus, three optional columns.
            (
                &[&[
                    "https://f.org/s.php?t=1",
                    "https://f.org/s.php?a=x&t=1",
                    "https://f.org/s.php?b=y&t=1",
                    "https://f.org/s.php?c=z&t=1",
                    "https://f.org/s.php?a=x&b=y&t=1",
                ]],
                Unit::Param("b".into()),
                FamilyClass::Optional,
                "alpha",
            ),
            // Variation inside one cluster is a variant, never a capture.
            (
                &[&["https://f.org/forum.php?s=1", "https://f.org/index.php?s=1"]],
                Unit::Seg(0),
                FamilyClass::Variant,
                "any",
            ),
            // Across clusters: a capture, typed by the lattice.
            (
                &[
                    &["https://f.org/t/12", "https://f.org/t/12/"],
                    &["https://f.org/t/40", "https://f.org/t/40/"],
                ],
                Unit::Seg(1),
                FamilyClass::Capture,
                "int",
            ),
            (
                &[
                    &[
                        "https://f.org/p/best-running-shoes",
                        "https://f.org/p/best-running-shoes?ref=a",
                    ],
                    &[
                        "https://f.org/p/cheap-rain-coats",
                        "https://f.org/p/cheap-rain-coats?ref=b",
                    ],
                ],
                Unit::Seg(1),
                FamilyClass::Capture,
                "slug",
            ),
            (
                &[
                    &["https://f.org/a?s=deadbeef01", "https://f.org/a"],
                    &["https://f.org/b", "https://f.org/b?s=cafebabe99"],
                ],
                Unit::Param("s".into()),
                FamilyClass::Optional,
                "hex",
            ),
            // In one cluster only, never dropped inside one: partial.
            (
                &[
                    &["https://f.org/a?x=1", "http://f.org/a?x=1"],
                    &["https://f.org/b", "http://f.org/b"],
                ],
                Unit::Param("x".into()),
                FamilyClass::Partial,
                "int",
            ),
            (
                &[
                    &["https://f.org/a", "http://f.org/a"],
                    &["https://f.org/b", "http://f.org/b"],
                ],
                Unit::Scheme,
                FamilyClass::Variant,
                "alpha",
            ),
        ];
        for (clusters, unit, class, ty) in cases {
            let c = family_consensus(clusters.iter().copied());
            let col = c
                .column(unit)
                .unwrap_or_else(|| panic!("{unit} missing: {c:?}"));
            assert_eq!((col.class, col.ty), (*class, *ty), "{clusters:?} {unit}");
        }
    }

    #[test]
    fn member_order_does_not_matter_and_values_are_bounded() {
        let a = ["https://f.org/x?b=2&t=1", "https://f.org/x?t=1"];
        let b = ["https://f.org/x?t=1", "https://f.org/x?b=2&t=1"];
        assert_eq!(family_consensus([&a[..]]), family_consensus([&b[..]]));
        let many: Vec<Vec<String>> = (0..500)
            .map(|i| {
                vec![
                    format!("https://f.org/x?t={i}"),
                    format!("https://f.org/x?s={i}&t={i}"),
                ]
            })
            .collect();
        let c = family_consensus(many.iter().map(Vec::as_slice));
        let t = c.column(&Unit::Param("t".into())).unwrap();
        assert_eq!(
            (t.class, t.values.len(), t.more),
            (FamilyClass::Capture, MAX_VALUES, true)
        );
        assert_eq!((c.clusters, c.urls), (500, 1000));
        let r = c.record("f.org");
        assert_eq!(r.family, "*://f.org/x?[s]&t={int}");
        assert!(
            r.columns.iter().any(|e| e.starts_with("?s optional int")),
            "{r:?}"
        );
    }

    #[test]
    fn a_record_is_bounded_whatever_the_urls() {
        let long = "n".repeat(300);
        let urls: Vec<String> = std::iter::once("https://h.org/s?t=1".to_string())
            .chain((0..500).map(|i| format!("https://h.org/s?t=1&{long}{i}={}", "v".repeat(300))))
            .collect();
        let r = family_consensus([&urls[..]]).record("h.org");
        assert_eq!(
            r.columns.len(),
            MAX_RECORD_COLUMNS + 1,
            "{:?}",
            r.columns.last()
        );
        assert_eq!(r.columns.last().unwrap(), "… 468 more columns");
        assert!(r
            .columns
            .iter()
            .all(|c| c.chars().count() < 4 * (MAX_RECORD_TEXT + 2) + 40));
        assert!(r.family.chars().count() <= MAX_RECORD_LINE + 1);
    }

    #[test]
    fn the_svg_has_one_box_per_alignment_node() {
        let clusters = vec![
            vec![
                "https://f.org/s.php?t=1".to_string(),
                "https://f.org/s.php?mode=hybrid&t=1".to_string(),
            ],
            vec![
                "https://f.org/s.php?t=2".to_string(),
                "https://f.org/s.php?p=<b>&t=2".to_string(),
            ],
        ];
        let (svg, nodes) = family_svg(&clusters);
        assert_eq!(svg.matches("<rect class=\"node").count(), nodes);
        assert!(nodes >= 9, "{nodes}");
        assert!(!svg.contains("<b>") && svg.contains("&lt;b&gt;"));
        assert!(svg.contains("optional"));
    }
}
