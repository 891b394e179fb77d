//! Export: rule files for the crawlers users already run.
//!
//! In: rules in application order (one or several dedust rule files) and a target [`Format`].
//! Out: an [`Export`]: the text of the crawler's configuration, the rules it holds (as a dedust
//! rule list, so `dedust normalize` can run exactly what the crawler runs), and every rule left
//! out with the reason. Invariant: the exported configuration, run by the crawler on URLs
//! normalized by dedust's base layer, gives byte for byte what `dedust normalize --no-base` gives
//! with [`Export::rules`]; a rule that a format cannot express is skipped, never approximated
//! (the one exception, Scrapy's host patterns that also cover subdomains, is stated in
//! [`Export::notes`]). A rule that drops a page number or an offset whatever its value
//! ([`crate::judge::ordinal_drops`]) goes to no crawler format: fetched as a rewrite it would
//! keep page 2 from ever being fetched; `dedust normalize` still uses it as a dedup key.
//!
//! Semantics bridged: dedust applies the rules in file order, passes to a fixed point (at most
//! [`MAX_ROUNDS`] passes). Nutch does the same with `urlnormalizer.loop.count` = [`MAX_ROUNDS`];
//! StormCrawler and Heritrix make one pass, so their export lists the rules
//! [`ExportOptions::passes`] times (a pass that changes nothing changes nothing the next time,
//! so extra copies are harmless). Learned rules use their whole-URL regex form
//! ([`crate::render`]); imported Nutch rules are `replaceAll` rules and go only to formats that
//! apply rules that way (Nutch, StormCrawler, `regex-tsv`).
//!
//! The Nutch and Heritrix files (and Heritrix's URL filter) are XML written by `quick-xml`'s
//! writer, well-formed whatever a rule's paths and names hold: regexes and replacements go only
//! into escaped element text and attribute values; the comments show the readable patterns with
//! hyphen runs spaced out (`---` → `- - -`, never `--` nor a final `-`); a regex character XML
//! 1.0 cannot carry (a C0 control but tab, newline and carriage return; U+FFFE, U+FFFF) is
//! written as its Java escape (`\x01`), which matches the same character; a rule whose
//! replacement holds one is skipped for these formats (a Java replacement string has no escape
//! for it), with the reason.

use crate::model::{Rule, RuleKind, ValOut};
use crate::normalize::MAX_ROUNDS;
use crate::render::{regex_form, regex_form_on_hosts};
use crate::rulefile::BaseSettings;
use crate::xml::{self, Xml};
use std::borrow::Cow;

/// Target of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Nutch urlnormalizer-regex `regex-normalize.xml`.
    Nutch,
    /// StormCrawler `urlfilters.json` fragment with an inline `RegexURLNormalizer`.
    StormCrawler,
    /// Heritrix `crawler-beans.cxml` fragment: `RulesCanonicalizationPolicy` with `RegexRule`s.
    Heritrix,
    /// Rules JSON for scrapy's duplicate-url-discarder (`queryRemoval` rules only).
    Scrapy,
    /// `id, mode, regex, replacement, kind, pattern, target` as tab-separated lines.
    RegexTsv,
    /// The native dedust rule file.
    Json,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 6] = [
        Format::Nutch,
        Format::StormCrawler,
        Format::Heritrix,
        Format::Scrapy,
        Format::RegexTsv,
        Format::Json,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Nutch => "nutch",
            Format::StormCrawler => "stormcrawler",
            Format::Heritrix => "heritrix",
            Format::Scrapy => "scrapy",
            Format::RegexTsv => "regex-tsv",
            Format::Json => "json",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        Ok(match s {
            "nutch" => Format::Nutch,
            "stormcrawler" => Format::StormCrawler,
            "heritrix" => Format::Heritrix,
            "scrapy" => Format::Scrapy,
            "regex-tsv" => Format::RegexTsv,
            "json" => Format::Json,
            _ => {
                return Err(format!(
                    "unknown format {s:?} (nutch, stormcrawler, heritrix, scrapy, regex-tsv, json)"
                ))
            }
        })
    }
}

/// Export settings.
#[derive(Debug, Clone, Copy)]
pub struct ExportOptions {
    /// How many times single-pass crawlers (StormCrawler, Heritrix) get the rule list.
    pub passes: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions { passes: MAX_ROUNDS }
    }
}

