//! The `regex`/`replacement` form of every learned rule behaves exactly like the rule engine on
//! real URLs (Rust `regex` here; the Java side belongs to the export issue).

mod common;
use common::*;
use dedust::{apply_rule, base_normalize, BaseOptions, RuleFile};

fn check(rules_path: &str, urls: &[String]) -> usize {
    let f = RuleFile::read(rules_path).unwrap();
    let mut checked = 0;
    for r in &f.rules {
        let (Some(re), Some(rep)) = (&r.regex, &r.replacement) else {
            continue;
        };
        let re = regex::Regex::new(re).unwrap_or_else(|e| panic!("{}: {e}", r.id));
        for u in urls {
            let engine = apply_rule(r, u);
            let via_regex = re
                .is_match(u)
                .then(|| re.replace(u, rep.as_str()).into_owned());
            assert_eq!(engine, via_regex, "rule {} ({}) on {u}", r.id, r.pattern);
            checked += 1;
        }
    }
    checked
}

#[test]
fn regex_form_matches_engine_on_forum_and_links() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let Some(links) = shared("urls/page-links.txt") else {
        return;
    };
    let t = TempDir::new("regex-form");
    let o = BaseOptions::default();
    let mut urls: Vec<String> = std::fs::read_to_string(&clusters)
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .filter_map(|u| base_normalize(u, &o).ok())
        .collect();
    urls.extend(
        std::fs::read_to_string(&links)
            .unwrap()
            .lines()
            .take(20_000)
            .filter_map(|u| base_normalize(u, &o).ok()),
    );
    urls.extend(
        std::fs::read_to_string("datasets/demo/clusters.tsv")
            .unwrap()
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(1))
            .filter_map(|u| base_normalize(u, &o).ok()),
    );
    let mut total = 0;
    for (name, input) in [
        ("forum", clusters.clone()),
        ("demo", "datasets/demo/clusters.tsv".to_string()),
    ] {
        let r = t.path(&format!("{name}.json"));
        assert!(dedust(&["learn", &input, "--no-validate", "-o", &r], b"")
            .status
            .success());
        total += check(&r, &urls);
    }
    assert!(total > 0);
}
