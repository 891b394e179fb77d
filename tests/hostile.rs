//! Hostile crawl data end to end (issue #10): the file set of `../shared/hostile/gen.py` run
//! through the commands it once broke. Each run is checked for its exit code (never a signal),
//! its message, its peak memory (the child's maximum resident set, measured by Python's
//! `resource` module, which every CI machine has) and its output: victim URLs stay on the
//! victim's host, `mid.warc` keeps its four good pages.

mod common;
use common::*;

/// One run of the binary: exit code (`None`: killed by a signal), stdout, stderr, peak RSS.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
    rss_mb: u64,
}

/// Run `dedust ARGS` under a Python wrapper that reports the child's peak RSS; a hang guard of
/// five minutes (not a speed target) turns a runaway into a failure instead of a stuck CI.
fn measured(args: &[&str]) -> Run {
    let script = r#"
import resource, subprocess, sys
try:
    r = subprocess.run(sys.argv[1:], capture_output=True, timeout=300)
    code = str(r.returncode)
except subprocess.TimeoutExpired as e:
    r, code = e, "timeout"
sys.stdout.buffer.write(r.stdout or b"")
sys.stderr.buffer.write(r.stderr or b"")
sys.stderr.write("\n@@ %s %d\n" % (code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_dedust"))
        .args(args)
        .output()
        .expect("python3 runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let (body, tail) = err.rsplit_once("\n@@ ").expect("wrapper line");
    let mut f = tail.split_whitespace();
    let code = f.next().unwrap();
    assert_ne!(code, "timeout", "{args:?} ran past the hang guard: {body}");
    let code: i32 = code.parse().unwrap();
    let rss_kb: u64 = f.next().unwrap().parse().unwrap();
    Run {
        code: (code >= 0).then_some(code),
        out: String::from_utf8_lossy(&o.stdout).into_owned(),
        err: body.to_string(),
        rss_mb: rss_kb / 1024,
    }
}

/// Assert exit code, a message, and a memory bound.
fn check(r: &Run, args: &[&str], code: i32, message: &str, max_mb: u64) {
    assert_eq!(
        r.code,
        Some(code),
        "{args:?} (None: killed by a signal): {}",
        r.err
    );
    assert!(
        r.err.contains(message),
        "{args:?}: {:?} not in {}",
        message,
        r.err
    );
    assert!(!r.err.contains("panicked"), "{args:?}: {}", r.err);
    assert!(
        r.rss_mb <= max_mb,
        "{args:?}: peak RSS {} MB > {max_mb} MB",
        r.rss_mb
    );
}

#[test]
fn the_hostile_file_set_is_handled() {
    let Some(gen) = shared("../hostile/gen.py") else {
        return;
    };
    let t = TempDir::new("hostile");
    let d = |f: &str| t.path(f);
    let o = std::process::Command::new("python3")
        .arg(&gen)
        .arg(&t.0)
        .output()
        .expect("python3 runs gen.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Host takeover: the copier's pages never move the victim's URLs onto the copier.
    let rules = d("hij.json");
    let args = ["learn", &d("hij.cdxj"), "--no-priors", "-o", &rules];
    check(&measured(&args), &args, 0, "learned per site", 200);
    let victim = "https://www.victim.com/a/3";
    let out = normalize_with(&rules, &[victim, "https://www.victim.com/new/page"]);
    assert_eq!(out, [victim, "https://www.victim.com/new/page"]);
    // With the priors (the default) the key folds `www.` on every host, never across
    // registrable domains.
    let args = ["learn", &d("hij.cdxj"), "--priors", "-o", &rules];
    check(&measured(&args), &args, 0, "learned per site", 200);
    let out = normalize_with(&rules, &[victim, "https://www.victim.com/new/page"]);
    assert_eq!(
        out,
        ["https://victim.com/a/3", "https://victim.com/new/page"]
    );

    // A 43-byte WARC claiming 100 GB: a clear error, no abort.
    for cmd in [
        &["cluster", "--pages"][..],
        &["verify", "-r", "rules/demo.json", "--pages"],
    ] {
        let mut args = cmd.to_vec();
        let p = d("cl.warc");
        args.push(&p);
        check(
            &measured(&args),
            &args,
            1,
            "Content-Length 100000000000 but the file ends",
            200,
        );
    }

    // Two 15 KB URLs of 5,000 segments: left out of alignment.
    let args = ["learn", &d("deep.tsv")];
    check(&measured(&args), &args, 0, "2 URLs left out", 200);

    // 450 parameters per URL on a host with drop rules: linear, bounded memory.
    let sid = d("sid.json");
    let args = ["learn", &d("sid.tsv"), "-o", &sid];
    check(&measured(&args), &args, 0, "candidates", 200);
    for h in ["h.org.txt", "o.org.txt"] {
        let out = d(&format!("{h}.out"));
        let args = ["normalize", "-r", &sid, &d(h), "-o", &out];
        check(&measured(&args), &args, 0, "", 200);
        let n = std::fs::read_to_string(&out).unwrap().lines().count();
        assert_eq!(n, 10_000, "{h}: one line out per line in");
    }

    // 10,000 identical pages: joined once.
    let args = ["cluster", "--pages", &d("same.jsonl.gz")];
    let r = measured(&args);
    check(&r, &args, 0, "10000 pages → 1 clusters", 1024);
    assert_eq!(
        r.out.lines().filter(|l| l.starts_with("c0\t")).count(),
        10_000
    );

    // A record 10 bytes short mid-file: the four good pages are kept.
    let args = ["cluster", "--pages", &d("mid.warc")];
    let r = measured(&args);
    check(&r, &args, 0, "does not end at the record's end", 200);
    let mut urls: Vec<&str> = r
        .out
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .collect();
    urls.sort();
    assert_eq!(
        urls,
        [
            "http://a.org/1",
            "http://a.org/2",
            "http://b.org/1",
            "http://b.org/2"
        ]
    );

    // An imported rule at the backtracking limit: reported, and --strict fails.
    let redos = d("redos.json");
    let args = ["import", &d("redos.xml"), "-o", &redos];
    check(&measured(&args), &args, 0, "1 rules", 200);
    let args = ["normalize", "--strict", "-r", &redos, &d("redos.txt")];
    check(&measured(&args), &args, 3, "backtracking limit", 200);

    // A gzip bomb of one 1 GiB line: bounded memory in every reader.
    let bomb = d("bomb.txt.gz");
    let args = ["learn", &bomb];
    check(&measured(&args), &args, 1, "no usable records", 200);
    let args = ["normalize", &bomb, "-o", &d("bomb.out")];
    check(&measured(&args), &args, 0, "cut to their first", 200);
    let args = ["cluster", "--pages", &bomb];
    check(&measured(&args), &args, 1, "longer than", 400);

    // `--strict` fails on any skip or limit hit, after writing the output.
    let args = ["learn", &d("deep.tsv"), "--strict"];
    check(&measured(&args), &args, 3, "left out", 200);
    let args = ["cluster", "--pages", &d("mid.warc"), "--strict"];
    let r = measured(&args);
    check(&r, &args, 3, "skipped 1 records", 200);
    assert_eq!(
        r.out.lines().count(),
        5,
        "header and four pages still written"
    );
}
