//! WARC record framing and HTTP payload decoding, for every reader of crawl bytes.
//!
//! In: a WARC stream (`.warc`, or `.warc.gz` already decompressed by [`crate::open`]). Out: each
//! well-framed record ([`Record`]: its header fields, the first bytes of its block and a hash of
//! the rest) through a callback ([`each_record`]), every problem as a message; an HTTP response
//! block split into status, headers and body ([`http_split`]); a body with its codings undone
//! ([`decode`], [`decode_body`]).
//!
//! Invariants (hostile input): a header line is at most [`MAX_HEADER_LINE`] bytes and a header
//! block at most [`MAX_WARC_HEADER`]; a block is held only up to the caller's bound (the rest is
//! hashed as it streams past); nothing is allocated from a `Content-Length` before its bytes are
//! read; a decoded payload is at most [`MAX_DECODED`] bytes (a compression bomb is cut or
//! refused); a truncated file ends the reading with a message, never a crash.

use std::io::{BufRead, Read};

/// Longest WARC header line (a longer one ends the file's reading, counted).
pub const MAX_HEADER_LINE: u64 = 64 << 10;

/// Longest WARC header block (all its lines); a longer one ends the file's reading, counted.
pub const MAX_WARC_HEADER: usize = 1 << 20;

/// Largest `Content-Length` taken as one (1 TiB); a larger one is no length (the reading
/// resumes at the next `WARC/` line), not a block to stream to the end of the file.
pub const MAX_CONTENT_LENGTH: u64 = 1 << 40;

/// Largest HTTP payload once chunked and gzip/deflate codings are undone (a larger one, such as
/// a compression bomb, is skipped and counted).
pub const MAX_DECODED: u64 = 64 << 20;

/// A reader that knows how many bytes it has handed out (offsets in skip messages).
struct Counted<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.pos += n as u64;
        self.inner.consume(n);
    }
}

/// Header fields (WARC or HTTP), in order.
pub type Headers = Vec<(String, String)>;

/// The value of the first field `name` (case-insensitive).
pub fn field<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// One WARC record as framed by [`each_record`].
pub struct Record {
    /// `name#number`, and `@offset` after a resynchronisation.
    pub origin: String,
    /// The WARC header fields.
    pub fields: Headers,
    /// The block's first `keep` bytes (all of it when shorter).
    pub block: Vec<u8>,
    /// FNV-1a of the block's bytes past `keep` (the initial state when there are none).
    pub rest: u64,
}

