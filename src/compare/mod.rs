//! `coalprof compare`: several runs or reports side by side, one column group per input (the
//! first is the reference), matched by key in the frame (`frame::side_by_side`). This module is
//! the comparison's own shape and its renderers, as `gate/` is for check results: the JSON
//! contract in [`json`], the human formats over one grid in [`grid`].

mod csv;
mod grid;
mod json;

use crate::error::Result;
use crate::frame::side_by_side::Matched;
use crate::render::{Fmt, Format, Style, COLUMNS};

pub use json::SCHEMA;

/// One column group: an input (or the rows of one GPU of it).
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub label: String,
    pub gpu: Option<String>,
    pub arch: Option<String>,
    pub path: String,
}

/// The comparison every format renders.
#[derive(Debug, Clone)]
pub struct Comparison {
    pub inputs: Vec<Input>,
    pub rows: Vec<Matched>,
    /// The metrics the human formats show (JSON and CSV carry every metric).
    pub shown: Vec<Shown>,
}

/// A metric the human formats show: the column model's header and rounding where it has the
/// metric, else the key and two decimals.
#[derive(Debug, Clone)]
pub struct Shown {
    pub key: String,
    pub header: String,
    pub format: Fmt,
}

/// The metrics a reviewer reads first, shown by default where some row has them.
pub const HEADLINE: &[&str] = &[
    "global_load_sectors_per_request",
    "global_store_sectors_per_request",
    "l2_amplification",
    "dram_amplification",
    "shared_load_bank_conflicts",
    "dram_bandwidth",
    "duration",
];

/// The columns for `keys` (the headline metrics when empty), only those some row has.
pub fn shown(rows: &[Matched], keys: &[String]) -> Vec<Shown> {
    let wanted: Vec<&str> = if keys.is_empty() { HEADLINE.to_vec() } else { keys.iter().map(String::as_str).collect() };
    let has = |k: &str| rows.iter().any(|r| r.values.iter().flatten().any(|m| m.contains_key(k)));
    (wanted.into_iter().filter(|k| has(k)))
        .map(|k| match COLUMNS.iter().find(|c| c.key == k) {
            Some(c) => Shown { key: k.into(), header: c.header.into(), format: c.format },
            None => Shown { key: k.into(), header: k.into(), format: Fmt::Ratio },
        })
        .collect()
}

/// Render `c` in `format`.
pub fn render(c: &Comparison, format: Format, style: Style) -> Result<String> {
    match format {
        Format::Json => json::render(c),
        Format::Csv => csv::render(c),
        Format::Markdown => Ok(grid::markdown(c)),
        Format::Table => Ok(grid::table(c, style)),
    }
}
