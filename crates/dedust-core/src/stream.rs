//! Streaming normalization: a reader of lines in, one output line per input line out, in input
//! order (what `dedust normalize` runs).
//!
//! Input is read in blocks of whole lines (4 MB; with `--line-buffered`, whatever whole lines a
//! short read brings). Each of `--threads` workers takes the next block, normalizes it into its
//! own buffer and hands it to the ordered output; whoever holds the output writes every block
//! that is next in line, so no worker waits for another's write, and at most two blocks per
//! worker are read and not yet written. With one thread everything runs on the calling thread:
//! one core. The bytes written do not depend on the thread count or block size (tested). Blocks
//! and buffers are reused; no allocation per line on the common path. Bad lines are passed
//! through unchanged, counted and reported.
//!
//! In: a [`Normalizer`], a reader, a writer, [`StreamOptions`]. Out: [`StreamStats`]. Memory
//! stays bounded whatever the input: a line longer than [`HELD_LINE`] is cut (and counted).

use crate::normalize::{BadLine, LineStatus, Normalizer};
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
pub const HELD_LINE: usize = 1 << 20;

/// How [`normalize_stream`] runs: output mode and workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOptions {
    /// Three TAB-separated columns per line: the input, the canonical form, the id of the last
    /// rule that changed it (`!bad:KIND` for a bad line).
    pub tsv: bool,
    /// Leave out URL lines whose canonical form came before.
    pub dedup: bool,
    /// Workers (at least one; one runs on the calling thread).
    pub threads: usize,
    /// Hand whole lines over as soon as a read comes back short, and flush after every block
    /// written: a program that writes one URL and waits for its answer gets it.
    pub line_buffered: bool,
}

/// What [`normalize_stream`] saw.
#[derive(Default, Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamStats {
    /// Lines read.
    pub lines: usize,
    /// URL lines the rules or the base layer changed.
    pub changed: usize,
    /// Bad lines (passed through unchanged) per kind.
    pub bad: BTreeMap<BadLine, usize>,
    /// The first five bad lines: 1-based line number and kind.
    pub first_bad: Vec<(usize, BadLine)>,
    /// Per rule (index into [`Normalizer::rules`]), the lines it was the last to change.
    pub by_rule: BTreeMap<usize, usize>,
    /// URL lines left out by `dedup`.
    pub dup: usize,
    /// Lines longer than [`HELD_LINE`] bytes, passed through cut to their first `HELD_LINE`.
    pub cut: usize,
}

