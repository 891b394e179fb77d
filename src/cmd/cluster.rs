//! `dedust cluster`: duplicate clusters from page content, written as `cluster<TAB>url`.

use crate::cli::ClusterArgs;
use anyhow::anyhow;

pub fn run(a: ClusterArgs) -> anyhow::Result<i32> {
    super::refuse_overwrite(&[a.output.as_deref()], &[&a.pages])?;
    let opts = a.sim.options().map_err(|e| anyhow!(e))?;
    let t = std::time::Instant::now();
    let bars = super::Bars::new();
    bars.read("reading", &a.pages);
    let (pages, skipped) = super::read_pages_counted(&a.pages)?;
    let read = t.elapsed();
    let feats =
        dedust::cluster::page_features_with(&pages, &dedust::tdw::Weights::default(), &|| {
            bars.step("features", pages.len())
        });
    bars.spin("joining");
    let parsed = t.elapsed();
    let (clusters, stats) = dedust::cluster::clusters_from_features(&pages, &feats, &opts);
    bars.finish();
    let joined = t.elapsed() - parsed;
    super::write_out(a.output.as_deref(), &super::clusters_tsv(&clusters))?;
    let dups = clusters.iter().filter(|c| c.urls.len() > 1).count();
    info!(
        "cluster: {} pages → {} clusters ({} with duplicates); {} t={}: {} pairs verified of {}, {} similar; read {:.2}s, features {:.2}s, join {:.3}s",
        pages.len(),
        clusters.len(),
        dups,
        opts.measure,
        opts.threshold,
        stats.verified,
        pages.len() * pages.len().saturating_sub(1) / 2,
        stats.found,
        read.as_secs_f64(),
        (parsed - read).as_secs_f64(),
        joined.as_secs_f64()
    );
    Ok(if a.strict && skipped > 0 { 3 } else { 0 })
}
