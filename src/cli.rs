//! Command line: clap definitions and dispatch. Exit codes (also in README):
//! 0 success; 1 error (unreadable input, bad rule file, empty input); 2 usage error;
//! 3 `normalize --strict` saw bad lines (or left out rules that move URLs without consent).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

/// A parser that lists `values` as the flag's possible values (in `--help`, usage errors and
/// shell completion) and parses with the type's own `FromStr`.
fn one_of<T>(values: Vec<PossibleValue>) -> impl TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    PossibleValuesParser::new(values).try_map(|s| s.parse::<T>().map_err(|e| e.to_string()))
}

fn splits() -> impl TypedValueParser<Value = dedust::SplitMode> {
    one_of(["url", "cluster", "host"].map(PossibleValue::new).to_vec())
}

fn measures() -> impl TypedValueParser<Value = dedust::similarity::Measure> {
    one_of(
        ["tdw", "simscore", "spearman"]
            .map(PossibleValue::new)
            .to_vec(),
    )
}

fn input_formats() -> impl TypedValueParser<Value = dedust::InputFormat> {
    one_of(vec![
        PossibleValue::new("auto"),
        PossibleValue::new("tsv"),
        PossibleValue::new("csv"),
        PossibleValue::new("jsonl").alias("json"),
        PossibleValue::new("ache").alias("duster"),
        PossibleValue::new("cdxj").alias("cdx"),
        PossibleValue::new("warc"),
    ])
}

fn export_formats() -> impl TypedValueParser<Value = dedust::ExportFormat> {
    one_of(
        dedust::ExportFormat::ALL
            .iter()
            .map(|f| PossibleValue::new(f.name()))
            .collect(),
    )
}

/// Learn URL normalization rules that remove DUST (Different URLs with Similar Text).
#[derive(Parser, Debug)]
#[command(name = "dedust", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Base-layer flags shared by the subcommands.
#[derive(Args, Debug, Clone, Copy)]
pub struct BaseFlags {
    /// Keep `#fragment` (dropped by default).
    #[arg(long)]
    pub keep_fragment: bool,
    /// Keep the query parameter order (sorted by name by default).
    #[arg(long)]
    pub keep_query_order: bool,
}

/// How much a subcommand says on stderr (every subcommand takes these).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Chatter {
    /// Nothing on stderr but warnings and errors: no progress bar, no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// More on stderr: the time the command took (learn: each stage's time); printed even with -q.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Worker threads, for the subcommands that work in parallel.
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Threads {
    /// Worker threads (default: all cores; at most 1024).
    #[arg(long, value_parser = at_least(1))]
    pub threads: Option<usize>,
}

/// A share between 0 and 1 (`--max-fpr`): NaN or infinity would keep or reject everything and
/// could not be written to a rule file.
fn share(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is not a share between 0 and 1"))
    }
}

/// A share strictly between 0 and 1 (`--test-fraction`): 0 or 1 leaves one side of the split
/// empty.
fn open_share(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not a share strictly between 0 and 1"))
    }
}

/// A held-out share in [0, 1) (`--holdout`): 0 turns it off, 1 would leave nothing to learn on.
fn holdout_share(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..1.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is not 0 (off) nor a share below 1"))
    }
}

/// A similarity threshold in (0, 1] (`--threshold`).
fn threshold(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not in (0, 1]"))
    }
}

/// A whole number ≥ `min` (counts such as `--folds`, `--threads`, `--min-support`).
fn at_least(min: u64) -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(min..)
}

/// A finite weight ≥ 0 (`--family-weight`).
fn weight(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not a finite number ≥ 0"))
    }
}

impl ValidateFlags {
    pub fn options(&self) -> dedust::ValidateOptions {
        dedust::ValidateOptions {
            min_support: self.min_support,
            max_fpr: self.max_fpr,
            min_sites: self.min_sites,
            min_collapse: self.min_collapse,
            family_weight: self.family_weight,
            fpr_bound: self.fpr_bound,
            priors: !self.no_priors,
        }
    }

    pub fn holdout(&self) -> Option<dedust::Holdout> {
        (self.holdout > 0.0).then_some(dedust::Holdout {
            mode: self.holdout_split,
            fraction: self.holdout,
            seed: self.holdout_seed,
        })
    }
}

