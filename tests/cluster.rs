//! `dedust cluster`: duplicate clusters from real pages (JSONL, a WARC directory, an HTML
//! directory with a URL map) in the format `learn` reads; bad input gets a clear message.

mod common;
use common::*;

fn rows(tsv: &str) -> Vec<(String, String)> {
    tsv.lines()
        .skip(1)
        .filter_map(|l| l.split_once('\t'))
        .map(|(c, u)| (c.to_string(), u.to_string()))
        .collect()
}

#[test]
fn forum_pages_cluster_into_input_learn_reads() {
    let Some(pages) = shared("ubuntuforums/pages.jsonl.gz") else {
        return;
    };
    let t = TempDir::new("cluster-forum");
    let out = t.path("clusters.tsv");
    let o = dedust(&["cluster", "--pages", &pages, "-o", &out], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("1000 pages"), "{}", stderr(&o));
    let r = rows(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(r.len(), 1000, "every page's URL, singletons included");
    let ids: std::collections::BTreeSet<&str> = r.iter().map(|(c, _)| c.as_str()).collect();
    assert!(ids.len() < 1000 && ids.len() > 300, "{}", ids.len());
    // The loop closes: rules learned from content clusters.
    let rules = t.path("rules.json");
    let o = dedust(&["learn", &out, "-q", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    // Each measure runs and gives a partition of the same URLs.
    for m in ["simscore", "spearman"] {
        let o = dedust(&["cluster", "--pages", &pages, "--measure", m], b"");
        assert!(o.status.success(), "{m}: {}", stderr(&o));
        assert_eq!(rows(&stdout(&o)).len(), 1000, "{m}");
    }
}

#[test]
fn warc_revisits_and_article_pairs() {
    let (Some(gov), Some(art)) = (
        shared("html/govuk-revisit"),
        shared("html/article-benchmark"),
    ) else {
        return;
    };
    // Same URL twice (a revisit 11 minutes later): one row per URL.
    let o = dedust(&["cluster", "--pages", &gov], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let r = rows(&stdout(&o));
    let urls: std::collections::BTreeSet<&str> = r.iter().map(|(_, u)| u.as_str()).collect();
    assert_eq!(urls.len(), r.len());
    assert!(stderr(&o).contains("72 pages"), "{}", stderr(&o));
    // Two different articles of one site never share a cluster.
    let o = dedust(&["cluster", "--pages", &art], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let r = rows(&stdout(&o));
    assert_eq!(r.len(), 181);
    let mut by_cluster: std::collections::BTreeMap<&str, usize> = Default::default();
    for (c, _) in &r {
        *by_cluster.entry(c).or_insert(0) += 1;
    }
    assert!(by_cluster.values().all(|n| *n == 1), "{by_cluster:?}");
}

#[test]
fn bad_input_is_reported() {
    let t = TempDir::new("cluster-bad");
    let empty = t.write("empty.jsonl", b"");
    let o = dedust(&["cluster", "--pages", &empty], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no pages"), "{}", stderr(&o));
    let mixed = t.write(
        "mixed.jsonl",
        b"{\"url\": \"http://a.org/1\", \"html\": \"<p>zebras graze at dawn</p>\"}\nnot json\n{\"url\": 3}\n{\"url\": \"http://a.org/2\", \"html\": \"<p>zebras graze at dawn</p>\"}\n",
    );
    let o = dedust(&["cluster", "--pages", &mixed], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipped 2 records") && stderr(&o).contains("mixed.jsonl:2"),
        "{}",
        stderr(&o)
    );
    let r = rows(&stdout(&o));
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].0, r[1].0, "identical pages cluster together");
    let o = dedust(&["cluster", "--pages", &mixed, "--threshold", "1.5"], b"");
    assert_eq!(
        o.status.code(),
        Some(2),
        "a bad flag value is a usage error"
    );
    assert!(stderr(&o).contains("--threshold"), "{}", stderr(&o));
    let o = dedust(&["cluster", "--pages", &t.path("missing.jsonl")], b"");
    assert_eq!(o.status.code(), Some(1));
    let dir = t.path("");
    let o = dedust(&["cluster", "--pages", &dir], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("urls.tsv"), "{}", stderr(&o));
}
