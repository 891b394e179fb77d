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