impl BaseFlags {
    pub fn options(&self) -> dedust::BaseOptions {
        dedust::BaseOptions {
            keep_fragment: self.keep_fragment,
            keep_query_order: self.keep_query_order,
        }
    }
}

/// Input format of a ground-truth file (`validate`, `evaluate`, `report`).
#[derive(Args, Debug, Clone, Copy)]
pub struct TruthFormat {
    /// Input format of the truth file (`--format` is an old spelling).
    #[arg(long = "input-format", alias = "format", default_value = "auto", value_parser = input_formats())]
    pub format: dedust::InputFormat,
}

/// Who may be merged with whom.
#[derive(Args, Debug, Clone, Copy)]
pub struct SiteFlags {
    /// Learn aliases between different registrable domains (`a.example` → `b.example`) from
    /// equal content. Off by default: a site that copies another's pages would take its URLs
    /// over. Use only on data where every site is trusted (your own mirrors).
    #[arg(long)]
    pub allow_cross_site: bool,
    /// A duplicate cluster spanning more registrable domains than this is boilerplate (an
    /// empty body, a parked-domain page, a 404 template), not DUST: it is learned as one cluster
    /// per host and never joins hosts.
    #[arg(long, default_value_t = dedust::rules::BOILERPLATE_SITES, value_parser = at_least(1))]
    pub boilerplate_sites: usize,
}

