//! Pages: read crawled pages (URL + HTML) for the content verifier.
//!
//! In: a path. Out: [`Page`]s in file order and a [`PagesReport`] of what was skipped. Sources:
//! * JSONL, optionally gzip'd: one object per line with `url` and `html` (other keys ignored);
//! * a directory of `.html` / `.html.gz` files plus a URL map: `urls.tsv` (`file<TAB>url`) or
//!   `ground-truth.json` (`{"<file id>": {"url": …}}` or `{"<file id>": "<url>"}`) in it;
//! * WARC or WARC.gz files (or a directory of them): `response` records with an HTML payload
//!   (HTTP headers parsed, chunked transfer and gzip/deflate content encoding undone) and
//!   `revisit` records, whose payload is that of the response with the same
//!   `WARC-Payload-Digest` read before (in the same file or an earlier one of the same call).
//!
//! Invariants: bad records (invalid JSON, missing fields, truncated WARC records) are counted
//! and skipped with their line or record number, never fatal; bytes that are not UTF-8 are
//! replaced. WARC reading is bounded: a record block over [`MAX_WARC_RECORD`] is streamed past,
//! a payload decoding to over [`MAX_DECODED`] is skipped, a header line over
//! [`MAX_HEADER_LINE`] ends the file; each is counted, and no `Content-Length` is allocated before
//! its bytes are read.

use crate::error::{Error, Result};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// One captured page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Its URL.
    pub url: String,
    /// Its HTML.
    pub html: String,
    /// Where it came from (`file:line` or `file#record`).
    pub origin: String,
}

/// What reading skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PagesReport {
    /// Records skipped.
    pub skipped: usize,
    /// The first few reasons (`origin: why`).
    pub first_bad: Vec<String>,
}

impl PagesReport {
    fn skip(&mut self, why: String) {
        self.skipped += 1;
        if self.first_bad.len() < 5 {
            self.first_bad.push(why);
        }
    }
}

/// The status-200 pages of one WARC(.gz) file whatever its name (a caller that found the format
/// from the content: `learn`, which leaves a redirect's or an error's body out of the content it
/// compares); [`read_pages`] reads every HTML response of a `.warc` file.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("dedust-doc-warc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let rec = |url: &str, status: &str| {
///     let block = format!("HTTP/1.1 {status}\r\nContent-Type: text/html\r\n\r\n<p>hi</p>");
///     format!("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n\
///              Content-Length: {}\r\n\r\n{block}\r\n\r\n", block.len())
/// };
/// let path = dir.join("crawl.bin");
/// std::fs::write(&path, rec("http://h.org/", "200 OK") + &rec("http://h.org/x", "404 Not Found")).unwrap();
/// let (pages, _) = dedust_content::pages::read_warc_pages(path.to_str().unwrap()).unwrap();
/// // A 404's body is no page of the site.
/// assert_eq!(pages.iter().map(|p| p.url.as_str()).collect::<Vec<_>>(), ["http://h.org/"]);
/// ```
pub fn read_warc_pages(path: &str) -> Result<(Vec<Page>, PagesReport)> {
    let (mut pages, mut rep) = (Vec::new(), PagesReport::default());
    read_warc(path, &mut pages, &mut HashMap::new(), &mut rep, true)?;
    Ok((pages, rep))
}

