//! Rule file: the versioned JSON document that `learn` writes and `normalize` reads.
//!
//! In/out: [`RuleFile`] ⇄ JSON text. Invariants: `format` is `"dedust-rules"` and `version` is
//! [`VERSION`]; a file with another format or a newer version is refused with a clear message;
//! serialization is deterministic (struct field order, rules in application order); a rule that
//! moves URLs to another host or path prefix without that site's consent
//! ([`crate::refused`]) never comes out of [`RuleFile::parse`] (left out, counted in
//! [`RuleFile::refused`]).

use crate::error::{Error, Result};
use crate::model::Rule;
use serde::{Deserialize, Serialize};

/// Current rule-file version.
pub const VERSION: u32 = 1;

/// The `format` of a partial merge ([`RuleFile::partial`]): a rule file of cross-host rules not
/// decided yet, which only `merge` reads (a reader of `"dedust-rules"` files refuses it).
pub const PARTIAL_FORMAT: &str = "dedust-rules-partial";

/// Base-layer settings recorded in a rule file (rules assume the same base layer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BaseSettings {
    /// Fragment kept.
    pub keep_fragment: bool,
    /// Query order kept.
    pub keep_query_order: bool,
}

/// A rule file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleFile {
    /// Always `"dedust-rules"`.
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// Tool that wrote it.
    pub generator: String,
    /// Base layer the rules were learned with.
    pub base: BaseSettings,
    /// Validation thresholds used (absent when not validated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<ValidationSettings>,
    /// The Public Suffix List the rules were learned with ([`crate::PSL_VERSION`] of the
    /// learning dedust: sites, and so what may be learned together, depend on it). `merge`
    /// refuses files learned with different lists. Absent in files written before it and in
    /// files no learning wrote (imported lists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psl: Option<String>,
    /// The job this file is one part of (`learn --shard --job-id ID [--partition N]`): `merge`
    /// pools cross-host evidence only over files of one job. Absent when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<Job>,
    /// Rules in application order.
    pub rules: Vec<Rule>,
    /// Cross-host evidence: every cross-host candidate `learn` validated, kept or not, with its
    /// pooled counts (`support`, `fp`, `sites`, `except`, `clusters`, `urls`), sorted by id.
    /// `merge` adds these up over host shards and decides the cross-host rules again, so shards
    /// that each saw a parameter on one site can together keep a rule seen on two.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Rule>,
    /// How many validation URLs a cross-host candidate of each kind could touch
    /// ([`crate::tier::exposure_key`]: a parameter name, or a URL convention). `merge` keeps a
    /// pooled cross-host rule only when every input exposed to it validated it, so a shard's URLs
    /// are never rewritten by a rule nobody checked on them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub exposure: std::collections::BTreeMap<String, usize>,
    /// Ids of `evidence` candidates that some input of a merge exposed to them
    /// ([`RuleFile::exposure`]) did not validate: no later merge that includes this file keeps
    /// them, since that input's URLs were never checked. Sorted; empty in a file `learn` writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
    /// Written by [`crate::merge_partial`] (`merge --partial`), one step of a tree of merges:
    /// the cross-host rules in `rules` are the inputs' records, not decided yet. Such a file's
    /// `format` is [`PARTIAL_FORMAT`], so releases before it refuse it too; only `merge` reads
    /// it ([`RuleFile::parse_any`]), [`RuleFile::parse`] and [`RuleFile::read`] refuse it.
    #[serde(skip)]
    pub partial: bool,
    /// Rules (and `evidence` entries) [`RuleFile::parse`] left out: they move URLs to another
    /// host or path prefix without that site's consent ([`crate::refused`]). Not serialized;
    /// 0 in a file built in memory.
    #[serde(skip)]
    pub refused: usize,
}

/// The job a rule file is one part of ([`RuleFile::job`]).
///
/// ```
/// let j = dedust_core::Job { id: "crawl-2026-11".into(), partition: Some(3) };
/// assert_eq!(serde_json::to_string(&j).unwrap(), r#"{"id":"crawl-2026-11","partition":3}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The job's id, as given (`--job-id`).
    pub id: String,
    /// The partition (shard) of the job this file was learned on, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<u64>,
}