/// Validation thresholds and where validation looks.
#[derive(Args, Debug, Clone, Copy)]
pub struct ValidateFlags {
    /// Validate on this held-out share of the input (learning on the rest); 0 validates every
    /// candidate on the whole input.
    #[arg(long, default_value_t = 0.0, value_parser = holdout_share)]
    pub holdout: f64,
    /// How the held-out share is split off: `url`, `cluster` or `host`.
    #[arg(long, default_value = "url", value_parser = splits())]
    pub holdout_split: dedust::SplitMode,
    /// Seed of the held-out split.
    #[arg(long, default_value_t = 1)]
    pub holdout_seed: u64,
    /// Least number of validation URLs a rule must merge correctly or not.
    #[arg(long, default_value_t = 2, value_parser = at_least(1))]
    pub min_support: usize,
    /// Highest share of a rule's merges that may join different content.
    #[arg(long, default_value_t = 0.15, value_parser = share)]
    pub max_fpr: f64,
    /// Least registrable domains a cross-host rule (scope `*`) must be seen merging duplicates
    /// on (and never different content).
    #[arg(long, default_value_t = 2, value_parser = at_least(1))]
    pub min_sites: usize,
    /// Least URLs a family of many → one rules (varying ids sent to one fixed page, such as a
    /// login wall) must merge, pooled over the host's rules with that target.
    #[arg(long, default_value_t = 10, value_parser = at_least(1))]
    pub min_collapse: usize,
    /// Weight, in merges, of a many → one family's pooled fp rate in the rate each of its rules
    /// is judged by (rules sending ids to one login wall are evidence for each other); 0 judges
    /// every rule by its own fp / support.
    #[arg(long, default_value_t = 10.0, value_parser = weight)]
    pub family_weight: f64,
    /// Judge each rule by the one-sided 95 % Clopper–Pearson upper bound of its fp rate instead
    /// of fp / support (stricter on small support).
    #[arg(long)]
    pub fpr_bound: bool,
    /// Keep `http` ≡ `https`, `www.` ≡ bare host, the trailing slash (what the web-archive key,
    /// SURT, folds everywhere) and the `utm_*` campaign tags dropped as dedup keys on every host
    /// unless the data refutes them, even with too little evidence to learn them. The default;
    /// accepted for explicitness
    #[arg(long, overrides_with = "no_priors")]
    pub priors: bool,
    /// Turn the priors off: `http`/`https`, `www.`, the trailing slash and `utm_*` tags are
    /// folded only where the data shows them (on `--min-sites` sites for hosts never seen)
    #[arg(long, overrides_with = "priors")]
    pub no_priors: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Learn rules from duplicate-URL clusters.
    #[command(
        after_help = "Examples:\n  dedust learn clusters.tsv -o rules.json\n  dedust learn crawl.warc.gz -o rules.json --explain candidates.json\n  zcat cdx-00187.gz | dedust learn - -o rules.json"
    )]
    Learn(LearnArgs),
    /// Apply rules to a list of URLs, one output line per input line.
    #[command(
        after_help = "Examples:\n  dedust normalize -r rules.json frontier.txt > keys.txt\n  dedust normalize -r rules.json --tsv --stats frontier.txt\n  dedust normalize -r rules.json --dedup frontier.txt.gz -o unique.txt"
    )]
    Normalize(NormalizeArgs),
    /// Measure reduction and lost content against ground-truth clusters.
    #[command(
        after_help = "Examples:\n  dedust evaluate --truth clusters.tsv\n  dedust evaluate --truth clusters.tsv --split host --test-fraction 0.5 --seed 2\n  dedust evaluate --truth clusters.tsv --rules rules.json --json"
    )]
    Evaluate(EvaluateArgs),
    /// Generate a synthetic DUST web with ground truth.
    #[command(
        after_help = "Examples:\n  dedust synth --sites 10 --pages 100 -o web\n  dedust synth --sites 50 --host-offset 50 -o other-hosts --html --warc"
    )]
    Synth(SynthArgs),
    /// Validate rules against ground-truth clusters and keep the good ones.
    #[command(
        after_help = "Examples:\n  dedust validate -r imported.json --truth clusters.tsv -o kept.json"
    )]
    Validate(ValidateArgs),
    /// Write an HTML report: trade-off curve, metrics, rules.
    #[command(after_help = "Examples:\n  dedust report --truth clusters.tsv -o report.html")]
    Report(ReportArgs),
    /// Write rules in a crawler's format (nutch, stormcrawler, heritrix, scrapy, regex-tsv, json).
    #[command(
        after_help = "Examples:\n  dedust export -r rules.json --to nutch --with-nutch-defaults conf/regex-normalize.xml -o conf/dedust-normalize.xml\n  dedust export -r rules.json --to stormcrawler --emitted emitted.json\n  dedust learn clusters.tsv | dedust export -r - --to json"
    )]
    Export(ExportArgs),
    /// Read a crawler's rule file (Nutch regex-normalize.xml) into a dedust rule file.
    #[command(
        after_help = "Examples:\n  dedust import conf/regex-normalize.xml -o nutch.json\n  dedust import --from clearurls data.min.json -o clearurls.json\n  dedust import --from robots robots.txt --robots-url https://example.org/robots.txt"
    )]
    Import(ImportArgs),
    /// Merge rule files learned on disjoint host shards into one (deterministic).
    #[command(after_help = "Examples:\n  dedust merge shard-*.json -o rules.json")]
    Merge(MergeArgs),
    /// Check by page content that each rule's merges are real duplicates; optionally prune.
    #[command(
        after_help = "Examples:\n  dedust verify -r rules.json --pages pages.jsonl.gz\n  dedust verify -r rules.json --pages crawl2.warc.gz --revoke -o rules2.json"
    )]
    Verify(VerifyArgs),
    /// Build duplicate clusters from crawled pages by content (the format `learn` reads).
    #[command(
        after_help = "Examples:\n  dedust cluster --pages pages.jsonl.gz -o clusters.tsv\n  dedust cluster --pages crawl.warc.gz --measure simscore --threshold 0.95"
    )]
    Cluster(ClusterArgs),
    /// Print the site (registrable domain) of each URL, as `learn` splits clusters by it.
    #[command(
        after_help = "One output line per input line: the registrable domain of the URL's host after base\nnormalization (Public Suffix List compiled into dedust; an IP literal or a host without a\nregistrable part is its own site), an empty line for a URL learn leaves out. `learn` never lets one\ncluster's evidence cross sites (without --allow-cross-site), so rows keyed by this site can\nbe learned in separate shards (what integrations/spark does).\n\nExamples:\n  dedust site frontier.txt\n  cut -f2 clusters.tsv | dedust site - | sort | uniq -c | sort -rn | head"
    )]
    Site(SiteArgs),
    /// Print a shell completion script: `dedust completions bash > /etc/bash_completion.d/dedust`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): `dedust man > ~/.local/share/man/man1/dedust.1`.
    Man,
}

