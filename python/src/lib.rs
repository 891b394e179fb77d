//! `dedust._dedust` — the dedust engine (`dedust-core`) and learner (`dedust-learn`) as a Python
//! extension module.
//!
//! In: rule files (paths) and URLs as Python `str`; for `learn`, duplicate clusters. Out:
//! canonical URLs, the id of the rule that last changed one, a learned rule file (JSON text, what
//! `dedust learn` writes for the same clusters and options), and Python exceptions for files
//! that cannot be used. Invariants: for a
//! string that is one line (no `\r` or `\n`, at most 1 MiB) the output of `normalize` /
//! `normalize_many` is byte for byte what `dedust normalize` writes for that line with the same
//! rule files (a string that is no usable URL, or has no UTF-8 form, comes back unchanged, as
//! `normalize` passes such a line through); `normalize_many` normalizes on worker threads
//! without the GIL, on the engine's batch path ([`dedust_core::normalize_many_changed`]), while
//! the calling thread makes the result strings; the module only wires: every decision is the
//! engine's.

use dedust_core::Changed;
use dedust_core::LineStatus;
use dedust_core::{BaseOptions, Error, Normalizer as Engine, RuleFile};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySequence, PyString};
use std::path::PathBuf;
use std::sync::mpsc;

/// URLs per work unit of `normalize_many`: big enough that handing a unit over costs nothing
/// against its work, small enough that the first answers come back early.
const MANY_CHUNK: usize = 4096;

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

