//! External tools at the edge: one module per tool over the one process runner.
//!
//! Nothing outside this module spawns a process. Each tool module builds the argument vector
//! and turns the tool's output into typed results or a [`ToolError`] that carries the command,
//! its exit status and its stderr.

pub(crate) mod coalprof;
pub mod cuobjdump;
pub(crate) mod git;
pub mod gpgpusim;
pub mod home;
pub mod locate;
pub mod ncu;
pub mod nvcc;
pub mod nvdisasm;
pub(crate) mod process;
pub mod setup;
pub(crate) mod slurm;
pub(crate) mod smi;
pub mod triton;

pub use crate::error::ToolError;

/// The constructor that needs the runner's types; the rest of [`ToolError`] is `error`'s.
impl ToolError {
    /// The one way to say "`what` failed": the command line, its exit status in words, and the
    /// end of what it printed on stderr (see [`ToolError::with_output`], [`ToolError::with_hint`]).
    pub fn failed(what: impl Into<String>, cmd: &process::Cmd, out: &process::Captured) -> ToolError {
        let status = match out.status.code() {
            Some(c) => format!("exit status: {c}"),
            None => "killed by a signal".into(),
        };
        ToolError::Failed {
            what: what.into(),
            command: cmd.to_string(),
            status,
            stderr: out.stderr.clone(),
            hint: None,
        }
    }
}
