//! Report: a self-contained HTML page (inline SVG, no scripts, no external files) for a rule set.
//!
//! In: a [`ReportData`] — the reduction/lost trade-off as `--max-fpr` sweeps, the metrics
//! comparison at the chosen threshold, and the rules. Out: one HTML string a crawl engineer opens
//! in a browser. Invariant: all text from the data is HTML-escaped.

use crate::metrics::{Comparison, Metrics};
use crate::rules::Rule;
use std::fmt::Write;

/// Everything the report shows.
#[derive(Debug, Clone)]
pub struct ReportData {
    /// Page title (e.g. the truth file name).
    pub title: String,
    /// How the numbers were obtained.
    pub setup: String,
    /// `(max_fpr, metrics of the rules on the held-out part)`, by increasing threshold.
    pub sweep: Vec<(f64, Metrics)>,
    /// The threshold the rules below were selected with.
    pub chosen: f64,
    /// Metrics at the chosen threshold.
    pub comparison: Comparison,
    /// The rules at the chosen threshold.
    pub rules: Vec<Rule>,
    /// A rule's family graph to show: its id, its pattern and the SVG
    /// ([`crate::family::family_svg`]).
    pub graph: Option<(String, String, String)>,
}

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Right-aligned table cells of already formatted numbers.
fn number_cells(cells: &[String]) -> String {
    cells
        .iter()
        .map(|c| format!(r#"<td class="n">{c}</td>"#))
        .collect()
}

/// The least value of the form 1, 2, 2.5 or 5 × 10^k that is ≥ `v` (`v` > 0).
fn round_up(v: f64) -> f64 {
    let e = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * e)
        .find(|&c| c >= v * (1.0 - 1e-9))
        .unwrap_or(10.0 * e)
}

/// The trade-off plot: lost (x) against reduction (y), one labelled point per threshold.
fn svg(sweep: &[(f64, Metrics)], chosen: f64) -> String {
    let (w, h, l, r, t, b) = (640.0, 380.0, 70.0, 30.0, 20.0, 50.0);
    // The lost axis ends at a round value (1, 2, 2.5 or 5 × 10^k) above the largest lost, so its
    // five ticks are round too; at least 0.01, so an all-zero curve still shows its lost axis.
    let top = sweep.iter().map(|(_, m)| m.lost).fold(0.0f64, f64::max);
    let max_lost = round_up((top * 1.05).max(0.01));
    let x = |v: f64| l + (w - l - r) * v / max_lost;
    let y = |v: f64| t + (h - t - b) * (1.0 - v);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-label="reduction against lost as max-fpr varies">"#
    );
    let _ = write!(
        s,
        r##"<rect x="{l}" y="{t}" width="{}" height="{}" fill="#fafafa" stroke="#999"/>"##,
        w - l - r,
        h - t - b
    );
    for i in 0..=5 {
        let v = i as f64 / 5.0;
        let _ = write!(
            s,
            r##"<line x1="{l}" x2="{}" y1="{y0}" y2="{y0}" stroke="#ddd"/><text x="{}" y="{}" font-size="12" text-anchor="end">{v:.1}</text>"##,
            w - r,
            l - 6.0,
            y(v) + 4.0,
            y0 = y(v)
        );
        // Rounded to the tick's own precision: 0.0005, 0.004, 0.02 (no 0.0023).
        let lv = (max_lost * v * 1e6).round() / 1e6;
        let _ = write!(
            s,
            r##"<line y1="{t}" y2="{}" x1="{x0}" x2="{x0}" stroke="#ddd"/><text x="{x0}" y="{}" font-size="12" text-anchor="middle">{lv}</text>"##,
            h - b,
            h - b + 16.0,
            x0 = x(lv)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{}" y="{}" font-size="13" text-anchor="middle">lost (share of URLs whose content is skipped)</text><text x="16" y="{}" font-size="13" text-anchor="middle" transform="rotate(-90 16 {})">reduction</text>"#,
        (l + w - r) / 2.0,
        h - 10.0,
        (t + h - b) / 2.0,
        (t + h - b) / 2.0
    );
    let pts: Vec<String> = sweep
        .iter()
        .filter_map(|(_, m)| Some(format!("{:.1},{:.1}", x(m.lost), y(m.reduction?))))
        .collect();
    let _ = write!(
        s,
        r##"<polyline points="{}" fill="none" stroke="#3366aa" stroke-width="2"/>"##,
        pts.join(" ")
    );
    for (f, m) in sweep {
        // Nothing removable: no point to draw (the tables say n/a).
        let Some(reduction) = m.reduction else {
            continue;
        };
        let is = (f - chosen).abs() < 1e-12;
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="{}" fill="{}"><title>max-fpr {f}: reduction {:.3}, lost {:.4}</title></circle>"##,
            x(m.lost),
            y(reduction),
            if is { 7 } else { 4 },
            if is { "#cc3333" } else { "#3366aa" },
            reduction,
            m.lost,
        );
        if is {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="12" fill="#cc3333">max-fpr {f}: reduction {:.3}, lost {:.4}</text>"##,
                x(m.lost) + 10.0,
                y(reduction) + 18.0,
                reduction,
                m.lost
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// Render the report.
///
/// ```
/// use dedust_learn::report::{render, ReportData};
/// use dedust_learn::{compare, BaseOptions};
/// let c = compare(&[], vec![], &BaseOptions::default());
/// let html = render(&ReportData { title: "t<1>".into(), setup: "s".into(), sweep: vec![(0.1, c.rules)], chosen: 0.1, comparison: c, rules: vec![], graph: None });
/// assert!(html.contains("<svg") && html.contains("t&lt;1&gt;"));
/// ```
pub fn render(d: &ReportData) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>dedust report: {t}</title><style>
body{{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}}
h1{{font-size:1.5em}} h2{{font-size:1.2em;margin-top:2em}}
table{{border-collapse:collapse;width:100%;font-size:.9em}} th,td{{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}}
th{{background:#f0f0f0}} td.n{{text-align:right;font-variant-numeric:tabular-nums}} code{{font-size:.92em;word-break:break-all}}
.ex{{color:#555;font-size:.85em}} .note{{color:#555}}
</style></head><body><h1>dedust report: {t}</h1><p class="note">{setup}</p>"#,
        t = esc(&d.title),
        setup = esc(&d.setup)
    );
    h.push_str("<h2>Metrics on held-out URLs</h2><table><tr><th>method</th><th>URLs</th><th>true clusters</th><th>buckets</th><th>reduction</th><th>lost</th><th>precision</th><th>recall</th></tr>");
    for (name, m) in [
        ("no normalization", d.comparison.none),
        ("base layer", d.comparison.base),
        ("learned rules", d.comparison.rules),
    ] {
        let _ = write!(h, "<tr><td>{name}</td>{}</tr>", number_cells(&m.cells()));
    }
    h.push_str("</table><p class=\"note\">reduction = share of removable duplicate URLs merged correctly (1 is ideal); lost = share of URLs whose distinct content a crawler would skip (0 is ideal); n/a = the held-out URLs hold no duplicate, so there is nothing to remove.</p>");
    let _ = write!(
        h,
        "<h2>Trade-off as <code>--max-fpr</code> varies</h2>{}<p class=\"note\">Each point learns with one threshold and tests on the held-out URLs; the red point is the threshold used below ({}).</p>",
        svg(&d.sweep, d.chosen),
        d.chosen
    );
    h.push_str("<table><tr><th>max-fpr</th><th>reduction</th><th>lost</th><th>precision</th><th>recall</th></tr>");
    for (f, m) in &d.sweep {
        // The shares only: reduction, lost, precision, recall.
        let _ = write!(
            h,
            r#"<tr><td class="n">{f}</td>{}</tr>"#,
            number_cells(&m.cells()[3..])
        );
    }
    let _ = write!(h, "</table><h2>Rules ({})</h2>", d.rules.len());
    h.push_str("<table><tr><th>#</th><th>pattern → target</th><th>support</th><th>fpr</th><th>learned from</th><th>example cluster</th></tr>");
    for (i, r) in d.rules.iter().enumerate() {
        let ex: Vec<String> = r
            .examples
            .first()
            .map(|e| e.iter().map(|u| esc(u)).collect())
            .unwrap_or_default();
        let _ = write!(
            h,
            r#"<tr><td class="n">{}</td><td><code>{}</code><br>→ <code>{}</code></td><td class="n">{}</td><td class="n">{}</td><td class="n">{} cluster(s), {} URLs</td><td class="ex">{}</td></tr>"#,
            i + 1,
            esc(&r.pattern),
            esc(&r.target),
            r.support.map_or("–".into(), |s| s.to_string()),
            r.fpr.map_or("–".into(), |f| format!("{f:.3}")),
            r.clusters,
            r.urls,
            ex.join("<br>")
        );
        if let Some(c) = &r.consensus {
            let _ = write!(
                h,
                r#"<tr><td></td><td colspan="5" class="ex">consensus of {} cluster(s), {} URLs: <code>{}</code>{}</td></tr>"#,
                c.clusters,
                c.urls,
                esc(&c.family),
                c.columns
                    .iter()
                    .map(|e| format!("<br><code>{}</code>", esc(e)))
                    .collect::<String>()
            );
        }
    }
    h.push_str("</table>");
    if let Some((id, pattern, svg)) = &d.graph {
        // The SVG escapes its own text ([`crate::family::family_svg`]).
        let _ = write!(
            h,
            "<h2>Alignment graph of rule {} (<code>{}</code>)</h2><p class=\"note\">Nodes are aligned tokens with the URLs through them; dashed nodes are optional columns (some URLs skip them), shaded ones hold several texts.</p><div style=\"overflow-x:auto\">{svg}</div>",
            esc(id),
            esc(pattern)
        );
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lost_axis_ends_at_a_round_value() {
        for (v, want) in [
            (0.0105, 0.02),
            (0.01, 0.01),
            (0.023, 0.025),
            (0.3, 0.5),
            (0.6, 1.0),
            (0.0012, 0.002),
            (2.0, 2.0),
        ] {
            assert!((round_up(v) - want).abs() < 1e-12, "{v}: {}", round_up(v));
        }
    }

    #[test]
    fn ticks_are_round_and_an_all_zero_curve_keeps_its_lost_axis() {
        let m = |lost: f64| Metrics {
            urls: 10,
            clusters: 5,
            buckets: 6,
            reduction: Some(0.5),
            lost,
            precision: 1.0,
            recall: Some(0.5),
        };
        let labels = |sweep: &[(f64, Metrics)]| -> Vec<String> {
            svg(sweep, 0.1)
                .split(r#"text-anchor="middle">"#)
                .skip(1)
                .map(|t| t.split('<').next().unwrap().to_string())
                .filter(|t| t.starts_with('0') || t.starts_with('1'))
                .collect()
        };
        assert_eq!(
            labels(&[(0.1, m(0.0)), (0.2, m(0.0))]),
            ["0", "0.002", "0.004", "0.006", "0.008", "0.01"]
        );
        assert_eq!(
            labels(&[(0.1, m(0.0123)), (0.2, m(0.0))]),
            ["0", "0.004", "0.008", "0.012", "0.016", "0.02"]
        );
    }
}
