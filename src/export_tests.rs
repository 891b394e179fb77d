//! Tests of the crawler exports on learned rules (they need the learner, so they live in the
//! facade crate: `dedust-interop` depends on `dedust-core` only).

use crate::export::{export, ExportOptions, Format};
use crate::model::{Rule, RuleKind};
use crate::normalize::MAX_ROUNDS;
use crate::render::regex_form;

fn learned() -> Vec<Rule> {
    let mk = |id: &str, u: &[&str]| crate::rules::Cluster {
        id: id.into(),
        urls: u.iter().map(|s| s.to_string()).collect(),
    };
    let (rules, _) = crate::rules::learn_candidates(
        &[
            mk(
                "a",
                &["https://f.org/s.php?t=1", "https://f.org/s.php?mode=x&t=1"],
            ),
            mk(
                "b",
                &["https://f.org/s.php?t=2", "https://f.org/s.php?mode=y&t=2"],
            ),
            mk("c", &["http://www.f.org/a", "https://f.org/a"]),
        ],
        &Default::default(),
        &|_| {},
    );
    rules
}

#[test]
fn every_format_holds_its_rules_or_says_why_not() {
    let mut rules = learned();
    rules.push(crate::import::regex_rule("#.*?(\\?|&|$)", "$1", "x").unwrap());
    for (f, imported_kept) in [
        (Format::Nutch, true),
        (Format::StormCrawler, true),
        (Format::RegexTsv, true),
        (Format::Heritrix, false),
        (Format::Json, true),
    ] {
        let e = export(&rules, &Default::default(), f, &ExportOptions { passes: 2 });
        assert_eq!(
            e.rules.len() + e.skipped.len(),
            rules.len(),
            "{f:?}: every rule is kept or skipped"
        );
        assert_eq!(
            e.rules.iter().any(|r| r.kind == RuleKind::Regex),
            imported_kept,
            "{f:?}"
        );
        for s in &e.skipped {
            assert!(!s.reason.is_empty());
        }
        assert!(!e.text.is_empty());
    }
    let h = export(
        &rules,
        &Default::default(),
        Format::Heritrix,
        &ExportOptions { passes: 3 },
    );
    assert_eq!(
        h.text.matches("<bean class").count(),
        3 * h.rules.len(),
        "single-pass crawlers get the list once per pass"
    );
    let n = export(
        &rules,
        &Default::default(),
        Format::Nutch,
        &ExportOptions::default(),
    );
    assert_eq!(n.text.matches("<regex>").count(), n.rules.len());
    assert!(n.text.contains("urlnormalizer.loop.count"));
    // The XML reads back (ampersands escaped, comments well-formed) into the same regexes.
    let back = crate::import::import_nutch(&n.text, "export.xml").unwrap();
    assert_eq!(back.len(), n.rules.len());
    for (b, r) in back.iter().zip(&n.rules) {
        let want = match r.kind {
            RuleKind::Regex => r.regex.clone(),
            _ => regex_form(r).map(|x| x.0),
        };
        assert_eq!(b.regex, want);
    }
}

/// The regex-tsv rows applied in order, each whole-URL, to a fixed point (as Nutch does).
fn run_tsv(text: &str, url: &str) -> String {
    let rows: Vec<(regex::Regex, String)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (regex::Regex::new(c[2]).unwrap(), c[3].to_string())
        })
        .collect();
    let mut cur = url.to_string();
    for _ in 0..MAX_ROUNDS {
        let before = cur.clone();
        for (re, rep) in &rows {
            cur = re.replace(&cur, rep.as_str()).into_owned();
        }
        if cur == before {
            break;
        }
    }
    cur
}

