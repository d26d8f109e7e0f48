//! coalprof itself as an external tool: `coalprof mcp` runs each tool call as a child process
//! of this same executable, so a call's stdout is the child's (never the protocol's), a crash
//! or a runaway costs only that call, and cancelling a call stops the child.

use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;

use super::process::{self, Captured, Cmd};
use super::ToolError;

/// The executable to run, and the global flags every call is given (`--metrics`, `--reader`…
/// as the server was started with them).
#[derive(Debug, Clone)]
pub(crate) struct Coalprof {
    pub exe: PathBuf,
    pub global: Vec<OsString>,
}

impl Coalprof {
    /// `coalprof ARGS…` as the runner will run it.
    pub(crate) fn command(&self, args: Vec<OsString>) -> Cmd {
        // No colour: the text goes to an agent, not a terminal.
        Cmd::new(&self.exe).args(self.global.iter().cloned()).args(args).env("NO_COLOR", "1")
    }

    /// Run `coalprof ARGS…` to its end, or until `stop` resolves (then the child is stopped as
    /// Ctrl-C stops it, and the result is [`ToolError::Interrupted`]). A non-zero exit is no
    /// error here: the caller reads the child's `error:` and `hint:` lines.
    pub(crate) async fn run(&self, args: Vec<OsString>, stop: impl Future<Output = ()>) -> Result<Captured, ToolError> {
        process::run_until(&self.command(args), None, stop).await
    }
}
