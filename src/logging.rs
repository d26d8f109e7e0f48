//! Logs go to stderr through tracing (stdout carries data): warnings by default, `-v` info,
//! `-vv` debug, or any filter in `COALPROF_LOG`.

#![allow(clippy::disallowed_methods)] // the logger starts before the settings: `NO_COLOR` for its own colour

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub(crate) fn init(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter =
        EnvFilter::try_from_env("COALPROF_LOG").unwrap_or_else(|_| EnvFilter::new(format!("coalprof={default}")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .without_time()
        .with_target(false)
        .try_init();
}
