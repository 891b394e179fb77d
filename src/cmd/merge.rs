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
    for (f, p) in files.iter().zip(&names) {
        super::warn_refused(p, f);
    }
    let (merged, rep) = if a.partial {
        dedust::merge_partial(&files, &names)?
    } else {
        dedust::merge(&files, &names)?
    };
    super::write_out(a.output.as_deref(), &merged.to_json())?;
    if rep.refused > 0 {
        eprintln!(
            "dedust: warning: {}",
            dedust::moves::dropped_message("merge", rep.refused)
        );
    }
    for (file, job, evidence) in &rep.foreign {
        let pooling = merged.job.as_ref().map_or("", |j| j.id.as_str());
        eprintln!(
            "dedust: note: {file} is {} while the pooled files are of job {pooling}: its {evidence} cross-host evidence entries were ignored (its rules are merged as an imported list's)",
            match job {
                Some(j) => format!("of job {j}"),
                None => "of no job (learned without --job-id)".to_string(),
            }
        );
    }
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
