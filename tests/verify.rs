//! `dedust verify`: content confirms the forum rules' merges; a rule that merges different
//! threads is refuted and `--prune` removes it.

mod common;
use common::*;

#[test]
fn forum_rules_confirmed_and_a_wrong_rule_pruned() {
    let (Some(pages), Some(clusters)) = (
        shared("ubuntuforums/pages.jsonl.gz"),
        shared("ubuntuforums/clusters.tsv"),
    ) else {
        return;
    };
    let t = TempDir::new("verify");
    let good = t.path("good.json");
    assert!(dedust(&["learn", &clusters, "-q", "-o", &good], b"")
        .status
        .success());
    let o = dedust(&["verify", "--rules", &good, "--pages", &pages], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    let lines: Vec<Vec<&str>> = report
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(!lines.is_empty());
    let confirmed: usize = lines.iter().map(|c| c[2].parse::<usize>().unwrap()).sum();
    let refuted: usize = lines.iter().map(|c| c[3].parse::<usize>().unwrap()).sum();
    assert!(
        confirmed > 100 && refuted * 20 <= confirmed,
        "{confirmed} {refuted}\n{report}"
    );

    // A wrong rule: clusters that claim different threads are one page.
    let text = std::fs::read_to_string(&clusters).unwrap();
    let threads: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split('\t').nth(1))
        .filter(|u| u.starts_with("https://ubuntuforums.org/showthread.php?t=") && !u.contains('&'))
        .take(40)
        .collect();
    let mut fake = String::from("cluster\turl\n");
    for (k, pair) in threads.chunks(2).enumerate() {
        for u in pair {
            fake.push_str(&format!("fake{k}\t{u}\n"));
        }
    }
    let fake = t.write("fake.tsv", fake.as_bytes());
    let bad = t.path("bad.json");
    assert!(
        dedust(&["learn", &fake, "--no-validate", "-q", "-o", &bad], b"")
            .status
            .success()
    );
    let pruned = t.path("pruned.json");
    let o = dedust(
        &[
            "verify",
            "-r",
            &bad,
            "--pages",
            &pages,
            "--prune",
            "--max-refuted",
            "0.2",
            "-o",
            &pruned,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    let refuted_rules: Vec<&str> = report
        .lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(4).unwrap().parse::<f64>().unwrap() > 0.2)
        .collect();
    assert!(
        !refuted_rules.is_empty(),
        "the wrong rule is refuted:\n{report}"
    );
    let before = dedust::RuleFile::read(&bad).unwrap().rules.len();
    let after = dedust::RuleFile::read(&pruned).unwrap().rules.len();
    assert_eq!(after, before - refuted_rules.len(), "{}", stderr(&o));
}

#[test]
fn usage_errors() {
    let o = dedust(
        &[
            "verify",
            "--rules",
            "rules/demo.json",
            "--pages",
            "x.jsonl",
            "--prune",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "--prune needs -o");
    let o = dedust(
        &[
            "verify",
            "--rules",
            "rules/demo.json",
            "--pages",
            "missing.jsonl",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
}
