//! One module per subcommand; each turns parsed flags into a library call and prints.
//! Summaries go through [`info!`], which `-q` silences; warnings and errors always print.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `-q`: [`info!`] prints nothing.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Silence (or not) the summaries of this run.
pub fn set_quiet(q: bool) {
    QUIET.store(q, Ordering::Relaxed);
}

/// Whether `-q` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// `eprintln!` for summaries and notes: nothing with `-q`.
macro_rules! info {
    ($($t:tt)*) => {
        if !$crate::cmd::quiet() {
            eprintln!($($t)*);
        }
    };
}

/// `", peak RSS so far 1.23 GiB"` where the OS tells (Linux: `VmHWM` of `/proc/self/status`, in
/// KiB), so `-v` shows which stage set the process's peak memory; empty elsewhere.
pub fn peak_note() -> String {
    let kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
    kb.map_or_else(String::new, |kb| {
        format!(", peak RSS so far {:.2} GiB", kb as f64 / 1048576.0)
    })
}

pub mod cluster;
pub mod evaluate;
pub mod export;
pub mod import;
pub mod learn;
pub mod merge;
pub mod normalize;
pub mod report;
pub mod site;
pub mod synth;
pub mod validate;
pub mod verify;

/// Write text to `-o FILE` (atomically: see [`create_output`]) or stdout.
pub fn write_out(path: Option<&str>, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    match path {
        Some(p) if p != "-" => {
            let (mut f, pending) = create_output(p)?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.flush())
                .with_context(|| format!("writing {p}"))?;
            drop(f);
            pending.commit()
        }
        _ => {
            let mut o = std::io::stdout().lock();
            match o.write_all(text.as_bytes()).and_then(|()| o.flush()) {
                // The reader went away (`| head`): stop quietly, as Unix filters do.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                r => r.context("writing stdout"),
            }
        }
    }
}

/// An output file not yet in place: see [`create_output`].
pub struct Pending {
    /// The temporary file (`None` once renamed, or when writing the target directly).
    tmp: Option<std::path::PathBuf>,
    dst: std::path::PathBuf,
    /// A handle on the temporary file, to sync it before the rename.
    sync: Option<std::fs::File>,
}

impl Pending {
    /// Put the written file in place (sync, then rename over the target).
    pub fn commit(mut self) -> anyhow::Result<()> {
        use anyhow::Context;
        if let Some(tmp) = self.tmp.take() {
            let res = self
                .sync
                .take()
                .map_or(Ok(()), |f| f.sync_all())
                .and_then(|()| std::fs::rename(&tmp, &self.dst));
            if let Err(e) = res {
                let _ = std::fs::remove_file(&tmp);
                return Err(e).with_context(|| format!("writing {}", self.dst.display()));
            }
        }
        Ok(())
    }
}

impl Drop for Pending {
    /// Not committed (an error on the way): the target stays as it was.
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Open `-o FILE` for writing, all or nothing: the bytes go to a temporary file in the target's
/// directory, which replaces the target only on [`Pending::commit`], so a killed run, a full
/// disk or a write error never leaves a truncated file where a good one was. A target that
/// exists and is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written directly;
/// a symbolic link is followed (the file it points to is replaced). Missing directories are
/// created; an existing target keeps its permissions.
pub fn create_output(p: &str) -> anyhow::Result<(std::fs::File, Pending)> {
    use anyhow::Context;
    let path = std::path::Path::new(p);
    // `/dev/stdout`, `/proc/self/fd/1` and other special files may stand for a file another
    // program opened (`>> log`): append to it, never rename over it.
    let special = path.starts_with("/dev") || path.starts_with("/proc");
    if std::fs::metadata(path).is_ok_and(|m| special || !m.is_file()) {
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("opening {p}"))?;
        let pending = Pending {
            tmp: None,
            dst: path.into(),
            sync: None,
        };
        return Ok((f, pending));
    }
    let dst = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = match dst.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = dst
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy());
    let mut n = 0u32;
    let (tmp, f) = loop {
        let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        }
    };
    if let Ok(m) = std::fs::metadata(&dst) {
        let _ = f.set_permissions(m.permissions());
    }
    let sync = f.try_clone().ok();
    Ok((
        f,
        Pending {
            tmp: Some(tmp),
            dst,
            sync,
        },
    ))
}

