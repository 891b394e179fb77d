//! Flags every subcommand shares: `-q` (nothing on stderr but warnings and errors), `-v` (the
//! time the command took; learn: each stage's), and `--threads` where the work is parallel.

mod common;
use common::*;

/// Subcommands that work in parallel (they take `--threads`), then the others.
const PARALLEL: [&str; 7] = [
    "learn",
    "normalize",
    "evaluate",
    "validate",
    "report",
    "verify",
    "cluster",
];
const SERIAL: [&str; 4] = ["synth", "export", "import", "merge"];

#[test]
fn every_subcommand_takes_quiet_and_verbose_and_the_parallel_ones_threads() {
    for sub in PARALLEL.into_iter().chain(SERIAL) {
        let o = dedust(&[sub, "--help"], b"");
        assert!(o.status.success(), "{sub}: {}", stderr(&o));
        let help = stdout(&o);
        assert!(help.contains("-q, --quiet"), "{sub}: {help}");
        assert!(help.contains("-v, --verbose"), "{sub}: {help}");
        assert_eq!(
            help.contains("--threads <THREADS>"),
            PARALLEL.contains(&sub),
            "{sub}: {help}"
        );
    }
    // A thread count of 0 is a usage error wherever the flag exists.
    let o = dedust(
        &["validate", "--threads", "0", "-r", "x", "--truth", "y"],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn quiet_leaves_stderr_empty_and_verbose_says_how_long() {
    let t = TempDir::new("conventions");
    let rules = t.path("rules.json");
    let demo = "datasets/demo/clusters.tsv";
    let quiet: [Vec<&str>; 4] = [
        vec!["learn", demo, "-q", "-o", &rules],
        vec![
            "validate",
            "-r",
            "rules/demo.json",
            "--truth",
            demo,
            "-q",
            "--threads",
            "1",
            "-o",
            &rules,
        ],
        vec!["merge", "rules/demo.json", "-q", "-o", &rules],
        vec!["evaluate", "--truth", demo, "-q", "--threads", "2"],
    ];
    for args in &quiet {
        let o = dedust(args, b"");
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
        // Without -q the same command says what it did.
        let loud: Vec<&str> = args.iter().copied().filter(|a| *a != "-q").collect();
        let o = dedust(&loud, b"");
        assert!(o.status.success());
        if args[0] != "evaluate" {
            assert!(!stderr(&o).is_empty(), "{args:?}");
        }
    }
    let synth = t.path("web");
    let o = dedust(
        &["synth", "--sites", "2", "--pages", "3", "-q", "-o", &synth],
        b"",
    );
    assert!(o.status.success());
    assert_eq!(stderr(&o), "");
    // -v prints the stage times and the total even with -q.
    let o = dedust(&["learn", demo, "-q", "-v", "-o", &rules], b"");
    let err = stderr(&o);
    assert!(err.contains("learn: aligning took"), "{err}");
    assert!(err.contains("dedust: took"), "{err}");
    assert!(
        !err.contains("candidates"),
        "-q still hides the summary: {err}"
    );
    // Warnings still print with -q: export names what it skipped.
    let o = dedust(
        &[
            "export",
            "-r",
            "rules/demo.json",
            "--to",
            "stormcrawler",
            "-q",
        ],
        b"",
    );
    assert!(o.status.success());
    let err = stderr(&o);
    assert!(
        err.lines().count() >= 1,
        "the demo file has a rule Java cannot read"
    );
    assert!(
        err.lines().all(|l| l.starts_with("dedust: warning:")),
        "{err}"
    );
}
