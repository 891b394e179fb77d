//! `dedust import`: a crawler's rule file into a dedust rule file (rules kept in order).

use crate::cli::{ImportArgs, ImportFormat};
use anyhow::Context;

pub fn run(a: ImportArgs) -> anyhow::Result<i32> {
    super::refuse_overwrite(&[a.output.as_deref()], &[&a.input])?;
    let text = std::fs::read_to_string(&a.input).with_context(|| format!("reading {}", a.input))?;
    let rules = match a.format {
        ImportFormat::Nutch => dedust::import_nutch(&text, &a.input)?,
    };
    let n = rules.len();
    let f = dedust::RuleFile::new(rules, Default::default(), None);
    super::write_out(a.output.as_deref(), &f.to_json())?;
    eprintln!("import: {n} rules from {}", a.input);
    Ok(0)
}