/// Fail before any work when an output is one of the inputs (the same file, by device and
/// inode, whatever the path spelling): `normalize F -o F` would read a file while replacing it.
pub fn refuse_overwrite(outputs: &[Option<&str>], inputs: &[&str]) -> anyhow::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let id = |p: &str| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
    // Two outputs naming one file (`-o X --explain X`): one would replace the other.
    let named: Vec<&str> = outputs
        .iter()
        .flatten()
        .copied()
        .filter(|p| *p != "-")
        .collect();
    for (k, a) in named.iter().enumerate() {
        let abs = |p: &str| std::path::absolute(p).ok();
        if let Some(b) = named[k + 1..]
            .iter()
            .find(|b| abs(a) == abs(b) || (id(a).is_some() && id(a) == id(b)))
        {
            anyhow::bail!("refusing to write {a} twice: two outputs name one file ({b})");
        }
    }
    for out in outputs.iter().flatten().filter(|p| **p != "-") {
        let Some(o) = id(out) else { continue };
        if let Some(i) = inputs.iter().find(|i| **i != "-" && id(i) == Some(o)) {
            if std::fs::metadata(out).is_ok_and(|m| m.is_file()) {
                anyhow::bail!(
                    "refusing to write {out}: it is also an input ({i}); write to another file, then move it"
                );
            }
        }
    }
    Ok(())
}

/// What a web-archive index says about its URLs, for [`dedust::LearnConfig::evidence`] (`None`
/// for every other input).
pub type Evidence = Option<std::sync::Arc<dedust::evidence::IndexEvidence>>;

/// Read the clusters of a file, with the skip summary on stderr, and what the file says about
/// its URLs beside them (a web-archive index: [`dedust::ReadReport::evidence`]).
pub fn read_clusters(
    path: &str,
    format: dedust::InputFormat,
) -> anyhow::Result<(Vec<dedust::Cluster>, Evidence)> {
    let r = read_clusters_counted(path, format)?;
    Ok((r.clusters, r.evidence))
}

/// Most robots.txt `Clean-param` rules one input gives `learn`.
const MAX_DECLARED: usize = 2000;

/// What [`read_clusters_counted`] read.
pub struct ReadInput {
    pub clusters: Vec<dedust::Cluster>,
    /// Lines or records skipped (for `--strict`).
    pub skipped: usize,
    /// The rules the crawl declares (robots.txt `Clean-param:` lines in a WARC).
    pub declared: Vec<dedust::Rule>,
    /// The index's evidence.
    pub evidence: Evidence,
    /// The format the file was read as.
    pub format: Option<dedust::InputFormat>,
}

