//! `dedust merge`: rule files learned on shards that hold whole groups of hosts merge, whatever
//! the order of the shards, into cross-host rules that a single `learn` over all the data also
//! keeps, with the same pooled numbers, and nothing lost; mismatched files are refused.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

fn host(u: &str) -> &str {
    u.split("://")
        .nth(1)
        .unwrap_or("")
        .split('/')
        .next()
        .unwrap_or("")
}

#[test]
fn shards_of_whole_host_groups_merge_into_the_single_run() {
    let t = TempDir::new("merge");
    let tsv = std::fs::read_to_string("datasets/demo/clusters.tsv").unwrap();
    let rows: Vec<(&str, &str)> = tsv
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once('\t'))
        .collect();
    // Hosts that share a cluster belong together (union-find on host names).
    let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
    fn find<'a>(p: &mut BTreeMap<&'a str, &'a str>, x: &'a str) -> &'a str {
        let mut x = x;
        while let Some(&y) = p.get(x) {
            if y == x {
                break;
            }
            x = y;
        }
        x
    }
    let mut by_cluster: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (c, u) in &rows {
        by_cluster.entry(c).or_default().insert(host(u));
        parent.entry(host(u)).or_insert(host(u));
    }
    for hosts in by_cluster.values() {
        let mut it = hosts.iter();
        let first = find(&mut parent, it.next().unwrap());
        for h in it {
            let r = find(&mut parent, h);
            if r != first {
                parent.insert(r, first);
            }
        }
    }
    let groups: BTreeSet<&str> = parent
        .keys()
        .map(|h| find(&mut parent.clone(), h))
        .collect();
    assert!(groups.len() >= 3, "{groups:?}");
    // Two shards: alternate groups.
    let shard_of: BTreeMap<&str, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (*g, i % 2))
        .collect();
    let mut shards = [
        String::from("cluster\turl\n"),
        String::from("cluster\turl\n"),
    ];
    for (c, u) in &rows {
        let g = find(&mut parent, host(u));
        shards[shard_of[g]].push_str(&format!("{c}\t{u}\n"));
    }
    let mut files = vec![];
    for (i, s) in shards.iter().enumerate() {
        let input = t.write(&format!("shard{i}.tsv"), s.as_bytes());
        let out = t.path(&format!("shard{i}.json"));
        assert!(dedust(&["learn", &input, "-q", "-o", &out], b"")
            .status
            .success());
        files.push(out);
    }
    let whole = t.path("whole.json");
    assert!(dedust(
        &["learn", "datasets/demo/clusters.tsv", "-q", "-o", &whole],
        b""
    )
    .status
    .success());
    let whole_text = std::fs::read_to_string(&whole).unwrap();
    // Cross-host rules by id, without the exceptions the host rules add in `learn`.
    let cross_host = |text: &str| -> BTreeMap<String, (String, String, u64, u64)> {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        v["rules"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["scope"] == "*" && r["kind"] != "regex")
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    (
                        r["pattern"].as_str().unwrap().to_string(),
                        r["target"].as_str().unwrap().to_string(),
                        r["support"].as_u64().unwrap(),
                        r["fp"].as_u64().unwrap(),
                    ),
                )
            })
            .collect()
    };
    let single = cross_host(&whole_text);
    assert!(
        !single.is_empty(),
        "no cross-host rule learned: the test proves nothing"
    );
    // The learned rules' row of `evaluate` on the demo set.
    let scored = |rules: &str| -> serde_json::Value {
        let o = dedust(
            &[
                "evaluate",
                "--truth",
                "datasets/demo/clusters.tsv",
                "-r",
                rules,
                "--json",
            ],
            b"",
        );
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["rows"][2].take()
    };
    let lost = |rules: &str| -> String { format!("{}", scored(rules)["lost"]) };
    let mut outs = vec![];
    for order in [[0, 1], [1, 0]] {
        let out = t.path(&format!("merged{}{}.json", order[0], order[1]));
        let o = dedust(
            &["merge", &files[order[0]], &files[order[1]], "-o", &out],
            b"",
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains("0 conflicts"), "{}", stderr(&o));
        let text = std::fs::read_to_string(&out).unwrap();
        // Every merged cross-host rule is the single run's, with the same pooled numbers (a
        // candidate only some shards validated is left out, never taken on partial evidence).
        let merged = cross_host(&text);
        assert!(
            !merged.is_empty(),
            "pooled evidence kept no cross-host rule"
        );
        for (id, r) in &merged {
            assert_eq!(single.get(id), Some(r), "{id} ({order:?})");
        }
        assert_eq!(
            lost(&out),
            lost(&whole),
            "merged rules lose content ({order:?})"
        );
        outs.push(text);
    }
    assert_eq!(outs[0], outs[1], "merge depends on the order of its inputs");

    // The sharded job integrations/spark runs: every shard learns with `--shard` (a cross-host
    // template seen on one site of the shard is still proposed, its sites counted); pass 2
    // validates every shard's candidates on every shard, the pooled evidence decides the tier;
    // pass 3 learns each shard's host rules around that tier.
    let reduction = |rules: &str| -> f64 { scored(rules)["reduction"].as_f64().unwrap() };
    let pass = |n: usize, extra: &[&str]| -> String {
        let mut files = vec![];
        for (i, s) in shards.iter().enumerate() {
            let input = t.path(&format!("shard{i}.tsv"));
            let out = t.path(&format!("pass{n}-shard{i}.json"));
            let mut args = vec!["learn", input.as_str(), "-q", "--shard", "-o", out.as_str()];
            args.extend(extra);
            let o = dedust(&args, b"");
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(!s.is_empty());
            files.push(out);
        }
        let out = t.path(&format!("pass{n}.json"));
        let o = dedust(&["merge", &files[0], &files[1], "-o", &out], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let pass1 = pass(1, &[]);
    let pass2 = pass(2, &["--cross-host-candidates", &pass1]);
    let pass3 = pass(
        3,
        &[
            "--cross-host-candidates",
            &pass2,
            "--cross-host-decided",
            &pass2,
        ],
    );
    let (t1, t2, t3) = (
        std::fs::read_to_string(&pass1).unwrap(),
        std::fs::read_to_string(&pass2).unwrap(),
        std::fs::read_to_string(&pass3).unwrap(),
    );
    // Complete evidence: pass 2 keeps at least pass 1's tier, pass 3 exactly pass 2's, with the
    // single run's numbers for every rule the single run also keeps.
    let (c1, c2, c3) = (cross_host(&t1), cross_host(&t2), cross_host(&t3));
    assert!(c1.keys().all(|id| c2.contains_key(id)), "{c1:?}\n{c2:?}");
    assert_eq!(c2, c3, "pass 3 holds the decided tier");
    for (id, r) in &c3 {
        if let Some(w) = single.get(id) {
            assert_eq!(w, r, "{id}");
        }
    }
    let v: serde_json::Value = serde_json::from_str(&t3).unwrap();
    assert!(v["evidence"].as_array().unwrap().len() >= c3.len());
    // Learned with `--shard` in three passes, the merged rules are the single run's byte for
    // byte (but for provenance: `learned`, which names each run's input, and `consensus`, the
    // sample of the rule's family each run read).
    let rules_of = |text: &str| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
        for r in v["rules"].as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("learned");
            r.as_object_mut().unwrap().remove("consensus");
        }
        v["rules"].take()
    };
    assert_eq!(
        rules_of(&t3),
        rules_of(&whole_text),
        "pass 3 differs from one run"
    );
    let (r1, r3, rs) = (reduction(&pass1), reduction(&pass3), reduction(&whole));
    assert!(r3 >= r1, "pass 3 reduces less than pass 1: {r3} < {r1}");
    assert_eq!(lost(&pass3), lost(&whole), "pass 3 loses content");
    eprintln!(
        "demo in two shards: cross-host rules pass 1 {}, pass 3 {}, single run {}; reduction {r1:.3} → {r3:.3} (single run {rs:.3})",
        c1.len(),
        c3.len(),
        single.len()
    );
}