/// A rule left out of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// Rule id.
    pub id: String,
    /// Readable pattern.
    pub pattern: String,
    /// Why the format cannot express it.
    pub reason: String,
}

/// The result of [`export`].
#[derive(Debug, Clone)]
pub struct Export {
    /// The configuration text.
    pub text: String,
    /// The rules the configuration holds, in order (each once).
    pub rules: Vec<Rule>,
    /// Rules left out.
    pub skipped: Vec<Skipped>,
    /// What the user must set or know (printed on stderr by the CLI).
    pub notes: Vec<String>,
    /// Many → one rules (varying ids sent to one fixed page: a login wall, a soft 404) left out
    /// of the rewrites: fetching such a URL only brings that page again, and rewriting it would
    /// fetch an unrelated real page instead. They become URL filters ([`Export::filter_text`]).
    pub filters: Vec<Filter>,
    /// The filters in the crawler's own URL-filter format (Nutch and StormCrawler
    /// `regex-urlfilter` lines, a Heritrix reject rule); `None` when there are none or the
    /// format has no URL filter.
    pub filter_text: Option<String>,
}

/// A many → one rule exported as a URL filter: URLs its regex matches are not fetched.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// Rule id.
    pub id: String,
    /// Readable pattern and target.
    pub describe: String,
    /// The rule's whole-URL regex (the same as its rewrite would use).
    pub regex: String,
}

/// How a rule is applied by a regex-based crawler.
#[derive(Debug, Clone, PartialEq)]
struct RegexRule<'a> {
    rule: &'a Rule,
    /// What the regex does as dedust rules: the rule itself, or for a cross-host rule one
    /// host-scoped copy per attested host ([`on_host`]).
    emitted: Vec<Rule>,
    /// The Java regex; for an XML target, as the file writes it ([`xml_ready`]).
    regex: String,
    replacement: String,
    /// `true`: anchored whole-URL form; `false`: an imported `replaceAll` rule.
    whole: bool,
}

/// Why a cross-host rule is not exported.
fn global_reason(r: &Rule) -> String {
    let mut s = "a cross-host dedup-key rule (scope *): `dedust normalize` uses it for the already-seen check".to_string();
    if matches!(r.convention, Some(dedust_core::Convention::LowerPath(_))) {
        s.push_str("; it lower-cases the path, which a regex replacement cannot do");
    } else if r.attested.is_empty() {
        s.push_str("; it becomes a fetch rewrite only on hosts whose own URLs attest its output, and there is none");
    } else {
        s.push_str(&format!(
            "; its output is attested on {} hosts (the rule's `attested`), but this format cannot express it there",
            r.attested.len()
        ));
    }
    s
}

/// A cross-host rule as a rule of host `h` only: the same rewrite, scope `h` (what a cross-host
/// rule exported on its attested hosts does, as dedust rules).
fn on_host(r: &Rule, h: &str) -> Rule {
    let mut c = r.clone();
    c.source.host = h.to_string();
    c.scope = h.to_string();
    c.except.clear();
    c.supporting.clear();
    c.attested.clear();
    c.sites = None;
    crate::render::describe(&mut c);
    c
}

/// Most hosts in one exported regex of a cross-host rule (more become further regexes).
const HOSTS_PER_REGEX: usize = 256;

/// The hosts a cross-host rule is exported on: its attested hosts (see [`Rule::attested`]).
fn export_hosts(r: &Rule) -> Vec<String> {
    let mut h = r.attested.clone();
    h.sort_unstable();
    h.dedup();
    h
}

/// Why a learned rule has no regex form (for the skip message).
fn no_regex_reason(r: &Rule, base: &BaseSettings) -> String {
    if r.is_global() {
        return global_reason(r);
    }
    let s = &r.source;
    if base.keep_query_order && (!s.required.is_empty() || !s.optional.is_empty()) {
        return "matches parameters, which a regex can do only in a sorted query (the rules were learned with --keep-query-order)".into();
    }
    if s.rest && s.optional.len() > 1 {
        return "drops several parameters while keeping the others".into();
    }
    // The regex spells out every order of the required parameters (any query order).
    let kept = s
        .required
        .len()
        .saturating_sub(usize::from(s.rest && s.optional.is_empty()));
    if kept > 3 {
        return "needs more than three parameters in any order: a regex spelling out every order would be too long".into();
    }
    if s.rest && (!s.required.is_empty() || !s.optional.is_empty()) {
        return "rewrites the query while keeping unknown parameters".into();
    }
    if r.output
        .query
        .as_ref()
        .is_some_and(|q| q.iter().any(|(_, v)| matches!(v, ValOut::Seg(_))))
    {
        return "moves a path segment whose pattern is not captured".into();
    }
    "no regex in the subset Java and Rust read alike (a literal with `$` or `\\`, a value moved with its `=`, or every order of its parameters over 32 KB)".into()
}