/// [`read_clusters`], with the skip count, the crawl's declared rules and the format.
pub fn read_clusters_counted(path: &str, format: dedust::InputFormat) -> anyhow::Result<ReadInput> {
    let (clusters, mut rep) = dedust::read_clusters(path, format)?;
    let evidence = rep.evidence.take().map(std::sync::Arc::new);
    if rep.skipped > 0 {
        let first: Vec<String> = rep
            .first_bad
            .iter()
            .map(|(l, w)| match rep.format {
                Some(dedust::InputFormat::Warc) => w.clone(),
                _ => format!("line {l}: {w}"),
            })
            .collect();
        eprintln!(
            "{path}: skipped {} malformed {} ({})",
            rep.skipped,
            if rep.format == Some(dedust::InputFormat::Warc) {
                "records"
            } else {
                "lines"
            },
            first.join("; ")
        );
    }
    if rep.ambiguous > 0 {
        let first: Vec<String> = rep
            .first_ambiguous
            .iter()
            .map(|(l, w)| match l {
                0 => w.clone(),
                l => format!("line {l}: {w}"),
            })
            .collect();
        eprintln!(
            "{path}: left {} captures out of every trust decision: their URL, the URL they declare, \
             or their index key or request could be read as two hosts ({})",
            rep.ambiguous,
            first.join("; ")
        );
    }
    if rep.format == Some(dedust::InputFormat::Cdxj) {
        info!(
            "{path}: web-archive index: {} captures in digest groups ({} of them revisits), {} redirect pairs, {} length cohorts ({} URLs of templates whose pages all have one length); {} left out (not 200 nor 3xx with a Location, robots.txt, revisits of no 200 capture; {} redirects to another site, kept only as that site's consent to an alias)",
            rep.records - rep.redirects,
            rep.revisits,
            rep.redirects,
            rep.cohorts,
            rep.cohort_urls,
            rep.filtered,
            rep.cross_site
        );
    }
    if rep.format == Some(dedust::InputFormat::Warc) {
        info!(
            "{path}: WARC: {} records; {} pages in digest groups, {} redirect pairs, {} declared canonicals; {} left out (not a 200 response nor a 3xx with a Location; {} redirects or canonicals to another site, kept only as that site's consent to an alias)",
            rep.lines,
            rep.records - rep.redirects - rep.canonicals,
            rep.redirects,
            rep.canonicals,
            rep.filtered,
            rep.cross_site
        );
    }
    let mut declared = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut bad_lines = 0;
    for (url, lines) in &rep.clean_params {
        match dedust::lists::import_robots(lines, url) {
            Ok(l) => {
                bad_lines += l.skipped.len();
                // The same file fetched over http and https gives the same rules once; a crawl
                // gives at most MAX_DECLARED (each is validated on its host's URLs).
                for r in l.rules {
                    if declared.len() < MAX_DECLARED && seen.insert(r.id.clone()) {
                        declared.push(r);
                    }
                }
            }
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
    if rep.robots > 0 {
        info!(
            "{path}: robots.txt: {} files, {} Clean-param rules (validated like learned ones; {} lines not read)",
            rep.robots,
            declared.len(),
            bad_lines
        );
    }
    Ok(ReadInput {
        clusters,
        skipped: rep.skipped,
        declared,
        evidence,
        format: rep.format,
    })
}

/// The time rule files record (`learned`, `revoked`), RFC 3339 UTC: `SOURCE_DATE_EPOCH` (seconds)
/// when set, so a run can write the same file twice (the reproducible-builds convention), else
/// the clock.
pub fn stamp_time() -> anyhow::Result<String> {
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            anyhow::anyhow!("SOURCE_DATE_EPOCH must be seconds since 1970 (got {v:?})")
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    Ok(dedust::rulefile::rfc3339(secs))
}

/// Load and concatenate rule files (in the order given).
pub fn load_rules(paths: &[String]) -> anyhow::Result<Vec<dedust::Rule>> {
    Ok(load_rule_files(paths)?.0)
}

/// [`load_rules`], and how many rules the files held that move URLs to another host or path
/// prefix without that site's consent (left out with a warning; for `--strict`).
pub fn load_rules_counted(paths: &[String]) -> anyhow::Result<(Vec<dedust::Rule>, usize)> {
    let (rules, _, _, refused) = load_rule_sets_counted(paths)?;
    Ok((rules, refused))
}

/// Warn on stderr when reading `path` left out rules that move URLs to another host or path
/// prefix without that site's consent ([`dedust::RuleFile::refused`]); returns their number.
pub fn warn_refused(path: &str, f: &dedust::RuleFile) -> usize {
    if f.refused > 0 {
        eprintln!(
            "dedust: warning: {}",
            dedust::moves::dropped_message(path, f.refused)
        );
    }
    f.refused
}

/// Load and concatenate rule files, with the base settings of the first (a warning when the
/// files were learned with different base settings).
pub fn load_rule_files(
    paths: &[String],
) -> anyhow::Result<(Vec<dedust::Rule>, dedust::BaseSettings)> {
    let (rules, _, base) = load_rule_sets(paths)?;
    Ok((rules, base))
}

/// [`load_rule_files`], with the revoked rules (`verify --revoke`) apart: the records a command
/// that writes the rules again (`validate -o`, `verify --prune`) carries through, so a later
/// `merge` with an older file keeps them revoked.
pub fn load_rule_sets(
    paths: &[String],
) -> anyhow::Result<(Vec<dedust::Rule>, Vec<dedust::Rule>, dedust::BaseSettings)> {
    let (rules, revoked, base, _) = load_rule_sets_counted(paths)?;
    Ok((rules, revoked, base))
}

/// [`load_rule_sets`], and how many rules were left out as moves without consent
/// ([`warn_refused`]).
#[allow(clippy::type_complexity)]
pub fn load_rule_sets_counted(
    paths: &[String],
) -> anyhow::Result<(
    Vec<dedust::Rule>,
    Vec<dedust::Rule>,
    dedust::BaseSettings,
    usize,
)> {
    if paths.iter().filter(|p| *p == "-").count() > 1 {
        anyhow::bail!("standard input can hold one rule file: `-r -` is given twice");
    }
    let (mut rules, mut revoked) = (Vec::new(), Vec::new());
    let mut base = None;
    let mut refused = 0;
    for p in paths {
        let f = dedust::RuleFile::read(p)?;
        refused += warn_refused(p, &f);
        match base {
            None => base = Some(f.base),
            Some(b) if b != f.base => {
                eprintln!(
                    "dedust: warning: {p} was learned with other base settings than {}",
                    paths[0]
                )
            }
            Some(_) => {}
        }
        let (live, gone): (Vec<dedust::Rule>, Vec<dedust::Rule>) =
            f.rules.into_iter().partition(|r| r.revoked.is_none());
        if !gone.is_empty() {
            eprintln!(
                "{p}: {} revoked rules left out (verify --revoke)",
                gone.len()
            );
        }
        rules.extend(live);
        revoked.extend(gone);
    }
    Ok((rules, revoked, base.unwrap_or_default(), refused))
}

/// `cluster<TAB>url` text of clusters.
pub fn clusters_tsv(clusters: &[dedust::Cluster]) -> String {
    let mut tsv = String::from("cluster\turl\n");
    for c in clusters {
        for u in &c.urls {
            tsv.push_str(&c.id);
            tsv.push('\t');
            tsv.push_str(u);
            tsv.push('\n');
        }
    }
    tsv
}

/// Read pages, with the skip summary on stderr.
pub fn read_pages(path: &str) -> anyhow::Result<Vec<dedust::pages::Page>> {
    Ok(read_pages_counted(path)?.0)
}

/// [`read_pages`], and how many records were skipped (for `--strict`).
pub fn read_pages_counted(path: &str) -> anyhow::Result<(Vec<dedust::pages::Page>, usize)> {
    let (pages, rep) = dedust::pages::read_pages(path)?;
    if rep.skipped > 0 {
        eprintln!(
            "{path}: skipped {} records ({})",
            rep.skipped,
            rep.first_bad.join("; ")
        );
    }
    if pages.is_empty() {
        anyhow::bail!("{path}: no pages with HTML");
    }
    Ok((pages, rep.skipped))
}

/// How long a bar runs before it shows an ETA.
const ETA_AFTER: std::time::Duration = std::time::Duration::from_secs(2);

/// A bar of `len` steps labelled `label`, in the style every subcommand uses.
pub fn progress_bar(len: usize, label: &str) -> indicatif::ProgressBar {
    styled_bar(len as u64, label, "{pos}/{len}")
}

/// A bar of `len` units labelled `label`, its count written as `count` (an indicatif template
/// piece: `{pos}/{len}`, `{bytes}/{total_bytes}`). The ETA shows once it is stable: after
/// [`ETA_AFTER`] and a twentieth of the work (before, the rate of the first steps says little).
fn styled_bar(len: u64, label: &str, count: &str) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::new(len);
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {{msg:12}} [{{bar:40}}] {count} ({{stable_eta}})"
        ))
        .expect("template")
        .with_key(
            "stable_eta",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let share = s.len().map_or(0.0, |n| s.pos() as f64 / n.max(1) as f64);
                let _ = if s.elapsed() >= ETA_AFTER && share >= 0.05 {
                    write!(w, "{:#}", indicatif::HumanDuration(s.eta()))
                } else {
                    write!(w, "…")
                };
            },
        )
        .progress_chars("=> "),
    );
    b.set_message(label.to_string());
    b
}

