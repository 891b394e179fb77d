//! dedust — learn URL normalization rules that remove DUST (Different URLs with Similar Text).
//!
//! In: clusters of URLs known to carry the same content. Out: rewrite rules that map every URL of
//! such a cluster to one canonical URL and generalize to URLs never seen, plus the engine that
//! applies them. The pipeline, one module per stage:
//!
//! [`base`] → [`tokenize`] → [`align`] → [`consensus`] → [`rules`] → [`validate`] →
//! [`normalize`]; [`input`] reads cluster files, [`metrics`] measures a canonicalization,
//! [`rulefile`] is the JSON rule file, [`pipeline`] runs the whole `learn` job, [`synth`]
//! generates synthetic data with ground truth and [`site`] gives a host's registrable domain
//! (the unit of cross-host evidence and of `--split host`).
//!
//! The library never prints: it reports progress through callbacks and returns typed errors
//! ([`Error`]).

pub mod align;
pub mod base;
pub mod cluster;
pub mod consensus;
pub mod error;
pub mod export;
pub mod generalize;
pub mod import;
pub mod input;
pub mod lists;
pub mod merge;
pub mod metrics;
pub mod normalize;
pub mod pages;
pub mod pipeline;
pub mod render;
pub mod report;
pub mod rulefile;
pub mod rules;
pub mod similarity;
pub mod site;
pub mod synth;
pub mod tdw;
pub mod tokenize;
pub mod validate;
pub mod verify;
pub mod warc;

pub use align::{align, AlignNode, Alignment};
pub use base::{base_normalize, BaseError, BaseOptions};
pub use consensus::{consensus, Column, ColumnClass, Consensus};
pub use error::{Error, Result};
pub use export::{export, Export, ExportOptions, Format as ExportFormat, Skipped};
pub use import::{import_nutch, regex_rule, JavaRegex};
pub use input::{read_clusters, read_clusters_from, InputFormat, ReadReport};
pub use merge::{merge, MergeReport};
pub use metrics::{compare, mean, metrics, Comparison, Metrics};
pub use normalize::{apply_rule, Normalized, Normalizer};
pub use pipeline::{
    cross_validate, experiment, learn, learn_owned, Experiment, Holdout, LearnConfig, LearnOutput,
    Stage,
};
pub use rulefile::{BaseSettings, RuleFile, ValidationSettings};
pub use rules::{
    learn_candidates, CapType, Cluster, LearnOptions, LearnStats, Learned, Piece, Revoked, Rule,
    RuleKind,
};
pub use tokenize::{tokenize, Token, TokenKind, Tokens};
pub use validate::{
    labeled, rule_stats, select, split_clusters, Labeled, SplitMode, ValidateOptions,
    ValidateReport,
};
