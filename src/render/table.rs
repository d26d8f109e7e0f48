//! The terminal table: one table per pattern, values rounded for people, colour only when
//! asked for (a terminal without `NO_COLOR`, or `--color always`).

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, Table as Comfy};

use super::columns::{cell, groups, label, notes, present, rank, Column};
use super::{Exporter, Style};
use crate::error::Result;
use crate::results::{Results, Row, Source};

pub(super) struct Table;

impl Exporter for Table {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let cols = present(results, &style.columns);
        let mut out = String::new();
        for notice in &results.notices {
            out.push_str(notice);
            out.push('\n');
        }
        for (pattern, rows) in groups(results) {
            let predicted = rows.iter().all(|r| r.source == Source::Predicted);
            let simulated = rows.iter().all(|r| r.source == Source::Simulated);
            let title = match pattern {
                Some(p) if predicted => format!("{p} (predicted by the address model)"),
                Some(p) if simulated => format!("{p} (simulated in GPGPU-Sim; cells: simulated (predicted))"),
                Some(p) => p.to_string(),
                None if simulated => "kernels (simulated in GPGPU-Sim)".to_string(),
                None => "kernels".to_string(),
            };
            out.push_str(&format!("\n{title}\n"));
            let mut t = Comfy::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            if !style.color {
                t.force_no_tty();
            } else {
                t.enforce_styling();
            }
            let ranks = rows.iter().any(|r| r.rank.is_some());
            let mut header = vec![Cell::new(if pattern.is_some() { "variant" } else { "kernel" })];
            if ranks {
                header.push(Cell::new("rank"));
            }
            if pattern.is_none() {
                header.push(Cell::new("launches"));
            }
            header.extend(cols.iter().map(|c| Cell::new(&c.header)));
            t.set_header(header);
            for r in &rows {
                let mut line = vec![Cell::new(shorten(&label(r), 48))];
                if ranks {
                    line.push(Cell::new(rank(r)).set_alignment(CellAlignment::Right));
                }
                if pattern.is_none() {
                    line.push(Cell::new(r.launches).set_alignment(CellAlignment::Right));
                }
                line.extend(cols.iter().map(|c| {
                    let mut cl = Cell::new(cell(r, c)).set_alignment(CellAlignment::Right);
                    if style.color {
                        if let Some(color) = severity(r, c) {
                            cl = cl.fg(color);
                        }
                    }
                    cl
                }));
                t.add_row(line);
            }
            out.push_str(&t.to_string());
            out.push('\n');
            out.push_str(&super::worst::terminal(&super::worst::of(results, pattern)));
        }
        let all: Vec<&Row> = results.rows.iter().collect();
        let notes = notes(&all);
        if !notes.is_empty() {
            out.push('\n');
            for n in notes {
                out.push_str(&format!("note: {n}\n"));
            }
        }
        Ok(out)
    }
}

/// A value far from its ideal shows in colour: red beyond twice the ideal, yellow above it
/// (the columns whose metric names an `ideal` in the catalogue: lower is better for them).
pub(super) fn severity(r: &Row, c: &Column) -> Option<Color> {
    let (v, ideal) = (r.metric(&c.key)?, r.metric(c.ideal.as_deref()?)?);
    if v > 2.0 * ideal {
        Some(Color::Red)
    } else if v > ideal * 1.05 {
        Some(Color::Yellow)
    } else {
        Some(Color::Green)
    }
}

/// Long C++ names are cut in the middle; JSON and CSV keep them whole.
pub(crate) fn shorten(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    let head: String = chars[..max / 2 - 1].iter().collect();
    let tail: String = chars[chars.len() - (max / 2 - 2)..].iter().collect();
    format!("{head}…{tail}")
}
