//! `dedust learn` on real web-archive indexes: what the index proves (same, different, unknown).
//!
//! In: the Common Crawl CDXJ shard and pywb's iana.org index of the shared datasets (skipped with
//! a notice when absent, failing when `CI=true`), learned on themselves with and without
//! `--priors`. Out: assertions on the rule files, through `dedust normalize`. Invariants: the
//! http/https captures of one SURT key share a normalized URL (their digests differ: unknown
//! evidence, judged by record length), no two other SURT keys do, robots.txt captures form no
//! cluster; pywb's revisits join their digest groups, which collapse, never across registrable
//! domains. Complexity: four `learn` runs on 1,140 and 171 lines.

mod common;
use common::*;
use std::collections::{BTreeMap, BTreeSet};

/// `(SURT key, JSON)` of each CDXJ line.
fn cdxj(path: &str) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.splitn(3, ' ');
            let key = f.next().unwrap().to_string();
            (key, serde_json::from_str(f.nth(1).unwrap()).unwrap())
        })
        .collect()
}

/// Learn `input` (with `extra` options) and normalize `urls` with the result; the summary on
/// stderr too.
fn learn_normalize(
    t: &TempDir,
    input: &str,
    extra: &[&str],
    urls: &[&str],
) -> (BTreeMap<String, String>, String) {
    let rules = t.path("r.json");
    let mut args = vec!["learn", input, "-o", &rules];
    args.extend(extra);
    let o = dedust(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(&rules, urls);
    assert_eq!(out.len(), urls.len());
    let map = urls.iter().map(|u| u.to_string()).zip(out).collect();
    (map, stderr(&o))
}

#[test]
fn common_crawl_http_https_pairs_merge_and_other_pages_stay_apart() {
    let Some(path) = shared("webarchive/cc-main-2024-30-cdx-00187.cdxj") else {
        return;
    };
    let lines = cdxj(&path);
    let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (key, v) in &lines {
        if v["status"] == "200" {
            keys.entry(key.clone())
                .or_default()
                .insert(v["url"].as_str().unwrap().to_string());
        }
    }
    let urls: BTreeSet<&str> = lines
        .iter()
        .map(|(_, v)| v["url"].as_str().unwrap())
        .collect();
    let urls: Vec<&str> = urls.into_iter().collect();
    let robots = lines
        .iter()
        .filter(|(_, v)| v["url"].as_str().unwrap().ends_with("/robots.txt"))
        .count();
    assert_eq!(robots, 26);
    let t = TempDir::new("evidence-cc");
    for extra in [&[][..], &["--priors"]] {
        let (n, summary) = learn_normalize(&t, &path, extra, &urls);
        // 1,140 lines: 1,114 status-200 captures, 26 robots.txt (status 404) left out.
        assert!(
            summary.contains("1114 captures in digest groups (0 of them revisits), 0 redirect pairs; 26 left out"),
            "{summary}"
        );
        let pairs: Vec<&BTreeSet<String>> = keys.values().filter(|u| u.len() == 2).collect();
        assert_eq!(pairs.len(), 47);
        let merged = pairs
            .iter()
            .filter(|p| p.iter().map(|u| &n[u]).collect::<BTreeSet<_>>().len() == 1)
            .count();
        assert!(merged >= 40, "{extra:?}: {merged} of 47 pairs merged");
        // No two SURT keys share a normalized URL.
        let mut by_norm: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for (k, us) in &keys {
            for u in us {
                by_norm.entry(n[u].as_str()).or_default().insert(k);
            }
        }
        let wrong: Vec<_> = by_norm.iter().filter(|(_, k)| k.len() > 1).collect();
        assert!(wrong.is_empty(), "{extra:?}: {wrong:?}");
    }
}

#[test]
fn pywb_revisits_join_their_digest_groups_which_collapse_within_sites() {
    let (Some(index), Some(groups)) = (
        shared("webarchive/pywb-iana.cdxj"),
        shared("webarchive/groups.jsonl"),
    ) else {
        return;
    };
    let groups: Vec<Vec<String>> = std::fs::read_to_string(groups)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|g| g["source"] == "pywb")
        .map(|g| {
            g["urls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|u| u.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|u| u.len() >= 2)
        .collect();
    assert_eq!(groups.len(), 10);
    let urls: BTreeSet<&str> = groups.iter().flatten().map(String::as_str).collect();
    let urls: Vec<&str> = urls.into_iter().collect();
    let site = |u: &str| match dedust_core::trusted_host(u) {
        Ok(h) => h.site().to_string(),
        // `http://test@example.com/`: no site it may speak for.
        Err(_) => format!("?{u}"),
    };
    let t = TempDir::new("evidence-pywb");
    for extra in [&[][..], &["--priors"]] {
        let (n, summary) = learn_normalize(&t, &index, extra, &urls);
        assert!(summary.contains("(123 of them revisits)"), "{summary}");
        let collapsed = groups
            .iter()
            .filter(|g| g.iter().map(|u| &n[u]).collect::<BTreeSet<_>>().len() == 1)
            .count();
        assert!(
            collapsed >= 8,
            "{extra:?}: {collapsed} of 10 groups collapsed"
        );
        // Never across registrable domains.
        let mut sites: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        for u in &urls {
            sites.entry(n[*u].as_str()).or_default().insert(site(u));
        }
        let cross: Vec<_> = sites.iter().filter(|(_, s)| s.len() > 1).collect();
        assert!(cross.is_empty(), "{extra:?}: {cross:?}");
    }
}
