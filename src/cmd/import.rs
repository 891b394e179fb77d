//! `dedust import`: a crawler's rule file into a dedust rule file (rules kept in order).

use crate::cli::{ImportArgs, ImportFormat};

pub fn run(a: ImportArgs) -> anyhow::Result<i32> {
    super::refuse_overwrite(&[a.output.as_deref()], &[&a.input])?;
    let text = dedust::rulefile::read_capped(&a.input, dedust::rulefile::MAX_RULE_FILE)?;
    let list = match a.format {
        ImportFormat::Nutch => dedust::lists::ListImport {
            rules: dedust::import_nutch(&text, &a.input)?,
            skipped: Vec::new(),
        },
        ImportFormat::Clearurls => dedust::lists::import_clearurls(&text, &a.input)?,
        ImportFormat::Dud => dedust::lists::import_dud(&text, &a.input)?,
        ImportFormat::Robots => {
            let Some(url) = a.robots_url.as_deref() else {
                eprintln!("import: --from robots needs --robots-url (the robots.txt's own URL: its host is the rules' scope)");
                return Ok(2);
            };
            dedust::lists::import_robots(&text, url)?
        }
    };
    let n = list.rules.len();
    for (entry, why) in &list.skipped {
        eprintln!("import: skipped {entry}: {why}");
    }
    let mut f = dedust::RuleFile::new(list.rules, Default::default(), None);
    f.stamp_learned(&super::stamp_time()?, std::slice::from_ref(&a.input));
    super::write_out(a.output.as_deref(), &f.to_json())?;
    info!(
        "import: {n} rules from {} ({} entries skipped)",
        a.input,
        list.skipped.len()
    );
    Ok(0)
}