/// Progress bars for a library's stages, on stderr: one bar per stage, replaced when the stage
/// changes. Nothing with `-q` or when stderr is not a terminal. Safe to call from worker
/// threads (the libraries report one finished step at a time).
pub struct Bars {
    on: bool,
    cur: std::sync::Mutex<Option<(&'static str, indicatif::ProgressBar)>>,
    /// The stage [`Bars::at`] shows.
    key: std::sync::Mutex<Option<(usize, usize)>>,
}

impl Bars {
    pub fn new() -> Bars {
        use std::io::IsTerminal;
        Bars {
            on: !quiet() && std::io::stderr().is_terminal(),
            cur: std::sync::Mutex::new(None),
            key: std::sync::Mutex::new(None),
        }
    }

    /// One more step of `stage` (of `total`) is done.
    pub fn step(&self, stage: &'static str, total: usize) {
        if !self.on {
            return;
        }
        let mut cur = self.cur.lock().expect("progress bar");
        if cur.as_ref().is_none_or(|(s, _)| *s != stage) {
            if let Some((_, b)) = cur.take() {
                b.finish_and_clear();
            }
            *cur = Some((stage, progress_bar(total, stage)));
        }
        if let Some((_, b)) = cur.as_ref() {
            b.inc(1);
        }
    }

