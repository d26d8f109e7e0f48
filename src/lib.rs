//! coalprof: shows how CUDA kernels touch memory.
//!
//! The data flows one way: pattern catalogue → build (nvcc) → profile (ncu) → parse → frame
//! (derived metrics) → render / gate. Each step is one module; `commands` glues them together.

pub mod analyze;
pub mod cli;
pub mod commands;
pub mod error;
pub mod exit;
pub mod frame;
pub mod gate;
pub mod inputs;
pub mod logging;
pub mod metrics;
pub mod patterns;
pub mod render;
pub mod report;
pub mod results;
pub mod settings;
pub mod tools;

pub use error::{Error, Result};

use exit::Exit;
use settings::Settings;

/// Run one parsed command line.
pub fn run(cli: &cli::Cli) -> Result<Exit> {
    let env = settings::Env::read();
    let (common, settings) = settings::resolve(&cli.global, &cli.command, &env)?;
    match &settings {
        Settings::Analyze(s) => commands::analyze::run(&common, s),
    }
}
