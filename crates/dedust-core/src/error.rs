//! Typed errors of the library.
//!
//! In: failures from reading inputs, parsing URLs and rule files. Out: one [`Error`] enum that the
//! binary turns into a message and an exit code. Invariant: every variant names the file (and line,
//! where there is one) it came from, so a user can find the offending input.

use std::fmt;

/// Everything that can go wrong in the library. New variants may come in a minor release.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error while reading or writing `path`.
    Io {
        /// The file.
        path: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The input held no usable record at all.
    EmptyInput {
        /// The input.
        path: String,
        /// Malformed lines skipped.
        skipped: usize,
        /// The first few of them: (1-based line, or 0 where a message names its own place such
        /// as `file#record`; why).
        first: Vec<(usize, String)>,
    },
    /// A header or format problem that makes the whole input unreadable.
    Format {
        /// The input.
        path: String,
        /// 1-based line (0 when the problem is not on one line).
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A rule file that cannot be used.
    RuleFile {
        /// The rule file (or the rule's origin).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// Rule files, each usable alone, that cannot be combined (merged) as asked.
    Incompatible {
        /// The file that differs from the others.
        path: String,
        /// How, and what to do instead.
        message: String,
    },
    /// A URL that the base layer cannot parse.
    BadUrl {
        /// The URL.
        url: String,
        /// Why the base layer refused it.
        message: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{path}: {source}"),
            Error::EmptyInput {
                path,
                skipped,
                first,
            } => {
                write!(
                    f,
                    "{path}: no usable records (empty input; {skipped} malformed lines skipped)"
                )?;
                for (line, why) in first {
                    match line {
                        0 => write!(f, "\n  {why}")?,
                        n => write!(f, "\n  line {n}: {why}")?,
                    }
                }
                Ok(())
            }
            Error::Format {
                path,
                line,
                message,
            } => write!(f, "{path}:{line}: {message}"),
            Error::RuleFile { path, message } => write!(f, "{path}: bad rule file: {message}"),
            Error::Incompatible { path, message } => write!(f, "{path}: {message}"),
            Error::BadUrl { url, message } => write!(f, "bad URL {url:?}: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Result alias of the library.
pub type Result<T> = std::result::Result<T, Error>;
