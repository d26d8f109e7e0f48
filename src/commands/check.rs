//! `coalprof check`: evaluate the gate, write every output, then decide the exit code.
//!
//! Outputs are written before the exit code is decided, and all of them are attempted even if
//! one fails to write, so a failing gate still leaves its JUnit file and step summary behind
//! (gates that fail without reports, or report without failing, are the field's common bugs).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::exit::Exit;
use crate::gate::identity::identify;
use crate::gate::{evaluate, github, junit, markdown, table, Baseline, Report, Rule};
use crate::results::Results;

/// Everything `check` needs, resolved from flags and `metrics.toml` by the settings layer.
#[derive(Debug, Clone, Default)]
pub struct CheckSettings {
    /// Compiled `[[gate]]` rules, in file order (later ones override earlier ones).
    pub rules: Vec<Rule>,
    /// `--baseline FILE`: compared against by `regress` rules; unreadable → exit 3.
    pub baseline: Option<PathBuf>,
    /// `--junit FILE`: JUnit XML, overwritten.
    pub junit: Option<PathBuf>,
    /// `--github`: workflow-command annotations on `out` after the table.
    pub github: bool,
    /// The value of `$GITHUB_STEP_SUMMARY`, read by the caller: markdown is appended to it.
    pub step_summary: Option<PathBuf>,
    /// `--exit-zero`: report only; a failed gate exits 0 with the same outputs.
    pub exit_zero: bool,
    /// Colour the table's status words (`--color`, `NO_COLOR` resolved by the caller).
    pub color: bool,
    /// `--sarif FILE`: the wasteful lines of `.ncu-rep` inputs as SARIF 2.1.0.
    pub sarif: Option<PathBuf>,
    /// The checkout source paths are made relative to (line rows, SARIF).
    pub source_root: PathBuf,
}

/// Load the baseline (if any) and evaluate; no outputs. For callers that render the report
/// themselves (`--format json`).
pub fn evaluate_report(settings: &CheckSettings, inputs: &[Results]) -> Result<Report, Error> {
    let baseline = settings.baseline.as_deref().map(Baseline::load).transpose()?;
    Ok(evaluate(&settings.rules, inputs, baseline.as_ref()))
}

/// Run the gate over `inputs`, print the verdict table (and annotations) to `out`, write the
/// JUnit file and step summary, and return the exit code: `Ok` (0), `GateFailed` (1, unless
/// `exit_zero`). Errors: an unreadable baseline (3), an output that cannot be written (3), no
/// rule matching any row (5; after the outputs are written; `exit_zero` does not mask it).
pub fn run(settings: &CheckSettings, inputs: &[Results], out: &mut dyn Write) -> Result<Exit, Error> {
    let report = evaluate_report(settings, inputs)?;
    let mut errors = Vec::new();
    let mut text = table::render(&report, settings.color);
    if settings.github {
        text.push_str(&github::annotations(&report));
    }
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        errors.push(Error::write("<stdout>", e));
    }
    if let Some(path) = &settings.junit {
        errors.extend(write_file(path, &junit::render(&report)).err());
    }
    if let Some(path) = &settings.step_summary {
        errors.extend(append_file(path, &markdown::render(&report)).err());
    }
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    if report.matched_rows == 0 {
        return Err(nothing_matched(settings, inputs));
    }
    Ok(if report.failed() && !settings.exit_zero { Exit::GateFailed } else { Exit::Ok })
}

fn nothing_matched(settings: &CheckSettings, inputs: &[Results]) -> Error {
    let rows = identify(inputs);
    if settings.rules.is_empty() {
        return Error::nothing_matched(
            "no [[gate]] rules to check",
            Some("add [[gate]] entries to `metrics.toml`".into()),
        );
    }
    if rows.is_empty() {
        return Error::nothing_matched("the inputs have no rows to check", None);
    }
    let mut keys: Vec<String> = rows.iter().map(|(_, key, _, _)| format!("`{key}`")).collect();
    keys.dedup();
    let more = if keys.len() > 5 { format!(" and {} more", keys.len() - 5) } else { String::new() };
    keys.truncate(5);
    Error::nothing_matched(
        format!("no [[gate]] rule matched any of the {} rows", rows.len()),
        Some(format!(
            "`match` is a glob over row keys (`pattern/variant`) or kernel names, or `re:<regex>`; the rows are {}{more}",
            keys.join(", ")
        )),
    )
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    create_parent(path)?;
    std::fs::write(path, text).map_err(|e| Error::write(path, e))
}

fn append_file(path: &Path, text: &str) -> Result<(), Error> {
    create_parent(path)?;
    let mut f = OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::write(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::write(path, e))
}

fn create_parent(path: &Path) -> Result<(), Error> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e)),
        _ => Ok(()),
    }
}
