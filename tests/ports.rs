//! Sites on a port: a rule's scope is the host with its port (`h.org:8765`). One crawl served
//! on a port learns the rules it learns without one, scoped with the port; a rule of
//! `h:8765` does not fire on `h:8080` or `h`, and a rule of `h` does not fire on `h:8765`.

mod common;
use common::*;

/// A crawl of `authority` (`host` or `host:port`): 40 items, each also under a session id and
/// a print view.
fn crawl(authority: &str) -> String {
    let mut s = String::from("cluster\turl\n");
    for t in 0..40u64 {
        let sid = t.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24;
        s.push_str(&format!("c{t}\thttp://{authority}/item.php?id={t}\n"));
        s.push_str(&format!(
            "c{t}\thttp://{authority}/item.php?id={t}&sid={sid:010x}\n"
        ));
        s.push_str(&format!(
            "c{t}\thttp://{authority}/item.php?id={t}&mode=print\n"
        ));
    }
    s
}

/// The scopes and the readable patterns of a rule file, the scope host written as `H`.
fn rules_of(path: &str, host: &str) -> Vec<(String, String, String)> {
    let f: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut v: Vec<(String, String, String)> = f["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let g = |k: &str| r[k].as_str().unwrap().replace(host, "H");
            (g("scope"), g("pattern"), g("target"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn a_crawl_on_a_port_learns_the_rules_of_the_same_crawl_without_one() {
    let t = TempDir::new("ports-learn");
    let mut learned = Vec::new();
    for host in ["www.example.com", "www.example.com:8765", "127.0.0.1:8765"] {
        let input = t.write(
            &format!("{}.tsv", host.replace(':', "_")),
            crawl(host).as_bytes(),
        );
        let out = t.path(&format!("{}.json", host.replace(':', "_")));
        let o = dedust(&["learn", &input, "--no-priors", "-o", &out], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let rules = rules_of(&out, host);
        assert_eq!(rules.len(), 2, "{host}: {rules:?}");
        assert!(
            rules.iter().all(|r| r.0 == "H"),
            "{host}: scoped with the port: {rules:?}"
        );
        learned.push(rules);
    }
    assert_eq!(learned[0], learned[1]);
    assert_eq!(learned[0], learned[2]);
}

#[test]
fn a_rule_of_a_port_fires_on_that_port_only() {
    let t = TempDir::new("ports-apply");
    let input = t.write("p.tsv", crawl("h.example.org:8765").as_bytes());
    let rules = t.path("p.json");
    let o = dedust(&["learn", &input, "--no-priors", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let q = "/item.php?id=3&sid=00ab12&mode=print";
    let urls = [
        format!("http://h.example.org:8765{q}"),
        format!("http://h.example.org:8080{q}"),
        format!("http://h.example.org{q}"),
        // The scheme's default port is no port (the base layer removes it).
        format!("http://h.example.org:80{q}"),
    ];
    let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
    let out = normalize_with(&rules, &urls);
    assert_eq!(out[0], "http://h.example.org:8765/item.php?id=3");
    assert_eq!(
        out[1],
        "http://h.example.org:8080/item.php?id=3&mode=print&sid=00ab12"
    );
    assert_eq!(
        out[2],
        "http://h.example.org/item.php?id=3&mode=print&sid=00ab12"
    );
    assert_eq!(out[3], out[2]);
    // And the other way round: the rules of the host without a port leave the port alone.
    let input = t.write("n.tsv", crawl("h.example.org").as_bytes());
    let plain = t.path("n.json");
    let o = dedust(&["learn", &input, "--no-priors", "-o", &plain], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(&plain, &urls);
    assert_eq!(
        out[0],
        "http://h.example.org:8765/item.php?id=3&mode=print&sid=00ab12"
    );
    assert_eq!(out[2], "http://h.example.org/item.php?id=3");
}

#[test]
fn exports_of_a_port_rule_name_the_port() {
    let t = TempDir::new("ports-export");
    let input = t.write("p.tsv", crawl("h.example.org:8765").as_bytes());
    let rules = t.path("p.json");
    let o = dedust(&["learn", &input, "--no-priors", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = dedust(&["export", "--to", "nutch", "-r", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let patterns: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("h\\.example\\.org"))
        .collect();
    assert!(!patterns.is_empty(), "{text}");
    for p in patterns {
        assert!(
            p.contains("8765"),
            "an exported pattern names the port: {p}"
        );
    }
}