/// Validation settings recorded in a rule file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ValidationSettings {
    /// `--min-support`.
    pub min_support: usize,
    /// `--max-fpr`.
    pub max_fpr: f64,
    /// `--min-sites` (files written before the cross-host tier: 2).
    #[serde(default = "default_min_sites")]
    pub min_sites: usize,
    /// `--min-collapse` (files written before it: 10).
    #[serde(default = "default_min_collapse")]
    pub min_collapse: usize,
    /// `--family-weight` (files written before it: 0, every rule judged by its own ratio).
    #[serde(default)]
    pub family_weight: f64,
    /// `--fpr-bound`.
    #[serde(default)]
    pub fpr_bound: bool,
    /// `--priors`: the [`PRIORS`](crate::judge::PRIORS) kept unless refuted (absent: off).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub priors: bool,
}

impl ValidationSettings {
    /// The thresholds these settings record.
    pub fn options(&self) -> crate::judge::ValidateOptions {
        crate::judge::ValidateOptions {
            min_support: self.min_support,
            max_fpr: self.max_fpr,
            min_sites: self.min_sites,
            min_collapse: self.min_collapse,
            family_weight: self.family_weight,
            fpr_bound: self.fpr_bound,
            priors: self.priors,
        }
    }
}

impl From<&crate::judge::ValidateOptions> for ValidationSettings {
    fn from(o: &crate::judge::ValidateOptions) -> Self {
        ValidationSettings {
            min_support: o.min_support,
            max_fpr: o.max_fpr,
            min_sites: o.min_sites,
            min_collapse: o.min_collapse,
            family_weight: o.family_weight,
            fpr_bound: o.fpr_bound,
            priors: o.priors,
        }
    }
}

fn default_min_sites() -> usize {
    crate::judge::ValidateOptions::default().min_sites
}

fn default_min_collapse() -> usize {
    crate::judge::ValidateOptions::default().min_collapse
}

impl RuleFile {
    /// A new rule file around `rules`.
    pub fn new(
        rules: Vec<Rule>,
        base: BaseSettings,
        validation: Option<ValidationSettings>,
    ) -> RuleFile {
        RuleFile {
            format: "dedust-rules".into(),
            version: VERSION,
            generator: format!("dedust {}", env!("CARGO_PKG_VERSION")),
            base,
            validation,
            psl: None,
            job: None,
            rules,
            evidence: Vec::new(),
            exposure: Default::default(),
            unchecked: Vec::new(),
            partial: false,
            refused: 0,
        }
    }

    /// Record on every rule and evidence entry that it was learned `at` (RFC 3339, see
    /// [`rfc3339`]) from the inputs `from`.
    ///
    /// ```
    /// let mut f = dedust_core::RuleFile::new(vec![], Default::default(), None);
    /// f.stamp_learned("2026-11-24T00:00:00Z", &["crawl.warc.gz".to_string()]);
    /// assert!(f.rules.is_empty());
    /// ```
    pub fn stamp_learned(&mut self, at: &str, from: &[String]) {
        let learned = crate::model::Learned {
            at: at.to_string(),
            from: from.to_vec(),
        };
        for r in self.rules.iter_mut().chain(self.evidence.iter_mut()) {
            r.learned = Some(learned.clone());
        }
    }

