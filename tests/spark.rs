//! The Spark jobs (`integrations/spark/dedust_spark.py`) in local mode give byte for byte what
//! single-process `dedust learn` / `dedust normalize` give (`integrations/spark/
//! test_spark_local.py` does the work and prints every command it runs). Needs `pyspark`
//! (.ci/run installs it from PyPI) and Java; without them the test prints a skip notice, and
//! fails when `CI=true`.

mod common;
use common::*;
use std::process::Command;

#[test]
fn spark_local_mode_matches_single_process() {
    if shared("ubuntuforums/clusters.tsv").is_none() || shared("urls/page-links.txt").is_none() {
        return;
    }
    let have = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ci = std::env::var("CI").as_deref() == Ok("true");
    for (what, ok) in [
        (
            "pyspark (pip install pyspark)",
            have("python3", &["-c", "import pyspark"]),
        ),
        ("java", have("java", &["-version"])),
    ] {
        if !ok {
            assert!(!ci, "CI=true but {what} is missing");
            eprintln!("SKIP: {what} not found; the Spark local-mode test needs it");
            return;
        }
    }
    let t = TempDir::new("spark");
    let datasets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    let out = Command::new("python3")
        .arg("integrations/spark/test_spark_local.py")
        .arg(env!("CARGO_BIN_EXE_dedust"))
        .arg(&datasets)
        .arg(t.path("work"))
        .output()
        .expect("run python3");
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert!(
        out.status.success(),
        "Spark test failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "OK learn forum",
        "OK learn synth",
        "OK learn cc",
        "OK normalize (text)",
        "OK normalize (parquet)",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}