/// Content-similarity flags shared by `verify` and `cluster`.
#[derive(Args, Debug, Clone, Copy)]
pub struct SimFlags {
    /// Similarity measure: tdw (cosine of tag-weighted terms), simscore, spearman.
    #[arg(long, default_value = "tdw", value_parser = measures())]
    pub measure: dedust::similarity::Measure,
    /// Threshold t in (0, 1] (default: 0.9 tdw, 0.95 simscore, 0.9 spearman); for tdw the
    /// Jaccard of the term sets must reach t and the angle be at most 180·(1 − t) degrees.
    #[arg(long, value_parser = threshold)]
    pub threshold: Option<f64>,
    /// Only pages whose sentence counts differ by less than this can be duplicates.
    #[arg(long)]
    pub max_sentence_diff: Option<usize>,
}

impl SimFlags {
    pub fn options(&self) -> Result<dedust::similarity::SimOptions, String> {
        let t = self
            .threshold
            .unwrap_or_else(|| self.measure.default_threshold());
        if !(t > 0.0 && t <= 1.0) {
            return Err(format!("--threshold must be in (0, 1], got {t}"));
        }
        Ok(dedust::similarity::SimOptions {
            measure: self.measure,
            threshold: t,
            max_sentence_diff: self.max_sentence_diff,
        })
    }
}

#[derive(Args, Debug)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Rule file(s) (`-`: standard input).
    #[arg(long = "rules", short = 'r', required = true)]
    pub rules: Vec<String>,
    /// Pages: JSONL(.gz) of {url, html}, a directory of .html files with urls.tsv, or WARC(.gz).
    #[arg(long)]
    pub pages: String,
    #[command(flatten)]
    pub sim: SimFlags,
    #[command(flatten)]
    pub base: BaseFlags,
    /// Write the rule file without the rules whose refuted share exceeds --max-refuted (needs -o).
    #[arg(long, requires = "output")]
    pub prune: bool,
    /// Write the rule file with the rules whose refuted share exceeds --max-refuted marked
    /// revoked (kept as a record; normalize, the exports and merge honour it; needs -o).
    #[arg(long, requires = "output", conflicts_with = "prune")]
    pub revoke: bool,
    /// Highest share of refuted pairs a rule may have to survive --prune or --revoke.
    #[arg(long, default_value_t = 0.1, value_parser = share)]
    pub max_refuted: f64,
    /// Where --prune or --revoke writes the rule file.
    #[arg(short, long)]
    pub output: Option<String>,
    /// The per-rule report as JSON (an array of {id, pattern, target, pairs, confirmed,
    /// refuted, refuted_share}) instead of TSV.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ClusterArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Pages: JSONL(.gz) of {url, html}, a directory of .html files with urls.tsv, or WARC(.gz).
    #[arg(long)]
    pub pages: String,
    #[command(flatten)]
    pub sim: SimFlags,
    /// Write `cluster<TAB>url` here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Exit with code 3 when a record was skipped (malformed, or over a limit).
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    /// Rule files (any order).
    #[arg(required = true)]
    pub rules: Vec<String>,
    /// Write the merged rule file here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
    /// One step of a tree of merges: pool the evidence and keep the cross-host rules undecided
    /// (a file only `merge` reads); a final `merge` of such files writes what one merge of all
    /// the inputs writes
    #[arg(long)]
    pub partial: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    /// Rule file(s), applied in the order given (`-`: standard input).
    #[arg(long = "rules", short = 'r', required = true)]
    pub rules: Vec<String>,
    /// Target: nutch, stormcrawler, heritrix, scrapy, regex-tsv, json (`--format` is an old
    /// spelling).
    #[arg(long = "to", alias = "format", value_parser = export_formats())]
    pub format: dedust::ExportFormat,
    /// Times the rule list is repeated for single-pass crawlers (StormCrawler, Heritrix); fewer
    /// than the passes a URL needs gives a different result than `dedust normalize`.
    #[arg(long, default_value_t = dedust::normalize::MAX_ROUNDS, value_parser = at_least(1))]
    pub passes: usize,
    /// Also write the exported rules as a dedust rule file: `dedust normalize --no-base` with it
    /// does exactly what the crawler does with the export.
    #[arg(long)]
    pub emitted: Option<String>,
    /// Write here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Write the file even when the format can hold none of the rules (otherwise that is an
    /// error, exit 1, naming the formats that would hold them).
    #[arg(long)]
    pub allow_empty: bool,
    /// With `--to nutch`: put the rules of this Nutch file (your `conf/regex-normalize.xml`)
    /// first in the export, so that pointing `urlnormalizer.regex.file` at the export keeps
    /// Nutch's own rules running.
    #[arg(long, value_name = "FILE")]
    pub with_nutch_defaults: Option<String>,
    /// Write the many → one rules (login walls, soft 404s: varying ids sent to one page), which
    /// the rewrite export leaves out, as URL filters in the crawler's format (Nutch and
    /// StormCrawler regex-urlfilter lines, a Heritrix reject rule).
    #[arg(long, value_name = "FILE")]
    pub filters: Option<String>,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    /// The crawler's rule file.
    pub input: String,
    /// Its format: `nutch` (urlnormalizer-regex XML), `clearurls` (the ClearURLs list
    /// `data.min.json`), `dud` (a Scrapy duplicate-url-discarder rule file) or `robots` (a
    /// site's robots.txt, `Clean-param:` lines). Lists become one rule per entry and parameter;
    /// measure them with `dedust validate` (`--format` is an old spelling).
    #[arg(long = "from", alias = "format", default_value = "nutch")]
    pub format: ImportFormat,
    /// `--from robots`: the URL the robots.txt was fetched from
    /// (`https://example.com/robots.txt`); its rules apply to that host only.
    #[arg(long)]
    pub robots_url: Option<String>,
    /// Write the dedust rule file here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
}

