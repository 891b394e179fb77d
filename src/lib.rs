//! dedust — learn URL normalization rules that remove DUST (Different URLs with Similar Text).
//!
//! In: clusters of URLs known to carry the same content. Out: rewrite rules that map every URL of
//! such a cluster to one canonical URL and generalize to URLs never seen, plus the engine that
//! applies them.
//!
//! **Engine** (the `dedust-core` crate, re-exported here; knows nothing of learning, content or
//! the CLI): [`model`] (the rule record), [`url_parts`] (URL splitting), [`mod@base`] (base
//! normalization), [`normalize`] (the engine, [`Normalizer`]), [`stream`] (ordered
//! multi-threaded line normalization), [`javaregex`] (imported Java regexes), [`render`]
//! (readable notation and regex form), [`rulefile`] (the JSON rule file), [`judge`]
//! (thresholds, verdicts, application order), [`tier`] (cross-host rule helpers),
//! [`merge`](mod@merge), [`site`] (registrable domains), [`hash`], [`error`].
//!
//! **Learning, one module per stage:** [`input`] reads cluster files → [`tokenize`](mod@tokenize)
//! → [`align`](mod@align) → [`consensus`](mod@consensus) → [`rules`] (candidates) →
//! [`generalize`] → [`validate`]; [`pipeline`] runs the whole `learn` job, [`metrics`](mod@metrics)
//! measures a canonicalization, [`synth`] generates synthetic data with ground truth.
//! **Interop:** [`export`](mod@export), [`import`], [`lists`]. **Content:** [`pages`], [`tdw`],
//! [`similarity`], [`cluster`](mod@cluster), [`verify`](mod@verify), [`warc`].
//!
//! The library never prints: it reports progress through callbacks and returns typed errors
//! ([`Error`]).

pub use dedust_content::{cluster, ondemand, pages, refine, similarity, tdw, verify};
pub use dedust_core::__private::{
    base, error, hash, javaregex, judge, merge, model, moves, normalize, render, rulefile, site,
    stream, tier, url_parts,
};
pub use dedust_interop::{export, import, lists};
pub use dedust_io::{bytes_read, take_damage};
pub use dedust_learn::{
    align, consensus, evidence, family, generalize, input, metrics, pipeline, report, rules, synth,
    tokenize, validate, warc,
};

#[cfg(test)]
mod export_tests;
#[cfg(test)]
mod merge_tests;

pub use align::{AlignNode, Alignment};
pub use base::{base_normalize, BaseError, BaseOptions};
pub use consensus::{Column, ColumnClass, Consensus};
pub use dedust_core::{
    evidence_of, merge, merge_partial, Consent, Evidence, MergeReport, PSL_VERSION,
};
pub use error::{Error, Result};
pub use export::{Export, ExportOptions, Format as ExportFormat, Skipped};
pub use import::{import_nutch, regex_rule, JavaRegex};
pub use input::{read_clusters, read_clusters_from, InputFormat, ReadReport};
pub use metrics::{compare, mean, Comparison, Metrics};
pub use normalize::{apply_rule, Normalized, Normalizer};
pub use pipeline::{
    cross_validate, cross_validate_with, experiment, experiment_with, learn, learn_owned,
    Experiment, Holdout, LearnConfig, LearnOutput, Stage,
};
pub use rulefile::{BaseSettings, RuleFile, ValidationSettings};
pub use rules::{
    learn_candidates, learn_site, CapType, Cluster, LearnOptions, LearnStats, Learned, Piece,
    Revoked, Rule, RuleKind,
};
pub use tokenize::{Token, TokenKind, Tokens};
pub use validate::{
    labeled, rule_stats, select, select_unrefuted, split_clusters, Labeled, LabeledRef,
    LabeledUrls, SplitMode, ValidateOptions, ValidateReport,
};
