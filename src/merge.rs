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
}

/// Whether two rules are the same but for their provenance (two runs learning one rule).
fn same_rule(a: &Rule, b: &Rule) -> bool {
    if a.learned == b.learned {
        return a == b;
    }
    let strip = |r: &Rule| Rule {
        learned: None,
        ..r.clone()
    };
    strip(a) == strip(b)
}

/// Merge rule files (see the module docs). Files must share their base settings and validation
/// thresholds; `names` label them in messages.
///
/// ```
/// use dedust::{merge, RuleFile};
/// let a = RuleFile::new(vec![], Default::default(), None);
/// let (m, rep) = merge(&[a.clone(), a], &["a.json", "b.json"]).unwrap();
/// assert!(m.rules.is_empty());
/// assert_eq!(rep.files, 2);
/// ```
pub fn merge(files: &[RuleFile], names: &[&str]) -> Result<(RuleFile, MergeReport)> {
    let name = |i: usize| names.get(i).copied().unwrap_or("(input)").to_string();
    let Some(first) = files.first() else {
        return Err(Error::EmptyInput {
            path: "(no rule files)".into(),
            skipped: 0,
        });
    };
    for (i, f) in files.iter().enumerate().skip(1) {
        if f.base != first.base || f.validation != first.validation {
            return Err(Error::RuleFile {
                path: name(i),
                message: format!(
                    "learned with other base settings or thresholds than {} ({:?} {:?} vs {:?} {:?}); merge rule files learned the same way",
                    name(0),
                    f.base,
                    f.validation,
                    first.base,
                    first.validation
                ),
            });
        }
    }
    let mut rep = MergeReport {
        files: files.len(),
        ..Default::default()
    };
    // A file given twice counts once (its evidence is not added to itself).
    let mut distinct: Vec<&RuleFile> = Vec::new();
    for f in files {
        if !distinct.contains(&f) {
            distinct.push(f);
        }
    }
    let evidence = pool_evidence(&distinct);
    // With pooled evidence, cross-host rules are decided below, not taken from the files.
    let pooled = first.validation.is_some() && !evidence.is_empty();
    let mut shard_except: BTreeMap<String, Vec<String>> = BTreeMap::new();
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
    if let Some(v) = first.validation.filter(|_| pooled) {
        // Cross-host rules are decided again on the pooled evidence; exceptions the shards
        // added after validation (hosts whose own rules win) are kept.
        let opts = v.options();
        // Every input whose URLs the candidate could touch must have validated it. A file
        // without the `suffix` key (written before suffix conventions, or with no URL ending in
        // a word) counts as exposed to every suffix convention: it must have validated it.
        let checked_everywhere = |e: &Rule| {
            let key = crate::tier::exposure_key(e);
            distinct.iter().all(|f| {
                let exposed = key.as_ref().is_none_or(|k| match f.exposure.get(k) {
                    Some(&n) => n > 0,
                    None => k == "suffix",
                });
                !exposed || f.evidence.iter().any(|x| x.id == e.id)
            })
        };
        for e in evidence.iter().filter(|e| !revoked.contains_key(&e.id)) {
            if crate::judge::verdict(e, &opts, None) == crate::judge::Verdict::Keep
                && checked_everywhere(e)
            {
                let mut r = e.clone();
                r.supporting.clear();
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
    }
    for rec in revoked.into_values() {
        rep.revoked += 1;
        rules.push(rec);
    }
    crate::judge::order(&mut rules);
    let mut out = RuleFile::new(rules, first.base, first.validation);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(urls: &[(&str, &[&str])]) -> RuleFile {
        let clusters: Vec<crate::rules::Cluster> = urls
            .iter()
            .map(|(id, u)| crate::rules::Cluster {
                id: id.to_string(),
                urls: u.iter().map(|s| s.to_string()).collect(),
            })
            .collect();
        let (rules, _) = crate::rules::learn_candidates(&clusters, &Default::default(), &|_| {});
        RuleFile::new(rules, Default::default(), None)
    }

    #[test]
    fn order_of_inputs_does_not_matter_and_duplicates_collapse() {
        let a = learned(&[
            ("1", &["http://www.a.org/x", "http://a.org/x"]),
            ("2", &["http://a.org/p?s=1&t=2", "http://a.org/p?t=2"]),
        ]);
        let b = learned(&[("3", &["https://b.org/q?ref=1", "https://b.org/q"])]);
        let (ab, rep) = merge(&[a.clone(), b.clone(), a.clone()], &[]).unwrap();
        let (ba, _) = merge(&[b.clone(), a.clone()], &[]).unwrap();
        assert_eq!(ab.to_json(), ba.to_json());
        assert_eq!(rep.duplicates, a.rules.len());
        assert_eq!(ab.rules.len(), a.rules.len() + b.rules.len());
        assert!(rep.conflicts.is_empty());
    }

    /// Revocation: a rule revoked in any input is written revoked (replacing live copies learned
    /// before the revocation, whatever the order of the files), unless an input learned it after;
    /// a live rule keeps its newest provenance, and the same rule from two runs is no conflict.
    #[test]
    fn revocations_hold_unless_the_rule_was_learned_again_after() {
        let base = learned(&[("1", &["http://a.org/p?s=1&t=2", "http://a.org/p?t=2"])]);
        let stamp = |at: &str, from: &str| {
            let mut f = base.clone();
            f.stamp_learned(at, &[from.to_string()]);
            f
        };
        let revoke = |mut f: RuleFile, at: &str| {
            for r in &mut f.rules {
                r.revoked = Some(crate::rules::Revoked {
                    at: at.into(),
                    by: "later.warc.gz".into(),
                    pairs: 5,
                    refuted: 4,
                });
            }
            f
        };
        let (d1, d2, d3) = (
            "2026-01-01T00:00:00Z",
            "2026-02-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        );
        // (inputs, revoked in the output, `learned.at` of every output rule)
        let cases: Vec<(Vec<RuleFile>, bool, &str)> = vec![
            (vec![stamp(d1, "a.tsv"), stamp(d2, "b.tsv")], false, d2),
            (
                vec![stamp(d1, "a.tsv"), revoke(stamp(d1, "a.tsv"), d2)],
                true,
                d1,
            ),
            (
                vec![revoke(stamp(d1, "a.tsv"), d2), stamp(d1, "a.tsv")],
                true,
                d1,
            ),
            (
                vec![revoke(stamp(d1, "a.tsv"), d2), stamp(d3, "c.tsv")],
                false,
                d3,
            ),
            (
                vec![stamp(d3, "c.tsv"), revoke(stamp(d1, "a.tsv"), d2)],
                false,
                d3,
            ),
        ];
        for (i, (files, want_revoked, want_at)) in cases.into_iter().enumerate() {
            let (m, rep) = merge(&files, &[]).unwrap();
            assert_eq!(m.rules.len(), base.rules.len(), "case {i}");
            assert!(rep.conflicts.is_empty(), "case {i}: {:?}", rep.conflicts);
            for r in &m.rules {
                assert_eq!(r.revoked.is_some(), want_revoked, "case {i}: {}", r.pattern);
                assert_eq!(r.learned.as_ref().unwrap().at, want_at, "case {i}");
            }
            assert_eq!(rep.revoked, if want_revoked { m.rules.len() } else { 0 });
            assert_eq!(
                m.live_rules().count(),
                if want_revoked { 0 } else { m.rules.len() }
            );
        }
    }

    /// Review cases: a revocation is decided before conflicts (a revoked rule wins none), and a
    /// later file's `evidence` (every cross-host candidate, kept or not) never lifts it — only a
    /// live copy in a later file's `rules` does.
    #[test]
    fn revoked_rules_win_no_conflict_and_evidence_does_not_lift_them() {
        let (d1, d2, d3) = (
            "2026-01-01T00:00:00Z",
            "2026-02-01T00:00:00Z",
            "2026-03-01T00:00:00Z",
        );
        let revoke = |r: &mut Rule, at: &str| {
            r.revoked = Some(crate::model::Revoked {
                at: at.into(),
                by: "later.warc.gz".into(),
                pairs: 5,
                refuted: 4,
            })
        };
        let file = |rules: Vec<Rule>, evidence: Vec<Rule>, at: &str, from: &str| {
            let mut f = RuleFile::new(
                rules,
                Default::default(),
                Some(crate::rulefile::ValidationSettings::from(
                    &crate::judge::ValidateOptions::default(),
                )),
            );
            f.evidence = evidence;
            let revoked: Vec<Option<crate::model::Revoked>> =
                f.rules.iter().map(|r| r.revoked.clone()).collect();
            f.stamp_learned(at, &[from.to_string()]);
            for (r, v) in f.rules.iter_mut().zip(revoked) {
                r.revoked = v;
            }
            f
        };
        // Two host rules with one matching side: x (better) and y.
        let base = learned(&[("1", &["http://a.org/p?s=1&t=2", "http://a.org/p?t=2"])]);
        let mut x = base.rules[0].clone();
        x.support = Some(10);
        x.fp = Some(0);
        let mut y = x.clone();
        y.id = "r-other-target".into();
        y.target = "http://a.org/other".into();
        y.support = Some(3);
        let mut x_rev = x.clone();
        revoke(&mut x_rev, d2);
        let inputs = [
            file(vec![x.clone()], vec![], d1, "a.tsv"),
            file(vec![x_rev], vec![], d1, "a.tsv"),
            file(vec![y.clone()], vec![], d3, "b.tsv"),
        ];
        for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
            let files: Vec<RuleFile> = order.iter().map(|&i| inputs[i].clone()).collect();
            let (m, rep) = merge(&files, &[]).unwrap();
            let state: Vec<(&str, bool)> = m
                .rules
                .iter()
                .map(|r| (r.id.as_str(), r.revoked.is_some()))
                .collect();
            assert!(
                state.contains(&(y.id.as_str(), false)),
                "{order:?}: {state:?}"
            );
            assert!(
                state.contains(&(x.id.as_str(), true)),
                "{order:?}: {state:?}"
            );
            assert_eq!((m.rules.len(), rep.conflicts.len(), rep.revoked), (2, 0, 1));
        }
        // A cross-host rule judged from pooled evidence.
        let mut g = crate::model::convention_rule(crate::model::Convention::StripWww);
        (g.support, g.fp, g.sites) = (Some(40), Some(0), Some(5));
        g.supporting = vec!["a.org".into(), "b.org".into()];
        let mut g_rev = g.clone();
        revoke(&mut g_rev, d2);
        let mut weak = g.clone();
        (weak.support, weak.sites) = (Some(1), Some(1));
        let revoked_file = file(vec![g_rev], vec![g.clone()], d1, "a.tsv");
        let cases = [
            // A later file whose evidence holds the candidate: still revoked.
            (file(vec![], vec![weak.clone()], d3, "b.tsv"), true),
            // A later file that learned the rule again: lifted.
            (file(vec![g.clone()], vec![g.clone()], d3, "b.tsv"), false),
        ];
        for (later, want) in cases {
            for files in [
                [revoked_file.clone(), later.clone()],
                [later.clone(), revoked_file.clone()],
            ] {
                let (m, _) = merge(&files, &[]).unwrap();
                let copies: Vec<bool> = m
                    .rules
                    .iter()
                    .filter(|r| r.id == g.id)
                    .map(|r| r.revoked.is_some())
                    .collect();
                assert_eq!(copies, vec![want]);
            }
        }
    }

    /// A suffix convention learned on one shard is kept by the pooled merge only when every
    /// shard whose URLs end in a word validated it; a file without the `suffix` exposure key
    /// (written before suffix conventions) counts as exposed.
    #[test]
    fn a_suffix_convention_needs_every_exposed_shard() {
        let cfg = crate::LearnConfig {
            validate: Some(Default::default()),
            ..Default::default()
        };
        let mk = |id: String, u: [String; 2]| crate::rules::Cluster {
            id,
            urls: u.to_vec(),
        };
        let amp: Vec<crate::rules::Cluster> = (0..6)
            .map(|i| {
                let h = ["a.org", "b.org"][i % 2];
                mk(
                    format!("c{i}"),
                    [
                        format!("http://{h}/n/p{i}/"),
                        format!("http://{h}/n/p{i}/amp/"),
                    ],
                )
            })
            .collect();
        // A shard with a `www.` convention only, and no URL ending in a word.
        let other: Vec<crate::rules::Cluster> = (0..3)
            .map(|i| {
                mk(
                    format!("d{i}"),
                    [
                        format!("http://www.c{i}.org/9"),
                        format!("http://c{i}.org/9"),
                    ],
                )
            })
            .collect();
        let a = crate::pipeline::learn(&amp, &cfg, &|_, _, _| {}).file;
        let b = crate::pipeline::learn(&other, &cfg, &|_, _, _| {}).file;
        let has_suffix = |f: &RuleFile| {
            f.rules
                .iter()
                .any(|r| matches!(r.convention, Some(crate::rules::Convention::Suffix(_))))
        };
        assert!(has_suffix(&a), "{:#?}", a.rules);
        assert!(!b.exposure.contains_key("suffix"));
        let (m, _) = merge(&[a.clone(), b], &[]).unwrap();
        assert!(!has_suffix(&m), "kept without the other shard's check");
        let (m, _) = merge(&[a.clone(), a], &[]).unwrap();
        assert!(has_suffix(&m));
    }

    #[test]
    fn conflicts_keep_the_better_rule_and_are_reported() {
        let a = learned(&[("1", &["http://www.a.org/x", "http://a.org/x"])]);
        let mut worse = a.clone();
        for r in &mut worse.rules {
            r.id.push('z');
            r.output.host = Some("elsewhere.org".into());
            r.support = Some(1);
            r.fp = Some(1);
        }
        let (m, rep) = merge(&[worse, a.clone()], &[]).unwrap();
        assert_eq!(m.rules, a.rules);
        assert_eq!(rep.conflicts.len(), a.rules.len());
    }

    /// Issue #10: two files holding different rules under one id (a hand edit, a forged file)
    /// merge to the same file in either order, and the clash is reported.
    #[test]
    fn one_id_with_two_contents_merges_the_same_in_either_order() {
        let a = learned(&[("1", &["http://www.a.org/x", "http://a.org/x"])]);
        let mut b = a.clone();
        for r in &mut b.rules {
            r.output.host = Some("elsewhere.org".into());
        }
        let (ab, rep) = merge(&[a.clone(), b.clone()], &[]).unwrap();
        let (ba, rep2) = merge(&[b, a.clone()], &[]).unwrap();
        assert_eq!(ab.to_json(), ba.to_json());
        assert_eq!(rep.conflicts.len(), a.rules.len());
        assert_eq!(rep2.conflicts, rep.conflicts);
    }

    #[test]
    fn different_settings_are_refused() {
        let a = RuleFile::new(vec![], Default::default(), None);
        let mut b = a.clone();
        b.base.keep_fragment = true;
        let e = merge(&[a, b], &["a.json", "b.json"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("b.json"), "{e}");
        assert!(merge(&[], &[]).is_err());
    }
}
