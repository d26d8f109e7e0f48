//! The comparison as an HTML page: the grid's own cell texts, each later input's change marked
//! better or worse by the metric's direction, laid out by `render::html`.

use super::grid::{base_name_note, cell, groups, name};
use crate::compare::Comparison;
use crate::metrics::Direction;
use crate::render::html::{compare, Change, CompareCell, CompareGroup, CompareInput, CompareRow};
use crate::render::Style;

pub(crate) fn page(c: &Comparison, style: &Style) -> String {
    let inputs: Vec<CompareInput> = (c.inputs.iter())
        .map(|i| CompareInput {
            label: i.label.clone(),
            gpu: i.gpu.clone(),
            arch: i.arch.clone(),
            path: i.path.clone(),
        })
        .collect();
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
    compare(&inputs, &shown, &groups)
}
