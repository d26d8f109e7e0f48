//! The command line, declared with clap derive. Only `settings.rs` reads these structs: it
//! turns them, `metrics.toml` and the environment into typed settings once.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Shows how CUDA kernels touch memory: sectors per request, amplification, bandwidth and
/// shared-memory bank conflicts, measured with Nsight Compute or predicted by an address model.
#[derive(Debug, Parser)]
#[command(name = "coalprof", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Output format on stdout.
    #[arg(long, global = true, value_enum, default_value_t = FormatArg::Table)]
    pub format: FormatArg,
    /// When to colour the terminal table (`NO_COLOR` is honoured under `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// More logs on stderr (-v info, -vv debug); `COALPROF_LOG` takes a tracing filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The metrics file (default: ./metrics.toml, else the built-in one).
    #[arg(long, global = true, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// The ncu to use.
    #[arg(long, global = true, env = "COALPROF_NCU", value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// The nvcc to use.
    #[arg(long, global = true, env = "COALPROF_NVCC", value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum FormatArg {
    Table,
    Markdown,
    Json,
    Csv,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Turn existing ncu reports (CSV of any page and version, or .ncu-rep) into the table.
    Analyze(AnalyzeArgs),
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// ncu CSV files, `.ncu-rep` reports (read through `ncu --import`), or `-` for stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One row per launch instead of one per kernel and launch shape.
    #[arg(long)]
    pub per_launch: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
