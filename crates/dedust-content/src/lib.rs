//! dedust-content — verify URL merges by page content.
//!
//! In: crawled pages (URL + HTML: JSONL, a directory of HTML files, WARC). Out: per page its
//! term-document-weighting features ([`tdw`]), similar pairs under three measures with an exact
//! filtered all-pairs join ([`similarity`]), duplicate clusters from content in the form the
//! learner reads ([`cluster`](mod@cluster)), a crawl's declared clusters decided again by its
//! pages ([`refine`](mod@refine)), and per rule how many of the pairs it merges the
//! pages confirm ([`verify`](mod@verify), which also decides revocations).
//!
//! Depends on `dedust-core` (rules, the engine) and `dedust-io` (bounded WARC reading) only:
//! never on the learner, so a crawler can check a rule file against its pages without it.
//!
//! ```
//! use dedust_content::{similarity, tdw};
//! let f = |html: &str| tdw::features("http://a.org/x", html, &Default::default());
//! let a = f("<h1>Zebras at dawn</h1><p>Zebras graze on the savanna at dawn.</p>");
//! let b = f("<h1>Zebras at dawn</h1><p>Zebras graze on the savanna at dawn!</p>");
//! assert!(similarity::cosine(&a.tdw, &b.tdw) > 0.99);
//! ```
#![deny(missing_docs)]

// The engine's modules, under the paths these modules name them by.
#[cfg(test)]
use dedust_core::__private::javaregex;
use dedust_core::__private::{base, error, hash, model, normalize, site};

pub mod cluster;
pub mod ondemand;
pub mod pages;
pub mod refine;
pub mod similarity;
pub mod tdw;
pub mod verify;

pub use cluster::{cluster_pages, pair_agreement};
pub use pages::{read_pages, Page, PagesReport};
pub use verify::{verify_rules, verify_rules_with, RuleCheck, VerifyStage};
