//! `dedust export`: every format is written, skips are explained, and the Nutch, StormCrawler
//! and Heritrix exports run by the real Java regex engine (`tests/java/DedustHarness.java`, which
//! applies them as those crawlers do) give byte for byte what `dedust normalize` gives, on every
//! URL of the forum crawl, the 150k-link list and the demo set.

mod common;
use common::*;

fn learn(t: &TempDir, input: &str, name: &str, extra: &[&str]) -> String {
    let out = t.path(name);
    let mut args = vec!["learn", input, "-q", "-o", &out];
    args.extend_from_slice(extra);
    let o = dedust(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

#[test]
fn java_engines_match_dedust_normalize_byte_for_byte() {
    let (Some(forum), Some(links)) = (
        shared("ubuntuforums/clusters.tsv"),
        shared("urls/page-links.txt"),
    ) else {
        return;
    };
    let t = TempDir::new("export-java");
    let Some(cp) = java_harness(&t) else {
        return;
    };
    let demo = "datasets/demo/clusters.tsv";
    // Rule sets: validated forum rules, every forum candidate (more kinds, some in conflict),
    // and the shipped demo rules (aliases, path ↔ query moves, drops on many hosts).
    let rule_sets = [
        learn(&t, &forum, "forum.json", &[]),
        learn(&t, &forum, "forum-all.json", &["--no-validate"]),
        "rules/demo.json".to_string(),
        learn(&t, demo, "demo-all.json", &["--no-validate"]),
    ];
    // Inputs: the URLs of both shared lists and the demo set, base-normalized by dedust.
    let mut raw = String::new();
    for f in [&forum, &demo.to_string()] {
        for l in std::fs::read_to_string(f).unwrap().lines().skip(1) {
            raw.push_str(l.split('\t').nth(1).unwrap_or(""));
            raw.push('\n');
        }
    }
    raw.push_str(&std::fs::read_to_string(&links).unwrap());
    let o = dedust(&["normalize"], raw.as_bytes());
    assert!(o.status.success());
    let base = t.write("base.txt", &o.stdout);
    let base_text = std::fs::read_to_string(&base).unwrap();
    let lines = base_text.lines().count();
    assert!(lines > 80_000, "{lines}");
    // The same URLs as a crawler sees them: normalized but for the query, left in the order
    // the page linked it.
    let o = dedust(&["normalize", "--keep-query-order"], raw.as_bytes());
    assert!(o.status.success());
    let unsorted_text = String::from_utf8(o.stdout).unwrap();
    let unsorted = unsorted_text
        .lines()
        .zip(base_text.lines())
        .filter(|(u, s)| u != s)
        .count();
    assert!(unsorted > 1000, "{unsorted} URLs with an unsorted query");
    let mut compared = 0;
    for rules in &rule_sets {
        for format in ["nutch", "stormcrawler", "heritrix"] {
            let exp = t.path(&format!("export.{format}"));
            let emitted = t.path("emitted.json");
            let o = dedust(
                &[
                    "export",
                    "--rules",
                    rules,
                    "--format",
                    format,
                    "-o",
                    &exp,
                    "--emitted",
                    &emitted,
                ],
                b"",
            );
            assert!(o.status.success(), "{}", stderr(&o));
            let want = dedust(&["normalize", "--no-base", "--rules", &emitted, &base], b"");
            assert!(want.status.success());
            let want = stdout(&want);
            let got = match format {
                "nutch" => java(&cp, &["nutch", &exp, "8"], base_text.as_bytes()),
                _ => java(&cp, &[format, &exp], base_text.as_bytes()),
            };
            let changed = want
                .lines()
                .zip(base_text.lines())
                .filter(|(a, b)| a != b)
                .count();
            assert!(
                changed > 0,
                "{rules} {format}: the rules change no URL, the test proves nothing"
            );
            for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
                assert_eq!(
                    w,
                    g,
                    "{rules} as {format}, line {}: {}",
                    i + 1,
                    base_text.lines().nth(i).unwrap()
                );
            }
            assert_eq!(want.lines().count(), got.lines().count());
            // Fed the unsorted queries, Java rewrites them as dedust does: the same URL once its
            // kept parameters are sorted by name (the crawler keeps their order).
            let got = match format {
                "nutch" => java(&cp, &["nutch", &exp, "8"], unsorted_text.as_bytes()),
                _ => java(&cp, &[format, &exp], unsorted_text.as_bytes()),
            };
            let mut moved = 0;
            for (i, (((w, g), u), b)) in want
                .lines()
                .zip(got.lines())
                .zip(unsorted_text.lines())
                .zip(base_text.lines())
                .enumerate()
            {
                // (A line that is no URL passes through both runs as it is.)
                if w != g {
                    assert_eq!(
                        w,
                        sort_query(g),
                        "{rules} as {format}, unsorted line {}: {u}",
                        i + 1
                    );
                }
                moved += usize::from(u != b && w != b);
            }
            assert_eq!(want.lines().count(), got.lines().count());
            eprintln!("{rules} as {format}: {lines} URLs, {changed} rewritten, Java = dedust; {unsorted} with unsorted queries, {moved} of them rewritten");
            compared += 1;
        }
    }
    assert_eq!(compared, 12);
}

/// `url` with its query parameters stably sorted by name, as dedust's base layer sorts them.
fn sort_query(url: &str) -> String {
    match url.split_once('?') {
        None => url.to_string(),
        Some((head, q)) => {
            let mut ps: Vec<&str> = q.split('&').collect();
            ps.sort_by_key(|p| p.split('=').next().unwrap_or(""));
            format!("{head}?{}", ps.join("&"))
        }
    }
}

#[test]
fn every_format_is_written_and_skips_are_named() {
    let t = TempDir::new("export-formats");
    for (format, check) in [
        ("nutch", "<regex-normalize>"),
        ("stormcrawler", "RegexURLNormalizer"),
        ("heritrix", "RulesCanonicalizationPolicy"),
        ("scrapy", "["),
        ("regex-tsv", "id\tmode\tregex"),
        ("json", "\"dedust-rules\""),
    ] {
        let out = t.path(&format!("out.{format}"));
        let o = dedust(
            &[
                "export",
                "-r",
                "rules/demo.json",
                "--format",
                format,
                "-o",
                &out,
                // Scrapy holds none of the demo rules (tested below).
                "--allow-empty",
            ],
            b"",
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(text.contains(check), "{format}: {text}");
        let err = stderr(&o);
        assert!(err.contains("rules exported"), "{err}");
        // A skipped rule is named with its reason.
        for l in err.lines().filter(|l| l.contains("skipped r")) {
            assert!(l.contains("): "), "{l}");
        }
    }
    // Scrapy takes only plain parameter drops without context: of the demo rules, forum0's
    // drop of its post id `p` (an id, dropped by name on that host).
    let o = dedust(
        &["export", "-r", "rules/demo.json", "--format", "scrapy"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text = v.to_string();
    assert!(
        text.contains("forum0.example") && text.contains("\"p\""),
        "{text}"
    );
    // Without that drop, an export holding none of the rules is an error naming the formats
    // that would hold them ...
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("rules/demo.json").unwrap()).unwrap();
    file["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["pattern"] != "*://forum0.example{/path}?[p]&{rest}");
    let none = t.write("no-plain-drop.json", file.to_string().as_bytes());
    let o = dedust(&["export", "-r", &none, "--format", "scrapy"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.contains("skipped r"), "{err}");
    assert!(
        err.contains("scrapy can hold none of the") && err.contains("nutch 17"),
        "{err}"
    );
    // ... unless asked for.
    let o = dedust(
        &["export", "-r", &none, "--format", "scrapy", "--allow-empty"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning: skipped r"), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.is_array());
}

#[test]
fn bad_input_gets_a_clear_error() {
    let t = TempDir::new("export-bad");
    let o = dedust(
        &["export", "-r", "rules/demo.json", "--format", "squid"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "unknown format is a usage error");
    assert!(stderr(&o).contains("nutch, stormcrawler"), "{}", stderr(&o));
    let broken = t.write(
        "broken.json",
        b"{\"format\": \"dedust-rules\", \"version\": 1, ",
    );
    let o = dedust(&["export", "-r", &broken, "--format", "nutch"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("broken.json"), "{}", stderr(&o));
}

#[test]
fn rules_from_standard_input() {
    // `dedust learn … | dedust export -r - …`: the rule file on stdin.
    let demo = std::fs::read("rules/demo.json").unwrap();
    let from_file = dedust(
        &["export", "-r", "rules/demo.json", "--format", "nutch"],
        b"",
    );
    let from_stdin = dedust(&["export", "-r", "-", "--to", "nutch"], &demo);
    assert!(from_stdin.status.success(), "{}", stderr(&from_stdin));
    // `--to` is the flag's name now; `--format` (used above) still works.
    assert_eq!(from_stdin.stdout, from_file.stdout);
    // normalize: stdin holds the rules, so the URLs come from a file.
    let t = TempDir::new("export-stdin");
    let urls = t.write("u.txt", b"https://forum0.example/showthread.php?t=7&p=1\n");
    let o = dedust(&["normalize", "-r", "-", &urls], &demo);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "https://forum0.example/f/7\n");
    let o = dedust(&["normalize", "-r", "-"], &demo);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not both"), "{}", stderr(&o));
    let o = dedust(&["export", "-r", "-", "-r", "-", "--format", "json"], &demo);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("twice"), "{}", stderr(&o));
    // A broken file on stdin is named `-` with its line.
    let o = dedust(
        &["export", "-r", "-", "--format", "json"],
        b"{\n  \"version\": 1,\n  oops\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("dedust: error: -: "),
        "{}",
        stderr(&o)
    );
}

#[test]
fn nutch_export_keeps_nutchs_own_rules_first() {
    let Some(defaults) = shared("conformance/nutch/regex-normalize-default.xml") else {
        return;
    };
    let t = TempDir::new("export-nutch-defaults");
    let (exp, emitted) = (t.path("dedust-normalize.xml"), t.path("emitted.json"));
    let args = |to: &'static str| {
        let v: Vec<String> = [
            "export",
            "-r",
            "rules/demo.json",
            "--to",
            to,
            "--with-nutch-defaults",
            &defaults,
            "-o",
            &exp,
            "--emitted",
            &emitted,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v
    };
    let run = |v: Vec<String>| dedust(&v.iter().map(String::as_str).collect::<Vec<_>>(), b"");
    // Only Nutch reads a Nutch file: another target is a usage error, and nothing is written.
    let o = run(args("heritrix"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--to nutch"), "{}", stderr(&o));
    assert!(!std::path::Path::new(&exp).exists());
    let o = run(args("nutch"));
    assert!(o.status.success(), "{}", stderr(&o));
    // Nutch's rules come first, in their order, then dedust's; the advice names the separate
    // file and no plugin.includes value.
    let pattern = |text: &str| -> Vec<String> {
        text.split("<pattern>")
            .skip(1)
            .map(|p| p.split("</pattern>").next().unwrap().trim().to_string())
            .collect()
    };
    let ours = pattern(&std::fs::read_to_string(&defaults).unwrap());
    let out = std::fs::read_to_string(&exp).unwrap();
    let got = pattern(&out);
    assert!(ours.len() >= 5, "{ours:?}");
    assert_eq!(got[..ours.len()], ours[..]);
    assert!(got.len() > ours.len(), "dedust's rules follow");
    assert!(out.contains("<value>dedust-normalize.xml</value>"));
    assert!(!out.contains("plugin.includes</name>"), "{out}");
    // The emitted rule file holds the same rules, Nutch's first (a cross-host rule is one regex
    // over its attested hosts in the XML, one host rule per attested host in the file).
    let f = dedust::RuleFile::parse(&std::fs::read_to_string(&emitted).unwrap(), "e").unwrap();
    assert!(f.rules.len() >= got.len());
    assert!(f.rules[..ours.len()]
        .iter()
        .all(|r| r.kind == dedust::RuleKind::Regex));
    // And Java, applying the file as Nutch does, agrees with `dedust normalize` on the demo URLs.
    let Some(cp) = java_harness(&t) else {
        return;
    };
    let mut raw = String::new();
    for l in std::fs::read_to_string("datasets/demo/clusters.tsv")
        .unwrap()
        .lines()
        .skip(1)
    {
        raw.push_str(l.split('\t').nth(1).unwrap_or(""));
        raw.push('\n');
    }
    let base = stdout(&dedust(&["normalize"], raw.as_bytes()));
    let input = t.write("base.txt", base.as_bytes());
    let want = stdout(&dedust(
        &["normalize", "--no-base", "-r", &emitted, &input],
        b"",
    ));
    let java_out = java(&cp, &["nutch", &exp, "8"], base.as_bytes());
    let changed = want
        .lines()
        .zip(base.lines())
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed > 100, "{changed}");
    assert_eq!(want, java_out);
}

#[test]
fn login_walls_are_exported_as_url_filters_not_rewrites() {
    let Some(forum) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let t = TempDir::new("export-filters");
    let rules = learn(&t, &forum, "forum.json", &[]);
    let file = dedust::RuleFile::parse(&std::fs::read_to_string(&rules).unwrap(), "f").unwrap();
    // The forum's login wall: member, private-message, reply, subscription and attachment
    // pages, each id sent to one thread.
    let walls: Vec<&dedust::Rule> = file
        .rules
        .iter()
        .filter(|r| r.target.ends_with("showthread.php?t=42918"))
        .collect();
    assert!(
        walls.len() >= 3,
        "{:?}",
        file.rules.iter().map(|r| &r.pattern).collect::<Vec<_>>()
    );
    let mut base = String::new();
    for l in std::fs::read_to_string(&forum).unwrap().lines().skip(1) {
        base.push_str(l.split('\t').nth(1).unwrap_or(""));
        base.push('\n');
    }
    let base = stdout(&dedust(&["normalize"], base.as_bytes()));
    let keys = stdout(&dedust(&["normalize", "-r", &rules], base.as_bytes()));
    for (format, marker) in [
        ("nutch", "\n-^([a-z][a-z0-9+.-]*)://ubuntuforums"),
        ("stormcrawler", "\n-^([a-z][a-z0-9+.-]*)://ubuntuforums"),
        ("heritrix", "MatchesListRegexDecideRule"),
    ] {
        let (out, filters) = (t.path("out"), t.path("filters"));
        let emitted = t.path("emitted.json");
        let o = dedust(
            &[
                "export",
                "-r",
                &rules,
                "--to",
                format,
                "-o",
                &out,
                "--emitted",
                &emitted,
                "--filters",
                &filters,
            ],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("as URL filters"), "{}", stderr(&o));
        let text = std::fs::read_to_string(&filters).unwrap();
        assert!(text.contains(marker), "{format}: {text}");
        // No wall rule is a rewrite: not in the export, not in what the crawler will do.
        let exported = std::fs::read_to_string(&out).unwrap();
        let em = dedust::RuleFile::parse(&std::fs::read_to_string(&emitted).unwrap(), "e").unwrap();
        for w in &walls {
            assert!(text.contains(&w.id), "{format}: {} not a filter", w.pattern);
            assert!(
                !exported.contains(&w.id),
                "{format}: {} still a rewrite",
                w.pattern
            );
            assert!(em.rules.iter().all(|r| r.id != w.id));
        }
    }
    // The filter regexes (Nutch's file) reject exactly the URLs the wall rules send to the
    // wall: every URL they match has the wall's key, and they match more than a hundred.
    let filters = t.path("filters");
    let o = dedust(
        &[
            "export",
            "-r",
            &rules,
            "--to",
            "nutch",
            "--filters",
            &filters,
        ],
        b"",
    );
    assert!(o.status.success());
    let res: Vec<regex::Regex> = std::fs::read_to_string(&filters)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix('-'))
        .map(|r| regex::Regex::new(r).unwrap())
        .collect();
    let mut rejected = 0;
    let mut pages = std::collections::BTreeSet::new();
    for (u, k) in base.lines().zip(keys.lines()) {
        if res.iter().any(|r| r.is_match(u)) {
            rejected += 1;
            pages.insert(k.to_string());
        }
    }
    // Many → one: the rejected URLs all lead to a couple of pages (the wall, and the reply
    // form's own wall page).
    assert!(rejected > 100, "{rejected}");
    assert!(pages.len() <= 3, "{pages:?}");
    assert!(pages.iter().any(|p| p.ends_with("showthread.php?t=42918")));
    // Without --filters the export says what it left out.
    let o = dedust(&["export", "-r", &rules, "--to", "nutch"], b"");
    assert!(stderr(&o).contains("--filters FILE"), "{}", stderr(&o));
}

/// Rule text from hostile crawl data: (what it holds, the text, whether a URL's query can carry
/// it in a parameter name). Each goes into a path segment, a parameter name and a replacement
/// ([`hostile_rules`]); none holds a line break, so a URL holding it is one line of the harness's
/// input. A query splits at `&`: no URL carries a parameter name holding one, so that name is
/// exported and parsed but not looked for in the URLs run.
const HOSTILE: &[(&str, &str, bool)] = &[
    ("two hyphens", "a--b", true),
    ("three hyphens", "a---b", true),
    ("a trailing hyphen", "a-", true),
    ("a CDATA end", "x]]>y", true),
    ("a less-than sign", "a<b", true),
    ("an ampersand", "a&b", false),
    ("quotes", "a\"b'c", true),
    ("U+0001", "a\u{1}b", true),
    ("U+001F", "a\u{1f}b", true),
    ("a tab", "a\tb", true),
];

/// On host `h{i}.org` for text `t`: drop parameter `n{t}` under path `/p{t}`; rewrite `/old{t}`
/// to `/new{t}` (a replacement holding `t`); send `/w{t}?u={int}` to one page (a URL filter).
fn hostile_rules(i: usize, t: &str) -> Vec<dedust::Rule> {
    use dedust::model::{CapType, Piece, SegOut, Source, Target, ValPat};
    use dedust::{Rule, RuleKind};
    let src = |path: String, rest: bool| Source {
        scheme: None,
        host: format!("h{i}.org"),
        path: Some(vec![vec![Piece::Lit(path)]]),
        required: vec![],
        optional: vec![],
        rest,
    };
    vec![
        Rule::new(
            RuleKind::Drop,
            Source {
                optional: vec![format!("n{t}")],
                ..src(format!("p{t}"), true)
            },
            Target {
                query: Some(vec![]),
                ..Target::unchanged()
            },
        ),
        Rule::new(
            RuleKind::Template,
            src(format!("old{t}"), false),
            Target {
                path: Some(vec![SegOut::Lit(format!("new{t}"))]),
                ..Target::unchanged()
            },
        ),
        Rule::new(
            RuleKind::Template,
            Source {
                required: vec![("u".into(), ValPat::Pieces(vec![Piece::Cap(CapType::Int)]))],
                ..src(format!("w{t}"), false)
            },
            Target {
                path: Some(vec![SegOut::Lit("wall".into())]),
                query: Some(vec![]),
                ..Target::unchanged()
            },
        ),
    ]
}

#[test]
fn hostile_rule_text_exports_as_well_formed_xml_that_java_runs_like_dedust() {
    let t = TempDir::new("export-hostile");
    let rules: Vec<dedust::Rule> = HOSTILE
        .iter()
        .enumerate()
        .flat_map(|(i, (_, text, _))| hostile_rules(i, text))
        .collect();
    let file = dedust::RuleFile::new(rules, Default::default(), None);
    let rules = t.write("hostile.json", file.to_json().as_bytes());
    // URLs holding the texts where the rules look for them, and near misses.
    let mut urls = String::new();
    for (i, (_, text, in_query)) in HOSTILE.iter().enumerate() {
        let name = if *in_query {
            format!("n{text}")
        } else {
            "n".into()
        };
        for u in [
            format!("https://h{i}.org/p{text}?a=1&{name}=2&z=3"),
            format!("https://h{i}.org/p{text}?{name}"),
            format!("http://h{i}.org/p{text}?{name}=1&{name}=2"),
            format!("https://h{i}.org/p{text}?{name}x=1"),
            format!("https://h{i}.org/p?{name}=1"),
            format!("https://h{i}.org/old{text}"),
            format!("https://h{i}.org/old{text}?q=1"),
            format!("https://h{i}.org/w{text}?u=12"),
        ] {
            urls.push_str(&u);
            urls.push('\n');
        }
    }
    let input = t.write("urls.txt", urls.as_bytes());
    let Some(cp) = java_harness(&t) else {
        return;
    };
    let xml_skips = HOSTILE
        .iter()
        .filter(|(_, s, _)| s.chars().any(|c| c.is_control() && !"\t\n\r".contains(c)))
        .count();
    for format in ["nutch", "heritrix", "stormcrawler"] {
        let (out, emitted) = (t.path(&format!("out.{format}")), t.path("emitted.json"));
        let filters = t.path(&format!("filters.{format}"));
        let o = dedust(
            &[
                "export",
                "-r",
                &rules,
                "--to",
                format,
                "-o",
                &out,
                "--emitted",
                &emitted,
                "--filters",
                &filters,
            ],
            b"",
        );
        assert!(o.status.success(), "{format}: {}", stderr(&o));
        // Every rule is exported or a URL filter, but in XML the rewrites to a path holding a
        // control character: XML cannot carry it in a replacement, and the skip says so.
        let err = stderr(&o);
        let skipped: Vec<&str> = err.lines().filter(|l| l.contains("skipped r")).collect();
        let want = if format == "stormcrawler" {
            0
        } else {
            xml_skips
        };
        assert_eq!(skipped.len(), want, "{format}: {err}");
        assert!(skipped.iter().all(|l| l.contains("XML 1.0")), "{err}");
        if format != "stormcrawler" {
            // A validating parser (DOM and SAX, namespace-aware, every error fatal) reads it.
            let mut files = vec![out.as_str()];
            if format == "heritrix" {
                files.push(&filters);
            }
            let mut args = vec!["wellformed"];
            args.extend(&files);
            let got = java(&cp, &args, b"");
            assert_eq!(got.lines().count(), files.len(), "{got}");
        }
        // The crawler, run in Java on URLs holding the texts, does what dedust does.
        let want = stdout(&dedust(
            &["normalize", "--no-base", "-r", &emitted, &input],
            b"",
        ));
        let got = match format {
            "nutch" => java(&cp, &["nutch", &out, "8"], urls.as_bytes()),
            _ => java(&cp, &[format, &out], urls.as_bytes()),
        };
        let changed = want
            .lines()
            .zip(urls.lines())
            .filter(|(a, b)| a != b)
            .count();
        assert!(
            changed >= 2 * HOSTILE.len(),
            "{format}: {changed} URLs rewritten, the test proves little:\n{want}"
        );
        assert_eq!(want.lines().count(), urls.lines().count());
        for ((w, g), u) in want.lines().zip(got.lines()).zip(urls.lines()) {
            assert_eq!(w, g, "{format} on {u:?}");
        }
        assert_eq!(want.lines().count(), got.lines().count(), "{format}");
    }
}