/// Read pages from a JSONL(.gz) file, a directory of HTML files with a URL map, or WARC(.gz)
/// files (a file or a directory of them); see the module docs.
pub fn read_pages(path: &str) -> Result<(Vec<Page>, PagesReport)> {
    let p = Path::new(path);
    let mut rep = PagesReport::default();
    let io = |e| Error::Io {
        path: path.to_string(),
        source: e,
    };
    if p.is_dir() {
        let mut entries: Vec<String> = std::fs::read_dir(p)
            .map_err(io)?
            .filter_map(|e| e.ok())
            .map(|e| e.path().to_string_lossy().into_owned())
            .collect();
        entries.sort();
        let warcs: Vec<&String> = entries
            .iter()
            .filter(|e| e.ends_with(".warc") || e.ends_with(".warc.gz"))
            .collect();
        if !warcs.is_empty() {
            let mut pages = Vec::new();
            let mut digests = HashMap::new();
            for w in warcs {
                read_warc(w, &mut pages, &mut digests, &mut rep, false)?;
            }
            return Ok((pages, rep));
        }
        return read_dir_pages(p, &mut rep).map(|pages| (pages, rep));
    }
    if path.ends_with(".warc") || path.ends_with(".warc.gz") {
        let mut pages = Vec::new();
        read_warc(path, &mut pages, &mut HashMap::new(), &mut rep, false)?;
        return Ok((pages, rep));
    }
    let mut r = dedust_io::open(path)?;
    let mut pages = Vec::new();
    let mut line = Vec::new();
    for i in 0.. {
        use dedust_io::{read_line_capped, Line};
        let got = read_line_capped(&mut r, &mut line, MAX_JSONL_LINE).map_err(io)?;
        let origin = format!("{path}:{}", i + 1);
        match got {
            Line::End => break,
            Line::Cut => {
                rep.skip(format!("{origin}: longer than {MAX_JSONL_LINE} bytes"));
                continue;
            }
            Line::Whole => {}
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(v) => match (
                v.get("url").and_then(|x| x.as_str()),
                v.get("html").and_then(|x| x.as_str()),
            ) {
                (Some(u), Some(h)) => pages.push(Page {
                    url: u.to_string(),
                    html: h.to_string(),
                    origin,
                }),
                _ => rep.skip(format!("{origin}: no \"url\" and \"html\" strings")),
            },
            Err(e) => rep.skip(format!("{origin}: not JSON ({e})")),
        }
    }
    Ok((pages, rep))
}

fn read_dir_pages(dir: &Path, rep: &mut PagesReport) -> Result<Vec<Page>> {
    let d = dir.display().to_string();
    // The URL map.
    let mut map: Vec<(String, String)> = Vec::new();
    let tsv = dir.join("urls.tsv");
    let json = dir.join("ground-truth.json");
    if tsv.exists() {
        let text = std::fs::read_to_string(&tsv).map_err(|e| Error::Io {
            path: tsv.display().to_string(),
            source: e,
        })?;
        for (i, l) in text.lines().enumerate() {
            match l.split_once('\t') {
                Some((f, u)) if !f.is_empty() && !u.is_empty() => map.push((f.into(), u.into())),
                _ => rep.skip(format!("{}:{}: not file<TAB>url", tsv.display(), i + 1)),
            }
        }
    } else if json.exists() {
        let text = std::fs::read_to_string(&json).map_err(|e| Error::Io {
            path: json.display().to_string(),
            source: e,
        })?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Format {
            path: json.display().to_string(),
            line: e.line(),
            message: e.to_string(),
        })?;
        for (k, v) in v.as_object().into_iter().flatten() {
            let url = v.as_str().or_else(|| v.get("url").and_then(|u| u.as_str()));
            match url {
                Some(u) => map.push((k.clone(), u.to_string())),
                None => rep.skip(format!("{}: entry {k} has no url", json.display())),
            }
        }
    } else {
        return Err(Error::Format {
            path: d,
            line: 0,
            message: "a page directory needs urls.tsv (file<TAB>url) or ground-truth.json".into(),
        });
    }
    map.sort();
    let root = dir.canonicalize().map_err(|e| Error::Io {
        path: d.clone(),
        source: e,
    })?;
    let mut pages = Vec::new();
    for (file, url) in map {
        // The map names files inside the directory: never an absolute path, `..`, or a link
        // leading out (`/etc/passwd` is not a page).
        if !inside(&file) {
            rep.skip(format!("{d}: {file:?} is not a path inside the directory"));
            continue;
        }
        let candidates = [
            dir.join(&file),
            dir.join(format!("{file}.html")),
            dir.join(format!("{file}.html.gz")),
            dir.join("html").join(format!("{file}.html")),
            dir.join("html").join(format!("{file}.html.gz")),
        ];
        let Some(found) = candidates.iter().find(|c| c.is_file()) else {
            rep.skip(format!("{d}: no HTML file for {file}"));
            continue;
        };
        if !found.canonicalize().is_ok_and(|c| c.starts_with(&root)) {
            rep.skip(format!("{d}: {file:?} links outside the directory"));
            continue;
        }
        let fp = found.display().to_string();
        let mut bytes = Vec::new();
        dedust_io::open(&fp)?
            .take(MAX_DECODED + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Error::Io {
                path: fp.clone(),
                source: e,
            })?;
        if bytes.len() as u64 > MAX_DECODED {
            rep.skip(format!("{fp}: larger than {MAX_DECODED} bytes"));
            continue;
        }
        pages.push(Page {
            url,
            html: String::from_utf8_lossy(&bytes).into_owned(),
            origin: fp,
        });
    }
    Ok(pages)
}

