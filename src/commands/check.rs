//! `coalprof check`: evaluate the gate, write every output, then decide the exit code.
//!
//! Outputs are written before the exit code is decided, and all of them are attempted even if
//! one fails to write, so a failing gate still leaves its JUnit file and step summary behind
//! (gates that fail without reports, or report without failing, are the field's common bugs).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use crate::error::Error;
use crate::exit::Exit;
use crate::gate::identity::identify;
use crate::gate::{evaluate, github, junit, markdown, table, Baseline, Report};
use crate::render::Format;
use crate::results::Results;
pub use crate::settings::CheckSettings;
use crate::settings::{CheckCommand, Common};

/// `coalprof check INPUT…`: load the inputs, then [`run`] on stdout and stderr.
pub fn command(common: &Common, c: &CheckCommand) -> Result<Exit, Error> {
    let inputs = super::load(common, &c.inputs)?;
    let json = common.format == Format::Json;
    run(&c.check, &inputs, json, &mut std::io::stdout().lock(), &mut std::io::stderr().lock())
}

/// Load the baseline (if any) and evaluate; no outputs.
fn evaluate_report(settings: &CheckSettings, inputs: &[Results]) -> Result<Report, Error> {
    let baseline = settings.baseline.as_deref().map(Baseline::load).transpose()?;
    Ok(evaluate(&settings.rules, inputs, baseline.as_ref()))
}

/// Run the gate over `inputs`, print the verdict table (or the checks as JSON) and the
/// annotations to `out`, write the JUnit file and step summary, and return the exit code: `Ok`
/// (0), `GateFailed` (1, unless `exit_zero`). Errors: an unreadable baseline (3), an output that
/// cannot be written (3), no rule matching any row (5; after the outputs are written;
/// `exit_zero` does not mask it). Every output format takes this one path.
pub fn run(
    settings: &CheckSettings,
    inputs: &[Results],
    json: bool,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> Result<Exit, Error> {
    let report = evaluate_report(settings, inputs)?;
    let mut errors = Vec::new();
    let text = if json {
        serde_json::to_string_pretty(&report).map_err(|e| Error::Internal(format!("cannot encode JSON: {e}")))? + "\n"
    } else {
        table::render(&report, settings.color)
    };
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        errors.push(Error::write("<stdout>", e));
    }
    if settings.github {
        // Workflow commands after the table; beside JSON on stdout they would break `jq`, so
        // they go to stderr, which the Actions runner reads for commands too.
        let sink: &mut dyn Write = if json { log } else { out };
        if let Err(e) = sink.write_all(github::annotations(&report).as_bytes()).and_then(|()| sink.flush()) {
            errors.push(Error::write("<stdout>", e));
        }
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