/// Frame the WARC records of `r` (`name` in messages): `each` gets every well-framed record
/// (and may return a skip message), `skip` every problem. Records whose block is over
/// `max_block` bytes are streamed past and skipped; of the others, the first `keep` bytes are
/// held and the rest hashed. A version line out of step, or a `Content-Length` that is no
/// number of bytes (`-1`, hex, too many digits), resumes at the next `WARC/` line (one skip); a
/// header line over [`MAX_HEADER_LINE`], a header block over [`MAX_WARC_HEADER`], a truncated
/// block or an I/O error (a gzip member cut short) end the reading. Nothing is allocated from a
/// `Content-Length` before its bytes are read.
///
/// # Complexity
/// `O(bytes)` time; `O(keep + header)` memory.
pub fn each_record(
    r: impl BufRead,
    name: &str,
    keep: u64,
    max_block: u64,
    skip: &mut dyn FnMut(String),
    each: &mut dyn FnMut(Record) -> Option<String>,
) {
    use crate::read::{read_line_capped, Line};
    let mut r = Counted { inner: r, pos: 0 };
    let mut record = 0usize;
    let mut buf = Vec::new();
    // The last record's framing was unreadable (its skip already counted): the resync that
    // follows is part of that skip, not another one.
    let mut lost = false;
    // One header line; `None` at the end; a message when reading must stop.
    let line = |r: &mut Counted<_>, buf: &mut Vec<u8>| -> Result<Option<String>, String> {
        match read_line_capped(r, buf, MAX_HEADER_LINE) {
            Ok(Line::End) => Ok(None),
            Ok(Line::Cut) => Err(format!("a header line longer than {MAX_HEADER_LINE} bytes")),
            Ok(Line::Whole) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                Ok(Some(String::from_utf8_lossy(buf).into_owned()))
            }
            Err(e) => Err(format!("read error ({e})")),
        }
    };
    loop {
        // Blank lines between records, then the version line.
        let (start, version) = loop {
            let start = r.pos;
            match line(&mut r, &mut buf) {
                Err(e) => return skip(format!("{name}#{}: {e}; stopped", record + 1)),
                Ok(None) => return,
                Ok(Some(l)) if l.trim().is_empty() => continue,
                Ok(Some(l)) => break (start, l),
            }
        };
        record += 1;
        let mut origin = format!("{name}#{record}");
        // Messages name the byte where the record starts (in the decompressed stream).
        let mut here = format!("{origin} (byte {start})");
        if !version.starts_with("WARC/") {
            // Out of step (a wrong Content-Length before, garbage between records): resume at
            // the next version line. Lines of any length are read past here.
            let at = r.pos;
            loop {
                match read_line_capped(&mut r, &mut buf, MAX_HEADER_LINE) {
                    Ok(Line::End) if lost => return,
                    Ok(Line::End) => {
                        return skip(format!(
                            "{origin}: expected a WARC/ version line at byte {at}, none follows"
                        ))
                    }
                    Ok(Line::Whole) if buf.starts_with(b"WARC/") => break,
                    Ok(_) => {}
                    Err(e) => return skip(format!("{origin}: read error ({e}); stopped")),
                }
            }
            if !lost {
                skip(format!(
                    "{origin}: expected a WARC/ version line at byte {at}; resumed at byte {}",
                    r.pos
                ));
            }
            origin = format!("{name}#{record}@{}", r.pos);
            here = origin.clone();
        }
        lost = false;
        let mut fields: Headers = Vec::new();
        let mut size = 0usize;
        loop {
            match line(&mut r, &mut buf) {
                Err(e) => return skip(format!("{here}: {e}; stopped")),
                Ok(None) => return skip(format!("{here}: truncated headers")),
                Ok(Some(l)) if l.is_empty() => break,
                Ok(Some(l)) => {
                    size += l.len();
                    if size > MAX_WARC_HEADER {
                        return skip(format!(
                            "{origin}: a header block over {MAX_WARC_HEADER} bytes; stopped"
                        ));
                    }
                    if let Some((k, v)) = l.split_once(':') {
                        fields.push((k.trim().to_string(), v.trim().to_string()));
                    }
                }
            }
        }
        let len = field(&fields, "Content-Length")
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|&l| l <= MAX_CONTENT_LENGTH);
        let Some(len) = len else {
            // `-1`, hex, 24 digits or none: the block cannot be framed; the next `WARC/` line
            // starts the next record.
            let v = field(&fields, "Content-Length").unwrap_or("none");
            skip(format!(
                "{here}: no valid Content-Length ({:?}); resumed at the next record",
                v.chars().take(40).collect::<String>()
            ));
            lost = true;
            continue;
        };
        if len > max_block {
            // Streamed past, never buffered. A read error (a cut gzip stream) is a truncated
            // record, as a short file is.
            let n = std::io::copy(&mut (&mut r).take(len), &mut std::io::sink()).unwrap_or(0);
            if n < len {
                return skip(format!(
                    "{origin}: Content-Length {len} but the file ends after {n} bytes"
                ));
            }
            skip(format!(
                "{origin}: a record of {len} bytes, over the {max_block}-byte limit"
            ));
            continue;
        }
        let mut block = Vec::new();
        let mut rest = dedust_core::__private::hash::Fnv::new();
        let mut got = match (&mut r).take(len.min(keep)).read_to_end(&mut block) {
            Ok(n) => n as u64,
            Err(e) => return skip(format!("{here}: truncated block ({e})")),
        };
        let mut chunk = [0u8; 1 << 14];
        let mut tail = (&mut r).take(len - got);
        loop {
            match tail.read(&mut chunk) {
                Ok(0) => break,
                Ok(k) => {
                    rest.write(&chunk[..k]);
                    got += k as u64;
                }
                Err(e) => return skip(format!("{here}: truncated block ({e})")),
            }
        }
        if got < len {
            return skip(format!(
                "{origin}: truncated block (Content-Length {len}, {got} bytes left)"
            ));
        }
        // A block ends with the record: a blank line (or the end of the file) follows. Anything
        // else means the Content-Length is wrong, so the block is not this record's.
        let next = match r.fill_buf() {
            Ok(b) => b,
            Err(e) => return skip(format!("{here}: read error ({e}); stopped")),
        };
        let ends = next.is_empty()
            || next.starts_with(b"\r\n\r\n")
            || next.starts_with(b"\n\n")
            || (next.len() < 4 && b"\r\n\r\n".starts_with(next));
        if !ends {
            skip(format!(
                "{origin}: Content-Length {len} does not end at the record's end (byte {})",
                r.pos
            ));
            // The resync that follows is this skip's, not another one.
            lost = true;
            continue;
        }
        let rec = Record {
            origin,
            fields,
            block,
            rest: rest.finish(),
        };
        if let Some(why) = each(rec) {
            skip(why);
        }
    }
}

