//! `dedust evaluate`: the metrics table, JSON, and the forum targets on held-out URLs.

mod common;
use common::*;

#[test]
fn table_and_json_on_synthetic_data() {
    let t = TempDir::new("eval-synth");
    let dir = t.path("s");
    assert!(dedust(
        &["synth", "--sites", "4", "--pages", "60", "--seed", "3", "-o", &dir],
        b""
    )
    .status
    .success());
    let truth = format!("{dir}/clusters.tsv");
    let o = dedust(&["evaluate", "--truth", &truth], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for row in ["none", "base", "rules"] {
        assert!(s.lines().any(|l| l.starts_with(row)), "{s}");
    }
    let o = dedust(&["evaluate", "--truth", &truth, "--json"], b"");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let none = &rows[0];
    let rules = &rows[2];
    assert_eq!(none["reduction"], 0.0);
    assert!(rules["reduction"].as_f64().unwrap() > 0.3, "{rules}");
    assert!(rules["lost"].as_f64().unwrap() <= 0.01, "{rules}");
}

#[test]
fn forum_held_out_urls() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let o = dedust(
        &["evaluate", "--truth", &clusters, "--split", "url", "--json"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules = &v["rows"][2];
    eprintln!("forum, url split: {rules}");
    // The targets of issue 3 (seed 1, 80/20); README lists other seeds.
    assert!(rules["lost"].as_f64().unwrap() <= 0.005, "{rules}");
    assert!(rules["reduction"].as_f64().unwrap() >= 0.85, "{rules}");
    // The generic base layer alone removes nothing on this crawl.
    assert!(v["rows"][1]["reduction"].as_f64().unwrap() < 0.01);
}

#[test]
fn folds_average_every_fold() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let o = dedust(
        &["evaluate", "--truth", &clusters, "--folds", "4", "--json"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let folds = v["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 4);
    let total: u64 = folds
        .iter()
        .map(|f| f["rules"]["urls"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 1000, "every URL is tested exactly once");
    assert!(v["rows"][2]["lost"].as_f64().unwrap() <= 0.01);
}

#[test]
fn rules_learned_on_some_sites_work_on_sites_never_seen() {
    // The same site families on disjoint hosts (`--host-offset`), with other parameter names
    // drawn for part of them: learn on one set, test on the other.
    let t = TempDir::new("eval-hosts");
    let (a, b) = (t.path("a"), t.path("b"));
    for (dir, offset) in [(&a, "0"), (&b, "50")] {
        let o = dedust(
            &[
                "synth",
                "--sites",
                "50",
                "--pages",
                "40",
                "--seed",
                "2",
                "--host-offset",
                offset,
                "-o",
                dir,
            ],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let rules = t.path("rules.json");
    let o = dedust(
        &["learn", &format!("{a}/clusters.tsv"), "-q", "-o", &rules],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    // Among the rules: a cross-host template and a suffix convention (AMP pages' `/amp/`). A
    // cross-host template rewrites a URL of a host absent from the data, and keeps the host.
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&rules).unwrap()).unwrap();
    let all_rules = file["rules"].as_array().unwrap();
    assert!(
        all_rules
            .iter()
            .any(|r| r["scope"] == "*" && r["convention"]["suffix"] == "amp"),
        "no suffix convention"
    );
    let template = all_rules
        .iter()
        .find(|r| r["scope"] == "*" && r["kind"] == "template")
        .expect("no cross-host template");
    // Each example lists the canonical URL first, then members the template sends there.
    let unseen: Vec<String> = template["examples"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|ex| ex.as_array().unwrap().iter().skip(1))
        .map(|u| {
            let u = u.as_str().unwrap();
            u.replacen(u.split('/').nth(2).unwrap(), "never-seen.test", 1)
        })
        .collect();
    // The template alone, so that every rewrite below is its own.
    let mut alone = file.clone();
    alone["rules"] = serde_json::json!([template]);
    alone["evidence"] = serde_json::json!([]);
    let alone_path = t.write("template.json", alone.to_string().as_bytes());
    let o = dedust(
        &["normalize", "-r", &alone_path, "--no-base"],
        unseen.join("\n").as_bytes(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rewritten: Vec<(&String, &str)> = unseen
        .iter()
        .zip(out.lines())
        .filter(|(u, o)| u.as_str() != *o)
        .collect();
    assert!(!rewritten.is_empty(), "{unseen:?} -> {out}");
    assert!(
        rewritten
            .iter()
            .all(|(_, o)| o.contains("://never-seen.test/")),
        "{rewritten:?}"
    );
    let truth_b = format!("{b}/clusters.tsv");
    let o = dedust(
        &["evaluate", "--truth", &truth_b, "-r", &rules, "--json"],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules_row = &v["rows"][2];
    assert!(rules_row["reduction"].as_f64().unwrap() >= 0.6, "{v}");
    assert!(rules_row["lost"].as_f64().unwrap() <= 0.005, "{v}");
    // Rewrites are counted, and those whose output no URL of the data has are among them.
    let (rewritten, unobserved) = (
        v["rewritten"].as_u64().unwrap(),
        v["unobserved"].as_u64().unwrap(),
    );
    assert!(rewritten > 0 && unobserved <= rewritten, "{v}");
    assert!(
        v["worst_host"]["host"]
            .as_str()
            .unwrap()
            .ends_with(".example"),
        "{v}"
    );
    // One command: whole registrable domains on each side of the split.
    let all = t.path("all");
    assert!(dedust(
        &["synth", "--sites", "40", "--pages", "40", "--seed", "2", "-o", &all],
        b""
    )
    .status
    .success());
    let o = dedust(
        &[
            "evaluate",
            "--truth",
            &format!("{all}/clusters.tsv"),
            "--split",
            "host",
            "--test-fraction",
            "0.5",
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(
        v["setup"].as_str().unwrap().contains("(host split, seed"),
        "{v}"
    );
    assert!(v["rows"][2]["reduction"].as_f64().unwrap() >= 0.6, "{v}");
    // The test half shares no registrable domain with the training half.
    let save = t.path("save");
    let o = dedust(
        &[
            "evaluate",
            "--truth",
            &format!("{all}/clusters.tsv"),
            "--split",
            "host",
            "--test-fraction",
            "0.5",
            "--save",
            &save,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let domains = |f: &str| -> std::collections::BTreeSet<String> {
        std::fs::read_to_string(format!("{save}/{f}"))
            .unwrap()
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(1))
            .map(|u| {
                let h = u.split('/').nth(2).unwrap();
                h.trim_start_matches("www.").to_string()
            })
            .collect()
    };
    assert!(domains("train.tsv").is_disjoint(&domains("test.tsv")));
}

/// Issue #10, silent wrongness: every numeric flag is checked (finite, in range) and a bad value
/// is a usage error (exit 2) naming the flag, for every subcommand that takes one.
#[test]
fn numeric_flags_out_of_range_are_usage_errors() {
    let demo = "datasets/demo/clusters.tsv";
    let cases: &[&[&str]] = &[
        &["evaluate", "--truth", demo, "--test-fraction", "1.5"],
        &["evaluate", "--truth", demo, "--test-fraction", "0"],
        &["evaluate", "--truth", demo, "--test-fraction", "NaN"],
        &["evaluate", "--truth", demo, "--folds", "0"],
        &["evaluate", "--truth", demo, "--folds", "1"],
        &["evaluate", "--truth", demo, "--max-fpr", "NaN"],
        &["evaluate", "--truth", demo, "--family-weight", "inf"],
        &["learn", demo, "--min-support", "0"],
        &["learn", demo, "--holdout", "1.5"],
        &["learn", demo, "--max-cluster", "1"],
        &["learn", demo, "--threads", "0"],
        &["normalize", "--threads", "0"],
        &["report", "--truth", demo, "--test-fraction", "inf"],
        &[
            "verify",
            "-r",
            "rules/demo.json",
            "--pages",
            "x",
            "--max-refuted",
            "NaN",
        ],
        &[
            "verify",
            "-r",
            "rules/demo.json",
            "--pages",
            "x",
            "--threshold",
            "0",
        ],
        &["cluster", "--pages", "x", "--threshold", "1.5"],
        &[
            "export",
            "-r",
            "rules/demo.json",
            "--format",
            "nutch",
            "--passes",
            "0",
        ],
        &["synth", "-o", "/nonexistent/x", "--sites", "0"],
    ];
    for args in cases {
        let o = dedust(args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let flag = args[args.len() - 2];
        assert!(stderr(&o).contains(flag), "{args:?}: {}", stderr(&o));
    }
}

/// Issue #10: a full disk on stdout is an error message and exit 1, never a panic.
#[test]
fn a_full_stdout_is_an_error_not_a_panic() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("SKIP: no /dev/full");
        return;
    };
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_dedust"))
        .args([
            "evaluate",
            "--truth",
            "datasets/demo/clusters.tsv",
            "--show-rules",
            "3",
        ])
        .stdout(full)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("No space left") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn nothing_to_remove_is_not_a_perfect_score() {
    // Every true cluster has one URL: reduction and recall are undefined, printed n/a (JSON
    // null), never 1.000.
    let t = TempDir::new("evaluate-nodup");
    let mut tsv = String::from("cluster\turl\n");
    for i in 0..6 {
        tsv.push_str(&format!("c{i}\thttp://h.org/{i}\n"));
    }
    let truth = t.write("nodup.tsv", tsv.as_bytes());
    let o = dedust(
        &["evaluate", "--truth", &truth, "--test-fraction", "0.5"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rules = out.lines().find(|l| l.starts_with("rules")).unwrap();
    let cols: Vec<&str> = rules.split_whitespace().collect();
    assert_eq!(
        (cols[4], cols[7]),
        ("n/a", "n/a"),
        "reduction and recall: {out}"
    );
    let o = dedust(
        &[
            "evaluate",
            "--truth",
            &truth,
            "--test-fraction",
            "0.5",
            "--json",
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["rows"][2]["reduction"].is_null(), "{v}");
    assert!(v["rows"][2]["recall"].is_null(), "{v}");
    assert_eq!(v["rows"][2]["precision"], 1.0, "{v}");
}
