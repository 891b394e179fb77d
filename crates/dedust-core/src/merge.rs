//! Merge: one rule file from rule files learned on disjoint shards of the hosts.
//!
//! In: [`RuleFile`]s (e.g. one per Spark partition), in any order. Out: one [`RuleFile`] and a
//! [`MergeReport`]. Invariants: the result does not depend on the order of the inputs; when the
//! shards hold whole connected groups of hosts (every cluster, and every host a cluster touches,
//! in one shard), it is byte for byte the file `learn` writes from all the data at once, because
//! learning and validation never look across such groups and the application order
//! ([`crate::judge::order`]: specificity, score, id) is a total order. Rules that appear in
//! several inputs are kept once; two different rules with the same matching side are a conflict:
//! the better one (score, then id, as validation decides) is kept and the other reported.
//!
//! Cross-host rules (scope `*`) are not taken from the inputs' rule lists: their evidence
//! ([`RuleFile::evidence`]: counts per candidate) is added up over the files and each candidate is
//! judged again with the files' thresholds, as `learn` judges it on all data at once (support,
//! fp and URLs add up over disjoint hosts; supporting and refuting domains unite). A candidate is
//! kept only when every input whose URLs it could touch ([`RuleFile::exposure`]) validated it: a
//! shard that never saw the candidate never checked it on its URLs. So merged cross-host rules
//! are those of a single run whose every validating shard agreed (a subset of a single run's when
//! a candidate was learned on some shards only). A file given twice counts once.
//!
//! Revocation ([`Rule::revoked`], written by `verify --revoke`): a rule revoked in any input is
//! written revoked (the latest revocation), replacing its live copies, unless some input's
//! `rules` hold a live copy learned after that revocation ([`Rule::learned`]; newer evidence
//! wins; `evidence` never lifts one). Revocations are decided before conflicts and pooled
//! cross-host decisions, so a revoked rule wins no conflict. Live rules keep their newest
//! provenance; byte for byte equal to one `learn` run means equal but for `learned`.
//!
//! Trust: evidence is pooled only within one job ([`RuleFile::job`]): when some inputs name a
//! job, the job most inputs name (ties: the smallest id) pools, and every other input (another
//! job's, or one naming none) is merged as an imported list is: its rules are kept, its
//! evidence, exposure and unchecked list are ignored (reported in [`MergeReport::foreign`]), so
//! a corrupt or hostile file cannot invent the sites that would make a cross-host rule. Rules
//! that move URLs to another host or path prefix without consent ([`crate::refused`]) are left
//! out (counted in [`MergeReport::refused`]). Files learned with different Public Suffix Lists
//! ([`RuleFile::psl`]) are refused: their sites differ.

use crate::error::{Error, Result};
use crate::model::Rule;
use crate::rulefile::RuleFile;
use std::collections::BTreeMap;

/// What [`merge`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MergeReport {
    /// Rule files read.
    pub files: usize,
    /// Rules read in all.
    pub rules_in: usize,
    /// Identical rules found in more than one file (kept once).
    pub duplicates: usize,
    /// Conflicts: (kept id, dropped id, the matching side both had).
    pub conflicts: Vec<(String, String, String)>,
    /// Rules written revoked: revoked in an input and not learned again after the revocation.
    pub revoked: usize,
    /// Rules and evidence entries left out because they move URLs to another host or path
    /// prefix without that site's consent ([`crate::refused`]; a file [`RuleFile::parse`] read
    /// has none left, it counts them in [`RuleFile::refused`]).
    pub refused: usize,
    /// Inputs of another job than the pooling one (see the module docs), merged as imported
    /// lists: (name, its job id if any, evidence entries ignored).
    pub foreign: Vec<(String, Option<String>, usize)>,
}

