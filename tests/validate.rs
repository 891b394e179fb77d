//! `dedust validate`: candidates in, validated rules out, numbers recorded.

mod common;
use common::*;

#[test]
fn validate_keeps_supported_rules_and_records_numbers() {
    let t = TempDir::new("validate");
    let dir = t.path("s");
    assert!(dedust(
        &["synth", "--sites", "3", "--pages", "60", "--seed", "5", "-o", &dir],
        b""
    )
    .status
    .success());
    let truth = format!("{dir}/clusters.tsv");
    let cands = t.path("cands.json");
    assert!(
        dedust(&["learn", &truth, "--no-validate", "-o", &cands], b"")
            .status
            .success()
    );
    let kept = t.path("kept.json");
    let o = dedust(
        &[
            "validate",
            "--rules",
            &cands,
            "--truth",
            &truth,
            "--min-support",
            "10",
            "--max-fpr",
            "0.0",
            "-o",
            &kept,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("kept"), "{}", stderr(&o));
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cands).unwrap()).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
    let rules = v["rules"].as_array().unwrap();
    assert!(!rules.is_empty());
    assert!(rules.len() < all["rules"].as_array().unwrap().len());
    for r in rules {
        assert!(r["support"].as_u64().unwrap() >= 10, "{r}");
        assert_eq!(r["fp"].as_u64().unwrap(), 0, "{r}");
    }
    assert_eq!(v["validation"]["min_support"], 10);
}

#[test]
fn forum_trap_rules_are_rejected() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let t = TempDir::new("validate-forum");
    let cands = t.path("cands.json");
    assert!(
        dedust(&["learn", &clusters, "--no-validate", "-o", &cands], b"")
            .status
            .success()
    );
    let kept = t.path("kept.json");
    let o = dedust(
        &[
            "validate", "--rules", &cands, "--truth", &clusters, "-o", &kept,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(
        &kept,
        &[
            // Dropping `p` next to `t` merges different pages of long threads: rejected.
            "https://ubuntuforums.org/showthread.php?t=2396025&p=13788823",
            "https://ubuntuforums.org/showthread.php?t=2396025",
            // `page` of a forum listing is content.
            "https://ubuntuforums.org/forumdisplay.php?f=334&page=101",
            "https://ubuntuforums.org/forumdisplay.php?f=334&page=1001",
        ],
    );
    assert_ne!(out[0], out[1]);
    assert_ne!(out[2], out[3]);
}

#[test]
fn json_report_lists_every_rule_with_its_numbers_and_verdict() {
    let t = TempDir::new("validate-json");
    let kept = t.path("kept.json");
    let demo = "datasets/demo/clusters.tsv";
    let all = t.path("all.json");
    assert!(
        dedust(&["learn", demo, "-q", "--no-validate", "-o", &all], b"")
            .status
            .success()
    );
    let o = dedust(
        &[
            "validate", "-r", &all, "--truth", demo, "-o", &kept, "--json", "-q",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v["rules"].as_array().unwrap();
    let file = dedust::RuleFile::parse(&std::fs::read_to_string(&kept).unwrap(), "k").unwrap();
    assert_eq!(rows.len() as u64, v["candidates"].as_u64().unwrap());
    // "kept" marks exactly the rules written out, and every row carries its numbers.
    let marked = rows.iter().filter(|r| r["kept"] == true).count();
    assert_eq!(marked, file.rules.len());
    assert_eq!(marked as u64, v["kept"].as_u64().unwrap());
    assert!(marked < rows.len(), "some candidates are rejected");
    for r in rows {
        let (s, f) = (r["support"].as_u64().unwrap(), r["fp"].as_u64().unwrap());
        assert!(f <= s, "{r}");
    }
    // --json prints the report on stdout, so the rules need -o.
    let o = dedust(&["validate", "-r", &all, "--truth", demo, "--json"], b"");
    assert_eq!(o.status.code(), Some(2));
}

/// What the data says of each rule is reported apart (untested, supported, refuted), and
/// `--keep-untested` keeps every rule it does not refute, never a refuted one.
#[test]
fn validate_reports_untested_supported_refuted_and_keeps_the_unrefuted() {
    let t = TempDir::new("validate-evidence");
    let xml = t.path("list.xml");
    std::fs::write(
        &xml,
        r#"<regex-normalize>
<regex><pattern>utm_source=[^&amp;]*&amp;</pattern><substitution></substitution></regex>
<regex><pattern>\?ref=[^&amp;]*$</pattern><substitution></substitution></regex>
<regex><pattern>zzz=[^&amp;]*&amp;</pattern><substitution></substitution></regex>
</regex-normalize>
"#,
    )
    .unwrap();
    let list = t.path("list.json");
    let o = dedust(&["import", "--from", "nutch", &xml, "-o", &list], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let truth = t.path("truth.tsv");
    std::fs::write(
        &truth,
        "cluster\turl\n\
         a\thttps://h.org/a?x=1\n\
         a\thttps://h.org/a?utm_source=t&x=1\n\
         b\thttps://h.org/b?ref=1\n\
         c\thttps://h.org/b?ref=2\n",
    )
    .unwrap();
    let run = |extra: &[&str]| {
        let kept = t.path("kept.json");
        let mut args = vec![
            "validate", "-r", &list, "--truth", &truth, "-o", &kept, "--json",
        ];
        args.extend_from_slice(extra);
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let by_pattern = |needle: &str| {
            report["rules"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["pattern"].as_str().unwrap().contains(needle))
                .unwrap_or_else(|| panic!("{needle}: {report}"))
                .clone()
        };
        let row = |n: &str| {
            let r = by_pattern(n);
            (
                r["evidence"].as_str().unwrap().to_string(),
                r["kept"].as_bool().unwrap(),
            )
        };
        (
            report["evidence"].clone(),
            row("utm_source"),
            row("ref"),
            row("zzz"),
            stderr(&o),
        )
    };
    let (counts, utm, rf, zzz, err) = run(&[]);
    assert_eq!(
        counts,
        serde_json::json!({"untested": 1, "supported": 1, "refuted": 1})
    );
    assert_eq!(utm.0, "supported");
    assert_eq!(rf, ("refuted".to_string(), false));
    assert_eq!(zzz, ("untested".to_string(), false));
    assert!(err.contains("1 untested, 1 supported, 1 refuted"), "{err}");
    let (_, utm, rf, zzz, err) = run(&["--keep-untested"]);
    assert_eq!(utm, ("supported".to_string(), true));
    assert_eq!(rf, ("refuted".to_string(), false));
    assert_eq!(zzz, ("untested".to_string(), true));
    assert!(err.contains("every rule not refuted"), "{err}");
}
