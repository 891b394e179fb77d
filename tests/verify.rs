//! `dedust verify`: content confirms the forum rules' merges; a rule that merges different
//! threads is refuted, `--prune` removes it and `--revoke` marks it revoked.

mod common;
use common::*;

/// 40 plain thread views of the forum crawl, and a cluster file that pairs them two by two —
/// clusters that claim different threads are one page, which content refutes.
fn fake_thread_pairs(clusters: &str) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(clusters).unwrap();
    let threads: Vec<String> = text
        .lines()
        .filter_map(|l| l.split('\t').nth(1))
        .filter(|u| u.starts_with("https://ubuntuforums.org/showthread.php?t=") && !u.contains('&'))
        .take(40)
        .map(str::to_string)
        .collect();
    let mut fake = String::from("cluster\turl\n");
    for (k, pair) in threads.chunks(2).enumerate() {
        for u in pair {
            fake.push_str(&format!("fake{k}\t{u}\n"));
        }
    }
    (threads, fake)
}

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
    let (_, fake) = fake_thread_pairs(&clusters);
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

/// Revocation end to end: `verify --revoke` marks the rule that merges different threads
/// (when, by which pages, the counts) and keeps the others; `normalize` leaves the revoked rule
/// out; `merge` keeps it revoked against the older learning run and lets a later one win.
#[test]
fn refuted_rules_are_revoked_and_merge_honours_it() {
    let (Some(pages), Some(clusters)) = (
        shared("ubuntuforums/pages.jsonl.gz"),
        shared("ubuntuforums/clusters.tsv"),
    ) else {
        return;
    };
    let t = TempDir::new("verify-revoke");
    let (threads, fake) = fake_thread_pairs(&clusters);
    let fake = t.write("fake.tsv", fake.as_bytes());
    let day = 86_400;
    let learn_at = |epoch: u64, out: &str| {
        let o = dedust_at(
            epoch,
            &["learn", &fake, "--no-validate", "-q", "-o", out],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let (old, newer) = (t.path("old.json"), t.path("newer.json"));
    learn_at(TEST_EPOCH, &old);
    learn_at(TEST_EPOCH + 2 * day, &newer);
    let revoked = t.path("revoked.json");
    let o = dedust_at(
        TEST_EPOCH + day,
        &[
            "verify",
            "-r",
            &old,
            "--pages",
            &pages,
            "--revoke",
            "--max-refuted",
            "0.2",
            "-o",
            &revoked,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let before = dedust::RuleFile::read(&old).unwrap();
    let after = dedust::RuleFile::read(&revoked).unwrap();
    assert_eq!(
        after.rules.len(),
        before.rules.len(),
        "revoked rules stay as a record"
    );
    let gone: Vec<&dedust::Rule> = after.rules.iter().filter(|r| r.revoked.is_some()).collect();
    assert!(
        !gone.is_empty(),
        "the wrong rule is revoked: {}",
        stderr(&o)
    );
    for r in &gone {
        let v = r.revoked.as_ref().unwrap();
        assert_eq!(v.at, "2026-11-25T00:00:00Z");
        assert_eq!(v.by, pages);
        assert!(v.refuted * 5 > v.pairs, "{v:?}");
        assert_eq!(r.learned.as_ref().unwrap().at, "2026-11-24T00:00:00Z");
        assert_eq!(r.learned.as_ref().unwrap().from, vec![fake.clone()]);
    }
    // normalize leaves it out: two threads it merged stay apart.
    let pair = [threads[0].as_str(), threads[1].as_str()];
    let with = |rules: &str| {
        let o = dedust(&["normalize", "-r", rules], pair.join("\n").as_bytes());
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    let (merged, _) = with(&old);
    let (apart, note) = with(&revoked);
    assert_eq!(
        merged
            .lines()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        1,
        "{merged}"
    );
    assert_eq!(apart.lines().collect::<Vec<_>>(), pair, "{note}");
    assert!(note.contains("revoked rules left out"), "{note}");
    // merge: revoked against the run it came from, live again after a later run learned it.
    let ids: Vec<&str> = gone.iter().map(|r| r.id.as_str()).collect();
    let merged_state = |files: &[&str]| -> Vec<bool> {
        let out = t.path("merged.json");
        let mut args = vec!["merge"];
        args.extend_from_slice(files);
        args.extend_from_slice(&["-o", &out]);
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let m = dedust::RuleFile::read(&out).unwrap();
        ids.iter()
            .map(|id| {
                m.rules
                    .iter()
                    .find(|r| r.id == *id)
                    .unwrap()
                    .revoked
                    .is_some()
            })
            .collect()
    };
    // `validate -o` writes the rules again and carries the records through.
    let v = t.path("validated.json");
    let o = dedust(
        &["validate", "-r", &revoked, "--truth", &clusters, "-o", &v],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let after_validate = dedust::RuleFile::read(&v).unwrap();
    for id in &ids {
        assert!(
            after_validate
                .rules
                .iter()
                .any(|r| r.id == *id && r.revoked.is_some()),
            "{id} lost by validate -o"
        );
    }
    // One rule file per --revoke run.
    let o = dedust(
        &[
            "verify",
            "-r",
            &old,
            "-r",
            &newer,
            "--pages",
            &pages,
            "--revoke",
            "-o",
            &t.path("two.json"),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(merged_state(&[&old, &revoked]).iter().all(|&x| x));
    assert!(merged_state(&[&revoked, &old]).iter().all(|&x| x));
    assert!(merged_state(&[&revoked, &newer]).iter().all(|&x| !x));
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
    let v = |extra: &[&str]| {
        let mut args = vec!["verify", "-r", "rules/demo.json", "--pages", "x.jsonl"];
        args.extend_from_slice(extra);
        dedust(&args, b"").status.code()
    };
    assert_eq!(v(&["--revoke"]), Some(2), "--revoke needs -o");
    assert_eq!(
        v(&["--revoke", "--prune", "-o", "y.json"]),
        Some(2),
        "one or the other"
    );
    let o = dedust_at(0, &["learn", "datasets/demo/clusters.tsv", "-q"], b"");
    let f = dedust::RuleFile::parse(&stdout(&o), "stdout").unwrap();
    assert!(f
        .rules
        .iter()
        .all(|r| r.learned.as_ref().unwrap().at == "1970-01-01T00:00:00Z"));
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_dedust"));
    let o = cmd
        .args(["learn", "datasets/demo/clusters.tsv", "-q"])
        .env("SOURCE_DATE_EPOCH", "yesterday")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "a bad SOURCE_DATE_EPOCH is an error"
    );
    assert!(stderr(&o).contains("SOURCE_DATE_EPOCH"), "{}", stderr(&o));
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

/// A cross-host rule that content refutes on one site only: `verify --revoke` excepts that site
/// (host evidence beats global evidence) instead of revoking the rule for every site.
#[test]
fn a_cross_host_rule_refuted_on_one_site_is_excepted_there() {
    let t = TempDir::new("verify-except");
    let mut pages = String::new();
    let mut page = |url: &str, topic: &str| {
        let line = serde_json::json!({"url": url, "html": article(topic)});
        pages.push_str(&format!("{line}\n"));
    };
    // `ref` changes nothing on a.org and c.org; on b.org it picks another article.
    for (host, topic) in [("a.org", "harbour"), ("c.org", "orchard")] {
        for (path, t2) in [("x", "1"), ("y", "2")] {
            let topic = format!("{topic}{t2}");
            page(&format!("http://{host}/{path}"), &topic);
            page(&format!("http://{host}/{path}?ref=feed"), &topic);
        }
    }
    page("http://b.org/z", "glacier");
    page("http://b.org/z?ref=feed", "volcano");
    let pages = t.write("pages.jsonl", pages.as_bytes());
    let file = drop_everywhere("ref");
    let rules = t.write("rules.json", file.to_json().as_bytes());
    let out = t.path("out.json");
    let o = dedust(
        &[
            "verify",
            "-r",
            &rules,
            "--pages",
            &pages,
            "--revoke",
            "--max-refuted",
            "0.1",
            "-o",
            &out,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let report = stdout(&o);
    let row: Vec<&str> = report.lines().nth(1).unwrap().split('\t').collect();
    assert_eq!((row[1], row[2], row[3]), ("5", "4", "1"), "{report}");
    let after = dedust::RuleFile::read(&out).unwrap();
    assert!(after.rules[0].revoked.is_none(), "{}", stderr(&o));
    assert_eq!(after.rules[0].except, vec!["b.org".to_string()]);
    assert!(stderr(&o).contains("excepted on b.org"), "{}", stderr(&o));
}

#[test]
fn json_report_has_one_object_per_rule() {
    let t = TempDir::new("verify-json");
    let dir = t.path("s");
    assert!(dedust(
        &["synth", "--sites", "2", "--pages", "30", "--html", "-q", "-o", &dir],
        b""
    )
    .status
    .success());
    let pages = format!("{dir}/pages.jsonl.gz");
    let args = ["verify", "-r", "rules/demo.json", "--pages", &pages, "-q"];
    let tsv = stdout(&dedust(&args, b""));
    let o = dedust(&[&args[..], &["--json"]].concat(), b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rows = v.as_array().unwrap();
    // The same rows as the TSV report, in the same order, with the same counts.
    let lines: Vec<&str> = tsv.lines().skip(1).collect();
    assert_eq!(rows.len(), lines.len());
    for (r, l) in rows.iter().zip(&lines) {
        let cells: Vec<&str> = l.split('\t').collect();
        assert_eq!(r["id"], cells[0]);
        assert_eq!(r["pairs"].to_string(), cells[1]);
        assert_eq!(r["refuted"].to_string(), cells[3]);
    }
    assert!(rows.iter().any(|r| r["pairs"].as_u64().unwrap() > 0));
}
