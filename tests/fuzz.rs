//! A mutation fuzzer for the readers and the rule-file parser (issue #10), run in CI for a
//! bounded number of cases. Seeds are small valid inputs of every format; each case mutates one
//! (byte flips, inserted tokens that matter to the format, deleted or repeated ranges, a cut),
//! feeds it to the reader, and requires that nothing panics — a bad input is an error or a
//! counted skip. Parsed rule files must also load into the engine, normalize a few URLs and
//! write back to a file that parses the same. Deterministic for a seed.
//!
//! Longer runs: `DEDUST_FUZZ_CASES=200000 DEDUST_FUZZ_SEED=7 cargo test --release --test fuzz`
//! (default 3,000 cases per reader, seed 1). A failure prints the seed and the input.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// xorshift64*: small, deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens that matter to one format or another.
const TOKENS: &[&[u8]] = &[
    b"\"",
    b"\"\"",
    b",",
    b"\t",
    b"\n",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b"\\",
    b"\\u0000",
    b"%",
    b"%zz",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\xe2\x82",
    b"?",
    b"&",
    b"=",
    b"/",
    b"..",
    b"#",
    b"http://",
    b"https://h.org/",
    b"WARC/1.0\r\n",
    b"Content-Length: ",
    b"999999999999999999999",
    b"18446744073709551615",
    b"-1",
    b"0",
    b"\r\n\r\n",
    b"Content-Encoding: gzip\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"<",
    b">",
    b"&amp;",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"\"version\": 2",
    b"\"kind\": \"regex\"",
    b"(a|a)+",
    b"{int:",
    b"{any}",
    b"null",
    b"1e999",
];

fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
            2 if !v.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(v.len());
                v.drain(at.min(end)..end);
            }
            3 if !v.is_empty() => {
                let end = (at + 1 + rng.below(64)).min(v.len());
                let chunk: Vec<u8> = v[at.min(end)..end].to_vec();
                for _ in 0..1 + rng.below(3) {
                    v.splice(at..at, chunk.iter().copied());
                }
            }
            4 => v.truncate(at),
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.extend_from_slice(t);
            }
        }
    }
    v
}

