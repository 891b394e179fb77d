//! `dedust site`: the site (registrable domain) of each URL, one output line per input line —
//! the key `learn` splits clusters by, so rows keyed by it can be learned in separate shards.
//!
//! In: a URL list (file, `-`, gzip undone). Out: per line, the registrable domain of the
//! trimmed line's host after base normalization, exactly as `learn` splits clusters
//! ([`dedust::learn_site`]), with `--with-host` also a TAB and the host; an empty line when
//! `learn` leaves the URL out (not a URL, rejected by the base layer, over the learning
//! limits). A line longer than
//! [`HELD_LINE`] is keyed by its first `HELD_LINE` bytes (the host comes first); bytes that are
//! not UTF-8 are replaced. Never fails on input; the output is written atomically with `-o`.

use crate::cli::SiteArgs;
use dedust::stream::HELD_LINE;
use std::io::Write;

pub fn run(a: SiteArgs) -> anyhow::Result<i32> {
    use anyhow::Context;
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    super::refuse_overwrite(&[a.output.as_deref()], &[input.as_str()])?;
    let mut r = dedust::input::open(&input)?;
    let mut pending = None;
    let raw: Box<dyn Write> = match a.output.as_deref() {
        Some(p) if p != "-" => {
            let (f, done) = super::create_output(p)?;
            pending = Some(done);
            Box::new(f)
        }
        _ => Box::new(std::io::stdout().lock()),
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 16, raw);
    let mut buf = Vec::new();
    let base = dedust::BaseOptions::default();
    let (mut lines, mut not_url, mut cut) = (0usize, 0usize, 0usize);
    loop {
        let got = next_line(&mut r, &mut buf).with_context(|| format!("reading {input}"))?;
        match got {
            None => break,
            Some(was_cut) => cut += usize::from(was_cut),
        }
        lines += 1;
        let text = String::from_utf8_lossy(&buf);
        let got = dedust::learn_site(text.trim(), &base);
        not_url += usize::from(got.is_none());
        let w = match &got {
            Some((site, host)) if a.with_host => writeln!(out, "{site}\t{host}"),
            Some((site, _)) => writeln!(out, "{site}"),
            None => writeln!(out),
        };
        match w {
            // The reader went away (`| head`): stop quietly, as Unix filters do.
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(0),
            r => r.context("writing the sites")?,
        }
    }
    match out.flush() {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(0),
        r => r.context("writing the sites")?,
    }
    drop(out);
    if let Some(p) = pending {
        p.commit()?;
    }
    info!("site: {lines} lines, {not_url} left out by learn (empty lines out), {cut} cut at {HELD_LINE} bytes");
    Ok(0)
}

/// One line without its `\n` into `buf`: `None` at the end, else whether it was cut.
fn next_line(
    r: &mut (dyn std::io::BufRead + Send),
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    use dedust::input::Line;
    let got = dedust::input::read_line_capped(r, buf, HELD_LINE as u64)?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(match got {
        Line::End => None,
        Line::Whole => Some(false),
        Line::Cut => Some(true),
    })
}
