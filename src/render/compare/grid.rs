//! The human formats of a comparison, over one grid: per pattern (user kernels form one
//! group), a row per matched key, and per input a column group of the shown metrics. The
//! reference's cells hold its value; a later input's cells read `value (delta, ratio)` against
//! it, `(=)` when unchanged. A row some input lacks says which inputs have it; a row paired by
//! base name only is marked `†`, with a footnote naming each side's kernel.

use crate::compare::Comparison;
use crate::frame::side_by_side::Matched;
use crate::render::fit::{self, Col, Cut};
use crate::render::Style;
use crate::render::{Column, Fmt};
use crate::text::{cut_middle, markdown as esc, visible, wrap};

/// The mark of a row paired by base name.
pub(super) const BASE_NAME_MARK: &str = "†";

/// The rows grouped by pattern, in first-seen order.
pub(crate) fn groups(c: &Comparison) -> Vec<(Option<&str>, Vec<&Matched>)> {
    let mut out: Vec<(Option<&str>, Vec<&Matched>)> = Vec::new();
    for r in &c.rows {
        let p = r.pattern.as_deref();
        match out.iter_mut().find(|(k, _)| *k == p) {
            Some((_, rows)) => rows.push(r),
            None => out.push((p, vec![r])),
        }
    }
    out
}

/// The row's name, with the inputs that have it when some do not.
pub(crate) fn name(c: &Comparison, r: &Matched) -> String {
    let base = match (&r.pattern, &r.variant) {
        (Some(_), Some(v)) => v.clone(),
        _ => r.name.clone(),
    };
    let having: Vec<&str> =
        (r.values.iter().zip(&c.inputs)).filter(|(v, _)| v.is_some()).map(|(_, i)| i.label.as_str()).collect();
    let base = if r.by_base_name.iter().any(|b| *b) { format!("{base} {BASE_NAME_MARK}") } else { base };
    if having.len() == c.inputs.len() {
        base
    } else {
        format!("{base} (only in {})", having.join(", "))
    }
}

/// The footnote of a row paired by base name: `† cub::DeviceScanKernel: matched by base name
/// (…): A: cub::DeviceScanKernel<Policy600>; B: cub::DeviceScanKernel<Policy900, float>`, each
/// kernel as matched (no parameters), cut in the middle to `max` characters.
pub(crate) fn base_name_note(c: &Comparison, r: &Matched, max: usize) -> Option<String> {
    if !r.by_base_name.iter().any(|b| *b) {
        return None;
    }
    let sides: Vec<String> = (c.inputs.iter().zip(&r.kernels))
        .filter_map(|(i, k)| {
            Some(format!("{}: {}", i.label, cut_middle(&crate::names::match_name(k.as_deref()?), max)))
        })
        .collect();
    Some(format!(
        "{BASE_NAME_MARK} {}: matched by base name (the only one of its name left unmatched in each input; the template arguments differ): {}",
        r.name,
        sides.join("; ")
    ))
}

pub(crate) fn cell(r: &Matched, i: usize, s: &Column) -> String {
    let Some(v) = r.values[i].as_ref().and_then(|m| m.get(&s.key)) else { return "–".into() };
    let value = s.format.show(*v);
    if i == 0 {
        return value;
    }
    match (r.deltas[i].get(&s.key), r.ratios[i].get(&s.key)) {
        (Some(d), _) if *d == 0.0 => format!("{value} (=)"),
        (Some(d), Some(q)) => format!("{value} ({}, {q:.2}x)", delta(s.format, *d)),
        (Some(d), None) => format!("{value} ({})", delta(s.format, *d)),
        (None, _) => value,
    }
}

/// A signed difference in the metric's own unit (a share's in percentage points).
fn delta(f: Fmt, d: f64) -> String {
    let sign = if d < 0.0 { "-" } else { "+" };
    let magnitude = match f {
        Fmt::Percent => format!("{:.0} pp", d.abs() * 100.0),
        Fmt::Factor => Fmt::Ratio.show(d.abs()),
        other => other.show(d.abs()),
    };
    format!("{sign}{magnitude}")
}

/// Whether the group's rows show each input's launch shape: user kernels, matched by name,
/// whose shapes may differ from input to input.
fn with_shapes(rows: &[&Matched]) -> bool {
    rows.iter().any(|r| r.pattern.is_none() && r.shapes.iter().any(Option::is_some))
}

fn header(c: &Comparison, first: &str, sep: &str, shapes: bool) -> Vec<String> {
    let mut h = vec![first.to_string()];
    for i in &c.inputs {
        if shapes {
            h.push(format!("{}{sep}grid / block", i.label));
        }
        h.extend(c.shown.iter().map(|s| format!("{}{sep}{}", i.label, s.header)));
    }
    h
}

fn values(c: &Comparison, r: &Matched, shapes: bool) -> Vec<String> {
    (0..c.inputs.len())
        .flat_map(|i| {
            let shape = shapes.then(|| compact(r.shapes[i].as_deref()));
            shape.into_iter().chain(c.shown.iter().map(move |s| cell(r, i, s)))
        })
        .collect()
}

/// `grid 256x1x1, block 128x1x1` → `256x1x1 / 128x1x1`.
fn compact(shape: Option<&str>) -> String {
    shape.map_or("–".into(), |s| s.replace("grid ", "").replace(", block ", " / "))
}

fn title(c: &Comparison) -> String {
    c.inputs.iter().map(|i| i.label.as_str()).collect::<Vec<_>>().join(" vs ")
}