fn regex_rules<'a>(
    rules: &'a [Rule],
    base: &BaseSettings,
    whole_only: bool,
    skipped: &mut Vec<Skipped>,
    mut filters: Option<&mut Vec<Filter>>,
) -> Vec<RegexRule<'a>> {
    let mut out = Vec::new();
    for r in rules {
        let skip = |reason: String| Skipped {
            id: r.id.clone(),
            pattern: r.pattern.clone(),
            reason,
        };
        if r.kind == RuleKind::Regex {
            if whole_only {
                skipped.push(skip(
                    "an imported replaceAll rule; this format applies a rule only to a whole-URL match"
                        .into(),
                ));
                continue;
            }
            out.push(RegexRule {
                rule: r,
                emitted: vec![r.clone()],
                regex: r.regex.clone().unwrap_or_default(),
                replacement: r.replacement.clone().unwrap_or_default(),
                whole: false,
            });
            continue;
        }
        // A page number or an offset dropped: the crawler would never fetch page 2.
        let ordinal = crate::judge::ordinal_drops(r);
        if filters.is_some() && !ordinal.is_empty() {
            skipped.push(skip(format!(
                "drops a page number or an offset (`{}`): a dedup key for `dedust normalize`, never a rewrite a crawler fetches (it would never fetch page 2)",
                ordinal.join("`, `")
            )));
            continue;
        }
        let has_params = !r.source.required.is_empty() || !r.source.optional.is_empty();
        if base.keep_query_order && has_params {
            skipped.push(skip(no_regex_reason(r, base)));
            continue;
        }
        if r.is_global() {
            // A fetch rewrite only on the hosts that attest its output; a dedup key elsewhere.
            // At most HOSTS_PER_REGEX hosts in one alternation (Java tries them one by one).
            let hosts = export_hosts(r);
            let forms: Option<Vec<(String, String)>> = hosts
                .chunks(HOSTS_PER_REGEX)
                .map(|hs| regex_form_on_hosts(r, hs))
                .collect();
            match forms {
                Some(forms) if !forms.is_empty() => {
                    for ((regex, replacement), hs) in
                        forms.into_iter().zip(hosts.chunks(HOSTS_PER_REGEX))
                    {
                        out.push(RegexRule {
                            rule: r,
                            emitted: hs.iter().map(|h| on_host(r, h)).collect(),
                            regex,
                            replacement,
                            whole: true,
                        });
                    }
                }
                _ if hosts.is_empty()
                    || matches!(r.convention, Some(dedust_core::Convention::LowerPath(_))) =>
                {
                    skipped.push(skip(global_reason(r)))
                }
                _ => skipped.push(skip(format!(
                    "{}: {}",
                    global_reason(r),
                    no_regex_reason(&on_host(r, &hosts[0]), base)
                ))),
            }
            continue;
        }
        match regex_form(r) {
            Some((regex, _)) if filters.is_some() && crate::judge::is_fixed_collapse(r) => {
                if let Some(f) = filters.as_deref_mut() {
                    f.push(Filter {
                        id: r.id.clone(),
                        describe: describe(r),
                        regex,
                    });
                }
            }
            Some((regex, replacement)) => out.push(RegexRule {
                rule: r,
                emitted: vec![r.clone()],
                regex,
                replacement,
                whole: true,
            }),
            None => skipped.push(skip(no_regex_reason(r, base))),
        }
    }
    out
}

