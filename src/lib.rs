//! coalprof: shows how CUDA kernels touch memory.
//!
//! The data flows one way: patterns → build (nvcc) → profile (ncu) → import → parse → frame
//! (group, join, derive, compare) → render / gate. Each step is one module named after it
//! (`ARCHITECTURE.md` draws the flow); `commands` glues them together.

pub mod build;
pub mod cancel;
pub mod cli;
pub mod commands;
pub mod compare;
pub mod error;
pub mod exit;
pub mod frame;
pub mod gate;
pub mod import;
pub mod lines;
pub mod logging;
pub mod metrics;
pub mod model;
pub mod parse;
pub mod patterns;
pub mod profile;
pub mod render;
pub mod results;
pub mod runtime;
pub mod settings;
pub mod slurm;
pub mod spread;
pub mod store;
pub mod tools;

pub use error::{Error, Result};

use exit::Exit;
use settings::Settings;

/// Run one parsed command line.
pub fn run(cli: &cli::Cli) -> Result<Exit> {
    cancel::install();
    let started = std::time::Instant::now();
    let outcome = dispatch(cli);
    let (total, children) = (started.elapsed(), tools::process::child_time());
    if !children.is_zero() {
        let own = total.saturating_sub(children);
        tracing::info!(
            "time: {:.3} s in all, {:.3} s in child processes, {:.3} s in coalprof itself ({:.1}%)",
            total.as_secs_f64(),
            children.as_secs_f64(),
            own.as_secs_f64(),
            100.0 * own.as_secs_f64() / total.as_secs_f64().max(1e-9)
        );
    }
    outcome
}

fn dispatch(cli: &cli::Cli) -> Result<Exit> {
    let env = settings::Env::read();
    let (common, settings) = settings::resolve(&cli.global, &cli.command, &env)?;
    match &settings {
        Settings::Patterns(s) => commands::patterns::run(&common, s),
        Settings::Run(s) => commands::run::run(&common, s),
        Settings::Profile(s) => commands::profile::run(&common, s),
        Settings::Analyze(s) => commands::analyze::run(&common, s),
        Settings::Lines(s) => commands::lines::run(&common, s),
        Settings::Build(s) => commands::build::run(&common, s),
        Settings::Report(run) => commands::report::run(&common, run),
        Settings::Model(m) => commands::model::run(&common, m),
        Settings::Check(c) => commands::check::command(&common, c),
        Settings::Compare(c) => commands::compare::run(&common, c),
        Settings::BaselineUpdate(b) => commands::baseline::command(&common, b),
        Settings::Doctor => commands::doctor::run(&common),
        Settings::Completions(shell) => {
            cli::write_completions(*shell, &mut std::io::stdout().lock());
            Ok(Exit::Ok)
        }
    }
}