/// Whether a page map's file name stays inside the page directory: relative, no `..`.
fn inside(file: &str) -> bool {
    use std::path::Component;
    !file.is_empty()
        && Path::new(file)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// Longest line of a JSONL page file (twice [`MAX_DECODED`]: JSON escapes HTML); a longer line is
/// skipped and counted, streamed past.
pub const MAX_JSONL_LINE: u64 = 2 * MAX_DECODED;
/// Largest WARC record block read (bigger records are skipped, streamed past, and counted).
pub const MAX_WARC_RECORD: u64 = 64 << 20;
pub use dedust_io::warc::{MAX_DECODED, MAX_HEADER_LINE};

fn read_warc(
    path: &str,
    pages: &mut Vec<Page>,
    digests: &mut HashMap<String, String>,
    rep: &mut PagesReport,
    ok_only: bool,
) -> Result<()> {
    use dedust_io::warc::{decode_body, field, http_split};
    let r = dedust_io::open(path)?;
    dedust_io::warc::each_record(
        r,
        path,
        MAX_WARC_RECORD,
        MAX_WARC_RECORD,
        &mut |why| rep.skip(why),
        &mut |rec| {
            let kind = field(&rec.fields, "WARC-Type").unwrap_or("");
            let url = field(&rec.fields, "WARC-Target-URI")
                .unwrap_or("")
                .trim_matches(['<', '>'])
                .to_string();
            let digest = field(&rec.fields, "WARC-Payload-Digest").map(str::to_string);
            let origin = rec.origin.clone();
            match kind {
                "response" => {
                    // Not an HTTP response: nothing to read, nothing wrong.
                    let (status, hh, body) = http_split(&rec.block)?;
                    if ok_only && status != 200 {
                        return None;
                    }
                    let ct = field(&hh, "Content-Type")
                        .unwrap_or("")
                        .to_ascii_lowercase();
                    if !ct.contains("html") {
                        return None;
                    }
                    let Some(payload) = decode_body(&hh, body) else {
                        return Some(format!(
                            "{origin}: the payload decodes to more than {MAX_DECODED} bytes"
                        ));
                    };
                    let html = String::from_utf8_lossy(&payload).into_owned();
                    if let Some(d) = digest {
                        digests.insert(d, html.clone());
                    }
                    pages.push(Page { url, html, origin });
                    None
                }
                "revisit" => {
                    let head = http_split(&rec.block);
                    // With `ok_only`, a revisit of a redirect or an error page: no page either.
                    if ok_only && head.as_ref().is_some_and(|(status, _, _)| *status != 200) {
                        return None;
                    }
                    let ct = head
                        .and_then(|(_, hh, _)| {
                            field(&hh, "Content-Type").map(|v| v.to_ascii_lowercase())
                        })
                        .unwrap_or_default();
                    if !ct.contains("html") {
                        return None;
                    }
                    match digest.and_then(|d| digests.get(&d)) {
                        Some(html) => {
                            pages.push(Page {
                                url,
                                html: html.clone(),
                                origin,
                            });
                            None
                        }
                        None => Some(format!("{origin}: revisit of a payload not read before")),
                    }
                }
                _ => None,
            }
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #10: a page map may name only files inside its directory.
    #[test]
    fn page_dir_map_stays_inside_the_directory() {
        let t = std::env::temp_dir().join(format!("dedust-pagedir-{}", std::process::id()));
        let dir = t.join("pages");
        std::fs::create_dir_all(dir.join("html")).unwrap();
        std::fs::write(t.join("secret.html"), "<p>secret</p>").unwrap();
        std::fs::write(dir.join("a.html"), "<p>a</p>").unwrap();
        std::fs::write(dir.join("html/b.html"), "<p>b</p>").unwrap();
        std::os::unix::fs::symlink(t.join("secret.html"), dir.join("link.html")).unwrap();
        let map = [
            ("a", "http://h/a"),
            ("b", "http://h/b"),
            ("./a.html", "http://h/a2"),
            ("../secret", "http://h/up"),
            ("html/../../secret.html", "http://h/up2"),
            ("/etc/passwd", "http://h/abs"),
            ("link", "http://h/link"),
        ];
        let tsv: String = map.iter().map(|(f, u)| format!("{f}\t{u}\n")).collect();
        std::fs::write(dir.join("urls.tsv"), tsv).unwrap();
        let (pages, rep) = read_pages(dir.to_str().unwrap()).unwrap();
        let urls: Vec<&str> = pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls, ["http://h/a2", "http://h/a", "http://h/b"]);
        assert_eq!(rep.skipped, 4, "{:?}", rep.first_bad);
        assert!(pages.iter().all(|p| !p.html.contains("secret")));
        let _ = std::fs::remove_dir_all(&t);
    }

    #[test]
    fn warc_records_table() {
        let t = std::env::temp_dir().join(format!("dedust-warc-{}", std::process::id()));
        std::fs::create_dir_all(&t).unwrap();
        let rec = |kind: &str, url: &str, digest: &str, block: &str| {
            format!(
                "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {url}\r\nWARC-Payload-Digest: {digest}\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
                block.len()
            )
        };
        let chunked = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<p>hi\r\n6\r\nthere<\r\n3\r\n/p>\r\n0\r\n\r\n";
        let text = [
            rec("warcinfo", "", "", "software: x\r\n"),
            rec(
                "response",
                "http://a.org/",
                "sha1:A",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>one</p>",
            ),
            rec(
                "response",
                "http://a.org/x.css",
                "sha1:C",
                "HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\np{}",
            ),
            rec(
                "revisit",
                "http://a.org/",
                "sha1:A",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            ),
            rec(
                "revisit",
                "http://a.org/gone",
                "sha1:Z",
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n",
            ),
            rec("response", "http://a.org/c", "sha1:B", chunked),
            "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 999\r\n\r\nshort".to_string(),
        ]
        .concat();
        let p = t.join("x.warc");
        std::fs::write(&p, text).unwrap();
        let (pages, rep) = read_pages(p.to_str().unwrap()).unwrap();
        let got: Vec<(&str, &str)> = pages
            .iter()
            .map(|p| (p.url.as_str(), p.html.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("http://a.org/", "<p>one</p>"),
                ("http://a.org/", "<p>one</p>"),
                ("http://a.org/c", "<p>hithere</p>"),
            ]
        );
        assert_eq!(rep.skipped, 2, "{rep:?}");
        let _ = std::fs::remove_dir_all(&t);
    }

    #[test]
    fn hostile_warc_records_are_skipped_within_limits() {
        use std::io::Write;
        let t = std::env::temp_dir().join(format!("dedust-warc-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&t).unwrap();
        // A gzip bomb: 65 MiB of zeros, a few KB compressed.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b'a'; (MAX_DECODED + 1024) as usize])
            .unwrap();
        let bomb = gz.finish().unwrap();
        let mut block =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n\r\n"
                .to_vec();
        block.extend_from_slice(&bomb);
        let mut bomb_rec = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://b.org/\r\nContent-Length: {}\r\n\r\n",
            block.len()
        )
        .into_bytes();
        bomb_rec.extend_from_slice(&block);
        bomb_rec.extend_from_slice(b"\r\n\r\n");
        let page = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>ok</p>";
        let good = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: http://a.org/\r\nContent-Length: {}\r\n\r\n{page}\r\n\r\n",
            page.len()
        );
        let long_line = format!(
            "WARC/1.0\r\nX: {}\r\n",
            "y".repeat(MAX_HEADER_LINE as usize)
        );
        let cases: Vec<(&str, Vec<u8>, usize, usize)> = vec![
            // (name, bytes, pages, skipped)
            (
                "huge length",
                b"WARC/1.0\r\nContent-Length: 100000000000\r\n\r\nx".to_vec(),
                0,
                1,
            ),
            (
                "2^64-1",
                b"WARC/1.0\r\nContent-Length: 18446744073709551615\r\n\r\nx".to_vec(),
                0,
                1,
            ),
            (
                "no length",
                b"WARC/1.0\r\nWARC-Type: response\r\n\r\nx".to_vec(),
                0,
                1,
            ),
            (
                "bomb then good",
                [bomb_rec, good.as_bytes().to_vec()].concat(),
                1,
                1,
            ),
            (
                "long header line",
                [good.as_bytes(), long_line.as_bytes()].concat(),
                1,
                1,
            ),
            // A Content-Length 5 bytes short: that record is dropped, reading resumes at the
            // next version line (one skip: the resync is the record's).
            (
                "short length mid-file",
                [
                    good.clone(),
                    good.replace(
                        &format!("Content-Length: {}", page.len()),
                        &format!("Content-Length: {}", page.len() - 5),
                    ),
                    good.clone(),
                    good.clone(),
                ]
                .concat()
                .into_bytes(),
                3,
                1,
            ),
            (
                "garbage between records",
                [good.clone(), "junk\r\nmore junk\r\n".into(), good.clone()]
                    .concat()
                    .into_bytes(),
                2,
                1,
            ),
        ];
        for (name, bytes, pages, skipped) in cases {
            let p = t.join("h.warc");
            std::fs::write(&p, &bytes).unwrap();
            let (got, rep) = read_pages(p.to_str().unwrap()).unwrap();
            assert_eq!(
                (got.len(), rep.skipped),
                (pages, skipped),
                "{name}: {rep:?}"
            );
        }
        // A `.warc.gz` cut short (a partial download): the pages before the cut are kept, the
        // cut record is counted, nothing fails.
        let big = "x".repeat(200_000);
        let page = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>{big}</p>");
        let rec = |u: &str| {
            format!(
                "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {u}\r\nContent-Length: {}\r\n\r\n{page}\r\n\r\n",
                page.len()
            )
        };
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        for u in ["http://a.org/1", "http://a.org/2", "http://a.org/3"] {
            gz.write_all(rec(u).as_bytes()).unwrap();
        }
        let z = gz.finish().unwrap();
        let p = t.join("cut.warc.gz");
        std::fs::write(&p, &z[..z.len() * 5 / 6]).unwrap();
        let (got, rep) = read_pages(p.to_str().unwrap()).unwrap();
        assert_eq!((got.len(), rep.skipped), (2, 1), "{rep:?}");
        let _ = std::fs::remove_dir_all(&t);
    }
}
