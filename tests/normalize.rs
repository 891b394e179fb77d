//! `dedust normalize`: modes, bad lines (lines in = lines out), idempotence on real URLs.

mod common;
use common::*;

/// A session id `s` (id-valued: dropped by name, whatever its value).
const TRAIN: &[u8] = b"cluster\turl\nx\thttp://h.org/a?t=1\nx\thttp://h.org/a?t=1&s=9f8e7d61\ny\thttp://h.org/a?t=2\ny\thttp://h.org/a?t=2&s=0a1b2c32\n";

fn rules(t: &TempDir) -> String {
    let p = t.write("train.tsv", TRAIN);
    let r = t.path("r.json");
    // `--no-priors`: the tests below read the `s` drop alone (the `https` prior would also
    // rewrite the scheme).
    let o = dedust(&["learn", &p, "--no-priors", "-o", &r], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    r
}

#[test]
fn modes() {
    let t = TempDir::new("norm-modes");
    let r = rules(&t);
    let input = b"http://h.org/a?t=5&s=5e4d3c2b\nHTTP://H.ORG/a?t=5\nhttp://h.org/b\n";
    let o = dedust(&["normalize", "--rules", &r], input);
    assert_eq!(
        stdout(&o),
        "http://h.org/a?t=5\nhttp://h.org/a?t=5\nhttp://h.org/b\n"
    );
    let o = dedust(&["normalize", "--rules", &r, "--dedup"], input);
    assert_eq!(stdout(&o), "http://h.org/a?t=5\nhttp://h.org/b\n");
    let o = dedust(&["normalize", "--rules", &r, "--tsv"], input);
    let fields: Vec<usize> = stdout(&o).lines().map(|l| l.split('\t').count()).collect();
    assert_eq!(fields, [3, 3, 3]);
    let first: Vec<String> = stdout(&o)
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .map(String::from)
        .collect();
    assert_eq!(first[0], "http://h.org/a?t=5&s=5e4d3c2b");
    assert_eq!(first[1], "http://h.org/a?t=5");
    assert!(first[2].starts_with('r'));
    let o = dedust(&["normalize", "--rules", &r, "--stats"], input);
    assert!(
        stderr(&o).contains("3 lines, 2 changed, 0 bad"),
        "{}",
        stderr(&o)
    );
    // No rules: base layer only. --no-base: rules only.
    let o = dedust(&["normalize"], b"HTTP://H.ORG:80/x?b=1&a=2#f\n");
    assert_eq!(stdout(&o), "http://h.org/x?a=2&b=1\n");
    let o = dedust(
        &["normalize", "--no-base", "--rules", &r],
        b"HTTP://H.ORG/a?t=5\nhttp://h.org/a?s=9f8e7d61&t=5\n",
    );
    assert_eq!(stdout(&o), "HTTP://H.ORG/a?t=5\nhttp://h.org/a?t=5\n");
}

/// Undo `--tsv`'s escaping of TAB and CR.
fn unescape(f: &str) -> String {
    f.replace("\\t", "\t").replace("\\r", "\r")
}

#[test]
fn tsv_rows_have_three_fields_and_keep_the_input() {
    let t = TempDir::new("norm-tsv");
    let r = rules(&t);
    // A TAB inside a URL (WHATWG parsers drop it), a backslash, a CR inside a line, a bad line
    // with a TAB, and a duplicate after normalization.
    let lines = [
        "http://h.org/a?t=5&s=5e4d3c2b\t",
        "http://h.org/b\\c",
        "http://h.org/c\rd",
        "not\ta url",
        "http://h.org/a?t=5",
        "http://h.org/\tb\\c",
    ];
    let input = lines.join("\n") + "\n";
    for dedup in [false, true] {
        let mut args = vec!["normalize", "--rules", &r, "--tsv"];
        if dedup {
            args.push("--dedup");
        }
        let o = dedust(&args, input.as_bytes());
        assert!(o.status.success(), "{}", stderr(&o));
        let rows: Vec<Vec<String>> = stdout(&o)
            .lines()
            .map(|l| l.split('\t').map(unescape).collect())
            .collect();
        assert!(rows.iter().all(|r| r.len() == 3), "{rows:?}");
        let firsts: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        if dedup {
            // Lines 5 and 6 repeat the canonical URLs of lines 1 and 2.
            assert_eq!(firsts, &lines[..4], "{rows:?}");
        } else {
            assert_eq!(firsts, lines, "{rows:?}");
        }
        assert_eq!(rows[0][1], "http://h.org/a?t=5");
        // A backslash is written as it is.
        assert!(stdout(&o)
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("http://h.org/b\\c\t"));
        assert_eq!(rows[3][1], lines[3]);
        assert_eq!(rows[3][2], "!bad:not-url");
    }
    // Column 2 is the default output, also when the canonical URL keeps a backslash.
    let input = b"http://h.org/q?x=a\\b\n";
    let plain = stdout(&dedust(&["normalize"], input));
    assert!(plain.contains('\\'), "{plain}");
    let tsv = stdout(&dedust(&["normalize", "--tsv"], input));
    assert_eq!(tsv.split('\t').nth(1), Some(plain.trim_end()));
}

#[test]
fn bad_lines_pass_through() {
    let t = TempDir::new("norm-bad");
    let r = rules(&t);
    let long = format!("http://h.org/{}", "a".repeat(70_000));
    let mut input: Vec<u8> = Vec::new();
    input.extend_from_slice(b"http://h.org/a?t=1&s=0a1b2c32\n");
    input.extend_from_slice(b"not a url\n");
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"http://h.org/\xff\xfe\n");
    input.extend_from_slice(long.as_bytes());
    input.extend_from_slice(b"\nhttp://h.org/last");
    let o = dedust(&["normalize", "--rules", &r], &input);
    assert!(o.status.success());
    let out = o.stdout.split(|b| *b == b'\n').collect::<Vec<_>>();
    assert_eq!(out.len() - 1, 6, "lines in = lines out");
    assert_eq!(out[1], b"not a url");
    assert_eq!(out[2], b"");
    assert_eq!(out[3], b"http://h.org/\xff\xfe");
    assert_eq!(out[4], long.as_bytes());
    assert!(
        stderr(&o).contains("4 bad lines passed through"),
        "{}",
        stderr(&o)
    );
    let o = dedust(&["normalize", "--rules", &r, "--tsv"], &input);
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("not a url\tnot a url\t!bad:not-url"));
    assert!(s.contains("!bad:empty") && s.contains("!bad:not-utf8") && s.contains("!bad:too-long"));
    let o = dedust(&["normalize", "--rules", &r, "--strict"], &input);
    assert_eq!(o.status.code(), Some(3));
    // Broken rule file: exit 1 with the file name.
    let bad = t.write(
        "bad.json",
        b"{\"format\": \"dedust-rules\", \"version\": 1, \"rules\": [}",
    );
    let o = dedust(&["normalize", "--rules", &bad], b"http://h.org/\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.json"), "{}", stderr(&o));
}

