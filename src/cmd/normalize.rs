//! `dedust normalize`: one output line per input line, in input order.
//!
//! Input is read in blocks of whole lines (4 MB; with `--line-buffered`, whatever whole lines a
//! short read brings). Each of `--threads` workers takes the next block, normalizes it into its
//! own buffer and hands it to the ordered output; whoever holds the output writes every block
//! that is next in line, so no worker waits for another's write, and at most two blocks per
//! worker are read and not yet written. With one thread everything runs on the calling thread:
//! one core. The bytes written do not depend on the thread count or block size (tested). Blocks
//! and buffers are reused; no allocation per line on the common path. Bad lines are passed
//! through unchanged, counted and reported.

use crate::cli::NormalizeArgs;
use dedust::normalize::{BadLine, LineStatus};
use dedust::Normalizer;
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

/// Bytes read per block.
const BLOCK: usize = 4 << 20;

/// Most bytes asked of one `read` call.
const READ: usize = 256 << 10;

/// Longest line carried from one block to the next. A line that does not end within a block and
/// is longer than this (a gzip bomb without newlines) is passed through cut to its first
/// `HELD_LINE` bytes — it is a bad `too-long` line either way — and the rest is read past, so
/// memory stays bounded whatever the input.
const HELD_LINE: usize = 1 << 20;

/// How to run: output mode and workers.
#[derive(Clone, Copy)]
struct Job {
    tsv: bool,
    dedup: bool,
    threads: usize,
    /// Flush after every block written (with eager blocks: after every line that came alone).
    line_buffered: bool,
}

#[derive(Default, Debug)]
struct Stats {
    lines: usize,
    changed: usize,
    bad: BTreeMap<BadLine, usize>,
    first_bad: Vec<(usize, BadLine)>,
    by_rule: BTreeMap<usize, usize>,
    dup: usize,
}

impl Stats {
    fn add(&mut self, o: Stats) {
        let base = self.lines;
        self.lines += o.lines;
        self.changed += o.changed;
        for (k, v) in o.bad {
            *self.bad.entry(k).or_default() += v;
        }
        for (l, k) in o.first_bad {
            if self.first_bad.len() < 5 {
                self.first_bad.push((base + l, k));
            }
        }
        for (k, v) in o.by_rule {
            *self.by_rule.entry(k).or_default() += v;
        }
    }
}

/// Output of one piece: the bytes, and for `--dedup` each row's place.
struct Piece {
    out: Vec<u8>,
    rows: Vec<Row>,
    stats: Stats,
}

/// One output row of a piece: `out[start..=end]` (ending in its newline) and, for a URL line,
/// the canonical URL's bytes `out[key.0..key.1]` (the `--dedup` key).
struct Row {
    start: usize,
    end: usize,
    key: Option<(usize, usize)>,
}

/// Append a `--tsv` field with a TAB or CR inside written as `\t` / `\r`, so that every row
/// has three fields. Everything else, backslashes included, is written as is: the columns of the
/// common row equal the input line and the default output byte for byte.
fn push_field(out: &mut Vec<u8>, field: &[u8]) {
    if memchr::memchr2(b'\t', b'\r', field).is_none() {
        out.extend_from_slice(field);
        return;
    }
    for &c in field {
        match c {
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            c => out.push(c),
        }
    }
}

/// Buffers written out come back here to be filled again (no page faults on fresh memory for
/// every block).
type Pool = Mutex<Vec<Vec<u8>>>;

fn take(pool: &Pool, cap: usize) -> Vec<u8> {
    let mut v = pool
        .lock()
        .map(|mut p| p.pop())
        .ok()
        .flatten()
        .unwrap_or_default();
    v.clear();
    v.reserve(cap);
    v
}