    /// `done` of `total` steps of the stage ordered by `key` (labelled `label`), for libraries
    /// that report counts so far. A report for a stage before the current one (a late report
    /// from a worker) is ignored; a later stage replaces the bar.
    pub fn at(&self, key: (usize, usize), label: &str, done: usize, total: usize) {
        if !self.on {
            return;
        }
        let mut k = self.key.lock().expect("progress key");
        if k.is_some_and(|cur| key < cur) {
            return;
        }
        let mut cur = self.cur.lock().expect("progress bar");
        if *k != Some(key) {
            *k = Some(key);
            if let Some((_, b)) = cur.take() {
                b.finish_and_clear();
            }
            *cur = Some(("", progress_bar(total, label)));
        }
        if let Some((_, b)) = cur.as_ref() {
            b.set_position(done.min(total) as u64);
        }
    }

    /// A spinner with the elapsed time for a stage that reports no counts (reading the input,
    /// a join), until [`Bars::finish`] or the next bar.
    pub fn spin(&self, label: &str) {
        if !self.on {
            return;
        }
        let b = indicatif::ProgressBar::new_spinner();
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg:12} {elapsed}")
                .expect("template"),
        );
        b.set_message(label.to_string());
        b.enable_steady_tick(std::time::Duration::from_millis(120));
        // Locks in the order `at` takes them: key, then cur.
        let mut key = self.key.lock().expect("progress key");
        let mut cur = self.cur.lock().expect("progress bar");
        if let Some((_, old)) = cur.replace(("", b)) {
            old.finish_and_clear();
        }
        *key = None;
    }

    /// A bar of bytes for reading `path` (the share of the file read so far, from
    /// [`dedust::bytes_read`], with an ETA), or a spinner when the size is unknown (stdin, a
    /// pipe, an empty file), until [`Bars::finish`] or the next bar.
    pub fn read(&self, label: &str, path: &str) {
        if !self.on {
            return;
        }
        let size = (path != "-")
            .then(|| std::fs::metadata(path).ok())
            .flatten()
            .filter(|m| m.is_file() && m.len() > 0)
            .map(|m| m.len());
        let Some(size) = size else {
            return self.spin(label);
        };
        let b = styled_bar(size, label, "{bytes}/{total_bytes}");
        let start = dedust::bytes_read();
        let poll = b.downgrade();
        // Polls the count until the bar is finished, replaced or dropped.
        std::thread::spawn(move || {
            while let Some(b) = poll.upgrade().filter(|b| !b.is_finished()) {
                b.set_position((dedust::bytes_read() - start).min(size));
                drop(b);
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        let mut key = self.key.lock().expect("progress key");
        let mut cur = self.cur.lock().expect("progress bar");
        if let Some((_, old)) = cur.replace(("", b)) {
            old.finish_and_clear();
        }
        *key = None;
    }

    /// Clear the last bar.
    pub fn finish(&self) {
        // Also from `drop`, maybe while a panic unwinds: a poisoned lock still holds the bar.
        let mut cur = self
            .cur
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, b)) = cur.take() {
            b.finish_and_clear();
        }
    }
}

/// A command that fails mid-stage leaves no half-drawn bar above its error message.
impl Drop for Bars {
    fn drop(&mut self) {
        self.finish();
    }
}
