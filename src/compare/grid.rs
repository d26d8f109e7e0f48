//! The human formats of a comparison, over one grid: per pattern (user kernels form one
//! group), a row per matched key, and per input a column group of the shown metrics. The
//! reference's cells hold its value; a later input's cells read `value (delta, ratio)` against
//! it, `(=)` when unchanged. A row some input lacks says which inputs have it.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table};

use super::Comparison;
use crate::frame::side_by_side::Matched;
use crate::render::Style;
use crate::render::{Column, Fmt};

/// The rows grouped by pattern, in first-seen order.
pub(super) fn groups(c: &Comparison) -> Vec<(Option<&str>, Vec<&Matched>)> {
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
pub(super) fn name(c: &Comparison, r: &Matched) -> String {
    let base = match (&r.pattern, &r.variant) {
        (Some(_), Some(v)) => v.clone(),
        _ => r.name.clone(),
    };
    let having: Vec<&str> =
        (r.values.iter().zip(&c.inputs)).filter(|(v, _)| v.is_some()).map(|(_, i)| i.label.as_str()).collect();
    if having.len() == c.inputs.len() {
        base
    } else {
        format!("{base} (only in {})", having.join(", "))
    }
}

pub(super) fn cell(r: &Matched, i: usize, s: &Column) -> String {
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
pub(super) fn markdown(c: &Comparison) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('`', "'");
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
            Some(p) => out.push_str(&format!("## `{p}`\n\n")),
            None => out.push_str("## Kernels\n\n"),
        }
        let shapes = with_shapes(&rows);
        let h = header(c, if pattern.is_some() { "variant" } else { "kernel" }, "<br>", shapes);
        out.push_str(&format!("| {} |\n", h.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | ")));
        let align: Vec<&str> = (0..h.len()).map(|i| if i == 0 { ":--" } else { "--:" }).collect();
        out.push_str(&format!("|{}|\n", align.join("|")));
        for r in rows {
            let mut line = vec![format!("`{}`", esc(&name(c, r)))];
            line.extend(values(c, r, shapes));
            out.push_str(&format!("| {} |\n", line.join(" | ")));
        }
        out.push('\n');
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

/// The terminal table: the same grid, one table per pattern, labels above metric names.
pub(super) fn table(c: &Comparison, style: &Style) -> String {
    let mut out = format!("{}\n", title(c));
    for (n, i) in c.inputs.iter().enumerate() {
        let role = if n == 0 { "reference" } else { "" };
        out.push_str(&format!("  {:<9} {}: {}\n", role, i.label, i.path));
    }
    for (pattern, rows) in groups(c) {
        out.push_str(&format!("\n{}\n", pattern.unwrap_or("kernels")));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        if style.color {
            t.enforce_styling();
        } else {
            t.force_no_tty();
        }
        let shapes = with_shapes(&rows);
        t.set_header(header(c, if pattern.is_some() { "variant" } else { "kernel" }, "\n", shapes));
        for r in rows {
            let mut line = vec![Cell::new(crate::render::shorten(&name(c, r), 60))];
            line.extend(values(c, r, shapes).into_iter().map(|v| Cell::new(v).set_alignment(CellAlignment::Right)));
            t.add_row(line);
        }
        out.push_str(&t.to_string());
        out.push('\n');
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
