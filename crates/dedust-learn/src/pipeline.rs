//! Pipeline: the whole `learn` job — candidates, validation, a deployable rule file.
//!
//! In: clusters and a [`LearnConfig`]. Out: a [`LearnOutput`] with the [`RuleFile`] and what each
//! stage saw. Validation is on by default: every candidate is applied alone to all input URLs and
//! kept only with enough support and a low false-positive rate (see [`crate::validate`]); the
//! kept set is then made conflict-free, ordered and idempotent. Progress goes through a callback.
//! A web-archive index's facts ([`LearnConfig::evidence`], from [`crate::ReadReport::evidence`])
//! reach validation through the config only, keyed again by base-normalized URL once per run
//! (`O(u)`); without them every merge between two clusters is a false positive.

use crate::evidence::{Facts, IndexEvidence};
use crate::rulefile::{BaseSettings, RuleFile, ValidationSettings};
use crate::rules::{
    candidates_from, learn_candidates, Cluster, LearnOptions, LearnStats, Prepared, Rule,
};
use crate::validate::{
    finalize, labeled, split_clusters, LabeledUrls, SplitMode, ValidateOptions, ValidateReport,
};
use foldhash::HashMap;
use std::sync::Arc;

/// Settings of a learn run.
#[derive(Debug, Clone, Default)]
pub struct LearnConfig {
    /// Candidate learning.
    pub learn: LearnOptions,
    /// Rules a crawl declares about itself (robots.txt `Clean-param:` lines read with the
    /// input, `dedust_interop::lists::import_robots`): extra candidates, validated like learned ones.
    pub declared: Vec<Rule>,
    /// Cross-host candidates learned on other shards of the same crawl
    /// (`--cross-host-candidates`), validated on this input too (see [`add_foreign`]).
    pub cross_host_candidates: Vec<Rule>,
    /// The cross-host tier as decided on every shard's pooled evidence (`--cross-host-decided`):
    /// at the verdict step these cross-host candidates are kept whatever this input's numbers
    /// say and no other is, so host rules are chosen around the tier the merged file will hold.
    pub cross_host_decided: Option<std::collections::BTreeSet<String>>,
    /// Validation thresholds; `None` skips validation (`--no-validate`).
    pub validate: Option<ValidateOptions>,
    /// Validate on a held-out part instead of the whole input (`--holdout`).
    pub holdout: Option<Holdout>,
    /// What a web-archive index says about its URLs ([`crate::ReadReport::evidence`]): with it,
    /// validation judges a merge between two digest groups by record length instead of counting
    /// it a false positive ([`crate::evidence`]). Facts are per URL: pass the whole input's,
    /// whatever part of it is learned on. `None` (the default): every merge between two
    /// clusters is a false positive.
    ///
    /// ```
    /// use dedust_learn::{learn, read_clusters_from, InputFormat, LearnConfig};
    /// let index = "org,h)/ 1 {\"url\": \"http://h.org/\", \"status\": \"200\", \"digest\": \"D\", \"length\": \"900\"}\n";
    /// let (clusters, rep) =
    ///     read_clusters_from(std::io::Cursor::new(index), "i.cdxj", InputFormat::Auto).unwrap();
    /// let cfg = LearnConfig {
    ///     validate: Some(Default::default()),
    ///     evidence: rep.evidence.map(std::sync::Arc::new),
    ///     ..Default::default()
    /// };
    /// assert!(cfg.evidence.is_some());
    /// let out = learn(&clusters, &cfg, &|_, _, _| {});
    /// assert!(out.file.rules.is_empty());
    /// ```
    pub evidence: Option<Arc<IndexEvidence>>,
    /// With [`LearnConfig::evidence`]: compare the pages of a sample of each rule's unknown
    /// merges ([`crate::evidence::PairCheck`], from the index's WARC files at hand), which
    /// then judge the rule's unknown merges instead of their lengths
    /// ([`crate::evidence::by_content`]). `None` (the default): the length test alone.
    pub check: Option<crate::evidence::PairCheck>,
}

/// A held-out validation part: candidates are learned on the rest and validated on it.
#[derive(Debug, Clone, Copy)]
pub struct Holdout {
    /// How clusters are split.
    pub mode: SplitMode,
    /// Share of the input held out.
    pub fraction: f64,
    /// Split seed.
    pub seed: u64,
}

/// Stages reported to the progress callback, in the order they run (`Ord` follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Base-normalizing the input.
    Prepare,
    /// Aligning clusters and building candidates (done, total).
    Align,
    /// Validating candidates.
    Validate,
    /// Resolving conflicts and checking idempotence.
    Select,
}