#[test]
fn mismatched_or_broken_files_are_refused() {
    let t = TempDir::new("merge-bad");
    let a = t.path("a.json");
    let b = t.path("b.json");
    assert!(dedust(
        &["learn", "datasets/demo/clusters.tsv", "-q", "-o", &a],
        b""
    )
    .status
    .success());
    assert!(dedust(
        &[
            "learn",
            "datasets/demo/clusters.tsv",
            "-q",
            "--max-fpr",
            "0.05",
            "-o",
            &b
        ],
        b""
    )
    .status
    .success());
    let o = dedust(&["merge", &a, &b], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("b.json"), "{}", stderr(&o));
    let o = dedust(&["merge", &a, &t.path("missing.json")], b"");
    assert_eq!(o.status.code(), Some(1));
    let o = dedust(&["merge"], b"");
    assert_eq!(o.status.code(), Some(2), "no file is a usage error");
    // The same file twice: every rule kept once.
    let o = dedust(&["merge", &a, &a], b"");
    assert!(o.status.success());
    assert_eq!(o.stdout, std::fs::read(&a).unwrap());
}

/// `merge --partial`: shards of a synthetic web merged as a tree give the flat merge byte for
/// byte; the partial file is refused by `normalize` and `export` with the way to finish it.
#[test]
fn a_tree_of_partial_merges_gives_the_flat_merge() {
    let t = TempDir::new("merge-partial");
    let dir = t.path("web");
    let o = dedust(
        &[
            "synth", "--sites", "9", "--pages", "20", "--seed", "2", "-o", &dir,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let tsv = std::fs::read_to_string(format!("{dir}/clusters.tsv")).unwrap();
    let rows: Vec<(&str, &str)> = tsv
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once('\t'))
        .collect();
    // Rows keyed by their site, as the Spark job keys them (`dedust site`).
    let urls: String = rows.iter().map(|(_, u)| format!("{u}\n")).collect();
    let o = dedust(&["site", "-q", "-"], urls.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    let sites: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(sites.len(), rows.len());
    let order: Vec<&String> = sites.iter().collect::<BTreeSet<_>>().into_iter().collect();
    let mut shards = vec![String::from("cluster\turl\n"); 3];
    for ((c, u), s) in rows.iter().zip(&sites) {
        let k = order.iter().position(|x| *x == s).unwrap() % 3;
        shards[k].push_str(&format!("{c}\t{u}\n"));
    }
    let mut files = vec![];
    for (i, s) in shards.iter().enumerate() {
        let input = t.write(&format!("s{i}.tsv"), s.as_bytes());
        let out = t.path(&format!("s{i}.json"));
        let o = dedust(&["learn", &input, "-q", "--shard", "-o", &out], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        files.push(out);
    }
    let run = |args: &[&str]| {
        let o = dedust(args, b"");
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        o.stdout
    };
    let flat = run(&["merge", &files[0], &files[1], &files[2]]);
    assert!(String::from_utf8_lossy(&flat).contains("\"scope\": \"*\""));
    let p = t.path("p.json");
    run(&["merge", "--partial", &files[0], &files[2], "-o", &p]);
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .contains("\"format\": \"dedust-rules-partial\""));
    assert_eq!(run(&["merge", &p, &files[1]]), flat);
    assert_eq!(run(&["merge", &files[1], &p]), flat);
    for args in [
        vec!["normalize", "-r", p.as_str()],
        vec!["export", "-r", p.as_str(), "--to", "nutch"],
    ] {
        let o = dedust(&args, b"http://a.org/x\n");
        assert_ne!(o.status.code(), Some(0), "{args:?}");
        assert!(
            stderr(&o).contains("partial merge") && stderr(&o).contains("dedust merge"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

/// A learned file and an imported list (or two files learned with other thresholds) are each
/// usable, but cannot be merged: the refusal says why in words, names both files, and says to
/// pass both with `-r` instead; it never calls either file bad.
#[test]
fn files_learned_differently_are_refused_in_words() {
    let t = TempDir::new("merge-mismatch");
    let learned = t.path("learned.json");
    let strict = t.path("strict.json");
    for (out, extra) in [(&learned, None), (&strict, Some("5"))] {
        let mut args = vec!["learn", "datasets/demo/clusters.tsv", "-o", out.as_str()];
        if let Some(n) = extra {
            args.extend(["--min-support", n]);
        }
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let xml = t.path("list.xml");
    std::fs::write(
        &xml,
        "<regex-normalize><regex><pattern>[?&amp;]sid=[0-9a-f]+$</pattern><substitution></substitution></regex></regex-normalize>\n",
    )
    .unwrap();
    let list = t.path("list.json");
    assert!(
        dedust(&["import", "--from", "nutch", &xml, "-o", &list], b"")
            .status
            .success()
    );
    for (other, why) in [
        (&list, "was not validated"),
        (&strict, "--min-support 5 in"),
    ] {
        let o = dedust(&["merge", &learned, other, "-o", &t.path("m.json")], b"");
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(why), "{err}");
        assert!(
            err.contains(&learned) && err.contains(other.as_str()),
            "{err}"
        );
        assert!(err.contains("-r"), "{err}");
        assert!(
            !err.contains("bad rule file") && !err.contains("Settings {"),
            "{err}"
        );
    }
}
