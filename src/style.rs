//! How results are to be shown, decided once by the settings: the output format (`--format`),
//! the style (colour, the catalogue's columns, directions and units, the width a table fits)
//! and what a row of `lines` is (`--by`). The exporters in `render/` follow them; they live
//! here, below `settings` and `render`, so that the settings name them without standing above
//! the exporters.

use crate::error::Error;
use crate::metrics::{Catalogue, Column, Directions};

/// Output formats (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
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
    /// One self-contained HTML page (inline CSS and SVG, nothing fetched).
    Html,
    /// Bencher Metric Format JSON (`bencher run --adapter json`).
    Bencher,
    /// github-action-benchmark's `customSmallerIsBetter` JSON: the lower-is-better metrics.
    GithubBenchmark,
    /// github-action-benchmark's `customBiggerIsBetter` JSON: the higher-is-better metrics.
    GithubBenchmarkBigger,
    /// An SVG trend (`history` only).
    Svg,
}

/// `lines`' rows: per source line, or per SASS instruction (`--by`). How the per-line sums are
/// shown, so it stands beside the format; `lines/` sums by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum By {
    /// One row per source line (and access kind).
    #[default]
    Line,
    /// One row per SASS instruction (and access kind).
    Instruction,
}

impl Format {
    /// The `--format` value, for messages: the name clap's `ValueEnum` derive gives it.
    pub fn name(self) -> String {
        let value = clap::ValueEnum::to_possible_value(&self).expect("no format is skipped by `--format`");
        value.get_name().to_string()
    }

    /// The usage error for a format `command` does not write.
    pub(crate) fn unsupported(self, command: &str) -> Error {
        Error::usage(format!("`{command}` does not write `--format {}`", self.name()))
    }
}

/// How to render: what is not part of the data.
#[derive(Debug, Clone)]
pub struct Style {
    /// ANSI colour (terminal table only).
    pub color: bool,
    /// The columns the human formats show, from the catalogue's `[[column]]`s.
    pub columns: Vec<Column>,
    /// Which way each metric is better (the catalogue's `direction`s): benchmark exports and
    /// the regressions a comparison marks.
    pub(crate) directions: Directions,
    /// Each column metric's unit in `metrics.toml` (benchmark exports name it).
    pub(crate) units: std::collections::BTreeMap<String, String>,
    /// The width terminal tables fit (`COLUMNS`, the terminal's, else 100); `None` with
    /// `--wide`: every column, as wide as it comes.
    pub width: Option<usize>,
}

impl Style {
    /// The catalogue's columns, with or without colour.
    pub fn new(catalogue: &Catalogue, color: bool) -> Style {
        let units = (catalogue.columns.iter())
            .filter_map(|c| Some((c.key.clone(), catalogue.unit(&c.key)?.to_string())))
            .collect();
        Style { color, columns: catalogue.columns.clone(), directions: catalogue.directions(), units, width: None }
    }

    /// A style without the catalogue (its columns, directions and units are empty): colour
    /// and width, all the verdict table uses.
    pub(crate) fn plain(color: bool, width: Option<usize>) -> Style {
        Style { color, columns: Vec::new(), directions: Default::default(), units: Default::default(), width }
    }

    /// The same style, fitting terminal tables to `width` characters (`None`: no limit).
    pub fn with_width(self, width: Option<usize>) -> Style {
        Style { width, ..self }
    }
}
