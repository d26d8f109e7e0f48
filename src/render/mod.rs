//! Exporters: one file per output format behind one small trait. Every format renders the same
//! [`Results`]; the terminal table, markdown and CSV share the column model in [`columns`].

mod columns;
mod csv;
mod json;
mod markdown;
pub mod plot;
mod table;

use crate::error::Result;
use crate::results::Results;

pub use columns::{Column, Fmt, COLUMNS};
pub use plot::{plot_files, plots, Plot};

/// Output formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Markdown,
    Json,
    Csv,
}

/// How to render: options that are not part of the data.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// ANSI colour (terminal table only).
    pub color: bool,
}

/// One output format.
pub trait Exporter {
    fn render(&self, results: &Results, style: Style) -> Result<String>;
}

pub fn exporter(format: Format) -> Box<dyn Exporter> {
    match format {
        Format::Table => Box::new(table::Table),
        Format::Markdown => Box::new(markdown::Markdown { plots: false }),
        Format::Json => Box::new(json::Json),
        Format::Csv => Box::new(csv::Csv),
    }
}

/// Render `results` in `format`.
pub fn render(results: &Results, format: Format, style: Style) -> Result<String> {
    exporter(format).render(results, style)
}

/// Render `results` as it sits in a run folder: markdown links the folder's plots (the files
/// [`plot_files`] names) under each pattern's table; other formats are as [`render`].
pub fn render_with_plots(results: &Results, format: Format, style: Style) -> Result<String> {
    match format {
        Format::Markdown => markdown::Markdown { plots: true }.render(results, style),
        _ => render(results, format, style),
    }
}
