//! Which host a captured URL speaks for: the host-spelling table
//! (`crates/dedust-core/testdata/host_spellings.json`) read by three parsers — WHATWG (the `url`
//! crate, dedust's base layer), Java's `java.net.URL` (what Nutch, Heritrix and StormCrawler
//! run) and Python's `urllib.parse.urlsplit` (what Scrapy and many WARC writers run) — against
//! `dedust_core::trusted_host`: a host dedust trusts is the host all three read, and every
//! spelling they read two ways is excluded. Needs `java`/`javac` and `python3`: a skip notice
//! without them, a failure when `CI=true`.

mod common;

use common::{article, drop_everywhere, TempDir};
use std::process::{Command, Stdio};

struct Case {
    url: String,
    note: String,
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> String {
    let b: Vec<u8> = (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    String::from_utf8(b).unwrap()
}

/// Run `cmd` with one hex-encoded URL a line on stdin; the hex-decoded answer lines.
fn hosts_by(mut cmd: Command, urls: &[String]) -> Vec<String> {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run a parser");
    let input: String = urls.iter().map(|u| hex(u) + "\n").collect();
    let mut si = child.stdin.take().unwrap();
    let w = std::thread::spawn(move || si.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    w.join().unwrap().unwrap();
    assert!(out.status.success(), "{cmd:?} failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(unhex)
        .collect()
}

fn tools_present() -> bool {
    let ok = |c: &str, a: &str| {
        Command::new(c)
            .arg(a)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if ok("javac", "-version") && ok("python3", "--version") {
        return true;
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true but javac (OpenJDK 17) or python3 is missing");
    }
    eprintln!("SKIP: the cross-parser host table needs javac and python3");
    false
}

const PYTHON: &str = r#"
import sys
from urllib.parse import urlsplit
for line in sys.stdin:
    u = bytes.fromhex(line.strip()).decode("utf-8")
    try:
        h = urlsplit(u).hostname
        h = "!none" if h is None else h
    except Exception as e:
        h = "!" + type(e).__name__
    print(h.encode("utf-8").hex())
"#;

#[test]
fn trusted_hosts_are_read_alike_by_whatwg_java_and_python() {
    if !tools_present() {
        return;
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/dedust-core/testdata/host_spellings.json"
    );
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases: Vec<Case> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|c| Case {
            url: c["url"].as_str().unwrap().to_string(),
            note: c["note"].as_str().unwrap().to_string(),
        })
        .collect();
    let urls: Vec<String> = cases.iter().map(|c| c.url.clone()).collect();
    let t = TempDir::new("trust-java");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/java/UrlHosts.java");
    let st = Command::new("javac")
        .args(["-d", &t.path("java"), src])
        .status()
        .unwrap();
    assert!(st.success(), "javac failed on {src}");
    let mut java = Command::new("java");
    java.args(["-cp", &t.path("java"), "UrlHosts"]);
    let java = hosts_by(java, &urls);
    let mut python = Command::new("python3");
    python.args(["-c", PYTHON]);
    let python = hosts_by(python, &urls);
    assert_eq!((java.len(), python.len()), (urls.len(), urls.len()));
    // IPv6 literals: Python reads them without brackets.
    let plain = |h: &str| h.trim_start_matches('[').trim_end_matches(']').to_string();
    let (mut trusted, mut agreed_but_excluded, mut disagreed) = (0, 0, 0);
    let mut bad = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let whatwg = url::Url::parse(&c.url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .and_then(|u| u.host_str().map(str::to_string));
        let readings = [
            whatwg.as_deref().map(plain),
            Some(&java[i])
                .filter(|h| !h.starts_with('!') && !h.is_empty())
                .map(|h| plain(h)),
            Some(&python[i])
                .filter(|h| !h.starts_with('!'))
                .map(|h| plain(h)),
        ];
        let agree = readings[0].is_some() && readings.iter().all(|r| *r == readings[0]);
        match dedust_core::trusted_host(&c.url) {
            Ok(h) => {
                trusted += 1;
                if !agree || readings[0].as_deref() != Some(plain(h.host()).as_str()) {
                    bad.push(format!(
                        "trusted {:?} ({}) as {} but WHATWG/Java/Python read {readings:?}",
                        c.url,
                        c.note,
                        h.host()
                    ));
                }
            }
            Err(_) if agree => agreed_but_excluded += 1,
            Err(_) => disagreed += 1,
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    eprintln!(
        "{} spellings: {trusted} trusted (read alike by all three), {disagreed} read differently \
         and excluded, {agreed_but_excluded} read alike but excluded (user info, IDN, …)",
        cases.len()
    );
    assert!(cases.len() >= 60 && trusted >= 15 && disagreed >= 20);
}

/// One CDXJ capture line.
fn cdxj(key: &str, url: &str, status: &str, extra: (&str, &str)) -> String {
    let mut v = serde_json::json!({"url": url, "status": status});
    v[extra.0] = serde_json::Value::String(extra.1.to_string());
    format!("{key} 20240101000000 {v}\n")
}

/// The victim's own crawl: item pages 1–30, each its own page.
fn victim_items() -> String {
    (1..=30)
        .map(|n| {
            cdxj(
                &format!("com,victim)/item?id={n}"),
                &format!("https://victim.com/item?id={n}"),
                "200",
                ("digest", &format!("V{n}")),
            )
        })
        .collect()
}

/// Learn `input`; the learned rules' answer for a victim URL no capture names, and stderr.
fn learn_then_victim(t: &TempDir, name: &str, input: &[u8]) -> (String, String) {
    let path = t.write(name, input);
    let rules = t.path(&format!("{name}.json"));
    let o = common::dedust(&["learn", &path, "-o", &rules], b"");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let got = common::normalize_with(&rules, &["https://victim.com/item?id=77"]);
    (got[0].clone(), common::stderr(&o))
}

/// Spellings of an evil capture's URL that a hand-written splitter (or Python, or Java) reads
/// as `victim.com` while the base layer reads `evil.com`, or the other way round.
const EVIL: &[&str] = &[
    "https://evil.com\\@victim.com/r",
    "https://evil.com\\.victim.com/r",
    "https://evil.com:\\@victim.com/r",
    "https://EVIL.com\\@VICTIM.com/r",
    "https://victim.com\\@evil.com/r",
    "https://evil.com@victim.com/r",
];

/// An evil capture redirecting to, or serving the payload of, two victim pages (its URL read
/// as the victim's by a splitter) made them one page: `learn` then wrote a victim rule sending
/// every item to item 1. Now such a capture joins nothing, and is counted.
#[test]
fn an_ambiguous_capture_links_no_victim_pages() {
    let t = TempDir::new("trust-cdxj");
    for (i, evil) in EVIL.iter().enumerate() {
        for signal in ["redirect", "digest"] {
            let mut index = victim_items();
            for n in 2..=30 {
                let x = format!("{evil}?n={n}");
                let key = format!("com,victim)/r?n={n}");
                for target in [n, 1] {
                    index += &match signal {
                        "redirect" => cdxj(
                            &key,
                            &x,
                            "301",
                            ("redirect", &format!("https://victim.com/item?id={target}")),
                        ),
                        _ => cdxj(&key, &x, "200", ("digest", &format!("V{target}"))),
                    };
                }
            }
            let (got, err) = learn_then_victim(&t, &format!("{signal}{i}.cdxj"), index.as_bytes());
            assert_eq!(
                got, "https://victim.com/item?id=77",
                "{evil} {signal}: {err}"
            );
            assert!(
                err.contains("left 58 captures out"),
                "{evil} {signal}: {err}"
            );
        }
    }
}

/// A CDXJ line whose SURT key names another host than its URL (an index that files one
/// site's capture under another's key) takes part in nothing.
#[test]
fn a_capture_filed_under_another_hosts_key_is_left_out() {
    let t = TempDir::new("trust-surt");
    let mut index = victim_items();
    for n in 2..=30 {
        index += &cdxj(
            &format!("com,evil)/item?id={n}"),
            &format!("https://victim.com/item?id={n}"),
            "200",
            ("digest", "V1"),
        );
    }
    let (got, err) = learn_then_victim(&t, "surt.cdxj", index.as_bytes());
    assert_eq!(got, "https://victim.com/item?id=77", "{err}");
    assert!(err.contains("left 29 captures out"), "{err}");
    assert!(err.contains("SURT key names host `com,evil`"), "{err}");
}

/// A WARC record: `kind` (`response`, `request`) for `url` with an HTTP `block`.
fn warc(kind: &str, url: &str, digest: &str, block: &str) -> String {
    format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\nWARC-Payload-Digest: {digest}\r\n\
         Content-Type: application/http; msgtype={kind}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
}

fn page(body: &str, head: &str) -> String {
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n{head}\r\n{body}")
}

/// The victim's own pages in a WARC: item pages 1–30, each its own page.
fn victim_warc() -> String {
    (1..=30)
        .map(|n| {
            warc(
                "response",
                &format!("https://victim.com/item?id={n}"),
                &format!("sha1:V{n}"),
                &page(&format!("item {n}"), ""),
            )
        })
        .collect()
}

/// From a WARC: evil pages (ambiguous URLs) declaring victim canonicals and redirecting to
/// victim pages, a robots.txt at an ambiguous URL with `Clean-param: id`, and victim URLs
/// whose requests went to another `Host` (written before or after the response) serving item
/// 1's payload: no victim rule, every such record counted.
#[test]
fn a_warc_from_one_site_changes_no_rule_of_another() {
    let t = TempDir::new("trust-warc");
    for evil in EVIL {
        let mut w = victim_warc();
        for n in 2..=30 {
            let x = format!("{evil}?n={n}");
            let canon = format!("<link rel=\"canonical\" href=\"https://victim.com/item?id={n}\">");
            w += &warc("response", &x, &format!("sha1:E{n}"), &page(&canon, ""));
            let moved = "HTTP/1.1 301 Moved\r\nLocation: https://victim.com/item?id=1\r\n\r\n";
            w += &warc("response", &x, &format!("sha1:R{n}"), moved);
        }
        w += &warc(
            "response",
            &format!("{}/robots.txt", evil.trim_end_matches("/r")),
            "sha1:ROBOTS",
            &page("User-agent: *\nClean-param: id\n", ""),
        );
        let (got, err) = learn_then_victim(&t, "attack.warc", w.as_bytes());
        assert_eq!(got, "https://victim.com/item?id=77", "{evil}: {err}");
        assert!(err.contains("left 59 captures out"), "{evil}: {err}");
        assert!(!err.contains("Clean-param rules"), "{evil}: {err}");
    }
    for request_first in [true, false] {
        let mut w = victim_warc();
        for n in 2..=30 {
            let u = format!("https://victim.com/item?id={n}");
            let req = warc(
                "request",
                &u,
                "sha1:Q",
                &format!("GET /item?id={n} HTTP/1.1\r\nHost: evil.com\r\n\r\n"),
            );
            let resp = warc("response", &u, "sha1:V1", &page("item 1", ""));
            w += &if request_first {
                req + &resp
            } else {
                resp + &req
            };
        }
        let (got, err) = learn_then_victim(&t, "host.warc", w.as_bytes());
        assert_eq!(got, "https://victim.com/item?id=77", "{err}");
        assert!(err.contains("left 29 captures out"), "{err}");
        assert!(err.contains("`Host` header names another host"), "{err}");
    }
}

/// `site` places a URL only where every parser reads the same host; learning leaves the
/// others out, so a shard keyed by `site` and `learn` agree.
#[test]
fn site_places_no_ambiguous_url() {
    let input = "https://victim.com/a\nhttps://evil.com\\@victim.com/a\nhttps://u@victim.com/a\nhttp://0x7f.1/\nhttps://a_b.tripod.com/x\n";
    let o = common::dedust(&["site", "--with-host"], input.as_bytes());
    assert!(o.status.success(), "{}", common::stderr(&o));
    let got: Vec<String> = common::stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(got[1..4], ["", "", ""], "{got:?}");
    assert!(got[0].starts_with("victim.com"), "{got:?}");
    assert!(got[4].starts_with("tripod.com"), "{got:?}");
}

/// Every spelling of the table that `trusted_host` excludes, as the URL of captures that
/// redirect to (or share the payload of) two victim pages each: no victim rule.
#[test]
fn no_excluded_spelling_of_the_table_links_victim_pages() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/dedust-core/testdata/host_spellings.json"
    );
    let table: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let t = TempDir::new("trust-table");
    let mut tried = 0;
    for c in table.as_array().unwrap() {
        let url = c["url"].as_str().unwrap();
        if !c["want"].as_str().unwrap().starts_with('!') {
            continue;
        }
        let base = url.split(['?', '#']).next().unwrap().trim_end_matches('/');
        for signal in ["redirect", "digest"] {
            let mut index = victim_items();
            for n in 2..=30 {
                let x = format!("{base}/r?n={n}");
                for target in [n, 1] {
                    index += &match signal {
                        "redirect" => cdxj(
                            "-",
                            &x,
                            "301",
                            ("redirect", &format!("https://victim.com/item?id={target}")),
                        ),
                        _ => cdxj("-", &x, "200", ("digest", &format!("V{target}"))),
                    };
                }
            }
            let (got, err) = learn_then_victim(&t, "table.cdxj", index.as_bytes());
            assert_eq!(
                got, "https://victim.com/item?id=77",
                "{url:?} {signal}: {err}"
            );
            tried += 1;
        }
    }
    assert!(tried >= 80, "{tried}");
}

/// Pages at URLs parsers read as two hosts neither confirm nor refute a rule in `verify`, so
/// they cannot except (or revoke) a rule on the site a splitter would file them under.
#[test]
fn verify_counts_no_page_whose_host_is_ambiguous() {
    let t = TempDir::new("trust-verify");
    let mut pages = String::new();
    let mut page = |url: &str, topic: &str| {
        let line = serde_json::json!({"url": url, "html": article(topic)});
        pages.push_str(&format!("{line}\n"));
    };
    for (path, topic) in [("x", "harbour"), ("y", "orchard")] {
        page(&format!("http://a.org/{path}"), topic);
        page(&format!("http://a.org/{path}?ref=feed"), topic);
    }
    // A splitter files these under b.org; the base layer under evil.org.
    page("http://evil.org\\@b.org/z", "glacier");
    page("http://evil.org\\@b.org/z?ref=feed", "volcano");
    let pages = t.write("pages.jsonl", pages.as_bytes());
    let file = drop_everywhere("ref");
    let rules = t.write("rules.json", file.to_json().as_bytes());
    let out = t.path("out.json");
    let args = [
        "verify",
        "-r",
        &rules,
        "--pages",
        &pages,
        "--revoke",
        "--max-refuted",
        "0.1",
    ];
    let o = common::dedust(&[&args[..], &["-o", &out]].concat(), b"");
    assert!(o.status.success(), "{}", common::stderr(&o));
    let report = common::stdout(&o);
    let row: Vec<&str> = report.lines().nth(1).unwrap().split('\t').collect();
    assert_eq!((row[1], row[2], row[3]), ("2", "2", "0"), "{report}");
    let after = dedust::RuleFile::read(&out).unwrap();
    assert!(after.rules[0].revoked.is_none());
    assert!(
        after.rules[0].except.is_empty(),
        "{:?}",
        after.rules[0].except
    );
}
