//! The one voice on stderr: errors with their hint and causes, warnings, notes and progress
//! lines. Everything a person is told goes through here (or through `tracing`'s `-v` logs), so
//! every message has the same shape: `error: …` / `  caused by: …` / `hint: …`, `warning: …`,
//! `note: …`.

use std::fmt::Display;

use crate::error::Error;

/// `error: …`, each cause under it, then the hint.
pub(crate) fn error(e: &Error) {
    eprintln!("error: {e}");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        eprintln!("  caused by: {c}");
        cause = c.source();
    }
    if let Some(h) = e.hint() {
        eprintln!("hint: {h}");
    }
}

/// `error: …` for a failure the command survives (one pattern of many, one GPU of several).
pub(crate) fn failure(text: impl Display) {
    eprintln!("error: {text}");
}

/// `warning: …`: something is off, the command goes on.
pub(crate) fn warning(text: impl Display) {
    eprintln!("warning: {text}");
}

/// `note: …`: what the output leaves out, and why.
pub(crate) fn note(text: impl Display) {
    eprintln!("note: {text}");
}

/// A progress line of a long command (which pattern on which GPU, which Slurm job).
pub(crate) fn progress(text: impl Display) {
    eprintln!("{text}");
}
