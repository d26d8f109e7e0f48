//! How an external tool failed: the error `tools/` returns (its command, exit status and
//! stderr), defined beside the one error type that wraps it so that `error` sits below `tools`.

use std::time::Duration;

use crate::exit::Exit;

/// How an external command failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The tool is not installed anywhere coalprof looked.
    #[error("`{tool}` not found (looked in: {})", searched.join(", "))]
    NotFound {
        /// The tool's name (`ncu`).
        tool: &'static str,
        /// Where coalprof looked, in order.
        searched: Vec<String>,
        /// How to install it or point coalprof at it.
        hint: String,
    },
    /// The program could not be started.
    #[error("cannot run `{command}`")]
    Spawn {
        /// The command line, as a shell would read it.
        command: String,
        /// Why it could not start.
        source: std::io::Error,
    },
    /// The program ran and failed; `what` says what failed in the user's words.
    #[error("{what}\n  command: {command}\n  {status}{}", frame(stderr))]
    Failed {
        /// What failed, in the user's words (`the kernel does not compile`).
        what: String,
        /// The command line, as a shell would read it.
        command: String,
        /// How it ended (`exit status 1`, `killed by signal 11`).
        status: String,
        /// The end of what it printed on stderr.
        stderr: String,
        /// A fix, when one is known.
        hint: Option<String>,
    },
    /// The program outlived its timeout; its whole process group was killed.
    #[error("`{command}` did not finish within {after:?} and was killed with its process group{}", frame(stderr))]
    Timeout {
        /// The command line, as a shell would read it.
        command: String,
        /// The timeout it ran under.
        after: Duration,
        /// The end of what it printed on stderr.
        stderr: String,
    },
    /// Ctrl-C: the child's process group was killed.
    #[error("interrupted while running `{command}`")]
    Interrupted {
        /// The command line, as a shell would read it.
        command: String,
    },
    /// The tool ran, but there is no GPU, driver, or counter permission to profile with.
    #[error("{message}")]
    NoProfiler {
        /// What is missing.
        message: String,
        /// How to get it.
        hint: String,
    },
    /// A batch task (a Slurm job) ended without finishing its work: its state, and the end of
    /// its log.
    #[error("slurm task `{task}` (job {job}) ended {ended}; its log `{}`:{tail}", log.display())]
    Task {
        /// The task's name (`stride`, `stride@a100`).
        task: String,
        /// The Slurm job id.
        job: u64,
        /// How it ended (`CANCELLED with exit code 0:15`).
        ended: String,
        /// Its log file.
        log: std::path::PathBuf,
        /// The log's last lines, indented.
        tail: String,
    },
    /// An argument the tool would misread, refused before it runs: nvcc hands file names and
    /// flags to `sh -c` inside double quotes, so a `$(…)` in a name would run as shell code.
    #[error("{message}")]
    Refused {
        /// What was refused and why.
        message: String,
        /// What to do instead.
        hint: String,
    },
    /// ncu ran but profiled nothing.
    #[error("{message}")]
    NoKernels {
        /// What ncu said.
        message: String,
        /// What to check (the filter, the program's arguments).
        hint: String,
    },
}

/// Indent a captured stderr under the error so it reads as part of it.
fn frame(stderr: &str) -> String {
    let body = stderr.trim_end();
    if body.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = body.lines().collect();
    let shown = &lines[lines.len().saturating_sub(20)..];
    format!("\n  stderr:\n    {}", shown.join("\n    "))
}

impl ToolError {
    /// Show `text` as the tool's output instead of its stderr (nvcc's diagnostics go to
    /// stdout too; ncu prints its `==ERROR==` lines on stdout).
    pub fn with_output(mut self, text: String) -> ToolError {
        if let ToolError::Failed { stderr, .. } = &mut self {
            *stderr = text;
        }
        self
    }

    /// Attach the fix, printed as `hint: …` (kinds without a hint field keep their own words).
    pub fn with_hint(mut self, h: impl Into<String>) -> ToolError {
        match &mut self {
            ToolError::Failed { hint, .. } => *hint = Some(h.into()),
            ToolError::NotFound { hint, .. }
            | ToolError::NoProfiler { hint, .. }
            | ToolError::NoKernels { hint, .. }
            | ToolError::Refused { hint, .. } => *hint = h.into(),
            _ => {}
        }
        self
    }

    /// The exit code this failure ends the run with.
    pub fn exit(&self) -> Exit {
        match self {
            ToolError::NotFound { .. } | ToolError::NoProfiler { .. } => Exit::ProfilerUnavailable,
            ToolError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Exit::ProfilerUnavailable
            }
            ToolError::NoKernels { .. } => Exit::NothingMatched,
            ToolError::Interrupted { .. } => Exit::Interrupted,
            ToolError::Spawn { .. }
            | ToolError::Failed { .. }
            | ToolError::Timeout { .. }
            | ToolError::Task { .. }
            | ToolError::Refused { .. } => Exit::Input,
        }
    }

    /// The fix, when one is known.
    pub fn hint(&self) -> Option<&str> {
        match self {
            ToolError::NotFound { hint, .. }
            | ToolError::NoProfiler { hint, .. }
            | ToolError::NoKernels { hint, .. }
            | ToolError::Refused { hint, .. } => Some(hint),
            ToolError::Failed { hint, .. } => hint.as_deref(),
            _ => None,
        }
    }
}
