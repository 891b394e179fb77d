//! `dedust completions SHELL` and `dedust man`: scripts and a man page generated from the CLI
//! definition (clap_complete, clap_mangen), so they list every subcommand and flag.

mod common;
use common::*;

#[test]
fn completion_scripts_name_every_subcommand() {
    for (shell, marker) in [
        ("bash", "_dedust()"),
        ("zsh", "#compdef dedust"),
        ("fish", "complete -c dedust"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[dedust]"),
    ] {
        let o = dedust(&["completions", shell], b"");
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let s = stdout(&o);
        assert!(s.contains(marker), "{shell}: {s}");
        for sub in ["learn", "normalize", "export", "verify", "completions"] {
            assert!(s.contains(sub), "{shell} lacks {sub}");
        }
        assert!(s.contains("max-fpr"), "{shell} lacks learn's flags");
    }
    let o = dedust(&["completions", "tcsh"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("possible values"), "{}", stderr(&o));
}

#[test]
fn man_page_is_roff_with_the_subcommands() {
    let o = dedust(&["man"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains(".TH dedust 1"), "{s}");
    for sub in ["learn", "normalize", "evaluate", "export"] {
        assert!(s.contains(sub), "man page lacks {sub}");
    }
}

#[test]
fn every_help_has_examples_that_use_real_flags() {
    let subs = [
        "learn",
        "normalize",
        "evaluate",
        "synth",
        "validate",
        "report",
        "export",
        "import",
        "merge",
        "verify",
        "cluster",
    ];
    let help = |sub: &str| stdout(&dedust(&[sub, "--help"], b""));
    for sub in subs {
        let h = help(sub);
        let ex = h
            .split("Examples:")
            .nth(1)
            .unwrap_or_else(|| panic!("{sub} --help has no examples"));
        for line in ex.lines().filter(|l| l.trim().starts_with("dedust ")) {
            // Each command of a pipeline against its own subcommand's flags.
            for part in line.split('|').map(str::trim) {
                let mut words = part.split_whitespace();
                if words.next() != Some("dedust") {
                    continue;
                }
                let cmd = words.next().unwrap();
                let flags = help(cmd);
                for w in words.filter(|w| w.starts_with('-') && *w != "-") {
                    let shown = flags.contains(&format!("{w} "))
                        || flags.contains(&format!("{w},"))
                        || flags.contains(&format!("{w}\n"));
                    assert!(shown, "`{part}` in {sub} --help: {cmd} has no {w}");
                }
            }
        }
    }
}