/// The regexes an XML file can hold, each with its regex as that file writes it
/// ([`xml::java_regex`]: a character XML 1.0 cannot carry spelled as its escape, same meaning).
/// A rule any of whose regexes XML cannot carry (a replacement holding such a character: a Java
/// replacement string has no escape for it) is skipped whole, with the reason.
fn xml_ready<'a>(rs: Vec<RegexRule<'a>>, skipped: &mut Vec<Skipped>) -> Vec<RegexRule<'a>> {
    let forms: Vec<Result<String, String>> = rs
        .iter()
        .map(|r| {
            let regex = xml::java_regex(&r.regex).map_err(|c| {
                format!(
                    "its regex holds {}, which XML 1.0 cannot carry, and may switch on free-spacing mode (?x), where its escape would match differently",
                    char_name(c)
                )
            })?;
            match r.replacement.chars().find(|&c| !xml::is_xml_char(c)) {
                Some(c) => Err(format!(
                    "its replacement holds {}, which XML 1.0 cannot carry (not even as a character reference) and a Java replacement string cannot escape",
                    char_name(c)
                )),
                None => Ok(regex.into_owned()),
            }
        })
        .collect();
    let mut bad: Vec<&Rule> = Vec::new();
    for (r, f) in rs.iter().zip(&forms) {
        if let Err(reason) = f {
            if !bad.iter().any(|b| std::ptr::eq(*b, r.rule)) {
                bad.push(r.rule);
                skipped.push(Skipped {
                    id: r.rule.id.clone(),
                    pattern: r.rule.pattern.clone(),
                    reason: reason.clone(),
                });
            }
        }
    }
    rs.into_iter()
        .zip(forms)
        .filter(|(r, _)| !bad.iter().any(|b| std::ptr::eq(*b, r.rule)))
        .filter_map(|(r, f)| f.ok().map(|regex| RegexRule { regex, ..r }))
        .collect()
}

