//! Tests of [`crate::merge`] on rule files that the learner writes (they need the learner, so
//! they live beside the facade, not in the engine).

use crate::merge::*;
use crate::model::Rule;
use crate::rulefile::RuleFile;

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

/// A validated `learn` run (as `dedust learn` writes its file).
fn validated(clusters: &[crate::rules::Cluster]) -> RuleFile {
    let cfg = crate::LearnConfig {
        validate: Some(Default::default()),
        ..Default::default()
    };
    crate::pipeline::learn(clusters, &cfg, &|_, _, _| {}).file
}

/// AMP pages (`…/p1/amp/` ≡ `…/p1/`) on two hosts: a suffix convention.
fn amp_shard(hosts: [&str; 2]) -> Vec<crate::rules::Cluster> {
    (0..6)
        .map(|i| {
            let h = hosts[i % 2];
            crate::rules::Cluster {
                id: format!("{h}{i}"),
                urls: vec![
                    format!("http://{h}/n/p{i}/"),
                    format!("http://{h}/n/p{i}/amp/"),
                ],
            }
        })
        .collect()
}

/// A shard with a `www.` convention only, and no URL ending in a word.
fn www_shard() -> Vec<crate::rules::Cluster> {
    (0..3)
        .map(|i| crate::rules::Cluster {
            id: format!("d{i}"),
            urls: vec![
                format!("http://www.c{i}.org/9"),
                format!("http://c{i}.org/9"),
            ],
        })
        .collect()
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
    let a = validated(&amp_shard(["a.org", "b.org"]));
    let b = validated(&www_shard());
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
        // Another output, one that moves no URL to another site (a scheme).
        r.output.scheme = Some("https".into());
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
        // Another output, one that moves no URL to another site (a scheme).
        r.output.scheme = Some("https".into());
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

/// A cross-host template is proposed from clusters on two sites at least. Learned in shards
/// with `shard: true`, each shard proposes it from its one site with `domains: 1`; `merge`
/// sums the counts (a site lies in one shard) and keeps it when the sum reaches 2, as one run
/// over both shards does, and not from one shard alone.
#[test]
fn a_template_from_one_site_per_shard_is_judged_on_pooled_sites() {
    let mk = |h: &str| -> Vec<crate::rules::Cluster> {
        (0..6)
            .map(|i| crate::rules::Cluster {
                id: format!("{h}{i}"),
                urls: vec![
                    format!("http://{h}/showthread.php?t={i}"),
                    format!("http://{h}/f/{i}"),
                ],
            })
            .collect()
    };
    let cfg = |shard: bool| crate::LearnConfig {
        learn: crate::LearnOptions {
            shard,
            ..Default::default()
        },
        validate: Some(Default::default()),
        ..Default::default()
    };
    let run = |c: &[crate::rules::Cluster], shard| {
        crate::pipeline::learn(c, &cfg(shard), &|_, _, _| {}).file
    };
    let template = |f: &RuleFile| -> Vec<String> {
        f.rules
            .iter()
            .filter(|r| r.is_global() && r.pattern.contains("showthread.php"))
            .map(|r| r.id.clone())
            .collect()
    };
    let (a, b) = (mk("a.org"), mk("b.org"));
    let whole = run(&[a.clone(), b.clone()].concat(), false);
    assert_eq!(template(&whole).len(), 1, "{:#?}", whole.rules);
    // Without `shard`, neither shard proposes it: the merge cannot keep it.
    let (m, _) = merge(&[run(&a, false), run(&b, false)], &[]).unwrap();
    assert!(template(&m).is_empty());
    // With `shard`, both do (one site each); pooled, it is the single run's rule.
    let (sa, sb) = (run(&a, true), run(&b, true));
    assert!(sa.evidence.iter().any(|e| e.domains == Some(1)));
    let (m, _) = merge(&[sa.clone(), sb], &[]).unwrap();
    assert_eq!(template(&m), template(&whole));
    let kept = m
        .rules
        .iter()
        .find(|r| template(&whole).contains(&r.id))
        .unwrap();
    assert_eq!(kept.domains, None, "the count stays in the evidence");
    let want = whole.rules.iter().find(|r| r.id == kept.id).unwrap();
    assert_eq!(
        (kept.support, kept.fp, kept.clusters),
        (want.support, want.fp, want.clusters)
    );
    // One shard's site alone is not enough.
    let (m, _) = merge(&[sa.clone(), sa], &[]).unwrap();
    assert!(template(&m).is_empty());
}

/// A default document seen on one site (`index.html`) is kept when its family (`index.php` on
/// two other sites) holds ([`crate::judge::family_sites`]): `merge` pools the family over the
/// shards' evidence as one run does over the candidates, so shards give the single run's rules.
#[test]
fn a_default_document_family_pools_sites_across_shards() {
    let mk = |h: &str, doc: &str| -> Vec<crate::rules::Cluster> {
        (0..3)
            .map(|i| crate::rules::Cluster {
                id: format!("{h}{i}"),
                urls: vec![
                    format!("http://{h}/d{i}/"),
                    format!("http://{h}/d{i}/{doc}"),
                ],
            })
            .collect()
    };
    let cfg = crate::LearnConfig {
        validate: Some(Default::default()),
        ..Default::default()
    };
    let run = |c: &[crate::rules::Cluster]| crate::pipeline::learn(c, &cfg, &|_, _, _| {}).file;
    let docs = |f: &RuleFile| -> Vec<String> {
        f.rules
            .iter()
            .filter(|r| r.is_global() && r.pattern.contains("/index."))
            .map(|r| r.pattern.clone())
            .collect()
    };
    let (a, c) = (
        [mk("a.org", "index.php"), mk("b.org", "index.php")].concat(),
        mk("c.org", "index.html"),
    );
    let whole = run(&[a.clone(), c.clone()].concat());
    assert_eq!(docs(&whole).len(), 2, "{:#?}", docs(&whole));
    let (m, _) = merge(&[run(&a), run(&c)], &[]).unwrap();
    assert_eq!(docs(&m), docs(&whole));
    // The one-site shard alone keeps nothing.
    assert!(docs(&run(&c)).is_empty());
}

/// Shards of a synthetic web (learned with `--shard`, sites kept whole, as the Spark job cuts
/// them), merged flat and as trees of partial merges of any grouping: byte for byte one file.
#[test]
fn a_tree_of_partial_merges_writes_the_flat_merge() {
    let web = crate::synth::synth(&crate::synth::SynthOptions {
        sites: 16,
        pages: 30,
        seed: 4,
        host_offset: 0,
    });
    let cfg = crate::LearnConfig {
        learn: crate::LearnOptions {
            shard: true,
            ..Default::default()
        },
        validate: Some(Default::default()),
        ..Default::default()
    };
    // Five shards: rows by site (the registrable domain of the cluster's first URL).
    let mut by_cluster: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    for (c, u) in &web.rows {
        by_cluster.entry(c).or_default().push(u.clone());
    }
    let mut shards: Vec<Vec<crate::rules::Cluster>> = vec![Vec::new(); 5];
    for (id, urls) in by_cluster {
        let host = url::Url::parse(&urls[0])
            .unwrap()
            .host_str()
            .unwrap()
            .to_string();
        let site = crate::site::registrable_domain(&host).to_string();
        shards[(crate::hash::fnv(&site) % 5) as usize].push(crate::rules::Cluster {
            id: id.to_string(),
            urls,
        });
    }
    let files: Vec<RuleFile> = shards
        .iter()
        .map(|c| crate::pipeline::learn(c, &cfg, &|_, _, _| {}).file)
        .collect();
    let with_evidence = files.iter().filter(|f| !f.evidence.is_empty()).count();
    assert!(
        with_evidence >= 3,
        "{with_evidence} shards with cross-host evidence"
    );
    let (flat, _) = merge(&files, &[]).unwrap();
    assert!(
        flat.rules.iter().any(|r| r.is_global()),
        "{:#?}",
        flat.rules
    );
    let part = |fs: &[RuleFile]| merge_partial(fs, &[]).unwrap().0;
    let trees = [
        vec![part(&files[..2]), part(&files[2..])],
        vec![part(&files[..1]), part(&files[1..4]), files[4].clone()],
        vec![
            part(&[part(&files[..2]), part(&files[2..3])]),
            part(&files[3..]),
        ],
        vec![part(&files)],
    ];
    for (i, t) in trees.iter().enumerate() {
        assert!(t.iter().any(|f| f.partial));
        let (m, _) = merge(t, &[]).unwrap();
        assert_eq!(m.to_json(), flat.to_json(), "tree {i}");
    }
}

/// A candidate one input of a partial merge was exposed to and did not validate is listed as
/// unchecked, so a later merge does not keep it even where its other inputs all validated it;
/// a partial file is refused by everything but `merge`.
#[test]
fn a_partial_merge_remembers_what_an_exposed_input_did_not_check() {
    let (a, b, a2) = (
        validated(&amp_shard(["a.org", "b.org"])),
        validated(&www_shard()),
        validated(&amp_shard(["e.org", "f.org"])),
    );
    let suffix = |f: &RuleFile| {
        f.rules
            .iter()
            .filter(|r| matches!(r.convention, Some(crate::rules::Convention::Suffix(_))))
            .count()
    };
    assert_eq!(suffix(&merge(&[a.clone(), a2.clone()], &[]).unwrap().0), 1);
    let (flat, _) = merge(&[a.clone(), b.clone(), a2.clone()], &[]).unwrap();
    assert_eq!(suffix(&flat), 0, "the www shard never checked it");
    let (p, _) = merge_partial(&[a, b], &[]).unwrap();
    assert!(!p.unchecked.is_empty());
    let (m, _) = merge(&[p.clone(), a2], &[]).unwrap();
    assert_eq!(suffix(&m), 0);
    assert_eq!(m.to_json(), flat.to_json());
    // Only `merge` reads a partial file.
    let dir = std::env::temp_dir().join(format!("dedust-partial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.json");
    std::fs::write(&path, p.to_json()).unwrap();
    let path = path.to_str().unwrap();
    let e = RuleFile::read(path).unwrap_err().to_string();
    assert!(e.contains("partial merge"), "{e}");
    assert!(RuleFile::read_any(path).unwrap().partial);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a tree of partial merges cannot carry is refused, not merged differently from the flat
/// merge: revoked rules (in a partial merge, and beside partial files in the final one) and
/// cross-host rules without the evidence `learn` writes. A partial file has its own `format`,
/// which `parse` refuses and `parse_any` reads.
#[test]
fn what_a_tree_cannot_carry_is_refused() {
    let cfg = crate::LearnConfig {
        validate: Some(Default::default()),
        ..Default::default()
    };
    let clusters: Vec<crate::rules::Cluster> = (0..4)
        .map(|i| crate::rules::Cluster {
            id: format!("c{i}"),
            urls: vec![
                format!("http://www.s{i}.org/p"),
                format!("http://s{i}.org/p"),
            ],
        })
        .collect();
    let a = crate::pipeline::learn(&clusters, &cfg, &|_, _, _| {}).file;
    assert!(a.rules.iter().any(|r| r.is_global()) && !a.evidence.is_empty());
    let mut revoked = a.clone();
    revoked.rules[0].revoked = Some(crate::model::Revoked {
        at: "2026-01-01T00:00:00Z".into(),
        by: "crawl2".into(),
        pairs: 3,
        refuted: 3,
    });
    assert!(merge_partial(&[a.clone(), revoked.clone()], &[]).is_err());
    let (p, _) = merge_partial(std::slice::from_ref(&a), &[]).unwrap();
    let e = merge(&[p.clone(), revoked.clone()], &["p.json", "r.json"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("r.json") && e.contains("revoked"), "{e}");
    assert!(
        merge(&[a.clone(), revoked], &[]).is_ok(),
        "flat merges take them"
    );
    // A validated file without evidence (as `validate -o` writes).
    let mut bare = a.clone();
    bare.evidence.clear();
    let e = merge_partial(&[bare.clone()], &[]).unwrap_err().to_string();
    assert!(e.contains("evidence"), "{e}");
    assert!(merge(&[bare], &[]).is_ok());
    // The partial format.
    let text = p.to_json();
    assert!(
        text.contains("\"format\": \"dedust-rules-partial\""),
        "{text}"
    );
    assert!(RuleFile::parse(&text, "p.json").is_err());
    let back = RuleFile::parse_any(&text, "p.json").unwrap();
    assert!(back.partial);
    assert_eq!(back.to_json(), text);
}