    /// The rules that apply: every rule but the revoked ones ([`Rule::revoked`]), in order.
    pub fn live_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules.iter().filter(|r| r.revoked.is_none())
    }

    /// Pretty JSON with a final newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("rule file serializes");
        s.push('\n');
        s
    }

    /// Parse a rule file; `path` is used in messages. Rules that move URLs to another host or
    /// path prefix without that site's consent ([`crate::refused`]) are left out, and counted in
    /// [`RuleFile::refused`]: a rule file never lets one site take over another's URLs.
    ///
    /// ```
    /// let f = dedust_core::RuleFile::new(vec![], Default::default(), None);
    /// let back = dedust_core::RuleFile::parse(&f.to_json(), "x.json").unwrap();
    /// assert_eq!(back, f);
    /// assert!(dedust_core::RuleFile::parse("{}", "x.json").is_err());
    /// ```
    pub fn parse(text: &str, path: &str) -> Result<RuleFile> {
        RuleFile::parse_impl(text, path, false)
    }

    /// [`RuleFile::parse`], partial merges ([`RuleFile::partial`]) included: for `merge`.
    pub fn parse_any(text: &str, path: &str) -> Result<RuleFile> {
        RuleFile::parse_impl(text, path, true)
    }

    fn parse_impl(text: &str, path: &str, any: bool) -> Result<RuleFile> {
        let err = |m: String| Error::RuleFile {
            path: path.to_string(),
            message: m,
        };
        // The header first (format, version; the rest is skipped), so that a file of another
        // kind or a newer version gets that message rather than a field error; then the typed
        // parse, straight from the text (no intermediate JSON tree: a 24 MB file of 11,000 rules
        // loads in a third of the memory), with line and column on errors.
        #[derive(Deserialize)]
        struct Header {
            format: Option<serde_json::Value>,
            version: Option<serde_json::Value>,
        }
        // A UTF-8 byte order mark (editors on Windows write one) is not part of the JSON.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        // serde_json's messages end with "at line L column C".
        let h: Header = serde_json::from_str(text).map_err(|e| err(format!("not JSON: {e}")))?;
        let partial = match h.format.as_ref().and_then(|f| f.as_str()) {
            Some("dedust-rules") => false,
            Some(PARTIAL_FORMAT) if any => true,
            Some(PARTIAL_FORMAT) => return Err(err(format!(
                "a partial merge (`merge --partial`): its cross-host rules are not decided yet; finish it with `dedust merge {path} -o rules.json`"
            ))),
            _ => return Err(err("missing \"format\": \"dedust-rules\"".into())),
        };
        match h.version.as_ref().map(|v| (v, v.as_u64())) {
            Some((_, Some(v))) if v >= 1 && v <= u64::from(VERSION) => {}
            Some((_, Some(v))) if v > u64::from(VERSION) => {
                return Err(err(format!(
                    "version {v} is newer than this dedust reads ({VERSION}): upgrade dedust"
                )))
            }
            Some((v, _)) => {
                return Err(err(format!(
                    "\"version\" must be a whole number from 1 to {VERSION}, got {v}"
                )))
            }
            None => return Err(err("missing \"version\"".into())),
        }
        // A kind of rule or convention this release does not know was most likely written by
        // a newer one (conventions are added within version 1): say so.
        let mut f: RuleFile = serde_json::from_str(text).map_err(|e| {
            let m = e.to_string();
            // The variant lists of a rule's kind and of a convention (not of a template piece,
            // where an unknown name is a typo).
            let kind_or_convention = m.contains("`convention`") || m.contains("`strip_www`");
            if m.starts_with("unknown variant") && kind_or_convention {
                err(format!(
                    "{m} (a rule kind or convention this dedust does not know: written by a newer dedust? upgrade dedust)"
                ))
            } else {
                err(m)
            }
        })?;
        f.partial = partial;
        f.refused =
            crate::moves::drop_refused(&mut f.rules) + crate::moves::drop_refused(&mut f.evidence);
        // Cross-host exceptions are looked up by binary search.
        for r in f.rules.iter_mut().chain(f.evidence.iter_mut()) {
            r.except.sort_unstable();
            r.except.dedup();
        }
        // Imported regex rules must compile here, not fail silently later.
        for (i, r) in f.rules.iter().enumerate() {
            if r.kind == crate::model::RuleKind::Regex {
                crate::javaregex::JavaRegex::new(
                    r.regex.as_deref().unwrap_or(""),
                    r.replacement.as_deref().unwrap_or(""),
                )
                .map_err(|m| err(format!("rule {} ({}): {m}", i + 1, r.id)))?;
            }
        }
        Ok(f)
    }

    /// Read a rule file to apply or export: [`RuleFile::read_any`], refusing a partial merge
    /// ([`RuleFile::partial`]), whose cross-host rules are not decided yet.
    pub fn read(path: &str) -> Result<RuleFile> {
        RuleFile::parse(&RuleFile::read_text(path)?, path)
    }

    /// [`RuleFile::read`], partial merges ([`RuleFile::partial`]) included: for `merge`.
    pub fn read_any(path: &str) -> Result<RuleFile> {
        RuleFile::parse_any(&RuleFile::read_text(path)?, path)
    }

    /// The text of a rule file on disk, or of standard input when `path` is `-`, at most
    /// [`MAX_RULE_FILE`] bytes.
    fn read_text(path: &str) -> Result<String> {
        read_capped(path, MAX_RULE_FILE)
    }
}

/// Largest rule file or list read (256 MiB; a merged rule file of a 20 M-line crawl is about
/// 40 MB): a larger input is refused with an error before it is held, and `-r /dev/zero` ends.
pub const MAX_RULE_FILE: u64 = 256 << 20;

