//! Lists: hand-kept URL-cleaning lists, and the `Clean-param:` lines of a site's robots.txt,
//! into dedust rules, so that `dedust validate` (or `learn`, for robots.txt records in a crawl)
//! can measure each entry on labelled URLs before it is shipped.
//!
//! In: the JSON text of a ClearURLs rule list (`data.min.json`: providers with a `urlPattern`,
//! parameter-name regexes in `rules` and `referralMarketing`, `rawRules`, `exceptions`), of a
//! Scrapy duplicate-url-discarder rule file (a list of `{processor, args, urlPattern: {include,
//! exclude}}`), or of a robots.txt (its `Clean-param:` lines, with the URL it came from). Out: a
//! [`ListImport`]: [`Rule`]s of kind [`RuleKind::Regex`](crate::model::RuleKind::Regex) (Java regexes: the Nutch, StormCrawler
//! and regex-tsv exports carry them), one per provider and parameter pattern (ClearURLs), per
//! entry and parameter (DUD) or per line and parameter (robots.txt, scoped to its host), in list
//! order, each once, and the entries that have no rule, each with the reason
//! (`completeProvider` blocks whole URLs; a `redirections` target must be URL-decoded; a DUD
//! `normalizer` is dedust's base layer).
//!
//! Invariants: every rule compiles ([`dedust_core::regex_rule`]); a parameter rule matches only on URLs
//! its entry's URL pattern accepts and none of its exceptions does, matches whole parameter names
//! (`qid` never removes `qids=`), and removes a run of adjacent matching parameters per
//! application with its separator (`?a=1&utm_source=x&b=2` → `?a=1&b=2`, `?utm_source=x` → no
//! `?` left): the engine's passes remove later runs (at most [`crate::normalize::MAX_ROUNDS`]
//! per URL). ClearURLs matches names case-insensitively, as its extension does; DUD and
//! robots.txt names exactly. A robots.txt gives at most [`MAX_ROBOTS_RULES`] rules.

