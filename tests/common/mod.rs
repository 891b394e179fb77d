//! Small harness for CLI integration tests: a temp dir, the binary, and the shared data.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A fresh temporary directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("dedust-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self, f: &str) -> String {
        self.0.join(f).to_str().unwrap().to_string()
    }
    pub fn write(&self, f: &str, data: &[u8]) -> String {
        let p = self.path(f);
        std::fs::write(&p, data).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The time the tests' rule files record (`SOURCE_DATE_EPOCH`: 2026-11-24T00:00:00Z), so two
/// runs write the same file whatever the clock says between them.
pub const TEST_EPOCH: u64 = 1_795_478_400;

/// Run `dedust ARGS` with `stdin` (at [`TEST_EPOCH`]).
pub fn dedust(args: &[&str], stdin: &[u8]) -> Output {
    dedust_at(TEST_EPOCH, args, stdin)
}

/// [`dedust`] with `SOURCE_DATE_EPOCH` = `epoch`: the time `learn`, `import` and `verify
/// --revoke` record.
pub fn dedust_at(epoch: u64, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dedust"));
    cmd.args(args)
        .env("SOURCE_DATE_EPOCH", epoch.to_string())
        .stderr(Stdio::piped());
    run_with_stdin(cmd, stdin)
}

/// Run `cmd` feeding it `stdin` from another thread (no pipe deadlock), collecting stdout.
fn run_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run a test command");
    let mut si = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = si.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `../shared/datasets/<rel>` when present. Absent: a skip notice, or a failure when `CI=true`.
pub fn shared(rel: &str) -> Option<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(rel);
    if p.exists() {
        return Some(p.to_str().unwrap().to_string());
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true but shared dataset {} is missing", p.display());
    }
    eprintln!("SKIP: shared dataset {} not found", p.display());
    None
}

/// Normalize `urls` with a rule file; returns the canonical forms.
pub fn normalize_with(rules: &str, urls: &[&str]) -> Vec<String> {
    let input = urls.join("\n") + "\n";
    let o = dedust(&["normalize", "--rules", rules], input.as_bytes());
    assert!(o.status.success(), "{}", stderr(&o));
    stdout(&o).lines().map(str::to_string).collect()
}

/// The Java harness (`tests/java/DedustHarness.java`) compiled into `dir`; `None` with a skip
/// notice when `javac` is absent and `CI` is not `true` (with `CI=true` a missing JDK fails).
pub fn java_harness(dir: &TempDir) -> Option<String> {
    let ok = Command::new("javac")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but javac (OpenJDK 17) is not installed");
        }
        eprintln!("SKIP: javac not found; the Java round-trip tests need a JDK");
        return None;
    }
    let out = dir.path("java");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/java/DedustHarness.java");
    let st = Command::new("javac")
        .args(["-d", &out])
        .arg(&src)
        .status()
        .expect("run javac");
    assert!(st.success(), "javac failed on {}", src.display());
    Some(out)
}

/// Run the Java harness: `java -cp CP DedustHarness ARGS < input`, stdout as text.
pub fn java(cp: &str, args: &[&str], input: &[u8]) -> String {
    let mut cmd = Command::new("java");
    cmd.args(["-cp", cp, "DedustHarness"])
        .args(args)
        .stderr(Stdio::inherit());
    let out = run_with_stdin(cmd, input);
    assert!(out.status.success(), "java {args:?} failed");
    String::from_utf8(out.stdout).expect("java prints UTF-8")
}

/// A page of about 80 words on `topic` (two topics: pages the content verifier tells apart).
pub fn article(topic: &str) -> String {
    let words: Vec<String> = (0..80).map(|i| format!("{topic}{}", i * 7 % 53)).collect();
    format!(
        "<html><head><title>{topic} report</title></head><body><h1>{topic}</h1><p>{}</p></body></html>",
        words.join(" ")
    )
}

/// A rule file of one cross-host rule dropping parameter `name` (any value) on every host.
pub fn drop_everywhere(name: &str) -> dedust::RuleFile {
    use dedust::model::{Source, Target, ValPat};
    let rule = dedust::Rule::new(
        dedust::RuleKind::Drop,
        Source {
            required: vec![(name.into(), ValPat::Any)],
            ..Source::everywhere()
        },
        Target {
            query: Some(vec![]),
            ..Target::unchanged()
        },
    );
    dedust::RuleFile::new(vec![rule], Default::default(), None)
}
