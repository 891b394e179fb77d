//! Pages on demand: a web-archive index whose lines name each capture's WARC file and offset,
//! with the files at hand, has a sample of each rule's different-digest merges judged by the
//! pages' content instead of record lengths.
//!
//! In: a synthetic index and WARC written here (a session parameter whose pages are equal but
//! whose records differ in length; a `lang` parameter whose pages differ), and the two real
//! data.gov.uk WARCs of the shared datasets (a crawl and its refetch 11 minutes later; skipped
//! with a notice when absent, failing when `CI=true`), indexed here by walking their gzip
//! members. Out: assertions on `dedust learn`'s rule files and on the library's verdicts.
//! Complexity: a few `learn` runs on indexes of 40–60 lines; two WARCs of 190 records read.

mod common;
use common::*;
use dedust::ondemand::{OnDemand, RecordAt};
use std::collections::HashMap;

/// One WARC response record (plain, not gzipped) of a status-200 HTML page.
fn record(url: &str, html: &str) -> String {
    let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{html}");
    format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
}

/// A page's text: `n` picks the topic, `lang` its language.
fn text(n: usize, lang: &str) -> String {
    let topics = [
        "zebras graze quietly across the wide golden savanna while distant lions rest under acacia trees",
        "fishing boats leave the northern harbour before dawn to follow the shoals of herring far east",
        "the old clock tower in the market square was rebuilt after the great storm of the last century",
        "volunteers planted seven hundred oak saplings along the river bank to hold the soil in winter",
        "a small bakery on the corner sells rye bread and cinnamon rolls to the early morning commuters",
        "engineers tested the suspension bridge with loaded trucks before opening it to public traffic",
    ];
    let t = topics[n % topics.len()];
    match lang {
        "fr" => format!("<h1>Page {n}</h1><p>traduction française {n}: les bateaux de pêche quittent le port nord avant l'aube pour suivre les bancs de harengs loin vers l'est, et les boulangers vendent du pain chaud, des croissants et des brioches aux voyageurs pressés du matin, près de la gare centrale</p>"),
        _ => format!("<h1>Page {n}</h1><p>{t}; item {n} of the catalogue describes its subject in plain words, with notes on history, location, visitors, seasons and nearby places worth seeing</p>"),
    }
}

/// An index (CDXJ, in key order) and its WARC: for each `n` of `0..pages`, `/item/n` and
/// `/item/n?{param}={value}`; the first `shared` pairs carry one digest (the evidence a rule
/// is learned from), the others their own. `variant(n)` is the variant page's HTML.
fn index_and_warc(
    pages: usize,
    shared: usize,
    param: &str,
    variant: &dyn Fn(usize) -> String,
) -> (String, String) {
    index_and_warc_with(pages, shared, param, &|n| text(n, "en"), variant)
}

/// [`index_and_warc`] with `page(n)` the HTML of `/item/n`.
fn index_and_warc_with(
    pages: usize,
    shared: usize,
    param: &str,
    page: &dyn Fn(usize) -> String,
    variant: &dyn Fn(usize) -> String,
) -> (String, String) {
    let (mut index, mut warc) = (String::new(), String::new());
    for n in 0..pages {
        for (url, html, digest) in [
            (
                format!("https://h.example/item/{n}"),
                page(n),
                format!("D{n}"),
            ),
            (
                format!("https://h.example/item/{n}?{param}=x{n}"),
                variant(n),
                if n < shared {
                    format!("D{n}")
                } else {
                    format!("V{n}")
                },
            ),
        ] {
            let rec = record(&url, &html);
            index += &format!(
                "example,h)/item/{n} 20240101000000 {{\"url\": \"{url}\", \"mime\": \"text/html\", \"status\": \"200\", \"digest\": \"{digest}\", \"length\": \"{}\", \"offset\": \"{}\", \"filename\": \"crawl.warc\"}}\n",
                rec.len(),
                warc.len()
            );
            warc += &rec;
        }
    }
    (index, warc)
}