impl StreamStats {
    fn add(&mut self, o: StreamStats) {
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
    stats: StreamStats,
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
    let mut st = StreamStats::default();
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
    fn next(&mut self, pool: &Pool) -> Option<std::io::Result<Vec<u8>>> {
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
                        let what = format!("reading {}: {e}", self.input);
                        return Some(Err(std::io::Error::new(e.kind(), what)));
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
fn settle(mut p: Piece, dedup: bool, seen: &mut HashSet<Vec<u8>>, st: &mut StreamStats) -> Vec<u8> {
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

/// The ordered output: pieces are written (and, for `--dedup`, filtered) in input order.
struct Output<W: Write> {
    out: std::io::BufWriter<W>,
    /// Sequence number of the next block to write.
    next: u64,
    st: StreamStats,
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
    failure: Mutex<Option<std::io::Error>>,
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
type Outcome = std::io::Result<Option<StreamStats>>;

/// Normalize on `threads` workers, each reading a block, normalizing it and handing it to the
/// ordered output in turn. One worker runs on the calling thread: `--threads 1` uses one core.
/// At most `2 × threads` blocks are read and not yet written, so memory stays flat.
fn run_workers<R: Read + Send, W: Write + Send>(
    job: StreamOptions,
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
            st: StreamStats::default(),
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
        .map_err(|_| std::io::Error::other("output lock poisoned"))?;
    let done = match o.failed.take() {
        Some(e) => Err(e),
        None => o.out.flush(),
    };
    match done {
        Ok(()) => Ok(Some(o.st)),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(None),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("writing output: {e}"),
        )),
    }
}

/// Normalize every line of `input` into `out`, one output line per input line in input order
/// (see the module docs). `name` names the input in read errors. `Ok(None)` when the output was
/// closed early (a broken pipe: `| head`); errors name what failed (`reading NAME: …`,
/// `writing output: …`).
///
/// ```
/// use dedust_core::{normalize_stream, StreamOptions};
/// use dedust_core::{BaseOptions, Normalizer};
/// let n = Normalizer::new(vec![], Some(BaseOptions::default()));
/// let opts = StreamOptions { tsv: false, dedup: true, threads: 2, line_buffered: false };
/// let mut out = Vec::new();
/// let input = &b"HTTP://H.org/a?b=1&a=2\nnot a url\nhttp://h.org/a?a=2&b=1\n"[..];
/// let st = normalize_stream(&n, input, "urls.txt", &mut out, &opts).unwrap().unwrap();
/// assert_eq!(out, b"http://h.org/a?a=2&b=1\nnot a url\n");
/// assert_eq!((st.lines, st.dup, st.bad.values().sum::<usize>()), (3, 1, 1));
/// ```
pub fn normalize_stream<R: Read + Send, W: Write + Send>(
    n: &Normalizer,
    input: R,
    name: &str,
    out: W,
    opts: &StreamOptions,
) -> std::io::Result<Option<StreamStats>> {
    run_sized(n, input, name, out, opts, BLOCK)
}

/// [`normalize_stream`] with blocks of about `size` bytes.
fn run_sized<R: Read + Send, W: Write + Send>(
    n: &Normalizer,
    input: R,
    name: &str,
    out: W,
    opts: &StreamOptions,
    size: usize,
) -> Outcome {
    let cut = std::sync::atomic::AtomicUsize::new(0);
    let blocks = Blocks {
        r: input,
        input: name,
        size,
        scratch: vec![0; READ],
        eager: opts.line_buffered,
        carry: Vec::new(),
        done: false,
        discard: false,
        cut: &cut,
    };
    let st = run_workers(*opts, n, blocks, out)?;
    Ok(st.map(|mut st| {
        st.cut = cut.load(Ordering::Relaxed);
        st
    }))
}

/// Fewest URLs per thread in [`normalize_many`] (below this, starting a thread costs more than
/// it saves).
const MANY_CHUNK: usize = 4096;

/// Normalize URLs held in memory, in order, on up to `threads` threads (the calling thread
/// included): each output is the line's canonical form as `dedust normalize` writes it, and a
/// string that is no usable URL (blank, over [`MAX_LINE`](crate::normalize::MAX_LINE) bytes,
/// rejected by the URL parser) comes back unchanged. For embedders (the Python binding's
/// `normalize_many`); the output does not depend on `threads`.
///
/// ```
/// use dedust_core::{normalize_many, Normalizer};
/// let n = Normalizer::new(vec![], Some(Default::default()));
/// let out = normalize_many(&n, &["HTTP://A.org/?b=1&a=2", "not a url", ""], 2);
/// assert_eq!(out, ["http://a.org/?a=2&b=1", "not a url", ""]);
/// ```
///
/// # Complexity
/// `O(Σ |url|)` work plus the rules' matching, split evenly over the threads.
pub fn normalize_many<S: AsRef<str> + Sync>(
    n: &Normalizer,
    urls: &[S],
    threads: usize,
) -> Vec<String> {
    normalize_many_changed(n, urls, threads)
        .iter()
        .zip(urls)
        .map(|(o, u)| o.unwrap_or(u.as_ref()).to_string())
        .collect()
}

/// [`normalize_many`] answering only for the URLs that change: for each input, `Some(canonical)`
/// where the canonical form differs from it, `None` where it is already canonical or is passed
/// through. An embedder keeps its own string for a `None` (no copy; in a crawl frontier most URLs
/// are already canonical), and the changed forms share a few text buffers (no allocation per URL).
///
/// ```
/// use dedust_core::{normalize_many_changed, Normalizer};
/// let n = Normalizer::new(vec![], Some(Default::default()));
/// let out = normalize_many_changed(&n, &["HTTP://A.org/?b=1&a=2", "http://a.org/", "not a url"], 2);
/// let got: Vec<Option<&str>> = out.iter().collect();
/// assert_eq!(got, [Some("http://a.org/?a=2&b=1"), None, None]);
/// ```
///
/// # Complexity
/// As [`normalize_many`].
pub fn normalize_many_changed<S: AsRef<str> + Sync>(
    n: &Normalizer,
    urls: &[S],
    threads: usize,
) -> Changed {
    let run = |part: &[S]| -> ChangedPart {
        let mut buf = String::new();
        // Room for every input as its own output, the usual upper bound: the text is not
        // moved while it grows.
        let mut out = ChangedPart {
            text: String::with_capacity(part.iter().map(|u| u.as_ref().len()).sum()),
            spans: Vec::with_capacity(part.len()),
        };
        for u in part {
            let span = match n.normalize_str_into(u.as_ref(), &mut buf) {
                LineStatus::Url { changed: true, .. } => {
                    let start = out.text.len();
                    out.text.push_str(&buf);
                    Some((start, out.text.len()))
                }
                LineStatus::Url { .. } | LineStatus::Bad(_) => None,
            };
            out.spans.push(span);
        }
        out
    };
    let threads = threads.clamp(1, urls.len().div_ceil(MANY_CHUNK).max(1));
    if threads == 1 {
        return Changed {
            parts: vec![run(urls)],
        };
    }
    let chunk = urls.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = urls
            .chunks(chunk)
            .map(|c| s.spawn(move || run(c)))
            .collect();
        Changed {
            parts: handles
                .into_iter()
                .map(|h| h.join().expect("a normalize worker panicked"))
                .collect(),
        }
    })
}

/// The answer of [`normalize_many_changed`]: one entry per input URL, in order.
#[derive(Debug, Default)]
pub struct Changed {
    parts: Vec<ChangedPart>,
}

/// One thread's share of a [`Changed`]: its changed forms end to end, and each input's span.
#[derive(Debug, Default)]
struct ChangedPart {
    text: String,
    spans: Vec<Option<(usize, usize)>>,
}

impl Changed {
    /// Each input's canonical form where it changed (`None` where it did not), in input order.
    pub fn iter(&self) -> impl Iterator<Item = Option<&str>> + '_ {
        self.parts
            .iter()
            .flat_map(|p| p.spans.iter().map(|s| s.map(|(a, b)| &p.text[a..b])))
    }