/// Formats `dedust import` reads.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum ImportFormat {
    /// Nutch `regex-normalize.xml`.
    Nutch,
    /// ClearURLs `data.min.json`.
    Clearurls,
    /// Scrapy duplicate-url-discarder rules (`duplicate-url-discarder-rules` package JSON).
    Dud,
    /// A site's robots.txt: its `Clean-param:` lines (needs `--robots-url`).
    Robots,
}

#[derive(Args, Debug)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Rule file(s) with candidate rules (`-`: standard input).
    #[arg(long = "rules", short = 'r', required = true)]
    pub rules: Vec<String>,
    /// Labelled URLs (any `learn` input format) to validate on.
    #[arg(long)]
    pub truth: String,
    #[command(flatten)]
    pub truth_format: TruthFormat,
    #[command(flatten)]
    pub validate: ValidateFlags,
    #[command(flatten)]
    pub base: BaseFlags,
    /// Write the kept rules here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Print the per-rule report (support, fp, fpr, evidence, kept) and the summary as JSON on
    /// stdout (needs -o for the rules).
    #[arg(long, requires = "output")]
    pub json: bool,
    /// Keep every rule the data does not refute, the untested ones (no merge on the data) and
    /// those with too little support included: for hand-kept lists, whose rules mostly name
    /// parameters a crawl never shows. Refuted rules are never kept.
    #[arg(long)]
    pub keep_untested: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Ground-truth clusters (any `learn` input format).
    #[arg(long)]
    pub truth: String,
    #[command(flatten)]
    pub truth_format: TruthFormat,
    /// How to split into learning and held-out parts: `url`, `cluster` or `host` (whole registrable domains on one side).
    #[arg(long, default_value = "url", value_parser = splits())]
    pub split: dedust::SplitMode,
    /// Share held out for testing.
    #[arg(long, default_value_t = 0.2, value_parser = open_share)]
    pub test_fraction: f64,
    /// Split seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub validate: ValidateFlags,
    #[command(flatten)]
    pub sites: SiteFlags,
    #[command(flatten)]
    pub base: BaseFlags,
    /// Output HTML file.
    #[arg(short, long, default_value = "dedust-report.html")]
    pub output: String,
    /// Also draw the alignment graph of this rule's family (a rule id, or text of its pattern)
    /// as SVG: the first training clusters the rule rewrites, aligned token by token.
    #[arg(long, value_name = "RULE")]
    pub graph: Option<String>,
    /// Where `--graph` writes the SVG (it is also shown in the HTML report).
    #[arg(
        long,
        value_name = "FILE",
        default_value = "dedust-graph.svg",
        requires = "graph"
    )]
    pub graph_output: String,
}