fn cases() -> usize {
    std::env::var("DEDUST_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000)
}

fn seed() -> u64 {
    std::env::var("DEDUST_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// Run `check` on mutations of `seeds`; a panic fails with the seed and the input.
fn fuzz(name: &str, seeds: &[Vec<u8>], check: impl Fn(&[u8])) {
    let mut rng = Rng(seed().wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ name.len() as u64 | 1);
    for n in 0..cases() {
        let input = mutate(&seeds[n % seeds.len()], &mut rng);
        if catch_unwind(AssertUnwindSafe(|| check(&input))).is_err() {
            panic!(
                "{name}: case {n} (DEDUST_FUZZ_SEED={}) panicked on {:?}",
                seed(),
                String::from_utf8_lossy(&input)
            );
        }
    }
}

#[test]
fn cluster_readers_never_panic() {
    let seeds: Vec<Vec<u8>> = vec![
        b"cluster\turl\na\thttp://h.org/1?s=2\na\thttp://h.org/1\n".to_vec(),
        b"url,cluster\n\"http://h.org/1?a=1,2\",x\nhttp://h.org/2,x\n".to_vec(),
        b"{\"cluster\":\"x\",\"url\":\"http://h.org/1\"}\n{\"digest\":\"y\",\"urls\":[\"http://h.org/2\",\"http://h.org/3\"]}\n".to_vec(),
        b"abc http://h.org/1 http://h.org/2\n".to_vec(),
        b"org,h)/ 2024 {\"url\": \"http://h.org/\", \"status\": \"200\", \"digest\": \"D1\"}\norg,h)/ 2025 {\"url\": \"https://h.org/\", \"status\": \"200\", \"digest\": \"D1\"}\n".to_vec(),
    ];
    let names = ["a.tsv", "a.csv", "a.jsonl", "a.txt", "a.cdxj"];
    fuzz("clusters", &seeds, |input| {
        for name in names {
            let _ = dedust::read_clusters_from(input, name, dedust::InputFormat::Auto);
        }
    });
}

#[test]
fn rule_files_never_panic_and_round_trip() {
    let demo = std::fs::read("rules/demo.json").unwrap();
    let small = dedust::RuleFile::new(
        vec![dedust::regex_rule("[?&]s=[0-9a-f]+", "", "x").unwrap()],
        Default::default(),
        None,
    )
    .to_json()
    .into_bytes();
    // Mutations of the 17-rule demo file are slow to parse in bulk; most cases use the start.
    let head = demo[..demo.len().min(6000)].to_vec();
    let urls = [
        "http://forum5.example/showthread.php?t=12&utm_medium=x",
        "https://www.h.org/index.html",
        "http://h.org/a?s=ff&b=1",
    ];
    fuzz("rule files", &[demo, small, head], |input| {
        let Ok(text) = std::str::from_utf8(input) else {
            return;
        };
        let Ok(f) = dedust::RuleFile::parse(text, "fuzz.json") else {
            return;
        };
        let n = dedust::Normalizer::new(f.rules.clone(), Some(Default::default()));
        let mut buf = String::new();
        for u in urls {
            let _ = n.normalize_line_into(u.as_bytes(), &mut buf);
        }
        let again = dedust::RuleFile::parse(&f.to_json(), "again.json")
            .expect("a parsed rule file writes back to one that parses");
        assert_eq!(again.rules.len(), f.rules.len());
    });
}

#[test]
fn nutch_import_never_panics() {
    let seeds = vec![
        b"<regex-normalize><regex><pattern>(?i)[?&]jsessionid=[^&]*</pattern><substitution></substitution></regex><regex><pattern>&amp;{2,}</pattern><substitution>&amp;</substitution></regex></regex-normalize>".to_vec(),
        b"<?xml version=\"1.0\"?>\n<!-- c -->\n<regex-normalize>\n<regex>\n<pattern>/(index|default)\\.html?$</pattern>\n<substitution>/$1</substitution>\n</regex>\n</regex-normalize>\n".to_vec(),
    ];
    fuzz("nutch", &seeds, |input| {
        if let Ok(text) = std::str::from_utf8(input) {
            if let Ok(rules) = dedust::import_nutch(text, "fuzz.xml") {
                let n = dedust::Normalizer::new(rules, None);
                let _ = n.apply_rules("http://h.org/index.html?a=1&&jsessionid=2".into());
            }
        }
    });
}

#[test]
fn page_readers_never_panic() {
    let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>one two three</p>";
    let rec = |u: &str| {
        format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {u}\r\nWARC-Payload-Digest: sha1:A\r\nContent-Length: {}\r\n\r\n{page}\r\n\r\n",
            page.len()
        )
    };
    let revisit = "WARC/1.0\r\nWARC-Type: revisit\r\nWARC-Target-URI: http://h.org/r\r\nWARC-Payload-Digest: sha1:A\r\nContent-Length: 45\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n\r\n\r\n";
    let warc = [
        rec("http://h.org/1"),
        rec("http://h.org/2"),
        revisit.to_string(),
    ]
    .concat();
    let jsonl = "{\"url\": \"http://h.org/1\", \"html\": \"<p>a b c</p>\"}\n{\"url\": \"http://h.org/2\", \"html\": \"<title>t</title><p>a b</p>\"}\n";
    let dir = std::env::temp_dir().join(format!("dedust-fuzz-pages-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let seeds = [warc.into_bytes(), jsonl.as_bytes().to_vec()];
    // Files are written per case: fewer cases than the in-memory readers.
    let warc_path = dir.join("f.warc");
    let jsonl_path = dir.join("f.jsonl");
    let mut rng = Rng(seed() | 1);
    for n in 0..cases() / 3 {
        let input = mutate(&seeds[n % 2], &mut rng);
        let path = if n % 2 == 0 { &warc_path } else { &jsonl_path };
        std::fs::write(path, &input).unwrap();
        let r = catch_unwind(|| {
            if let Ok((pages, _)) = dedust::pages::read_pages(path.to_str().unwrap()) {
                let _ = dedust::cluster::cluster_pages(
                    &pages,
                    &Default::default(),
                    &Default::default(),
                );
            }
        });
        assert!(
            r.is_ok(),
            "pages: case {n} (DEDUST_FUZZ_SEED={}) panicked on {:?}",
            seed(),
            String::from_utf8_lossy(&input)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn normalize_lines_never_panic() {
    let f = dedust::RuleFile::read("rules/demo.json").unwrap();
    let n = dedust::Normalizer::new(f.rules, Some(Default::default()));
    let seeds: Vec<Vec<u8>> = [
        "http://forum5.example/showthread.php?t=12&utm_medium=x&gclid=1",
        "HTTP://WWW.H.ORG:80/a/../b/./c?b=2&a=1#f",
        "https://[::1]:8080/%7euser/?q=%zz",
        "http://xn--bcher-kva.example/ä?ü=1",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    fuzz("normalize", &seeds, |input| {
        let mut buf = String::new();
        let _ = n.normalize_line_into(input, &mut buf);
        if let Ok(s) = std::str::from_utf8(input) {
            let _ = dedust::base_normalize(s, &Default::default());
        }
    });
}

/// Replace one leaf (or drop one member) of a JSON value, chosen at random.
fn mutate_json(v: &mut serde_json::Value, rng: &mut Rng) {
    use serde_json::Value;
    let leaves = |v: &Value| -> usize {
        fn count(v: &Value) -> usize {
            match v {
                Value::Array(a) => 1 + a.iter().map(count).sum::<usize>(),
                Value::Object(o) => 1 + o.values().map(count).sum::<usize>(),
                _ => 1,
            }
        }
        count(v)
    };
    let target = rng.below(leaves(v));
    let replacement = match rng.below(9) {
        0 => Value::from(rng.below(40) as u64),
        1 => Value::from(-1),
        2 => Value::from(""),
        3 => Value::from(
            [
                "int", "any", "hex", "alpha", "copy", "bare", "*", "/", "{any}",
            ][rng.below(9)],
        ),
        4 => Value::Null,
        5 => serde_json::json!({"cap": "any"}),
        6 => serde_json::json!({"lit": "x/y"}),
        7 => serde_json::json!([]),
        _ => serde_json::json!({"param": "nope"}),
    };
    fn walk(v: &mut Value, k: &mut usize, rep: &Value, drop: bool) -> bool {
        if *k == 0 {
            *v = rep.clone();
            return true;
        }
        *k -= 1;
        match v {
            Value::Array(a) => {
                for i in 0..a.len() {
                    if *k == 0 && drop {
                        a.remove(i);
                        return true;
                    }
                    if walk(&mut a[i], k, rep, drop) {
                        return true;
                    }
                }
            }
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().cloned().collect();
                for key in keys {
                    if *k == 0 && drop {
                        o.remove(&key);
                        return true;
                    }
                    if walk(o.get_mut(&key).unwrap(), k, rep, drop) {
                        return true;
                    }
                }
            }
            _ => {}
        }
        false
    }
    let drop = rng.below(4) == 0;
    let mut k = target;
    walk(v, &mut k, &replacement, drop);
}

/// Rule files that are valid JSON but carry wrong values (a copy of a segment that does not
/// exist, a parameter the source never captures, an unknown capture type): refused with a
/// message or applied without panicking.
#[test]
fn rule_files_with_wrong_values_never_panic() {
    let demo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("rules/demo.json").unwrap()).unwrap();
    let urls = [
        "http://cms3.example/index.php?id=1002&option=com_content&amp=1",
        "http://forum5.example/showthread.php?t=12&utm_medium=x",
        "https://www.shop2.example/product/12?gclid=1&ref=3",
        "http://news1.example/a/b/c/index.html",
    ];
    let mut rng = Rng(seed().wrapping_mul(31) | 1);
    for n in 0..cases() / 3 {
        let mut v = demo.clone();
        for _ in 0..1 + rng.below(3) {
            mutate_json(&mut v, &mut rng);
        }
        let text = v.to_string();
        let r = catch_unwind(|| {
            if let Ok(f) = dedust::RuleFile::parse(&text, "fuzz.json") {
                let n = dedust::Normalizer::new(f.rules.clone(), Some(Default::default()));
                let mut buf = String::new();
                for u in urls {
                    let _ = n.normalize_line_into(u.as_bytes(), &mut buf);
                }
                for r in &f.rules {
                    let mut r = r.clone();
                    dedust::render::describe(&mut r);
                }
                let _ = dedust::export(
                    &f.rules,
                    &f.base,
                    dedust::ExportFormat::Nutch,
                    &Default::default(),
                );
            }
        });
        assert!(
            r.is_ok(),
            "rule values: case {n} (DEDUST_FUZZ_SEED={}) panicked on {text}",
            seed()
        );
    }
}