/// Whether two rules are the same but for their provenance (two runs learning one rule: when
/// and from what, [`Rule::learned`], and the sample of its family read, [`Rule::consensus`]).
fn same_rule(a: &Rule, b: &Rule) -> bool {
    if a.learned == b.learned && a.consensus == b.consensus {
        return a == b;
    }
    let strip = |r: &Rule| Rule {
        learned: None,
        consensus: None,
        ..r.clone()
    };
    strip(a) == strip(b)
}

/// Merge rule files (see the module docs). Files must share their base settings and validation
/// thresholds; `names` label them in messages.
///
/// ```
/// use dedust_core::{merge, RuleFile};
/// let a = RuleFile::new(vec![], Default::default(), None);
/// let (m, rep) = merge(&[a.clone(), a], &["a.json", "b.json"]).unwrap();
/// assert!(m.rules.is_empty());
/// assert_eq!(rep.files, 2);
/// ```
pub fn merge(files: &[RuleFile], names: &[&str]) -> Result<(RuleFile, MergeReport)> {
    merge_impl(files, names, false)
}

/// One step of a tree of merges (`merge --partial`; the Spark job merges its partitions' files
/// this way on the executors, so the driver reads one file, not one per partition): host rules
/// merged as [`merge`] merges them, cross-host evidence and exposure pooled, the inputs'
/// cross-host rules kept as records of their exceptions — nothing decided. The result is marked
/// [`RuleFile::partial`]; a final [`merge`] of partial files (any grouping of the same inputs)
/// writes the file one [`merge`] of all the inputs writes. Candidates some exposed input did not
/// validate are listed in [`RuleFile::unchecked`], so the final merge does not keep them either.
/// Each input goes into the tree once (a file in two groups counts twice). Refused: inputs
/// holding revoked rules (here and in a final merge of partial files: revocations are decided in
/// one flat merge), and cross-host rules without the cross-host evidence `learn` writes.
///
/// ```
/// use dedust_core::{merge, merge_partial, RuleFile};
/// let a = RuleFile::new(vec![], Default::default(), None);
/// let (p, _) = merge_partial(&[a.clone(), a.clone()], &[]).unwrap();
/// assert!(p.partial);
/// let (m, _) = merge(&[p, a], &[]).unwrap();
/// assert!(!m.partial && m.rules.is_empty());
/// ```
pub fn merge_partial(files: &[RuleFile], names: &[&str]) -> Result<(RuleFile, MergeReport)> {
    merge_impl(files, names, true)
}

