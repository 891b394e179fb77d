//! `dedust site`: one line out per line in — the site `learn` splits clusters by (registrable
//! domain after base normalization), with `--with-host` the host too; an empty line for a URL
//! learn leaves out (the base layer rejects it, or parsers could read it as two hosts); gzip
//! input, non-UTF-8 bytes and huge lines never break the line count; and a boilerplate digest
//! (more sites than `--boilerplate-sites`) is learned per host.

mod common;
use common::*;

#[test]
fn one_site_per_line_as_learn_splits() {
    // (input line, site, host); an empty site for a line learn leaves out.
    let cases: &[(&str, &str, &str)] = &[
        ("https://www.bbc.co.uk/news", "bbc.co.uk", "www.bbc.co.uk"),
        (
            "HTTP://Forum3.Example.COM:80/x",
            "example.com",
            "forum3.example.com",
        ),
        ("  http://a.b.github.io/p  ", "b.github.io", "a.b.github.io"),
        ("http://10.0.0.1/x", "10.0.0.1", "10.0.0.1"),
        ("http://[::1]:8080/", "[::1]", "[::1]"),
        ("http://localhost/", "localhost", "localhost"),
        // A host written in Unicode is read differently by different parsers (IDNA
        // mappings): it decides nothing; its ASCII form is placed.
        ("http://münchen.de/", "", ""),
        (
            "http://xn--mnchen-3ya.de/",
            "xn--mnchen-3ya.de",
            "xn--mnchen-3ya.de",
        ),
        ("https://evil.org\\@victim.org/", "", ""),
        ("not a url", "", ""),
        ("", "", ""),
        ("mailto:x@y.org", "", ""),
    ];
    let input: String = cases.iter().map(|(u, _, _)| format!("{u}\n")).collect();
    let plain = stdout(&dedust(&["site", "-q"], input.as_bytes()));
    let with_host = stdout(&dedust(&["site", "-q", "--with-host"], input.as_bytes()));
    let plain: Vec<&str> = plain.lines().collect();
    let with_host: Vec<&str> = with_host.lines().collect();
    assert_eq!(plain.len(), cases.len(), "{plain:?}");
    assert_eq!(with_host.len(), cases.len(), "{with_host:?}");
    for (i, (url, site, host)) in cases.iter().enumerate() {
        assert_eq!(plain[i], *site, "{url:?}");
        let want = if site.is_empty() {
            String::new()
        } else {
            format!("{site}\t{host}")
        };
        assert_eq!(with_host[i], want, "{url:?}");
    }
}

#[test]
fn hostile_lines_keep_the_line_count() {
    let t = TempDir::new("site");
    let mut data = b"http://a.org/1\n http://b.org/\xff\xfe\n".to_vec();
    data.extend(b"http://c.org/");
    data.extend(std::iter::repeat_n(b'a', 3 << 20));
    data.extend(b"\nhttp://d.org/last-without-newline");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &data).unwrap();
    let gz_path = t.write("urls.txt.gz", &gz.finish().unwrap());
    let out = t.path("sites.txt");
    let o = dedust(&["site", &gz_path, "-o", &out], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let got = std::fs::read_to_string(&out).unwrap();
    // The 3 MiB line is over learn's URL limit: left out, an empty line, counted as cut.
    assert_eq!(got, "a.org\nb.org\n\nd.org\n");
    assert!(
        stderr(&o).contains("4 lines, 1 left out by learn"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("1 cut"), "{}", stderr(&o));
    // `-o` over the input is refused; nothing is written over it.
    let before = std::fs::read(&gz_path).unwrap();
    let o = dedust(&["site", &gz_path, "-o", &gz_path], b"");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("also an input"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&gz_path).unwrap(), before);
}

#[test]
fn boilerplate_digests_are_learned_per_host() {
    // One empty-body digest on 25 sites, two hosts each (`www.` and bare): as one cluster per
    // site it would teach `www.sN.org/e` → `sN.org/e` 25 times; it is boilerplate.
    let mut tsv = String::from("cluster\turl\n");
    for s in 0..25 {
        tsv += &format!("empty\thttp://www.s{s}.org/e\nempty\thttp://s{s}.org/e\n");
    }
    let t = TempDir::new("site-boiler");
    let f = t.write("c.tsv", tsv.as_bytes());
    let o = dedust(&["learn", &f, "--no-validate"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 clusters span more than 20 registrable domains"),
        "{}",
        stderr(&o)
    );
    assert!(
        !stdout(&o).contains("\"kind\""),
        "no rule from boilerplate:\n{}",
        stdout(&o)
    );
    let o = dedust(
        &["learn", &f, "--no-validate", "--boilerplate-sites", "30"],
        b"",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("boilerplate"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("\"kind\""),
        "per site, the www alias is learned:\n{}",
        stdout(&o)
    );
    let o = dedust(&["learn", &f, "--boilerplate-sites", "0"], b"");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
