//! coalprof's entry point: parse, set up logging, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;
use coalprof::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    coalprof::logging::init(cli.global.verbose);
    match coalprof::run(&cli) {
        Ok(exit) => exit.into(),
        Err(e) => {
            eprintln!("error: {e}");
            if let Some(h) = e.hint() {
                eprintln!("hint: {h}");
            }
            e.exit().into()
        }
    }
}