fn merge_impl(
    files: &[RuleFile],
    names: &[&str],
    partial: bool,
) -> Result<(RuleFile, MergeReport)> {
    let name = |i: usize| names.get(i).copied().unwrap_or("(input)").to_string();
    let mut psls: Vec<(&str, usize)> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        if let Some(p) = f.psl.as_deref() {
            if let Some(&(q, j)) = psls.iter().find(|(q, _)| *q != p) {
                return Err(Error::Incompatible {
                    path: name(i),
                    message: format!(
                        "learned with Public Suffix List {p}, but {} with {q}: the sites learning kept apart differ; learn every file with one dedust before merging",
                        name(j)
                    ),
                });
            }
            psls.push((p, i));
        }
    }
    let (trusted, refused, foreign) = trusted_inputs(files, names);
    let files: &[RuleFile] = trusted.as_deref().unwrap_or(files);
    let Some(first) = files.first() else {
        return Err(Error::EmptyInput {
            path: "(no rule files)".into(),
            skipped: 0,
            first: Vec::new(),
        });
    };
    for (i, f) in files.iter().enumerate().skip(1) {
        if f.base != first.base || f.validation != first.validation {
            return Err(Error::Incompatible {
                path: name(i),
                message: format!(
                    "cannot be merged with {}: {}. merge pools evidence judged one way; to apply both files, pass each to normalize or export with its own -r (dedust normalize -r {} -r {} …), or learn them again with the same settings",
                    name(0),
                    settings_difference(f, first, &name(i), &name(0)),
                    name(0),
                    name(i),
                ),
            });
        }
    }
    // Revocations are decided in one flat merge: a partial merge has already resolved its
    // inputs' conflicts and provenance without them.
    if partial || files.iter().any(|f| f.partial) {
        if let Some(i) = files
            .iter()
            .position(|f| f.rules.iter().any(|r| r.revoked.is_some()))
        {
            return Err(Error::RuleFile {
                path: name(i),
                message: "holds revoked rules (verify --revoke): merge it flat with the files the partial merges were made of, not in a tree of partial merges".into(),
            });
        }
    }
    let mut rep = MergeReport {
        files: files.len(),
        refused,
        foreign,
        ..Default::default()
    };
    // A file given twice counts once (its evidence is not added to itself).
    // Only the pooling job's files pool: another job's file takes no part in the evidence, the
    // exposure or the checks (its rules are merged as an imported list's).
    let job = pooling_job(files);
    let mut distinct: Vec<&RuleFile> = Vec::new();
    for f in files {
        if job.is_some() && f.job.as_ref().map(|j| j.id.as_str()) != job {
            continue;
        }
        if !distinct.contains(&f) {
            distinct.push(f);
        }
    }
    let evidence = pool_evidence(&distinct);
    // With pooled evidence, cross-host rules are decided below, not taken from the files; a
    // partial merge keeps them as records of their exceptions for the final one to decide.
    let pooled = first.validation.is_some() && !evidence.is_empty();
    // A partial merge carries cross-host rules as records only where the final merge pools
    // (its evidence holds this group's): without evidence, a flat merge takes one copy of each
    // such rule, which a record of united exceptions would not give.
    if partial && !pooled && first.validation.is_some() {
        if let Some(i) = files
            .iter()
            .position(|f| f.rules.iter().any(|r| r.is_global()))
        {
            return Err(Error::RuleFile {
                path: name(i),
                message: "holds cross-host rules without the cross-host evidence `learn` writes (a `validate -o` file?): merge such files flat, not with --partial".into(),
            });
        }
    }
    let mut shard_except: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut records: BTreeMap<String, Rule> = BTreeMap::new();
    // Every input whose URLs the candidate could touch must have validated it (and, for a
    // partial merge's file, every input of that merge). A file without the `suffix` key (written
    // before suffix conventions, or with no URL ending in a word) counts as exposed to every
    // suffix convention: it must have validated it.
    let checked_ids: Vec<std::collections::HashSet<&str>> = distinct
        .iter()
        .map(|f| {
            f.evidence
                .iter()
                .map(|x| x.id.as_str())
                .filter(|id| {
                    f.unchecked
                        .binary_search_by(|u| u.as_str().cmp(id))
                        .is_err()
                })
                .collect()
        })
        .collect();
    let validated_by_exposed_inputs = |e: &Rule| {
        let key = crate::tier::exposure_key(e);
        distinct.iter().zip(&checked_ids).all(|(f, ids)| {
            let exposed = key.as_ref().is_none_or(|k| match f.exposure.get(k) {
                Some(&n) => n > 0,
                None => k == "suffix",
            });
            !exposed || ids.contains(e.id.as_str())
        })
    };
    // The pooled candidates some exposed input did not validate (ascending ids: `evidence` is
    // pooled by id), found once: the decision below skips them and the file lists them.
    let unchecked: Vec<String> = evidence
        .iter()
        .filter(|e| !validated_by_exposed_inputs(e))
        .map(|e| e.id.clone())
        .collect();
    debug_assert!(unchecked.is_sorted(), "evidence is pooled by id");
    let checked_everywhere = |e: &Rule| unchecked.binary_search(&e.id).is_err();
    // By id: identical rules collapse; the same id with other numbers keeps the better one.
    let mut by_id: BTreeMap<String, Rule> = BTreeMap::new();
    // Revocations are decided first, so a revoked rule takes part in no conflict and no pooled
    // decision. Per id the latest record (ties broken on the whole record: any input order
    // gives the same file). A revocation holds unless a live copy in some input's `rules` was
    // learned after it (`evidence` lists rejected candidates too: it never lifts one).
    let record_key = |r: &Rule| {
        let v = r.revoked.as_ref().expect("a revoked rule");
        let json = serde_json::to_string(r).expect("serializes");
        (v.at.clone(), v.by.clone(), v.refuted, v.pairs, json)
    };
    let mut revoked: BTreeMap<String, Rule> = BTreeMap::new();
    for r in files
        .iter()
        .flat_map(|f| &f.rules)
        .filter(|r| r.revoked.is_some())
    {
        if revoked
            .get(&r.id)
            .is_none_or(|o| record_key(o) < record_key(r))
        {
            revoked.insert(r.id.clone(), r.clone());
        }
    }
    let live_at = |id: &str| -> Option<&str> {
        files
            .iter()
            .flat_map(|f| &f.rules)
            .filter(|r| r.id == id && r.revoked.is_none())
            .filter_map(|r| r.learned.as_ref().map(|l| l.at.as_str()))
            .max()
    };
    revoked.retain(|id, rec| {
        let at = rec.revoked.as_ref().map_or("", |v| v.at.as_str());
        live_at(id).is_none_or(|l| l <= at)
    });
    // Provenance: the newest learning of each id, live rules and evidence alike (equal times by
    // inputs, so the order of the files does not matter).
    let mut learned: BTreeMap<String, crate::model::Learned> = BTreeMap::new();
    for r in files.iter().flat_map(|f| f.rules.iter().chain(&f.evidence)) {
        if let (None, Some(l)) = (&r.revoked, &r.learned) {
            if learned
                .get(&r.id)
                .is_none_or(|o| (&o.at, &o.from) < (&l.at, &l.from))
            {
                learned.insert(r.id.clone(), l.clone());
            }
        }
    }
    // The consensus each id records: the one read from most clusters (then URLs, then text), so
    // that the order of the files and of partial merges does not matter. (Evidence entries
    // carry none: `learn` leaves it out of them.)
    let mut consensus: BTreeMap<String, crate::model::ConsensusRecord> = BTreeMap::new();
    let rank = |c: &crate::model::ConsensusRecord| {
        (c.clusters, c.urls, c.family.clone(), c.columns.clone())
    };
    for r in files.iter().flat_map(|f| f.rules.iter().chain(&f.evidence)) {
        if let Some(c) = &r.consensus {
            if consensus.get(&r.id).is_none_or(|o| rank(o) < rank(c)) {
                consensus.insert(r.id.clone(), c.clone());
            }
        }
    }
    for f in files {
        for r in &f.rules {
            if r.revoked.is_some() || revoked.contains_key(&r.id) {
                rep.rules_in += 1;
                continue;
            }
            if pooled && r.is_global() {
                rep.rules_in += 1;
                shard_except
                    .entry(r.id.clone())
                    .or_default()
                    .extend(r.except.iter().cloned());
                if partial {
                    match records.get(&r.id) {
                        Some(old) if std::ptr::eq(better(old, r).0, old) => {}
                        _ => {
                            records.insert(r.id.clone(), r.clone());
                        }
                    }
                }
                continue;
            }
            rep.rules_in += 1;
            match by_id.get(&r.id) {
                None => {
                    by_id.insert(r.id.clone(), r.clone());
                }
                Some(old) if same_rule(old, r) => rep.duplicates += 1,
                Some(old) => {
                    let (keep, drop) = better(old, r);
                    rep.conflicts
                        .push((keep.id.clone(), drop.id.clone(), drop.pattern.clone()));
                    let keep = keep.clone();
                    by_id.insert(keep.id.clone(), keep);
                }
            }
        }
    }
    // Same matching side, different rewriting: keep the better.
    let mut by_source: BTreeMap<String, Rule> = BTreeMap::new();
    for r in by_id.into_values() {
        let key = serde_json::to_string(&(&r.kind, &r.source, &r.regex, &r.convention))
            .expect("serializes");
        match by_source.remove(&key) {
            None => {
                by_source.insert(key, r);
            }
            Some(old) => {
                let (keep, drop) = better(&old, &r);
                rep.conflicts
                    .push((keep.id.clone(), drop.id.clone(), drop.pattern.clone()));
                by_source.insert(key, keep.clone());
            }
        }
    }
    let mut rules: Vec<Rule> = by_source.into_values().collect();
    if partial {
        // Records of the inputs' cross-host rules: one per id, its exceptions united.
        for (id, mut r) in records {
            if let Some(x) = shard_except.get(&id) {
                r.except.extend(x.iter().cloned());
                r.except.sort_unstable();
                r.except.dedup();
            }
            rules.push(r);
        }
    } else if let Some(v) = first.validation.filter(|_| pooled) {
        // Cross-host rules are decided again on the pooled evidence; exceptions the shards
        // added after validation (hosts whose own rules win) are kept.
        let opts = v.options();
        // The live candidates every exposed shard checked (the others a pooled run cannot
        // decide), each checked once.
        let checked: Vec<&Rule> = evidence
            .iter()
            .filter(|e| !revoked.contains_key(&e.id) && checked_everywhere(e))
            .collect();
        // A family pools only such members, as one run would have.
        let family_sites = crate::judge::family_sites(checked.iter().copied(), &opts);
        for &e in &checked {
            // A template the shards learned from fewer than two sites in all is one a single
            // run would not have proposed (`Rule::domains`).
            let pooled = crate::judge::pooled_sites(e, &family_sites);
            if crate::judge::verdict(e, &opts, None, pooled) == crate::judge::Verdict::Keep
                && e.domains.is_none_or(|d| d >= 2)
            {
                let mut r = e.clone();
                r.supporting.clear();
                r.domains = None;
                if let Some(x) = shard_except.get(&r.id) {
                    r.except.extend(x.iter().cloned());
                    r.except.sort_unstable();
                    r.except.dedup();
                }
                rules.push(r);
            }
        }
        rules = crate::tier::cross_host_after_hosts(rules);
        for r in rules.iter_mut().filter(|r| r.is_global()) {
            crate::tier::prune_attested(r);
        }
    }
    // Each live rule carries its newest provenance; a revocation that holds is written as its
    // record (with the provenance it had).
    for r in &mut rules {
        if let Some(l) = learned.get(&r.id) {
            r.learned = Some(l.clone());
        }
        if let Some(c) = consensus.get(&r.id) {
            r.consensus = Some(c.clone());
        }
    }
    for rec in revoked.into_values() {
        rep.revoked += 1;
        rules.push(rec);
    }
    crate::judge::order(&mut rules);
    let mut out = RuleFile::new(rules, first.base, first.validation);
    out.psl = psls.first().map(|(p, _)| p.to_string());
    out.job = job.map(|id| crate::rulefile::Job {
        id: id.to_string(),
        partition: None,
    });
    out.unchecked = unchecked;
    if partial {
        out.partial = true;
        out.format = crate::rulefile::PARTIAL_FORMAT.to_string();
    }
    out.evidence = evidence;
    for e in &mut out.evidence {
        if let Some(l) = learned.get(&e.id) {
            e.learned = Some(l.clone());
        }
    }
    for f in &distinct {
        for (k, v) in &f.exposure {
            *out.exposure.entry(k.clone()).or_default() += v;
        }
    }
    Ok((out, rep))
}

