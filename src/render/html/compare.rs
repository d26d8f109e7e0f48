//! The page of `coalprof compare --format html`: the inputs, then per pattern one table with a
//! column group per input; later inputs' cells read `value (delta, ratio)` against the
//! reference, as in the terminal, and each change is marked better or worse by the metric's
//! direction in `metrics.toml` (a worse one is a regression).
//!
//! `compare` builds the model below from the grid (`render/compare/grid.rs`, which owns the
//! cell texts); `layout` lays it out.

use maud::html;

use super::{anchor, page};
use crate::compare::{Comparison, Input};
use crate::metrics::Direction;
use crate::render::columns::Severity;
use crate::render::compare::grid::{base_name_note, cell, groups, name};
use crate::render::Style;

/// How a value moved against the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// The reference's own cell, or nothing to compare.
    None,
    Same,
    Better,
    Worse,
}

/// One cell: the exact value, the terminal's text, the change.
#[derive(Debug, Clone)]
struct CompareCell {
    value: Option<f64>,
    text: String,
    change: Change,
}

/// One matched row.
#[derive(Debug, Clone)]
struct CompareRow {
    key: String,
    name: String,
    /// Per input, one cell per shown metric.
    cells: Vec<Vec<CompareCell>>,
    /// Why the row was paired by base name only (the kernel of each input), marked `†`.
    base_name: Option<String>,
}

/// One pattern's table (user kernels form one, `pattern` None).
#[derive(Debug, Clone)]
struct CompareGroup {
    pattern: Option<String>,
    rows: Vec<CompareRow>,
}

/// The page of `c`: the grid's own cell texts (`render/compare/grid.rs`), each later input's
/// change marked better or worse by the metric's direction.
pub(crate) fn compare(c: &Comparison, style: &Style) -> String {
    let shown: Vec<(String, String)> = c.shown.iter().map(|s| (s.key.clone(), s.header.clone())).collect();
    let groups: Vec<CompareGroup> = (groups(c).into_iter())
        .map(|(pattern, rows)| CompareGroup {
            pattern: pattern.map(str::to_string),
            rows: (rows.into_iter())
                .map(|r| CompareRow {
                    key: r.key.clone(),
                    name: name(c, r),
                    base_name: base_name_note(c, r, usize::MAX),
                    cells: (0..c.inputs.len())
                        .map(|i| {
                            (c.shown.iter())
                                .map(|s| {
                                    let value = r.values[i].as_ref().and_then(|m| m.get(&s.key)).copied();
                                    let dir = style.directions.get(&s.key).copied().unwrap_or_default();
                                    let change = match r.deltas.get(i).and_then(|d| d.get(&s.key)) {
                                        _ if i == 0 => Change::None,
                                        Some(d) if *d == 0.0 => Change::Same,
                                        Some(d) if (*d > 0.0) == (dir == Direction::Lower) => Change::Worse,
                                        Some(_) => Change::Better,
                                        None => Change::None,
                                    };
                                    CompareCell { value, text: cell(r, i, s), change }
                                })
                                .collect()
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    layout(&c.inputs, &shown, &groups)
}

/// The comparison, laid out: inputs, shown metrics (key, header), groups.
fn layout(inputs: &[Input], shown: &[(String, String)], groups: &[CompareGroup]) -> String {
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
