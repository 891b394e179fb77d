//! `dedust verify`: per rule, the page pairs it merges that content confirms or refutes
//! (TSV on stdout); `--prune -o R2` writes the rules that survive.

use crate::cli::VerifyArgs;
use anyhow::anyhow;

pub fn run(a: VerifyArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.push(&a.pages);
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    let opts = a.sim.options().map_err(|e| anyhow!(e))?;
    let (rules, base_settings) = super::load_rule_files(&a.rules)?;
    let pages = super::read_pages(&a.pages)?;
    let base = a.base.options();
    let checks = dedust::verify::verify_rules(&rules, &pages, &base, &opts);
    let mut report =
        String::from("id\tpairs\tconfirmed\trefuted\trefuted_share\tpattern\ttarget\n");
    for (r, c) in rules.iter().zip(&checks) {
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
        let file = dedust::RuleFile::new(kept, base_settings, None);
        super::write_out(a.output.as_deref(), &file.to_json())?;
        super::write_out(None, &report)?;
        eprintln!(
            "verify: pruned {removed} rules with a refuted share over {}",
            a.max_refuted
        );
    } else {
        super::write_out(a.output.as_deref(), &report)?;
    }
    eprintln!(
        "verify: {} pages, {} rules ({} merge crawled pages): {} pairs confirmed, {} refuted ({:?}, t={})",
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