/// Split an HTTP response into (status, headers, body); `None` when it is not one.
pub fn http_split(block: &[u8]) -> Option<(u16, Headers, &[u8])> {
    let end = block
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|p| (p, p + 4))
        .or_else(|| {
            block
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|p| (p, p + 2))
        })?;
    let head = String::from_utf8_lossy(&block[..end.0]);
    let mut lines = head.lines();
    let status_line = lines.next()?;
    if !status_line.starts_with("HTTP/") {
        return None;
    }
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Some((status, headers, &block[end.1..]))
}

/// Undo chunked transfer coding (best effort: stops at a malformed chunk).
fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = b.iter().position(|&c| c == b'\n') {
        let size_text = String::from_utf8_lossy(&b[..nl]);
        let size_text = size_text.trim().split(';').next().unwrap_or("").to_string();
        let Ok(n) = usize::from_str_radix(&size_text, 16) else {
            break;
        };
        b = &b[nl + 1..];
        if n == 0 || n > b.len() {
            if n > b.len() {
                out.extend_from_slice(b);
            }
            break;
        }
        out.extend_from_slice(&b[..n]);
        b = &b[n..];
        while b.first().is_some_and(|c| *c == b'\r' || *c == b'\n') {
            b = &b[1..];
        }
    }
    out
}

/// The payload with its codings undone (chunked transfer coding, then `gzip` or `deflate`
/// content coding), at most `limit` bytes of it (a body cut short decodes
/// as far as it goes); `None` when it would exceed `limit` and `whole` is asked for.
pub fn decode(
    headers: &[(String, String)],
    body: &[u8],
    limit: u64,
    whole: bool,
) -> Option<Vec<u8>> {
    let mut data = if field(headers, "Transfer-Encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
    {
        dechunk(body)
    } else {
        body.to_vec()
    };
    let coding = field(headers, "Content-Encoding").map(|v| v.to_ascii_lowercase());
    let decoded = {
        let decoder: Option<Box<dyn Read + '_>> = match coding {
            Some(e) if e.contains("gzip") => {
                Some(Box::new(flate2::read::MultiGzDecoder::new(&data[..])))
            }
            Some(e) if e.contains("deflate") => {
                Some(Box::new(flate2::read::ZlibDecoder::new(&data[..])))
            }
            _ => None,
        };
        decoder.and_then(|d| {
            let mut out = Vec::new();
            let ok = d.take(limit + 1).read_to_end(&mut out).is_ok();
            (ok || !whole).then_some(out)
        })
    };
    if let Some(out) = decoded {
        data = out;
    }
    if data.len() as u64 > limit {
        if whole {
            return None;
        }
        data.truncate(limit as usize);
    }
    Some(data)
}

/// The payload with its codings undone; `None` when it would exceed [`MAX_DECODED`].
pub fn decode_body(headers: &[(String, String)], body: &[u8]) -> Option<Vec<u8>> {
    decode(headers, body, MAX_DECODED, true)
}