use crate::error::{Error, Result};
use crate::import::regex_rule;
use crate::model::Rule;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What a list import produced.
#[derive(Debug, Clone, Default)]
pub struct ListImport {
    /// One rule per list entry and parameter pattern, in list order.
    pub rules: Vec<Rule>,
    /// `(entry, reason)` for the list entries that gave no rule.
    pub skipped: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct ClearUrls {
    providers: serde_json::Map<String, serde_json::Value>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Provider {
    url_pattern: String,
    complete_provider: bool,
    rules: Vec<String>,
    referral_marketing: Vec<String>,
    raw_rules: Vec<String>,
    exceptions: Vec<String>,
    redirections: Vec<String>,
}

/// The regex alternatives that remove one query parameter whose whole name matches `name` (a
/// regex), on URLs that pass the look-aheads `cond` (anchored at the start): the whole query
/// with its `?` when every parameter matches, else the first run of matching parameters with
/// the `&` after it (at the start of the query) or before it. Replacement: `${dda}${ddb}${ddc}` (Java appends nothing for a group that did not
/// take part; the groups are named because the list's own patterns may hold groups).
fn param_pattern(cond: &str, name: &str) -> String {
    let p = format!("(?:{name})(?:=[^&#]*)?");
    // Each alternative takes a run of adjacent matching parameters (the base layer sorts the
    // query, so `utm_campaign`, `utm_medium`, `utm_source` are one run, removed in one pass).
    format!(
        "^{cond}(?:(?<ddb>[^?#]*)\\?{p}(?:&{p})*(?=#|$)|(?<dda>[^?#]*\\?){p}(?:&{p})*&|(?<ddc>[^?#]*\\?[^#]*?)(?:&{p})+(?=[&#]|$))"
    )
}

/// A parameter rule; its readable pattern names its origin (`list#entry: name`).
fn param_rule(cond: &str, name: &str, origin: &str) -> Result<Rule> {
    named(
        regex_rule(&param_pattern(cond, name), "${dda}${ddb}${ddc}", origin)?,
        origin,
    )
}

/// `rule` with its origin (less the directories of a list file's path) as the readable
/// pattern (`validate` and `--explain` print it; the engine and the exports use the regex).
fn named(mut rule: Rule, origin: &str) -> Result<Rule> {
    let short = match origin.split_once('#') {
        Some((file, _)) => file.rfind('/').map_or(0, |i| i + 1),
        None => 0,
    };
    rule.pattern = format!("[{}]", &origin[short..]);
    Ok(rule)
}

impl ListImport {
    /// Add `rule` unless an identical one (same id: same regex and replacement) is in.
    fn push(&mut self, rule: Rule) {
        if !self.rules.iter().any(|r| r.id == rule.id) {
            self.rules.push(rule);
        }
    }
}

/// Look-aheads for a ClearURLs provider: its `urlPattern` found in the URL (the extension tests
/// it unanchored, case-insensitively) and none of its `exceptions`.
fn clearurls_cond(p: &Provider) -> String {
    let mut cond = String::new();
    if !matches!(p.url_pattern.as_str(), ".*" | "" | "^.*") {
        cond.push_str(&format!("(?=(?i:.*?(?:{})))", p.url_pattern));
    }
    for e in &p.exceptions {
        cond.push_str(&format!("(?!(?i:.*?(?:{e})))"));
    }
    cond
}

/// Read a ClearURLs rule list (`data.min.json`) into rules; `path` is used in messages.
///
/// Each provider's `rules` and `referralMarketing` entries become one parameter rule each,
/// its `rawRules` one rule each that deletes the match (first match per pass); a
/// `completeProvider` (a blocked site) and `redirections` (their target needs URL-decoding) are
/// listed in [`ListImport::skipped`]. A pattern no engine here can run is an error naming the
/// provider.
///
/// ```
/// let json = r#"{"providers": {"globalRules": {"urlPattern": ".*", "rules": ["utm(?:_[a-z_]*)?"],
///     "exceptions": ["^https?://keep\\.example/"]}}}"#;
/// let out = dedust_interop::lists::import_clearurls(json, "data.json").unwrap();
/// let n = dedust_core::Normalizer::new(out.rules, None);
/// let run = |u: &str| n.apply_rules(u.to_string()).url;
/// assert_eq!(run("https://a.org/x?id=3&UTM_Source=rss&utm_medium=m"), "https://a.org/x?id=3");
/// assert_eq!(run("https://a.org/x?utm_source=rss"), "https://a.org/x");
/// assert_eq!(run("https://a.org/x?utmost=1"), "https://a.org/x?utmost=1");
/// assert_eq!(run("https://keep.example/x?utm_source=rss"), "https://keep.example/x?utm_source=rss");
/// ```
pub fn import_clearurls(text: &str, path: &str) -> Result<ListImport> {
    let err = |m: String| Error::RuleFile {
        path: path.to_string(),
        message: m,
    };
    let list: ClearUrls =
        serde_json::from_str(text).map_err(|e| err(format!("not a ClearURLs list: {e}")))?;
    let mut out = ListImport::default();
    // Providers by name: the file's object order is not kept by the JSON reader.
    let providers: BTreeMap<&String, &serde_json::Value> = list.providers.iter().collect();
    for (name, v) in providers {
        let p: Provider = serde_json::from_value(v.clone())
            .map_err(|e| err(format!("provider {name:?}: {e}")))?;
        if p.complete_provider {
            out.skipped.push((
                name.clone(),
                "completeProvider blocks whole URLs (a filter, not a normalization)".into(),
            ));
            continue;
        }
        let cond = clearurls_cond(&p);
        for r in p.rules.iter().chain(&p.referral_marketing) {
            let origin = format!("{path}#{name}: {r}");
            out.push(param_rule(&cond, &format!("(?i:{r})"), &origin)?);
        }
        for r in &p.raw_rules {
            let origin = format!("{path}#{name}: raw {r}");
            out.push(named(
                regex_rule(&format!("^(?<dda>{cond}[^#]*?)(?i:{r})"), "${dda}", &origin)?,
                &origin,
            )?);
        }
        if !p.redirections.is_empty() {
            out.skipped.push((
                name.clone(),
                format!(
                    "{} redirections (the target is URL-decoded, which a regex replacement cannot do)",
                    p.redirections.len()
                ),
            ));
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
struct DudRule {
    processor: String,
    #[serde(default)]
    args: Vec<serde_json::Value>,
    #[serde(rename = "urlPattern", default)]
    url_pattern: DudPattern,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct DudPattern {
    include: Vec<String>,
    exclude: Vec<String>,
}

/// One url-matcher pattern (`domain`, `domain/path-prefix`, `*` any text, `""` any URL) as a
/// regex from the start of the URL; `None` for forms not read here (query or scheme parts).
fn url_matcher(p: &str) -> Option<String> {
    if p.is_empty() {
        return Some(String::new());
    }
    if p.contains('?') || p.contains("://") || p.contains('#') {
        return None;
    }
    let (domain, path) = match p.find('/') {
        Some(i) => (&p[..i], &p[i..]),
        None => (p, ""),
    };
    let dom = regex::escape(domain.trim_start_matches("*.")).replace("\\*", "[^/?#@:]*");
    let path: String = path
        .split('*')
        .map(regex::escape)
        .collect::<Vec<_>>()
        .join("[^?#]*");
    // The domain and its subdomains, any port; then the path prefix (or the end of the host).
    let end = if path.is_empty() { "(?:[/?#]|$)" } else { "" };
    Some(format!(
        "[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/?#@]*\\.)?{dom}(?::[0-9]*)?{end}{path}"
    ))
}

/// The regex and replacement removing the first path segment on `domain/*/rest` includes
/// (`amazon.com/*/dp`: `/Some-Title/dp/B01` → `/dp/B01`), only where `/rest` follows it;
/// `None` for other patterns or with excludes.
fn first_segment_removal(p: &DudPattern) -> Option<(String, String)> {
    if !p.exclude.is_empty() || p.include.is_empty() {
        return None;
    }
    let alts: Vec<String> = p
        .include
        .iter()
        .map(|inc| {
            let (domain, rest) = inc.split_once("/*/")?;
            if domain.is_empty()
                || domain.contains(['*', '/', '?', '#', ':', '@'])
                || rest.contains(['*', '?', '#'])
            {
                return None;
            }
            Some(format!(
                "([a-zA-Z][a-zA-Z0-9+.-]*://(?:[^/?#@]*\\.)?{}(?::[0-9]*)?)/[^/?#]+(?=/{}(?:[/?#]|$))",
                regex::escape(domain),
                regex::escape(rest)
            ))
        })
        .collect::<Option<_>>()?;
    let replacement: String = (1..=alts.len()).map(|g| format!("${g}")).collect();
    Some((format!("^(?:{})", alts.join("|")), replacement))
}

/// Look-aheads for a DUD rule's `urlPattern`: one `include` matches, no `exclude` does.
fn dud_cond(p: &DudPattern) -> Option<String> {
    let inc: Vec<String> = p
        .include
        .iter()
        .map(|s| url_matcher(s))
        .collect::<Option<_>>()?;
    let exc: Vec<String> = p
        .exclude
        .iter()
        .map(|s| url_matcher(s))
        .collect::<Option<_>>()?;
    let mut cond = String::new();
    if !inc.iter().any(String::is_empty) && !inc.is_empty() {
        cond.push_str(&format!("(?=(?:{}))", inc.join("|")));
    }
    for e in exc {
        cond.push_str(&format!("(?!{e})"));
    }
    Some(cond)
}

/// Read a Scrapy duplicate-url-discarder rule file (a JSON list) into rules; `path` is used in
/// messages.
///
/// `queryRemoval` gives one parameter rule per named parameter (exact names); a
/// `queryRemovalExcept` without arguments one rule that removes the whole query, and a
/// `subpathRemoval` of one segment one rule that removes it, both on the URLs of the entry's
/// pattern. A `normalizer` entry (dedust's base layer does its work), a `queryRemovalExcept`
/// that keeps parameters, other processors and url-matcher patterns with a scheme or a query
/// are listed in [`ListImport::skipped`].
///
/// ```
/// let json = r#"[{"processor": "queryRemoval", "args": ["smid"],
///     "urlPattern": {"include": ["nytimes.com"]}}]"#;
/// let out = dedust_interop::lists::import_dud(json, "article.json").unwrap();
/// let n = dedust_core::Normalizer::new(out.rules, None);
/// let run = |u: &str| n.apply_rules(u.to_string()).url;
/// assert_eq!(run("https://www.nytimes.com/a?smid=tw&x=1"), "https://www.nytimes.com/a?x=1");
/// assert_eq!(run("https://nytimes.com.evil.example/a?smid=tw"), "https://nytimes.com.evil.example/a?smid=tw");
/// assert_eq!(run("https://b.org/a?smid=tw"), "https://b.org/a?smid=tw");
/// ```
pub fn import_dud(text: &str, path: &str) -> Result<ListImport> {
    let err = |m: String| Error::RuleFile {
        path: path.to_string(),
        message: m,
    };
    let list: Vec<DudRule> = serde_json::from_str(text)
        .map_err(|e| err(format!("not a duplicate-url-discarder rule list: {e}")))?;
    let mut out = ListImport::default();
    for (i, r) in list.iter().enumerate() {
        let entry = format!(
            "{path}#{i} {} {}",
            r.processor,
            r.url_pattern.include.join(",")
        );
        let skip = |out: &mut ListImport, why: &str| out.skipped.push((entry.clone(), why.into()));
        let Some(cond) = dud_cond(&r.url_pattern) else {
            skip(
                &mut out,
                "a url-matcher pattern with a scheme, query or fragment",
            );
            continue;
        };
        match (r.processor.as_str(), r.args.as_slice()) {
            ("queryRemoval", args) => {
                for a in args {
                    let Some(name) = a.as_str() else {
                        return Err(err(format!("entry {i}: parameter {a} is not a string")));
                    };
                    let origin = format!("{entry}: {name}");
                    out.push(param_rule(&cond, &regex::escape(name), &origin)?);
                }
            }
            ("queryRemovalExcept", []) => {
                let origin = format!("{entry}: whole query");
                out.push(named(
                    regex_rule(&format!("^({cond}[^?#]*)\\?[^#]*"), "$1", &origin)?,
                    &origin,
                )?);
            }
            // The first segment of `domain/*/rest` patterns, removed only where `/rest` follows
            // it, so that a second pass finds nothing more to remove.
            ("subpathRemoval", [k]) if k.as_u64() == Some(0) => {
                let Some((re, rep)) = first_segment_removal(&r.url_pattern) else {
                    skip(&mut out, "subpathRemoval outside `domain/*/path` patterns");
                    continue;
                };
                let origin = format!("{entry}: segment 0");
                out.push(named(regex_rule(&re, &rep, &origin)?, &origin)?);
            }
            ("normalizer", _) => skip(&mut out, "URL normalization: dedust's base layer"),
            _ => skip(&mut out, "processor or arguments not read here"),
        }
    }
    Ok(out)
}

/// Longest `Clean-param` line read (Yandex's limit is 500 characters).
pub const MAX_CLEAN_PARAM: usize = 500;

/// Most rules one robots.txt gives (one per parameter and prefix; each is validated on every
/// URL, so a hostile file must not be able to ask for millions).
pub const MAX_ROBOTS_RULES: usize = 100;

/// Read the `Clean-param:` lines of a robots.txt (`Clean-param: p1&p2 [/path-prefix]`, as Yandex
/// defines them) into rules scoped to the host of `robots_url`: one parameter rule per named
/// parameter, on the URLs of that host (any port, either scheme) whose path starts with the
/// prefix (`*` matches any text; no prefix: every path). A site's robots.txt speaks for its own
/// host only, so no line can reach another host's URLs. Lines longer than
/// [`MAX_CLEAN_PARAM`], with no parameter, or with characters outside the ones Yandex allows,
/// are listed in [`ListImport::skipped`] with their line number; other lines are ignored.
///
/// ```
/// let txt = "User-agent: *\nDisallow: /tmp\nClean-param: sid&ref /forum/\nclean-param: utm_source\n";
/// let out = dedust_interop::lists::import_robots(txt, "https://f.org/robots.txt").unwrap();
/// assert_eq!(out.rules.len(), 3);
/// let n = dedust_core::Normalizer::new(out.rules, None);
/// let run = |u: &str| n.apply_rules(u.to_string()).url;
/// assert_eq!(run("https://f.org/forum/t.php?sid=9&t=1"), "https://f.org/forum/t.php?t=1");
/// assert_eq!(run("https://f.org/shop/p.php?sid=9"), "https://f.org/shop/p.php?sid=9");
/// assert_eq!(run("http://f.org/shop/p.php?utm_source=x"), "http://f.org/shop/p.php");
/// assert_eq!(run("https://other.org/forum/t.php?sid=9"), "https://other.org/forum/t.php?sid=9");
/// ```
pub fn import_robots(text: &str, robots_url: &str) -> Result<ListImport> {
    let err = |m: String| Error::RuleFile {
        path: robots_url.to_string(),
        message: m,
    };
    // The host a robots.txt speaks for is the base layer's reading of its URL, and only when
    // no parser could read that URL as another host (`https://evil.org\\@victim.org/robots.txt`).
    let host = dedust_core::trusted_host(robots_url)
        .map(|h| h.host().to_string())
        .map_err(|why| {
            err(format!(
                "not the URL of one host's robots.txt ({why}): the host a robots.txt speaks for"
            ))
        })?;
    let mut out = ListImport::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !key.trim().eq_ignore_ascii_case("clean-param") {
            continue;
        }
        let entry = format!("{robots_url}:{}", n + 1);
        if line.len() > MAX_CLEAN_PARAM {
            out.skipped
                .push((entry, format!("longer than {MAX_CLEAN_PARAM} characters")));
            continue;
        }
        let mut parts = value.split_whitespace();
        let params = parts.next().unwrap_or("");
        let prefix = parts.next().unwrap_or("");
        let name_ok = |p: &str| {
            !p.is_empty()
                && p.bytes().all(|b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'[' | b']')
                })
        };
        let path_ok = prefix.is_empty()
            || (prefix.starts_with('/')
                && prefix.bytes().all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'/' | b'*' | b'_' | b'-' | b'.' | b'~' | b'%' | b'+')
                }));
        let names: Vec<&str> = params.split('&').collect();
        if !names.iter().all(|p| name_ok(p)) || !path_ok || parts.next().is_some() {
            out.skipped.push((
                entry,
                format!("not `Clean-param: p1&p2 [/prefix]`: {line:?}"),
            ));
            continue;
        }
        let path = if prefix.is_empty() {
            "(?:[/?#]|$)".to_string()
        } else {
            prefix
                .split('*')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join("[^?#]*")
        };
        let cond = format!(
            "(?=[a-zA-Z][a-zA-Z0-9+.-]*://{}(?::[0-9]*)?{path})",
            regex::escape(&host)
        );
        for name in names {
            if out.rules.len() >= MAX_ROBOTS_RULES {
                out.skipped.push((
                    entry.clone(),
                    format!("past {MAX_ROBOTS_RULES} Clean-param rules for one robots.txt"),
                ));
                break;
            }
            let origin = format!("{host} robots.txt:{} Clean-param: {name}", n + 1);
            let mut rule = param_rule(&cond, &regex::escape(name), &origin)?;
            // `--explain` and the rule file name the signal behind it; the scope is the host
            // (validation tries the rule on that host's URLs only).
            rule.signals.insert("robots".into(), 1);
            rule.scope = host.clone();
            rule.source.host = host.clone();
            out.push(rule);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rules: &[Rule], url: &str) -> String {
        dedust_core::Normalizer::new(rules.to_vec(), None)
            .apply_rules(url.to_string())
            .url
    }

    #[test]
    fn parameter_rules_table() {
        let rules = vec![param_rule("", "(?i:utm_[a-z]+|qid)", "t").unwrap()];
        // (URL, want)
        let cases = [
            ("http://a.org/p?utm_source=x", "http://a.org/p"),
            ("http://a.org/p?utm_source=x&id=1", "http://a.org/p?id=1"),
            ("http://a.org/p?id=1&utm_source=x", "http://a.org/p?id=1"),
            (
                "http://a.org/p?id=1&utm_source=x&b=2",
                "http://a.org/p?id=1&b=2",
            ),
            ("http://a.org/p?utm_a=1&utm_b=2&utm_c=3", "http://a.org/p"),
            ("http://a.org/p?qid", "http://a.org/p"),
            (
                "http://a.org/p?qids=1&xqid=2",
                "http://a.org/p?qids=1&xqid=2",
            ),
            ("http://a.org/utm_source=x", "http://a.org/utm_source=x"),
            (
                "http://a.org/p?id=1#utm_source=x",
                "http://a.org/p?id=1#utm_source=x",
            ),
            ("http://a.org/p?utm_source=x#f", "http://a.org/p#f"),
            (
                "http://a.org/p?a=1&utm_a=1&utm_b=2&z=0&utm_c=3",
                "http://a.org/p?a=1&z=0",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(run(&rules, url), want, "{url}");
        }
        // A run of matching parameters goes in one pass: far more than the engine's rounds.
        let many: String = (0..40)
            .map(|i| format!("&utm_{}=1", (b'a' + i % 26) as char))
            .collect();
        assert_eq!(
            run(&rules, &format!("http://a.org/p?id=1{many}")),
            "http://a.org/p?id=1"
        );
        assert_eq!(
            run(&rules, &format!("http://a.org/p?{}", &many[1..])),
            "http://a.org/p"
        );
    }

    #[test]
    fn url_matcher_table() {
        // (pattern, URL, matches)
        let cases = [
            ("nytimes.com", "https://www.nytimes.com/x", true),
            ("nytimes.com", "https://nytimes.com", true),
            ("nytimes.com", "https://nytimes.com.evil.org/x", false),
            ("nytimes.com", "https://evilnytimes.com/x", false),
            (
                "amazon.com/*/dp",
                "https://www.amazon.com/Some-Book/dp/123",
                true,
            ),
            ("amazon.com/*/dp", "https://www.amazon.com/gp/x", false),
            ("", "https://any.org/", true),
        ];
        for (p, url, want) in cases {
            let re = regex::Regex::new(&format!("^{}", url_matcher(p).unwrap())).unwrap();
            assert_eq!(re.is_match(url), want, "{p} {url}");
        }
        assert_eq!(url_matcher("https://a.org/"), None);
    }

    #[test]
    fn dud_processors() {
        let json = r#"[
            {"processor": "normalizer", "args": [], "urlPattern": {"include": [""]}},
            {"processor": "queryRemovalExcept", "args": [], "urlPattern": {"include": ["amazon.com/dp"]}},
            {"processor": "subpathRemoval", "args": [0], "urlPattern": {"include": ["amazon.com/*/dp"]}},
            {"processor": "queryRemovalExcept", "args": ["id"], "urlPattern": {"include": ["b.org"]}}
        ]"#;
        let out = import_dud(json, "p.json").unwrap();
        assert_eq!((out.rules.len(), out.skipped.len()), (2, 2));
        let cases = [
            (
                "https://www.amazon.com/dp/B01?tag=x&ref=y",
                "https://www.amazon.com/dp/B01",
            ),
            (
                "https://www.amazon.com/Book-Title/dp/B01",
                "https://www.amazon.com/dp/B01",
            ),
            (
                "https://www.amazon.com/gp/B01?tag=x",
                "https://www.amazon.com/gp/B01?tag=x",
            ),
            // Only the segment right before `/dp`, once.
            (
                "https://www.amazon.com/a/b/dp/B01",
                "https://www.amazon.com/a/b/dp/B01",
            ),
            (
                "https://amazon.com.evil.org/Book/dp/B01",
                "https://amazon.com.evil.org/Book/dp/B01",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(run(&out.rules, url), want, "{url}");
        }
        assert!(import_dud("{}", "p.json").is_err());
        assert!(import_dud(r#"[{"processor": "queryRemoval", "args": [3]}]"#, "p.json").is_err());
    }

    #[test]
    fn clearurls_providers() {
        let json = r#"{"providers": {
            "amazon": {"urlPattern": "^https?:\\/\\/(?:[a-z0-9-]+\\.)*?amazon(?:\\.[a-z]{2,}){1,}",
                       "rules": ["qid", "p[fd]_rd_[a-z]*"], "rawRules": ["\\/ref=[^/?]*"],
                       "exceptions": ["^https?:\\/\\/(?:[a-z0-9-]+\\.)*?amazon(?:\\.[a-z]{2,}){1,}\\/gp\\/"]},
            "blocked": {"urlPattern": "^https?://ads\\.example", "completeProvider": true},
            "google": {"urlPattern": "^https?://www\\.google\\.", "redirections": ["^https?://www\\.google\\.[a-z]+/url\\?.*?q=([^&]*)"]}
        }}"#;
        let out = import_clearurls(json, "d.json").unwrap();
        assert_eq!((out.rules.len(), out.skipped.len()), (3, 2));
        let cases = [
            (
                "https://www.amazon.de/dp/B01/ref=sr_1?qid=5&pf_rd_r=9&k=v",
                "https://www.amazon.de/dp/B01?k=v",
            ),
            (
                "https://www.amazon.de/gp/B01?qid=5",
                "https://www.amazon.de/gp/B01?qid=5",
            ),
            (
                "https://shop.example/dp/B01?qid=5",
                "https://shop.example/dp/B01?qid=5",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(run(&out.rules, url), want, "{url}");
        }
        assert!(import_clearurls("[]", "d.json").is_err());
    }

    #[test]
    fn robots_clean_param_table() {
        let long = format!("Clean-param: {}", "a".repeat(MAX_CLEAN_PARAM));
        let txt = [
            "# Clean-param: commented",
            "clean-PARAM: sid # session",
            "Clean-param: s&ref /shop/*/item",
            "Clean-param: utm source",
            "Clean-param: a=b",
            "Clean-param:",
            long.as_str(),
            "Disallow: /x?sid=",
        ]
        .join("\n");
        let out = import_robots(&txt, "http://www.f.org:8080/robots.txt").unwrap();
        assert_eq!(out.rules.len(), 3, "{:?}", out.skipped);
        let lines: Vec<&str> = out.skipped.iter().map(|(e, _)| &e[e.len() - 2..]).collect();
        assert_eq!(lines, [":4", ":5", ":6", ":7"]);
        // (URL, want)
        let cases = [
            ("http://www.f.org/a?sid=1&x=2", "http://www.f.org/a?x=2"),
            ("https://www.f.org:8080/a?sid=1", "https://www.f.org:8080/a"),
            ("http://f.org/a?sid=1", "http://f.org/a?sid=1"),
            (
                "http://www.f.org.evil.org/a?sid=1",
                "http://www.f.org.evil.org/a?sid=1",
            ),
            (
                "http://www.f.org/shop/9/item.php?ref=x&s=y&id=1",
                "http://www.f.org/shop/9/item.php?id=1",
            ),
            (
                "http://www.f.org/shop/cart?ref=x",
                "http://www.f.org/shop/cart?ref=x",
            ),
        ];
        for (url, want) in cases {
            assert_eq!(run(&out.rules, url), want, "{url}");
        }
        assert!(import_robots("Clean-param: sid", "robots.txt").is_err());
        assert!(
            out.rules[0].pattern.starts_with("[www.f.org robots.txt:2"),
            "{}",
            out.rules[0].pattern
        );
        // A `$` is outside the syntax (it would widen the prefix).
        let out = import_robots("Clean-param: sid /a$", "http://f.org/robots.txt").unwrap();
        assert_eq!((out.rules.len(), out.skipped.len()), (0, 1));
        // A hostile file cannot ask for more than MAX_ROBOTS_RULES rules; repeats are one rule.
        let names: Vec<String> = (0..300).map(|i| format!("p{i}")).collect();
        let txt = format!(
            "Clean-param: {}\nClean-param: p0\nClean-param: p0",
            names[..40].join("&")
        ) + &names
            .chunks(40)
            .map(|c| format!("\nClean-param: {} /x{}", c.join("&"), c.len()))
            .collect::<String>();
        let out = import_robots(&txt, "http://f.org/robots.txt").unwrap();
        assert_eq!(out.rules.len(), MAX_ROBOTS_RULES);
        let out = import_robots(
            "Clean-param: p0\nClean-param: p0&p0",
            "http://f.org/robots.txt",
        )
        .unwrap();
        assert_eq!(out.rules.len(), 1);
    }

    /// The real lists from `../shared/datasets` (and the DUD package when installed): every
    /// entry is a rule or a named skip, and every rule compiles (import checks it).
    #[test]
    fn real_clearurls_list_imports() {
        // Unit tests run in the crate directory; the data sits beside the repository.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/datasets/lists/clearurls-data.min.json"
        );
        let Ok(text) = std::fs::read_to_string(path) else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{path} missing with CI=true"
            );
            eprintln!("SKIP real_clearurls_list_imports: {path} not found");
            return;
        };
        let out = import_clearurls(&text, path).unwrap();
        assert!(out.rules.len() > 500, "{}", out.rules.len());
        let n = dedust_core::Normalizer::new(out.rules.clone(), None);
        let run = |u: &str| n.apply_rules(u.to_string()).url;
        assert_eq!(
            run("https://news.example/a?utm_source=rss&id=3&fbclid=IwAR2x"),
            "https://news.example/a?id=3"
        );
        assert_eq!(
            run("https://news.example/a?id=3"),
            "https://news.example/a?id=3"
        );
    }
}
