//! `dedust verify`: per rule, the page pairs it merges that content confirms or refutes
//! (TSV on stdout); `--prune -o R2` writes the rules that survive, `--revoke -o R2` every rule
//! with the refuted ones marked revoked (when, by which pages, how many pairs).

use crate::cli::VerifyArgs;
use anyhow::anyhow;

pub fn run(a: VerifyArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.push(&a.pages);
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    if a.revoke && a.rules.len() != 1 {
        eprintln!("verify: --revoke takes one rule file (-r); it writes that file with the refuted rules marked");
        return Ok(2);
    }
    let opts = a.sim.options().map_err(|e| anyhow!(e))?;
    let (rules, revoked, base_settings) = super::load_rule_sets(&a.rules)?;
    let bars = super::Bars::new();
    bars.read("reading", &a.pages);
    let pages = super::read_pages(&a.pages)?;
    let base = a.base.options();
    let checks = dedust::verify::verify_rules_with(&rules, &pages, &base, &opts, &|s, n| {
        bars.step(s.name(), n)
    });
    bars.finish();
    let mut report =
        String::from("id\tpairs\tconfirmed\trefuted\trefuted_share\tpattern\ttarget\n");
    if a.json {
        let rows: Vec<serde_json::Value> = rules
            .iter()
            .zip(&checks)
            .map(|(r, c)| {
                serde_json::json!({
                    "id": r.id, "pattern": r.pattern, "target": r.target, "pairs": c.pairs,
                    "confirmed": c.confirmed, "refuted": c.refuted,
                    "refuted_share": c.refuted_share(),
                })
            })
            .collect();
        report = serde_json::to_string_pretty(&rows)? + "\n";
    }
    for (r, c) in rules.iter().zip(&checks).filter(|_| !a.json) {
        report.push_str(&format!(
            "{}\t{}\t{}\t{}\t{:.3}\t{}\t{}\n",
            r.id,
            c.pairs,
            c.confirmed,
            c.refuted,
            c.refuted_share(),
            r.pattern,
            r.target
        ));
    }
    let with_pairs = checks.iter().filter(|c| c.pairs > 0).count();
    let (conf, refu): (usize, usize) = checks
        .iter()
        .fold((0, 0), |(x, y), c| (x + c.confirmed, y + c.refuted));
    if a.prune {
        let kept: Vec<dedust::Rule> = rules
            .iter()
            .zip(&checks)
            .filter(|(_, c)| c.refuted_share() <= a.max_refuted)
            .map(|(r, _)| r.clone())
            .collect();
        let removed = rules.len() - kept.len();
        let mut kept = kept;
        kept.extend(revoked);
        let file = dedust::RuleFile::new(kept, base_settings, None);
        super::write_out(a.output.as_deref(), &file.to_json())?;
        super::write_out(None, &report)?;
        info!(
            "verify: pruned {removed} rules with a refuted share over {}",
            a.max_refuted
        );
    } else if a.revoke {
        let n = revoke(&a, &rules, &checks)?;
        super::write_out(None, &report)?;
        info!(
            "verify: revoked {n} rules with a refuted share over {}",
            a.max_refuted
        );
    } else {
        super::write_out(a.output.as_deref(), &report)?;
    }
    info!(
        "verify: {} pages, {} rules ({} merge crawled pages): {} pairs confirmed, {} refuted ({}, t={})",
        pages.len(),
        rules.len(),
        with_pairs,
        conf,
        refu,
        opts.measure,
        opts.threshold
    );
    Ok(0)
}

/// Write the rule file's rules to `-o`, those `checks` refute marked revoked; rules revoked
/// before stay as they were; the file's other fields (thresholds, evidence) are kept. Returns
/// how many rules this run revoked.
fn revoke(
    a: &VerifyArgs,
    live: &[dedust::Rule],
    checks: &[dedust::verify::RuleCheck],
) -> anyhow::Result<usize> {
    use dedust::verify::{revocation, Revocation};
    let at = super::stamp_time()?;
    let decided: std::collections::HashMap<&str, (Revocation, &dedust::verify::RuleCheck)> = live
        .iter()
        .zip(checks)
        .map(|(r, c)| (r.id.as_str(), (revocation(r, c, a.max_refuted), c)))
        .filter(|(_, (d, _))| *d != Revocation::Keep)
        .collect();
    let mut files = a
        .rules
        .iter()
        .map(|p| dedust::RuleFile::read(p))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut n, mut excepted) = (0, 0);
    for r in files.iter_mut().flat_map(|f| f.rules.iter_mut()) {
        let Some((d, c)) = decided.get(r.id.as_str()).filter(|_| r.revoked.is_none()) else {
            continue;
        };
        match d {
            Revocation::Revoke => {
                r.revoked = Some(dedust::rules::Revoked {
                    at: at.clone(),
                    by: a.pages.clone(),
                    pairs: c.pairs,
                    refuted: c.refuted,
                });
                n += 1;
            }
            Revocation::Except(domains) => {
                r.except.extend(domains.iter().cloned());
                r.except.sort_unstable();
                r.except.dedup();
                dedust::tier::prune_attested(r);
                excepted += domains.len();
                eprintln!(
                    "verify: cross-host rule {} ({}) excepted on {} (content refutes it there)",
                    r.id,
                    r.pattern,
                    domains.join(", ")
                );
            }
            Revocation::Keep => {}
        }
    }
    let file = files.remove(0);
    super::write_out(a.output.as_deref(), &file.to_json())?;
    if excepted > 0 {
        info!("verify: {excepted} sites excepted from cross-host rules instead of revoking them");
    }
    Ok(n)
}