#[test]
fn cross_host_rules_are_fetch_rewrites_on_attested_hosts_only() {
    use crate::rules::{convention_rule, Convention};
    let attest = |mut r: Rule, hosts: &[&str]| {
        r.attested = hosts.iter().map(|h| h.to_string()).collect();
        r
    };
    // A value drop (`mode=x`) learned on f.org, and the five conventions.
    let drop = learned()
        .into_iter()
        .find(|r| r.is_global() && r.pattern == "*://*{/path}?mode=x&{rest}")
        .expect("the cross-host value drop");
    let rules = vec![
        attest(drop, &["f.org", "g.org"]),
        attest(convention_rule(Convention::Https), &["a.org"]),
        attest(convention_rule(Convention::StripWww), &["www.b.org"]),
        attest(
            convention_rule(Convention::DefaultDoc("index.php".into())),
            &["c.org"],
        ),
        attest(convention_rule(Convention::TrailingSlash), &["c.org"]),
        attest(
            convention_rule(Convention::Suffix("amp".into())),
            &["e.org"],
        ),
        // No attested host: a dedup key only.
        convention_rule(Convention::DefaultDoc("index.html".into())),
    ];
    let e = export(
        &rules,
        &Default::default(),
        Format::RegexTsv,
        &ExportOptions::default(),
    );
    assert_eq!(e.skipped.len(), 1, "{:?}", e.skipped);
    assert_eq!(e.text.lines().count(), 1 + 6);
    assert_eq!(e.rules.len(), 7, "one host-scoped copy per attested host");
    assert!(e.rules.iter().all(|r| !r.is_global()));
    let engine = crate::Normalizer::new(e.rules.clone(), None);
    let cases = [
        (
            "https://f.org/s.php?a=1&mode=x&t=1",
            "https://f.org/s.php?a=1&t=1",
        ),
        ("https://g.org/?mode=x", "https://g.org/"),
        (
            "https://g.org/s.php?mode=y&t=1",
            "https://g.org/s.php?mode=y&t=1",
        ),
        (
            "https://g.org/s.php?mode=x&mode=x",
            "https://g.org/s.php?mode=x&mode=x",
        ),
        (
            "https://h.org/s.php?mode=x&t=1",
            "https://h.org/s.php?mode=x&t=1",
        ),
        ("http://a.org/p?q=1", "https://a.org/p?q=1"),
        ("http://a.org", "https://a.org"),
        ("http://ab.org/p", "http://ab.org/p"),
        ("http://a.org:81/p", "http://a.org:81/p"),
        ("http://www.b.org/x/", "http://b.org/x/"),
        ("http://www.bb.org/x/", "http://www.bb.org/x/"),
        ("http://c.org/d/index.php?x=1", "http://c.org/d?x=1"),
        ("http://c.org/index.php", "http://c.org/"),
        ("http://c.org/d/e/", "http://c.org/d/e"),
        ("http://c.org/", "http://c.org/"),
        ("http://c.org/d/index.html", "http://c.org/d/index.html"),
        ("http://d.org/d/e/", "http://d.org/d/e/"),
        ("http://e.org/x/amp/", "http://e.org/x/"),
        ("http://e.org/x/y/amp?a=1", "http://e.org/x/y?a=1"),
        ("http://e.org/amp/", "http://e.org/amp/"),
        ("http://e.org/x/camp/", "http://e.org/x/camp/"),
        ("http://d.org/x/amp/", "http://d.org/x/amp/"),
    ];
    // The emitted rules (host-scoped copies) export again, to the same rewrites.
    let again = export(
        &e.rules,
        &Default::default(),
        Format::RegexTsv,
        &ExportOptions::default(),
    );
    assert!(again.skipped.is_empty(), "{:?}", again.skipped);
    for (url, want) in cases {
        let via_engine = engine.apply_rules(url.to_string()).url;
        assert_eq!(via_engine, want, "engine on {url}");
        assert_eq!(run_tsv(&e.text, url), want, "regexes on {url}");
        assert_eq!(
            run_tsv(&again.text, url),
            want,
            "re-exported regexes on {url}"
        );
    }
    // Scrapy: a cross-host drop of a name goes to its attested hosts.
    let plain = Rule::new(
        RuleKind::Drop,
        crate::rules::Source {
            scheme: None,
            host: crate::rules::ANY_HOST.into(),
            path: None,
            required: vec![],
            optional: vec!["utm_source".into()],
            rest: true,
        },
        crate::rules::Target {
            scheme: None,
            host: None,
            path: None,
            query: Some(vec![]),
        },
    );
    let rules = [attest(plain.clone(), &["f.org", "g.org"]), plain];
    let s = export(
        &rules,
        &Default::default(),
        Format::Scrapy,
        &ExportOptions::default(),
    );
    assert_eq!(s.skipped.len(), 1, "no attested host: skipped");
    assert!(
        s.text.contains("\"include\": [\"f.org\", \"g.org\"]"),
        "{}",
        s.text
    );
    assert_eq!(s.rules.len(), 2);
    assert!(s.rules.iter().all(|r| !r.is_global()));
}

#[test]
fn scrapy_takes_plain_parameter_drops_only() {
    let e = export(
        &learned(),
        &Default::default(),
        Format::Scrapy,
        &ExportOptions::default(),
    );
    for r in &e.rules {
        assert_eq!(r.kind, RuleKind::Drop);
        assert!(r.source.required.is_empty());
    }
    let v: serde_json::Value = serde_json::from_str(&e.text).unwrap();
    assert_eq!(v.as_array().unwrap().len(), e.rules.len());
}

#[test]
fn stormcrawler_output_is_json() {
    let e = export(
        &learned(),
        &Default::default(),
        Format::StormCrawler,
        &ExportOptions { passes: 2 },
    );
    let v: serde_json::Value = serde_json::from_str(&e.text).unwrap();
    let list = &v["org.apache.stormcrawler.filtering.URLFilters"][0]["params"]["urlNormalizers"];
    assert_eq!(list.as_array().unwrap().len(), 2 * e.rules.len());
}
