//! `dedust export`: rules in a crawler's format; skipped rules and settings to make on stderr.

use crate::cli::ExportArgs;

pub fn run(a: ExportArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.extend(a.with_nutch_defaults.as_deref());
    use dedust::ExportFormat as F;
    if a.filters.is_some() && !matches!(a.format, F::Nutch | F::StormCrawler | F::Heritrix) {
        eprintln!(
            "dedust: error: --filters goes with --to nutch, stormcrawler or heritrix ({} has no URL filter)",
            a.format.name()
        );
        return Ok(2);
    }
    super::refuse_overwrite(
        &[
            a.output.as_deref(),
            a.emitted.as_deref(),
            a.filters.as_deref(),
        ],
        &inputs,
    )?;
    let (mut rules, base) = super::load_rule_files(&a.rules)?;
    if let Some(path) = &a.with_nutch_defaults {
        if a.format != dedust::ExportFormat::Nutch {
            eprintln!("dedust: error: --with-nutch-defaults goes with --to nutch");
            return Ok(2);
        }
        let text = dedust::rulefile::read_capped(path, dedust::rulefile::MAX_RULE_FILE)?;
        let mut first = dedust::import_nutch(&text, path)?;
        info!(
            "export: {} rules of {path} first, as Nutch applies them",
            first.len()
        );
        first.append(&mut rules);
        rules = first;
    }
    let opts = dedust::ExportOptions { passes: a.passes };
    let e = dedust::export(&rules, &base, a.format, &opts);
    for s in &e.skipped {
        eprintln!(
            "dedust: warning: skipped {} ({}): {}",
            s.id, s.pattern, s.reason
        );
    }
    if e.rules.is_empty() && e.filters.is_empty() && !rules.is_empty() && !a.allow_empty {
        let others: Vec<String> = dedust::ExportFormat::ALL
            .iter()
            .filter(|f| **f != a.format)
            .map(|f| {
                let x = dedust::export(&rules, &base, *f, &opts);
                let n = rules.len() - x.skipped.len() - x.filters.len();
                format!("{} {n}", f.name())
            })
            .collect();
        eprintln!(
            "dedust: error: {} can hold none of the {} rules, so nothing was written; rules each format would hold: {} (--allow-empty writes the empty {} file anyway)",
            a.format.name(),
            rules.len(),
            others.join(", "),
            a.format.name()
        );
        return Ok(1);
    }
    super::write_out(a.output.as_deref(), &e.text)?;
    if let Some(p) = &a.emitted {
        let f = dedust::RuleFile::new(e.rules.clone(), base, None);
        super::write_out(Some(p), &f.to_json())?;
    }
    match (&a.filters, &e.filter_text) {
        (Some(p), Some(text)) => {
            super::write_out(Some(p), text)?;
            info!(
                "export: {} many → one rules (login walls, soft 404s) written to {p} as URL filters",
                e.filters.len()
            );
        }
        (Some(p), None) => {
            // Nothing to filter: an empty file says so rather than an old one staying.
            super::write_out(Some(p), "")?;
            info!("export: no many → one rule to write as a URL filter; {p} is empty");
        }
        (None, _) if !e.filters.is_empty() => eprintln!(
            "dedust: warning: {} many → one rules (login walls, soft 404s: varying ids sent to one page) are not fetch rewrites and were left out; --filters FILE writes them as URL filters",
            e.filters.len()
        ),
        _ => {}
    }
    for n in &e.notes {
        info!("dedust: note: {n}");
    }
    // Every rule is exported or skipped; a cross-host rule is exported as one host rule per
    // attested host (what `--emitted` holds).
    let exported = rules.len() - e.skipped.len() - e.filters.len();
    let global = rules.iter().filter(|r| r.is_global()).count()
        - e.skipped
            .iter()
            .filter(|s| rules.iter().any(|r| r.id == s.id && r.is_global()))
            .count();
    info!(
        "export: {exported} of {} rules exported, {} skipped{}{}",
        rules.len(),
        e.skipped.len(),
        if e.filters.is_empty() {
            String::new()
        } else {
            format!(", {} as URL filters", e.filters.len())
        },
        if global > 0 && a.format != dedust::ExportFormat::Json {
            format!(
                "; {global} cross-host rules as fetch rewrites on the hosts that attest them (as {} host rules, the `--emitted` file)",
                e.rules.len()
            )
        } else {
            String::new()
        }
    );
    Ok(0)
}
