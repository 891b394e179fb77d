//! `dedust._dedust` — the dedust engine (`dedust-core`) as a Python extension module.
//!
//! In: rule files (paths) and URLs as Python `str`. Out: canonical URLs, the id of the rule that
//! last changed one, and Python exceptions for files that cannot be used. Invariants: the
//! output of `normalize` / `normalize_many` is byte for byte what `dedust normalize` writes for
//! the same rule files (a string that is no usable URL comes back unchanged, as `normalize`
//! passes such a line through); `normalize_many` runs without the GIL on the engine's batch
//! path ([`dedust_core::stream::normalize_many`]); the module only wires: every decision is the
//! engine's.

use dedust_core::normalize::LineStatus;
use dedust_core::{BaseOptions, Error, Normalizer as Engine, RuleFile};
use pyo3::create_exception;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

create_exception!(
    _dedust,
    RuleFileError,
    PyValueError,
    "A rule file that cannot be used: not JSON, a wrong version, a rule that does not compile. \
     The message names the file (and the line, where the JSON parser gives one)."
);

/// Python exception for a core error: a missing file is `FileNotFoundError`, another I/O
/// failure `OSError`, anything wrong inside the file `RuleFileError`.
fn py_err(e: Error) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(msg)
        }
        Error::Io { .. } => PyOSError::new_err(msg),
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
        let paths: Vec<String> = if let Ok(p) = path.extract::<String>() {
            vec![p]
        } else if let Ok(ps) = path.extract::<Vec<String>>() {
            ps
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "path must be a str or a list of str",
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

    /// The canonical form of `url` (unchanged when it is no usable URL). An unchanged URL is
    /// returned as the same `str` object (no copy).
    fn normalize<'py>(&self, url: Bound<'py, PyString>) -> PyResult<Bound<'py, PyString>> {
        let s = url.to_str()?;
        let mut buf = String::new();
        Ok(
            match self.engine.normalize_line_into(s.as_bytes(), &mut buf) {
                LineStatus::Url { changed: true, .. } => PyString::new(url.py(), &buf),
                _ => url,
            },
        )
    }

    /// The canonical forms of `urls`, in order, computed on all cores without the GIL (the
    /// strings are read in place; unchanged URLs come back as the same `str` objects).
    fn normalize_many<'py>(
        &self,
        py: Python<'py>,
        urls: Vec<Bound<'py, PyString>>,
    ) -> PyResult<Vec<Bound<'py, PyString>>> {
        let strs: Vec<&str> = urls.iter().map(|u| u.to_str()).collect::<PyResult<_>>()?;
        let engine = &self.engine;
        // `&str`s borrowed from Python strings are plain bytes owned by objects this call
        // keeps alive: safe to read on other threads while the GIL is released.
        let out = py.detach(|| dedust_core::stream::normalize_many(engine, &strs, threads()));
        Ok(out
            .into_iter()
            .zip(urls.iter().zip(&strs))
            .map(|(o, (u, s))| {
                if o == *s {
                    u.clone()
                } else {
                    PyString::new(py, &o)
                }
            })
            .collect())
    }

    /// `(canonical, rule id)`: the id of the rule that last changed the URL, or `None` when no
    /// rule did (the base layer alone, or nothing, changed it).
    fn explain(&self, url: &str) -> (String, Option<String>) {
        let mut buf = String::new();
        match self.engine.normalize_line_into(url.as_bytes(), &mut buf) {
            LineStatus::Url { rule, .. } => {
                let id = rule.map(|i| self.engine.rules()[i].id.clone());
                (buf, id)
            }
            LineStatus::Bad(_) => (url.to_string(), None),
        }
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

/// The dedust engine in process: `Normalizer.from_file(path)`, `.normalize(url)`,
/// `.normalize_many(urls)`, `.explain(url)`.
#[pymodule]
fn _dedust(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Normalizer>()?;
    m.add("RuleFileError", m.py().get_type::<RuleFileError>())?;
    Ok(())
}
