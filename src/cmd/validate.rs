//! `dedust validate`: support and fpr of every rule on labelled URLs, and what the data says of
//! each (untested, supported, refuted); the kept, ordered, conflict-free, idempotent set is
//! written out (with `--keep-untested`, every rule the data does not refute).

use crate::cli::ValidateArgs;

pub fn run(a: ValidateArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.push(&a.truth);
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    if a.json && a.output.as_deref() == Some("-") {
        eprintln!("dedust: error: --json prints the report on stdout: write the rules to a file (-o FILE)");
        return Ok(2);
    }
    let (mut rules, revoked, _) = super::load_rule_sets(&a.rules)?;
    let (clusters, evidence) = super::read_clusters(&a.truth, a.truth_format.format)?;
    let base = a.base.options();
    let (mut data, bad) = dedust::labeled(&clusters, &base);
    if let Some(e) = &evidence {
        data.attach_evidence(e, &base);
    }
    // Cross-host rules are judged again here: their sites and exceptions come from this data.
    for r in rules.iter_mut().filter(|r| r.is_global()) {
        r.except.clear();
    }
    let opts = a.validate.options();
    // Judged as `learn` judges: cross-host drops and host conventions together.
    let stats =
        dedust::validate::rule_stats_together(&mut rules, &data, &Default::default(), &opts);
    let mut rows = Vec::new();
    if !a.json {
        info!("support    fp    fpr  evidence   id  pattern");
    }
    for (r, (s, f)) in rules.iter().zip(&stats) {
        let fpr = if *s == 0 { 0.0 } else { *f as f64 / *s as f64 };
        let judged = dedust::Rule {
            support: Some(*s),
            fp: Some(*f),
            ..r.clone()
        };
        let ev = dedust::evidence_of(&judged, &opts).name();
        if !a.json {
            info!(
                "{:>7} {:>5} {:>6.3}  {:<9}  {}  {}",
                s, f, fpr, ev, r.id, r.pattern
            );
        }
        rows.push((r.id.clone(), r.pattern.clone(), *s, *f, fpr, ev));
    }
    let (mut kept, rep) = match a.keep_untested {
        true => dedust::select_unrefuted(rules, &stats, &data, &opts),
        false => dedust::select(rules, &stats, &data, &opts),
    };
    kept.extend(revoked);
    let file = dedust::RuleFile::new(
        kept,
        dedust::BaseSettings {
            keep_fragment: base.keep_fragment,
            keep_query_order: base.keep_query_order,
        },
        Some(dedust::ValidationSettings::from(&opts)),
    );
    super::write_out(a.output.as_deref(), &file.to_json())?;
    if a.json {
        let kept: std::collections::HashSet<&str> =
            file.rules.iter().map(|r| r.id.as_str()).collect();
        let v = serde_json::json!({
            "urls": data.len(),
            "rejected_by_base": bad,
            "rules": rows.iter().map(|(id, pattern, s, f, fpr, ev)| serde_json::json!({
                "id": id, "pattern": pattern, "support": s, "fp": f, "fpr": fpr,
                "evidence": ev, "kept": kept.contains(id.as_str()),
            })).collect::<Vec<_>>(),
            "candidates": rep.candidates,
            "kept": rep.kept,
            "keep_untested": a.keep_untested,
            "evidence": {
                "untested": rep.untested,
                "supported": rep.supported,
                "refuted": rep.refuted,
            },
            "rejected": {
                "low_support": rep.low_support,
                "high_fpr": rep.high_fpr,
                "conflicts": rep.conflicts,
                "not_idempotent": rep.not_idempotent,
                "redundant": rep.redundant,
            },
        });
        super::write_out(None, &(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    info!(
        "validate: {} URLs ({} rejected by the base layer); {} rules: {} untested, {} supported, {} refuted",
        data.len(),
        bad,
        rep.candidates,
        rep.untested,
        rep.supported,
        rep.refuted,
    );
    info!(
        "validate: {} kept{} (rejected: {} low support, {} high fpr, {} conflicts, {} non-idempotent)",
        rep.kept,
        match a.keep_untested {
            true => ", every rule not refuted",
            false => "",
        },
        rep.low_support,
        rep.high_fpr,
        rep.conflicts,
        rep.not_idempotent
    );
    if !a.keep_untested && rep.kept == 0 && rep.untested > 0 {
        info!(
            "validate: the data tests {} of {} rules; --keep-untested keeps what it does not refute",
            rep.candidates - rep.untested,
            rep.candidates
        );
    }
    Ok(0)
}
