//! `dedust evaluate`: reduction, lost and pairwise precision/recall of no normalization, the
//! base layer and learned rules, on ground-truth clusters.

use crate::cli::EvaluateArgs;
use dedust::{metrics, BaseOptions, Cluster, LearnConfig, LearnOptions, Metrics, Normalizer};
use serde::Serialize;

#[derive(Serialize)]
struct Row {
    method: String,
    #[serde(flatten)]
    m: Metrics,
}

pub fn run(a: EvaluateArgs) -> anyhow::Result<i32> {
    let clusters = super::read_clusters(&a.truth, a.format)?;
    let base = a.base.options();
    let (rules, test, what) = if a.rules.is_empty() {
        let f = a.test_fraction.clamp(0.0, 1.0);
        let parts = dedust::split_clusters(&clusters, a.split, &[1.0 - f, f], a.seed);
        let cfg = LearnConfig {
            learn: LearnOptions {
                base,
                ..Default::default()
            },
            validate: Some(a.validate.options()),
            holdout: a.validate.holdout(),
        };
        let out = dedust::learn(&parts[0], &cfg, &|_, _, _| {});
        if let Some(dir) = &a.save {
            let d = std::path::Path::new(dir);
            super::write_out(d.join("rules.json").to_str(), &out.file.to_json())?;
            for (name, part) in [("train.tsv", &parts[0]), ("test.tsv", &parts[1])] {
                let mut tsv = String::from("cluster\turl\n");
                for c in part {
                    for u in &c.urls {
                        tsv.push_str(&format!("{}\t{u}\n", c.id));
                    }
                }
                super::write_out(d.join(name).to_str(), &tsv)?;
            }
        }
        let what = format!(
            "learned on {:.0}% ({:?} split, seed {}), tested on the other {:.0}%",
            (1.0 - f) * 100.0,
            a.split,
            a.seed,
            f * 100.0
        );
        (out.file.rules, parts[1].clone(), what)
    } else {
        (
            super::load_rules(&a.rules)?,
            clusters.clone(),
            "rules given, tested on all truth URLs".to_string(),
        )
    };
    let nrules = rules.len();
    let rows = evaluate(&test, rules, &base);
    if a.json {
        let v = serde_json::json!({ "setup": what, "rules": nrules, "rows": rows });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("# {what}; {nrules} rules");
        println!(
            "{:<10} {:>6} {:>8} {:>8} {:>10} {:>8} {:>10} {:>8}",
            "method", "urls", "clusters", "buckets", "reduction", "lost", "precision", "recall"
        );
        for r in &rows {
            let m = &r.m;
            println!(
                "{:<10} {:>6} {:>8} {:>8} {:>10.3} {:>8.4} {:>10.3} {:>8.3}",
                r.method, m.urls, m.clusters, m.buckets, m.reduction, m.lost, m.precision, m.recall
            );
        }
    }
    Ok(0)
}

fn evaluate(test: &[Cluster], rules: Vec<dedust::Rule>, base: &BaseOptions) -> Vec<Row> {
    // Raw URLs (malformed ones stay their own bucket in every row).
    let raw: Vec<(String, usize)> = test
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.urls.iter().map(move |u| (u.clone(), i)))
        .collect();
    let norm = Normalizer::new(rules, Some(*base));
    let none = Normalizer::new(vec![], Some(*base));
    let b: Vec<(String, usize)> = raw
        .iter()
        .map(|(u, c)| {
            (
                none.normalize(u)
                    .map(|n| n.url)
                    .unwrap_or_else(|_| u.clone()),
                *c,
            )
        })
        .collect();
    let r: Vec<(String, usize)> = raw
        .iter()
        .map(|(u, c)| {
            (
                norm.normalize(u)
                    .map(|n| n.url)
                    .unwrap_or_else(|_| u.clone()),
                *c,
            )
        })
        .collect();
    vec![
        Row {
            method: "none".into(),
            m: metrics(&raw),
        },
        Row {
            method: "base".into(),
            m: metrics(&b),
        },
        Row {
            method: "rules".into(),
            m: metrics(&r),
        },
    ]
}
