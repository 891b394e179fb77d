//! Export: rule files for the crawlers users already run.
//!
//! In: rules in application order (one or several dedust rule files) and a target [`Format`].
//! Out: an [`Export`]: the text of the crawler's configuration, the rules it holds (as a dedust
//! rule list, so `dedust normalize` can run exactly what the crawler runs), and every rule left
//! out with the reason. Invariant: the exported configuration, run by the crawler on URLs
//! normalized by dedust's base layer, gives byte for byte what `dedust normalize --no-base` gives
//! with [`Export::rules`]; a rule that a format cannot express is skipped, never approximated
//! (the one exception, Scrapy's host patterns that also cover subdomains, is stated in
//! [`Export::notes`]).
//!
//! Semantics bridged: dedust applies the rules in file order, passes to a fixed point (at most
//! [`MAX_ROUNDS`] passes). Nutch does the same with `urlnormalizer.loop.count` = [`MAX_ROUNDS`];
//! StormCrawler and Heritrix make one pass, so their export lists the rules
//! [`ExportOptions::passes`] times (a pass that changes nothing changes nothing the next time,
//! so extra copies are harmless). Learned rules use their whole-URL regex form
//! ([`crate::render`]); imported Nutch rules are `replaceAll` rules and go only to formats that
//! apply rules that way (Nutch, StormCrawler, `regex-tsv`).

use crate::model::{Rule, RuleKind, ValOut};
use crate::normalize::MAX_ROUNDS;
use crate::render::{regex_form, regex_form_on_hosts};
use crate::rulefile::BaseSettings;

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

/// Escape text for XML content and attribute values.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Text safe inside an XML comment.
fn comment(s: &str) -> String {
    s.replace("--", "- -")
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
            let mut t = String::from("<?xml version=\"1.0\"?>\n<!--\n  ");
            t.push_str(&comment(&header));
            t.push_str(&format!(
                "\n  Apply with Nutch's urlnormalizer-regex; in nutch-site.xml set:\n{}-->\n<regex-normalize>\n",
                comment(&nutch_site(true))
            ));
            for r in &rs {
                t.push_str(&format!(
                    "<!-- {} -->\n<regex>\n  <pattern>{}</pattern>\n  <substitution>{}</substitution>\n</regex>\n",
                    comment(&describe(r.rule)),
                    xml(&r.regex),
                    xml(&r.replacement)
                ));
            }
            t.push_str("</regex-normalize>\n");
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
            let mut t = format!(
                "<!-- {} {} rules listed {passes} times: Heritrix applies the list once, dedust passes to a fixed point.\n     Use as the canonicalizationPolicy of crawler-beans.cxml (or reference it from the candidate\n     processors); it replaces Heritrix's default canonicalization rules. -->\n<bean id=\"canonicalizationPolicy\" class=\"org.archive.modules.canonicalize.RulesCanonicalizationPolicy\">\n  <property name=\"rules\">\n    <list>\n",
                comment(&header),
                rs.len()
            );
            for pass in 0..passes {
                for r in &rs {
                    if pass == 0 {
                        t.push_str(&format!("      <!-- {} -->\n", comment(&describe(r.rule))));
                    }
                    t.push_str(&format!(
                        "      <bean class=\"org.archive.modules.canonicalize.RegexRule\">\n        <property name=\"regex\" value=\"{}\"/>\n        <property name=\"format\" value=\"{}\"/>\n      </bean>\n",
                        xml(&r.regex),
                        xml(&r.replacement)
                    ));
                }
            }
            t.push_str("    </list>\n  </property>\n</bean>\n");
            (t, emitted(&rs))
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
            let mut t = format!(
                "<!-- Generated by dedust {}: many → one rules (login walls, soft 404s) as a reject rule.\n     Add this bean to the rules of your scope's DecideRuleSequence: a URL it matches only\n     brings the same page again. -->\n<bean class=\"org.archive.modules.deciderules.MatchesListRegexDecideRule\">\n  <property name=\"decision\" value=\"REJECT\"/>\n  <property name=\"regexList\">\n    <list>\n",
                env!("CARGO_PKG_VERSION")
            );
            for f in filters {
                t.push_str(&format!(
                    "      <!-- {} -->\n      <value>{}</value>\n",
                    comment(&f.describe),
                    xml(&f.regex)
                ));
            }
            t.push_str("    </list>\n  </property>\n</bean>\n");
            Some(t)
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