/// Markdown a reviewer pastes: the inputs, then one table per pattern.
pub(crate) fn markdown(c: &Comparison) -> String {
    let mut out = format!("# coalprof compare: {}\n\n", esc(&title(c)));
    out.push_str("| | label | GPU | arch | input |\n|:--|:--|:--|:--|:--|\n");
    for (n, i) in c.inputs.iter().enumerate() {
        let role = if n == 0 { "reference".to_string() } else { (n + 1).to_string() };
        let opt = |o: &Option<String>| o.as_deref().map_or("–".to_string(), esc);
        out.push_str(&format!(
            "| {role} | `{}` | {} | {} | `{}` |\n",
            esc(&i.label),
            opt(&i.gpu),
            opt(&i.arch),
            esc(&i.path)
        ));
    }
    out.push('\n');
    for (pattern, rows) in groups(c) {
        match pattern {
            Some(p) => out.push_str(&format!("## `{}`\n\n", esc(p))),
            None => out.push_str("## Kernels\n\n"),
        }
        let shapes = with_shapes(&rows);
        let h = header(c, if pattern.is_some() { "variant" } else { "kernel" }, "<br>", shapes);
        out.push_str(&format!("| {} |\n", h.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | ")));
        let align: Vec<&str> = (0..h.len()).map(|i| if i == 0 { ":--" } else { "--:" }).collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for r in &rows {
            let mut line = vec![format!("`{}`", esc(&name(c, r)))];
            line.extend(values(c, r, shapes));
            out.push_str(&format!("| {} |\n", line.join(" | ")));
        }
        out.push('\n');
        for note in rows.iter().filter_map(|r| base_name_note(c, r, usize::MAX)) {
            out.push_str(&format!("{}\n\n", esc(&note)));
        }
    }
    if c.shown.is_empty() {
        out.push_str("No shown metric has a value in these inputs (`--metric` chooses others).\n");
    } else if let Some(reference) = c.inputs.first().filter(|_| c.inputs.len() > 1) {
        out.push_str(&format!(
            "Cells of later inputs read `value (delta, ratio)` against `{}`; `(=)` is unchanged.\n",
            esc(&reference.label)
        ));
    }
    out
}

/// The terminal table: the same grid, one table per pattern, labels above metric names. It fits
/// the width: the launch shapes go first, then the shown metrics from the right (each input's
/// column of one metric together), those that change between the inputs last; the first
/// metric stays.
pub(crate) fn table(c: &Comparison, style: &Style) -> String {
    let width = style.width;
    let mut out = wrap(&visible(&title(c)), width, "", "  ");
    for (n, i) in c.inputs.iter().enumerate() {
        let role = if n == 0 { "reference" } else { "" };
        let line = format!("{:<9} {}: {}", role, visible(&i.label), visible(&i.path));
        out.push_str(&wrap(&line, width, "  ", "              "));
    }
    for (pattern, rows) in groups(c) {
        out.push('\n');
        out.push_str(&wrap(&visible(pattern.unwrap_or("kernels")), width, "", "  "));
        let shapes = with_shapes(&rows);
        let first = if pattern.is_some() { "variant" } else { "kernel" };
        let mut cols = vec![Col::new(first, rows.iter().map(|r| cut_middle(&name(c, r), 60)).collect())
            .flex(Cut::Middle, 16)
            .prefer(60)];
        // A later column's header is its input's label over the metric's; fitting, a long label
        // wraps to the column's own width rather than widen it.
        let head = |label: &str, metric: &str, cells: &[String]| {
            let own = cells.iter().map(|s| s.chars().count()).chain([metric.chars().count()]).max().unwrap_or(0);
            match width {
                Some(_) if label.chars().count() > own => {
                    format!("{}\n{metric}", wrap(label, Some(own.max(14)), "", "").trim_end())
                }
                _ => format!("{label}\n{metric}"),
            }
        };
        let n = c.shown.len() as u32;
        for (i, input) in c.inputs.iter().enumerate() {
            if shapes {
                let cells: Vec<String> = rows.iter().map(|r| compact(r.shapes[i].as_deref())).collect();
                cols.push(Col::new(head(&input.label, "grid / block", &cells), cells).right().drops(0));
            }
            for (k, s) in c.shown.iter().enumerate() {
                let cells: Vec<String> = rows.iter().map(|r| cell(r, i, s)).collect();
                let col = Col::new(head(&input.label, &s.header, &cells), cells).right();
                // A metric that changes somewhere in the group stays longer than one that does not.
                let changes = rows.iter().any(|r| r.deltas.iter().any(|d| d.get(&s.key).is_some_and(|v| *v != 0.0)));
                cols.push(if k == 0 { col } else { col.drops(n - k as u32 + if changes { n } else { 0 }) });
            }
        }
        let fitted = fit::table(cols, width, style.color);
        out.push_str(&fitted.text);
        out.push_str(&fitted.footer(width));
        for note in rows.iter().filter_map(|r| base_name_note(c, r, 60)) {
            out.push_str(&wrap(&visible(&note), width, "", "  "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_carry_their_sign_and_unit() {
        assert_eq!(delta(Fmt::Ratio, -2.5), "-2.50");
        assert_eq!(delta(Fmt::Percent, 0.25), "+25 pp");
        assert_eq!(delta(Fmt::Factor, 1.0), "+1.00");
        assert_eq!(delta(Fmt::Count, 1024.0), "+1,024");
    }
}
