//! `dedust evaluate`: reduction, lost and pairwise precision/recall of no normalization, the
//! base layer and learned rules, on ground-truth clusters.

use crate::cli::EvaluateArgs;
use dedust::{Cluster, Comparison, LearnConfig, LearnOptions, Metrics};
use std::fmt::Write;

pub fn run(a: EvaluateArgs) -> anyhow::Result<i32> {
    let saved: Vec<String> = a
        .save
        .iter()
        .flat_map(|d| {
            ["rules.json", "train.tsv", "test.tsv"].map(|f| {
                std::path::Path::new(d)
                    .join(f)
                    .to_string_lossy()
                    .into_owned()
            })
        })
        .collect();
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.push(&a.truth);
    super::refuse_overwrite(
        &saved.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>(),
        &inputs,
    )?;
    let (clusters, evidence) = super::read_clusters(&a.truth, a.truth_format.format)?;
    let base = a.base.options();
    let cfg = LearnConfig {
        learn: LearnOptions {
            base,
            allow_cross_site: a.sites.allow_cross_site,
            boilerplate_sites: a.sites.boilerplate_sites,
            ..Default::default()
        },
        validate: Some(a.validate.options()),
        holdout: a.validate.holdout(),
        // Per URL: the training URLs' facts are in it, whatever the split.
        evidence,
        ..Default::default()
    };
    let mut rules_text = String::new();
    let (what, nrules, cmp, folds) = if !a.rules.is_empty() {
        let rules = super::load_rules(&a.rules)?;
        let n = rules.len();
        let c = dedust::compare(&clusters, rules, &base);
        (
            "rules given, tested on all truth URLs".to_string(),
            n,
            c,
            vec![],
        )
    } else if let Some(k) = a.folds {
        if k > clusters.len() {
            anyhow::bail!(
                "--folds {k}: the input holds {} clusters; each fold needs some to test on",
                clusters.len()
            );
        }
        let bars = super::Bars::new();
        let ex = dedust::cross_validate_with(&clusters, &cfg, a.split, k, a.seed, &|i, s, d, t| {
            bars.at(
                (i, s as usize),
                &format!("fold {}/{k} {}", i + 1, super::learn::stage_name(s)),
                d,
                t,
            )
        });
        bars.finish();
        let folds: Vec<Comparison> = ex.iter().map(|e| e.comparison.clone()).collect();
        let mean = |f: &dyn Fn(&Comparison) -> Metrics| {
            dedust::mean(&folds.iter().map(f).collect::<Vec<_>>())
        };
        let c = Comparison {
            none: mean(&|c| c.none),
            base: mean(&|c| c.base),
            rules: mean(&|c| c.rules),
            worst_host: folds
                .iter()
                .filter_map(|c| c.worst_host.clone())
                .max_by(|a, b| a.lost.total_cmp(&b.lost)),
            rewritten: folds.iter().map(|c| c.rewritten).sum(),
            unobserved: folds.iter().map(|c| c.unobserved).sum(),
            unjudged: folds.iter().map(|c| c.unjudged).sum(),
        };
        let n = ex.iter().map(|e| e.file.rules.len()).sum::<usize>() / ex.len().max(1);
        let what = format!(
            "{k}-fold cross-validation ({} split, seed {}), mean of folds",
            a.split, a.seed
        );
        (what, n, c, folds)
    } else {
        let f = a.test_fraction.clamp(0.0, 1.0);
        let parts = dedust::split_clusters(&clusters, a.split, &[1.0 - f, f], a.seed);
        let bars = super::Bars::new();
        let ex = dedust::experiment_with(&parts[0], &parts[1], &cfg, &|s, d, t| {
            bars.at((0, s as usize), super::learn::stage_name(s), d, t)
        });
        bars.finish();
        if let Some(dir) = &a.save {
            save(dir, &ex.file, &parts)?;
        }
        let what = format!(
            "learned on {:.0}% ({} split, seed {}), tested on the other {:.0}%",
            (1.0 - f) * 100.0,
            a.split,
            a.seed,
            f * 100.0
        );
        if a.show_rules > 0 && !a.json {
            rules_text = rules_text_of(&ex.file.rules, a.show_rules);
        }
        (what, ex.file.rules.len(), ex.comparison, vec![])
    };
    let rows = [("none", cmp.none), ("base", cmp.base), ("rules", cmp.rules)];
    let (lo, hi) = cmp.lost_interval();
    // Printed whole at the end: a full or closed stdout is an error message, not a panic.
    let mut out = rules_text;
    if a.json {
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|(name, m)| {
                let mut v = serde_json::to_value(m).expect("metrics serialize");
                v["method"] = serde_json::Value::from(*name);
                v
            })
            .collect();
        let v = serde_json::json!({ "setup": what, "rules": nrules, "rows": rows, "worst_host": cmp.worst_host, "rewritten": cmp.rewritten, "unobserved": cmp.unobserved, "unjudged": cmp.unjudged, "lost_interval": [lo, hi], "folds": folds });
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(out, "# {what}; {nrules} rules")?;
        writeln!(
            out,
            "{:<10} {:>6} {:>8} {:>8} {:>10} {:>8} {:>10} {:>8}",
            "method", "urls", "clusters", "buckets", "reduction", "lost", "precision", "recall"
        )?;
        for (name, m) in rows {
            let [u, c, b, red, lost, prec, rec] = m.cells();
            writeln!(
                out,
                "{name:<10} {u:>6} {c:>8} {b:>8} {red:>10} {lost:>8} {prec:>10} {rec:>8}"
            )?;
        }
        writeln!(
            out,
            "# lost with rules: [{lo:.4}, {hi:.4}]: judged on the test half, and with the {} rewritten URLs whose target it does not hold (not judged)",
            cmp.unjudged
        )?;
        match &cmp.worst_host {
            Some(w) if w.lost_urls > 0 => writeln!(
                out,
                "# worst host with rules: {} loses {:.4} ({} of {} URLs)",
                w.host, w.lost, w.lost_urls, w.urls
            )?,
            Some(_) => writeln!(out, "# worst host with rules: no host loses content")?,
            None => {}
        }
        if cmp.rewritten > 0 {
            writeln!(
                out,
                "# rewritten by the rules: {} URLs; {} of them ({:.3}) to a form never observed in the data (a dedup key, not a URL to fetch)",
                cmp.rewritten,
                cmp.unobserved,
                cmp.unobserved as f64 / cmp.rewritten as f64
            )?;
        }
    }
    super::write_out(None, &out)?;
    Ok(0)
}

/// The first `n` rules in application order, as text.
fn rules_text_of(rules: &[dedust::Rule], n: usize) -> String {
    let mut out = format!(
        "# learned rules (first {} of {}, in application order)\n",
        n.min(rules.len()),
        rules.len()
    );
    for r in rules.iter().take(n) {
        out += &format!(
            "  {:<7} support {:>4}  fpr {:.3}  {}\n{:>29}→ {}\n",
            format!("{:?}", r.kind).to_lowercase(),
            r.support.unwrap_or(0),
            r.fpr.unwrap_or(0.0),
            r.pattern,
            "",
            r.target
        );
    }
    out.push('\n');
    out
}

/// Write the learned rules and both parts of the split.
fn save(dir: &str, file: &dedust::RuleFile, parts: &[Vec<Cluster>]) -> anyhow::Result<()> {
    let d = std::path::Path::new(dir);
    super::write_out(d.join("rules.json").to_str(), &file.to_json())?;
    for (name, part) in [("train.tsv", &parts[0]), ("test.tsv", &parts[1])] {
        super::write_out(d.join(name).to_str(), &super::clusters_tsv(part))?;
    }
    Ok(())
}
