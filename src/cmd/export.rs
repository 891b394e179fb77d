//! `dedust export`: rules in a crawler's format; skipped rules and settings to make on stderr.

use crate::cli::ExportArgs;

pub fn run(a: ExportArgs) -> anyhow::Result<i32> {
    let (rules, base) = super::load_rule_files(&a.rules)?;
    let opts = dedust::ExportOptions { passes: a.passes };
    let e = dedust::export(&rules, &base, a.format, &opts);
    super::write_out(a.output.as_deref(), &e.text)?;
    if let Some(p) = &a.emitted {
        let f = dedust::RuleFile::new(e.rules.clone(), base, None);
        super::write_out(Some(p), &f.to_json())?;
    }
    for s in &e.skipped {
        eprintln!(
            "dedust: warning: skipped {} ({}): {}",
            s.id, s.pattern, s.reason
        );
    }
    for n in &e.notes {
        eprintln!("dedust: note: {n}");
    }
    eprintln!(
        "export: {} of {} rules exported, {} skipped",
        e.rules.len(),
        rules.len(),
        e.skipped.len()
    );
    Ok(0)
}
