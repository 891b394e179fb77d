//! `dedust learn`: clusters in, validated rule file out, summary on stderr.

use crate::cli::LearnArgs;
use dedust::{LearnConfig, LearnOptions, Stage};
use std::io::IsTerminal;
use std::time::Instant;

pub fn run(a: LearnArgs) -> anyhow::Result<i32> {
    let mut inputs = vec![a.input.as_str()];
    inputs.extend(a.cross_host_candidates.as_deref());
    inputs.extend(a.cross_host_decided.as_deref());
    super::refuse_overwrite(&[a.output.as_deref(), a.explain.as_deref()], &inputs)?;
    if a.no_validate && (a.cross_host_candidates.is_some() || a.cross_host_decided.is_some()) {
        anyhow::bail!(
            "--cross-host-candidates and --cross-host-decided need validation: drop --no-validate"
        );
    }
    if a.no_validate && a.validate.priors {
        // Unvalidated, no cross-host rule is kept: asking for priors there is a mistake (they
        // are the default only for validated learning).
        anyhow::bail!("--priors needs validation (the data may refute them): drop --no-validate");
    }
    // Cross-host candidates from other shards (evidence and scope-`*` rules), and the decided
    // tier, itself validated here too.
    let global = |f: &dedust::RuleFile| -> Vec<dedust::Rule> {
        f.evidence
            .iter()
            .chain(&f.rules)
            .filter(|r| r.is_global() && r.revoked.is_none())
            .cloned()
            .collect()
    };
    let mut foreign = Vec::new();
    // Moves without consent never enter (left out on reading, with a warning).
    let mut refused = 0;
    if let Some(p) = &a.cross_host_candidates {
        let f = dedust::RuleFile::read(p)?;
        refused += super::warn_refused(p, &f);
        foreign.extend(global(&f));
    }
    let decided = match &a.cross_host_decided {
        Some(p) => {
            let f = dedust::RuleFile::read(p)?;
            refused += super::warn_refused(p, &f);
            let tier: Vec<dedust::Rule> = f
                .rules
                .iter()
                .filter(|r| r.is_global() && r.revoked.is_none())
                .cloned()
                .collect();
            let ids = tier.iter().map(|r| r.id.clone()).collect();
            foreign.extend(tier);
            Some(ids)
        }
        None => None,
    };
    let at = super::stamp_time()?;
    let t0 = Instant::now();
    let reading = super::Bars::new();
    reading.read("reading", &a.input);
    let super::ReadInput {
        clusters,
        skipped,
        declared,
        evidence,
        format,
    } = super::read_clusters_counted(&a.input, a.format)?;
    reading.finish();
    let clusters = match format {
        Some(dedust::InputFormat::Warc) if !a.no_content => by_content(&a.input, clusters)?,
        _ => clusters,
    };
    if a.chatter.verbose {
        eprintln!(
            "learn: read {} clusters in {:.2}s",
            clusters.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    let pages_at = match (&evidence, format) {
        (Some(ev), Some(dedust::InputFormat::Cdxj)) => {
            on_demand(&a.input, a.warcs.as_deref(), ev, &a.base.options())
        }
        _ => None,
    };
    let check = pages_at.as_ref().map(|o| {
        let o = std::sync::Arc::clone(o);
        dedust::evidence::PairCheck::new(move |x, y| o.same(x, y))
    });
    let stage_clock = std::sync::Mutex::new((None::<Stage>, Instant::now()));
    let cfg = LearnConfig {
        learn: LearnOptions {
            base: a.base.options(),
            max_cluster: a.max_cluster.max(2),
            allow_cross_site: a.sites.allow_cross_site,
            boilerplate_sites: a.sites.boilerplate_sites,
            shard: a.shard,
        },
        validate: (!a.no_validate).then_some(a.validate.options()),
        holdout: a.validate.holdout(),
        declared,
        cross_host_candidates: foreign,
        cross_host_decided: decided,
        evidence,
        check,
    };
    let bar = if !a.chatter.quiet && std::io::stderr().is_terminal() {
        Some(super::progress_bar(clusters.len(), ""))
    } else {
        None
    };
    let name = stage_name;
    let out = dedust::learn_owned(clusters, &cfg, &|stage, done, total| {
        // Callbacks come from worker threads: one at a time, and a late report of a finished
        // stage never moves the bar back (it once drew `validating 650158/6218`).
        let mut c = stage_clock.lock().expect("stage clock");
        if c.0.is_some_and(|cur| stage < cur) {
            return;
        }
        if c.0 != Some(stage) {
            if let (true, Some(prev)) = (a.chatter.verbose, c.0) {
                eprintln!(
                    "learn: {} took {:.2}s{}",
                    name(prev),
                    c.1.elapsed().as_secs_f64(),
                    super::peak_note()
                );
            }
            crate::release_freed_memory();
            *c = (Some(stage), Instant::now());
        }
        if let Some(b) = &bar {
            b.set_message(name(stage));
            b.set_length(total as u64);
            b.set_position(done.min(total) as u64);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if a.chatter.verbose {
        let c = stage_clock.lock().expect("stage clock");
        if let Some(prev) = c.0 {
            eprintln!(
                "learn: {} took {:.2}s{}",
                name(prev),
                c.1.elapsed().as_secs_f64(),
                super::peak_note()
            );
        }
    }
    let mut out = out;
    out.file.stamp_learned(&at, std::slice::from_ref(&a.input));
    out.file.job = a.job_id.as_ref().map(|id| dedust::rulefile::Job {
        id: id.clone(),
        partition: a.partition,
    });
    super::write_out(a.output.as_deref(), &out.file.to_json())?;
    if let Some(p) = &a.explain {
        let kept: std::collections::HashSet<&str> =
            out.file.rules.iter().map(|r| r.id.as_str()).collect();
        let v: Vec<serde_json::Value> = out
            .all_candidates
            .iter()
            .map(|r| {
                let mut v = serde_json::json!({
                    "kept": kept.contains(r.id.as_str()), "id": r.id, "scope": r.scope, "pattern": r.pattern, "target": r.target,
                    "support": r.support, "fp": r.fp, "clusters": r.clusters, "examples": r.examples,
                });
                if !r.signals.is_empty() {
                    v["signals"] = serde_json::json!(r.signals);
                }
                if let Some(c) = &r.consensus {
                    v["consensus"] = serde_json::json!(c);
                }
                if r.is_global() {
                    v["sites"] = serde_json::json!(r.sites);
                    v["except"] = serde_json::json!(r.except);
                }
                v
            })
            .chain(out.stats.no_consent.iter().map(|(id, pattern, target)| {
                serde_json::json!({
                    "kept": false, "id": id, "pattern": pattern, "target": target,
                    "rejected": "no consent",
                })
            }))
            .collect();
        super::write_out(Some(p), &(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    if let Some(o) = &pages_at {
        let st = o.stats();
        info!(
            "learn: {}: judged rules by their pages on demand: {} records read from the WARC files ({} no page: not a 200 HTML response, unreadable or a stub), {} pairs the same page, {} different",
            a.input, st.read, st.no_page, st.same, st.different
        );
    }
    let s = &out.stats;
    info!(
        "learn: {} clusters ({} with duplicates{}), {} URLs ({} rejected by the base layer), {} pairs",
        s.clusters,
        s.multi,
        if s.capped > 0 { format!(", {} sampled to {} URLs", s.capped, cfg.learn.max_cluster) } else { String::new() },
        s.urls,
        s.bad_urls,
        s.pairs
    );
    if s.too_long > 0 {
        eprintln!(
            "learn: {} URLs left out: longer than {} bytes or more than {} path segments and parameters",
            s.too_long,
            dedust::rules::MAX_LEARN_URL,
            dedust::rules::MAX_LEARN_PARTS
        );
    }
    if s.cross_site > 0 {
        eprintln!(
            "learn: {} clusters span several registrable domains and were learned per site (equal content on two sites is no evidence that one is an alias of the other: a site's own redirects or canonicals to the other are, or --allow-cross-site)",
            s.cross_site
        );
    }
    if !s.no_consent.is_empty() {
        eprintln!(
            "learn: {} candidates rejected for no consent: they move URLs to another host or path prefix, and no redirect or canonical declared by the URLs they rewrite says so (--allow-cross-site learns them)",
            s.no_consent.len()
        );
    }
    if s.boilerplate > 0 {
        eprintln!(
            "learn: {} clusters span more than {} registrable domains and were learned per host as boilerplate (an empty body, a parked or 404 page is not DUST; --boilerplate-sites sets the bound)",
            s.boilerplate,
            a.sites.boilerplate_sites
        );
    }
    match &out.validation {
        Some(v) => info!(
            "learn: {} candidates → {} rules ({} cross-host; rejected: {} low support, {} high fpr, {} conflicts, {} non-idempotent, {} host rules whose work other rules do)",
            out.candidates, v.kept, out.file.rules.iter().filter(|r| r.is_global()).count(), v.low_support, v.high_fpr, v.conflicts, v.not_idempotent, v.redundant
        ),
        None => info!("learn: {} candidates → {} rules (not validated)", out.candidates, out.file.rules.len()),
    }
    info!(
        "learn: wrote {} in {:.2}s",
        a.output.as_deref().unwrap_or("stdout"),
        t0.elapsed().as_secs_f64()
    );
    Ok(
        if a.strict && skipped + s.bad_urls + s.too_long + refused > 0 {
            3
        } else {
            0
        },
    )
}

/// The pages of an index's captures, read on demand from the WARC files its lines name
/// ([`dedust::ondemand`]), when some of them are at hand: in `warcs` (`none`: never), else in
/// the index's directory, each name looked up as written, then by its last path component.
/// `None` (with a note) when the index names no file or none is found.
fn on_demand(
    index: &str,
    warcs: Option<&str>,
    ev: &dedust::evidence::IndexEvidence,
    base: &dedust::BaseOptions,
) -> Option<std::sync::Arc<dedust::ondemand::OnDemand>> {
    use std::path::{Path, PathBuf};
    if warcs == Some("none") || ev.files().is_empty() || index == "-" && warcs.is_none() {
        return None;
    }
    let dir: PathBuf = match warcs {
        Some(d) => PathBuf::from(d),
        None => Path::new(index)
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
    };
    let found = |name: &str| -> Option<PathBuf> {
        let as_written = dir.join(name);
        // A name that climbs out of the directory (`../`, an absolute path) is looked up by its
        // last component only.
        let inside = Path::new(name)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if inside && as_written.is_file() {
            return Some(as_written);
        }
        let last = Path::new(name).file_name()?;
        let p = dir.join(last);
        p.is_file().then_some(p)
    };
    let files: Vec<Option<PathBuf>> = ev.files().iter().map(|f| found(f)).collect();
    let at_hand = files.iter().filter(|f| f.is_some()).count();
    if at_hand == 0 {
        if warcs.is_some() {
            eprintln!(
                "learn: {index}: none of the {} WARC files the index names is in {} (rules are judged by record lengths)",
                files.len(),
                dir.display()
            );
        }
        return None;
    }
    let places = ev
        .places_normalized(base)
        .into_iter()
        .map(|(u, (raw, p))| {
            let at = dedust::ondemand::RecordAt {
                url: raw,
                file: p.file as usize,
                offset: p.offset,
                len: u64::from(p.len),
            };
            (u, at)
        })
        .collect();
    let o = dedust::ondemand::OnDemand::new(files, places);
    info!(
        "learn: {index}: {at_hand} of the {} WARC files the index names are at hand ({} captures): unknown merges are judged by their pages",
        ev.files().len(),
        o.reachable()
    );
    Some(std::sync::Arc::new(o))
}

/// A WARC's declared clusters decided again by its pages' content ([`dedust::refine`]), with a
/// summary on stderr; the clusters unchanged when the file holds no HTML page or is standard
/// input (read once).
fn by_content(path: &str, clusters: Vec<dedust::Cluster>) -> anyhow::Result<Vec<dedust::Cluster>> {
    if path == "-" {
        info!("learn: pages from standard input are not clustered by content (it is read once: give the WARC as a file, or --no-content)");
        return Ok(clusters);
    }
    // Every page is held while they are compared: a WARC past this size is left to its
    // declared evidence (`dedust cluster` on it, then `learn` on its clusters, does the rest).
    const MAX_CONTENT_FILE: u64 = 256 << 20;
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_CONTENT_FILE) {
        info!("learn: {path}: pages not clustered by content: the file is over {} MiB (run `dedust cluster --pages {path}` and learn from its clusters, or --no-content to say so)", MAX_CONTENT_FILE >> 20);
        return Ok(clusters);
    }
    let t = Instant::now();
    let bars = super::Bars::new();
    bars.read("pages", path);
    // Its skipped records were reported by the first reading; a WARC without pages (a WAT
    // file of metadata records) has nothing to compare.
    let pages = match dedust::pages::read_warc_pages(path) {
        Ok((p, _)) => p,
        Err(e) => {
            bars.finish();
            eprintln!("learn: {path}: pages not clustered by content: {e}");
            return Ok(clusters);
        }
    };
    if pages.is_empty() {
        bars.finish();
        return Ok(clusters);
    }
    let n = pages.len();
    let opts = dedust::similarity::SimOptions::default();
    let r = dedust::refine::refine_by_pages(clusters, pages, &opts, &|| bars.step("features", n));
    bars.finish();
    info!(
        "learn: {path}: {} pages clustered by content ({} t={}; {} with fewer than {} words left to the declared evidence, {} whose captures the reader left out): {} clusters with duplicates; {} URLs without a page joined by their redirect or canonical; {} declared clusters split by their pages ({} URLs without a page left out); {} URLs without a page left out as their site's pages refute its declarations of that kind; {:.2}s (--no-content learns from the declared evidence alone)",
        r.pages,
        opts.measure,
        opts.threshold,
        r.stubs,
        dedust::refine::MIN_TERMS,
        r.ambiguous,
        r.duplicates,
        r.attached,
        r.split,
        r.left_out,
        r.untrusted,
        t.elapsed().as_secs_f64()
    );
    Ok(r.clusters)
}

/// The label of a learning stage in progress bars and `-v` timings.
pub fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Prepare => "normalizing",
        Stage::Align => "aligning",
        Stage::Validate => "validating",
        Stage::Select => "selecting",
    }
}
