//! Why `coalprof setup` cannot go on: the error `tools/setup/` returns, defined beside the one
//! error type that wraps it so that `error` sits below `tools`.

use std::path::{Path, PathBuf};

use super::tool::ToolError;
use crate::exit::Exit;

/// Why setup cannot go on (exit 3, or 130 for Ctrl-C).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Something this machine lacks, or an input that is wrong: what, and the fix.
    #[error("{message}")]
    Cannot {
        /// What is missing or wrong, in the user's words.
        message: String,
        /// The command that fixes it, when one is known.
        hint: Option<String>,
    },
    /// A program setup ran failed (or Ctrl-C stopped it).
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// A file or folder in the tool home could not be written.
    #[error("cannot write `{}`", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl SetupError {
    /// Something missing or wrong, with its fix.
    pub(crate) fn cannot(message: impl Into<String>, hint: impl Into<String>) -> SetupError {
        SetupError::Cannot { message: message.into(), hint: Some(hint.into()) }
    }

    /// A write under `path` that failed.
    pub(crate) fn io(path: &Path, source: std::io::Error) -> SetupError {
        SetupError::Io { path: path.to_path_buf(), source }
    }

    /// The exit code: 130 for Ctrl-C, else 3 (the README's table: a tool that failed).
    pub fn exit(&self) -> Exit {
        match self {
            SetupError::Tool(ToolError::Interrupted { .. }) => Exit::Interrupted,
            _ => Exit::Input,
        }
    }

    /// The fix, when one is known.
    pub fn hint(&self) -> Option<&str> {
        match self {
            SetupError::Cannot { hint, .. } => hint.as_deref(),
            SetupError::Tool(e) => e.hint(),
            SetupError::Io { .. } => None,
        }
    }
}
