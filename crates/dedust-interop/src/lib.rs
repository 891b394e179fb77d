//! dedust-interop — rule files in and out of the crawlers users already run.
//!
//! Out ([`export`](mod@export)): Nutch `regex-normalize.xml`, StormCrawler JSON, Heritrix, Scrapy,
//! a regex TSV and dedust's own JSON, each with the rules it holds and every rule left out with
//! the reason. In ([`import`], [`lists`]): Nutch's regex normalizer XML, the ClearURLs list,
//! Scrapy's duplicate-url-discarder rules and robots.txt `Clean-param:` lines, as dedust rules
//! (Java regexes run by `dedust-core`'s engine) that `dedust validate` can measure on data.
//!
//! Depends on `dedust-core` only: a crawler's build step can convert rule files without the
//! learner.
//!
//! ```
//! use dedust_interop::{export, ExportFormat, ExportOptions};
//! let rules = dedust_interop::lists::import_robots("Clean-param: sid /forum/", "https://f.org/robots.txt")
//!     .unwrap()
//!     .rules;
//! let nutch = export(&rules, &Default::default(), ExportFormat::Nutch, &ExportOptions::default());
//! assert_eq!(nutch.rules.len(), rules.len());
//! assert!(nutch.text.contains("<regex>"));
//! ```
#![deny(missing_docs)]

// The engine's modules, under the paths these modules name them by.
use dedust_core::__private::{error, javaregex, judge, model, normalize, render, rulefile};

pub mod export;
pub mod import;
pub mod lists;
mod xml;

pub use export::{export, Export, ExportOptions, Filter, Format as ExportFormat, Skipped};
pub use import::import_nutch;
pub use lists::{import_clearurls, import_dud, import_robots, ListImport};
