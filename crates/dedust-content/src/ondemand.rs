//! On demand: compare two captured pages read from their WARC records by offset.
//!
//! In: the WARC files an index names (resolved to local paths by the caller) and, per URL, the
//! place of its record (file, offset, length), as a web-archive index gives them. Out:
//! [`OnDemand::same`], whether the pages of two URLs are one (TDW cosine with the URL's words
//! left out, as `learn` clusters a WARC's pages; [`crate::refine`]), and counts of what was
//! read ([`OnDemandStats`]). `learn` asks it about a sample of each rule's *unknown* merges
//! (two captures with different digests), so a crawl's index with its WARC files at hand is
//! judged by content rather than by record lengths.
//!
//! Invariants (hostile input): a record is read only up to its index length and at most
//! [`MAX_RECORD`] bytes; it must decode (gzip member or plain WARC) to one `response` record
//! whose `WARC-Target-URI` is the URL the index names, of status 200 with an HTML payload of
//! at most [`MAX_PAGE`] bytes, within the WARC reader's limits
//! ([`dedust_io::warc`]); anything else is no page, and a pair with no page on either side
//! has no verdict (`None`), never an error. A page under [`crate::refine::MIN_TERMS`] words
//! (a stub) has no verdict either. The answer for a pair does not depend on the order pairs
//! are asked in (the cache only saves work).
//!
//! # Complexity
//! One seek and at most [`MAX_RECORD`] bytes read and decoded per URL asked, each URL once
//! while the cache holds fewer than [`MAX_CACHED`] pages (then again on each ask); `O(t)` per
//! comparison for `t` terms.

use crate::similarity::{compare, SimOptions};
use crate::tdw::{features, Features, Weights};
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Largest record (as stored in the file) read for one page.
pub const MAX_RECORD: u64 = 16 << 20;

/// Largest page (HTML once its codings are undone) compared; a larger one is no page.
pub const MAX_PAGE: usize = 8 << 20;

/// Most pages whose features are kept between comparisons.
pub const MAX_CACHED: usize = 20_000;

/// Where one URL's record lies: a file (an index into the files given to [`OnDemand::new`]),
/// its offset and its length in bytes, and the URL as the index spells it (the record's
/// `WARC-Target-URI` must be that URL: a wrong offset reads no page).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordAt {
    /// The record's target URI, as the index spells it.
    pub url: String,
    /// Index into the files.
    pub file: usize,
    /// First byte of the record (of its gzip member in a `.warc.gz`).
    pub offset: u64,
    /// Length of the record in the file.
    pub len: u64,
}

/// What [`OnDemand`] did so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnDemandStats {
    /// Records read.
    pub read: usize,
    /// Of them, no page (unreadable, not a 200 HTML response, a stub).
    pub no_page: usize,
    /// Pairs compared with a page on both sides: found the same page.
    pub same: usize,
    /// … found different pages.
    pub different: usize,
}

/// Compares the pages of two URLs read from their WARC records ([`OnDemand::same`]).
///
/// ```
/// use dedust_content::ondemand::{OnDemand, RecordAt};
/// use std::collections::HashMap;
/// let dir = std::env::temp_dir().join(format!("dedust-doc-ondemand-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let words = "zebras graze quietly across the wide golden savanna while distant lions rest \
///              under acacia trees and herds of elephants move slowly toward the river at dusk \
///              as the evening light fades over the hills";
/// let rec = |url: &str, body: &str| {
///     let block = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>{body}</p>");
///     format!("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n\
///              Content-Length: {}\r\n\r\n{block}\r\n\r\n", block.len())
/// };
/// let a = rec("http://h.org/a", words);
/// let b = rec("http://h.org/a?s=1", words);
/// let c = rec("http://h.org/b", "a different page about the tides of the northern sea and the \
///     fishing boats that leave the harbour before dawn to follow the shoals of herring east, \
///     with nets mended by old sailors who sing loud songs about storms, wrecks and home");
/// let path = dir.join("crawl.warc");
/// std::fs::write(&path, format!("{a}{b}{c}")).unwrap();
/// let at = |url: &str, offset: usize, len: usize| {
///     let (offset, len) = (offset as u64, len as u64);
///     (url.to_string(), RecordAt { url: url.to_string(), file: 0, offset, len })
/// };
/// let places: HashMap<String, RecordAt> = [
///     at("http://h.org/a", 0, a.len()),
///     at("http://h.org/a?s=1", a.len(), b.len()),
///     at("http://h.org/b", a.len() + b.len(), c.len()),
/// ]
/// .into();
/// let check = OnDemand::new(vec![Some(path)], places);
/// assert_eq!(check.same("http://h.org/a?s=1", "http://h.org/a"), Some(true));
/// assert_eq!(check.same("http://h.org/b", "http://h.org/a"), Some(false));
/// // A URL whose record is not known: no verdict.
/// assert_eq!(check.same("http://h.org/c", "http://h.org/a"), None);
/// ```
pub struct OnDemand {
    files: Vec<Option<PathBuf>>,
    places: HashMap<String, RecordAt>,
    weights: Weights,
    opts: SimOptions,
    cache: Mutex<HashMap<String, Option<Arc<Features>>>>,
    read: AtomicUsize,
    no_page: AtomicUsize,
    same: AtomicUsize,
    different: AtomicUsize,
}

