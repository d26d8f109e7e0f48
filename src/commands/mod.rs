//! One module per subcommand: glue between settings and the pipeline, nothing more.

pub mod analyze;
pub mod baseline;
pub mod build;
pub mod check;
pub mod compare;
pub mod doctor;
pub mod gate;
pub mod model;
pub mod patterns;
pub mod profile;
pub mod report;
pub mod run;
pub mod spread;

use std::io::Write;

use crate::error::{Error, Result};

/// Write command output to stdout; a closed pipe (`| head`) is not an error.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::write("<stdout>", e)),
        _ => Ok(()),
    }
}