fn process(n: &Normalizer, data: &[u8], tsv: bool, keep_rows: bool, pool: &Pool) -> Piece {
    let mut out = take(pool, data.len() + data.len() / 8);
    let mut rows = Vec::new();
    let mut st = Stats::default();
    let mut buf = String::with_capacity(256);
    let mut rest = data;
    while !rest.is_empty() {
        let (mut line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        if let Some(l) = line.strip_suffix(b"\r") {
            line = l;
        }
        st.lines += 1;
        let start = out.len();
        let mut key = None;
        match n.normalize_line_into(line, &mut buf) {
            LineStatus::Url { changed, rule } => {
                st.changed += usize::from(changed);
                if let Some(i) = rule {
                    *st.by_rule.entry(i).or_default() += 1;
                }
                if tsv {
                    push_field(&mut out, line);
                    out.push(b'\t');
                    let k = out.len();
                    push_field(&mut out, buf.as_bytes());
                    key = Some((k, out.len()));
                    out.push(b'\t');
                    if let Some(i) = rule {
                        out.extend_from_slice(n.rules()[i].id.as_bytes());
                    }
                } else {
                    out.extend_from_slice(buf.as_bytes());
                    key = Some((start, out.len()));
                }
            }
            LineStatus::Bad(why) => {
                *st.bad.entry(why).or_default() += 1;
                if st.first_bad.len() < 5 {
                    st.first_bad.push((st.lines, why));
                }
                if tsv {
                    push_field(&mut out, line);
                    out.push(b'\t');
                    push_field(&mut out, line);
                    out.extend_from_slice(b"\t!bad:");
                    out.extend_from_slice(why.name().as_bytes());
                } else {
                    out.extend_from_slice(line);
                }
            }
        }
        if keep_rows {
            rows.push(Row {
                start,
                end: out.len(),
                key,
            });
        }
        out.push(b'\n');
    }
    Piece {
        out,
        rows,
        stats: st,
    }
}

/// Whole-line blocks of about `size` bytes from a reader (a line longer than a block makes a
/// bigger one), taken by the workers in turn.
struct Blocks<'a, R> {
    r: R,
    input: &'a str,
    size: usize,
    /// [`READ`] bytes, zeroed once.
    scratch: Vec<u8>,
    /// Hand over whole lines as soon as a read comes back short (`--line-buffered`).
    eager: bool,
    carry: Vec<u8>,
    done: bool,
    /// Reading past the end of a line cut at [`HELD_LINE`].
    discard: bool,
    /// Lines cut at [`HELD_LINE`].
    cut: &'a std::sync::atomic::AtomicUsize,
}

impl<R: Read> Blocks<'_, R> {
    fn next(&mut self, pool: &Pool) -> Option<anyhow::Result<Vec<u8>>> {
        while !self.done {
            let mut block = take(pool, self.size + self.carry.len() + 4096);
            block.append(&mut self.carry);
            // A line longer than a block: read as much again as is carried, so a huge line
            // costs linear time.
            let want = self
                .size
                .saturating_sub(block.len())
                .max(block.len())
                .max(self.size.min(1 << 16))
                .max(1);
            let mut filled = 0;
            // Fill the block. With `eager`, when a read comes back short (a pipe with nothing
            // more to give yet) and whole lines are in, hand them over now: a program that
            // writes one URL and waits for its answer gets it. Reads go through a scratch
            // buffer zeroed once (safe Rust cannot read into uninitialized memory).
            while filled < want {
                let asked = (want - filled).min(self.scratch.len());
                match self.r.read(&mut self.scratch[..asked]) {
                    Ok(0) => {
                        self.done = true;
                        break;
                    }
                    Ok(k) => {
                        let mut got = &self.scratch[..k];
                        if self.discard {
                            match memchr::memchr(b'\n', got) {
                                None => continue,
                                Some(i) => {
                                    got = &got[i..];
                                    self.discard = false;
                                }
                            }
                        }
                        block.extend_from_slice(got);
                        filled += k;
                        if self.eager && k < asked && memchr::memchr(b'\n', got).is_some() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.done = true;
                        let what = format!("reading {}", self.input);
                        return Some(Err(anyhow::Error::new(e).context(what)));
                    }
                }
            }
            if !self.done {
                // Keep an incomplete last line for the next block.
                match memchr::memrchr(b'\n', &block) {
                    Some(i) => {
                        self.carry.extend_from_slice(&block[i + 1..]);
                        block.truncate(i + 1);
                    }
                    None => {
                        if block.len() > HELD_LINE {
                            block.truncate(HELD_LINE);
                            self.discard = true;
                            self.cut.fetch_add(1, Ordering::Relaxed);
                        }
                        self.carry = block;
                        continue;
                    }
                }
            }
            if !block.is_empty() {
                return Some(Ok(block));
            }
        }
        None
    }
}

/// Give a buffer back to its pool (bounded, so memory stays flat).
fn recycle(pool: &Pool, buf: Vec<u8>, keep: usize) {
    if let Ok(mut p) = pool.lock() {
        if p.len() < keep {
            p.push(buf);
        }
    }
}

