//! Markdown of `lines`, for a review: per kernel, its worst lines with their code and diagnosis.
//! Pipes and backticks in code and names are escaped so they cannot break the table.

use super::{code, kernels, location, via_note, LinesExporter, COLUMNS};
use crate::error::Result;
use crate::lines::{LineReport, LineRow};
use crate::render::Style;
use crate::text::markdown as escape;

pub(crate) struct Markdown;

impl LinesExporter for Markdown {
    fn render(&self, report: &LineReport, _: &Style) -> Result<String> {
        let mut out = String::from("# Which line wastes the bandwidth\n\n");
        for n in &report.notices {
            out.push_str(&format!("> {}\n\n", escape(n)));
        }
        for (title, rows) in kernels(report) {
            out.push_str(&format!("## `{}`\n\n", escape(&title)));
            out.push_str(&worst_lines(&rows));
        }
        Ok(out)
    }
}

/// The table of `rows` (worst first) and their diagnoses: also what `run`'s markdown shows
/// under each pattern.
pub(crate) fn worst_lines(rows: &[&LineRow]) -> String {
    let mut out = String::new();
    let mut header = vec!["location"];
    header.extend(COLUMNS.iter().map(|(h, _)| *h));
    header.push("code");
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let align: Vec<&str> =
        header.iter().enumerate().map(|(i, _)| if i == 0 || i == header.len() - 1 { ":--" } else { "--:" }).collect();
    out.push_str(&format!("|{}|\n", align.join("|")));
    for r in rows {
        let mut cells = vec![format!("`{}`", escape(&location(r)))];
        cells.extend(COLUMNS.iter().map(|(_, f)| escape(&f(r).unwrap_or_else(|| "–".into()))));
        let c = code(r);
        cells.push(if c.is_empty() { String::new() } else { format!("`{}`", escape(&c)) });
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out.push('\n');
    for r in rows.iter().filter(|r| r.diagnosis.is_some()) {
        out.push_str(&format!(
            "- `{}`: {}\n",
            escape(&location(r)),
            escape(r.diagnosis.as_deref().unwrap_or_default())
        ));
    }
    for (r, note) in rows.iter().filter_map(|r| Some((r, via_note(r)?))) {
        out.push_str(&format!("- `{}`: {}\n", escape(&location(r)), escape(&note)));
    }
    if rows.iter().any(|r| r.diagnosis.is_some() || !r.via.is_empty()) {
        out.push('\n');
    }
    out
}