#[test]
fn idempotent_on_real_urls() {
    let Some(clusters) = shared("ubuntuforums/clusters.tsv") else {
        return;
    };
    let Some(links) = shared("urls/page-links.txt") else {
        return;
    };
    let t = TempDir::new("norm-idem");
    let r = t.path("forum.json");
    assert!(
        dedust(&["learn", &clusters, "--no-validate", "-o", &r], b"")
            .status
            .success()
    );
    let text = std::fs::read(&links).unwrap();
    let forum: Vec<u8> = std::fs::read_to_string(&clusters)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap().to_string() + "\n")
        .collect::<String>()
        .into_bytes();
    for input in [text, forum] {
        let once = dedust(&["normalize", "--rules", &r], &input);
        assert!(once.status.success());
        let twice = dedust(&["normalize", "--rules", &r], &once.stdout);
        assert_eq!(
            once.stdout.iter().filter(|b| **b == b'\n').count(),
            input.iter().filter(|b| **b == b'\n').count(),
            "lines in = lines out"
        );
        assert!(once.stdout == twice.stdout, "normalize is not idempotent");
    }
}

/// `dedust ARGS` with stdin and stdout piped to the test (stderr dropped), for tests that talk to
/// a running process.
fn spawn(args: &[&str]) -> std::process::Child {
    use std::process::{Command, Stdio};
    Command::new(env!("CARGO_BIN_EXE_dedust"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn output_closed_early_ends_the_run() {
    use std::io::{Read, Write};
    // Enough lines for several blocks in flight; the reader of stdout goes away after a few bytes.
    let line = b"http://example.org/some/long/path/segment?b=2&a=1&utm_source=feed\n";
    let input: Vec<u8> = line
        .iter()
        .copied()
        .cycle()
        .take(line.len() * 400_000)
        .collect();
    let mut child = spawn(&["normalize", "--threads", "2"]);
    let mut si = child.stdin.take().unwrap();
    let w = std::thread::spawn(move || {
        let _ = si.write_all(&input);
    });
    let mut so = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    so.read_exact(&mut first).unwrap();
    drop(so);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            start.elapsed().as_secs() < 60,
            "normalize hangs after its output closed"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let _ = w.join();
    assert_eq!(&first, b"http://example.o");
    // As Unix filters do: a closed output ends the run quietly, exit 0.
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn line_buffered_answers_each_line_while_the_input_stays_open() {
    use std::io::{BufRead, BufReader, Write};
    for threads in ["1", "2"] {
        let mut child = spawn(&["normalize", "--line-buffered", "--threads", threads]);
        let mut si = child.stdin.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let so = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(so).lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        // Like a crawler asking one URL at a time: the next line is written only after the
        // answer to the previous one came back.
        for (ask, answer) in [
            ("HTTP://A.ORG/x?b=1&a=2", "http://a.org/x?a=2&b=1"),
            ("not a url", "not a url"),
            ("https://b.org:443/", "https://b.org/"),
        ] {
            si.write_all(format!("{ask}\n").as_bytes()).unwrap();
            si.flush().unwrap();
            let got = rx
                .recv_timeout(std::time::Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no answer to {ask:?} ({threads} threads)"));
            assert_eq!(got, answer);
        }
        drop(si);
        assert!(child.wait().unwrap().success());
    }
}

/// Issue #10, data loss: `normalize F -o F` (any spelling of F) is refused before anything is
/// written; other commands refuse an output that is one of their inputs the same way.
#[test]
fn an_output_that_is_an_input_is_refused() {
    let t = TempDir::new("normalize-same");
    let urls = b"http://a.org/x?utm_source=1\nhttp://b.org/\n";
    let f = t.write("f.txt", urls);
    let link = t.path("link.txt");
    std::os::unix::fs::symlink(&f, &link).unwrap();
    let dotted = t.0.join(".").join("f.txt").to_string_lossy().into_owned();
    let rules = t.write("r.json", &std::fs::read("rules/demo.json").unwrap());
    for args in [
        vec!["normalize", &f, "-o", &f],
        vec!["normalize", &link, "-o", &dotted],
        vec!["normalize", &f, "-r", &rules, "-o", &rules],
        vec!["learn", &f, "-o", &f],
        vec!["export", "-r", &rules, "--format", "nutch", "-o", &rules],
        vec!["merge", &rules, "-o", &rules],
    ] {
        let before = std::fs::read(&rules).unwrap();
        let o = dedust(&args, b"");
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("is also an input"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_eq!(std::fs::read(&f).unwrap(), urls, "{args:?}");
        assert_eq!(std::fs::read(&rules).unwrap(), before, "{args:?}");
    }
    // A distinct output, and a device, are fine.
    let out = t.path("out.txt");
    let o = dedust(&["normalize", &f, "-o", &out], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 2);
    let o = dedust(&["normalize", &f, "-o", "/dev/null"], b"");
    assert!(o.status.success(), "{}", stderr(&o));
}

/// Issue #10, data loss: an output is replaced whole or not at all. A write cut short (here the
/// file-size limit kills the process mid-write) leaves the previous file as it was.
#[test]
fn a_write_cut_short_leaves_the_previous_output_intact() {
    let t = TempDir::new("normalize-atomic");
    let mut big = String::new();
    for i in 0..20_000 {
        big += &format!("http://a.org/page/{i}?utm_source=x\n");
    }
    let f = t.write("f.txt", big.as_bytes());
    let out = t.write("out.txt", b"the previous good output\n");
    let sh = format!(
        "ulimit -f 16; exec '{}' normalize '{f}' -o '{out}'",
        env!("CARGO_BIN_EXE_dedust")
    );
    let o = std::process::Command::new("sh")
        .args(["-c", &sh])
        .output()
        .unwrap();
    assert!(!o.status.success(), "the size limit must stop the write");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "the previous good output\n"
    );
    let o = dedust(&["normalize", &f, "-o", &out], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().lines().count(),
        20_000
    );
}

/// Issue #10: an imported rule that stops at the regex backtracking limit is reported, and
/// `--strict` fails on it (exit 3), instead of being skipped silently.
#[test]
fn an_imported_rule_at_the_backtracking_limit_is_reported() {
    let t = TempDir::new("normalize-redos");
    let xml = t.write(
        "redos.xml",
        b"<regex-normalize><regex><pattern>(a|a)+(?&lt;!x)!|z</pattern><substitution>Z</substitution></regex></regex-normalize>",
    );
    let rules = t.path("redos.json");
    let o = dedust(&["import", &xml, "-o", &rules], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let urls: String = [15, 40]
        .iter()
        .map(|n| format!("http://h.org/{}?q=z\n", "a".repeat(*n)))
        .collect();
    let o = dedust(&["normalize", "--strict", "-r", &rules], urls.as_bytes());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 times an imported regex rule stopped at the backtracking limit"),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], format!("http://h.org/{}?q=Z", "a".repeat(15)));
    let o = dedust(&["normalize", "-r", &rules], urls.as_bytes());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// Issue #10: a rule chain that keeps growing a URL (an imported `a` → `aa`) stops before the
/// output passes the longest URL normalize accepts; it is reported, and `--strict` fails.
#[test]
fn a_rule_chain_growing_a_url_stops_and_is_reported() {
    let t = TempDir::new("normalize-grow");
    let xml = t.write(
        "grow.xml",
        b"<regex-normalize><regex><pattern>a</pattern><substitution>aa</substitution></regex></regex-normalize>",
    );
    let rules = t.path("grow.json");
    assert!(dedust(&["import", &xml, "-o", &rules], b"")
        .status
        .success());
    let url = format!("http://h.org/{}\n", "a".repeat(1000));
    let o = dedust(&["normalize", "--strict", "-r", &rules], url.as_bytes());
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("rewrites refused"), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("grows a URL each time it applies"),
        "{}",
        stderr(&o)
    );
    // Reported when the rules are loaded, whatever the input.
    let o = dedust(
        &["normalize", "--strict", "-r", &rules],
        b"http://h.org/x\n",
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("grows a URL each time it applies"),
        "{}",
        stderr(&o)
    );
    let o = dedust(
        &["normalize", "--strict", "-r", "rules/demo.json"],
        b"http://h.org/x\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).len() <= 64 * 1024 + 1);
}

/// Imported rules write text: their output goes through the base layer again (a query they
/// leave unsorted is sorted), so normalizing the output again changes nothing; a chain longer
/// than the passes is counted and fails `--strict` (exit 3).
#[test]
fn imported_rules_reach_a_fixed_point_or_are_counted() {
    let t = TempDir::new("normalize-fixed-point");
    let import = |name: &str, xml: &str| -> String {
        let file = t.write(&format!("{name}.xml"), xml.as_bytes());
        let rules = t.path(&format!("{name}.json"));
        let o = dedust(&["import", &file, "-o", &rules], b"");
        assert!(o.status.success(), "{}", stderr(&o));
        rules
    };
    // A rule whose substitution writes parameters out of order.
    let unsorted = import(
        "unsorted",
        "<regex-normalize><regex><pattern>x=1</pattern><substitution>z=9&amp;a=0</substitution></regex></regex-normalize>",
    );
    let o = dedust(
        &["normalize", "--strict", "-r", &unsorted],
        b"http://h.org/p?x=1\n",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let once = stdout(&o);
    assert_eq!(once, "http://h.org/p?a=0&z=9\n");
    let o = dedust(&["normalize", "-r", &unsorted], once.as_bytes());
    assert_eq!(stdout(&o), once, "normalizing the output again changes it");
    // Thirty steps written in reverse order: one step a pass, more steps than passes.
    let chain: String = (0..30)
        .rev()
        .map(|i| {
            format!(
                "<regex><pattern>/s{i}$</pattern><substitution>/s{}</substitution></regex>",
                i + 1
            )
        })
        .collect();
    let chain = import(
        "chain",
        &format!("<regex-normalize>{chain}</regex-normalize>"),
    );
    let input = b"http://h.org/s0\nhttp://h.org/s29\nhttp://h.org/other\n";
    let o = dedust(&["normalize", "--strict", "-r", &chain], input);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("normalize: 1 URLs were still changing after 8 passes"),
        "{}",
        stderr(&o)
    );
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[1..], ["http://h.org/s30", "http://h.org/other"]);
    assert_ne!(
        lines[0], "http://h.org/s30",
        "the chain cannot finish in 8 passes"
    );
    let o = dedust(&["normalize", "-r", &chain], input);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
