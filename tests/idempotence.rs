//! Property: normalize(normalize(u)) == normalize(u) for random URLs and real rule sets
//! (learned in-process from the forum crawl and the demo dataset, validated and not).

mod common;
use dedust::{BaseOptions, LearnConfig, Normalizer};
use proptest::prelude::*;
use std::sync::OnceLock;

fn normalizers() -> &'static Vec<Normalizer> {
    static N: OnceLock<Vec<Normalizer>> = OnceLock::new();
    N.get_or_init(|| {
        let mut inputs = vec!["datasets/demo/clusters.tsv".to_string()];
        if let Some(f) = common::shared("ubuntuforums/clusters.tsv") {
            inputs.push(f);
        }
        let mut out = Vec::new();
        for path in inputs {
            let (clusters, _) = dedust::read_clusters(&path, dedust::InputFormat::Auto).unwrap();
            for validate in [None, Some(Default::default())] {
                let cfg = LearnConfig {
                    validate,
                    ..Default::default()
                };
                let rules = dedust::learn(&clusters, &cfg, &|_, _, _| {}).file.rules;
                out.push(Normalizer::new(rules, Some(BaseOptions::default())));
            }
        }
        out
    })
}

fn url() -> impl Strategy<Value = String> {
    let scheme = prop::sample::select(vec!["http", "https", "HTTP"]);
    let host = prop::sample::select(vec![
        "ubuntuforums.org",
        "www.forum0.example.com",
        "forum0.example.com",
        "shop1.example.org",
        "www.shop1.example.org",
        "news2.example.net",
        "cms3.example.com",
        "other.test",
    ]);
    let seg = prop::sample::select(vec![
        "showthread.php",
        "member.php",
        "newreply.php",
        "index.php",
        "product.php",
        "news",
        "2014",
        "garden-driver-1046",
        "",
        "index.html",
        "a%7eb",
        "docs",
        "..",
        ".",
    ]);
    let name = prop::sample::select(vec![
        "t",
        "p",
        "mode",
        "page",
        "s",
        "u",
        "id",
        "utm_source",
        "noquote",
        "do",
        "option",
    ]);
    let value = prop::sample::select(vec![
        "1",
        "2396025",
        "hybrid",
        "",
        "newreply",
        "com_content",
        "abc%20d",
    ]);
    (
        scheme,
        host,
        prop::collection::vec(seg, 0..4),
        prop::collection::vec((name, prop::option::of(value)), 0..5),
    )
        .prop_map(|(sc, h, segs, params)| {
            let mut u = format!("{sc}://{h}/{}", segs.join("/"));
            let q: Vec<String> = params
                .into_iter()
                .map(|(n, v)| match v {
                    Some(v) => format!("{n}={v}"),
                    None => n.to_string(),
                })
                .collect();
            if !q.is_empty() {
                u.push('?');
                u.push_str(&q.join("&"));
            }
            u
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn normalize_is_idempotent(u in url()) {
        for n in normalizers() {
            if let Ok(once) = n.normalize(&u) {
                let twice = n.normalize(&once.url).expect("a canonical URL parses");
                prop_assert_eq!(&twice.url, &once.url, "input {}", u);
            }
        }
    }
}
