//! `dedust report`: learn on one part of the truth file with a sweep of `--max-fpr`, test on the
//! other part, and write a self-contained HTML report.

use crate::cli::ReportArgs;
use dedust::report::{render, ReportData};
use dedust::{LearnConfig, LearnOptions, ValidateOptions};

/// Thresholds of the trade-off curve.
const SWEEP: &[f64] = &[0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0];

pub fn run(a: ReportArgs) -> anyhow::Result<i32> {
    let graph_out = a.graph.as_ref().map(|_| a.graph_output.as_str());
    super::refuse_overwrite(&[Some(&a.output), graph_out], &[&a.truth])?;
    let (clusters, evidence) = super::read_clusters(&a.truth, a.truth_format.format)?;
    let base = a.base.options();
    let f = a.test_fraction.clamp(0.0, 1.0);
    let parts = dedust::split_clusters(&clusters, a.split, &[1.0 - f, f], a.seed);
    let cfg = |max_fpr: f64| LearnConfig {
        learn: LearnOptions {
            base,
            allow_cross_site: a.sites.allow_cross_site,
            boilerplate_sites: a.sites.boilerplate_sites,
            ..Default::default()
        },
        validate: Some(ValidateOptions {
            max_fpr,
            ..a.validate.options()
        }),
        holdout: a.validate.holdout(),
        evidence: evidence.clone(),
        ..Default::default()
    };
    let mut thresholds: Vec<f64> = SWEEP.to_vec();
    if !thresholds
        .iter()
        .any(|t| (t - a.validate.max_fpr).abs() < 1e-12)
    {
        thresholds.push(a.validate.max_fpr);
        thresholds.sort_by(|x, y| x.total_cmp(y));
    }
    let mut sweep = Vec::new();
    let mut chosen = None;
    let bars = super::Bars::new();
    for (i, &t) in thresholds.iter().enumerate() {
        let label = |s| format!("max-fpr {t} {}", super::learn::stage_name(s));
        let ex = dedust::experiment_with(&parts[0], &parts[1], &cfg(t), &|s, d, n| {
            bars.at((i, s as usize), &label(s), d, n)
        });
        sweep.push((t, ex.comparison.rules));
        if (t - a.validate.max_fpr).abs() < 1e-12 {
            chosen = Some(ex);
        }
    }
    bars.finish();
    let chosen = chosen.expect("chosen threshold is in the sweep");
    let graph = match &a.graph {
        Some(want) => {
            let rule = chosen
                .file
                .rules
                .iter()
                .find(|r| r.id == *want)
                .or_else(|| chosen.file.rules.iter().find(|r| r.pattern.contains(want.as_str())))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "report: --graph {want}: no kept rule has this id or pattern text ({} rules kept at max-fpr {})",
                        chosen.file.rules.len(),
                        a.validate.max_fpr
                    )
                })?;
            let family = family_clusters(rule, &parts[0], &base);
            let (svg, nodes) = dedust::family::family_svg(&family);
            super::write_out(Some(&a.graph_output), &svg)?;
            info!(
                "report: wrote {} (rule {}: {} URLs of {} clusters aligned, {nodes} nodes)",
                a.graph_output,
                rule.id,
                family
                    .iter()
                    .map(Vec::len)
                    .sum::<usize>()
                    .min(dedust::family::SVG_MAX_URLS),
                family.len()
            );
            Some((rule.id.clone(), rule.pattern.clone(), svg))
        }
        None => None,
    };
    let data = ReportData {
        title: a.truth.clone(),
        setup: format!(
            "Rules learned on {:.0}% of the URLs ({} split, seed {}), metrics on the other {:.0}%; min-support {}, max-fpr {}.",
            (1.0 - f) * 100.0,
            a.split,
            a.seed,
            f * 100.0,
            a.validate.min_support,
            a.validate.max_fpr
        ) + &format!(" Written by dedust {}: {}", env!("CARGO_PKG_VERSION"), command_line()),
        sweep,
        chosen: a.validate.max_fpr,
        comparison: chosen.comparison,
        rules: chosen.file.rules,
        graph,
    };
    super::write_out(Some(&a.output), &render(&data))?;
    info!("report: wrote {}", a.output);
    Ok(0)
}

/// The training clusters a rule rewrites, for its family's graph: per cluster, the URLs the
/// rule rewrites and what they become (base-normalized), until [`dedust::family::SVG_MAX_URLS`].
fn family_clusters(
    rule: &dedust::Rule,
    clusters: &[dedust::Cluster],
    base: &dedust::BaseOptions,
) -> Vec<Vec<String>> {
    let n = dedust::Normalizer::new(vec![rule.clone()], None);
    let mut out = Vec::new();
    let mut total = 0;
    for c in clusters {
        let mut urls: Vec<String> = Vec::new();
        for u in &c.urls {
            let Ok(b) = dedust::base_normalize(u, base) else {
                continue;
            };
            let to = n.apply_rules(b.clone()).url;
            if to != b {
                for v in [to, b] {
                    if !urls.contains(&v) {
                        urls.push(v);
                    }
                }
            }
        }
        if urls.len() >= 2 {
            total += urls.len();
            out.push(urls);
            if total >= dedust::family::SVG_MAX_URLS {
                break;
            }
        }
    }
    out
}

/// This run's command line, each argument shell-quoted where it needs it (so it can be pasted
/// back into a shell to make the report again).
fn command_line() -> String {
    std::iter::once("dedust".to_string())
        .chain(std::env::args_os().skip(1).map(|a| {
            let a = a.to_string_lossy().into_owned();
            let plain = !a.is_empty()
                && a.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        }))
        .collect::<Vec<_>>()
        .join(" ")
}
