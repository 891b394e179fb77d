//! WHATWG conformance of the base layer, data-driven over `urltestdata.json` (as shipped by
//! servo/rust-url), with an expected-failures list checked both ways.
//!
//! In scope: cases whose `input` is an absolute URL (it parses on its own to the expected `href`).
//! For a valid case, our base form of the input must parse to itself (it is a canonical WHATWG
//! URL) and must equal our base form of the expected `href`
//! (we agree with the standard on what the URL is; our extra steps — sorted query, no fragment,
//! decoded unreserved escapes — apply to both sides). For a `failure` case without a base, the base
//! layer must reject the input. Inputs listed in `tests/data/whatwg-expected-failures.txt` must
//! fail the check, every other case must pass it.

mod common;
use dedust::{base_normalize, BaseOptions};
use std::collections::BTreeSet;

#[test]
fn urltestdata() {
    let Some(path) = common::shared("conformance/urltestdata.json") else {
        return;
    };
    let data: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let expected: BTreeSet<String> =
        std::fs::read_to_string("tests/data/whatwg-expected-failures.txt")
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(|l| serde_json::from_str::<String>(l).expect("each line is a JSON string"))
            .collect();
    let o = BaseOptions::default();
    let (mut checked, mut failed) = (0, BTreeSet::new());
    for case in data.as_array().unwrap().iter().filter(|c| c.is_object()) {
        let input = case["input"].as_str().unwrap();
        let base_null = case["base"].is_null();
        if case.get("failure").and_then(|f| f.as_bool()) == Some(true) {
            if base_null {
                checked += 1;
                if base_normalize(input, &o).is_ok() {
                    failed.insert(input.to_string());
                }
            }
            continue;
        }
        let Some(href) = case["href"].as_str() else {
            continue;
        };
        let absolute = url::Url::parse(input)
            .map(|u| u.as_str() == href)
            .unwrap_or(false);
        if !absolute {
            continue;
        }
        checked += 1;
        let ours = base_normalize(input, &o);
        let theirs = base_normalize(href, &o);
        // Our output must itself be a WHATWG-canonical URL: it parses to the same href.
        let reparsed = ours
            .as_ref()
            .ok()
            .and_then(|u| url::Url::parse(u).ok())
            .map(|u| u.to_string());
        if ours.is_err() || ours != theirs || reparsed.as_ref() != ours.as_ref().ok() {
            failed.insert(input.to_string());
        }
    }
    eprintln!(
        "WHATWG: {checked} cases in scope, {} expected failures",
        expected.len()
    );
    assert!(checked > 300, "{checked}");
    let unexpected: Vec<&String> = failed.difference(&expected).collect();
    let fixed: Vec<&String> = expected.difference(&failed).collect();
    assert!(unexpected.is_empty(), "new failures: {unexpected:#?}");
    assert!(
        fixed.is_empty(),
        "listed as failing but pass now (remove them): {fixed:#?}"
    );
}