thread_local! {
    /// The output buffer of per-call normalization, kept between calls (no allocation per URL).
    static BUF: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
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

    /// The canonical forms of `urls` (a list, or another sequence, of `str`), in order, computed
    /// on all cores without the GIL (the strings are read in place; unchanged URLs, and strings
    /// that cannot be UTF-8, come back as the same `str` objects).
    fn normalize_many<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = Hidden::new(own_list(urls)?);
        let n = list.len();
        let chunks = n.div_ceil(MANY_CHUNK);
        let engine = &self.engine;
        // The answers go straight into a list of the right length (no `Vec` of objects turned
        // into a list afterwards), hidden from the garbage collector until every item is set:
        // Python code in another thread, running while the GIL is released, must not find a list
        // with unset items through `gc.get_objects()`.
        // SAFETY: `PyList_New` returns a new reference (or null with an exception set), owned
        // by `out` from here on; its items are null until set below, which `list_dealloc` allows
        // if an error drops it early.
        let out = Hidden::new(unsafe {
            Bound::from_owned_ptr_or_err(py, ffi::PyList_New(n as ffi::Py_ssize_t))?
                .cast_into_unchecked::<PyList>()
        });
        // Item `i` of `out`: the new string when the engine changed URL `i`, else URL `i` itself.
        let emit = |c: usize, part: &Changed| -> PyResult<()> {
            for (k, o) in part.iter().enumerate() {
                let i = c * MANY_CHUNK + k;
                let item = match o {
                    Some(o) => PyString::new(py, o).into_any(),
                    None => list.get_item(i)?,
                };
                // SAFETY: `i < n`, the length `out` was made with; `PyList_SetItem` takes over
                // the reference `into_ptr` gives up (and cannot fail for an index in range).
                unsafe { ffi::PyList_SetItem(out.as_ptr(), i as ffi::Py_ssize_t, item.into_ptr()) };
            }
            Ok(())
        };
        let threads = threads().min(chunks);
        if threads <= 1 {
            let strs = str_range(&list, 0, n)?;
            let part = py.detach(|| dedust_core::normalize_many_changed(engine, &strs, 1));
            emit(0, &part)?;
            return Ok(out.show());
        }
        // Units go to the workers as soon as their strings are read (reading them is the one
        // step that needs this thread and the GIL before any work can start); answers are turned
        // into `str`s unit by unit, in order, while the workers compute the next ones. This
        // thread is one of the `threads`: with no answer to turn into `str`s, it computes a
        // unit itself rather than wait (one thread per core, none left idle).
        let (work_tx, work_rx) = mpsc::channel::<(usize, Vec<&str>)>();
        let work_rx = std::sync::Mutex::new(work_rx);
        let (done_tx, done_rx) = mpsc::channel::<(usize, Changed)>();
        std::thread::scope(|s| -> PyResult<()> {
            for _ in 1..threads {
                let (done_tx, work_rx) = (done_tx.clone(), &work_rx);
                s.spawn(move || loop {
                    let job = work_rx.lock().map(|rx| rx.recv());
                    let Ok(Ok((i, part))) = job else { break };
                    let done = dedust_core::normalize_many_changed(engine, &part, 1);
                    if done_tx.send((i, done)).is_err() {
                        break;
                    }
                });
            }
            drop(done_tx);
            for c in 0..chunks {
                // On an error (an item that is no `str`) the workers finish the units sent and
                // stop; the scope waits for them.
                let part = str_range(&list, c * MANY_CHUNK, ((c + 1) * MANY_CHUNK).min(n))?;
                work_tx
                    .send((c, part))
                    .expect("normalize workers stopped early");
            }
            drop(work_tx);
            let mut ready: Vec<Option<Changed>> = (0..chunks).map(|_| None).collect();
            let mut done_rx = done_rx;
            for want in 0..chunks {
                while ready[want].is_none() {
                    if let Ok((i, part)) = done_rx.try_recv() {
                        ready[i] = Some(part);
                        continue;
                    }
                    // All units are sent: a worker holds the queue's lock only for a moment.
                    let job = work_rx.lock().ok().and_then(|rx| rx.try_recv().ok());
                    if let Some((i, part)) = job {
                        let done =
                            py.detach(|| dedust_core::normalize_many_changed(engine, &part, 1));
                        ready[i] = Some(done);
                        continue;
                    }
                    let got;
                    (done_rx, got) = py.detach(move || {
                        let got = done_rx.recv();
                        (done_rx, got)
                    });
                    let (i, part) = got.expect("a normalize worker panicked");
                    ready[i] = Some(part);
                }
                let part = ready[want].take().expect("unit is ready");
                emit(want, &part)?;
            }
            Ok(())
        })?;
        Ok(out.show())
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
        let py = url.py();
        // `Ok`: a new string; `Err`: the same object, with the rule that left it as it was.
        let out = BUF.with_borrow_mut(|buf| match self.engine.normalize_str_into(s, buf) {
            LineStatus::Url {
                changed: true,
                rule,
            } => Ok((PyString::new(py, buf), rule)),
            LineStatus::Url { rule, .. } => Err(rule),
            LineStatus::Bad(_) => Err(None),
        });
        out.unwrap_or_else(|rule| (url, rule))
    }
}

/// A new list of the items of `urls` (a list, or another sequence but a `str`): the call's own
/// references, which keep every string alive, and the list as it was, while workers read the
/// strings without the GIL (another thread may change the caller's list meanwhile; it cannot
/// find this one once it is [`Hidden`]).
fn own_list<'py>(urls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    if urls.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "normalize_many takes a list of str, not a str",
        ));
    }
    match urls.cast::<PyList>() {
        Ok(l) => Ok(l.get_slice(0, l.len())),
        Err(_) => urls
            .cast::<PySequence>()
            .map_err(|_| {
                PyTypeError::new_err(format!(
                    "normalize_many takes a list of str, got {}",
                    type_name(urls)
                ))
            })?
            .to_list(),
    }
}

/// A list this call made, out of the garbage collector's lists (`gc.get_objects()`,
/// `gc.get_referrers()`), so no Python code can reach it while the call releases the GIL: not
/// to change the strings it holds (workers read them), not to see items not yet set.
struct Hidden<'py>(Bound<'py, PyList>);

impl<'py> Hidden<'py> {
    /// `list` must be new, made by this call and not yet handed to any Python code.
    fn new(list: Bound<'py, PyList>) -> Hidden<'py> {
        // SAFETY: `list` is a live list (a GC-tracked container); untracking it only takes it
        // off the collector's lists (it holds strings only: no cycle to collect), and its
        // deallocation accepts an untracked list.
        unsafe { ffi::PyObject_GC_UnTrack(list.as_ptr().cast()) };
        Hidden(list)
    }

    /// The list, tracked again: every item is set (the caller's word), so Python may see it.
    fn show(self) -> Bound<'py, PyList> {
        // SAFETY: `new` untracked it and nothing tracked it since (no Python code could reach it).
        unsafe { ffi::PyObject_GC_Track(self.0.as_ptr().cast()) };
        self.0
    }
}

