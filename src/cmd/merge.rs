//! `dedust merge`: union of rule files learned on disjoint host shards; conflicts on stderr.

use crate::cli::MergeArgs;

pub fn run(a: MergeArgs) -> anyhow::Result<i32> {
    let inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    let files = a
        .rules
        .iter()
        .map(|p| dedust::RuleFile::read_any(p))
        .collect::<Result<Vec<_>, _>>()?;
    let names: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    let (merged, rep) = if a.partial {
        dedust::merge_partial(&files, &names)?
    } else {
        dedust::merge(&files, &names)?
    };
    super::write_out(a.output.as_deref(), &merged.to_json())?;
    for (keep, drop, pattern) in &rep.conflicts {
        eprintln!("dedust: warning: conflict: kept {keep}, dropped {drop} ({pattern})");
    }
    info!(
        "merge: {} files, {} rules in, {} out ({} revoked records; {} duplicates, {} conflicts)",
        rep.files,
        rep.rules_in,
        merged.rules.len(),
        rep.revoked,
        rep.duplicates,
        rep.conflicts.len()
    );
    Ok(0)
}
