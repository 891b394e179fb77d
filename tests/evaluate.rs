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
