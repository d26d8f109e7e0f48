//! The error type every module returns, and the exit code each kind of error maps to.
//!
//! The failures it wraps are defined here too (`tool.rs`: an external tool's, `setup.rs`:
//! `coalprof setup`'s), so that `error` uses only the exit codes and every room can use it.

mod setup;
mod tool;

use std::path::PathBuf;

pub use setup::SetupError;
pub use tool::ToolError;

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
        /// The failure underneath, when there is one (an I/O error, a JSON parser's): printed
        /// as `caused by: …`, so the message does not repeat it.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// An external tool ran and failed, or a kernel crashed or hung (exit 3).
    #[error(transparent)]
    Tool(#[from] ToolError),
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
    /// `coalprof setup` cannot install something (exit 3; 130 for Ctrl-C). Boxed: it holds a
    /// tool's error and more, and every `Result` of coalprof carries this type.
    #[error(transparent)]
    Setup(Box<SetupError>),
    /// Writing an output failed (exit 3): the message names the path, the cause says why.
    #[error("cannot write `{}`", path.display())]
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

impl From<SetupError> for Error {
    fn from(e: SetupError) -> Error {
        Error::Setup(Box::new(e))
    }
}

impl Error {
    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage { message: message.into(), hint: None }
    }

    /// An input error naming the input (exit 3).
    pub fn input(path: impl Into<PathBuf>, message: impl Into<String>) -> Error {
        Error::Input { path: path.into(), message: message.into(), hint: None, source: None }
    }

    /// An input error naming the input, with the failure underneath as its cause (exit 3):
    /// `error: PATH: MESSAGE` then `caused by: SOURCE`.
    pub fn input_caused(
        path: impl Into<PathBuf>,
        message: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Error {
        Error::Input { path: path.into(), message: message.into(), hint: None, source: Some(source.into()) }
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

    /// Attach a hint line (printed after the error as `hint: …`). A tool's error keeps it too;
    /// a write error, Ctrl-C and coalprof's own bugs have no fix to hint at and stay as they are.
    pub fn with_hint(self, h: impl Into<String>) -> Error {
        let h = h.into();
        let hint = Some(h.clone());
        match self {
            Error::Usage { message, .. } => Error::Usage { message, hint },
            Error::Input { path, message, source, .. } => Error::Input { path, message, hint, source },
            Error::Unavailable { message, .. } => Error::Unavailable { message, hint },
            Error::NothingMatched { message, .. } => Error::NothingMatched { message, hint },
            Error::Tool(e) => Error::Tool(e.with_hint(h)),
            e @ (Error::Setup(_) | Error::Write { .. } | Error::Interrupted | Error::Internal(_)) => e,
        }
    }

    /// The fix, when one is known.
    pub fn hint(&self) -> Option<&str> {
        match self {
            Error::Usage { hint, .. }
            | Error::Input { hint, .. }
            | Error::Unavailable { hint, .. }
            | Error::NothingMatched { hint, .. } => hint.as_deref(),
            Error::Tool(e) => e.hint(),
            Error::Setup(e) => e.hint(),
            Error::Write { .. } | Error::Interrupted | Error::Internal(_) => None,
        }
    }

    /// The exit code this error ends the run with.
    pub fn exit(&self) -> Exit {
        match self {
            Error::Usage { .. } => Exit::Usage,
            Error::Input { .. } | Error::Write { .. } => Exit::Input,
            Error::Tool(e) => e.exit(),
            Error::Setup(e) => e.exit(),
            Error::Unavailable { .. } => Exit::ProfilerUnavailable,
            Error::NothingMatched { .. } => Exit::NothingMatched,
            Error::Interrupted => Exit::Interrupted,
            Error::Internal(_) => Exit::Internal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn a_hint_is_kept_by_every_kind_that_can_carry_one_tools_included() {
        let failed = ToolError::Failed {
            what: "ncu failed".into(),
            command: "ncu".into(),
            status: "exit status: 1".into(),
            stderr: String::new(),
            hint: None,
        };
        assert_eq!(Error::Tool(failed).with_hint("run doctor").hint(), Some("run doctor"));
        assert_eq!(Error::input("r", "bad").with_hint("h").hint(), Some("h"));
        let e = Error::write("/out", std::io::Error::other("disk full")).with_hint("h");
        assert_eq!(e.exit(), Exit::Input, "a hint never changes what kind of error it is");
    }

    #[test]
    fn a_cause_is_told_once_as_the_cause_not_twice() {
        let e = Error::write("/out/results.json", std::io::Error::other("disk full"));
        assert_eq!(e.to_string(), "cannot write `/out/results.json`");
        assert_eq!(e.source().map(|c| c.to_string()).as_deref(), Some("disk full"));
        let input = Error::input_caused("r.json", "not a coalprof results file", std::io::Error::other("EOF"));
        assert_eq!(input.to_string(), "r.json: not a coalprof results file");
        assert_eq!(input.source().map(|c| c.to_string()).as_deref(), Some("EOF"));
        assert_eq!(input.with_hint("h").source().map(|c| c.to_string()).as_deref(), Some("EOF"), "a hint keeps it");
        let spawn = Error::Tool(ToolError::Spawn { command: "ncu".into(), source: std::io::Error::other("x") });
        assert_eq!(spawn.source().map(|c| c.to_string()).as_deref(), Some("x"), "transparent: the tool's cause");
    }
}
