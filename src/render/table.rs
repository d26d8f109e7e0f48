//! The terminal table: one table per pattern, values rounded for people, colour only when
//! asked for (a terminal without `NO_COLOR`, or `--color always`).

use super::columns::{cell, groups, label, notes, present, rank, severity, Column};
use super::fit::{Col, Cut};
use super::{Exporter, Style};
use crate::error::Result;
use crate::results::{Results, Row, Source};
use crate::text::{visible, wrap};

pub(super) struct Table;

impl Exporter for Table {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let cols = present(results, &style.columns);
        let width = style.width;
        let mut out = String::new();
        for notice in &results.notices {
            out.push_str(&wrap(&visible(notice), width, "", "  "));
        }
        for (pattern, rows) in groups(results) {
            let predicted = rows.iter().all(|r| r.source == Source::Predicted);
            let simulated = rows.iter().all(|r| r.source == Source::Simulated);
            let title = match pattern.map(visible) {
                Some(p) if predicted => format!("{p} (predicted by the address model)"),
                Some(p) if simulated => format!("{p} (simulated in GPGPU-Sim; cells: simulated (predicted))"),
                Some(p) => p.to_string(),
                None if simulated => "kernels (simulated in GPGPU-Sim)".to_string(),
                None => "kernels".to_string(),
            };
            out.push('\n');
            out.push_str(&wrap(&title, width, "", "  "));
            let fitted = super::fit::table(columns(&rows, pattern.is_some(), &cols, style), width, style.color);
            out.push_str(&fitted.text);
            out.push_str(&fitted.footer(width));
            out.push_str(&super::worst::terminal(&super::worst::of(results, pattern), width));
        }
        let all: Vec<&Row> = results.rows.iter().collect();
        let notes = notes(&all);
        if !notes.is_empty() {
            out.push('\n');
            for n in notes {
                out.push_str(&wrap(&visible(&n), width, "note: ", "  "));
            }
        }
        Ok(out)
    }
}

/// The table's columns, and the order they give way in when it is too wide: the name and the
/// first metric (the headline ratio) stay; the other metrics go from the right, those the
/// catalogue does not mark `headline` first, then the launch count, then the headline ones,
/// the rank last.
fn columns(rows: &[&Row], patterned: bool, cols: &[&Column], style: &Style) -> Vec<Col> {
    let mut out = vec![Col::new(
        if patterned { "variant" } else { "kernel" },
        rows.iter().map(|r| crate::text::cut_middle(&label(r), 48)).collect(),
    )
    .flex(Cut::Middle, 16)
    .prefer(48)];
    if rows.iter().any(|r| r.rank.is_some()) {
        out.push(Col::new("rank", rows.iter().map(|r| rank(r)).collect()).right().drops(300));
    }
    if !patterned {
        out.push(Col::new("launches", rows.iter().map(|r| r.launches.to_string()).collect()).right().drops(100));
    }
    let n = cols.len() as u32;
    for (i, c) in cols.iter().enumerate() {
        let mut col = Col::new(c.header.clone(), Vec::new()).right();
        col.cells = (rows.iter()).map(|r| (cell(r, c), if style.color { severity(r, c) } else { None })).collect();
        let from_right = n - i as u32;
        out.push(match (i, c.headline) {
            (0, _) => col,
            (_, false) => col.drops(from_right),
            (_, true) => col.drops(200 + from_right),
        });
    }
    out
}