impl<'py> std::ops::Deref for Hidden<'py> {
    type Target = Bound<'py, PyList>;
    fn deref(&self) -> &Bound<'py, PyList> {
        &self.0
    }
}

/// The name of `x`'s type, for messages.
fn type_name(x: &Bound<'_, PyAny>) -> String {
    x.get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string())
}

/// The text of items `lo..hi` of `list`, each a `str` (a `TypeError` names the first that is
/// not); a string without a UTF-8 form (a lone surrogate) reads as `""`, a line the engine
/// passes through, so it is answered with itself.
fn str_range<'a>(list: &'a Bound<'_, PyList>, lo: usize, hi: usize) -> PyResult<Vec<&'a str>> {
    let mut out = Vec::with_capacity(hi - lo);
    for i in lo..hi {
        // SAFETY: `i` is in range (the list is the call's own, hidden, and never changes); the
        // reference returned is borrowed from `list`, which keeps the item alive for `'a`.
        let x = unsafe { ffi::PyList_GetItem(list.as_ptr(), i as ffi::Py_ssize_t) };
        // SAFETY: `x` is a valid object (non-null: `i` is in range).
        if unsafe { ffi::PyUnicode_Check(x) } == 0 {
            return Err(PyTypeError::new_err(format!(
                "normalize_many: item {i} is {}, not str",
                type_name(&list.get_item(i)?)
            )));
        }
        let mut len: ffi::Py_ssize_t = 0;
        // SAFETY: `x` is a `str`; the UTF-8 buffer this returns is cached in the string object
        // and lives as long as it does: `'a`, through the reference `list` holds (no Python code
        // can reach it); a `str` never changes.
        let p = unsafe { ffi::PyUnicode_AsUTF8AndSize(x, &mut len) };
        out.push(if p.is_null() {
            // No UTF-8 form: the exception it set is not ours to raise.
            // SAFETY: an exception is set (the call failed); clearing it is always allowed.
            unsafe { ffi::PyErr_Clear() };
            ""
        } else {
            // SAFETY: CPython gives `len` bytes of valid UTF-8 at `p`.
            unsafe {
                std::str::from_utf8_unchecked(std::slice::from_raw_parts(p.cast(), len as usize))
            }
        });
    }
    Ok(out)
}

/// `(cluster, url)` rows from what Python gives `learn`: a mapping `{cluster: [urls]}`, or an
/// iterable of `(cluster, url)` pairs. Read as the cluster-file readers read a row: ids with
/// `str()`, ids and URLs trimmed; an empty id is a `ValueError`, a mapping's value that is a
/// string (not a list of URLs) a `TypeError`, no rows at all a `ValueError`.
fn rows_of(clusters: &Bound<'_, PyAny>) -> PyResult<Vec<(String, String)>> {
    let mut rows = Vec::new();
    let mut push = |id: String, url: String| -> PyResult<()> {
        let id = id.trim();
        if id.is_empty() {
            return Err(PyValueError::new_err(format!(
                "learn: an empty cluster id (for {url:?})"
            )));
        }
        rows.push((id.to_string(), url.trim().to_string()));
        Ok(())
    };
    if let Ok(d) = clusters.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let id = k.str()?.to_string();
            if v.is_instance_of::<PyString>() || v.is_instance_of::<pyo3::types::PyBytes>() {
                return Err(PyTypeError::new_err(format!(
                    "learn: cluster {id:?} maps to a string; give a list of URLs"
                )));
            }
            for u in v.try_iter()? {
                push(id.clone(), u?.extract::<String>()?)?;
            }
        }
    } else {
        rows_of_pairs(clusters, &mut push)?;
    }
    if rows.is_empty() {
        return Err(PyValueError::new_err(
            "learn: no clusters given (empty input)",
        ));
    }
    Ok(rows)
}

