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

/// Run `cmd` to its end or for at most `secs` seconds (then kill it); `true` when it exited 0.
fn run_bounded(mut cmd: std::process::Command, secs: u64) -> bool {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the browser");
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st.success();
        }
        if start.elapsed().as_secs() > secs {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn report_renders_in_headless_chromium() {
    let browser = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(browser) = browser else {
        eprintln!("SKIP: no chromium on PATH; the report's browser check needs one");
        return;
    };
    let t = TempDir::new("report-browser");
    let html = t.path("r.html");
    let o = dedust(
        &[
            "report",
            "--truth",
            "datasets/demo/clusters.tsv",
            "-q",
            "-o",
            &html,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let png = t.path("r.png");
    let mut cmd = std::process::Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1000,1400",
    ])
    .arg(format!("--user-data-dir={}", t.path("profile")))
    .arg(format!("--screenshot={png}"))
    .arg(format!("file://{html}"));
    assert!(run_bounded(cmd, 90), "{browser} did not render the report");
    let bytes = std::fs::read(&png).expect("a screenshot");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    // A blank 1000×1400 page compresses to a few KB; the curve, tables and text take more.
    assert!(
        bytes.len() > 20_000,
        "{} bytes: the page looks empty",
        bytes.len()
    );
    eprintln!("report screenshot: {} bytes ({browser})", bytes.len());
}

#[test]
fn report_draws_a_rules_family_graph() {
    let t = TempDir::new("report-graph");
    let (html, svg) = (t.path("r.html"), t.path("g.svg"));
    let run = |rule: &str| {
        dedust(
            &[
                "report",
                "--truth",
                "datasets/demo/clusters.tsv",
                "-o",
                &html,
                "--graph",
                rule,
                "--graph-output",
                &svg,
            ],
            b"",
        )
    };
    // A rule no kept rule names is an error that says so; nothing is written.
    let o = run("no-such-rule");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--graph no-such-rule: no kept rule"),
        "{}",
        stderr(&o)
    );
    assert!(!std::path::Path::new(&svg).exists());
    // `://` is in every pattern: the first kept rule's family is drawn.
    let o = run("://");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let nodes: usize = err
        .split(" nodes)")
        .next()
        .and_then(|s| s.rsplit(", ").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no node count in: {err}"));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{text}");
    // One box per alignment node, and at least the URL's scheme, host and a path token.
    assert_eq!(text.matches("<rect class=\"node").count(), nodes, "{text}");
    assert!(nodes >= 3, "{nodes}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Alignment graph of rule") && page.contains("<rect class=\"node"));
    assert!(
        page.contains("consensus of "),
        "the rules table shows each rule's consensus"
    );
}
