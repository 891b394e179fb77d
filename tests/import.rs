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
    let o = dedust(&["export", "-r", &rules, "--format", "heritrix"], b"");
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
