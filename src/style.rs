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
    /// The compact, versioned summary (`coalprof-summary/1` JSON, a few KB): per kernel the
    /// headline numbers against their ideal, the worst lines with their diagnosis, the gate's
    /// verdict (`docs/guide/summary.md`).
    Summary,
    /// The same summary as markdown, for people.
    SummaryMd,
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
    /// What the summary formats (`--format summary`, `summary-md`) say besides the data.
    pub summary: SummaryOptions,
}

/// What the summary (`render/summary.rs`) shows besides the result itself: how much of it, the
/// command that made it and the run folder that holds the whole of it.
#[derive(Debug, Clone, Default)]
pub struct SummaryOptions {
    /// `--summary-limit N`: the kernels, lines and checks shown, each (`Some(0)`: all). `None`:
    /// the default, a few of each and at most 4 KB of JSON.
    pub limit: Option<usize>,
    /// The command that made the result (`analyze`), set by the command.
    pub command: &'static str,
    /// The run folder the command saved, where it saved one.
    pub run_folder: Option<std::path::PathBuf>,
    /// The inputs, where the data does not name them (`check`'s verdicts, `lines`' rows).
    pub inputs: Vec<std::path::PathBuf>,
}

impl Style {
    /// The catalogue's columns, with or without colour.
    pub fn new(catalogue: &Catalogue, color: bool) -> Style {
        let units = (catalogue.columns.iter())
            .filter_map(|c| Some((c.key.clone(), catalogue.unit(&c.key)?.to_string())))
            .collect();
        Style {
            color,
            columns: catalogue.columns.clone(),
            directions: catalogue.directions(),
            units,
            width: None,
            summary: SummaryOptions::default(),
        }
    }

    /// A style without the catalogue (its columns, directions and units are empty): colour
    /// and width, all the verdict table uses.
    pub(crate) fn plain(color: bool, width: Option<usize>) -> Style {
        Style {
            color,
            columns: Vec::new(),
            directions: Default::default(),
            units: Default::default(),
            width,
            summary: SummaryOptions::default(),
        }
    }

    /// The same style, fitting terminal tables to `width` characters (`None`: no limit).
    pub fn with_width(self, width: Option<usize>) -> Style {
        Style { width, ..self }
    }

    /// The same style, with the summary's limit (`--summary-limit`).
    pub fn with_summary_limit(mut self, limit: Option<usize>) -> Style {
        self.summary.limit = limit;
        self
    }

    /// The same style, naming `inputs` in the summary where the data does not name them.
    pub fn with_inputs(mut self, inputs: &[std::path::PathBuf]) -> Style {
        self.summary.inputs = inputs.to_vec();
        self
    }

    /// The same style, for the summary of `command`'s result (saved in `run_folder`, if any).
    pub fn summarising(&self, command: &'static str, run_folder: Option<&std::path::Path>) -> Style {
        let mut style = self.clone();
        style.summary.command = command;
        style.summary.run_folder = run_folder.map(std::path::Path::to_path_buf);
        style
    }
}
