//! `dedust normalize`: one output line per input line, in input order.
//!
//! The input is read in blocks of whole lines by a reader thread; each block is cut into pieces
//! (four per thread) normalized in parallel (rayon) into their own output buffers; two blocks
//! are in flight so that no core idles at block ends; a writer thread writes the buffers in
//! input order. Blocks and buffers are reused. No allocation per line on the common path. Bad lines are passed through
//! unchanged, counted and reported.

use crate::cli::NormalizeArgs;
use anyhow::Context;
use dedust::normalize::{BadLine, LineStatus};
use dedust::Normalizer;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::io::{Read, Write};

/// Bytes read per block.
const BLOCK: usize = 4 << 20;

#[derive(Default)]
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

/// Output of one piece: the bytes, and for `--dedup` each line's (start, end, is_url).
struct Piece {
    out: Vec<u8>,
    lines: Vec<(usize, usize, bool)>,
    stats: Stats,
}

/// Buffers written out come back here to be filled again (no page faults on fresh memory for
/// every block).
type Pool = std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>;

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

fn process(n: &Normalizer, data: &[u8], tsv: bool, keep_lines: bool, pool: &Pool) -> Piece {
    let mut out = take(pool, data.len() + data.len() / 8);
    let mut lines = Vec::new();
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
        let status = n.normalize_line_into(line, &mut buf);
        match status {
            LineStatus::Url { changed, rule } => {
                st.changed += usize::from(changed);
                if let Some(i) = rule {
                    *st.by_rule.entry(i).or_default() += 1;
                }
                if tsv {
                    out.extend_from_slice(line);
                    out.push(b'\t');
                    out.extend_from_slice(buf.as_bytes());
                    out.push(b'\t');
                    if let Some(i) = rule {
                        out.extend_from_slice(n.rules()[i].id.as_bytes());
                    }
                } else {
                    out.extend_from_slice(buf.as_bytes());
                }
            }
            LineStatus::Bad(why) => {
                *st.bad.entry(why).or_default() += 1;
                if st.first_bad.len() < 5 {
                    st.first_bad.push((st.lines, why));
                }
                out.extend_from_slice(line);
                if tsv {
                    out.push(b'\t');
                    out.extend_from_slice(line);
                    out.extend_from_slice(b"\t!bad:");
                    out.extend_from_slice(why.name().as_bytes());
                }
            }
        }
        if keep_lines {
            lines.push((start, out.len(), matches!(status, LineStatus::Url { .. })));
        }
        out.push(b'\n');
    }
    Piece {
        out,
        lines,
        stats: st,
    }
}

/// Cut `data` (whole lines) into about `k` pieces at line ends.
fn cut(data: &[u8], k: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(k);
    let mut rest = data;
    let size = data.len() / k.max(1) + 1;
    while !rest.is_empty() {
        if rest.len() <= size {
            pieces.push(rest);
            break;
        }
        let end = rest[size..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(rest.len(), |i| size + i + 1);
        let (a, b) = rest.split_at(end);
        pieces.push(a);
        rest = b;
    }
    pieces
}

/// Read whole-line blocks of about [`BLOCK`] bytes (a line longer than a block makes a bigger one).
fn read_blocks(
    mut r: impl Read,
    input: &str,
    tx: std::sync::mpsc::SyncSender<anyhow::Result<Vec<u8>>>,
    pool: Pool,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut block = take(&pool, BLOCK + carry.len() + 4096);
        block.append(&mut carry);
        let want = BLOCK.saturating_sub(block.len()).max(1 << 16);
        let start = block.len();
        block.resize(start + want, 0);
        let mut filled = 0;
        while filled < want {
            match r.read(&mut block[start + filled..]) {
                Ok(0) => break,
                Ok(k) => filled += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(
                        anyhow::Error::new(e).context(format!("reading {input}"))
                    ));
                    return;
                }
            }
        }
        block.truncate(start + filled);
        let eof = filled < want;
        if !eof {
            // Keep an incomplete last line for the next block.
            match block.iter().rposition(|b| *b == b'\n') {
                Some(i) => {
                    carry.extend_from_slice(&block[i + 1..]);
                    block.truncate(i + 1);
                }
                None => {
                    carry = block;
                    continue;
                }
            }
        }
        if !block.is_empty() && tx.send(Ok(block)).is_err() {
            return;
        }
        if eof {
            return;
        }
    }
}