/// Result of a learn run.
#[derive(Debug, Clone)]
pub struct LearnOutput {
    /// The rule file.
    pub file: RuleFile,
    /// Candidate learning numbers.
    pub stats: LearnStats,
    /// Candidates before validation.
    pub candidates: usize,
    /// Validation numbers (when validated).
    pub validation: Option<ValidateReport>,
    /// Every candidate with its validation numbers (when validated), for `--explain`.
    pub all_candidates: Vec<Rule>,
}

/// Learn a deployable rule file from clusters.
///
/// ```
/// use dedust_learn::{learn, Cluster, LearnConfig};
/// let mk = |id: &str, u: &[&str]| Cluster { id: id.into(), urls: u.iter().map(|s| s.to_string()).collect() };
/// let clusters: Vec<Cluster> = (0..5)
///     .map(|i| mk(&format!("c{i}"), &[&format!("https://f.org/s.php?t={i}"), &format!("https://f.org/s.php?mode=hybrid&t={i}")]))
///     .collect();
/// let out = learn(&clusters, &LearnConfig { validate: Some(Default::default()), ..Default::default() }, &|_, _, _| {});
/// // `mode=hybrid` is a setting: dropped per value (never `mode=threaded` with it).
/// assert!(out.file.rules.iter().any(|r| r.pattern.starts_with("*://f.org{/path}?mode=hybrid&")));
/// ```
pub fn learn(
    clusters: &[Cluster],
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> LearnOutput {
    let total = clusters.len();
    let parts = cfg.holdout.filter(|_| cfg.validate.is_some()).map(|h| {
        let f = h.fraction.clamp(0.0, 1.0);
        split_clusters(clusters, h.mode, &[1.0 - f, f], h.seed)
    });
    match parts {
        Some(p) => {
            let (cands, stats) =
                learn_candidates(&p[0], &cfg.learn, &|d| progress(Stage::Align, d, total));
            let facts = facts_of(cfg);
            let data = labeled_with(clusters, facts.as_ref(), cfg);
            let parts = Parts {
                clusters: &p,
                facts: facts.as_ref(),
            };
            finish(cands, stats, data, Some(parts), cfg, progress)
        }
        None => {
            progress(Stage::Prepare, 0, total);
            let (prep, stats) = Prepared::new(clusters, &cfg.learn);
            from_prepared(prep, stats, cfg, progress)
        }
    }
}

/// [`learn`] consuming its input, so raw URLs are freed once normalized (lower peak memory).
pub fn learn_owned(
    clusters: Vec<Cluster>,
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> LearnOutput {
    if cfg.holdout.is_some() && cfg.validate.is_some() {
        return learn(&clusters, cfg, progress);
    }
    progress(Stage::Prepare, 0, clusters.len());
    let (prep, stats) = Prepared::from_owned(clusters, &cfg.learn);
    from_prepared(prep, stats, cfg, progress)
}

/// The facts of [`LearnConfig::evidence`] by base-normalized URL, as validation looks them up
/// (`None` without evidence).
fn facts_of(cfg: &LearnConfig) -> Option<HashMap<String, Facts>> {
    cfg.evidence.as_ref().map(|e| e.normalized(&cfg.learn.base))
}

/// [`labeled`] clusters with the facts of their URLs (`facts`: [`facts_of`]).
fn labeled_with(
    clusters: &[Cluster],
    facts: Option<&HashMap<String, Facts>>,
    cfg: &LearnConfig,
) -> LabeledUrls {
    let (mut data, _) = labeled(clusters, &cfg.learn.base);
    if let Some(f) = facts {
        data.attach_facts(f);
        if let Some(c) = &cfg.check {
            data.attach_check(c.clone());
        }
    }
    data
}

/// The held-out split ([`LearnConfig::holdout`]): learning part, validation part, and the
/// facts of the URLs ([`facts_of`]).
#[derive(Clone, Copy)]
struct Parts<'a> {
    clusters: &'a [Vec<Cluster>],
    facts: Option<&'a HashMap<String, Facts>>,
}

fn from_prepared(
    prep: Prepared,
    stats: LearnStats,
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> LearnOutput {
    let total = prep.len();
    let (cands, stats) = candidates_from(&prep, stats, &|d| progress(Stage::Align, d, total));
    // The prepared URLs become the validation data: normalized once.
    let mut data = prep.into_labeled();
    if let Some(f) = facts_of(cfg) {
        data.attach_facts(&f);
        if let Some(c) = &cfg.check {
            data.attach_check(c.clone());
        }
    }
    finish(cands, stats, data, None, cfg, progress)
}

fn finish(
    cands: Vec<Rule>,
    stats: LearnStats,
    data: LabeledUrls,
    parts: Option<Parts<'_>>,
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> LearnOutput {
    let mut out = decide(cands, stats, data, parts, cfg, progress);
    // The sites learning kept apart depend on the Public Suffix List: `merge` pools only files
    // learned with the same one.
    out.file.psl = Some(dedust_core::PSL_VERSION.to_string());
    out
}

fn decide(
    mut cands: Vec<Rule>,
    stats: LearnStats,
    data: LabeledUrls,
    parts: Option<Parts<'_>>,
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> LearnOutput {
    cands.extend(cfg.declared.iter().cloned());
    if let Some(v) = &cfg.validate {
        add_foreign(&mut cands, &cfg.cross_host_candidates);
        if v.priors {
            add_priors(&mut cands);
        }
    }
    let candidates = cands.len();
    let base = BaseSettings {
        keep_fragment: cfg.learn.base.keep_fragment,
        keep_query_order: cfg.learn.base.keep_query_order,
    };
    match cfg.validate {
        Some(v) => {
            progress(Stage::Validate, 0, candidates);
            // Validated on the data itself, the host rules' rewrites are kept for `select`.
            let (st, rewrites, exposure) = match parts {
                Some(p) => {
                    let val = labeled_with(&p.clusters[1], p.facts, cfg);
                    let tr = labeled_with(&p.clusters[0], p.facts, cfg);
                    let st = crate::validate::rule_stats_joint(&mut cands, &val, &tr, &v).0;
                    (st, None, None)
                }
                None => {
                    let (st, w, e) = crate::validate::rule_stats_joint(
                        &mut cands,
                        &data,
                        &Default::default(),
                        &v,
                    );
                    (st, Some(w), Some(e))
                }
            };
            progress(Stage::Validate, candidates, candidates);
            let all_candidates: Vec<Rule> = cands
                .iter()
                .zip(&st)
                .map(|(r, &(s, f))| {
                    let mut r = r.clone();
                    r.support = Some(s);
                    r.fp = Some(f);
                    r.fpr = Some(crate::validate::rounded_fpr(s, f));
                    r
                })
                .collect();
            progress(Stage::Select, 0, candidates);
            // (Without the consensus record: the evidence is numbers to pool, one entry per
            // cross-host candidate, which a hostile crawl makes many; a kept rule has its own.)
            let mut evidence: Vec<Rule> = all_candidates
                .iter()
                .filter(|r| r.is_global())
                .map(|r| Rule {
                    consensus: None,
                    ..r.clone()
                })
                .collect();
            evidence.sort_by(|a, b| a.id.cmp(&b.id));
            let (mut rules, rep) = crate::validate::select_cached(
                cands,
                &st,
                rewrites,
                &data,
                &v,
                cfg.cross_host_decided.as_ref(),
                false,
            );
            // Supporting domains are evidence, kept in `evidence` only.
            for r in &mut rules {
                r.supporting.clear();
            }
            let mut file = RuleFile::new(rules, base, Some(ValidationSettings::from(&v)));
            if !evidence.is_empty() {
                file.exposure = exposure.unwrap_or_else(|| crate::validate::exposure(&data));
            }
            file.evidence = evidence;
            LearnOutput {
                file,
                stats,
                candidates,
                validation: Some(rep),
                all_candidates,
            }
        }
        None => {
            progress(Stage::Select, 0, candidates);
            // Unvalidated, nothing says a cross-host candidate holds on more than one site.
            cands.retain(|r| !r.is_global());
            let (rules, _, _) = finalize(cands, &data);
            LearnOutput {
                file: RuleFile::new(rules, base, None),
                stats,
                candidates,
                validation: None,
                all_candidates: Vec::new(),
            }
        }
    }
}

/// Add cross-host candidates learned elsewhere (another shard's `evidence`) to this input's
/// candidates, unless this input learned them too (same id: its own copy, with its learning
/// counts, stays). A foreign candidate enters with no learning counts of its own here (clusters,
/// URLs, examples, signals) and no validation numbers yet, so when `merge` pools the shards'
/// evidence, each candidate's learning counts are those of the shards that learned it and its
/// validation counts those of every shard.
///
/// # Complexity
/// `O(C + F)` for `C` candidates and `F` foreign ones (hashed ids).
pub fn add_foreign(cands: &mut Vec<Rule>, foreign: &[Rule]) {
    let mut have: std::collections::HashSet<String> = cands.iter().map(|r| r.id.clone()).collect();
    for r in foreign
        .iter()
        .filter(|r| r.is_global() && r.revoked.is_none())
        // Never a move without consent (a file read has none left; one built in memory may).
        .filter(|r| dedust_core::refused(r).is_none())
    {
        if have.insert(r.id.clone()) {
            cands.push(Rule {
                clusters: 0,
                urls: 0,
                examples: Vec::new(),
                signals: Default::default(),
                support: None,
                fp: None,
                fpr: None,
                sites: None,
                except: Vec::new(),
                supporting: Vec::new(),
                attested: Vec::new(),
                learned: None,
                // Learned from no site here (a shard's count, summed by `merge`).
                domains: r.domains.map(|_| 0),
                ..r.clone()
            });
        }
    }
}

/// Add the conventions kept unless refuted ([`dedust_core::__private::judge::PRIORS`]) to the
/// candidates, each unless the input learned it (its own copy, with its learning counts, stays):
/// validation counts their merges on the input like any candidate's, so the data can still
/// refute them, and a prior with no merges at all enters the rule file with support 0.
///
/// ```
/// use dedust_learn::{learn, Cluster, LearnConfig, ValidateOptions};
/// // One site, no `www.` pair in sight: with priors the `www.` convention is still a dedup key.
/// let c = Cluster { id: "a".into(), urls: vec!["https://a.org/x?s=1".into(), "https://a.org/x".into()] };
/// let www = |priors| {
///     let v = ValidateOptions { priors, ..Default::default() };
///     let out = learn(&[c.clone()], &LearnConfig { validate: Some(v), ..Default::default() }, &|_, _, _| {});
///     out.file.rules.iter().any(|r| r.pattern == "*://www.*{/path}{?query}")
/// };
/// assert!(www(true) && !www(false));
/// ```
///
/// # Complexity
/// `O(C)` for `C` candidates.
pub fn add_priors(cands: &mut Vec<Rule>) {
    let priors = dedust_core::__private::judge::PRIORS
        .into_iter()
        .map(crate::rules::convention_rule)
        .chain(std::iter::once(
            dedust_core::__private::judge::tracking_prior(),
        ));
    for r in priors {
        if !cands.iter().any(|x| x.id == r.id) {
            cands.push(r);
        }
    }
}

/// One held-out experiment: learn on one part, compare on the other.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// The learned rule file.
    pub file: RuleFile,
    /// Metrics on the held-out part.
    pub comparison: crate::metrics::Comparison,
}

/// Learn on `train` and compare on `test`.
pub fn experiment(train: &[Cluster], test: &[Cluster], cfg: &LearnConfig) -> Experiment {
    experiment_with(train, test, cfg, &|_, _, _| {})
}

/// [`experiment`], reporting the learning's progress as [`learn`] does.
pub fn experiment_with(
    train: &[Cluster],
    test: &[Cluster],
    cfg: &LearnConfig,
    progress: &(dyn Fn(Stage, usize, usize) + Sync),
) -> Experiment {
    let out = learn(train, cfg, progress);
    let comparison =
        crate::metrics::compare_seen(test, out.file.rules.clone(), &cfg.learn.base, train);
    Experiment {
        file: out.file,
        comparison,
    }
}

/// K-fold cross-validation: fold k is tested with rules learned on the other folds.
///
/// ```
/// use dedust_learn::{cross_validate, synth, LearnConfig, SplitMode};
/// let s = synth::synth(&synth::SynthOptions { sites: 2, pages: 40, seed: 1, host_offset: 0 });
/// let clusters = dedust_learn::input::rows_to_clusters(&s.rows);
/// let folds = cross_validate(&clusters, &LearnConfig { validate: Some(Default::default()), ..Default::default() }, SplitMode::Url, 3, 1);
/// assert_eq!(folds.len(), 3);
/// ```
pub fn cross_validate(
    clusters: &[Cluster],
    cfg: &LearnConfig,
    mode: SplitMode,
    folds: usize,
    seed: u64,
) -> Vec<Experiment> {
    cross_validate_with(clusters, cfg, mode, folds, seed, &|_, _, _, _| {})
}

/// [`cross_validate`], reporting each fold's learning as [`learn`] does, with the fold's index
/// first: `progress(fold, stage, done, total)`.
pub fn cross_validate_with(
    clusters: &[Cluster],
    cfg: &LearnConfig,
    mode: SplitMode,
    folds: usize,
    seed: u64,
    progress: &(dyn Fn(usize, Stage, usize, usize) + Sync),
) -> Vec<Experiment> {
    let k = folds.max(2);
    let parts = split_clusters(clusters, mode, &vec![1.0 / k as f64; k], seed);
    (0..k)
        .map(|i| {
            let train: Vec<Cluster> = parts
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .flat_map(|(_, p)| p.iter().cloned())
                .collect();
            experiment_with(&train, &parts[i], cfg, &|s, d, t| progress(i, s, d, t))
        })
        .collect()
}
