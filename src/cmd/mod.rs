//! One module per subcommand; each turns parsed flags into a library call and prints.

pub mod cluster;
pub mod evaluate;
pub mod export;
pub mod import;
pub mod learn;
pub mod merge;
pub mod normalize;
pub mod report;
pub mod synth;
pub mod validate;
pub mod verify;

/// Write text to `-o FILE` or stdout.
pub fn write_out(path: Option<&str>, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    match path {
        Some(p) if p != "-" => {
            if let Some(dir) = std::path::Path::new(p).parent() {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(dir)
                        .with_context(|| format!("creating {}", dir.display()))?;
                }
            }
            std::fs::write(p, text).with_context(|| format!("writing {p}"))
        }
        _ => {
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes()).context("writing stdout")?;
            o.flush().context("writing stdout")
        }
    }
}

/// Read the clusters of a file, with the skip summary on stderr.
pub fn read_clusters(
    path: &str,
    format: dedust::InputFormat,
) -> anyhow::Result<Vec<dedust::Cluster>> {
    let (clusters, rep) = dedust::read_clusters(path, format)?;
    if rep.skipped > 0 {
        let first: Vec<String> = rep
            .first_bad
            .iter()
            .map(|(l, w)| format!("line {l}: {w}"))
            .collect();
        eprintln!(
            "{path}: skipped {} malformed lines ({})",
            rep.skipped,
            first.join("; ")
        );
    }
    Ok(clusters)
}

/// Load and concatenate rule files (in the order given).
pub fn load_rules(paths: &[String]) -> anyhow::Result<Vec<dedust::Rule>> {
    Ok(load_rule_files(paths)?.0)
}

/// Load and concatenate rule files, with the base settings of the first (a warning when the
/// files were learned with different base settings).
pub fn load_rule_files(
    paths: &[String],
) -> anyhow::Result<(Vec<dedust::Rule>, dedust::BaseSettings)> {
    let mut rules = Vec::new();
    let mut base = None;
    for p in paths {
        let f = dedust::RuleFile::read(p)?;
        match base {
            None => base = Some(f.base),
            Some(b) if b != f.base => {
                eprintln!(
                    "dedust: warning: {p} was learned with other base settings than {}",
                    paths[0]
                )
            }
            Some(_) => {}
        }
        rules.extend(f.rules);
    }
    Ok((rules, base.unwrap_or_default()))
}

/// `cluster<TAB>url` text of clusters.
pub fn clusters_tsv(clusters: &[dedust::Cluster]) -> String {
    let mut tsv = String::from("cluster\turl\n");
    for c in clusters {
        for u in &c.urls {
            tsv.push_str(&c.id);
            tsv.push('\t');
            tsv.push_str(u);
            tsv.push('\n');
        }
    }
    tsv
}

/// Read pages, with the skip summary on stderr.
pub fn read_pages(path: &str) -> anyhow::Result<Vec<dedust::pages::Page>> {
    let (pages, rep) = dedust::pages::read_pages(path)?;
    if rep.skipped > 0 {
        eprintln!(
            "{path}: skipped {} records ({})",
            rep.skipped,
            rep.first_bad.join("; ")
        );
    }
    if pages.is_empty() {
        anyhow::bail!("{path}: no pages with HTML");
    }
    Ok(pages)
}