impl OnDemand {
    /// Over `files` (`None`: a file not at hand) and the places of the URLs' records, keyed by
    /// the URL as it will be asked for.
    pub fn new(files: Vec<Option<PathBuf>>, places: HashMap<String, RecordAt>) -> OnDemand {
        OnDemand {
            files,
            places,
            // The page's words only, as `learn` clusters a WARC's pages.
            weights: Weights {
                url: 0.0,
                ..Default::default()
            },
            opts: SimOptions::default(),
            cache: Mutex::new(HashMap::new()),
            read: AtomicUsize::new(0),
            no_page: AtomicUsize::new(0),
            same: AtomicUsize::new(0),
            different: AtomicUsize::new(0),
        }
    }

    /// How many URLs have a record in a file at hand.
    pub fn reachable(&self) -> usize {
        self.places
            .values()
            .filter(|p| self.files.get(p.file).is_some_and(|f| f.is_some()))
            .count()
    }

    /// Whether the pages of `a` and `b` are one: `None` when either has no page (no record at
    /// hand, unreadable, not a status-200 HTML response, a stub).
    pub fn same(&self, a: &str, b: &str) -> Option<bool> {
        let fa = self.page(a)?;
        let fb = self.page(b)?;
        let (same, _) = compare(&fa, &fb, &self.opts);
        let n = if same { &self.same } else { &self.different };
        n.fetch_add(1, Ordering::Relaxed);
        Some(same)
    }

    /// What was read and compared so far.
    pub fn stats(&self) -> OnDemandStats {
        OnDemandStats {
            read: self.read.load(Ordering::Relaxed),
            no_page: self.no_page.load(Ordering::Relaxed),
            same: self.same.load(Ordering::Relaxed),
            different: self.different.load(Ordering::Relaxed),
        }
    }

    /// The features of `url`'s page, read once while the cache has room.
    fn page(&self, url: &str) -> Option<Arc<Features>> {
        if let Some(f) = self.cache.lock().expect("cache").get(url) {
            return f.clone();
        }
        let place = self.places.get(url)?;
        let path = self.files.get(place.file)?.as_ref()?;
        self.read.fetch_add(1, Ordering::Relaxed);
        let got = read_html(path, place).and_then(|html| {
            let f = features(url, &html, &self.weights);
            let words: u32 = f.tf.values().sum();
            (words >= crate::refine::MIN_TERMS).then(|| Arc::new(f))
        });
        if got.is_none() {
            self.no_page.fetch_add(1, Ordering::Relaxed);
        }
        let mut cache = self.cache.lock().expect("cache");
        if cache.len() < MAX_CACHED {
            cache.insert(url.to_string(), got.clone());
        }
        got
    }
}

