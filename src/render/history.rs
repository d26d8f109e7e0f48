//! The formats of `coalprof history`: the terminal table (one line per row key and metric, a
//! value per run, and the run where it first changed), CSV (long: one line per point), JSON
//! (`coalprof-history/1`) and an SVG of small multiples, one trend per series, which the HTML
//! page shows inline too.

use maud::{html, Markup};

use super::fit::{Col, Cut};
use super::{Column, Style};
use crate::error::{Error, Result};
use crate::frame::history::{History, Series};
use crate::text::visible;

/// Version of the JSON layout.
pub(crate) const SCHEMA: &str = "coalprof-history/1";

/// Series drawn in one SVG at most (the rest are counted, not drawn).
const MAX_PLOTS: usize = 200;

/// The column of `metric`, or a plain one.
pub(crate) fn column(style: &Style, metric: &str) -> Column {
    style.columns.iter().find(|c| c.key == metric).cloned().unwrap_or_else(|| Column::plain(metric))
}

/// The terminal table, fitted to the width: the runs between the first and the last go first
/// (oldest first), then the metric's name and the first change shrink.
pub(crate) fn table(h: &History, style: &Style) -> String {
    let width = style.width;
    let mut out = format!("{} run(s), {} series\n", h.runs.len(), h.series.len());
    for (i, r) in h.runs.iter().enumerate() {
        let line =
            format!("  #{:<3} {}  {}  {}", i + 1, visible(&r.time), visible(&r.commit_label()), visible(&r.name));
        out.push_str(&match width {
            Some(w) => format!("{}\n", crate::text::cut_end(&line, w)),
            None => format!("{line}\n"),
        });
    }
    if h.series.is_empty() {
        return out;
    }
    // Up to 8 runs get a column each; more show the first, the last and where it changed.
    let every = h.runs.len() <= 8;
    let columns: Vec<Column> = h.series.iter().map(|s| column(style, &s.metric)).collect();
    let mut cols = vec![
        Col::new("row", h.series.iter().map(|s| s.key.clone()).collect()).flex(Cut::Middle, 16).prefer(32),
        Col::new("metric", columns.iter().map(|c| c.header.clone()).collect()).flex(Cut::End, 10),
    ];
    let at = |s: &Series, c: &Column, run: usize| {
        s.points.iter().find(|p| p.run == run).map_or("–".into(), |p| c.format.show(p.value))
    };
    let runs = h.runs.len();
    if every {
        for i in 0..runs {
            let cells = h.series.iter().zip(&columns).map(|(s, c)| at(s, c, i)).collect();
            let col = Col::new(format!("#{}", i + 1), cells).right();
            cols.push(if i == 0 || i + 1 == runs { col } else { col.drops(i as u32) });
        }
    } else {
        let end =
            |p: Option<&crate::frame::history::Point>, c: &Column| p.map_or("–".into(), |p| c.format.show(p.value));
        let zip = || h.series.iter().zip(&columns);
        cols.push(Col::new("first", zip().map(|(s, c)| end(s.points.first(), c)).collect()).right());
        cols.push(Col::new("last", zip().map(|(s, c)| end(s.points.last(), c)).collect()).right());
    }
    let changes = h.series.iter().zip(&columns).map(|(s, c)| changed(h, s, c)).collect();
    cols.push(Col::new("first changed", changes).flex(Cut::End, 14));
    let fitted = super::fit::table(cols, width, false);
    out.push_str(&fitted.text);
    out.push_str(&fitted.footer(width));
    out
}

/// `#3 abc123 (main): 8.00 → 32.00`, or `unchanged`.
pub(crate) fn changed(h: &History, s: &Series, c: &Column) -> String {
    let Some(p) = s.first_change() else { return "unchanged".into() };
    let before = p.value - p.change.unwrap_or(0.0);
    let run = &h.runs[p.run];
    format!("#{} {}: {} → {}", p.run + 1, run.commit_label(), c.format.show(before), c.format.show(p.value))
}

