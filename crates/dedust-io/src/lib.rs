//! dedust-io — bounded readers for attacker-controlled crawl bytes.
//!
//! Every reader of crawl data in dedust (cluster files, web-archive indexes, WARC files, page
//! dumps) goes through this crate: [`open`] undoes gzip by magic bytes (reading a damaged
//! stream up to the damage, noted for [`take_damage`]) and skips a byte order mark, [`read_line_capped`] never holds more than a given number of bytes of one line, and
//! [`warc`] frames WARC records with limits on every header line, header block and held block.
//! The learner (`dedust-learn`) and the content verifier (`dedust-content`) both read WARC
//! files; this crate is what they share, so neither depends on the other.
//!
//! ```
//! use dedust_io::{read_line_capped, Line};
//! let mut r = std::io::Cursor::new(b"a very long line\nshort\n".to_vec());
//! let mut buf = Vec::new();
//! assert_eq!(read_line_capped(&mut r, &mut buf, 6).unwrap(), Line::Cut);
//! assert_eq!(read_line_capped(&mut r, &mut buf, 6).unwrap(), Line::Whole);
//! assert_eq!(buf, b"short\n");
//! ```
#![deny(missing_docs)]

mod gzip;
mod read;
pub mod warc;

pub use gzip::{take_damage, Tolerant, MAX_HELD};
pub use read::{bytes_read, open, read_line_capped, skip_line, Line};
