//! `dedust normalize`: one output line per input line, in input order (the work is
//! [`dedust::stream::normalize_stream`]); flags in, report on stderr.

use crate::cli::NormalizeArgs;
use dedust::stream::{normalize_stream, StreamOptions, StreamStats, HELD_LINE};
use dedust::Normalizer;
use std::io::Write;

pub fn run(a: NormalizeArgs) -> anyhow::Result<i32> {
    let mut inputs: Vec<&str> = a.rules.iter().map(String::as_str).collect();
    inputs.extend(a.input.as_deref());
    super::refuse_overwrite(&[a.output.as_deref()], &inputs)?;
    if a.rules.iter().any(|r| r == "-") && a.input.as_deref().is_none_or(|i| i == "-") {
        anyhow::bail!(
            "standard input can feed the rules (-r -) or the URLs, not both: give the URL file as an argument"
        );
    }
    let (rules, refused) = super::load_rules_counted(&a.rules)?;
    let base = (!a.no_base).then(|| a.base.options());
    let n = Normalizer::new(rules, base);
    let growing = n.growing_rules();
    for &i in &growing {
        let r = &n.rules()[i];
        eprintln!(
            "dedust: warning: rule {} ({:?} → {:?}) grows a URL each time it applies; its rewrites stop at {} bytes",
            r.id,
            r.pattern,
            r.target,
            dedust::normalize::MAX_LINE
        );
    }
    let input = a.input.clone().unwrap_or_else(|| "-".into());
    let r = dedust::input::open(&input)?;
    let mut pending = None;
    let out: Box<dyn Write + Send> = match a.output.as_deref() {
        Some(p) if p != "-" => {
            let (f, done) = super::create_output(p)?;
            pending = Some(done);
            Box::new(f)
        }
        _ => Box::new(std::io::stdout()),
    };
    // As grep and ripgrep do: line-buffered on request, or when a person is typing or reading.
    let line_buffered = a.line_buffered || {
        use std::io::IsTerminal;
        (input == "-" && std::io::stdin().is_terminal())
            || (a.output.as_deref().is_none_or(|p| p == "-") && std::io::stdout().is_terminal())
    };
    let opts = StreamOptions {
        line_buffered,
        tsv: a.tsv,
        dedup: a.dedup,
        threads: a.threads.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
    };
    let Some(st) = normalize_stream(&n, r, &input, out, &opts)? else {
        // The consumer went away (`| head`): stop quietly, as Unix filters do.
        return Ok(0);
    };
    if let Some(p) = pending {
        p.commit()?;
    }
    report(&a, &n, &st);
    let cut = st.cut;
    if cut > 0 {
        eprintln!(
            "normalize: {cut} lines longer than {HELD_LINE} bytes were passed through cut to their first {HELD_LINE} bytes"
        );
    }
    let bad: usize = st.bad.values().sum();
    let limit = n.regex_limit_hits();
    if limit > 0 {
        eprintln!(
            "normalize: {limit} times an imported regex rule stopped at the backtracking limit (the URL was kept as it was from there; the rule's pattern backtracks badly)"
        );
    }
    let grew = n.too_long_rewrites();
    if grew > 0 {
        eprintln!(
            "normalize: {grew} rewrites refused: the output would pass {} bytes (a rule or chain of rules keeps growing the URL)",
            dedust::normalize::MAX_LINE
        );
    }
    let unsettled = n.unsettled_urls();
    if unsettled > 0 {
        eprintln!(
            "normalize: {unsettled} URLs were still changing after {} passes over the rules (an imported rule chain longer than the passes, or rules undoing each other): their outputs are not a fixed point; normalizing them again may change them",
            dedust::normalize::MAX_ROUNDS
        );
    }
    Ok(
        if a.strict
            && (bad > 0
                || limit > 0
                || grew > 0
                || unsettled > 0
                || !growing.is_empty()
                || refused > 0)
        {
            3
        } else {
            0
        },
    )
}

fn report(a: &NormalizeArgs, n: &Normalizer, st: &StreamStats) {
    let bad: usize = st.bad.values().sum();
    let kinds: Vec<String> = st
        .bad
        .iter()
        .map(|(k, v)| format!("{} {v}", k.name()))
        .collect();
    let first: Vec<String> = st
        .first_bad
        .iter()
        .map(|(l, k)| format!("line {l}: {}", k.name()))
        .collect();
    if a.stats {
        eprintln!(
            "normalize: {} lines, {} changed, {} bad{}{}",
            st.lines,
            st.changed,
            bad,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            },
            if a.dedup {
                format!(", {} duplicates removed", st.dup)
            } else {
                String::new()
            }
        );
        let mut top: Vec<(&usize, &usize)> = st.by_rule.iter().collect();
        top.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        for (i, k) in top.iter().take(20) {
            let r = &n.rules()[**i];
            eprintln!("  {k:>9}  {}  {}", r.id, r.pattern);
        }
    }
    if bad > 0 {
        eprintln!(
            "normalize: {bad} bad lines passed through unchanged ({})",
            first.join("; ")
        );
    }
}
