//! The terminal table of `lines`: one table per kernel, worst line first, its diagnoses under it.

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Table as Comfy};

use super::{code, kernels, location, LinesExporter, COLUMNS};
use crate::error::Result;
use crate::lines::LineReport;
use crate::render::table::shorten;
use crate::render::Style;

pub(crate) struct Table;

impl LinesExporter for Table {
    fn render(&self, report: &LineReport, style: &Style) -> Result<String> {
        // The notices go to stderr (the `lines` command says them), not into the table.
        let mut out = String::new();
        for (title, rows) in kernels(report) {
            out.push_str(&format!("\n{}\n", shorten(&title, 96)));
            let mut t = Comfy::new();
            t.load_preset(UTF8_FULL_CONDENSED);
            if style.color {
                t.enforce_styling();
            } else {
                t.force_no_tty();
            }
            let mut header = vec![Cell::new("location")];
            header.extend(COLUMNS.iter().map(|(h, _)| Cell::new(h)));
            header.push(Cell::new("code"));
            t.set_header(header);
            for r in &rows {
                let mut line = vec![Cell::new(shorten(&location(r), 40))];
                line.extend(
                    COLUMNS.iter().map(|(_, f)| {
                        Cell::new(f(r).unwrap_or_else(|| "–".into())).set_alignment(CellAlignment::Right)
                    }),
                );
                line.push(Cell::new(shorten(&code(r), 60)));
                t.add_row(line);
            }
            out.push_str(&t.to_string());
            out.push('\n');
            for r in rows.iter().filter(|r| r.diagnosis.is_some()) {
                out.push_str(&format!("  {}: {}\n", location(r), r.diagnosis.as_deref().unwrap_or_default()));
            }
        }
        if report.rows.is_empty() {
            out.push_str("no memory instructions with counters (the notes on stderr say why)\n");
        }
        Ok(out)
    }
}