/// Learn `index` (with `crawl.warc` beside it) and say whether a rule drops `param`.
fn drops(t: &TempDir, index: &str, warc: &str, param: &str, extra: &[&str]) -> (bool, String) {
    let input = t.write("i.cdxj", index.as_bytes());
    t.write("crawl.warc", warc.as_bytes());
    let out = t.path("r.json");
    let mut args = vec!["learn", &input, "-o", &out];
    args.extend(extra);
    let o = dedust(&args, b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let got = normalize_with(&out, &[&format!("https://h.example/item/999?{param}=x1")]);
    (got[0] == "https://h.example/item/999", stderr(&o))
}

/// A session parameter whose pages are the same but whose records are far longer (a large
/// script): record lengths refuse the drop, the pages at hand keep it. A language parameter
/// whose pages differ, with records of much the same length: the pages refuse it.
#[test]
fn pages_at_hand_judge_the_merges_record_lengths_cannot() {
    let t = TempDir::new("ondemand-learn");
    let padded = |n: usize| {
        let pad = "x".repeat(3000 + 97 * n);
        format!("<script>var s = \"{pad}\";</script>{}", text(n, "en"))
    };
    let (index, warc) = index_and_warc(20, 3, "sid", &padded);
    let (kept, err) = drops(&t, &index, &warc, "sid", &[]);
    assert!(kept, "the pages keep the sid drop: {err}");
    assert!(
        err.contains("judged rules by their pages on demand"),
        "{err}"
    );
    let (kept, err) = drops(&t, &index, &warc, "sid", &["--warcs", "none"]);
    assert!(!kept, "record lengths alone refuse it: {err}");
    // The same index with its WARC in another directory, named by --warcs.
    let elsewhere = TempDir::new("ondemand-warcs");
    elsewhere.write("crawl.warc", warc.as_bytes());
    let input = t.write("j.cdxj", index.as_bytes());
    std::fs::remove_file(t.path("crawl.warc")).unwrap();
    let out = t.path("r2.json");
    let o = dedust(
        &["learn", &input, "-o", &out, "--warcs", &elsewhere.path("")],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        normalize_with(&out, &["https://h.example/item/999?sid=x1"]),
        ["https://h.example/item/999"]
    );
    // Pages that differ: a French translation padded to the English page's length (the
    // pages of one template differ by 60 bytes from one id to the next, so lengths take the
    // variant for a copy).
    let sized = |html: String, n: usize| {
        let pad = (1500 + 60 * n).saturating_sub(html.len() + 7);
        format!("{html}<!--{}-->", "-".repeat(pad))
    };
    let (index, warc) = index_and_warc_with(30, 3, "lang", &|n| sized(text(n, "en"), n), &|n| {
        sized(text(n, "fr"), n)
    });
    let (kept, err) = drops(&t, &index, &warc, "lang", &[]);
    assert!(!kept, "the pages refuse the lang drop: {err}");
    let (kept, err) = drops(&t, &index, &warc, "lang", &["--warcs", "none"]);
    assert!(kept, "record lengths alone keep it: {err}");
}

/// `(offset, length, WARC-Type, URI, payload digest, HTTP status, content type)` of each
/// record of a `.warc.gz`, one gzip member a record.
fn members(path: &str) -> Vec<(u64, u64, String, String, String, u16, String)> {
    use std::io::Read;
    let data = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let mut d = flate2::bufread::GzDecoder::new(&data[at..]);
        let mut rec = Vec::new();
        d.read_to_end(&mut rec).unwrap();
        let used = data.len() - at - d.into_inner().len();
        let head = String::from_utf8_lossy(&rec[..rec.len().min(4096)]).into_owned();
        let field = |name: &str| {
            head.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")))
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let status = head
            .find("\r\n\r\nHTTP/1.")
            .and_then(|i| head[i + 13..].get(..3))
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let ctype = head
            .split("\r\n\r\n")
            .nth(1)
            .and_then(|h| {
                h.lines().find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-type: ")
                        .map(str::to_string)
                })
            })
            .unwrap_or_default();
        out.push((
            at as u64,
            used as u64,
            field("WARC-Type"),
            field("WARC-Target-URI"),
            field("WARC-Payload-Digest"),
            status,
            ctype,
        ));
        at += used;
    }
    out
}

/// The real data.gov.uk crawl and its refetch 11 minutes later, read by offset: every page
/// whose refetch has another digest (a date, a token) is found the same page, and no two
/// different pages are.
#[test]
fn govuk_refetches_read_by_offset_are_the_same_page_and_other_pages_differ() {
    let Some(dir) = shared("html/govuk-revisit") else {
        return;
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".warc.gz"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    // Each HTML page's two captures, keyed `file#url`.
    let mut places: HashMap<String, RecordAt> = HashMap::new();
    let mut digests: Vec<HashMap<String, String>> = Vec::new();
    for (file, name) in names.iter().enumerate() {
        let mut d = HashMap::new();
        for (offset, len, kind, uri, digest, status, ctype) in members(name) {
            if kind == "response" && status == 200 && ctype.contains("html") {
                let at = RecordAt {
                    url: uri.clone(),
                    file,
                    offset,
                    len,
                };
                places.insert(format!("{file}#{uri}"), at);
                d.insert(uri, digest);
            }
        }
        digests.push(d);
    }
    let check = OnDemand::new(names.iter().map(|n| Some(n.into())).collect(), places);
    let refetched: Vec<&String> = digests[1]
        .iter()
        .filter(|(u, d)| digests[0].get(*u).is_some_and(|d0| d0 != *d))
        .map(|(u, _)| u)
        .collect();
    assert!(refetched.len() >= 4, "{refetched:?}");
    for u in &refetched {
        assert_eq!(
            check.same(&format!("0#{u}"), &format!("1#{u}")),
            Some(true),
            "{u}: a refetch with another digest"
        );
    }
    let mut first: Vec<&String> = digests[0].keys().collect();
    first.sort();
    let mut judged = 0;
    for w in first.windows(2) {
        if let Some(same) = check.same(&format!("0#{}", w[0]), &format!("0#{}", w[1])) {
            assert!(!same, "{} and {} are different pages", w[0], w[1]);
            judged += 1;
        }
    }
    assert!(judged >= 20, "{judged}");
    let st = check.stats();
    eprintln!(
        "govuk: {} refetches with another digest, all the same page; {judged} neighbouring pages, all different; {} records read",
        refetched.len(),
        st.read
    );
}
