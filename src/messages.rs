//! The one voice on stderr: errors with their hint and causes, warnings, notes and progress
//! lines. Everything a person is told goes through here (or through `tracing`'s `-v` logs), so
//! every message has the same shape: `error: …` / `  caused by: …` / `hint: …`, `warning: …`,
//! `note: …`.

#![allow(clippy::print_stderr)] // the one writer to stderr besides the logger

use std::fmt::Display;

/// `error: …`, each cause under it, then the hint. (It takes any error, not coalprof's own, so
/// that this module depends on nothing: every room may speak.)
pub(crate) fn error(e: &dyn std::error::Error, hint: Option<&str>) {
    error_in(None, e, hint);
}

/// `error: CONTEXT: …` with the causes and hint of `e`: a failure the command survives (one
/// task of many), told as fully as one that ends it.
pub(crate) fn error_in(context: Option<&dyn Display>, e: &dyn std::error::Error, hint: Option<&str>) {
    told("error", context, e, hint);
}

/// `note: CONTEXT: …` with the causes and hint of `e`: an input left out, said as fully as an
/// error would say it.
pub(crate) fn note_in(context: &dyn Display, e: &dyn std::error::Error, hint: Option<&str>) {
    told("note", Some(context), e, hint);
}

/// `LEVEL: [CONTEXT: ]ERROR`, each cause under it, then the hint.
fn told(level: &str, context: Option<&dyn Display>, e: &dyn std::error::Error, hint: Option<&str>) {
    match context {
        Some(c) => eprintln!("{level}: {c}: {e}"),
        None => eprintln!("{level}: {e}"),
    }
    let mut cause = e.source();
    while let Some(c) = cause {
        eprintln!("  caused by: {c}");
        cause = c.source();
    }
    if let Some(h) = hint {
        eprintln!("hint: {h}");
    }
}

/// `error: …` for a failure the command survives that is no error value (a GPU retired after
/// two failed tasks). An error is told through [`error_in`], with its causes and hint: this
/// takes text only, so none is flattened to its first line by mistake.
pub(crate) fn failure(text: &str) {
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
