//! The results page (`report`, `run`, `analyze`, `profile --format html`): per pattern (user
//! kernels form one group) the terminal's table, its notes and findings, the worst source
//! lines with their code, and the plots, inline.

use maud::{html, Markup, PreEscaped};

use super::{anchor, num, page};
use crate::error::Result;
use crate::render::columns::{cell, groups, label, notes, present, rank, severity, thousands, Column};
use crate::render::{plots, worst, Exporter, Style};
use crate::results::{Provenance, Results, Row, Source, WorstLine};
use crate::text::{count, percent};

/// The results page, under `title`.
pub(crate) struct Report {
    pub title: String,
}

impl Exporter for Report {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let cols = present(results, &style.columns);
        let plots = plots(results)?;
        let groups = groups(results);
        let body = html! {
            @for n in &results.notices { p.notice { (n) } }
            @if groups.len() > 1 {
                nav.toc { @for (p, _) in &groups { a href={ "#" (anchor("p", p.unwrap_or("kernels"))) } { (p.unwrap_or("kernels")) } } }
            }
            @for (pattern, rows) in &groups {
                section.pattern id=(anchor("p", pattern.unwrap_or("kernels"))) data-pattern=[*pattern] {
                    h2 {
                        (pattern.unwrap_or("Kernels"))
                        @if rows.iter().all(|r| r.source == Source::Predicted) { " (predicted by the address model)" }
                    }
                    (table(*pattern, rows, &cols))
                    @let notes = notes(rows);
                    @if !notes.is_empty() { ul.notes { @for n in &notes { li { (n) } } } }
                    (worst_lines(&worst::of(results, *pattern)))
                    div.plots {
                        @for p in plots.iter().filter(|p| Some(p.pattern.as_str()) == *pattern) {
                            // plotters writes the SVG, escaping its text; only pattern names reach it.
                            figure.plot data-file=(p.file) { (PreEscaped(strip_prolog(&p.svg))) figcaption { (p.file) } }
                        }
                    }
                }
            }
            @if results.rows.iter().any(|r| r.predicted.is_some()) { p.facts { "Cells read measured (predicted)." } }
        };
        Ok(page(&self.title, &facts(&results.provenance), body))
    }
}

/// The provenance in one line: backend, GPU, ncu, commit.
pub(super) fn facts(p: &Provenance) -> Vec<String> {
    let mut out = vec![format!("backend {}", p.backend)];
    out.extend(p.gpu.iter().map(|g| format!("GPU {g}")));
    out.extend(p.compute_capability.iter().map(|c| format!("CC {c}")));
    out.extend(p.ncu_version.iter().map(|v| format!("ncu {v}")));
    if let Some(g) = &p.git {
        let dirty = if g.dirty { ", dirty" } else { "" };
        out.push(format!(
            "commit {}{}{dirty}",
            g.short(),
            g.branch.as_ref().map(|b| format!(" ({b})")).unwrap_or_default()
        ));
    }
    out.push(format!("coalprof {}", p.coalprof));
    out
}

fn table(pattern: Option<&str>, rows: &[&Row], cols: &[&Column]) -> Markup {
    let ranks = rows.iter().any(|r| r.rank.is_some());
    html! {
        div.wide { table.results.sortable {
            thead { tr {
                th { (if pattern.is_some() { "variant" } else { "kernel" }) }
                @if ranks { th { "rank" } }
                th { "launches" }
                @for c in cols { th data-key=(c.key) title=(c.key) { (c.header) } }
            } }
            tbody {
                @for r in rows {
                    tr data-key=(r.key()) {
                        td title=(r.kernel) { code { (label(r)) } }
                        @if ranks { (num(r.rank.map(f64::from), &rank(r), None)) }
                        (num(Some(r.launches as f64), &thousands(i128::from(r.launches)), None))
                        @for c in cols { (metric_cell(r, c)) }
                    }
                }
            }
        } }
    }
}

/// A metric's cell: the terminal's text, the exact value, coloured by its distance from the
/// ideal as the terminal colours it.
fn metric_cell(r: &Row, c: &Column) -> Markup {
    let class = severity(r, c);
    let value = r.metric(&c.key);
    let predicted = r.predicted.as_ref().and_then(|p| p.get(&c.key)).map(|v| v.to_string());
    html! { td class=(super::cell_class(class)) data-key=(c.key) data-v=[value.map(|v| v.to_string())] data-predicted=[predicted] { (cell(r, c)) } }
}

/// The launch's worst lines, code and numbers, shaded by their share of the kernel's excess
/// (a shared access by its wavefronts beyond the ideal).
fn worst_lines(lines: &[&WorstLine]) -> Markup {
    if lines.is_empty() {
        return html! {};
    }
    html! {
        h3 { "Worst lines" }
        div.wide { table.heat.worst {
            thead { tr { th { "launch" } th { "line" } th { "op" } th { "sect/req (ideal)" } th { "excess" } th { "share" } th { "smem ways" } th { "code" } } }
            tbody {
                @for w in lines {
                    @let share = super::heat::heat_of(w.excess_share, w.shared_ways);
                    tr.hot style={ "--share:" (format!("{share:.3}")) } data-location=(w.location) {
                        td { code { (w.variant.clone().unwrap_or_else(|| crate::results::ranked(&w.kernel, w.rank))) } }
                        td { code { (w.location) } @if let Some(v) = &w.via { br; small.via { "inside " code { (v) } } } }
                        td { (w.op.as_deref().unwrap_or("–")) }
                        (num(w.sectors_per_request, &ratio_of(w.sectors_per_request, w.ideal_sectors_per_request), None))
                        (num(w.excess_sectors, &w.excess_sectors.map_or("–".into(), count), None))
                        (num(w.excess_share, &w.excess_share.map_or("–".into(), percent), None))
                        (num(w.shared_ways, &w.shared_ways.map_or("–".into(), |s| format!("{s:.1}")), None))
                        td.src { @match &w.code { Some(c) => code { (c) }, None => span.unavailable { "source not available" } } }
                    }
                    @if let Some(d) = &w.diagnosis { tr.diag { td colspan="8" { (d) } } }
                }
            }
        } }
    }
}

/// `32.0 (4.0)`: sectors per request and the ideal.
pub(super) fn ratio_of(v: Option<f64>, ideal: Option<f64>) -> String {
    match (v, ideal) {
        (Some(v), Some(i)) => format!("{v:.1} ({i:.1})"),
        (Some(v), None) => format!("{v:.1}"),
        _ => "–".into(),
    }
}

/// An SVG document without its XML prolog, to sit inside HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
