//! dedust-core — the rule model and the engine of dedust: load a rule file that `dedust learn`
//! wrote and normalize URLs with it. No learning, no page content, no command line: a crawler
//! embeds this crate alone.
//!
//! The API is flat: every type and function below is re-exported at the crate root from private
//! modules. The rule record ([`Rule`], [`RuleKind`], [`Source`], [`Target`], [`CapType`]…), the
//! rule file ([`RuleFile`], read and written as JSON), the base normalization every rule assumes
//! ([`base_normalize`], [`BaseOptions`]), the engine ([`Normalizer`], [`apply_rule`]), its
//! streaming and batch drivers ([`normalize_stream`], [`normalize_many`]), imported Java regexes
//! ([`JavaRegex`], [`regex_rule`]), the readable notation and regex form of a rule
//! ([`describe`], [`regex_form`]), merging the rule files of host shards ([`merge`]), URL
//! splitting ([`split_url`]), registrable domains ([`registrable_domain`]), the host a captured
//! URL speaks for in trust decisions ([`trusted_host`]) and site moves ([`site_move`],
//! [`Consent`]: a rule file never lets one site take over another's URLs). Errors are typed
//! ([`Error`], [`BaseError`], [`JavaRegexError`]), all `#[non_exhaustive]`.
//!
//! `__private` (hidden) gives the workspace's other crates — the learner, the crawler exports,
//! the content verifier — the engine's modules whole (validation helpers, rule ordering,
//! cross-host features). It is not part of this crate's API and carries no semver promise; the
//! sibling crates depend on this crate's exact version (`=0.1.0`) for that reason.
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

mod base;
mod error;
mod hash;
mod javaregex;
mod judge;
mod key_index;
mod merge;
mod model;
mod moves;
mod normalize;
mod render;
mod rulefile;
mod site;
mod stream;
mod tier;
mod trust;
mod url_parts;

pub use base::{base_normalize, BaseError, BaseOptions};
pub use error::{Error, Result};
pub use javaregex::{regex_rule, JavaRegex, JavaRegexError};
pub use judge::{evidence_of, Evidence, ValidateOptions};
pub use merge::{merge, merge_partial, MergeReport};
pub use model::{
    convention_rule, CapType, Cluster, Convention, Learned, Piece, Revoked, Rule, RuleKind, SegOut,
    Source, Target, ValOut, ValPat, ANY_HOST,
};
pub use moves::{drop_refused, refused, site_move, Consent, Move};
pub use normalize::{
    apply_rule, BadLine, LineResult, LineStatus, Normalized, Normalizer, MAX_LINE, MAX_ROUNDS,
};
pub use render::{describe, regex_form, regex_form_on_hosts};
pub use rulefile::{BaseSettings, Job, RuleFile, ValidationSettings, VERSION};
pub use site::{registrable_domain, PSL_VERSION};
pub use stream::{
    normalize_many, normalize_many_changed, normalize_stream, Changed, StreamOptions, StreamStats,
    HELD_LINE,
};
pub use trust::{trusted_host, Ambiguity, TrustedHost};
pub use url_parts::{split_url, UrlParts};

/// The engine's modules whole, for the workspace's other crates (the learner, the crawler
/// exports, the content verifier): validation helpers, rule ordering, cross-host features.
/// Not part of this crate's API; no semver promise.
#[doc(hidden)]
pub mod __private {
    macro_rules! whole {
        ($($m:ident),*) => {$(
            #[allow(missing_docs)]
            pub mod $m {
                pub use crate::$m::*;
            }
        )*};
    }
    whole!(
        base, error, hash, javaregex, judge, merge, model, moves, normalize, render, rulefile,
        site, stream, tier, trust, url_parts
    );
}