pub(crate) fn csv(h: &History) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let enc = |e: csv::Error| Error::encoding("CSV", e);
    w.write_record(["run", "time", "commit", "branch", "dirty", "key", "kernel", "metric", "value"]).map_err(enc)?;
    for s in &h.series {
        for p in &s.points {
            let r = &h.runs[p.run];
            let g = r.git.as_ref();
            let t = |s: &str| visible(s).into_owned();
            w.write_record([
                t(&r.name),
                t(&r.time),
                t(g.map_or("", |g| g.commit.as_str())),
                t(g.and_then(|g| g.branch.as_deref()).unwrap_or("")),
                t(g.map_or("", |g| if g.dirty { "true" } else { "false" })),
                t(&s.key),
                t(&s.kernel),
                t(&s.metric),
                p.value.to_string(),
            ])
            .map_err(enc)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e.into_error()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

pub(crate) fn json(h: &History) -> Result<String> {
    let doc = serde_json::json!({ "schema": SCHEMA, "runs": h.runs, "series": h.series });
    Ok(serde_json::to_string_pretty(&doc).map_err(|e| Error::encoding("JSON", e))? + "\n")
}

const PANEL: (f64, f64) = (380.0, 130.0);

/// One series' trend, drawn at (`x`, `y`): the values over the runs (by position), the first and
/// last value labelled, a dot per run with its commit in a tooltip.
pub(crate) fn trend(h: &History, s: &Series, c: &Column, x: f64, y: f64) -> Markup {
    let (left, right, top, bottom) = (x + 56.0, x + PANEL.0 - 12.0, y + 34.0, y + PANEL.1 - 22.0);
    let lo = s.points.iter().map(|p| p.value).fold(f64::INFINITY, f64::min);
    let hi = s.points.iter().map(|p| p.value).fold(f64::NEG_INFINITY, f64::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let n = h.runs.len().max(2) - 1;
    let px = |run: usize| left + (right - left) * run as f64 / n as f64;
    let py = |v: f64| if hi > lo { bottom - (bottom - top) * (v - lo) / span } else { (top + bottom) / 2.0 };
    let points: Vec<String> = s.points.iter().map(|p| format!("{:.1},{:.1}", px(p.run), py(p.value))).collect();
    html! {
        g.series data-key=(s.key) data-metric=(s.metric) {
            rect x=(x + 2.0) y=(y + 2.0) width=(PANEL.0 - 4.0) height=(PANEL.1 - 4.0) fill="#fff" stroke="#d8dde2" {}
            text x=(x + 10.0) y=(y + 18.0) font-size="12" font-family="sans-serif" { (s.key) " · " (c.header) }
            text x=(left - 6.0) y=(top + 4.0) font-size="10" text-anchor="end" font-family="sans-serif" fill="#5c6670" { (c.format.show(hi)) }
            text x=(left - 6.0) y=(bottom + 4.0) font-size="10" text-anchor="end" font-family="sans-serif" fill="#5c6670" { (c.format.show(lo)) }
            line x1=(left) y1=(bottom + 6.0) x2=(right) y2=(bottom + 6.0) stroke="#d8dde2" {}
            text x=(left) y=(bottom + 18.0) font-size="10" font-family="sans-serif" fill="#5c6670" { "#1" }
            text x=(right) y=(bottom + 18.0) font-size="10" text-anchor="end" font-family="sans-serif" fill="#5c6670" { "#" (h.runs.len()) }
            polyline points=(points.join(" ")) fill="none" stroke="#1f77b4" stroke-width="2" {}
            @for p in &s.points {
                @let changed = p.change.is_some_and(|c| c != 0.0);
                circle cx=(format!("{:.1}", px(p.run))) cy=(format!("{:.1}", py(p.value))) r=(if changed { "4" } else { "3" })
                    fill=(if changed { "#cf222e" } else { "#1f77b4" }) data-v=(p.value) {
                    title { "#" (p.run + 1) " " (h.runs[p.run].commit_label()) " " (h.runs[p.run].name) ": " (c.format.show(p.value)) }
                }
            }
        }
    }
}

/// Small multiples of `series`, two per line.
pub(crate) fn multiples(h: &History, series: &[&Series], style: &Style) -> Markup {
    let shown = &series[..series.len().min(MAX_PLOTS)];
    let rows = shown.len().div_ceil(2).max(1);
    let (w, ht) = (PANEL.0 * 2.0, PANEL.1 * rows as f64 + if series.len() > MAX_PLOTS { 20.0 } else { 0.0 });
    html! {
        svg.trend xmlns="http://www.w3.org/2000/svg" width=(w) height=(ht) viewBox={ "0 0 " (w) " " (ht) } role="img" {
            @for (i, s) in shown.iter().enumerate() {
                (trend(h, s, &column(style, &s.metric), PANEL.0 * (i % 2) as f64, PANEL.1 * (i / 2) as f64))
            }
            @if series.len() > MAX_PLOTS {
                text x="10" y=(ht - 6.0) font-size="12" font-family="sans-serif" {
                    (series.len() - MAX_PLOTS) " more series not drawn: choose with --metric and --kernel"
                }
            }
        }
    }
}

pub(crate) fn svg(h: &History, style: &Style) -> String {
    let all: Vec<&Series> = h.series.iter().collect();
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n", multiples(h, &all, style).into_string())
}