/// The bytes to write for a piece: with `--dedup`, URL lines whose canonical form was seen
/// before are left out. Adds the piece's counts to `st`.
fn settle(mut p: Piece, dedup: bool, seen: &mut HashSet<Vec<u8>>, st: &mut Stats) -> Vec<u8> {
    if dedup {
        let mut kept = Vec::with_capacity(p.out.len());
        for r in &p.rows {
            if let Some((s, e)) = r.key {
                if !seen.insert(p.out[s..e].to_vec()) {
                    st.dup += 1;
                    continue;
                }
            }
            kept.extend_from_slice(&p.out[r.start..=r.end]);
        }
        p.out = kept;
    }
    st.add(p.stats);
    p.out
}

pub fn run(a: NormalizeArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.extend(a.input.as_deref());
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    let rules = super::load_rules(&a.rules)?;
    let base = (!a.no_base).then(|| a.base.options());
    let n = Normalizer::new(rules, base);
    let growing = n.growing_rules();
    for &i in &growing {
        let r = &n.rules()[i];
        eprintln!(
            "dedust: warning: rule {} ({:?} → {:?}) grows a URL each time it applies; its rewrites stop at {} bytes",
            r.id,
            r.pattern,
            r.target,
            dedust::normalize::MAX_LINE
        );
    }
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    let r = dedust::input::open(&input)?;
    let mut pending = None;
    let out: Box<dyn Write + Send> = match a.output.as_deref() {
        Some(p) if p != "-" => {
            let (f, done) = super::create_output(p)?;
            pending = Some(done);
            Box::new(f)
        }
        _ => Box::new(std::io::stdout()),
    };
    // As grep and ripgrep do: line-buffered on request, or when a person is typing or reading.
    let line_buffered = a.line_buffered || {
        use std::io::IsTerminal;
        (input == "-" && std::io::stdin().is_terminal())
            || (a.output.as_deref().is_none_or(|p| p == "-") && std::io::stdout().is_terminal())
    };
    let cut = std::sync::atomic::AtomicUsize::new(0);
    let blocks = Blocks {
        r,
        input: &input,
        size: BLOCK,
        scratch: vec![0; READ],
        eager: line_buffered,
        carry: Vec::new(),
        done: false,
        discard: false,
        cut: &cut,
    };
    let job = Job {
        line_buffered,
        tsv: a.tsv,
        dedup: a.dedup,
        threads: a.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let Some(st) = run_workers(job, &n, blocks, out)? else {
        // The consumer went away (`| head`): stop quietly, as Unix filters do.
        return Ok(0);
    };
    if let Some(p) = pending {
        p.commit()?;
    }
    report(&a, &n, &st);
    let cut = cut.load(Ordering::Relaxed);
    if cut > 0 {
        eprintln!(
            "normalize: {cut} lines longer than {HELD_LINE} bytes were passed through cut to their first {HELD_LINE} bytes"
        );
    }
    let bad: usize = st.bad.values().sum();
    let limit = n.regex_limit_hits();
    if limit > 0 {
        eprintln!(
            "normalize: {limit} times an imported regex rule stopped at the backtracking limit (the URL was kept as it was from there; the rule's pattern backtracks badly)"
        );
    }
    let grew = n.too_long_rewrites();
    if grew > 0 {
        eprintln!(
            "normalize: {grew} rewrites refused: the output would pass {} bytes (a rule or chain of rules keeps growing the URL)",
            dedust::normalize::MAX_LINE
        );
    }
    Ok(
        if a.strict && (bad > 0 || limit > 0 || grew > 0 || !growing.is_empty()) {
            3
        } else {
            0
        },
    )
}

/// The ordered output: pieces are written (and, for `--dedup`, filtered) in input order.
struct Output<W: Write> {
    out: std::io::BufWriter<W>,
    /// Sequence number of the next block to write.
    next: u64,
    st: Stats,
    seen: HashSet<Vec<u8>>,
    failed: Option<std::io::Error>,
}

/// What the workers share. Lock order: `reader`, then `written` (a reader waits there while too
/// many blocks are unwritten); `output`, then `pending` or `written`. Workers only try-lock
/// `output`, so no worker ever waits for another's write.
struct Shared<'a, R, W: Write> {
    /// The input and the sequence number of the next block read.
    reader: Mutex<(Blocks<'a, R>, u64)>,
    /// Normalized blocks waiting for their turn.
    pending: Mutex<BTreeMap<u64, Piece>>,
    output: Mutex<Output<W>>,
    /// Blocks written so far (mirror of `Output::next`), to bound how far readers run ahead.
    written: (Mutex<u64>, Condvar),
    stop: AtomicBool,
    failure: Mutex<Option<anyhow::Error>>,
    blocks: Pool,
    outs: Pool,
    dedup: bool,
    line_buffered: bool,
}

impl<R: Read, W: Write> Shared<'_, R, W> {
    /// Take the next block, waiting while `window` blocks are already read but not written.
    fn read(&self, window: u64) -> Option<(u64, Vec<u8>)> {
        let mut r = self.reader.lock().ok()?;
        let seq = r.1;
        let mut w = self.written.0.lock().ok()?;
        while seq >= *w + window && !self.stop.load(Ordering::Relaxed) {
            w = self.written.1.wait(w).ok()?;
        }
        drop(w);
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        match r.0.next(&self.blocks)? {
            Ok(block) => {
                r.1 += 1;
                Some((seq, block))
            }
            Err(e) => {
                if let Ok(mut f) = self.failure.lock() {
                    f.get_or_insert(e);
                }
                self.halt();
                None
            }
        }
    }

    fn halt(&self) {
        self.stop.store(true, Ordering::Relaxed);
        let _g = self.written.0.lock();
        self.written.1.notify_all();
    }

    /// Hand over block `seq`. Whoever holds the output writes every piece that is next in line;
    /// a worker that finds the output busy leaves its piece, and the holder looks again after
    /// letting go, so no piece is left behind and no worker waits for another's write.
    fn submit(&self, seq: u64, piece: Piece) {
        if let Ok(mut p) = self.pending.lock() {
            p.insert(seq, piece);
        }
        loop {
            let Ok(mut o) = self.output.try_lock() else {
                return;
            };
            self.drain(&mut o);
            let next = o.next;
            drop(o);
            let ready = self
                .pending
                .lock()
                .is_ok_and(|p| p.first_key_value().is_some_and(|(k, _)| *k == next));
            if !ready {
                return;
            }
        }
    }

    fn drain(&self, o: &mut Output<W>) {
        let mut wrote = false;
        loop {
            let piece = match self.pending.lock() {
                Ok(mut p) if p.first_key_value().is_some_and(|(k, _)| *k == o.next) => {
                    p.pop_first().map(|(_, v)| v)
                }
                _ => None,
            };
            let Some(piece) = piece else {
                // Out as soon as written: an interactive caller waits for these lines.
                if self.line_buffered && wrote && o.failed.is_none() {
                    if let Err(e) = o.out.flush() {
                        o.failed = Some(e);
                        self.halt();
                    }
                }
                return;
            };
            wrote = true;
            let o = &mut *o;
            let bytes = settle(piece, self.dedup, &mut o.seen, &mut o.st);
            if o.failed.is_none() {
                if let Err(e) = o.out.write_all(&bytes) {
                    o.failed = Some(e);
                    self.halt();
                }
            }
            recycle(&self.outs, bytes, 8);
            o.next += 1;
            if let Ok(mut w) = self.written.0.lock() {
                *w = o.next;
                self.written.1.notify_all();
            }
        }
    }
}