#[derive(Args, Debug)]
pub struct SiteArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    /// URL list, one per line (`-` or absent: stdin; gzip undone).
    pub input: Option<String>,
    /// Print `site<TAB>host` (the host after base normalization).
    #[arg(long)]
    pub with_host: bool,
    /// Write here instead of stdout.
    #[arg(short, long)]
    pub output: Option<String>,
}

#[derive(Args, Debug)]
pub struct SynthArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    /// Number of sites.
    #[arg(long, default_value_t = 10, value_parser = at_least(1))]
    pub sites: usize,
    /// Pages (distinct contents) per site.
    #[arg(long, default_value_t = 100, value_parser = at_least(1))]
    pub pages: usize,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of the first site (site N is the same whatever the offset): `--sites 50` and
    /// `--sites 50 --host-offset 50` give the same site families on disjoint hosts.
    #[arg(long, default_value_t = 0)]
    pub host_offset: usize,
    /// Output directory (gets clusters.tsv and truth.json).
    #[arg(short, long)]
    pub output: String,
    /// Also write DIR/pages.jsonl.gz: an HTML page per URL whose text follows the ground truth.
    #[arg(long)]
    pub html: bool,
    /// Also write DIR/crawl.warc.gz: the crawl as WARC responses — in each cluster one page,
    /// some URLs answering 301 to it, half the sites declaring it as rel=canonical.
    #[arg(long)]
    pub warc: bool,
}

#[derive(Args, Debug)]
pub struct LearnArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Cluster file or crawl records (tsv, csv, jsonl, ache, cdx/cdxj, warc; found from the content; .gz ok; `-` for stdin).
    pub input: String,
    /// Write the rule file here (default: stdout).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Input format (`--format` is an old spelling).
    #[arg(long = "input-format", alias = "format", default_value = "auto", value_parser = input_formats())]
    pub format: dedust::InputFormat,
    /// Skip validation (keep every candidate rule).
    #[arg(long, conflicts_with = "validate_flag")]
    pub no_validate: bool,
    /// Validate the candidates (the default; accepted for explicitness).
    #[arg(long = "validate", id = "validate_flag")]
    pub validate_flag: bool,
    /// With a WARC of pages: do not cluster them by content (the default does, as `dedust
    /// cluster` would, and the pages then decide what the crawl's digests, redirects and
    /// canonicals join; a URL without a page joins the content cluster its redirect or
    /// canonical names). Learn from the declared evidence alone.
    #[arg(long)]
    pub no_content: bool,
    /// With a web-archive index (CDX/CDXJ) whose lines name each capture's WARC file and
    /// offset: the directory holding those files (default: the index's own directory; a name
    /// is looked up as written, then by its last path component). A sample of each rule's
    /// merges between captures with different digests is then judged by the pages' content
    /// instead of record lengths. `--warcs none` never reads them.
    #[arg(long, value_name = "DIR")]
    pub warcs: Option<String>,
    /// Also write every candidate rule with its support and fpr to this file (JSON).
    #[arg(long)]
    pub explain: Option<String>,
    #[command(flatten)]
    pub validate: ValidateFlags,
    #[command(flatten)]
    pub sites: SiteFlags,
    #[command(flatten)]
    pub base: BaseFlags,
    /// Largest cluster aligned whole; bigger ones are sampled.
    #[arg(long, default_value_t = 256, value_parser = at_least(2))]
    pub max_cluster: usize,
    /// Also validate the cross-host candidates of this rule file (its `evidence` and scope-`*`
    /// rules), learned on other shards of the same crawl: every shard then checks every
    /// candidate, and `merge` pools complete evidence (what integrations/spark does).
    #[arg(long, value_name = "RULES")]
    pub cross_host_candidates: Option<String>,
    /// Take the cross-host tier as decided in this rule file (its scope-`*` rules, e.g. `merge`
    /// of every shard's evidence): those are kept whatever this input's numbers say and no other
    /// cross-host candidate is, so host rules are chosen around the tier the merged file holds.
    #[arg(long, value_name = "RULES")]
    pub cross_host_decided: Option<String>,
    /// This input is one shard of a crawl learned in pieces and merged with `merge`: a
    /// cross-host template seen on one site only is still proposed, with the number of sites it
    /// was learned from, so `merge` judges it on the count pooled over the shards as one run
    /// over all the data would (what integrations/spark passes).
    #[arg(long)]
    pub shard: bool,
    /// The job this shard belongs to (recorded in the rule file): `merge` pools cross-host
    /// evidence only over files of one job, so a file of another job cannot invent evidence.
    #[arg(long, value_name = "ID", requires = "shard")]
    pub job_id: Option<String>,
    /// The partition (shard number) of the job this input is (recorded with `--job-id`).
    #[arg(long, value_name = "N", requires = "job_id")]
    pub partition: Option<u64>,
    /// Exit with code 3 (after writing the rules) when an input line or URL was skipped or left
    /// out (malformed, rejected by the base layer, over a limit), or a rule of
    /// --cross-host-candidates / --cross-host-decided was left out for moving URLs to another
    /// host or path prefix without that site's consent.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Args, Debug)]
