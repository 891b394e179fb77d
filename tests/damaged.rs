//! Damaged inputs and nonsense flags: every command reads a damaged gzip file up to the damage
//! and says so alike; a WARC record whose `Content-Length` is no number of bytes is one skip,
//! and the records after it are read; flag values that cannot work are refused; a rule file or
//! list past the size limit is refused before it is held.
//!
//! In: small files written here (a URL list and a cluster file gzipped, then padded with zeros
//! or cut; a WARC of three redirect records). Out: exit codes, outputs and warnings of `learn`,
//! `normalize`, `site`, `evaluate`. Complexity: a dozen runs on files of a few hundred bytes.

mod common;
use common::*;
use std::io::Write;

fn gzip(text: &str) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text.as_bytes()).unwrap();
    e.finish().unwrap()
}

/// Each command keeps the whole lines before the damage and names it in one warning, the same
/// from every command; an undamaged file gives no warning.
#[test]
fn damaged_gzip_is_read_up_to_the_damage_by_every_command() {
    let t = TempDir::new("damaged-gzip");
    let urls: String = (0..200)
        .map(|k| format!("https://h.org/item?id={k}&sid={}\n", k * 7919 % 1000))
        .collect();
    let whole = gzip(&urls);
    let mut padded = whole.clone();
    padded.extend_from_slice(&[0; 512]);
    let cut = whole[..whole.len() * 2 / 3].to_vec();
    let mut warnings = Vec::new();
    for (name, bytes, damaged) in [
        ("whole", whole, false),
        ("padded", padded, true),
        ("cut", cut, true),
    ] {
        let f = t.write(&format!("{name}.gz"), &bytes);
        let n = dedust(&["normalize", &f, "-q"], b"");
        let s = dedust(&["site", &f, "-q"], b"");
        assert!(
            n.status.success() && s.status.success(),
            "{name}: {}",
            stderr(&n)
        );
        let (out_n, out_s) = (stdout(&n), stdout(&s));
        // As many lines out of both, each an input line's, the input's first ones.
        let lines = out_n.lines().count();
        assert_eq!(lines, out_s.lines().count(), "{name}");
        assert!(
            urls.starts_with(&out_n),
            "{name}: normalize printed a line not read whole"
        );
        let warn = |o: &std::process::Output| {
            stderr(o)
                .lines()
                .filter(|l| l.contains("damaged gzip data"))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(warn(&n), warn(&s), "{name}");
        if damaged {
            assert_eq!(warn(&n).len(), 1, "{name}: {}", stderr(&n));
            assert!(
                warn(&n)[0].contains(&format!("{name}.gz")),
                "{:?}",
                warn(&n)
            );
            assert!(lines > 0, "{name}");
            warnings.push(warn(&n)[0].clone());
        } else {
            assert!(warn(&n).is_empty(), "{}", stderr(&n));
            assert_eq!(lines, 200);
        }
        if name == "padded" {
            assert_eq!(lines, 200, "zero padding loses no line");
        }
        if name == "cut" {
            assert!(lines < 200);
        }
    }
    // A cluster file: `learn` reads the clusters before the damage, and warns.
    let clusters: String = std::iter::once("cluster\turl\n".to_string())
        .chain((0..50).map(|k| format!("c{}\thttps://h.org/item?id={}&sid={k}\n", k / 2, k / 2)))
        .collect();
    let mut padded = gzip(&clusters);
    padded.extend_from_slice(&[0; 64]);
    let f = t.write("clusters.tsv.gz", &padded);
    let o = dedust(&["learn", &f, "-o", &t.path("r.json")], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("25 clusters (25 with duplicates), 50 URLs"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("damaged gzip data"), "{}", stderr(&o));
    assert_eq!(warnings.len(), 2);
}

/// A WARC record whose `Content-Length` is `-1`, hex or 24 digits is one skip each; the
/// redirect records before and after it are read.
#[test]
fn a_warc_content_length_that_is_no_length_skips_one_record() {
    let t = TempDir::new("damaged-warc");
    let rec = |url: &str, to: &str| {
        let block = format!("HTTP/1.1 301 Moved\r\nLocation: {to}\r\n\r\n");
        format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n\
             Content-Type: application/http; msgtype=response\r\nContent-Length: {}\r\n\r\n{block}\r\n\r\n",
            block.len()
        )
    };
    let bad = |len: &str| {
        format!("WARC/1.0\r\nWARC-Type: response\r\nContent-Length: {len}\r\n\r\nHTTP/1.1 200 OK\r\n\r\nbody\r\n\r\n")
    };
    let warc = [
        rec("https://h.org/a?sid=1", "https://h.org/a"),
        bad("-1"),
        rec("https://h.org/b?sid=2", "https://h.org/b"),
        bad("0x40"),
        bad("123456789012345678901234"),
        rec("https://h.org/c?sid=3", "https://h.org/c"),
    ]
    .concat();
    let f = t.write("w.warc", warc.as_bytes());
    let o = dedust(&["learn", &f, "-o", &t.path("r.json")], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("3 redirect pairs"), "{err}");
    assert!(err.contains("skipped 3 malformed records"), "{err}");
}

/// Flag values that cannot work are refused before any work: too many threads (exit 1, with
/// the cap), threads the machine cannot start (exit 1), a held-out share of 1, more folds than
/// clusters.
#[test]
fn nonsense_flag_values_are_refused() {
    let t = TempDir::new("damaged-flags");
    let f = t.write(
        "c.tsv",
        b"cluster\turl\nc1\thttps://h.org/a?s=1\nc1\thttps://h.org/a?s=2\n",
    );
    let o = dedust(
        &["learn", &f, "--threads", "100000", "-o", &t.path("r.json")],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("at most 1024 worker threads"),
        "{}",
        stderr(&o)
    );
    let o = dedust(
        &["learn", &f, "--holdout", "1", "-o", &t.path("r.json")],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = dedust(&["evaluate", "--truth", &f, "--folds", "100000"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = dedust(&["evaluate", "--truth", &f, "--folds", "3"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--folds 3: the input holds 1 clusters"),
        "{}",
        stderr(&o)
    );
    // Threads the process may not start: a clear error, not a panic (exit 101).
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v 300000 && exec {} learn {f} --threads 1000 -q -o {}",
            env!("CARGO_BIN_EXE_dedust"),
            t.path("r.json")
        ))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cannot start 1000 worker threads"),
        "{}",
        stderr(&o)
    );
}

/// A rule file or list past the limit (`-r /dev/zero`, an endless stream) is refused with an
/// error naming the file and the limit, after reading no more than the limit.
#[test]
fn an_endless_rule_file_or_list_is_refused_at_the_limit() {
    let limit = dedust::rulefile::MAX_RULE_FILE.to_string();
    for args in [
        &["normalize", "-r", "/dev/zero"][..],
        &[
            "import",
            "--from",
            "clearurls",
            "/dev/zero",
            "-o",
            "/dev/null",
        ][..],
    ] {
        let o = dedust(args, b"http://h.org/\n");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("/dev/zero") && err.contains(&format!("more than {limit} bytes")),
            "{args:?}: {err}"
        );
    }
}
