//! `dedust learn`: inputs, formats, bad input, and concrete outcomes on real data.

mod common;
use common::*;

#[test]
fn forum_candidates_merge_thread_variants_and_keep_threads_apart() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let t = TempDir::new("learn-forum");
    let rules = t.path("forum.json");
    let o = dedust(&["learn", &clusters, "--no-validate", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(
        &rules,
        &[
            "https://ubuntuforums.org/showthread.php?t=2396025&mode=hybrid",
            "https://ubuntuforums.org/showthread.php?t=2396025&p=13788823",
            "https://ubuntuforums.org/showthread.php?t=2396025&p=13788960&highlight=",
            "https://ubuntuforums.org/showthread.php?t=2396025",
            "https://ubuntuforums.org/showgroups.php/",
            "https://ubuntuforums.org/showgroups.php",
            "https://ubuntuforums.org/showthread.php?t=2399656",
            // A thread never seen in training: the rule generalizes.
            "https://ubuntuforums.org/showthread.php?t=12345&mode=threaded&p=99",
        ],
    );
    let canon = "https://ubuntuforums.org/showthread.php?t=2396025";
    assert_eq!(&out[0..4], &[canon, canon, canon, canon]);
    assert_eq!(out[4], out[5]);
    assert_eq!(out[4], "https://ubuntuforums.org/showgroups.php");
    assert_eq!(out[6], "https://ubuntuforums.org/showthread.php?t=2399656");
    assert_ne!(out[6], out[3]);
    assert_eq!(out[7], "https://ubuntuforums.org/showthread.php?t=12345");
}

#[test]
fn forum_validated_rules_merge_the_login_wall_without_false_merges() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let t = TempDir::new("learn-forum-v");
    let rules = t.path("forum.json");
    let o = dedust(&["learn", &clusters, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("candidates →"), "{}", stderr(&o));
    let out = normalize_with(
        &rules,
        &[
            "https://ubuntuforums.org/member.php?u=1",
            "https://ubuntuforums.org/member.php?u=777777",
            "https://ubuntuforums.org/showthread.php?t=2396025",
            "https://ubuntuforums.org/showthread.php?t=2399656",
        ],
    );
    assert_eq!(out[0], out[1], "login wall: every member page is one page");
    assert_ne!(out[2], out[3], "unrelated threads stay distinct");
    let e = dedust(
        &[
            "evaluate", "--truth", &clusters, "--rules", &rules, "--json",
        ],
        b"",
    );
    assert!(e.status.success(), "{}", stderr(&e));
    let v: serde_json::Value = serde_json::from_str(&stdout(&e)).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let learned = rows.iter().find(|r| r["method"] == "rules").unwrap();
    assert!(learned["lost"].as_f64().unwrap() <= 0.005, "{learned}");
    assert!(learned["reduction"].as_f64().unwrap() >= 0.6, "{learned}");
}

#[test]
fn cdxj_learns_http_https_aliases() {
    let Some(cdxj) = shared("webarchive/cc-main-2024-30-cdx-00187.cdxj") else {
        return;
    };
    let t = TempDir::new("learn-cdxj");
    let rules = t.path("cc.json");
    let o = dedust(&["learn", &cdxj, "--no-validate", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&rules).unwrap();
    let f: serde_json::Value = serde_json::from_str(&text).unwrap();
    let rules_arr = f["rules"].as_array().unwrap();
    assert!(!rules_arr.is_empty(), "{}", stderr(&o));
    let Some(pywb) = shared("webarchive/pywb-iana.cdxj") else {
        return;
    };
    let rules2 = t.path("iana.json");
    let o = dedust(&["learn", &pywb, "--no-validate", "-o", &rules2], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(
        &rules2,
        &[
            "https://www.iana.org/some/new/page",
            "http://www.iana.org/some/new/page",
        ],
    );
    assert_eq!(
        out[0], out[1],
        "http and https of iana.org are one: {out:?}"
    );
}

#[test]
fn every_input_format_reads() {
    let t = TempDir::new("learn-formats");
    let cases: &[(&str, &[u8])] = &[
        ("a.tsv", b"cluster\turl\nx\thttp://h.org/a?t=1\nx\thttp://h.org/a?t=1&s=9f8e7d61\ny\thttp://h.org/a?t=2\ny\thttp://h.org/a?t=2&s=0a1b2c32\n"),
        ("a.csv", b"cluster,url\nx,http://h.org/a?t=1\nx,http://h.org/a?t=1&s=9f8e7d61\ny,http://h.org/a?t=2\ny,http://h.org/a?t=2&s=0a1b2c32\n"),
        (
            "a.jsonl",
            b"{\"cluster\":\"x\",\"urls\":[\"http://h.org/a?t=1\",\"http://h.org/a?t=1&s=9f8e7d61\"]}\n{\"digest\":\"y\",\"urls\":[\"http://h.org/a?t=2\",\"http://h.org/a?t=2&s=0a1b2c32\"]}\n",
        ),
        ("a.txt", b"x http://h.org/a?t=1 http://h.org/a?t=1&s=9f8e7d61\ny http://h.org/a?t=2 http://h.org/a?t=2&s=0a1b2c32\n"),
    ];
    for (name, data) in cases {
        let p = t.write(name, data);
        let rules = t.path(&format!("{name}.json"));
        // `--no-priors`: the `https` prior would also rewrite the scheme here.
        let o = dedust(&["learn", &p, "--no-priors", "-o", &rules], b"");
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let out = normalize_with(&rules, &["http://h.org/a?t=9&s=abc12345"]);
        assert_eq!(out, ["http://h.org/a?t=9"], "{name}");
    }
    // stdin
    let o = dedust(&["learn", "-", "--input-format", "tsv"], cases[0].1);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("\"dedust-rules\""));
    // gzip, detected by its magic bytes (and the .gz suffix is ignored for the format)
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(cases[0].1).unwrap();
    let p = t.write("a.tsv.gz", &gz.finish().unwrap());
    let rules = t.path("gz.json");
    let o = dedust(&["learn", &p, "--no-priors", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        normalize_with(&rules, &["http://h.org/a?t=9&s=abc12345"]),
        ["http://h.org/a?t=9"]
    );
}

#[test]
fn bad_input_is_counted_not_fatal() {
    let t = TempDir::new("learn-bad");
    let p = t.write(
        "bad.tsv",
        b"cluster\turl\nx\thttp://h.org/a\n\xff\xfe\tbroken\nx\tnot a url\nx\thttp://h.org/a/\n",
    );
    let o = dedust(&["learn", &p, "-o", &t.path("r.json")], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("skipped 2 malformed lines"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    // Empty input: clear error, exit 1.
    let e = t.write("empty.tsv", b"");
    let o = dedust(&["learn", &e], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no usable records"), "{}", stderr(&o));
    // Missing file: exit 1 naming it.
    let o = dedust(&["learn", "/nonexistent/x.tsv"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/x.tsv"));
    // The system's message once, not once per level of the error chain.
    assert_eq!(
        stderr(&o).matches("os error 2").count(),
        1,
        "{}",
        stderr(&o)
    );
    // Usage error: exit 2.
    let o = dedust(&["learn"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn output_is_deterministic_across_thread_counts() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let a = dedust(&["learn", &clusters, "--threads", "1"], b"");
    let b = dedust(&["learn", &clusters, "--threads", "2"], b"");
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
}

/// Issue #10, host takeover: a site that re-serves a victim's pages (same digest) must not make
/// learn alias the victim's host onto its own, whatever the host names' lengths.
#[test]
fn copied_pages_never_move_the_victim_onto_the_copier() {
    let t = TempDir::new("learn-hijack");
    let row = |u: &str, d: usize| {
        format!("x 2024 {{\"url\": \"{u}\", \"status\": \"200\", \"digest\": \"D{d}\"}}\n")
    };
    let mut tie = String::new();
    for n in 0..20 {
        tie += &row(&format!("https://www.victim.com/a/{n}"), n);
        tie += &row(&format!("https://a.co/a/{n}"), n);
        tie += &row(&format!("https://a.co/a/{n}?ref=x"), n);
    }
    // The victim is also seen alone in 10 more clusters: more evidence of being the original.
    let mut more = tie.clone();
    for n in 20..30 {
        more += &row(&format!("https://www.victim.com/b/{n}"), n);
        more += &row(&format!("https://www.victim.com/b/{n}?utm_source=z"), n);
    }
    let tie = t.write("tie.cdxj", tie.as_bytes());
    let more = t.write("more.cdxj", more.as_bytes());
    let victim = "https://www.victim.com/a/7";
    let copy = "https://a.co/a/7";
    for (input, extra, want_victim, want_copy) in [
        (&tie, None, victim, copy),
        (&tie, Some("--no-validate"), victim, copy),
        (&more, None, victim, copy),
        (&tie, Some("--allow-cross-site"), victim, copy),
        // Consent given: the copier moves onto the site with more evidence, never the reverse.
        (&more, Some("--allow-cross-site"), victim, victim),
    ] {
        let rules = t.path("r.json");
        // `--no-priors`: the `www.` prior would fold the victim's own spelling too.
        let mut args = vec!["learn", input.as_str(), "--no-priors", "-o", &rules];
        args.extend(extra);
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).contains("learned per site"),
            extra != Some("--allow-cross-site"),
            "{extra:?}: {}",
            stderr(&o)
        );
        let out = normalize_with(&rules, &[victim, copy]);
        assert_eq!(out, [want_victim, want_copy], "{input} {extra:?}");
    }
    // Evidence is counted per site, not per scheme and host: an established site seen mostly
    // over https is not moved onto a newcomer through its few http URLs.
    let mut tsv = String::from("cluster\turl\n");
    for n in 0..30 {
        tsv += &format!("v{n}\thttps://victim.com/p/{n}\nv{n}\thttps://victim.com/p/{n}?s=1\n");
    }
    for n in 0..3 {
        tsv += &format!("e{n}\thttps://evil.org/q/{n}\ne{n}\thttps://evil.org/q/{n}?s=1\n");
    }
    for n in 0..2 {
        tsv += &format!("x{n}\thttp://victim.com/a{n}\nx{n}\thttps://evil.org/a{n}\n");
    }
    let input = t.write("xs.tsv", tsv.as_bytes());
    let rules = t.path("xs.json");
    let o = dedust(&["learn", &input, "--allow-cross-site", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = normalize_with(&rules, &["http://victim.com/secret"]);
    assert!(!out[0].contains("evil.org"), "{out:?}");
}

/// Issue #11: a web-archive index carries its own evidence — payload digest groups of 200
/// captures and 3xx redirects with their `Location`. `learn` reads a gzipped CDXJ shard whose
/// name says nothing (from stdin, too), learns from both, and `--explain` names the signal of
/// each rule; 404s and a redirect to another site create nothing.
#[test]
fn learns_from_a_web_archive_index_and_names_the_signal() {
    use std::io::Write;
    let t = TempDir::new("learn-cdx");
    let mut cdxj = String::new();
    let line = |surt: &str, json: String| format!("{surt} 20240716153155 {{{json}}}\n");
    for n in 0..30 {
        // Moved pages: `/item.php?id=N` answers 301 with a relative Location `/item/N`.
        cdxj += &line(
            "example,shop)/item.php",
            format!(
                r#""url": "https://shop.example/item.php?id={n}", "status": "301", "redirect": "/item/{n}""#
            ),
        );
        cdxj += &line(
            "example,shop)/item",
            format!(r#""url": "https://shop.example/item/{n}", "status": "200", "digest": "I{n}""#),
        );
        // Session ids: the same payload under two URLs.
        for s in ["", "?sessionid=a1b2c3d4e5f6a7b8"] {
            cdxj += &line(
                "example,shop)/page",
                format!(
                    r#""url": "https://shop.example/page/{n}{s}", "status": "200", "digest": "P{n}""#
                ),
            );
        }
        // Errors share one digest and must never join a content cluster.
        cdxj += &line(
            "example,shop)/x",
            format!(r#""url": "https://shop.example/x/{n}", "status": "404", "digest": "E""#),
        );
    }
    // A redirect to another site (an outlink redirector, a takeover attempt): no cross-site
    // rule, though the shop consents to each redirect: its other pages have not moved.
    for n in 0..12 {
        cdxj += &line(
            "example,shop)/go",
            format!(
                r#""url": "https://shop.example/go/{n}", "status": "302", "redirect": "https://evil.example/go/{n}""#
            ),
        );
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(cdxj.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let input = t.write("cdx-00187.gz", &gz);
    for (src, stdin) in [(input.as_str(), &[][..]), ("-", &gz[..])] {
        let rules = t.path("r.json");
        let explain = t.path("explain.json");
        let o = dedust(&["learn", src, "-o", &rules, "--explain", &explain], stdin);
        assert!(o.status.success(), "{src}: {}", stderr(&o));
        // The 12 redirects to another site are no evidence.
        let err = stderr(&o);
        assert!(err.contains("30 redirect pairs"), "{src}: {err}");
        assert!(err.contains("12 redirects to another site"), "{src}: {err}");
        let out = normalize_with(
            &rules,
            &[
                "https://shop.example/item.php?id=777",
                "https://shop.example/page/777?sessionid=0123456789abcdef",
                "https://shop.example/x/777",
                "https://shop.example/go/777",
            ],
        );
        assert_eq!(
            out,
            [
                "https://shop.example/item/777",
                "https://shop.example/page/777",
                "https://shop.example/x/777",
                "https://shop.example/go/777",
            ],
            "{src}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&explain).unwrap()).unwrap();
        let kept_signals: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kept"] == true)
            .map(|r| r["signals"].to_string())
            .collect();
        assert!(
            kept_signals.iter().any(|s| s.contains("\"redirect\":30")),
            "{kept_signals:?}"
        );
        assert!(
            kept_signals.iter().any(|s| s.contains("\"digest\":30")),
            "{kept_signals:?}"
        );
        let file = std::fs::read_to_string(&rules).unwrap();
        assert!(!file.contains("evil.example"), "{file}");
        assert!(
            file.contains("\"signals\""),
            "the rule file records the signals"
        );
    }
}

/// Issue #11: a real Heritrix WARC (data.gov.uk, 2014): 200 pages grouped by payload digest,
/// the one 302 read as a redirect pair, 404/403 pages and request/metadata records left out, the
/// pages' self-canonicals (`Link` headers naming the page itself) adding nothing. A copy cut in
/// the middle of a gzip member is read up to the cut, counted, never a crash.
#[test]
fn reads_a_real_warc_and_survives_truncation() {
    let Some(warc) =
        shared("html/govuk-revisit/BL-20140325121225068-00000-32090~opera~8443.warc.gz")
    else {
        return;
    };
    let t = TempDir::new("learn-warc");
    let rules = t.path("r.json");
    let o = dedust(&["learn", &warc, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("WARC: 190 records; 55 pages in digest groups, 1 redirect pairs, 0 declared canonicals; 132 left out")
            && err.contains("robots.txt: 2 files, 0 Clean-param rules"),
        "{err}"
    );
    // The same bytes through stdin, and cut short in the middle of a gzip member.
    let bytes = std::fs::read(&warc).unwrap();
    let o = dedust(&["learn", "-", "-o", &rules], &bytes);
    assert!(stderr(&o).contains("WARC: 190 records"), "{}", stderr(&o));
    let cut = t.write("cut.warc.gz", &bytes[..bytes.len() * 2 / 3]);
    let o = dedust(&["learn", &cut, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("skipped 1 malformed records (")
            && err.contains("cut.warc.gz#127: truncated block"),
        "{err}"
    );
    // The damage itself is one warning, however often the file is read.
    assert_eq!(err.matches("damaged gzip data after").count(), 1, "{err}");
    assert!(err.contains("WARC: 126 records; 36 pages"), "{err}");
}

/// Issue #11, end to end: a synthetic crawl written as a WARC (`synth --warc`: some URLs answer
/// 301 to their page, half the sites declare rel=canonical) teaches rules as good as the truth
/// clusters do, and `--explain` names the signals behind each kept rule.
#[test]
fn learns_from_a_synthetic_warc_crawl_as_well_as_from_the_truth() {
    let t = TempDir::new("learn-synth-warc");
    let dir = t.path("s");
    let o = dedust(
        &[
            "synth", "--sites", "8", "--pages", "40", "--seed", "2", "--warc", "-o", &dir,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let warc = format!("{dir}/crawl.warc.gz");
    let truth = format!("{dir}/clusters.tsv");
    let reduction = |rules: &str| -> (f64, f64) {
        let o = dedust(&["evaluate", "--rules", rules, "--truth", &truth], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let out = stdout(&o);
        let row: Vec<&str> = out
            .lines()
            .find(|l| l.starts_with("rules "))
            .expect("a rules row")
            .split_whitespace()
            .collect();
        (row[4].parse().unwrap(), row[5].parse().unwrap())
    };
    let (from_warc, from_truth) = (t.path("w.json"), t.path("t.json"));
    let explain = t.path("ex.json");
    // `--no-content`: the crawl's own signals, which this test is about. (The synthetic pages
    // draw their words from a vocabulary of about twenty, so any two of a site read as 0.9
    // similar: the content step, on by default for a WARC of pages, would join some.)
    let o = dedust(
        &[
            "learn",
            &warc,
            "--no-content",
            "-o",
            &from_warc,
            "--explain",
            &explain,
        ],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("redirect pairs"), "{}", stderr(&o));
    let o = dedust(&["learn", &truth, "-o", &from_truth], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let (rw, lw) = reduction(&from_warc);
    let (rt, _) = reduction(&from_truth);
    assert!(rw >= 0.8 && lw == 0.0, "from the WARC: {rw} / {lw}");
    assert!(rw >= rt - 0.05, "from the WARC {rw}, from the truth {rt}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&explain).unwrap()).unwrap();
    for signal in ["digest", "redirect", "canonical"] {
        assert!(
            v.as_array()
                .unwrap()
                .iter()
                .any(|r| r["kept"] == true && r["signals"][signal].as_u64().unwrap_or(0) > 0),
            "no kept rule learned from {signal}"
        );
    }
}

/// A WARC record of `kind` for `url` with an HTTP `block` (`digest`: its payload digest).
fn warc_record(url: &str, digest: &str, block: &str) -> String {
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nWARC-Payload-Digest: {digest}\r\n\
         Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
}

/// A WAT file (Common Crawl's metadata records: JSON describing each response, its HTTP head
/// and its HTML head's links) teaches what the pages' declared canonicals say: a session id
/// dropped, on a URL never seen.
#[test]
fn learns_from_the_canonicals_a_wat_file_records() {
    let t = TempDir::new("learn-wat");
    let wat = |url: &str, digest: &str, canonical: &str| {
        let json = serde_json::json!({
            "Envelope": {
                "WARC-Header-Metadata": {
                    "WARC-Type": "response", "WARC-Target-URI": url, "WARC-Payload-Digest": digest,
                },
                "Payload-Metadata": {"HTTP-Response-Metadata": {
                    "Response-Message": {"Status": "200"},
                    "Headers": {"Content-Type": "text/html"},
                    "HTML-Metadata": {"Head": {"Link": [
                        {"path": "LINK@/href", "url": canonical, "rel": "canonical"},
                    ]}},
                }},
            },
        })
        .to_string();
        format!(
            "WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: {url}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}\r\n\r\n",
            json.len()
        )
    };
    let mut w = String::new();
    for n in 1..=8 {
        let page = format!("https://w.org/item?id={n}");
        w += &wat(&page, &format!("sha1:P{n}"), &page);
        let sid = format!("https://w.org/item?id={n}&sid={:08x}", n * 7919);
        w += &wat(&sid, &format!("sha1:S{n}"), &page);
    }
    let input = t.write("crawl.wat", w.as_bytes());
    let rules = t.path("r.json");
    let o = dedust(&["learn", &input, "--no-priors", "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("16 pages in digest groups, 0 redirect pairs, 8 declared canonicals"),
        "{}",
        stderr(&o)
    );
    let out = normalize_with(
        &rules,
        &[
            "https://w.org/item?id=99&sid=0badcafe",
            "https://w.org/item?id=99",
        ],
    );
    assert_eq!(
        out,
        ["https://w.org/item?id=99", "https://w.org/item?id=99"]
    );
}

/// Issue #11: a site's robots.txt in the crawl declares `Clean-param:` lines; each becomes a
/// candidate scoped to that host and prefix, validated like learned ones: `sid` (the pages with
/// and without it share a digest) is kept, `p` (it selects another page) is refuted, and no
/// rule reaches another host.
#[test]
fn robots_clean_param_lines_are_validated_candidates() {
    let t = TempDir::new("learn-robots");
    let page = |body: &str| format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{body}");
    let mut warc = warc_record(
        "https://f.org/robots.txt",
        "sha1:ROBOTS",
        &page("User-agent: *\nDisallow: /tmp/\nClean-param: sid /forum/\nClean-param: p /forum/\n"),
    );
    for n in 1..=6 {
        let d = format!("sha1:T{n}");
        let body = page(&format!("thread {n}"));
        warc += &warc_record(&format!("https://f.org/forum/t.php?t={n}"), &d, &body);
        warc += &warc_record(
            &format!("https://f.org/forum/t.php?sid=a{n}b&t={n}"),
            &d,
            &body,
        );
        // `p` selects another page of the thread.
        let body = page(&format!("thread {n} page 2"));
        warc += &warc_record(
            &format!("https://f.org/forum/t.php?p=2&t={n}"),
            &format!("sha1:P{n}"),
            &body,
        );
        // Another host, with a `sid` that is content there.
        warc += &warc_record(
            &format!("https://g.org/forum/t.php?sid={n}"),
            &format!("sha1:G{n}"),
            &page("g"),
        );
    }
    let input = t.write("crawl.warc", warc.as_bytes());
    let (rules, explain) = (t.path("r.json"), t.path("ex.json"));
    let o = dedust(&["learn", &input, "-o", &rules, "--explain", &explain], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("robots.txt: 1 files, 2 Clean-param rules"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&explain).unwrap()).unwrap();
    let rule = |name: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["pattern"]
                    .as_str()
                    .unwrap_or("")
                    .ends_with(&format!("Clean-param: {name}]"))
            })
            .unwrap_or_else(|| panic!("no Clean-param {name} candidate"))
            .clone()
    };
    let (sid, p) = (rule("sid"), rule("p"));
    assert_eq!(sid["kept"], true, "{sid}");
    assert!(sid["support"].as_u64().unwrap() >= 6, "{sid}");
    assert_eq!(sid["signals"]["robots"], 1, "{sid}");
    assert_eq!(p["kept"], false, "{p}");
    assert!(p["fp"].as_u64().unwrap() > 0, "{p}");
    let got = normalize_with(
        &rules,
        &[
            "https://f.org/forum/t.php?sid=zz9&t=77",
            "https://f.org/forum/t.php?p=2&t=77",
            "https://g.org/forum/t.php?sid=77",
        ],
    );
    assert_eq!(
        got,
        [
            "https://f.org/forum/t.php?t=77",
            "https://f.org/forum/t.php?p=2&t=77",
            "https://g.org/forum/t.php?sid=77"
        ]
    );
}

#[test]
fn a_file_that_holds_no_clusters_gets_a_hint() {
    // A rule file, an HTML page or Nutch's XML passed where clusters are expected: exit 1, what
    // the file looks like and which command was probably meant.
    for (input, hint) in [
        (
            std::fs::read("rules/demo.json").unwrap(),
            "rule files go to `-r`",
        ),
        (
            b"<!DOCTYPE html>\n<html><body>x</body></html>\n".to_vec(),
            "dedust cluster --pages",
        ),
        (
            b"<?xml version=\"1.0\"?>\n<regex-normalize/>\n".to_vec(),
            "dedust import --from nutch",
        ),
    ] {
        let o = dedust(&["learn", "-"], &input);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(hint), "{}", stderr(&o));
        assert!(stderr(&o).contains("-:1:"), "{}", stderr(&o));
    }
}

#[test]
fn priors_fold_scheme_www_and_slash_on_hosts_never_seen() {
    // One http site and a session id: no evidence about any convention. The priors (on by
    // default, `--priors` explicitly) make the conventions SURT folds and the `utm_*` drop
    // dedup keys anyway (written
    // in the file's `validation`); with `--no-priors` nothing changes a host never seen. The
    // last of the two flags wins.
    let t = TempDir::new("learn-priors");
    let p = t.write(
        "one.tsv",
        b"cluster\turl\nx\thttp://h.org/a?t=1\nx\thttp://h.org/a?t=1&s=9f8e7d61\ny\thttp://h.org/a?t=2\ny\thttp://h.org/a?t=2&s=0a1b2c32\n",
    );
    let urls = [
        "http://www.new.org/x/",
        "https://new.org/x",
        "http://h.org/a?t=9&s=ab12cd34",
        // Campaign tags: the tracking prior drops them on every host.
        "https://new.org/x?id=4&utm_source=rss&utm_medium=feed",
    ];
    let with = [
        "https://new.org/x",
        "https://new.org/x",
        "https://h.org/a?t=9",
        "https://new.org/x?id=4",
    ];
    let cases: [(&[&str], bool, [&str; 4]); 4] = [
        (&["--priors"], true, with),
        (&[], true, with),
        (
            &["--no-priors"],
            false,
            [
                urls[0],
                urls[1],
                "http://h.org/a?t=9",
                // The base layer sorts the query.
                "https://new.org/x?id=4&utm_medium=feed&utm_source=rss",
            ],
        ),
        (&["--no-priors", "--priors"], true, with),
    ];
    for (flags, priors, want) in cases {
        let rules = t.path("r.json");
        let mut args = vec!["learn", &p, "-o", &rules];
        args.extend(flags);
        let o = dedust(&args, b"");
        assert!(o.status.success(), "{}", stderr(&o));
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&rules).unwrap()).unwrap();
        assert_eq!(
            file["validation"]["priors"].as_bool().unwrap_or(false),
            priors
        );
        assert_eq!(normalize_with(&rules, &urls), want, "{flags:?}");
    }
    // Unvalidated, nothing could refute them: refused.
    let o = dedust(&["learn", &p, "--priors", "--no-validate"], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--priors needs validation"),
        "{}",
        stderr(&o)
    );
}

/// Slug aliases: shops whose product pages are `/<slug>/dp/<code>` and `/dp/<code>` (or
/// `/itm/<slug>/<id>` and `/itm/<id>`), slugs of 3 to 9 words and codes of every letter-digit
/// order. A slug is one unit and a code one capture, so one cross-host rule per anchor (`dp`,
/// `itm`) covers hosts, titles and codes never seen; the same slug drop without a literal
/// anchor (`/<slug>/<id>` ≡ `/<id>`) stays on the hosts that showed it.
#[test]
fn slug_aliases_pool_over_word_counts_and_need_an_anchor_across_hosts() {
    let words = [
        "red", "blue", "running", "shoes", "for", "men", "women", "kids", "best", "cheap",
        "leather", "boots", "trail", "winter",
    ];
    let mut x = 0x2545_f491_u64;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut shops = String::from("cluster\turl\n");
    let mut bare = String::from("cluster\turl\n");
    for site in 0..8 {
        for k in 0..14 {
            let n = 3 + next(7);
            let slug: Vec<&str> = (0..n).map(|_| words[next(14) as usize]).collect();
            let slug = slug.join("-");
            let code: String = (0..8)
                .map(|j| {
                    let d = next(36) as u8;
                    // One letter and one digit at least, in varying places.
                    match (j, d) {
                        (0, _) => b'A' + d % 26,
                        (1, _) => b'0' + d % 10,
                        (_, d) if d < 10 => b'0' + d,
                        (_, d) => b'A' + d - 10,
                    }
                })
                .map(char::from)
                .collect();
            let id = 100_000 + next(900_000);
            let h = format!("https://shop{site}.example");
            if site % 2 == 0 {
                shops +=
                    &format!("s{site}p{k}\t{h}/{slug}/dp/B0{code}\ns{site}p{k}\t{h}/dp/B0{code}\n");
            } else {
                shops += &format!("s{site}p{k}\t{h}/itm/{slug}/{id}\ns{site}p{k}\t{h}/itm/{id}\n");
            }
            let h = format!("https://news{site}.example");
            bare += &format!("n{site}p{k}\t{h}/{slug}/{id}\nn{site}p{k}\t{h}/{id}\n");
        }
    }
    let t = TempDir::new("learn-slugs");
    let (shops, bare) = (
        t.write("shops.tsv", shops.as_bytes()),
        t.write("bare.tsv", bare.as_bytes()),
    );
    let rules = t.path("shops.json");
    let o = dedust(&["learn", &shops, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let got = normalize_with(
        &rules,
        &[
            "https://unseen.example/a-b-c-d-e-f-g-h-i-j-k/dp/B0Z9Y8X7W6",
            "https://unseen.example/itm/three-word-title/123456789",
            "https://unseen.example/a-b-c/other/B0Z9Y8X7W6",
        ],
    );
    assert_eq!(
        got,
        [
            "https://unseen.example/dp/B0Z9Y8X7W6",
            "https://unseen.example/itm/123456789",
            "https://unseen.example/a-b-c/other/B0Z9Y8X7W6",
        ]
    );
    let file = std::fs::read_to_string(&rules).unwrap();
    let n = serde_json::from_str::<serde_json::Value>(&file).unwrap()["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["pattern"].as_str().unwrap().contains("/dp/"))
        .count();
    assert_eq!(
        n, 1,
        "one rule for every slug length and code shape: {file}"
    );
    // No anchor: each host keeps its own rule, and a host never seen is left alone.
    let rules = t.path("bare.json");
    let o = dedust(&["learn", &bare, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let got = normalize_with(
        &rules,
        &[
            "https://news3.example/a-b-c-d/55555",
            "https://unseen.example/a-b-c-d/55555",
        ],
    );
    assert_eq!(
        got,
        [
            "https://news3.example/55555",
            "https://unseen.example/a-b-c-d/55555"
        ]
    );
}
