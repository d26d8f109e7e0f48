//! Logs go to stderr through tracing (stdout carries data): warnings by default, `-v` info,
//! `-vv` debug, or any filter in `COALPROF_LOG`.

use tracing_subscriber::EnvFilter;

pub fn init(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = EnvFilter::try_from_env("COALPROF_LOG").unwrap_or_else(|_| EnvFilter::new(format!("coalprof={default}")));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .without_time()
        .with_target(false)
        .try_init();
}
