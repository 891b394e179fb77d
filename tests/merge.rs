//! `dedust merge`: rule files learned on shards that hold whole groups of hosts merge into the
//! file `learn` writes from all the data, whatever the order of the shards; mismatched files are
//! refused.

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
    let whole = std::fs::read(&whole).unwrap();
    for order in [[0, 1], [1, 0]] {
        let o = dedust(&["merge", &files[order[0]], &files[order[1]]], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            o.stdout == whole,
            "merged shards differ from the single run ({order:?})"
        );
        assert!(stderr(&o).contains("0 conflicts"), "{}", stderr(&o));
    }
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