/// `Ok(None)` when the output was closed early.
type Outcome = anyhow::Result<Option<Stats>>;

/// Normalize on `threads` workers, each reading a block, normalizing it and handing it to the
/// ordered output in turn. One worker runs on the calling thread: `--threads 1` uses one core.
/// At most `2 × threads` blocks are read and not yet written, so memory stays flat.
fn run_workers<R: Read + Send, W: Write + Send>(
    job: Job,
    n: &Normalizer,
    blocks: Blocks<'_, R>,
    out: W,
) -> Outcome {
    let threads = job.threads.max(1);
    let sh = Shared {
        reader: Mutex::new((blocks, 0)),
        pending: Mutex::default(),
        output: Mutex::new(Output {
            out: std::io::BufWriter::with_capacity(1 << 16, out),
            next: 0,
            st: Stats::default(),
            seen: HashSet::new(),
            failed: None,
        }),
        written: (Mutex::new(0), Condvar::new()),
        stop: AtomicBool::new(false),
        failure: Mutex::default(),
        blocks: Pool::default(),
        outs: Pool::default(),
        dedup: job.dedup,
        line_buffered: job.line_buffered,
    };
    let window = 2 * threads as u64;
    let work = || {
        while let Some((seq, block)) = sh.read(window) {
            let piece = process(n, &block, job.tsv, job.dedup, &sh.outs);
            recycle(&sh.blocks, block, 2 * threads);
            sh.submit(seq, piece);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(work);
        }
        work();
    });
    if let Some(e) = sh.failure.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut o = sh
        .output
        .into_inner()
        .map_err(|_| anyhow::anyhow!("output lock poisoned"))?;
    let done = match o.failed.take() {
        Some(e) => Err(e),
        None => o.out.flush(),
    };
    match done {
        Ok(()) => Ok(Some(o.st)),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context("writing output")),
    }
}

