//! dedust-core — the rule model and the engine of dedust: load a rule file that `dedust learn`
//! wrote and normalize URLs with it. No learning, no page content, no command line: a crawler
//! embeds this crate alone.
//!
//! Modules: [`model`] (the rule record), [`url_parts`] (URL splitting), [`mod@base`] (the base
//! normalization every rule assumes), [`normalize`] (the engine, [`Normalizer`]), [`javaregex`]
//! (imported Java regexes), [`render`] (readable notation and regex form), [`rulefile`] (the JSON
//! rule file), [`judge`] (thresholds, verdicts, application order), [`tier`] (cross-host rule
//! helpers), [`merge`](mod@merge) (rule files of host shards into one), [`site`] (registrable
//! domains), [`stream`] (the ordered multi-threaded line normalizer), [`hash`], [`error`].
//!
//! Items marked `#[doc(hidden)]` (validation helpers in [`judge`] and [`tier`],
//! `Normalizer::trace_fixed`) serve the `dedust` learner and are not part of this crate's API.
//!
//! Feature `java-regex` (default): runs imported Java-regex rules (fancy-regex, regex). Without
//! it, [`RuleFile::parse`] refuses a file holding such rules, and [`Normalizer::new`] given one
//! by hand never applies it (count them with [`Normalizer::java_rules_off`]).
//!
//! ```
//! use dedust_core::{base_normalize, BaseOptions, Normalizer, RuleFile};
//! // A rule file as `dedust learn` writes it (here: one rule dropping a session id).
//! let json = r#"{"format": "dedust-rules", "version": 1, "generator": "doc",
//!   "base": {"keep_fragment": false, "keep_query_order": false}, "rules": [
//!   {"id": "r1", "kind": "drop", "scope": "h.org", "pattern": "", "target": "",
//!    "source": {"scheme": null, "host": "h.org", "path": null,
//!               "required": [["sid", {"pieces": [{"cap": "alnum"}]}]], "optional": [], "rest": true},
//!    "output": {"scheme": null, "host": null, "path": null, "query": []},
//!    "clusters": 0, "urls": 0, "examples": []}]}"#;
//! let file = RuleFile::parse(json, "rules.json").unwrap();
//! let n = Normalizer::new(file.live_rules().cloned().collect(), None);
//! let url = base_normalize("HTTP://H.org/a?sid=Ab12&x=1", &BaseOptions::default()).unwrap();
//! assert_eq!(n.apply_rules(url).url, "http://h.org/a?x=1");
//! ```
//!
//! Invariants: nothing here prints; errors are typed ([`Error`]); the engine's hot path does
//! not allocate for a URL no rule touches.

#![deny(missing_docs)]

pub mod base;
pub mod error;
pub mod hash;
pub mod javaregex;
pub mod judge;
pub mod merge;
pub mod model;
pub mod normalize;
pub mod render;
pub mod rulefile;
pub mod site;
pub mod stream;
pub mod tier;
pub mod url_parts;

pub use base::{base_normalize, BaseError, BaseOptions};
pub use error::{Error, Result};
pub use javaregex::{regex_rule, JavaRegex};
pub use merge::{merge, MergeReport};
pub use model::{CapType, Cluster, Learned, Piece, Revoked, Rule, RuleKind};
pub use normalize::{apply_rule, Normalized, Normalizer};
pub use rulefile::{BaseSettings, RuleFile, ValidationSettings};