/// The `(cluster, url)` pairs of an iterable, each handed to `push`.
fn rows_of_pairs(
    clusters: &Bound<'_, PyAny>,
    push: &mut dyn FnMut(String, String) -> PyResult<()>,
) -> PyResult<()> {
    for item in clusters.try_iter()? {
        let item = item?;
        let (id, url): (Bound<'_, PyAny>, String) = item.extract().map_err(|_| {
            PyTypeError::new_err(format!(
                "learn takes a mapping {{cluster: [urls]}} or (cluster, url) pairs, got an item {}",
                item.repr()
                    .map_or_else(|_| "?".to_string(), |r| r.to_string())
            ))
        })?;
        push(id.str()?.to_string(), url)?;
    }
    Ok(())
}

/// Learn a rule file from duplicate clusters, as `dedust learn` does; returns the rule file
/// (JSON text) for `Normalizer.from_file` once written, or `dedust export`. Runs without the
/// GIL.
#[pyfunction]
#[pyo3(signature = (
    clusters, *, validate = true, min_support = 2, max_fpr = 0.15, min_sites = 2,
    min_collapse = 10, keep_fragment = false, keep_query_order = false, allow_cross_site = false,
    priors = None
))]
#[allow(clippy::too_many_arguments)]
fn learn(
    py: Python<'_>,
    clusters: &Bound<'_, PyAny>,
    validate: bool,
    min_support: usize,
    max_fpr: f64,
    min_sites: usize,
    min_collapse: usize,
    keep_fragment: bool,
    keep_query_order: bool,
    allow_cross_site: bool,
    priors: Option<bool>,
) -> PyResult<String> {
    if !(0.0..=1.0).contains(&max_fpr) {
        return Err(PyValueError::new_err(format!(
            "max_fpr must be a share between 0 and 1, got {max_fpr}"
        )));
    }
    if priors == Some(true) && !validate {
        return Err(PyValueError::new_err(
            "priors need validation (the data may refute them): pass validate=True",
        ));
    }
    // On by default, as `dedust learn` (`priors=False` is `--no-priors`).
    let priors = priors.unwrap_or(true);
    if min_support == 0 || min_sites == 0 || min_collapse == 0 {
        return Err(PyValueError::new_err(
            "min_support, min_sites and min_collapse must be at least 1",
        ));
    }
    let rows = rows_of(clusters)?;
    let base = BaseOptions {
        keep_fragment,
        keep_query_order,
    };
    let cfg = dedust_learn::LearnConfig {
        learn: dedust_learn::LearnOptions {
            base,
            allow_cross_site,
            ..Default::default()
        },
        validate: validate.then_some(dedust_core::ValidateOptions {
            min_support,
            max_fpr,
            min_sites,
            min_collapse,
            priors,
            ..Default::default()
        }),
        ..Default::default()
    };
    // The learning date as `dedust learn` writes it (SOURCE_DATE_EPOCH for reproducible files).
    let secs = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => v.trim().parse::<u64>().map_err(|_| {
            PyValueError::new_err(format!(
                "SOURCE_DATE_EPOCH must be seconds since 1970 (got {v:?})"
            ))
        })?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let at = dedust_core::__private::rulefile::rfc3339(secs);
    Ok(py.detach(move || {
        let clusters = dedust_learn::input::rows_to_clusters(&rows);
        let mut out = dedust_learn::learn_owned(clusters, &cfg, &|_, _, _| {});
        out.file.stamp_learned(&at, &["python".to_string()]);
        out.file.to_json()
    }))
}

/// The dedust engine in process: `Normalizer.from_file(path)`, `.normalize(url)`,
/// `.normalize_many(urls)`, `.explain(url)`; `learn(clusters)` writes a rule file.
#[pymodule]
fn _dedust(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Normalizer>()?;
    m.add_function(wrap_pyfunction!(learn, m)?)?;
    m.add("RuleFileError", m.py().get_type::<RuleFileError>())?;
    Ok(())
}
