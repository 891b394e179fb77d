//! The hand-written fast path of the base layer gives exactly what the `url` crate path gives, on
//! every URL of the shared URL lists (and the forum crawl).

mod common;
use dedust::base::{fast_base, slow_base};
use dedust::BaseOptions;

#[test]
fn fast_path_equals_url_crate_on_real_urls() {
    let mut files = Vec::new();
    for f in [
        "urls/page-links.txt",
        "urls/kasztp.txt",
        "urls/userbait.txt",
    ] {
        match common::shared(f) {
            Some(p) => files.push(p),
            None => return,
        }
    }
    let opts = [
        BaseOptions::default(),
        BaseOptions {
            keep_query_order: true,
            ..Default::default()
        },
    ];
    let (mut fast, mut total) = (0usize, 0usize);
    for f in files {
        let text = std::fs::read(&f).unwrap();
        for line in text.split(|b| *b == b'\n') {
            let Ok(u) = std::str::from_utf8(line) else {
                continue;
            };
            let u = u.trim_end_matches('\r');
            for o in &opts {
                total += 1;
                if let Some(got) = fast_base(u, o) {
                    fast += 1;
                    let want = slow_base(u, o);
                    assert_eq!(Ok(got), want, "input {u:?}");
                }
            }
        }
    }
    eprintln!("fast path took {fast} of {total} inputs");
    assert!(
        fast * 10 > total * 8,
        "fast path should cover most real URLs ({fast}/{total})"
    );
}
