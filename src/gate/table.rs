//! The verdict table for the terminal: the headline first, then one line per check, failures
//! first. Plain text unless colour is asked for; it must read the same without it.

use crate::gate::rules::fmt_num;
use crate::gate::verdict::{Check, Report, Verdict};

const HEADERS: [&str; 8] = ["STATUS", "ARCH", "ROW", "METRIC", "BASELINE", "CURRENT", "CHANGE", "LIMITS"];

/// Passing checks of source lines listed before the rest are counted instead: a report has a
/// check per line and access kind (per SASS instruction without `-lineinfo`), and the lines
/// that pass are the least news.
const MAX_LINE_PASSES: usize = 10;

/// Render the report; `color` adds ANSI colour to the status words only.
pub(crate) fn render(report: &Report, color: bool) -> String {
    let mut out = format!("coalprof check: {} ({})\n", report.headline(), report.tally());
    let mut sorted = report.sorted();
    let mut line_passes = 0;
    sorted.retain(|c| {
        let line_pass = c.verdict == Verdict::Pass && crate::results::is_line_metric(&c.metric);
        line_passes += usize::from(line_pass);
        !line_pass || line_passes <= MAX_LINE_PASSES
    });
    let folded = line_passes.saturating_sub(MAX_LINE_PASSES);
    if sorted.is_empty() {
        return out;
    }
    let rows: Vec<[String; 8]> = sorted.iter().map(|c| cells(c)).collect();
    let mut widths = HEADERS.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    out.push('\n');
    out.push_str(&line(&HEADERS.map(String::from), &widths, None));
    for (r, c) in rows.iter().zip(&sorted) {
        out.push_str(&line(r, &widths, color.then_some(c.verdict)));
    }
    if folded > 0 {
        out.push_str(&format!(
            "… and {folded} more line checks passed (`--format json` or `--junit` lists every check)\n"
        ));
    }
    let notable: Vec<&&Check> = sorted.iter().filter(|c| c.verdict != Verdict::Pass).collect();
    if !notable.is_empty() {
        out.push('\n');
        for c in notable {
            out.push_str(&format!("{}: {} {}: {}\n", c.verdict.as_str(), c.row, c.metric, c.message));
        }
    }
    out
}

fn cells(c: &Check) -> [String; 8] {
    let num = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "-".to_string());
    [
        c.verdict.as_str().to_uppercase(),
        c.arch.clone(),
        short_row(&c.row),
        c.metric.clone(),
        num(c.baseline),
        num(c.current),
        c.change_text(),
        c.limits.clone(),
    ]
}

/// A row key as people read it in a table: a kernel's function name without its parameter
/// list or inline namespaces, and the source line of a line check (the lines under the table,
/// JSON and JUnit keep the whole key).
pub(crate) fn short_row(row: &str) -> String {
    let name = |k: &str| {
        let full = crate::names::match_name(k);
        // A template instantiation of hundreds of characters (CUTLASS, CUB) reads as its
        // function with its arguments elided.
        if full.chars().count() > 60 {
            format!("{}<…>", crate::names::function_name(k))
        } else {
            full
        }
    };
    match row.split_once(" @ ") {
        Some((base, line)) => format!("{} @ {line}", name(base)),
        None => name(row),
    }
}

fn line(cells: &[String; 8], widths: &[usize; 8], color: Option<Verdict>) -> String {
    let mut parts = Vec::with_capacity(8);
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        let pad = w - cell.chars().count();
        let padded = format!("{cell}{}", " ".repeat(pad));
        parts.push(match (i, color) {
            (0, Some(v)) => format!("\x1b[{}m{padded}\x1b[0m", ansi(v)),
            _ => padded,
        });
    }
    format!("{}\n", parts.join("  ").trim_end())
}

fn ansi(v: Verdict) -> &'static str {
    match v {
        Verdict::Fail => "1;31",
        Verdict::Warn => "33",
        Verdict::Pass => "32",
        Verdict::New | Verdict::Missing | Verdict::Skipped => "36",
    }
}
