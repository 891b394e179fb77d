//! Bounded reading of crawl files: transparent gzip, capped lines.
//!
//! In: a path (`-` for stdin) or any [`BufRead`]. Out: a reader that undoes gzip (by magic
//! bytes, never by file name, read up to any damage) and skips a UTF-8 byte order mark
//! ([`open`]); lines of at most a given length ([`read_line_capped`]: a longer line is read
//! past in chunks, never held whole).

use dedust_core::{Error, Result};
use std::io::{BufRead, BufReader, Read};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes read so far from files opened with [`open`], in this process.
static BYTES_READ: AtomicU64 = AtomicU64::new(0);

/// Bytes read so far from files opened with [`open`] in this process (as stored on disk: a
/// gzip file counts its compressed bytes; stdin is not counted). A caller showing progress
/// takes the count before a read and polls it: the difference over the file's size is the
/// share read. Monotonic; updated as each block is read, from any thread.
///
/// ```
/// let p = std::env::temp_dir().join("dedust-doc-bytes-read.txt");
/// std::fs::write(&p, "a\nb\n").unwrap();
/// let before = dedust_io::bytes_read();
/// let mut s = String::new();
/// std::io::Read::read_to_string(&mut dedust_io::open(p.to_str().unwrap()).unwrap(), &mut s).unwrap();
/// assert_eq!(dedust_io::bytes_read() - before >= 4, true);
/// ```
pub fn bytes_read() -> u64 {
    BYTES_READ.load(Ordering::Relaxed)
}

/// A file that adds what it reads to [`BYTES_READ`].
struct Counted(std::fs::File);

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        BYTES_READ.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Open a path (or `-`) with transparent gzip; a leading UTF-8 byte order mark is skipped.
/// What is read from a file is counted in [`bytes_read`]. Damaged gzip data ends the stream
/// where the decodable lines end, noted for [`crate::take_damage`] ([`crate::Tolerant`]).
pub fn open(path: &str) -> Result<Box<dyn BufRead + Send>> {
    let io = |e| Error::Io {
        path: path.to_string(),
        source: e,
    };
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(Counted(std::fs::File::open(path).map_err(io)?))
    };
    let mut br = BufReader::with_capacity(1 << 16, raw);
    let head = br.fill_buf().map_err(io)?;
    let mut r: Box<dyn BufRead + Send> = if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        Box::new(BufReader::with_capacity(
            1 << 16,
            crate::gzip::Tolerant::new(br, path),
        ))
    } else {
        Box::new(br)
    };
    // A UTF-8 byte order mark would glue itself to the first header or URL.
    if r.fill_buf().map_err(io)?.starts_with(b"\xEF\xBB\xBF") {
        r.consume(3);
    }
    Ok(r)
}

/// What [`read_line_capped`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// A whole line is in the buffer (its `\n`, when present, included).
    Whole,
    /// The line was longer than the cap: the buffer holds its first `cap` bytes, the rest was
    /// read past.
    Cut,
    /// End of input.
    End,
}

/// Read one line into `buf` (cleared first), holding at most `cap` bytes: a longer line is
/// consumed up to its `\n` in chunks, never buffered whole (a 1 GiB line without a newline
/// costs `cap` bytes of memory).
///
/// ```
/// use dedust_io::{read_line_capped, Line};
/// let mut r = std::io::Cursor::new(b"abcdef\nxy\n".to_vec());
/// let mut buf = Vec::new();
/// assert_eq!(read_line_capped(&mut r, &mut buf, 3).unwrap(), Line::Cut);
/// assert_eq!(buf, b"abc");
/// assert_eq!(read_line_capped(&mut r, &mut buf, 3).unwrap(), Line::Whole);
/// assert_eq!(buf, b"xy\n");
/// assert_eq!(read_line_capped(&mut r, &mut buf, 3).unwrap(), Line::End);
/// ```
pub fn read_line_capped(
    r: &mut (impl BufRead + ?Sized),
    buf: &mut Vec<u8>,
    cap: u64,
) -> std::io::Result<Line> {
    buf.clear();
    let n = (&mut *r).take(cap).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(Line::End);
    }
    if buf.last() == Some(&b'\n') || (n as u64) < cap {
        return Ok(Line::Whole);
    }
    // Exactly `cap` bytes and no newline yet: the line may end right here.
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(Line::Whole);
        }
        if chunk[0] == b'\n' {
            r.consume(1);
            buf.push(b'\n');
            return Ok(Line::Whole);
        }
        break;
    }
    skip_line(r)?;
    Ok(Line::Cut)
}

/// Read past the rest of a line, its `\n` included, in the reader's chunks (never holding it).
///
/// ```
/// use std::io::BufRead;
/// let mut r = std::io::Cursor::new(b"rest of a long line\nnext\n".to_vec());
/// dedust_io::skip_line(&mut r).unwrap();
/// let mut s = String::new();
/// r.read_line(&mut s).unwrap();
/// assert_eq!(s, "next\n");
/// ```
pub fn skip_line(r: &mut (impl BufRead + ?Sized)) -> std::io::Result<()> {
    loop {
        let (used, found) = {
            let chunk = match r.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                return Ok(());
            }
            match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            }
        };
        r.consume(used);
        if found {
            return Ok(());
        }
    }
}
