//! The page of `coalprof lines --format html`: the notices, then per kernel (or launch) its
//! worst lines as a heat view over the code, and the whole table of its rows.

use maud::html;

use super::heat::heat;
pub(crate) use super::heat::Context;
use super::{anchor, num, page};
use crate::error::Result;
use crate::lines::{LineReport, LineRow};
use crate::render::lines::{kernels, location, via, LinesExporter, COLUMNS};
use crate::render::Style;

/// The lines page, with the code around each line from `context`.
pub(crate) struct Lines {
    pub context: Context,
}

impl LinesExporter for Lines {
    fn render(&self, report: &LineReport, _: &Style) -> Result<String> {
        let kernels = kernels(report);
        let facts: Vec<String> = vec![format!("{} kernel(s)", kernels.len())];
        let body = html! {
            @for n in &report.notices { p.notice { (n) } }
            @if kernels.is_empty() { p { "No memory instruction of any kernel has counters." } }
            @if kernels.len() > 1 {
                nav.toc { @for (title, rows) in &kernels { a href={ "#" (anchor("k", title)) } { (short(&heading(title, rows[0]), 60)) } } }
            }
            @for (title, rows) in &kernels {
                section.kernel id=(anchor("k", title)) data-kernel=(rows[0].kernel) {
                    h2 title=(title) { code { (heading(title, rows[0])) } }
                    @if rows[0].kernel.len() > 60 { details.name { summary { "full name" } code { (rows[0].kernel) } } }
                    @if let Some(w) = rows.first() {
                        p {
                            "Worst: " code { (location(w)) }
                            @if let Some(v) = via(w) { " (made inside " code { (v) } ")" }
                            @if let Some(d) = &w.diagnosis { " — " (d) }
                        }
                    }
                    h3 { "Source heat view" }
                    (heat(rows, &self.context))
                    details {
                        summary { "All " (rows.len()) " rows as a table" }
                        (rows_table(rows))
                    }
                }
            }
        };
        Ok(page("Which line wastes the bandwidth", &facts, body))
    }
}

/// The kernel's rows with the columns of the terminal table.
fn rows_table(rows: &[&LineRow]) -> maud::Markup {
    html! {
        div.wide { table.lines.sortable {
            thead { tr { th { "#" } th { "location" } @for (h, _) in COLUMNS { th { (h) } } th { "code" } } }
            tbody {
                @for (i, r) in rows.iter().enumerate() {
                    tr {
                        (num(Some((i + 1) as f64), &(i + 1).to_string(), None))
                        td { code { (location(r)) } @if let Some(v) = via(r) { br; small.via { "inside " code { (v) } } } }
                        @for (_, f) in COLUMNS { td.n { (f(r).unwrap_or_else(|| "–".into())) } }
                        td.src { code { (crate::render::lines::code(r)) } }
                    }
                }
            }
        } }
    }
}

/// The kernel's function name (template arguments kept, parameters cut) and what the title
/// adds to the kernel's name (`(2 launches summed)`).
fn heading(title: &str, first: &LineRow) -> String {
    let name = crate::render::columns::function_name(&first.kernel);
    let rest = title.strip_prefix(first.kernel.as_str()).unwrap_or("");
    short(&format!("{name}{rest}"), 140)
}

/// A long C++ kernel name cut for the table of contents.
fn short(s: &str, max: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= max {
        return s.to_string();
    }
    chars[..max - 1].iter().collect::<String>() + "…"
}