/// The HTML of the status-200 response record of `at.url` at `at` in `path`, if it is one.
fn read_html(path: &PathBuf, at: &RecordAt) -> Option<String> {
    use dedust_io::warc::{decode_body, each_record, field, http_split};
    if at.len == 0 || at.len > MAX_RECORD {
        return None;
    }
    let mut f = std::fs::File::open(path).ok()?;
    f.seek(SeekFrom::Start(at.offset)).ok()?;
    let mut raw = Vec::new();
    f.take(at.len).read_to_end(&mut raw).ok()?;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .take(MAX_RECORD + (1 << 20))
            .read_to_end(&mut out)
            .ok()?;
        out
    } else {
        raw
    };
    let mut html = None;
    let mut first = true;
    each_record(
        &bytes[..],
        "",
        MAX_RECORD,
        MAX_RECORD,
        &mut |_| {},
        &mut |rec| {
            if !std::mem::take(&mut first) {
                return None;
            }
            let uri =
                field(&rec.fields, "WARC-Target-URI").map(|u| u.trim().trim_matches(['<', '>']));
            if field(&rec.fields, "WARC-Type") != Some("response") || uri != Some(at.url.as_str()) {
                return None;
            }
            let (status, hh, body) = http_split(&rec.block)?;
            let html_type =
                field(&hh, "Content-Type").is_some_and(|c| c.to_ascii_lowercase().contains("html"));
            if status != 200 || !html_type {
                return None;
            }
            html = decode_body(&hh, body)
                .filter(|p| p.len() <= MAX_PAGE)
                .map(|p| String::from_utf8_lossy(&p).into_owned());
            None
        },
    );
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records that are no page give no verdict: a 404, a revisit, a record cut short, bytes
    /// that are no WARC, a length past the limit, a file not at hand.
    #[test]
    fn records_that_are_no_page_give_no_verdict() {
        let dir = std::env::temp_dir().join(format!("dedust-ondemand-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let words = "zebras graze quietly across the wide golden savanna while distant lions \
                     rest under acacia trees and herds of elephants move slowly toward the river \
                     as the evening light fades over the hills";
        let rec = |kind: &str, status: &str, body: &str| {
            let block =
                format!("HTTP/1.1 {status}\r\nContent-Type: text/html\r\n\r\n<p>{body}</p>");
            format!(
                "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: http://h.org/\r\n\
                 Content-Length: {}\r\n\r\n{block}\r\n\r\n",
                block.len()
            )
        };
        let good = rec("response", "200 OK", words);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, good.as_bytes()).unwrap();
        let good_gz = gz.finish().unwrap();
        let cases: Vec<(&str, Vec<u8>, u64, Option<bool>)> = vec![
            (
                "plain",
                good.clone().into_bytes(),
                good.len() as u64,
                Some(true),
            ),
            (
                "gzip member",
                good_gz.clone(),
                good_gz.len() as u64,
                Some(true),
            ),
            (
                "404",
                rec("response", "404 Not Found", words).into_bytes(),
                0,
                None,
            ),
            (
                "revisit",
                rec("revisit", "200 OK", words).into_bytes(),
                0,
                None,
            ),
            (
                "stub",
                rec("response", "200 OK", "hello").into_bytes(),
                0,
                None,
            ),
            ("cut", good.as_bytes()[..good.len() / 2].to_vec(), 0, None),
            ("cut gzip", good_gz[..good_gz.len() / 2].to_vec(), 0, None),
            ("no warc", b"GET / HTTP/1.1\r\n\r\n".to_vec(), 0, None),
            (
                "over the limit",
                good.clone().into_bytes(),
                MAX_RECORD + 1,
                None,
            ),
        ];
        for (name, bytes, len, want) in cases {
            let path = dir.join(format!("{}.warc", name.replace(' ', "-")));
            let len = if len == 0 { bytes.len() as u64 } else { len };
            let reference = good.len() as u64;
            std::fs::write(&path, [&bytes[..], good.as_bytes()].concat()).unwrap();
            let at = |file, offset, len| RecordAt {
                url: "http://h.org/".to_string(),
                file,
                offset,
                len,
            };
            let places: HashMap<String, RecordAt> = [
                ("http://h.org/x".to_string(), at(0, 0, len)),
                (
                    "http://h.org/".to_string(),
                    at(0, bytes.len() as u64, reference),
                ),
                ("http://h.org/gone".to_string(), at(1, 0, 10)),
                // The index names another URL than the record holds: a wrong offset.
                (
                    "http://h.org/other".to_string(),
                    RecordAt {
                        url: "http://h.org/other".to_string(),
                        ..at(0, bytes.len() as u64, reference)
                    },
                ),
            ]
            .into();
            let check = OnDemand::new(vec![Some(path), None], places);
            assert_eq!(
                check.same("http://h.org/other", "http://h.org/"),
                None,
                "{name}"
            );
            assert_eq!(
                check.same("http://h.org/x", "http://h.org/"),
                want,
                "{name}"
            );
            assert_eq!(
                check.same("http://h.org/gone", "http://h.org/"),
                None,
                "{name}"
            );
            // Asked again (from the cache): the same answer.
            assert_eq!(
                check.same("http://h.org/x", "http://h.org/"),
                want,
                "{name}"
            );
        }
    }
}
