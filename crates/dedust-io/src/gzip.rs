//! Damaged gzip input read up to the damage: a cut member, a corrupt deflate stream, or bytes
//! after the last member that are not another one (zero padding from a copy tool, a partial
//! upload) end the stream where the decodable data ends, instead of failing the whole read.
//!
//! In: a gzip stream ([`Tolerant::new`], what [`crate::open`] wraps every gzip file in). Out:
//! its decompressed bytes; when the stream is damaged, those up to the last newline before the
//! damage (a line cut in the middle is no record: it is dropped, and counted in the note; inside
//! a corrupt deflate stream up to [`STEP`] bytes before the corruption go with it), then the
//! end. Each damage is noted once, in this process, for [`take_damage`]: the file, how many
//! decompressed bytes were kept, and the decoder's reason. Invariants: an undamaged stream reads
//! byte for byte as `flate2`'s `MultiGzDecoder` reads it; an I/O error of the file itself (not
//! of its gzip content) is still an error. Held back: at most the bytes after the last newline
//! of what was decoded, never more than [`MAX_HELD`] (a longer run without a newline is passed
//! on: binary WARC blocks frame themselves by their `Content-Length`).
//!
//! # Complexity
//! `O(bytes)`; one extra copy of the decompressed bytes; `O(MAX_HELD)` memory.

use std::io::{BufRead, Read};
use std::sync::Mutex;

/// Most bytes held back while waiting for a line's end.
pub const MAX_HELD: usize = 1 << 20;

/// Bytes decoded per step. A step that meets corrupt data yields nothing of what it decoded
/// (the decoder reports the error instead), so up to this many bytes before a corruption are
/// lost with it; a cut stream or bytes after the last member lose nothing.
const STEP: usize = 1 << 13;