/// `U+0001` for a skip message.
fn char_name(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

fn describe(r: &Rule) -> String {
    let mut d = format!("{}: {} -> {}", r.id, r.pattern, r.target);
    if let (Some(s), Some(f)) = (r.support, r.fpr) {
        d.push_str(&format!(" (support {s}, fpr {f:.3})"));
    }
    if r.is_global() {
        let h = export_hosts(r);
        d.push_str(&format!(
            "; cross-host, a fetch rewrite on the {} hosts whose URLs attest its output: {}",
            h.len(),
            h.join(" ")
        ));
    }
    d
}

/// The dedust rules an export's regexes stand for, in order.
fn emitted(rs: &[RegexRule]) -> Vec<Rule> {
    rs.iter().flat_map(|r| r.emitted.iter().cloned()).collect()
}

/// Export `rules` (learned with the base settings `base`) to `format`.
///
/// ```
/// use dedust_interop::{export, ExportFormat, ExportOptions};
/// let r = dedust_core::regex_rule("&{2,}", "&", "x").unwrap();
/// let e = export(&[r], &Default::default(), ExportFormat::Nutch, &ExportOptions::default());
/// assert!(e.text.contains("<pattern>&amp;{2,}</pattern>"));
/// assert!(e.skipped.is_empty());
/// ```
pub fn export(rules: &[Rule], base: &BaseSettings, format: Format, opts: &ExportOptions) -> Export {
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let mut filters = Vec::new();
    let passes = opts.passes.max(1);
    let header = format!(
        "Generated by dedust {} from {} rules. The rules expect URLs normalized by dedust's base layer \
         (lower-case scheme and host, no default port{}); query parameters may come in any order.",
        env!("CARGO_PKG_VERSION"),
        rules.len(),
        if base.keep_fragment { "" } else { ", no fragment" }
    );
    let (text, kept): (String, Vec<Rule>) = match format {
        Format::Json => {
            let f = crate::rulefile::RuleFile::new(rules.to_vec(), *base, None);
            (f.to_json(), rules.to_vec())
        }
        Format::Nutch => {
            let rs = regex_rules(rules, base, false, &mut skipped, Some(&mut filters));
            let rs = xml_ready(rs, &mut skipped);
            let mut x = Xml::new();
            x.decl();
            x.layout("\n");
            x.comment(&format!(
                "\n  {header}\n  Apply with Nutch's urlnormalizer-regex; in nutch-site.xml set:\n{}",
                nutch_site(true)
            ));
            x.layout("\n");
            x.start("regex-normalize", &[]);
            x.layout("\n");
            for r in &rs {
                x.comment(&format!(" {} ", describe(r.rule)));
                x.layout("\n");
                x.start("regex", &[]);
                x.layout("\n  ");
                x.element("pattern", &r.regex);
                x.layout("\n  ");
                x.element("substitution", &r.replacement);
                x.layout("\n");
                x.end("regex");
                x.layout("\n");
            }
            x.end("regex-normalize");
            x.layout("\n");
            let t = x.finish();
            notes.push(format!(
                "set in nutch-site.xml (also in the file's header comment):\n{}",
                nutch_site(false)
            ));
            (t, emitted(&rs))
        }
        Format::StormCrawler => {
            let rs = regex_rules(rules, base, false, &mut skipped, Some(&mut filters));
            let mut items = Vec::new();
            for _ in 0..passes {
                for r in &rs {
                    items.push(format!(
                        "          {{ \"pattern\": {}, \"substitution\": {} }}",
                        json_str(&r.regex),
                        json_str(&r.replacement)
                    ));
                }
            }
            let t = format!(
                "{{\n  \"_comment\": {},\n  \"org.apache.stormcrawler.filtering.URLFilters\": [\n    {{\n      \"class\": \"org.apache.stormcrawler.filtering.regex.RegexURLNormalizer\",\n      \"name\": \"DedustRegexURLNormalizer\",\n      \"params\": {{\n        \"urlNormalizers\": [\n{}\n        ]\n      }}\n    }}\n  ]\n}}\n",
                json_str(&format!(
                    "{header} {} rules listed {passes} times: StormCrawler makes one pass, dedust passes to a fixed point.",
                    rs.len()
                )),
                items.join(",\n")
            );
            notes.push(format!(
                "merge the RegexURLNormalizer entry into your urlfilters.json (StormCrawler < 3.0: package com.digitalpebble.stormcrawler); the {} rules are listed {passes} times because StormCrawler applies the list once (--passes)",
                rs.len()
            ));
            (t, emitted(&rs))
        }
        Format::Heritrix => {
            let rs = regex_rules(rules, base, true, &mut skipped, Some(&mut filters));
            let rs = xml_ready(rs, &mut skipped);
            // The filters too (learned whole-URL regexes: their escapes never fail).
            filters.retain(|f| {
                let Err(c) = xml::java_regex(&f.regex) else {
                    return true;
                };
                skipped.push(Skipped {
                    id: f.id.clone(),
                    pattern: rules
                        .iter()
                        .find(|r| r.id == f.id)
                        .map_or_else(|| f.describe.clone(), |r| r.pattern.clone()),
                    reason: format!(
                        "its URL-filter regex holds {}, which XML 1.0 cannot carry, and may switch on free-spacing mode (?x)",
                        char_name(c)
                    ),
                });
                false
            });
            let mut x = Xml::new();
            x.comment(&format!(
                " {header} {} rules listed {passes} times: Heritrix applies the list once, dedust passes to a fixed point.\n     Use as the canonicalizationPolicy of crawler-beans.cxml (or reference it from the candidate\n     processors); it replaces Heritrix's default canonicalization rules. ",
                rs.len()
            ));
            x.layout("\n");
            x.start(
                "bean",
                &[
                    ("id", "canonicalizationPolicy"),
                    (
                        "class",
                        "org.archive.modules.canonicalize.RulesCanonicalizationPolicy",
                    ),
                ],
            );
            x.layout("\n  ");
            x.start("property", &[("name", "rules")]);
            x.layout("\n    ");
            x.start("list", &[]);
            x.layout("\n");
            for pass in 0..passes {
                for r in &rs {
                    if pass == 0 {
                        x.layout("      ");
                        x.comment(&format!(" {} ", describe(r.rule)));
                        x.layout("\n");
                    }
                    x.layout("      ");
                    x.start(
                        "bean",
                        &[("class", "org.archive.modules.canonicalize.RegexRule")],
                    );
                    x.layout("\n        ");
                    x.empty("property", &[("name", "regex"), ("value", &r.regex)]);
                    x.layout("\n        ");
                    x.empty("property", &[("name", "format"), ("value", &r.replacement)]);
                    x.layout("\n      ");
                    x.end("bean");
                    x.layout("\n");
                }
            }
            x.layout("    ");
            x.end("list");
            x.layout("\n  ");
            x.end("property");
            x.layout("\n");
            x.end("bean");
            x.layout("\n");
            (x.finish(), emitted(&rs))
        }
        Format::RegexTsv => {
            let rs = regex_rules(rules, base, false, &mut skipped, None);
            let mut t = String::from("id\tmode\tregex\treplacement\tkind\tpattern\ttarget\n");
            for r in &rs {
                let kind = serde_json::to_value(r.rule.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let cells = [
                    r.rule.id.as_str(),
                    if r.whole { "whole" } else { "replace-all" },
                    &r.regex,
                    &r.replacement,
                    &kind,
                    &r.rule.pattern,
                    &r.rule.target,
                ];
                t.push_str(&cells.map(|c| c.replace(['\t', '\n'], " ")).join("\t"));
                t.push('\n');
            }
            (t, emitted(&rs))
        }
        Format::Scrapy => {
            let mut items = Vec::new();
            let mut kept = Vec::new();
            for r in rules {
                let s = &r.source;
                let plain_drop = r.kind == RuleKind::Drop
                    && s.required.is_empty()
                    && s.optional.len() == 1
                    && s.path.is_none()
                    && s.scheme.is_none()
                    && s.rest;
                // A cross-host drop goes to the hosts that attest its output only.
                let hosts = if r.is_global() {
                    export_hosts(r)
                } else {
                    vec![s.host.clone()]
                };
                if !plain_drop || hosts.is_empty() {
                    skipped.push(Skipped {
                        id: r.id.clone(),
                        pattern: r.pattern.clone(),
                        reason: if r.is_global() && hosts.is_empty() {
                            global_reason(r)
                        } else {
                            "duplicate-url-discarder has no processor for it (only parameter removal without context: queryRemoval)".into()
                        },
                    });
                    continue;
                }
                items.push(format!(
                    "  {{\n    \"args\": [{}],\n    \"order\": {},\n    \"processor\": \"queryRemoval\",\n    \"urlPattern\": {{ \"include\": [{}] }}\n  }}",
                    json_str(&s.optional[0]),
                    100 + items.len(),
                    hosts.iter().map(|h| json_str(h)).collect::<Vec<_>>().join(", ")
                ));
                if r.is_global() {
                    kept.extend(hosts.iter().map(|h| on_host(r, h)));
                } else {
                    kept.push(r.clone());
                }
            }
            if !kept.is_empty() {
                notes.push("scrapy: a url-matcher pattern `host` also matches the host's subdomains, which dedust's rules do not; parameter removal does not depend on the base layer's order".into());
            }
            (format!("[\n{}\n]\n", items.join(",\n")), kept)
        }
    };
    let filter_text = filter_text(format, &filters);
    Export {
        text,
        rules: kept,
        skipped,
        notes,
        filters,
        filter_text,
    }
}

/// The filters in `format`'s URL-filter syntax (see [`Export::filter_text`]).
fn filter_text(format: Format, filters: &[Filter]) -> Option<String> {
    if filters.is_empty() {
        return None;
    }
    match format {
        Format::Nutch | Format::StormCrawler => {
            let mut t = format!(
                "# Generated by dedust {}: many → one rules (login walls, soft 404s) as URL filters.\n# Put these lines before the final `+.` of your regex-urlfilter.txt (Nutch urlfilter-regex,\n# StormCrawler RegexURLFilter): a URL they match only brings the same page again.\n",
                env!("CARGO_PKG_VERSION")
            );
            for f in filters {
                t.push_str(&format!(
                    "# {}\n-{}\n",
                    f.describe.replace('\n', " "),
                    f.regex
                ));
            }
            Some(t)
        }
        Format::Heritrix => {
            let mut x = Xml::new();
            x.comment(&format!(
                " Generated by dedust {}: many → one rules (login walls, soft 404s) as a reject rule.\n     Add this bean to the rules of your scope's DecideRuleSequence: a URL it matches only\n     brings the same page again. ",
                env!("CARGO_PKG_VERSION")
            ));
            x.layout("\n");
            x.start(
                "bean",
                &[(
                    "class",
                    "org.archive.modules.deciderules.MatchesListRegexDecideRule",
                )],
            );
            x.layout("\n  ");
            x.empty("property", &[("name", "decision"), ("value", "REJECT")]);
            x.layout("\n  ");
            x.start("property", &[("name", "regexList")]);
            x.layout("\n    ");
            x.start("list", &[]);
            x.layout("\n");
            for f in filters {
                x.layout("      ");
                x.comment(&format!(" {} ", f.describe));
                x.layout("\n      ");
                // `export` kept only the filters whose regex has this spelling.
                let regex = xml::java_regex(&f.regex).unwrap_or(Cow::Borrowed(&f.regex));
                x.element("value", &regex);
                x.layout("\n");
            }
            x.layout("    ");
            x.end("list");
            x.layout("\n  ");
            x.end("property");
            x.layout("\n");
            x.end("bean");
            x.layout("\n");
            Some(x.finish())
        }
        _ => None,
    }
}

/// The nutch-site.xml properties an export needs: only the two to add or change. The export
/// goes to a file of its own (Nutch's `conf/regex-normalize.xml` keeps its default rules), and
/// `plugin.includes` is left to the user (Nutch's default value already holds
/// `urlnormalizer-regex`; pasting a whole value would drop their indexer or
/// `urlnormalizer-basic`). `in_xml`: for the file's header comment (no `--` in XML comments).
fn nutch_site(in_xml: bool) -> String {
    format!(
        "    <property><name>urlnormalizer.regex.file</name><value>dedust-normalize.xml</value></property>\n    <property><name>urlnormalizer.loop.count</name><value>{MAX_ROUNDS}</value></property>\n  (urlnormalizer-regex is in Nutch's default plugin.includes: keep it there if you changed that property. urlnormalizer.regex.file names one file: Nutch's own rules in regex-normalize.xml stop applying unless the export carries them{})\n",
        if in_xml {
            ""
        } else {
            " — dedust export --with-nutch-defaults conf/regex-normalize.xml"
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CapType, Piece, SegOut, Source, Target, ValPat};
    use quick_xml::events::Event;
    use quick_xml::reader::Reader;

    /// Rule text from hostile crawl data: (what it holds, the text). Each goes into a path
    /// segment, a parameter name and a replacement ([`hostile_rules`]).
    const HOSTILE: &[(&str, &str)] = &[
        ("two hyphens", "a--b"),
        ("three hyphens", "a---b"),
        ("a trailing hyphen", "a-"),
        ("a CDATA end", "x]]>y"),
        ("a less-than sign", "a<b"),
        ("an ampersand", "a&b"),
        ("quotes", "a\"b'c"),
        ("U+0001", "a\u{1}b"),
        ("U+001F", "a\u{1f}b"),
        ("a tab", "a\tb"),
        ("a carriage return", "a\rb"),
        ("U+FFFE", "a\u{FFFE}b"),
    ];

    fn lit(s: &str) -> Vec<Vec<Piece>> {
        vec![vec![Piece::Lit(s.to_string())]]
    }

    /// On h.org: drop parameter `n{t}` under path `/p{t}`; rewrite `/old{t}` to `/new{t}` (a
    /// replacement holding `t`); send `/w{t}?u={int}` to one page (a URL filter).
    fn hostile_rules(t: &str) -> Vec<Rule> {
        let src = |path: &str, rest: bool| Source {
            scheme: None,
            host: "h.org".into(),
            path: Some(lit(path)),
            required: vec![],
            optional: vec![],
            rest,
        };
        let drop = Rule::new(
            RuleKind::Drop,
            Source {
                optional: vec![format!("n{t}")],
                ..src(&format!("p{t}"), true)
            },
            Target {
                query: Some(vec![]),
                ..Target::unchanged()
            },
        );
        let moved = Rule::new(
            RuleKind::Template,
            src(&format!("old{t}"), false),
            Target {
                path: Some(vec![SegOut::Lit(format!("new{t}"))]),
                ..Target::unchanged()
            },
        );
        let wall = Rule::new(
            RuleKind::Template,
            Source {
                required: vec![("u".into(), ValPat::Pieces(vec![Piece::Cap(CapType::Int)]))],
                ..src(&format!("w{t}"), false)
            },
            Target {
                path: Some(vec![SegOut::Lit("wall".into())]),
                query: Some(vec![]),
                ..Target::unchanged()
            },
        );
        vec![drop, moved, wall]
    }

    /// The regexes and replacements of a Nutch or Heritrix XML file, read back by quick-xml's
    /// reader, which fails on malformed markup and on `--` in a comment; every character, raw
    /// or referenced, is one XML 1.0 can carry.
    fn read_back(doc: &str) -> Vec<String> {
        assert!(
            doc.chars().all(xml::is_xml_char),
            "a raw character XML cannot carry: {doc:?}"
        );
        let mut r = Reader::from_str(doc);
        r.config_mut().check_comments = true;
        let mut out = Vec::new();
        let mut text: Option<String> = None;
        loop {
            match r.read_event().unwrap_or_else(|e| panic!("{e}: {doc}")) {
                Event::Eof => break,
                Event::Start(e)
                    if ["pattern", "substitution", "value"].contains(&e.name().as_ref()) =>
                {
                    text = Some(String::new())
                }
                Event::Text(e) => {
                    if let Some(t) = text.as_mut() {
                        t.push_str(&e.xml10_content());
                    }
                }
                Event::GeneralRef(e) => {
                    let c = match e.resolve_char_ref().unwrap() {
                        Some(c) => c.to_string(),
                        None => quick_xml::escape::resolve_predefined_entity(&e)
                            .unwrap_or_else(|| panic!("entity {:?}", &*e))
                            .to_string(),
                    };
                    assert!(c.chars().all(xml::is_xml_char), "&{};", &*e);
                    if let Some(t) = text.as_mut() {
                        t.push_str(&c);
                    }
                }
                Event::End(_) => out.extend(text.take()),
                Event::Empty(e) => {
                    let attr = |k: &str| {
                        e.try_get_attribute(k).unwrap().map(|a| {
                            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                                .unwrap()
                                .into_owned()
                        })
                    };
                    if let (Some(name), Some(v)) = (attr("name"), attr("value")) {
                        if name == "regex" || name == "format" {
                            out.push(v);
                        }
                    }
                }
                Event::Comment(c) => {
                    let c: &str = &c;
                    assert!(!c.contains("--") && !c.ends_with('-'), "{c:?}");
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn xml_exports_are_well_formed_whatever_the_rule_text() {
        let opts = ExportOptions { passes: 1 };
        let base = BaseSettings::default();
        for (what, t) in HOSTILE {
            let rules = hostile_rules(t);
            let json = export(&rules, &base, Format::StormCrawler, &opts);
            // A JSON export holds every rule (a regex needs ASCII parameter names).
            assert_eq!(
                json.skipped.len(),
                usize::from(!t.is_ascii()),
                "{what}: {:?}",
                json.skipped
            );
            // The replacement `/new{t}` is written raw: XML can hold it only if it holds `t`.
            let xml_skips = usize::from(!xml::is_xml_text(t));
            for format in [Format::Nutch, Format::Heritrix] {
                let e = export(&rules, &base, format, &opts);
                assert_eq!(
                    e.skipped.len(),
                    json.skipped.len() + xml_skips,
                    "{what} as {format:?}: {:?}",
                    e.skipped
                );
                assert!(
                    e.skipped
                        .iter()
                        .skip(json.skipped.len())
                        .all(|s| s.reason.contains("XML 1.0")),
                    "{what}: {:?}",
                    e.skipped
                );
                // Each regex as written, read back: the rule's regex with the characters XML
                // cannot carry spelled as escapes; each means what the rule's regex meant.
                let back = read_back(&e.text);
                assert_eq!(back.len(), 2 * e.rules.len(), "{what} as {format:?}");
                for (r, pair) in e.rules.iter().zip(back.chunks(2)) {
                    let (regex, rep) = (
                        r.regex.as_deref().unwrap(),
                        r.replacement.as_deref().unwrap(),
                    );
                    assert_eq!(pair[0], xml::java_regex(regex).unwrap(), "{what}");
                    assert_eq!(pair[1], rep, "{what}");
                    let (was, now) = (
                        crate::javaregex::JavaRegex::new(regex, rep).unwrap(),
                        crate::javaregex::JavaRegex::new(&pair[0], rep).unwrap(),
                    );
                    for path in ["p", "old", "w", "n"] {
                        for u in [
                            format!("https://h.org/{path}{t}"),
                            format!("https://h.org/{path}{t}?n{t}=1&u=2"),
                            format!("https://h.org/p{t}?a=1&n{t}&z"),
                            format!("https://h.org/{path}?n{t}"),
                        ] {
                            assert_eq!(was.replace_all(&u), now.replace_all(&u), "{what}: {u:?}");
                        }
                    }
                }
                // The many → one rule is a URL filter; Heritrix writes filters as XML too.
                assert_eq!(e.filters.len(), 1, "{what}");
                if format == Format::Heritrix {
                    let back = read_back(e.filter_text.as_deref().unwrap());
                    let want = xml::java_regex(&e.filters[0].regex).unwrap();
                    assert_eq!(back, [want.into_owned()], "{what}");
                }
            }
        }
    }
}
