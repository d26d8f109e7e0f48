//! The error type every module returns, and the exit code each kind of error maps to.

use std::path::PathBuf;

use crate::exit::Exit;

/// An error that ends a command. Messages are lowercase, name the file, metric or flag at fault,
/// and carry a `hint` where a fix is known; `main` prints them as `error: …` and `hint: …`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag, config file, rule or expression is wrong (exit 2).
    #[error("{message}")]
    Usage { message: String, hint: Option<String> },
    /// An input file is unreadable or malformed (exit 3).
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String, hint: Option<String> },
    /// An external tool ran and failed, or a kernel crashed or hung (exit 3).
    #[error("{0}")]
    Tool(#[from] crate::tools::ToolError),
    /// No GPU, driver, profiler or counter permission (exit 4).
    #[error("{message}")]
    Unavailable { message: String, hint: Option<String> },
    /// Nothing matched what was asked for (exit 5).
    #[error("{message}")]
    NothingMatched { message: String, hint: Option<String> },
    /// Writing an output failed (exit 3): the message names the path.
    #[error("cannot write `{path}`: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    /// Ctrl-C (exit 130): what finished before is on disk.
    #[error("interrupted (Ctrl-C); what finished before is saved")]
    Interrupted,
    /// A failure that is coalprof's own bug, not the input's or the user's (exit 70).
    #[error("internal error: {0} (a bug in coalprof: please report it)")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<crate::cancel::Interrupted> for Error {
    fn from(_: crate::cancel::Interrupted) -> Error {
        Error::Interrupted
    }
}

impl Error {
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage { message: message.into(), hint: None }
    }

    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Input { path: path.into(), message: message.into(), hint: None }
    }

    pub fn unavailable(message: impl Into<String>, hint: impl Into<String>) -> Error {
        Error::Unavailable { message: message.into(), hint: Some(hint.into()) }
    }

    pub fn nothing_matched(message: impl Into<String>, hint: Option<String>) -> Error {
        Error::NothingMatched { message: message.into(), hint }
    }

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
