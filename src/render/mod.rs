//! Exporters: one file per output format behind one small trait. Each report type (results,
//! lines, history, a comparison, a check) has one function here that picks its format's
//! renderer; results' terminal table, markdown and CSV share the column model in `columns`.

mod benchmark;
mod columns;
mod compare;
mod csv;
pub(crate) mod fit;
mod folder;
pub(crate) mod gate;
pub(crate) mod history;
pub(crate) mod html;
mod json;
pub(crate) mod lines;
mod markdown;
mod plot;
pub(crate) mod summary;
mod table;
mod worst;

use crate::error::Result;
use crate::results::Results;

pub use crate::style::{Format, Style, SummaryOptions};

pub(crate) use columns::{Column, Fmt};
pub use folder::{results_file, run_folder};
/// SARIF of a line report, public for the schema test (`--sarif` writes it).
pub use lines::sarif::sarif;
pub(crate) use plot::{plot_files, plots};

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
        Format::Html => Box::new(html::Report { title: "coalprof results".into() }),
        Format::Bencher => Box::new(benchmark::Bencher),
        Format::GithubBenchmark => Box::new(benchmark::GithubBenchmark(crate::metrics::Direction::Lower)),
        Format::GithubBenchmarkBigger => Box::new(benchmark::GithubBenchmark(crate::metrics::Direction::Higher)),
        Format::Summary => Box::new(summary::Exporter { markdown: false }),
        Format::SummaryMd => Box::new(summary::Exporter { markdown: true }),
        Format::Svg => Box::new(Unsupported(format)),
    }
}

/// A format results are not written in: rendering says so (exit 2).
struct Unsupported(Format);

impl Exporter for Unsupported {
    fn render(&self, _: &Results, _: &Style) -> Result<String> {
        Err(crate::error::Error::usage(format!(
            "`--format {}` is for `history`; a run folder keeps each pattern's plots as SVG files",
            self.0.name()
        )))
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
        Format::Table
        | Format::Json
        | Format::Csv
        | Format::Html
        | Format::Bencher
        | Format::GithubBenchmark
        | Format::GithubBenchmarkBigger
        | Format::Summary
        | Format::SummaryMd
        | Format::Svg => render(results, format, style),
    }
}

/// The exporter of the line report in `format`. Chosen here, above both `lines/` and `html/`,
/// so that neither names the other's formats (no cycle between the rooms).
pub(crate) fn lines_exporter(format: Format) -> Box<dyn lines::LinesExporter> {
    match format {
        Format::Table => Box::new(lines::table::Table),
        Format::Markdown => Box::new(lines::markdown::Markdown),
        Format::Json => Box::new(lines::json::Json),
        Format::Csv => Box::new(lines::csv::Csv),
        Format::Html => Box::new(html::Lines { context: Default::default() }),
        Format::Summary => Box::new(summary::Exporter { markdown: false }),
        Format::SummaryMd => Box::new(summary::Exporter { markdown: true }),
        other @ (Format::Bencher | Format::GithubBenchmark | Format::GithubBenchmarkBigger | Format::Svg) => {
            Box::new(lines::Unsupported(other))
        }
    }
}

/// Render the line report in `format`.
pub(crate) fn render_lines(report: &crate::lines::LineReport, format: Format, style: &Style) -> Result<String> {
    lines_exporter(format).render(report, style)
}

/// Render `coalprof history` in `format`.
pub(crate) fn render_history(h: &crate::frame::history::History, format: Format, style: &Style) -> Result<String> {
    match format {
        Format::Table | Format::Markdown => Ok(history::table(h, style)),
        Format::Csv => history::csv(h),
        Format::Json => history::json(h),
        Format::Svg => Ok(history::svg(h, style)),
        Format::Html => Ok(html::history(h, style)),
        other @ (Format::Bencher
        | Format::GithubBenchmark
        | Format::GithubBenchmarkBigger
        | Format::Summary
        | Format::SummaryMd) => Err(other.unsupported("history")),
    }
}

/// Render `coalprof compare` in `format`.
pub(crate) fn render_compare(c: &crate::compare::Comparison, format: Format, style: &Style) -> Result<String> {
    match format {
        Format::Json => compare::json::render(c),
        Format::Csv => compare::csv::render(c),
        Format::Markdown => Ok(compare::grid::markdown(c)),
        Format::Table => Ok(compare::grid::table(c, style)),
        Format::Html => Ok(html::compare(c, style)),
        other @ (Format::Bencher
        | Format::GithubBenchmark
        | Format::GithubBenchmarkBigger
        | Format::Svg
        | Format::Summary
        | Format::SummaryMd) => Err(other.unsupported("compare")),
    }
}

/// Render `coalprof check`'s verdicts in `format`: the verdict table, the markdown summary,
/// every check as JSON or CSV, the HTML page; any other format is a usage error (exit 2), never
/// the table in its place. The CI outputs beside it are `gate::{junit, github, markdown}`'s.
pub(crate) fn render_check(report: &crate::gate::Report, format: Format, style: &Style) -> Result<String> {
    match format {
        Format::Json => {
            Ok(serde_json::to_string_pretty(report).map_err(|e| crate::error::Error::encoding("JSON", e))? + "\n")
        }
        Format::Html => Ok(html::check(report)),
        Format::Table => Ok(gate::table::render(report, style.color, style.width)),
        Format::Markdown => Ok(gate::markdown::render(report)),
        Format::Csv => gate::csv::render(report),
        Format::Summary | Format::SummaryMd => {
            summary::render(summary::Summary::of_check(report, style), format == Format::SummaryMd, style)
        }
        // No silent table in their place: a format the verdicts are not written in is refused.
        Format::Bencher | Format::GithubBenchmark | Format::GithubBenchmarkBigger | Format::Svg => {
            Err(format.unsupported("check"))
        }
    }
}
