//! The README's first command works and prints rules and metrics a newcomer can read.

mod common;
use common::*;

#[test]
fn readme_first_command() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let first = readme
        .lines()
        .find(|l| l.trim_start().starts_with("cargo run"))
        .unwrap();
    let args: Vec<&str> = first
        .split("-- ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .collect();
    let o = dedust(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("# learned rules"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("rules ")), "{out}");
    // The test command in README is the one .ci/run runs.
    let test_cmd = readme
        .lines()
        .find(|l| l.trim_start().starts_with("cargo test"))
        .unwrap()
        .trim();
    let ci = std::fs::read_to_string(".ci/run").unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == test_cmd),
        "README test command not in .ci/run"
    );
}
