//! The error type every module returns, and the exit code each kind of error maps to.

use std::path::PathBuf;

use crate::exit::Exit;

/// An error that ends a command. Messages are lowercase, name the file, metric or flag at fault,
/// and carry a `hint` where a fix is known; `main` prints them as `error: …` and `hint: …`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag, config file, rule or expression is wrong (exit 2).
    #[error("{message}")]
    Usage {
        /// What is wrong, in the user's words.
        message: String,
        /// A fix, when one is known (printed as `hint: …`).
        hint: Option<String>,
    },
    /// An input file is unreadable or malformed (exit 3).
    #[error("{path}: {message}")]
    Input {
        /// The input.
        path: PathBuf,
        /// What is wrong with it, and where.
        message: String,
        /// A fix, when one is known (printed as `hint: …`).
        hint: Option<String>,
    },
    /// An external tool ran and failed, or a kernel crashed or hung (exit 3).
    #[error(transparent)]
    Tool(#[from] crate::tools::ToolError),
    /// No GPU, driver, profiler or counter permission (exit 4).
    #[error("{message}")]
    Unavailable {
        /// What is wrong, in the user's words.
        message: String,
        /// A fix, when one is known (printed as `hint: …`).
        hint: Option<String>,
    },
    /// Nothing matched what was asked for (exit 5).
    #[error("{message}")]
    NothingMatched {
        /// What is wrong, in the user's words.
        message: String,
        /// A fix, when one is known (printed as `hint: …`).
        hint: Option<String>,
    },
    /// Writing an output failed (exit 3): the message names the path.
    #[error("cannot write `{path}`: {source}")]
    Write {
        /// The output.
        path: PathBuf,
        /// Why it could not be written.
        source: std::io::Error,
    },
    /// Ctrl-C (exit 130): what finished before is on disk.
    #[error("interrupted (Ctrl-C); what finished before is saved")]
    Interrupted,
    /// A failure that is coalprof's own bug, not the input's or the user's (exit 70).
    #[error("internal error: {0} (a bug in coalprof: please report it)")]
    Internal(String),
}

/// coalprof's results: [`Error`] unless told otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<crate::cancel::Interrupted> for Error {
    fn from(_: crate::cancel::Interrupted) -> Error {
        Error::Interrupted
    }
}

impl Error {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage { message: message.into(), hint: None }
    }

    /// An input error naming the input (exit 3).
    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Input { path: path.into(), message: message.into(), hint: None }
    }

    /// No profiler (exit 4), with how to get one.
    pub fn unavailable(message: impl Into<String>, hint: impl Into<String>) -> Error {
        Error::Unavailable { message: message.into(), hint: Some(hint.into()) }
    }

    /// Nothing matched (exit 5).
    pub fn nothing_matched(message: impl Into<String>, hint: Option<String>) -> Error {
        Error::NothingMatched { message: message.into(), hint }
    }

    /// An output that could not be encoded (`JSON`, `CSV`, `SARIF`): coalprof's own bug (exit 70).
    pub fn encoding(format: &str, e: impl std::fmt::Display) -> Error {
        Error::Internal(format!("cannot encode {format}: {e}"))
    }

    /// An output that could not be written (exit 3).
    pub fn write(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Write { path: path.into(), source }
    }

    /// Attach a hint line (printed after the error as `hint: …`).
    pub fn with_hint(mut self, h: impl Into<String>) -> Error {
        let h = Some(h.into());
        match &mut self {
            Error::Usage { hint, .. }
            | Error::Input { hint, .. }
            | Error::Unavailable { hint, .. }
            | Error::NothingMatched { hint, .. } => *hint = h,
            Error::Tool(_) | Error::Write { .. } | Error::Interrupted | Error::Internal(_) => {}
        }
        self
    }

    /// The fix, when one is known.
    pub fn hint(&self) -> Option<&str> {
        match self {
            Error::Usage { hint, .. }
            | Error::Input { hint, .. }
            | Error::Unavailable { hint, .. }
            | Error::NothingMatched { hint, .. } => hint.as_deref(),
            Error::Tool(e) => e.hint(),
            Error::Write { .. } | Error::Interrupted | Error::Internal(_) => None,
        }
    }

    /// The exit code this error ends the run with.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Usage { .. } => Exit::Usage,
            Error::Input { .. } | Error::Write { .. } => Exit::Input,
            Error::Tool(e) => e.exit(),
            Error::Unavailable { .. } => Exit::ProfilerUnavailable,
            Error::NothingMatched { .. } => Exit::NothingMatched,
            Error::Interrupted => Exit::Interrupted,
            Error::Internal(_) => Exit::Internal,
        }
    }
}
