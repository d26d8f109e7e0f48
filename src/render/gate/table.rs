//! The verdict table for the terminal: the headline first, then one line per check, failures
//! first, fitted to the width (secondary columns hidden, long names cut in the middle), and
//! the explanations wrapped under it. Plain text unless colour is asked for; it must read the
//! same without it. Names are made visible (`text::visible`): no row can start a line.

use crate::gate::verdict::{Check, Report, Verdict};
use crate::text::fmt_num;
use crate::text::{cut_middle, elide_left, visible, wrap};

const HEADERS: [&str; 8] = ["STATUS", "ARCH", "ROW", "METRIC", "BASELINE", "CURRENT", "CHANGE", "LIMITS"];

/// When a column is hidden to fit the width (lower first): the architecture, the baseline (the
/// change says how far from it), the limits and the change; the status, row, metric and
/// current value stay. The explanations under the table say all of it again.
const DROP: [Option<u32>; 8] = [None, Some(1), None, None, Some(2), None, Some(4), Some(3)];

/// Passing checks of source lines listed before the rest are counted instead: a report has a
/// check per line and access kind (per SASS instruction without `-lineinfo`), and the lines
/// that pass are the least news.
const MAX_LINE_PASSES: usize = 10;

/// Render the report; `color` adds ANSI colour to the status words only; `width` (none: as wide
/// as it comes) is what the table and the explanations under it fit.
pub(crate) fn render(report: &Report, color: bool, width: Option<usize>) -> String {
    let mut out = wrap(&format!("coalprof check: {} ({})", report.headline(), report.tally()), width, "", "  ");
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
    let mut rows: Vec<[String; 8]> = sorted.iter().map(|c| cells(c)).collect();
    let mut widths = HEADERS.map(str::len);
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let shown = fit(&mut widths, &mut rows, width);
    out.push('\n');
    out.push_str(&line(&HEADERS.map(String::from), &widths, &shown, None));
    for (r, c) in rows.iter().zip(&sorted) {
        out.push_str(&line(r, &widths, &shown, color.then_some(c.verdict)));
    }
    let hidden: Vec<&str> = (0..8).filter(|i| !shown[*i]).map(|i| HEADERS[i]).collect();
    if !hidden.is_empty() {
        let n = hidden.len();
        let text = format!(
            "{n} column{} hidden to fit {} columns ({}): --wide shows all",
            if n == 1 { "" } else { "s" },
            width.unwrap_or(0),
            hidden.join(", ")
        );
        out.push_str(&wrap(&text, width, "", "  "));
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
            let text =
                format!("{}: {} {}: {}", c.verdict.as_str(), visible(&c.row), visible(&c.metric), visible(&c.message));
            out.push_str(&wrap(&text, width, "", "  "));
        }
    }
    out
}

/// Hide columns (in [`DROP`]'s order) until the table fits `width`, then cut the row and metric
/// names in the middle to what is left; returns which columns are shown.
fn fit(widths: &mut [usize; 8], rows: &mut [[String; 8]], width: Option<usize>) -> [bool; 8] {
    let mut shown = [true; 8];
    let Some(width) = width else { return shown };
    // Columns are hidden while the names, up to these widths, would not fit beside them; then
    // the names shrink, down to the minimums.
    let (row_wanted, metric_wanted) = (widths[2].min(48), widths[3].min(40));
    // A line check's row keeps its file name and line whole.
    let located = rows.iter().map(|r| row_floor(&r[2])).max().unwrap_or(0);
    let (row_min, metric_min) = (widths[2].min(24.max(located)), widths[3].min(20));
    let total = |widths: &[usize; 8], shown: &[bool; 8], row: usize, metric: usize| {
        let n = shown.iter().filter(|s| **s).count();
        let sum: usize = (0..8)
            .filter(|i| shown[*i])
            .map(|i| {
                if i == 2 {
                    row
                } else if i == 3 {
                    metric
                } else {
                    widths[i]
                }
            })
            .sum();
        sum + 2 * n.saturating_sub(1)
    };
    while total(widths, &shown, row_wanted, metric_wanted) > width {
        let Some(next) = (0..8).filter(|i| shown[*i]).filter_map(|i| DROP[i]).min() else { break };
        for i in 0..8 {
            if DROP[i] == Some(next) {
                shown[i] = false;
            }
        }
    }
    // From the wanted widths where they fit (else the minimums), the room left goes to the row
    // first, then to the metric.
    let (row_base, metric_base) = if total(widths, &shown, row_wanted, metric_wanted) <= width {
        (row_wanted, metric_wanted)
    } else {
        (row_min, metric_min)
    };
    let mut spare = width.saturating_sub(total(widths, &shown, row_base, metric_base));
    let row = row_base + (widths[2] - row_base).min(spare);
    spare -= row - row_base;
    let metric = metric_base + (widths[3] - metric_base).min(spare);
    for r in rows.iter_mut() {
        r[2] = cut_row(&r[2], row);
        r[3] = cut_middle(&r[3], metric);
    }
    // A line check keeps its whole location even where that is wider than the room given: the
    // column is as wide as its widest cell, so every row stays aligned.
    let widest = |i: usize, min: usize| rows.iter().map(|r| r[i].chars().count()).fold(min, usize::max);
    (widths[2], widths[3]) = (widest(2, row), widest(3, metric));
    shown
}

/// A row in at most `max` characters: a line check's (`kernel @ file:line (op)`) keeps the end
/// of its location (`elide_left`) and cuts its kernel in the middle; any other is cut in the
/// middle.
fn cut_row(row: &str, max: usize) -> String {
    let Some((kernel, at)) = row.split_once(" @ ") else { return cut_middle(row, max) };
    if row.chars().count() <= max {
        return row.to_string();
    }
    let kernel_room = kernel.chars().count().min(12);
    let at = elide_left(at, max.saturating_sub(kernel_room + 3));
    let kernel = cut_middle(kernel, max.saturating_sub(at.chars().count() + 3).max(1));
    format!("{kernel} @ {at}")
}

/// The narrowest a row may be cut to: a line check's file name, line and op whole beside a few
/// characters of its kernel.
fn row_floor(row: &str) -> usize {
    match row.split_once(" @ ") {
        Some((kernel, at)) => {
            row.chars().count().min(kernel.chars().count().min(12) + 3 + elide_left(at, 0).chars().count())
        }
        None => 0,
    }
}

fn cells(c: &Check) -> [String; 8] {
    let num = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "-".to_string());
    [
        c.verdict.as_str().to_uppercase(),
        visible(&c.arch).into_owned(),
        visible(&short_row(&c.row)).into_owned(),
        visible(&c.metric).into_owned(),
        num(c.baseline),
        num(c.current),
        visible(&c.change_text()).into_owned(),
        visible(&c.limits).into_owned(),
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

fn line(cells: &[String; 8], widths: &[usize; 8], shown: &[bool; 8], color: Option<Verdict>) -> String {
    let mut parts = Vec::with_capacity(8);
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate().filter(|(i, _)| shown[*i]) {
        let pad = w.saturating_sub(cell.chars().count());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_check_keeps_its_file_and_line() {
        let row = "check_results_kernel @ /usr/local/parallel_forall/posts/nvtx/manual_nvtx.cu:78 (global load)";
        let cut = cut_row(row, 48);
        assert!(cut.chars().count() <= 48 && cut.ends_with("manual_nvtx.cu:78 (global load)"), "{cut}");
        assert!(cut.starts_with("check"), "{cut}");
        assert_eq!(cut_row("stride/stride_8", 48), "stride/stride_8");
        assert!(row_floor(row) <= 48);
    }
}