/// Damage notes not yet taken, in order.
static DAMAGE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The notes of damaged gzip inputs read so far in this process (each once: taking them empties
/// the list). A command prints them as warnings when its reading is done, so every command that
/// reads a damaged file says the same.
///
/// ```
/// use std::io::Read;
/// let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
/// std::io::Write::write_all(&mut gz, b"http://h.org/a\nhttp://h.org/b\n").unwrap();
/// let mut bytes = gz.finish().unwrap();
/// bytes.extend_from_slice(&[0u8; 512]); // zero padding after the member
/// let mut out = String::new();
/// let mut r = dedust_io::Tolerant::new(std::io::Cursor::new(bytes), "urls.gz");
/// r.read_to_string(&mut out).unwrap();
/// assert_eq!(out, "http://h.org/a\nhttp://h.org/b\n");
/// let notes = dedust_io::take_damage();
/// assert!(notes.iter().any(|n| n.starts_with("urls.gz: damaged gzip data after 30 bytes")), "{notes:?}");
/// ```
pub fn take_damage() -> Vec<String> {
    std::mem::take(&mut *DAMAGE.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Note a damage, once: a file read twice (a WARC's records, then its pages) is damaged once.
fn note(msg: String) {
    let mut d = DAMAGE.lock().unwrap_or_else(|e| e.into_inner());
    if !d.contains(&msg) {
        d.push(msg);
    }
}

/// A gzip decoder that ends at the damage (see the module docs).
pub struct Tolerant<R: BufRead> {
    inner: Option<flate2::bufread::MultiGzDecoder<R>>,
    name: String,
    /// Decoded bytes not yet returned: `held[at..]`; `held[..line]` ends with a newline (or
    /// is empty).
    held: Vec<u8>,
    at: usize,
    line: usize,
    /// Decompressed bytes returned so far.
    out: u64,
}

impl<R: BufRead> Tolerant<R> {
    /// Decode `r`, naming it `name` in damage notes.
    pub fn new(r: R, name: &str) -> Tolerant<R> {
        Tolerant {
            inner: Some(flate2::bufread::MultiGzDecoder::new(r)),
            name: name.to_string(),
            held: Vec::new(),
            at: 0,
            line: 0,
            out: 0,
        }
    }

    /// Decode more into `held` (its unreturned part first moved to the front): `Ok(false)` at
    /// the end (clean or damaged).
    fn refill(&mut self) -> std::io::Result<bool> {
        let Some(d) = &mut self.inner else {
            return Ok(false);
        };
        self.held.drain(..self.at);
        self.line = self.line.saturating_sub(self.at);
        self.at = 0;
        let start = self.held.len();
        // Small steps: a call that meets corrupt data returns none of what it decoded.
        self.held.resize(start + STEP, 0);
        match d.read(&mut self.held[start..]) {
            Ok(n) => {
                self.held.truncate(start + n);
                if let Some(k) = self.held[start..].iter().rposition(|&b| b == b'\n') {
                    self.line = start + k + 1;
                } else if self.held.len() > MAX_HELD {
                    // No line end in sight: pass the run on whole (binary WARC blocks).
                    self.line = self.held.len();
                }
                if n == 0 {
                    self.inner = None;
                }
                Ok(true)
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::InvalidInput
                        | std::io::ErrorKind::InvalidData
                        | std::io::ErrorKind::UnexpectedEof
                ) =>
            {
                self.held.truncate(start);
                // A line cut by the damage is no record.
                let keep = self.line;
                let cut = self.held.len() - keep;
                self.held.truncate(keep);
                let kept = self.out + keep as u64;
                note(format!(
                    "{}: damaged gzip data after {kept} bytes ({e}); read up to there{}",
                    self.name,
                    if cut > 0 {
                        format!(", a cut line of {cut} bytes dropped")
                    } else {
                        String::new()
                    }
                ));
                self.inner = None;
                Ok(true)
            }
            Err(e) => {
                self.held.truncate(start);
                Err(e)
            }
        }
    }

    /// How many of the held bytes may be returned: up to the last newline while more may
    /// come (everything at the end, or when over [`MAX_HELD`]).
    fn ready(&self) -> usize {
        let h = self.held.len() - self.at;
        if self.inner.is_none() || h > MAX_HELD {
            return h;
        }
        self.line.saturating_sub(self.at)
    }
}

impl<R: BufRead> Read for Tolerant<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.ready().min(buf.len());
            if n > 0 {
                buf[..n].copy_from_slice(&self.held[self.at..self.at + n]);
                self.at += n;
                self.out += n as u64;
                return Ok(n);
            }
            if buf.is_empty() || !self.refill()? {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gz(parts: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in parts {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut e, p).unwrap();
            out.extend(e.finish().unwrap());
        }
        out
    }

    fn read_all(bytes: Vec<u8>, name: &str) -> (Vec<u8>, Vec<String>) {
        let mut out = Vec::new();
        let mut r =
            std::io::BufReader::with_capacity(7, Tolerant::new(std::io::Cursor::new(bytes), name));
        r.read_to_end(&mut out).unwrap();
        let notes = take_damage()
            .into_iter()
            .filter(|n| n.starts_with(name))
            .collect();
        (out, notes)
    }

    #[test]
    fn damage_table() {
        let whole = gz(&[b"a\nb\n", b"c\nd\n"]);
        let lines = b"l1\nl2\nl3\n".repeat(5_000);
        let big = gz(&[&lines]);
        let mut padded = whole.clone();
        padded.extend_from_slice(&[0; 100]);
        let mut garbage = whole.clone();
        garbage.extend_from_slice(b"not gzip");
        // (name, input, output, damaged?)
        let cases: Vec<(&str, Vec<u8>, Vec<u8>, bool)> = vec![
            ("whole", whole.clone(), b"a\nb\nc\nd\n".to_vec(), false),
            ("padded", padded, b"a\nb\nc\nd\n".to_vec(), true),
            ("garbage", garbage, b"a\nb\nc\nd\n".to_vec(), true),
            // The second member cut in its header: the first one's lines stay.
            (
                "cut-member",
                whole[..whole.len() - 20].to_vec(),
                b"a\nb\n".to_vec(),
                true,
            ),
            ("no-newline", gz(&[b"a\nb"]), b"a\nb".to_vec(), false),
        ];
        for (name, input, want, damaged) in cases {
            let (got, notes) = read_all(input, name);
            assert_eq!(got, want, "{name}");
            assert_eq!(notes.len(), usize::from(damaged), "{name}: {notes:?}");
        }
        // A byte flipped inside the deflate data: one note, and only whole lines before it.
        let mut flipped = big.clone();
        let m = big.len() / 2;
        flipped[m] ^= 0x5a;
        let (got, notes) = read_all(flipped, "flipped");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(got.is_empty() || got.ends_with(b"\n"));
        // Cut inside a long stream: whole lines only, and the dropped part counted.
        let (got, notes) = read_all(big[..big.len() / 2].to_vec(), "cut-deflate");
        assert!(!got.is_empty() && got.len() < lines.len());
        assert!(got.ends_with(b"\n") && lines.starts_with(&got));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains(&format!("after {} bytes", got.len())),
            "{notes:?}"
        );
    }
}