/// The text of `path` (standard input for `-`), refused with an error when it holds more than
/// `limit` bytes or is not UTF-8. Reads at most `limit + 1` bytes.
///
/// ```
/// use dedust_core::__private::rulefile::read_capped;
/// let p = std::env::temp_dir().join(format!("dedust-doc-capped-{}", std::process::id()));
/// std::fs::write(&p, "0123456789").unwrap();
/// let p = p.to_str().unwrap();
/// assert_eq!(read_capped(p, 10).unwrap(), "0123456789");
/// assert!(read_capped(p, 9).unwrap_err().to_string().contains("more than 9 bytes"));
/// ```
pub fn read_capped(path: &str, limit: u64) -> Result<String> {
    use std::io::Read;
    let io = |e| Error::Io {
        path: path.to_string(),
        source: e,
    };
    let mut bytes = Vec::new();
    let read = if path == "-" {
        std::io::stdin()
            .lock()
            .take(limit + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(limit + 1).read_to_end(&mut bytes))
    };
    read.map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::RuleFile {
            path: path.to_string(),
            message: format!(
                "more than {limit} bytes: refused (the limit on rule files and lists)"
            ),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 at byte {}", e.utf8_error().valid_up_to()),
        ))
    })
}

/// `secs` since the Unix epoch as an RFC 3339 UTC time with seconds (`1970-01-01T00:00:00Z`):
/// the form of [`crate::model::Learned::at`] and [`crate::model::Revoked::at`], which compare
/// as strings in time order (years 0–9999).
///
/// ```
/// assert_eq!(dedust_core::__private::rulefile::rfc3339(0), "1970-01-01T00:00:00Z");
/// assert_eq!(dedust_core::__private::rulefile::rfc3339(1_795_984_260), "2026-11-29T20:31:00Z");
/// assert_eq!(dedust_core::__private::rulefile::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
/// ```
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian; H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_errors_say_what_is_wrong() {
        let ok = RuleFile::new(vec![], BaseSettings::default(), None).to_json();
        let with_version = |v: &str| ok.replacen("\"version\": 1", &format!("\"version\": {v}"), 1);
        assert!(ok.contains("\"version\": 1"), "{ok}");
        let mut piece_rule = crate::model::convention_rule(crate::model::Convention::TrailingSlash);
        piece_rule.source.path = Some(vec![vec![crate::model::Piece::Lit("x".into())]]);
        let cases: Vec<(String, Option<&str>)> = vec![
            (ok.clone(), None),
            (format!("\u{feff}{ok}"), None),
            (
                with_version("\"1\""),
                Some("must be a whole number from 1 to 1, got \"1\""),
            ),
            (with_version("0"), Some("must be a whole number")),
            (with_version("-1"), Some("must be a whole number")),
            (with_version("1.5"), Some("must be a whole number")),
            (with_version("7"), Some("version 7 is newer")),
            (
                ok.replacen("\"version\": 1,", "", 1),
                Some("missing \"version\""),
            ),
            ("{}".into(), Some("missing \"format\"")),
            // A convention a newer release added (within version 1).
            (
                RuleFile::new(
                    vec![crate::model::convention_rule(
                        crate::model::Convention::StaticQuery("js".into()),
                    )],
                    BaseSettings::default(),
                    None,
                )
                .to_json()
                .replace("\"static_query\"", "\"future_kind\""),
                Some("unknown variant `future_kind`"),
            ),
            // A mistyped template piece is no newer release's doing.
            (
                RuleFile::new(vec![piece_rule], BaseSettings::default(), None)
                    .to_json()
                    .replace("\"lit\":", "\"lyt\":"),
                Some("unknown variant `lyt`"),
            ),
            ("[1,".into(), Some("not JSON")),
        ];
        for (text, want) in cases {
            let got = RuleFile::parse(&text, "r.json");
            match want {
                None => assert!(got.is_ok(), "{text}: {got:?}"),
                Some(w) => {
                    let m = got.expect_err(&text).to_string();
                    assert!(m.contains(w) && m.contains("r.json"), "{text}: {m}");
                    assert_eq!(
                        m.contains("newer dedust"),
                        w.starts_with("unknown variant `future"),
                        "{m}"
                    );
                }
            }
        }
    }
}