/// The job whose files pool their evidence: the job id most files name (ties: the smallest),
/// `None` when no file names one (every file pools).
fn pooling_job(files: &[RuleFile]) -> Option<&str> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for j in files.iter().filter_map(|f| f.job.as_ref()) {
        *count.entry(j.id.as_str()).or_default() += 1;
    }
    // `max_by_key` keeps the last maximum: iterate from the largest id so the smallest wins.
    count
        .into_iter()
        .rev()
        .max_by_key(|&(_, n)| n)
        .map(|(id, _)| id)
}

/// The inputs as merge may trust them: moves without consent left out, and the evidence,
/// exposure and unchecked list of files outside the pooling job ([`pooling_job`]) dropped (they
/// are merged as imported lists). `None` when every file is trusted as it is (no copy); with the
/// number of rules left out and the foreign files.
#[allow(clippy::type_complexity)]
fn trusted_inputs(
    files: &[RuleFile],
    names: &[&str],
) -> (
    Option<Vec<RuleFile>>,
    usize,
    Vec<(String, Option<String>, usize)>,
) {
    let job = pooling_job(files);
    let foreign = |f: &RuleFile| job.is_some() && f.job.as_ref().map(|j| j.id.as_str()) != job;
    let moves = |f: &RuleFile| {
        f.rules
            .iter()
            .chain(&f.evidence)
            .any(|r| crate::moves::refused(r).is_some())
    };
    if !files.iter().any(|f| foreign(f) || moves(f)) {
        return (None, 0, Vec::new());
    }
    let (mut refused, mut others) = (0, Vec::new());
    let mut out = files.to_vec();
    for (i, f) in out.iter_mut().enumerate() {
        refused += crate::moves::drop_refused(&mut f.rules);
        refused += crate::moves::drop_refused(&mut f.evidence);
        if foreign(f) {
            let name = names.get(i).copied().unwrap_or("(input)").to_string();
            others.push((name, f.job.as_ref().map(|j| j.id.clone()), f.evidence.len()));
            f.evidence.clear();
            f.exposure.clear();
            f.unchecked.clear();
        }
    }
    (Some(out), refused, others)
}