pub struct NormalizeArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// URL list, one per line (`-` or absent: stdin).
    pub input: Option<String>,
    /// Rule file(s), `-` for standard input; without any, only the base layer runs.
    #[arg(long = "rules", short = 'r')]
    pub rules: Vec<String>,
    /// Print `url<TAB>canonical<TAB>rule_id` (bad lines: `url<TAB>url<TAB>!bad:<reason>`);
    /// a TAB or CR inside a field is written `\t` / `\r`.
    #[arg(long)]
    pub tsv: bool,
    /// Print each canonical URL once (first occurrence wins); bad lines are still passed through.
    #[arg(long)]
    pub dedup: bool,
    /// Summary on stderr.
    #[arg(long)]
    pub stats: bool,
    /// Exit with code 3 when a bad line was seen, or a rule was left out for moving URLs to
    /// another host or path prefix without that site's consent.
    #[arg(long)]
    pub strict: bool,
    /// Rules only: leave URL bytes otherwise untouched.
    #[arg(long)]
    pub no_base: bool,
    #[command(flatten)]
    pub base: BaseFlags,
    /// Answer each line as soon as it arrives and flush after each (for a program that writes a
    /// URL and waits for its canonical form); on by default when stdin or stdout is a terminal.
    #[arg(long)]
    pub line_buffered: bool,
    /// Write here instead of stdout.
    #[arg(short, long)]
    pub output: Option<String>,
}

#[derive(Args, Debug)]
pub struct EvaluateArgs {
    #[command(flatten)]
    pub chatter: Chatter,
    #[command(flatten)]
    pub threads: Threads,
    /// Ground-truth clusters (any `learn` input format).
    #[arg(long)]
    pub truth: String,
    /// Rule file(s) to evaluate on all truth URLs; without, learn on a split and test on the rest.
    #[arg(long = "rules", short = 'r')]
    pub rules: Vec<String>,
    /// How to split when learning inside: `url`, `cluster` or `host` (whole registrable domains on one side: rules tested on sites never seen).
    #[arg(long, default_value = "url", value_parser = splits())]
    pub split: dedust::SplitMode,
    /// Share of the data held out for testing.
    #[arg(long, default_value_t = 0.2, value_parser = open_share)]
    pub test_fraction: f64,
    /// K-fold cross-validation instead of one split (for small data; 2 to 100 folds, and no
    /// more than the input's clusters).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(2..=100))]
    pub folds: Option<usize>,
    /// Split seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub truth_format: TruthFormat,
    #[command(flatten)]
    pub validate: ValidateFlags,
    #[command(flatten)]
    pub sites: SiteFlags,
    #[command(flatten)]
    pub base: BaseFlags,
    /// JSON output.
    #[arg(long)]
    pub json: bool,
    /// When learning inside: also print the first N learned rules (pattern → target, numbers).
    #[arg(long, default_value_t = 0)]
    pub show_rules: usize,
    /// When learning inside: also write the learned rules and the held-out test clusters
    /// (`DIR/rules.json`, `DIR/train.tsv`, `DIR/test.tsv`) for inspection.
    #[arg(long)]
    pub save: Option<String>,
}

