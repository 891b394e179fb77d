//! `dedust._dedust` — the dedust engine (`dedust-core`) as a Python extension module.
//!
//! In: rule files (paths) and URLs as Python `str`. Out: canonical URLs, the id of the rule that
//! last changed one, and Python exceptions for files that cannot be used. Invariants: for a
//! string that is one line (no `\r` or `\n`, at most 1 MiB) the output of `normalize` /
//! `normalize_many` is byte for byte what `dedust normalize` writes for that line with the same
//! rule files (a string that is no usable URL, or has no UTF-8 form, comes back unchanged, as
//! `normalize` passes such a line through); `normalize_many` runs without the GIL on the
//! engine's batch
//! path ([`dedust_core::normalize_many`]); the module only wires: every decision is the
//! engine's.

use dedust_core::LineStatus;
use dedust_core::{BaseOptions, Error, Normalizer as Engine, RuleFile};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;

create_exception!(
    dedust,
    RuleFileError,
    PyValueError,
    "A rule file that cannot be used: not JSON, a wrong version, a rule that does not compile. \
     The message names the file (and the line, where the JSON parser gives one)."
);

/// Python exception for a core error: an operating-system failure is the `OSError` subclass
/// its errno gives (`FileNotFoundError`, `IsADirectoryError`…, with `errno` and `filename`
/// set), anything wrong inside the file (including bytes that are not UTF-8) `RuleFileError`.
fn py_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Io { path, source } => match source.raw_os_error() {
            Some(code) => PyOSError::new_err((code, source.to_string(), path)),
            None if source.kind() == std::io::ErrorKind::InvalidData => RuleFileError::new_err(msg),
            None => PyOSError::new_err(msg),
        },
        _ => RuleFileError::new_err(msg),
    }
}

/// Threads for `normalize_many` (all cores).
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A compiled rule set: the canonical form of URLs as `dedust normalize` computes it.
#[pyclass(frozen, module = "dedust")]
struct Normalizer {
    engine: Engine,
}

#[pymethods]
impl Normalizer {
    /// Load one rule file or a list of them (applied in the order given, revoked rules left
    /// out, as `dedust normalize -r A -r B` does); `base=False` turns the base layer off.
    #[staticmethod]
    #[pyo3(signature = (path, base = true))]
    fn from_file(path: &Bound<'_, PyAny>, base: bool) -> PyResult<Normalizer> {
        let paths: Vec<String> = if let Ok(p) = path.extract::<PathBuf>() {
            vec![p.to_string_lossy().into_owned()]
        } else if let Ok(ps) = path.extract::<Vec<PathBuf>>() {
            ps.iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect()
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "path must be a str or os.PathLike, or a list of them",
            ));
        };
        let mut rules = Vec::new();
        for p in &paths {
            let f = RuleFile::read(p).map_err(py_err)?;
            rules.extend(f.live_rules().cloned());
        }
        let engine = Engine::new(rules, base.then(BaseOptions::default));
        Ok(Normalizer { engine })
    }

    /// The canonical form of `url` (unchanged when it is no usable URL, including a `str` that
    /// cannot be UTF-8: a lone surrogate). An unchanged URL is returned as the same `str`
    /// object (no copy).
    fn normalize<'py>(&self, url: Bound<'py, PyString>) -> Bound<'py, PyString> {
        self.key(url).0
    }

    /// The canonical forms of `urls`, in order, computed on all cores without the GIL (the
    /// strings are read in place; unchanged URLs, and strings that cannot be UTF-8, come back
    /// as the same `str` objects).
    fn normalize_many<'py>(
        &self,
        py: Python<'py>,
        urls: Vec<Bound<'py, PyString>>,
    ) -> Vec<Bound<'py, PyString>> {
        // A string with a lone surrogate has no UTF-8 form: it goes through as "" (a blank
        // line, passed through) and is answered with itself below.
        let strs: Vec<&str> = urls.iter().map(|u| u.to_str().unwrap_or("")).collect();
        let engine = &self.engine;
        // The `&str`s are the strings' own UTF-8 buffers; `urls` holds a reference to every
        // string until this call returns and `str` is immutable, so other threads may read them
        // while the GIL is released.
        let out = py.detach(|| dedust_core::normalize_many(engine, &strs, threads()));
        out.into_iter()
            .zip(urls.iter().zip(&strs))
            .map(|(o, (u, s))| {
                if o == *s {
                    u.clone()
                } else {
                    PyString::new(py, &o)
                }
            })
            .collect()
    }

    /// `(canonical, rule id)`: the id of the rule that last changed the URL, or `None` when no
    /// rule did (the base layer alone, or nothing, changed it).
    fn explain<'py>(&self, url: Bound<'py, PyString>) -> (Bound<'py, PyString>, Option<String>) {
        let (key, rule) = self.key(url);
        (key, rule.map(|i| self.engine.rules()[i].id.clone()))
    }

    /// Number of rules loaded (revoked rules not counted).
    fn __len__(&self) -> usize {
        self.engine.rules().len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<dedust.Normalizer with {} rules>",
            self.engine.rules().len()
        )
    }
}

impl Normalizer {
    /// `url`'s canonical form and the index of the rule that last changed it: the same `str`
    /// object when nothing changed it (no usable URL, no UTF-8 form, already canonical).
    fn key<'py>(&self, url: Bound<'py, PyString>) -> (Bound<'py, PyString>, Option<usize>) {
        let Ok(s) = url.to_str() else {
            return (url, None);
        };
        let mut buf = String::new();
        match self.engine.normalize_line_into(s.as_bytes(), &mut buf) {
            LineStatus::Url {
                changed: true,
                rule,
            } => (PyString::new(url.py(), &buf), rule),
            LineStatus::Url { rule, .. } => (url, rule),
            LineStatus::Bad(_) => (url, None),
        }
    }
}

/// The dedust engine in process: `Normalizer.from_file(path)`, `.normalize(url)`,
/// `.normalize_many(urls)`, `.explain(url)`.
#[pymodule]
fn _dedust(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Normalizer>()?;
    m.add("RuleFileError", m.py().get_type::<RuleFileError>())?;
    Ok(())
}
