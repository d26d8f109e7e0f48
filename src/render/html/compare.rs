//! The page of `coalprof compare --format html`: the inputs, then per pattern one table with a
//! column group per input; later inputs' cells read `value (delta, ratio)` against the
//! reference, as in the terminal, and each change is marked better or worse by the metric's
//! direction in `metrics.toml` (a worse one is a regression).
//!
//! `render/compare/html.rs` builds the model below from the grid (which owns the cell texts);
//! this file only lays it out.

use maud::html;

use super::{anchor, page};
use crate::render::columns::Severity;

/// One column group's input.
#[derive(Debug, Clone)]
pub(crate) struct CompareInput {
    pub label: String,
    pub gpu: Option<String>,
    pub arch: Option<String>,
    pub path: String,
}

/// How a value moved against the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// The reference's own cell, or nothing to compare.
    None,
    Same,
    Better,
    Worse,
}

/// One cell: the exact value, the terminal's text, the change.
#[derive(Debug, Clone)]
pub(crate) struct CompareCell {
    pub value: Option<f64>,
    pub text: String,
    pub change: Change,
}

/// One matched row.
#[derive(Debug, Clone)]
pub(crate) struct CompareRow {
    pub key: String,
    pub name: String,
    /// Per input, one cell per shown metric.
    pub cells: Vec<Vec<CompareCell>>,
    /// Why the row was paired by base name only (the kernel of each input), marked `†`.
    pub base_name: Option<String>,
}

/// One pattern's table (user kernels form one, `pattern` None).
#[derive(Debug, Clone)]
pub(crate) struct CompareGroup {
    pub pattern: Option<String>,
    pub rows: Vec<CompareRow>,
}

/// The comparison, laid out: inputs, shown metrics (key, header), groups.
pub(crate) fn compare(inputs: &[CompareInput], shown: &[(String, String)], groups: &[CompareGroup]) -> String {
    let title = inputs.iter().map(|i| i.label.as_str()).collect::<Vec<_>>().join(" vs ");
    let regressions = (groups.iter().flat_map(|g| &g.rows).flat_map(|r| r.cells.iter().flatten()))
        .filter(|c| c.change == Change::Worse)
        .count();
    let body = html! {
        table.inputs {
            thead { tr { th {} th { "label" } th { "GPU" } th { "arch" } th { "input" } } }
            tbody { @for (n, i) in inputs.iter().enumerate() {
                tr {
                    td { @if n == 0 { "reference" } @else { (n + 1) } }
                    td { (i.label) } td { (i.gpu.as_deref().unwrap_or("–")) } td { (i.arch.as_deref().unwrap_or("–")) }
                    td { code { (i.path) } }
                }
            } }
        }
        p.regressions { (regressions) " cell(s) worse than the reference (by each metric's direction in metrics.toml)" }
        @if shown.is_empty() { p { "No shown metric has a value in these inputs (`--metric` chooses others)." } }
        @for g in groups {
            section.pattern id=(anchor("p", g.pattern.as_deref().unwrap_or("kernels"))) {
                h2 { (g.pattern.as_deref().unwrap_or("Kernels")) }
                div.wide { table.compare.sortable {
                    thead {
                        tr { th {} @for i in inputs { th.group colspan=(shown.len()) { (i.label) } } }
                        tr {
                            th { (if g.pattern.is_some() { "variant" } else { "kernel" }) }
                            @for _ in inputs { @for (key, header) in shown { th data-key=(key) title=(key) { (header) } } }
                        }
                    }
                    tbody { @for r in &g.rows {
                        tr data-key=(r.key) {
                            td {
                                code { (r.name) }
                                @if let Some(why) = &r.base_name { " " span.tag title=(why) { "matched by base name" } }
                            }
                            @for (i, cells) in r.cells.iter().enumerate() {
                                @for (c, (key, _)) in cells.iter().zip(shown) {
                                    @let class = match c.change { Change::Worse => Some(Severity::Bad), Change::Better => Some(Severity::Good), _ => None };
                                    td class=(super::cell_class(class)) data-input=(i) data-key=(key) data-v=[c.value.map(|v| v.to_string())] {
                                        (c.text)
                                        @match c.change {
                                            Change::Worse => span.tag.worse { "worse" },
                                            Change::Better => span.tag.better { "better" },
                                            _ => {},
                                        }
                                    }
                                }
                            }
                        }
                    } }
                } }
                @for why in g.rows.iter().filter_map(|r| r.base_name.as_ref()) { p.note { (why) } }
            }
        }
    };
    page(&format!("coalprof compare: {title}"), &[], body)
}
