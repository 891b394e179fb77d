//! dedust-learn — learn URL normalization rules from duplicate clusters.
//!
//! In: clusters of URLs known to carry the same content (TSV, CSV, JSONL, ACHE lines, web-archive
//! indexes, WARC files: [`input`]). Out: a validated rule file ([`RuleFile`], the model of
//! `dedust-core`) whose rules map every URL of such a cluster to one canonical URL and
//! generalize to URLs and hosts never seen. One module per stage: [`input`] →
//! [`tokenize`](mod@tokenize) → [`align`](mod@align) → [`consensus`](mod@consensus) → [`rules`]
//! (candidates, each with its [`family`] consensus) → [`generalize`] → [`validate`]; [`pipeline`] runs the whole job,
//! [`metrics`](mod@metrics) and [`report`] measure a canonicalization, [`synth`] generates
//! synthetic data with ground truth, [`warc`] reads the duplicate evidence a crawl's WARC
//! records carry, [`evidence`] says what a web-archive index proves (same, different or
//! unknown) and judges the unknown by record length.
//!
//! Depends on `dedust-core` (the rule model and the engine every candidate is validated with)
//! and `dedust-io` (bounded readers) only.
//!
//! ```
//! use dedust_learn::{learn, Cluster, LearnConfig};
//! let mk = |id: &str, u: &[&str]| Cluster { id: id.into(), urls: u.iter().map(|s| s.to_string()).collect() };
//! let clusters: Vec<Cluster> = (0..5)
//!     .map(|i| mk(&format!("c{i}"), &[&format!("https://f.org/s.php?t={i}"), &format!("https://f.org/s.php?mode=hybrid&t={i}")]))
//!     .collect();
//! let cfg = LearnConfig { validate: Some(Default::default()), ..Default::default() };
//! let out = learn(&clusters, &cfg, &|_, _, _| {});
//! let n = dedust_core::Normalizer::new(out.file.rules, None);
//! assert_eq!(n.apply_rules("https://f.org/s.php?mode=hybrid&t=9".into()).url, "https://f.org/s.php?t=9");
//! ```
#![deny(missing_docs)]

// The engine's modules and items, under the paths these modules name them by.
use dedust_core::__private::{
    base, error, hash, javaregex, judge, model, normalize, rulefile, site, tier, url_parts,
};
use dedust_core::{base_normalize, Normalizer};

pub mod align;
pub mod consensus;
pub mod evidence;
pub mod family;
pub mod generalize;
pub mod input;
pub mod metrics;
pub mod pipeline;
pub mod report;
pub mod rules;
pub mod synth;
pub mod tokenize;
mod url_index;
pub mod validate;
pub mod warc;

pub use align::{align, AlignNode, Alignment};
pub use consensus::{consensus, Column, ColumnClass, Consensus};
pub use dedust_core::{BaseOptions, Rule, RuleFile};
pub use input::{read_clusters, read_clusters_from, InputFormat, ReadReport};
pub use metrics::{compare, mean, metrics, Comparison, Metrics};
pub use pipeline::{
    cross_validate, cross_validate_with, experiment, experiment_with, learn, learn_owned,
    Experiment, Holdout, LearnConfig, LearnOutput, Stage,
};
pub use rules::{learn_candidates, learn_site, Cluster, LearnOptions, LearnStats};
pub use tokenize::{tokenize, Token, TokenKind, Tokens};
pub use validate::{
    labeled, rule_stats, select, select_unrefuted, split_clusters, Labeled, LabeledRef,
    LabeledUrls, SplitMode, ValidateOptions, ValidateReport,
};
