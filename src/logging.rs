//! Logs go to stderr through tracing (stdout carries data): warnings by default, `-v` info,
//! `-vv` debug, or any filter in `COALPROF_LOG`.

#![allow(clippy::disallowed_methods)] // the logger starts before the settings: `NO_COLOR` for its own colour

use std::io::IsTerminal;

use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::EnvFilter;

pub(crate) fn init(verbose: u8) {
    let level = match verbose {
        0 => LevelFilter::WARN,
        1 => LevelFilter::INFO,
        _ => LevelFilter::DEBUG,
    };
    let fmt = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        // A closed stderr loses the log line; the default would `eprintln!` about it and panic.
        .log_internal_errors(false)
        .without_time()
        .with_target(false);
    // `EnvFilter` only for a filter the user wrote: it compiles regular expressions to parse
    // one, a tenth of a millisecond of every run; coalprof's own level needs a target and a level.
    let custom = std::env::var_os("COALPROF_LOG").and_then(|_| EnvFilter::try_from_env("COALPROF_LOG").ok());
    // An error means a logger is in place already (a test's): it is kept.
    match custom {
        Some(filter) => drop(fmt.with_env_filter(filter).try_init()),
        None => drop(fmt.finish().with(Targets::new().with_target("coalprof", level)).try_init()),
    }
}
