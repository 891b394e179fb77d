//! `dedust synth`: write `DIR/clusters.tsv` and `DIR/truth.json`.

use crate::cli::SynthArgs;
use dedust::synth::{synth, to_tsv, SynthOptions};

pub fn run(a: SynthArgs) -> anyhow::Result<i32> {
    let out = synth(&SynthOptions {
        sites: a.sites,
        pages: a.pages,
        seed: a.seed,
        host_offset: a.host_offset,
    });
    let dir = std::path::Path::new(&a.output);
    let clusters = dir.join("clusters.tsv");
    super::write_out(clusters.to_str(), &to_tsv(&out))?;
    let truth = serde_json::json!({
        "command": format!("dedust synth --sites {} --pages {} --seed {} --host-offset {} -o {}", a.sites, a.pages, a.seed, a.host_offset, a.output),
        "sites": out.sites,
    });
    super::write_out(
        dir.join("truth.json").to_str(),
        &(serde_json::to_string_pretty(&truth)? + "\n"),
    )?;
    if a.html {
        use std::io::Write;
        let path = dir.join("pages.jsonl.gz");
        let (f, pending) = super::create_output(&path.to_string_lossy())?;
        let mut gz = flate2::write::GzEncoder::new(f, flate2::Compression::default());
        gz.write_all(dedust::synth::pages_jsonl(&out).as_bytes())
            .and_then(|()| gz.finish().map(drop))
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        pending.commit()?;
    }
    if a.warc {
        use std::io::Write;
        let path = dir.join("crawl.warc.gz");
        let (f, pending) = super::create_output(&path.to_string_lossy())?;
        let mut f = std::io::BufWriter::new(f);
        // One gzip member per record, as crawlers write them.
        for rec in dedust::synth::warc_records(&out) {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(&rec)
                .and_then(|()| gz.finish())
                .and_then(|member| f.write_all(&member))
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        }
        f.into_inner()
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        pending.commit()?;
    }
    info!(
        "synth: {} sites, {} URLs → {}",
        out.sites.len(),
        out.rows.len(),
        clusters.display()
    );
    Ok(0)
}
