//! `coalprof compare`: several runs or reports side by side, one column group per input (the
//! first is the reference), matched by key in the frame (`frame::side_by_side`). This module is
//! the comparison's own shape, as `gate/` is for check results; `render/compare/` writes it in
//! every format.

use crate::frame::side_by_side::Matched;
use crate::metrics::Column;

/// One column group: an input (or the rows of one GPU of it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Input {
    pub label: String,
    pub gpu: Option<String>,
    pub arch: Option<String>,
    pub path: String,
}

/// The comparison every format renders.
#[derive(Debug, Clone)]
pub(crate) struct Comparison {
    pub inputs: Vec<Input>,
    pub rows: Vec<Matched>,
    /// The metrics the human formats show (JSON and CSV carry every metric).
    pub shown: Vec<Column>,
}

/// The columns for `keys` (the catalogue's headline columns when empty), only those some row
/// has; a key without a `[[column]]` is shown under its own name with two decimals.
pub(crate) fn shown(rows: &[Matched], keys: &[String], columns: &[Column]) -> Vec<Column> {
    let has = |k: &str| rows.iter().any(|r| r.values.iter().flatten().any(|m| m.contains_key(k)));
    if keys.is_empty() {
        return columns.iter().filter(|c| c.headline && has(&c.key)).cloned().collect();
    }
    (keys.iter().filter(|k| has(k)))
        .map(|k| columns.iter().find(|c| c.key == *k).cloned().unwrap_or_else(|| Column::plain(k)))
        .collect()
}