/// Cross-host evidence of all files added up by rule id: support, fp, clusters and URLs summed
/// (the shards hold disjoint hosts), supporting and refuting (`except`) domains united (a domain
/// refuted anywhere is refuted; `sites` counts the others), the three smallest examples kept.
fn pool_evidence(files: &[&RuleFile]) -> Vec<Rule> {
    let mut by_id: BTreeMap<String, Rule> = BTreeMap::new();
    for e in files.iter().flat_map(|f| &f.evidence) {
        match by_id.get_mut(&e.id) {
            None => {
                by_id.insert(e.id.clone(), e.clone());
            }
            Some(p) => {
                let add =
                    |a: Option<usize>, b: Option<usize>| Some(a.unwrap_or(0) + b.unwrap_or(0));
                p.support = add(p.support, e.support);
                p.fp = add(p.fp, e.fp);
                p.supporting.extend(e.supporting.iter().cloned());
                p.attested.extend(e.attested.iter().cloned());
                p.clusters += e.clusters;
                p.urls += e.urls;
                p.domains = match (p.domains, e.domains) {
                    (None, None) => None,
                    (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
                };
                for (k, n) in &e.signals {
                    *p.signals.entry(k.clone()).or_insert(0) += n;
                }
                p.except.extend(e.except.iter().cloned());
                p.except.sort_unstable();
                p.except.dedup();
                p.examples.extend(e.examples.iter().cloned());
                p.examples.sort();
                p.examples.dedup();
                p.examples.truncate(3);
            }
        }
    }
    by_id
        .into_values()
        .map(|mut r| {
            // A domain split over shards counts once; refuted in any shard, it is refuted.
            r.supporting.sort_unstable();
            r.supporting.dedup();
            r.supporting.retain(|d| r.except.binary_search(d).is_err());
            r.sites = Some(r.supporting.len());
            r.attested.sort_unstable();
            r.attested.dedup();
            crate::tier::prune_attested(&mut r);
            r.fpr = Some(crate::judge::rounded_fpr(
                r.support.unwrap_or(0),
                r.fp.unwrap_or(0),
            ));
            r
        })
        .collect()
}

/// (better, worse) by validation's score, then id, then the whole rule's JSON: a total order,
/// so two files holding different rules under one id merge the same in either order.
fn better<'a>(a: &'a Rule, b: &'a Rule) -> (&'a Rule, &'a Rule) {
    let sa = crate::judge::score(a);
    let sb = crate::judge::score(b);
    let whole = |r: &Rule| serde_json::to_string(r).expect("serializes");
    let a_first = sa > sb || (sa == sb && (a.id < b.id || (a.id == b.id && whole(a) <= whole(b))));
    if a_first {
        (a, b)
    } else {
        (b, a)
    }
}