impl Command {
    /// The stderr and thread flags of the subcommand (defaults for those without them).
    fn run_flags(&self) -> (Chatter, Option<usize>) {
        match self {
            Command::Learn(a) => (a.chatter, a.threads.threads),
            Command::Normalize(a) => (a.chatter, a.threads.threads),
            Command::Evaluate(a) => (a.chatter, a.threads.threads),
            Command::Validate(a) => (a.chatter, a.threads.threads),
            Command::Report(a) => (a.chatter, a.threads.threads),
            Command::Verify(a) => (a.chatter, a.threads.threads),
            Command::Cluster(a) => (a.chatter, a.threads.threads),
            Command::Synth(a) => (a.chatter, None),
            Command::Export(a) => (a.chatter, None),
            Command::Import(a) => (a.chatter, None),
            Command::Merge(a) => (a.chatter, None),
            Command::Site(a) => (a.chatter, None),
            Command::Completions { .. } | Command::Man => (Chatter::default(), None),
        }
    }
}

/// Parse arguments, run, return the exit code.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let (chatter, threads) = cli.command.run_flags();
    crate::cmd::set_quiet(chatter.quiet);
    if let Err(e) = self::threads(threads) {
        eprintln!("dedust: error: {e}");
        return 1;
    }
    let started = std::time::Instant::now();
    let res = match cli.command {
        Command::Learn(a) => crate::cmd::learn::run(a),
        Command::Normalize(a) => crate::cmd::normalize::run(a),
        Command::Evaluate(a) => crate::cmd::evaluate::run(a),
        Command::Synth(a) => crate::cmd::synth::run(a),
        Command::Validate(a) => crate::cmd::validate::run(a),
        Command::Report(a) => crate::cmd::report::run(a),
        Command::Export(a) => crate::cmd::export::run(a),
        Command::Import(a) => crate::cmd::import::run(a),
        Command::Site(a) => crate::cmd::site::run(a),
        Command::Merge(a) => crate::cmd::merge::run(a),
        Command::Verify(a) => crate::cmd::verify::run(a),
        Command::Cluster(a) => crate::cmd::cluster::run(a),
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "dedust", &mut out);
            print_all(&out)
        }
        Command::Man => {
            let mut out = Vec::new();
            clap_mangen::Man::new(<Cli as clap::CommandFactory>::command())
                .render(&mut out)
                .map_err(anyhow::Error::from)
                .and_then(|_| print_all(&out))
        }
    };
    // Damaged gzip inputs were read up to the damage; every command says so alike.
    for note in dedust::take_damage() {
        eprintln!("dedust: warning: {note}");
    }
    if chatter.verbose {
        eprintln!(
            "dedust: took {:.2}s{}",
            started.elapsed().as_secs_f64(),
            crate::cmd::peak_note()
        );
    }
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dedust: error: {}", error_text(&e));
            1
        }
    }
}

/// Write `bytes` to stdout; a reader that went away (`| head`) ends it quietly, as Unix filters
/// do.
fn print_all(bytes: &[u8]) -> anyhow::Result<i32> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|_| o.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(0),
    }
}

/// The error and its causes joined by `: `, each said once: a cause whose text the message so
/// far already ends with (a library error that names its source, `path: No such file…`) is
/// not repeated.
fn error_text(e: &anyhow::Error) -> String {
    let mut out = e.to_string();
    for cause in e.chain().skip(1) {
        let t = cause.to_string();
        if !out.ends_with(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
    }
    out
}

/// Most worker threads `--threads` takes.
pub const MAX_THREADS: usize = 1024;

/// Set the rayon pool size once; an error when more than [`MAX_THREADS`] are asked for or the
/// threads cannot be started (a process or memory limit), rather than a panic at the first
/// parallel step.
pub fn threads(n: Option<usize>) -> Result<(), String> {
    let Some(n) = n else { return Ok(()) };
    if n > MAX_THREADS {
        return Err(format!(
            "--threads {n}: at most {MAX_THREADS} worker threads (this machine has {})",
            std::thread::available_parallelism().map_or(1, |p| p.get())
        ));
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .build_global()
        .map_err(|e| format!("cannot start {n} worker threads ({e}); try a smaller --threads"))
}