    /// The number of inputs.
    pub fn len(&self) -> usize {
        self.parts.iter().map(|p| p.spans.len()).sum()
    }

    /// Whether there were no inputs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

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
        // Drop `s` on h.org (a learned-kind rule: the tests run without the java-regex feature).
        let rule = crate::model::Rule::new(
            crate::model::RuleKind::Drop,
            crate::model::Source {
                scheme: None,
                host: "h.org".into(),
                path: None,
                required: vec![],
                optional: vec!["s".into()],
                rest: true,
            },
            crate::model::Target {
                scheme: None,
                host: None,
                path: None,
                query: Some(vec![]),
            },
        );
        Normalizer::new(vec![rule], Some(Default::default()))
    }

    #[test]
    fn normalize_many_matches_the_stream_for_any_threads() {
        let n = normalizer();
        let data = input().repeat(4);
        let text = String::from_utf8_lossy(&data).into_owned();
        let urls: Vec<&str> = text.split('\n').collect();
        let one = normalize_many(&n, &urls, 1);
        assert_eq!(one.len(), urls.len());
        for t in [2, 3, 8] {
            assert_eq!(normalize_many(&n, &urls, t), one, "{t} threads");
        }
        // Line by line, what the stream writes (bad lines unchanged).
        for (u, o) in urls.iter().zip(&one).take(2_000) {
            let want = match n.normalize_line(u.as_bytes()) {
                crate::normalize::LineResult::Url(x) => x.url,
                crate::normalize::LineResult::Bad(_) => u.to_string(),
            };
            assert_eq!(*o, want, "{u}");
        }
        assert!(
            one.iter().zip(&urls).any(|(o, u)| o != u),
            "some URL changes"
        );
    }

    fn run_on<R: Read + Send, W: Write + Send>(
        job: StreamOptions,
        size: usize,
        r: R,
        w: W,
    ) -> Outcome {
        run_sized(&normalizer(), r, "test", w, &job, size)
    }

    /// Issue #10: a line of many megabytes without a newline (a gzip bomb) is held only up to
    /// `HELD_LINE` bytes; the lines after it come out unchanged and in step.
    #[test]
    fn a_huge_line_is_cut_and_the_rest_stays_in_step() {
        // Longer than a block and than `HELD_LINE` (a line that fits in one block is whole).
        let mut data = vec![b'a'; 3 * BLOCK + 17];
        data.extend_from_slice(b"\nhttps://h.org/x?s=abc\nhttps://e.com/\n");
        for size in [4096, BLOCK] {
            let job = StreamOptions {
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
            let job = |threads, line_buffered| StreamOptions {
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
    fn plain(threads: usize) -> StreamOptions {
        StreamOptions {
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
