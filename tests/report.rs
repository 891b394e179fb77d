//! `dedust report`: a self-contained HTML page with the curve, metrics and rules.

mod common;
use common::*;

#[test]
fn report_is_self_contained_html() {
    let t = TempDir::new("report");
    let out = t.path("r.html");
    let o = dedust(
        &[
            "report",
            "--truth",
            "datasets/demo/clusters.tsv",
            "-o",
            &out,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg") && html.contains("<polyline"));
    assert!(html.contains("learned rules") && html.contains("reduction"));
    assert!(
        html.matches("<circle").count() >= 9,
        "one point per threshold"
    );
    assert!(html.contains("→ <code>"), "rules table has rows");
    // The report says which release wrote it and how to make it again (quoted for a shell).
    assert!(
        html.contains(&format!(
            "Written by dedust {}: dedust report --truth datasets/demo/clusters.tsv -o ",
            env!("CARGO_PKG_VERSION")
        )) && html.contains("r.html</p>"),
        "{html}"
    );
    assert!(
        !html.contains("<script") && !html.contains("src=\"http"),
        "no external resources"
    );
}
