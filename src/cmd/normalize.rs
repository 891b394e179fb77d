//! `dedust normalize`: one output line per input line, in input order, processed in parallel
//! chunks. Bad lines are passed through unchanged, counted, and reported with `--stats`.

use crate::cli::NormalizeArgs;
use anyhow::Context;
use dedust::normalize::{BadLine, LineResult};
use dedust::Normalizer;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};

const CHUNK: usize = 1 << 15;

#[derive(Default)]
struct Stats {
    lines: usize,
    changed: usize,
    bad: BTreeMap<BadLine, usize>,
    first_bad: Vec<(usize, BadLine)>,
    by_rule: BTreeMap<usize, usize>,
    dup: usize,
}

pub fn run(a: NormalizeArgs) -> anyhow::Result<i32> {
    crate::cli::threads(a.threads);
    let rules = super::load_rules(&a.rules)?;
    let base = (!a.no_base).then(|| a.base.options());
    let n = Normalizer::new(rules, base);
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    let mut r = dedust::input::open(&input)?;
    let out: Box<dyn Write> = match a.output.as_deref() {
        Some(p) if p != "-" => {
            Box::new(std::fs::File::create(p).with_context(|| format!("creating {p}"))?)
        }
        _ => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    let mut st = Stats::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut lines: Vec<Vec<u8>> = Vec::with_capacity(CHUNK);
    let mut eof = false;
    while !eof {
        lines.clear();
        while lines.len() < CHUNK {
            let mut buf = Vec::new();
            let k = r
                .read_until(b'\n', &mut buf)
                .with_context(|| format!("reading {input}"))?;
            if k == 0 {
                eof = true;
                break;
            }
            if buf.last() == Some(&b'\n') {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
            }
            lines.push(buf);
        }
        let results: Vec<LineResult> = lines.par_iter().map(|l| n.normalize_line(l)).collect();
        for (line, res) in lines.iter().zip(results) {
            st.lines += 1;
            match res {
                LineResult::Url(norm) => {
                    let changed = norm.url.as_bytes() != line.as_slice();
                    st.changed += usize::from(changed);
                    if let Some(i) = norm.rule {
                        *st.by_rule.entry(i).or_default() += 1;
                    }
                    if a.dedup && !seen.insert(norm.url.clone()) {
                        st.dup += 1;
                        continue;
                    }
                    if a.tsv {
                        out.write_all(line)?;
                        out.write_all(b"\t")?;
                        out.write_all(norm.url.as_bytes())?;
                        out.write_all(b"\t")?;
                        if let Some(i) = norm.rule {
                            out.write_all(n.rules()[i].id.as_bytes())?;
                        }
                    } else {
                        out.write_all(norm.url.as_bytes())?;
                    }
                    out.write_all(b"\n")?;
                }
                LineResult::Bad(why) => {
                    *st.bad.entry(why).or_default() += 1;
                    if st.first_bad.len() < 5 {
                        st.first_bad.push((st.lines, why));
                    }
                    out.write_all(line)?;
                    if a.tsv {
                        out.write_all(b"\t")?;
                        out.write_all(line)?;
                        out.write_all(format!("\t!bad:{}", why.name()).as_bytes())?;
                    }
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    out.flush().context("writing output")?;
    let bad: usize = st.bad.values().sum();
    if a.stats || bad > 0 {
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
    Ok(if a.strict && bad > 0 { 3 } else { 0 })
}