fn report(a: &NormalizeArgs, n: &Normalizer, st: &Stats) {
    let bad: usize = st.bad.values().sum();
    let kinds: Vec<String> = st
        .bad
        .iter()
        .map(|(k, v)| format!("{} {v}", k.name()))
        .collect();
    let first: Vec<String> = st
        .first_bad
        .iter()
        .map(|(l, k)| format!("line {l}: {}", k.name()))
        .collect();
    if a.stats {
        eprintln!(
            "normalize: {} lines, {} changed, {} bad{}{}",
            st.lines,
            st.changed,
            bad,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            if a.dedup {
                format!(", {} duplicates removed", st.dup)
            } else {
                String::new()
            }
        );
        let mut top: Vec<(&usize, &usize)> = st.by_rule.iter().collect();
        top.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        for (i, k) in top.iter().take(20) {
            let r = &n.rules()[**i];
            eprintln!("  {k:>9}  {}  {}", r.id, r.pattern);
        }
    }
    if bad > 0 {
        eprintln!(
            "normalize: {bad} bad lines passed through unchanged ({})",
            first.join("; ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of every class: plain URLs, rule hits, duplicates, bad lines, CRLF, a long line.
    fn input() -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..3000 {
            let line: Vec<u8> = match i % 9 {
                0 => format!("https://h.org/a/{}?s=abc{}", i % 50, i).into(),
                1 => format!("http://WWW.h.org/b/{i}").into(),
                2 => b"not a url".to_vec(),
                3 => vec![b'h', b't', b't', b'p', b':', b'/', b'/', 0xff, b'x'],
                4 => Vec::new(),
                5 => format!("https://h.org/a/{}\r", i % 50).into(),
                6 if i % 900 == 6 => format!("https://h.org/{}", "x".repeat(70_000)).into(),
                _ => format!("https://e.com/p?b=2&a={}", i % 7).into(),
            };
            v.extend_from_slice(&line);
            v.push(b'\n');
        }
        v.extend_from_slice(b"https://h.org/last?s=1"); // no final newline
        v
    }

    fn normalizer() -> Normalizer {
        let rule = dedust::regex_rule("\\?s=[a-z0-9]+$", "", "test").unwrap();
        Normalizer::new(vec![rule], Some(Default::default()))
    }

    fn run_on<R: Read + Send, W: Write + Send>(job: Job, size: usize, r: R, w: W) -> Outcome {
        let blocks = Blocks {
            r,
            input: "test",
            size,
            scratch: vec![0; READ],
            eager: job.line_buffered,
            carry: Vec::new(),
            done: false,
            discard: false,
            cut: &std::sync::atomic::AtomicUsize::new(0),
        };
        run_workers(job, &normalizer(), blocks, w)
    }

    /// Issue #10: a line of many megabytes without a newline (a gzip bomb) is held only up to
    /// `HELD_LINE` bytes; the lines after it come out unchanged and in step.
    #[test]
    fn a_huge_line_is_cut_and_the_rest_stays_in_step() {
        // Longer than a block and than `HELD_LINE` (a line that fits in one block is whole).
        let mut data = vec![b'a'; 3 * BLOCK + 17];
        data.extend_from_slice(b"\nhttps://h.org/x?s=abc\nhttps://e.com/\n");
        for size in [4096, BLOCK] {
            let job = Job {
                tsv: false,
                dedup: false,
                threads: 2,
                line_buffered: false,
            };
            let mut out = Vec::new();
            let st = run_on(job, size, &data[..], &mut out).unwrap().unwrap();
            let lines: Vec<&[u8]> = out.split(|b| *b == b'\n').collect();
            assert_eq!(lines.len(), 4, "three lines and the final newline");
            assert_eq!(lines[0].len(), HELD_LINE);
            assert_eq!(lines[1], b"https://h.org/x");
            assert_eq!(lines[2], b"https://e.com/");
            assert_eq!(st.lines, 3);
        }
    }

    #[test]
    fn same_bytes_and_counts_for_any_threads_and_block_size() {
        let data = input();
        for (tsv, dedup) in [(false, false), (true, false), (false, true)] {
            let job = |threads, line_buffered| Job {
                tsv,
                dedup,
                threads,
                line_buffered,
            };
            let mut want = Vec::new();
            let st = run_on(job(1, false), BLOCK, &data[..], &mut want)
                .unwrap()
                .unwrap();
            assert_eq!(st.lines, 3001);
            assert!(st.changed > 0 && !st.by_rule.is_empty() && !st.bad.is_empty());
            assert_eq!(
                st.first_bad[0].0, 3,
                "line numbers count from 1 across blocks"
            );
            if !dedup {
                assert_eq!(want.iter().filter(|b| **b == b'\n').count(), 3001);
            }
            for threads in [1, 2, 3, 8] {
                // (block size, line-buffered with a reader that gives at most 7 bytes a call)
                for (size, lb) in [(1, false), (100, false), (4096, false), (1 << 20, false)]
                    .into_iter()
                    .chain([(4096, true), (1 << 20, true)])
                {
                    let mut got = Vec::new();
                    let s = if lb {
                        let r = Trickle { data: &data[..] };
                        run_on(job(threads, lb), size, r, &mut got)
                    } else {
                        run_on(job(threads, lb), size, &data[..], &mut got)
                    };
                    let s = s.unwrap().unwrap();
                    assert!(
                        got == want,
                        "threads {threads}, block {size}, tsv {tsv}, dedup {dedup}, line-buffered {lb}"
                    );
                    assert_eq!(
                        (s.lines, s.changed, s.dup, &s.bad, &s.by_rule, &s.first_bad),
                        (
                            st.lines,
                            st.changed,
                            st.dup,
                            &st.bad,
                            &st.by_rule,
                            &st.first_bad
                        )
                    );
                }
            }
        }
    }

    /// Gives at most 7 bytes a call, as a slow pipe does.
    struct Trickle<'a> {
        data: &'a [u8],
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let k = buf.len().min(7).min(self.data.len());
            buf[..k].copy_from_slice(&self.data[..k]);
            self.data = &self.data[k..];
            Ok(k)
        }
    }

    /// Accepts `left` bytes, then fails with `kind`.
    struct Failing {
        left: usize,
        kind: std::io::ErrorKind,
    }

    impl Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(self.kind.into());
            }
            let k = buf.len().min(self.left);
            self.left -= k;
            Ok(k)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Yields `left` bytes of `data`, then an error.
    struct Broken<'a> {
        data: &'a [u8],
        left: usize,
    }

    impl Read for Broken<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.left == 0 {
                return Err(std::io::ErrorKind::InvalidData.into());
            }
            let k = buf.len().min(self.left).min(self.data.len());
            buf[..k].copy_from_slice(&self.data[..k]);
            self.data = &self.data[k..];
            self.left -= k;
            Ok(k)
        }
    }

    /// Default output mode; line-buffered on two threads, so both settings meet each failure.
    fn plain(threads: usize) -> Job {
        Job {
            tsv: false,
            dedup: false,
            threads,
            line_buffered: threads == 2,
        }
    }

    #[test]
    fn closed_output_stops_quietly_and_other_write_errors_fail() {
        let data = input();
        for threads in [1, 2, 4] {
            let job = plain(threads);
            for (left, kind, quiet) in [
                (0, std::io::ErrorKind::BrokenPipe, true),
                (5000, std::io::ErrorKind::BrokenPipe, true),
                (5000, std::io::ErrorKind::StorageFull, false),
            ] {
                let out = Failing { left, kind };
                match run_on(job, 100, &data[..], out) {
                    Ok(None) => assert!(quiet, "{kind:?} must be an error"),
                    Err(e) => assert!(!quiet && format!("{e:#}").contains("writing output")),
                    Ok(Some(_)) => panic!("a failed write was not noticed ({threads} threads)"),
                }
            }
        }
    }

    #[test]
    fn read_errors_are_reported_with_the_input_name() {
        let data = input();
        for threads in [1, 2, 4] {
            let job = plain(threads);
            let r = Broken {
                data: &data,
                left: 20_000,
            };
            let e = run_on(job, 100, r, Vec::new()).unwrap_err();
            assert!(format!("{e:#}").contains("reading test"), "{e:#}");
        }
    }
}
