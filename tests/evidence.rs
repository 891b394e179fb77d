//! `dedust learn` on real web-archive indexes: what the index proves (same, different, unknown).
//!
//! In: the Common Crawl CDXJ shard and pywb's iana.org index of the shared datasets (skipped with
//! a notice when absent, failing when `CI=true`), learned on themselves with and without
//! `--priors`. Out: assertions on the rule files, through `dedust normalize`. Invariants: the
//! http/https captures of one SURT key share a normalized URL (their digests differ: unknown
//! evidence, judged by record length), no two other SURT keys do, robots.txt captures form no
//! cluster; pywb's revisits join their digest groups, which collapse, never across registrable
//! domains; the facts travel beside the clusters, never in their ids (`evaluate --save` writes
//! plain ids; a TSV id holding U+001F is an ordinary id). Complexity: four `learn` runs on
//! 1,140 and 171 lines, and a few on synthetic indexes of 80 to 160 lines.

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
            summary.contains("1114 captures in digest groups (0 of them revisits), 0 redirect pairs, 0 length cohorts (0 URLs of templates whose pages all have one length); 26 left out"),
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

/// The Common Crawl shard as a CSV export of CC's columnar index (the same captures, one row
/// each, every field quoted) learns the rules its CDXJ learns.
#[test]
fn common_crawl_columnar_csv_learns_what_its_cdxj_learns() {
    let Some(path) = shared("webarchive/cc-main-2024-30-cdx-00187.cdxj") else {
        return;
    };
    let t = TempDir::new("evidence-cc-csv");
    let q = |v: &serde_json::Value| {
        let s = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => String::new(),
            v => v.to_string(),
        };
        format!("\"{}\"", s.replace('"', "\"\""))
    };
    let mut csv = String::from(
        "url_surtkey,url,fetch_status,content_digest,content_mime_type,warc_record_length,fetch_redirect\n",
    );
    for (key, v) in cdxj(&path) {
        let f = |k: &str| q(v.get(k).unwrap_or(&serde_json::Value::Null));
        csv += &format!(
            "{},{},{},{},{},{},{}\n",
            q(&serde_json::Value::String(key)),
            f("url"),
            f("status"),
            f("digest"),
            f("mime"),
            f("length"),
            f("redirect")
        );
    }
    let csv = t.write("cc.csv", csv.as_bytes());
    let rules = |input: &str| {
        let out = t.path("r.json");
        let o = dedust(&["learn", input, "-o", &out], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let f: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let rules: Vec<(String, String, u64)> = f["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
                (
                    s("pattern"),
                    s("target"),
                    r["support"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        (rules, stderr(&o))
    };
    let (from_cdxj, _) = rules(&path);
    let (from_csv, summary) = rules(&csv);
    assert!(
        summary.contains(
            "1114 captures in digest groups (0 of them revisits), 0 redirect pairs, 0 length cohorts (0 URLs of templates whose pages all have one length); 26 left out"
        ),
        "{summary}"
    );
    assert!(!from_csv.is_empty());
    assert_eq!(from_csv, from_cdxj);
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

/// A CDXJ index of one site whose `pages` pages were captured over http and https: the first
/// `shared` with one digest over both schemes, the others with two digests and record lengths
/// a few bytes apart (unknown evidence that the length test accepts).
fn http_https_index(pages: u32, shared: u32) -> String {
    let mut s = String::new();
    for k in 0..pages {
        let len = 5000 + 137 * (k % 5) + 61 * k;
        for (scheme, l) in [("http", len), ("https", len + 3 + len % 7)] {
            let digest = if k < shared { "http" } else { scheme };
            s += &format!(
                "org,h)/p{k} 2024 {{\"url\": \"{scheme}://h.org/p{k}\", \"status\": \"200\", \
                 \"mime\": \"text/html\", \"digest\": \"{digest}{k}\", \"length\": \"{l}\"}}\n"
            );
        }
    }
    s
}

/// A CDXJ index of one forum (sorted by key, every capture its own digest): 60 threads whose
/// record lengths grow by 3 % each, a login wall answered at 30 `member.php?u=` and 12
/// `private.php?do=newpm&u=` URLs, and `wall` the lengths of the wall pages by their number.
fn walled_index(wall: &dyn Fn(u32) -> u32) -> String {
    let mut lines = Vec::new();
    let mut line = |path: String, len: u32| {
        let n = lines.len();
        lines.push(format!(
            "org,f){path} 2024 {{\"url\": \"https://f.org{path}\", \"status\": \"200\", \
             \"mime\": \"text/html\", \"digest\": \"D{n}\", \"length\": \"{len}\"}}"
        ));
    };
    for k in 0..60 {
        line(
            format!("/showthread.php?t={}", 1000 + k),
            (10_000.0 * 1.03f64.powi(k)) as u32,
        );
    }
    for k in 0..30 {
        line(format!("/member.php?u={}", 500 + k * 7), wall(k));
    }
    for k in 0..12 {
        line(
            format!("/private.php?do=newpm&u={}", 900 + k * 3),
            wall(k) + 2,
        );
    }
    lines.sort();
    lines.join("\n") + "\n"
}

/// Pages of one template whose record lengths all agree within the site's same-page noise (a
/// login wall, with a new digest at every capture) form a length cohort, from which `learn`
/// makes the many → one rules of the wall; the same index with member pages of spread lengths
/// gives none, and the threads stay apart either way.
#[test]
fn a_login_wall_is_learned_from_record_lengths_alone() {
    let t = TempDir::new("evidence-wall");
    let urls = [
        "https://f.org/member.php?u=12345",
        "https://f.org/private.php?do=newpm&u=777",
        "https://f.org/showthread.php?t=1001",
        "https://f.org/showthread.php?t=1002",
    ];
    let flat = t.write("flat.cdxj", walled_index(&|k| 7_000 + k % 4).as_bytes());
    let (map, err) = learn_normalize(&t, &flat, &[], &urls);
    assert!(err.contains("1 length cohorts (42 URLs"), "{err}");
    assert_eq!(map[urls[0]], map[urls[1]], "{map:?}");
    assert_ne!(map[urls[2]], map[urls[3]], "{map:?}");
    let spread = t.write("spread.cdxj", walled_index(&|k| 7_000 + 150 * k).as_bytes());
    let (map, err) = learn_normalize(&t, &spread, &[], &urls);
    assert!(err.contains("0 length cohorts"), "{err}");
    for u in urls {
        assert_eq!(map[u], u, "{map:?}");
    }
}

/// Whether a rule file sends `http://h.org` pages to their `https` spelling (a host alias, or
/// the `https` prior kept: either way the data did not refute it).
fn keeps_http_alias(rules: &str) -> bool {
    normalize_with(rules, &["http://h.org/p5"]) == ["https://h.org/p5"]
}

/// `evaluate --save` on an index writes the split as plain ids (`digest:<d>`, nothing after
/// it), and the index's facts reach the validation of the training half: the http/https alias
/// is kept, as `learn` keeps it on the whole index; the saved training half, a TSV without the
/// index's facts, does not keep it (a differing digest is a false positive there).
#[test]
fn evaluate_save_on_an_index_writes_plain_ids_and_validates_with_its_facts() {
    let t = TempDir::new("evidence-evaluate");
    let index = t.write("i.cdxj", http_https_index(80, 8).as_bytes());
    let save = t.path("save");
    let o = dedust(
        &[
            "evaluate",
            "--truth",
            &index,
            "--test-fraction",
            "0.25",
            "--save",
            &save,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut ids = 0;
    for f in ["train.tsv", "test.tsv"] {
        let text = std::fs::read_to_string(format!("{save}/{f}")).unwrap();
        assert!(!text.contains('\u{1f}'), "{f}: {text:?}");
        for l in text.lines().skip(1) {
            let id = l.split('\t').next().unwrap();
            let d = id
                .strip_prefix("digest:")
                .unwrap_or_else(|| panic!("{f}: {l:?}"));
            assert!(
                d.starts_with("http") && d[d.len() - 1..].parse::<u32>().is_ok(),
                "{f}: {l:?}"
            );
            ids += 1;
        }
    }
    assert_eq!(ids, 160);
    assert!(keeps_http_alias(&format!("{save}/rules.json")));
    // The same training clusters as a TSV carry no facts.
    let rules = t.path("train-rules.json");
    let o = dedust(&["learn", &format!("{save}/train.tsv"), "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!keeps_http_alias(&rules));
}

/// A TSV id holding U+001F (the byte the facts once travelled after) is an ordinary id: read
/// as it is, with no facts, and learned on exactly as the same file without it.
#[test]
fn a_tsv_id_with_a_unit_separator_is_an_ordinary_id() {
    let t = TempDir::new("evidence-tsv-mark");
    let index = t.write("i.cdxj", http_https_index(40, 2).as_bytes());
    let (clusters, rep) = dedust::read_clusters(&index, dedust::InputFormat::Auto).unwrap();
    assert!(rep.evidence.is_some());
    // Each id followed by facts the length test would accept, as the old encoding spelt them.
    let forged = |mark: bool| {
        let mut s = String::from("cluster\turl\n");
        for c in &clusters {
            let suffix = if mark {
                let f = vec!["5000h20000"; c.urls.len()].join(",");
                format!("\u{1f}{f}")
            } else {
                String::new()
            };
            for u in &c.urls {
                s += &format!("{}{suffix}\t{u}\n", c.id);
            }
        }
        s
    };
    let marked = t.write("marked.tsv", forged(true).as_bytes());
    let plain = t.write("plain.tsv", forged(false).as_bytes());
    let (read, rep) = dedust::read_clusters(&marked, dedust::InputFormat::Auto).unwrap();
    assert_eq!(rep.evidence, None);
    assert!(read.iter().all(|c| c.id.contains("\u{1f}5000h20000")));
    assert_eq!(read.len(), clusters.len());
    let learn = |input: &str, out: &str| {
        let o = dedust(&["learn", input, "-o", &t.path(out)], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(t.path(out)).unwrap()
    };
    let (a, b) = (learn(&marked, "m.json"), learn(&plain, "p.json"));
    // The same file but for the input's name, which it records.
    assert_eq!(a.replace("marked.tsv", "plain.tsv"), b);
    assert!(!keeps_http_alias(&t.path("m.json")));
    // The index itself keeps the alias: its facts come beside the clusters.
    learn(&index, "i.json");
    assert!(keeps_http_alias(&t.path("i.json")));
}
