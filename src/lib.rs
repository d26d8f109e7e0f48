//! coalprof: shows how CUDA kernels touch memory.
//!
//! The data flows one way: an input (a report `import` reads; a pattern `build` compiled and
//! `measure` ran under ncu or GPGPU-Sim; the address `model`'s prediction) → parse (records) →
//! frame (sanity, group, join, derive, findings) → render / gate, and `store` writes a run
//! folder's files as `render` made them. Each step is one module named after it
//! (`ARCHITECTURE.md` draws the flow and the layers); `settings` turns the command line into
//! typed settings once (the output's format and style are `style`'s), `engine` is `run`'s one
//! loop and `commands` glues each subcommand together.

#![warn(unreachable_pub, missing_docs)]

// The library's deliberate API, for the integration tests, the benches and tools built on
// coalprof: the metric catalogue, the report readers, the address model and its patterns, the
// results and their exporters, the gate, the per-line attribution, and the tool wrappers and
// kernel builds the tests drive. Everything else is private to the crate.
pub mod build;
pub mod exit;
pub mod gate;
pub mod lines;
pub mod metrics;
pub mod model;
pub mod parse;
pub mod patterns;
pub mod render;
pub mod results;
pub mod store;
pub mod tools;
pub mod triton;

mod cancel;
mod cli;
mod commands;
mod compare;
mod engine;
mod error;
mod frame;
mod import;
mod logging;
mod mcp;
mod measure;
mod messages;
mod names;
mod runtime;
mod settings;
mod style;
mod text;

pub use commands::{baseline, check};
pub use error::{Error, Result};
pub use frame::manifest;
pub use measure::kernel_args;
pub use runtime::runtime;

use exit::Exit;
use settings::Settings;

/// The whole program: parse the command line, set up logging, run, and turn the outcome into
/// the exit code (an error is one `error:` line and maybe a `hint:` line on stderr).
pub fn main() -> std::process::ExitCode {
    use clap::Parser;
    let cli = cli::Cli::parse();
    logging::init(cli.global.verbose);
    match run(&cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            messages::error(&e, e.hint());
            e.exit().into()
        }
    }
}

/// Run one parsed command line.
fn run(cli: &cli::Cli) -> Result<Exit> {
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
        Settings::Task(s) => commands::run::run(&common, s),
        Settings::Profile(s) => commands::profile::run(&common, s),
        Settings::Analyze(s) => commands::analyze::run(&common, s),
        Settings::Lines(s) => commands::lines::run(&common, s),
        Settings::Triton(s) => commands::triton::run(&common, s),
        Settings::Build(s) => commands::build::run(&common, s),
        Settings::Report(run) => commands::report::run(&common, run),
        Settings::History(h) => commands::history::run(&common, h),
        Settings::Model(m) => commands::model::run(&common, m),
        Settings::Check(c) => commands::check::command(&common, c),
        Settings::Compare(c) => commands::compare::run(&common, c),
        Settings::BaselineUpdate(b) => commands::baseline::command(&common, b),
        Settings::Doctor => commands::doctor::run(&common),
        Settings::Mcp(m) => commands::mcp::run(m),
        Settings::Setup(req) => commands::setup::run(req),
        Settings::Completions(shell) => {
            // Made in memory first: clap_complete panics on a failed write (a closed pipe).
            let mut script = Vec::new();
            cli::write_completions(*shell, &mut script);
            commands::print(&String::from_utf8_lossy(&script))?;
            Ok(Exit::Ok)
        }
    }
}