pub fn run(a: NormalizeArgs) -> anyhow::Result<i32> {
    crate::cli::threads(a.threads);
    let rules = super::load_rules(&a.rules)?;
    let base = (!a.no_base).then(|| a.base.options());
    let n = Normalizer::new(rules, base);
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    let r = dedust::input::open(&input)?;
    let out: Box<dyn Write + Send> = match a.output.as_deref() {
        Some(p) if p != "-" => {
            Box::new(std::fs::File::create(p).with_context(|| format!("creating {p}"))?)
        }
        _ => Box::new(std::io::stdout()),
    };
    let mut st = Stats::default();
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let threads = rayon::current_num_threads();
    // Reading, normalizing and writing overlap: a reader thread, the rayon pool, a writer thread.
    let (rtx, rrx) = std::sync::mpsc::sync_channel::<anyhow::Result<Vec<u8>>>(2);
    let (wtx, wrx) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
    let name = input.clone();
    let blocks: Pool = Default::default();
    let outs: Pool = Default::default();
    let reader = {
        let blocks = blocks.clone();
        std::thread::spawn(move || read_blocks(r, &name, rtx, blocks))
    };
    let writer = {
        let outs = outs.clone();
        std::thread::spawn(move || -> std::io::Result<()> {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, out);
            for chunk in wrx {
                out.write_all(&chunk)?;
                if let Ok(mut p) = outs.lock() {
                    if p.len() < 64 {
                        p.push(chunk);
                    }
                }
            }
            out.flush()
        })
    };
    let mut failure: Option<anyhow::Error> = None;
    // Two blocks in flight: the pool starts on the next block while the last pieces of the
    // previous one finish, so no core waits at block ends. Results are taken in block order.
    let (tsv, dedup) = (a.tsv, a.dedup);
    let (n_ref, outs_ref) = (&n, &outs);
    rayon::in_place_scope(|s| {
        let mut inflight: std::collections::VecDeque<
            std::sync::mpsc::Receiver<(Vec<Piece>, Vec<u8>)>,
        > = Default::default();
        let mut writer_gone = false;
        let mut finish = |rx: std::sync::mpsc::Receiver<(Vec<Piece>, Vec<u8>)>,
                          writer_gone: &mut bool| {
            let Ok((results, block)) = rx.recv() else {
                return;
            };
            if let Ok(mut p) = blocks.lock() {
                if p.len() < 4 {
                    p.push(block);
                }
            }
            for mut p in results {
                if dedup {
                    let mut kept = Vec::with_capacity(p.out.len());
                    for &(s, e, is_url) in &p.lines {
                        if is_url && !seen.insert(p.out[s..e].to_vec()) {
                            st.dup += 1;
                            continue;
                        }
                        kept.extend_from_slice(&p.out[s..=e]);
                    }
                    p.out = kept;
                }
                st.add(p.stats);
                if !*writer_gone && wtx.send(p.out).is_err() {
                    *writer_gone = true;
                }
            }
        };
        for block in &rrx {
            let block = match block {
                Ok(b) => b,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            s.spawn(move |_| {
                let results: Vec<Piece> = cut(&block, threads * 4)
                    .par_iter()
                    .map(|p| process(n_ref, p, tsv, dedup, outs_ref))
                    .collect();
                let _ = tx.send((results, block));
            });
            inflight.push_back(rx);
            if inflight.len() >= 2 {
                if let Some(rx) = inflight.pop_front() {
                    finish(rx, &mut writer_gone);
                }
            }
            if writer_gone {
                break;
            }
        }
        while let Some(rx) = inflight.pop_front() {
            finish(rx, &mut writer_gone);
        }
    });
    drop(wtx);
    // The reader may be blocked handing over a block nobody will take: let it see the end.
    drop(rrx);
    let _ = reader.join();
    let written = writer.join().expect("writer thread");
    if let Some(e) = failure {
        return Err(e);
    }
    match written {
        // The consumer went away (`| head`): stop quietly, as Unix filters do.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(0),
        w => w.context("writing output")?,
    }
    report(&a, &n, &st);
    let bad: usize = st.bad.values().sum();
    Ok(if a.strict && bad > 0 { 3 } else { 0 })
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