/// In words, how the settings of rule files `a` and `b` (named `an`, `bn`) differ: the base
/// layer's options, whether each was validated, and each threshold that differs.
///
/// ```
/// use dedust_core::{BaseSettings, RuleFile, ValidationSettings};
/// let v = ValidationSettings { min_support: 3, max_fpr: 0.15, min_sites: 2, min_collapse: 10,
///     family_weight: 0.0, fpr_bound: false, priors: false };
/// let a = RuleFile::new(vec![], BaseSettings::default(), Some(v.clone()));
/// let b = RuleFile::new(vec![], BaseSettings { keep_fragment: true, ..Default::default() }, None);
/// let d = dedust_core::__private::merge::settings_difference(&a, &b, "a.json", "b.json");
/// assert!(d.contains("b.json keeps URL fragments, a.json drops them"), "{d}");
/// assert!(d.contains("b.json was not validated"), "{d}");
/// ```
pub fn settings_difference(a: &RuleFile, b: &RuleFile, an: &str, bn: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let order = |keep: bool| if keep { "keeps" } else { "sorts" };
    if a.base.keep_fragment != b.base.keep_fragment {
        let (k, d) = if a.base.keep_fragment {
            (an, bn)
        } else {
            (bn, an)
        };
        out.push(format!("{k} keeps URL fragments, {d} drops them"));
    }
    if a.base.keep_query_order != b.base.keep_query_order {
        out.push(format!(
            "{an} {} the query order, {bn} {} it",
            order(a.base.keep_query_order),
            order(b.base.keep_query_order)
        ));
    }
    match (&a.validation, &b.validation) {
        (x, y) if x.is_some() != y.is_some() => {
            let (no, yes) = if x.is_none() { (an, bn) } else { (bn, an) };
            out.push(format!(
                "{no} was not validated (an imported list or learn --no-validate), {yes} was"
            ));
        }
        (Some(x), Some(y)) => {
            let mut pairs: Vec<(&str, String, String)> = vec![
                (
                    "--min-support",
                    x.min_support.to_string(),
                    y.min_support.to_string(),
                ),
                ("--max-fpr", x.max_fpr.to_string(), y.max_fpr.to_string()),
                (
                    "--min-sites",
                    x.min_sites.to_string(),
                    y.min_sites.to_string(),
                ),
                (
                    "--min-collapse",
                    x.min_collapse.to_string(),
                    y.min_collapse.to_string(),
                ),
                (
                    "--family-weight",
                    x.family_weight.to_string(),
                    y.family_weight.to_string(),
                ),
                (
                    "--fpr-bound",
                    x.fpr_bound.to_string(),
                    y.fpr_bound.to_string(),
                ),
                ("--priors", x.priors.to_string(), y.priors.to_string()),
            ];
            pairs.retain(|(_, p, q)| p != q);
            for (flag, p, q) in pairs {
                out.push(format!("{flag} {p} in {an}, {q} in {bn}"));
            }
        }
        _ => {}
    }
    if out.is_empty() {
        out.push("their settings differ".into());
    }
    out.join("; ")
}
