//! Exporters: one file per output format behind one small trait. Every format renders the same
//! [`Results`]; the terminal table, markdown and CSV share the column model in `columns`.

mod columns;
mod csv;
mod json;
pub(crate) mod lines;
mod markdown;
mod plot;
mod table;
mod worst;

use crate::error::Result;
use crate::metrics::Catalogue;
use crate::results::Results;

pub(crate) use columns::{Column, Fmt};
pub(crate) use plot::{plot_files, plots};
pub(crate) use table::shorten;

/// Output formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The terminal table.
    #[default]
    Table,
    /// Markdown for a review.
    Markdown,
    /// The results JSON (`coalprof/1`).
    Json,
    /// CSV: a line per row, every metric.
    Csv,
}

/// How to render: what is not part of the data.
#[derive(Debug, Clone)]
pub struct Style {
    /// ANSI colour (terminal table only).
    pub color: bool,
    /// The columns the human formats show, from the catalogue's `[[column]]`s.
    pub columns: Vec<Column>,
}

impl Style {
    /// The catalogue's columns, with or without colour.
    pub fn new(catalogue: &Catalogue, color: bool) -> Style {
        Style { color, columns: catalogue.columns.clone() }
    }
}

/// One output format.
pub trait Exporter {
    /// `results` in this format.
    fn render(&self, results: &Results, style: &Style) -> Result<String>;
}

/// The exporter of `format`.
pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Markdown => Box::new(markdown::Markdown { plots: false }),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
    }
}

/// Render `results` in `format`.
pub fn render(results: &Results, format: Format, style: &Style) -> Result<String> {
    exporter(format).render(results, style)
}

/// Render `results` as it sits in a run folder: markdown links the folder's plots (the files
/// `plot_files` names) under each pattern's table; other formats are as [`render`].
pub fn render_with_plots(results: &Results, format: Format, style: &Style) -> Result<String> {
    match format {
        Format::Markdown => markdown::Markdown { plots: true }.render(results, style),
        _ => render(results, format, style),
    }
}

/// A file name from any kernel or run name: `/`, `<>`, `:`, `,`, spaces and the like become `_`.
pub fn safe_name(s: &str) -> String {
    let cleaned: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let trimmed = cleaned.trim_matches('.');
    let mut out: String = trimmed.chars().take(120).collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}
