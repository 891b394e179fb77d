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
