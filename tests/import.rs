//! `dedust import --format nutch`: Nutch's own urlnormalizer-regex test files pass through
//! `dedust normalize --rules imported.json --no-base` (68 + 3 cases), with an expected-failures
//! list (`tests/data/nutch-expected-failures.txt`, `file<TAB>input` lines) checked both ways;
//! an imported file exported again as Nutch XML runs the same in Java; bad files are refused
//! with the file and line.

mod common;
use common::*;

/// `(input, expected)` cases of a Nutch `.test` file.
fn cases(path: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace();
            let i = it.next().unwrap().to_string();
            let e = it.next().unwrap_or("").to_string();
            (i, e)
        })
        .collect()
}

#[test]
fn nutch_conformance_files_pass() {
    let t = TempDir::new("import-nutch");
    let expected_failures: Vec<String> =
        std::fs::read_to_string("tests/data/nutch-expected-failures.txt")
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect();
    let mut total = 0;
    let mut failures = Vec::new();
    for (name, want_cases) in [("default", 68), ("scope1", 3)] {
        let Some(xml) = shared(&format!("conformance/nutch/regex-normalize-{name}.xml")) else {
            return;
        };
        let test = shared(&format!("conformance/nutch/regex-normalize-{name}.test")).unwrap();
        let rules = t.path(&format!("{name}.json"));
        let o = dedust(&["import", "--format", "nutch", &xml, "-o", &rules], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let cs = cases(&test);
        assert_eq!(cs.len(), want_cases, "{name}");
        let input: String = cs.iter().map(|(i, _)| format!("{i}\n")).collect();
        let o = dedust(
            &["normalize", "--no-base", "--rules", &rules],
            input.as_bytes(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        assert_eq!(out.lines().count(), cs.len());
        for ((i, e), got) in cs.iter().zip(out.lines()) {
            total += 1;
            if got != e {
                failures.push(format!("{name}\t{i}"));
                eprintln!("{name}: {i} -> {got}, Nutch expects {e}");
            }
        }
    }
    assert_eq!(total, 71);
    for f in &failures {
        assert!(expected_failures.contains(f), "unexpected failure: {f}");
    }
    for f in &expected_failures {
        assert!(
            failures.contains(f),
            "listed as failing but passes now: {f}"
        );
    }
}

#[test]
fn imported_rules_export_back_and_run_the_same_in_java() {
    let Some(xml) = shared("conformance/nutch/regex-normalize-default.xml") else {
        return;
    };
    let test = shared("conformance/nutch/regex-normalize-default.test").unwrap();
    let t = TempDir::new("import-roundtrip");
    let Some(cp) = java_harness(&t) else {
        return;
    };
    let rules = t.path("imported.json");
    assert!(dedust(&["import", &xml, "-o", &rules], b"")
        .status
        .success());
    let exp = t.path("again.xml");
    let o = dedust(
        &["export", "-r", &rules, "--format", "nutch", "-o", &exp],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let input: String = cases(&test).iter().map(|(i, _)| format!("{i}\n")).collect();
    let want = stdout(&dedust(
        &["normalize", "--no-base", "-r", &rules],
        input.as_bytes(),
    ));
    // Nutch's own file and the re-exported one, run by Java as Nutch runs them.
    for file in [xml.as_str(), exp.as_str()] {
        let got = java(&cp, &["nutch", file, "8"], input.as_bytes());
        assert_eq!(got, want, "{file}");
    }
    // Heritrix applies rules to whole-URL matches only: imported replaceAll rules are skipped.
    let o = dedust(&["export", "-r", &rules, "--to", "heritrix"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("heritrix can hold none of the 8 rules")
            && stderr(&o).contains("nutch 8"),
        "{}",
        stderr(&o)
    );
    let o = dedust(
        &["export", "-r", &rules, "--to", "heritrix", "--allow-empty"],
        b"",
    );
    assert!(stderr(&o).contains("8 skipped"), "{}", stderr(&o));
}

#[test]
fn bad_files_are_refused_with_file_and_line() {
    let t = TempDir::new("import-bad");
    for (name, body, want) in [
        ("notxml.xml", "<regex-normalize><regex>", "not XML"),
        ("other.xml", "<rules/>", "not <regex-normalize>"),
        (
            "badre.xml",
            "<regex-normalize>\n<regex><pattern>(unclosed</pattern><substitution>x</substitution></regex>\n</regex-normalize>",
            "badre.xml:2",
        ),
        (
            "badgroup.xml",
            "<regex-normalize>\n\n<regex><pattern>(a)</pattern><substitution>$2</substitution></regex>\n</regex-normalize>",
            "badgroup.xml:3",
        ),
    ] {
        let p = t.write(name, body.as_bytes());
        let o = dedust(&["import", &p], b"");
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(stderr(&o).contains(want), "{name}: {}", stderr(&o));
    }
    let o = dedust(&["import", &t.path("missing.xml")], b"");
    assert_eq!(o.status.code(), Some(1));
    // A rule file whose regex rule does not compile is refused on load, naming the rule.
    let ok = t.write(
        "ok.xml",
        b"<regex-normalize><regex><pattern>abc</pattern><substitution>x</substitution></regex></regex-normalize>",
    );
    let rules = t.path("ok.json");
    assert!(dedust(&["import", &ok, "-o", &rules], b"").status.success());
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(text.contains("\"regex\": \"abc\""), "{text}");
    let broken = t.write(
        "broken.json",
        text.replace("\"regex\": \"abc\"", "\"regex\": \"(\"")
            .as_bytes(),
    );
    let o = dedust(&["normalize", "-r", &broken], b"http://a.org/abc\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("broken.json") && stderr(&o).contains("rule 1"),
        "{}",
        stderr(&o)
    );
    let o = dedust(&["normalize", "-r", &rules], b"http://a.org/abc\n");
    assert_eq!(stdout(&o), "http://a.org/x\n");
}

/// `validate` stderr rows: (support, fp, pattern) per rule.
fn validate_rows(err: &str) -> Vec<(usize, usize, String)> {
    err.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let s = it.next()?.parse().ok()?;
            let f = it.next()?.parse().ok()?;
            let _fpr = it.next()?;
            let _id = it.next()?;
            Some((s, f, it.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

/// The real ClearURLs list: imported (skips named), measured on a synthetic web by `validate`
/// (its `ref` rule is refuted there: `ref=` carries content on some sites), and its rules, exported
/// as Nutch XML, run the same in Java as in `dedust normalize`.
#[test]
fn clearurls_list_imports_validates_and_runs_the_same_in_java() {
    let Some(list) = shared("lists/clearurls-data.min.json") else {
        return;
    };
    let t = TempDir::new("import-clearurls");
    let rules = t.path("cu.json");
    let o = dedust(&["import", "--from", "clearurls", &list, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("completeProvider"), "{}", stderr(&o));
    let urls = [
        "https://news.example/a?id=3&utm_source=rss&fbclid=IwAR2x_9",
        "https://news.example/a?id=3",
        "https://www.amazon.de/dp/B01/ref=sr_1_1?qid=5&keywords=x",
        "https://qidnews.example/a?qids=1",
    ];
    let got = normalize_with(&rules, &urls);
    assert_eq!(got[0], "https://news.example/a?id=3");
    assert_eq!(got[1], "https://news.example/a?id=3");
    assert!(
        !got[2].contains("qid=") && !got[2].contains("/ref="),
        "{}",
        got[2]
    );
    assert_eq!(got[3], "https://qidnews.example/a?qids=1");
    // Measured on labelled URLs: the tracking rules merge duplicates only, `ref` merges pages.
    let syn = t.path("syn");
    let o = dedust(
        &[
            "synth", "--sites", "60", "--pages", "30", "--seed", "5", "-o", &syn,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = t.path("kept.json");
    let truth = format!("{syn}/clusters.tsv");
    let o = dedust(
        &["validate", "-r", &rules, "--truth", &truth, "-o", &kept],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = validate_rows(&stderr(&o));
    assert_eq!(
        rows.len(),
        737,
        "one row per imported rule (six list entries repeat others)"
    );
    let row = |needle: &str| {
        rows.iter()
            .find(|(_, _, p)| p.ends_with(needle))
            .unwrap_or_else(|| panic!("no rule {needle}"))
            .clone()
    };
    let (s, f, _) = row("globalRules: (?:%3F)?utm(?:_[a-z_]*)?]");
    assert!(s > 0 && f == 0, "utm: {s} {f}");
    let (s, f, _) = row("globalRules: (?:%3F)?ref_?]");
    assert!(f * 100 > s * 15, "ref: {s} {f}");
    let kept_text = std::fs::read_to_string(&kept).unwrap();
    assert!(kept_text.contains("utm(?:_[a-z_]*)?"), "utm kept");
    assert!(
        !kept_text.contains("globalRules: (?:%3F)?ref_?"),
        "ref refuted"
    );
    // Java runs the exported regexes as dedust does.
    let Some(cp) = java_harness(&t) else {
        return;
    };
    let xml = t.path("cu.xml");
    let o = dedust(
        &["export", "-r", &rules, "--format", "nutch", "-o", &xml],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sample: String = std::fs::read_to_string(&truth)
        .unwrap()
        .lines()
        .skip(1)
        .step_by(7)
        .filter_map(|l| l.split('\t').nth(1))
        .chain(urls)
        .map(|u| format!("{u}\n"))
        .collect();
    let want = stdout(&dedust(
        &["normalize", "--no-base", "-r", &rules],
        sample.as_bytes(),
    ));
    assert_eq!(java(&cp, &["nutch", &xml, "8"], sample.as_bytes()), want);
}

/// The directory of the installed `duplicate-url-discarder-rules` package (`.ci/run` installs
/// it); `None` with a skip notice when absent and `CI` is not `true`.
fn dud_package() -> Option<String> {
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, duplicate_url_discarder_rules as d; print(os.path.dirname(d.__file__))",
        ])
        .output();
    match o {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).trim().to_string()),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but the duplicate-url-discarder-rules package is not installed"
            );
            eprintln!("SKIP: python3 -m pip install duplicate-url-discarder-rules");
            None
        }
    }
}

/// Scrapy's duplicate-url-discarder rules from the PyPI package: every file imports (the
/// `normalizer` entry is named as skipped), the rules run as the package documents them, and
/// `validate` keeps the `utm` removals on a synthetic web.
#[test]
fn dud_rules_import_and_validate() {
    let Some(dir) = dud_package() else {
        return;
    };
    let t = TempDir::new("import-dud");
    let mut files = Vec::new();
    for f in [
        "queryRemoval/article.json",
        "queryRemoval/product.json",
        "queryRemoval/utm.json",
        "queryRemovalExcept/product.json",
        "subpathRemoval/product.json",
        "normalizer/main.json",
    ] {
        let out = t.path(&f.replace('/', "-"));
        let o = dedust(
            &[
                "import",
                "--format",
                "dud",
                &format!("{dir}/{f}"),
                "-o",
                &out,
            ],
            b"",
        );
        assert!(o.status.success(), "{f}: {}", stderr(&o));
        if f.starts_with("normalizer") {
            assert!(stderr(&o).contains("base layer"), "{}", stderr(&o));
        }
        files.push(out);
    }
    let all: Vec<&str> = files.iter().flat_map(|f| ["-r", f.as_str()]).collect();
    let mut args = vec!["normalize", "--no-base"];
    args.extend(&all);
    let o = dedust(
        &args,
        b"https://www.amazon.com/Some-Book/dp/B01?tag=x&th=1\nhttps://news.example/a?utm_source=x&id=2\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "https://www.amazon.com/dp/B01\nhttps://news.example/a?id=2\n"
    );
    let syn = t.path("syn");
    assert!(dedust(
        &["synth", "--sites", "60", "--pages", "30", "--seed", "5", "-o", &syn],
        b""
    )
    .status
    .success());
    let truth = format!("{syn}/clusters.tsv");
    let mut args = vec!["validate", "--truth", &truth, "-o", "/dev/null"];
    args.extend(&all);
    let o = dedust(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = validate_rows(&stderr(&o));
    let utm: Vec<_> = rows
        .iter()
        .filter(|(_, _, p)| p.contains(": utm_"))
        .collect();
    assert!(utm.iter().any(|(s, f, _)| *s > 0 && *f == 0), "{utm:?}");
}
