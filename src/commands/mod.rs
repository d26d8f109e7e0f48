//! One module per subcommand: glue between settings and the pipeline, nothing more.

pub(crate) mod analyze;
pub mod baseline;
pub(crate) mod build;
pub mod check;
pub(crate) mod compare;
pub(crate) mod doctor;
pub(crate) mod history;
pub(crate) mod lines;
pub(crate) mod mcp;
pub(crate) mod model;
pub(crate) mod patterns;
pub(crate) mod profile;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod setup;
pub(crate) mod triton;

use std::io::Write;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::frame::launches::Grouping;
use crate::import::Reader;
use crate::results::Results;
use crate::settings::Common;

/// A reader of reports with the command's catalogue; `ncu` is asked for only if a report needs it.
fn reader<'a>(common: &'a Common, grouping: Grouping, ncu: crate::import::FindNcu<'a>) -> Reader<'a> {
    Reader {
        catalogue: &common.catalogue,
        derivation: &common.derivation,
        grouping,
        rep_reader: common.rep_reader,
        bounds: common.bounds,
        ncu,
    }
}

/// Read every input into one result set (`analyze A B`, the ranks of `profile --per-rank`).
fn read_merged(reader: &Reader<'_>, paths: &[PathBuf]) -> Result<Results> {
    let (first, rest) = paths.split_first().ok_or_else(|| Error::Internal("no input to read".into()))?;
    let mut all = reader.read(first)?;
    for path in rest {
        all.merge(reader.read(path)?);
    }
    Ok(all)
}

/// Read the inputs of `check` and `baseline update`: any kind `analyze` reads, or saved runs.
fn load(common: &Common, paths: &[PathBuf]) -> Result<Vec<Results>> {
    let find_ncu = || common.tools.ncu_tool();
    let reader = reader(common, Grouping::PerKernel, &find_ncu);
    paths.iter().map(|p| reader.read(p)).collect()
}

/// stdout, the data channel: the one place that opens it (clippy's `print_stdout` and
/// `disallowed-methods` hold the rest of the crate to that), so nothing but a command's data
/// reaches it and `--format json | jq` always works.
#[allow(clippy::disallowed_methods)]
pub(crate) fn stdout() -> std::io::StdoutLock<'static> {
    std::io::stdout().lock()
}

/// stdout for a protocol that owns it whole (`coalprof mcp`'s JSON-RPC messages), async: the
/// same data channel, opened here too.
#[allow(clippy::disallowed_methods)]
pub(crate) fn stdout_async() -> tokio::io::Stdout {
    tokio::io::stdout()
}

/// Write command output to stdout; a closed pipe (`| head`) is not an error.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = stdout();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::write("<stdout>", e)),
        _ => Ok(()),
    }
}

/// `--sarif FILE` of `lines` and `check`: each line's level from `level` (`lines` makes every
/// line a warning, `check` grades them by its rules); written atomically, like every output.
fn write_sarif(
    path: &std::path::Path,
    report: &crate::lines::LineReport,
    level: crate::render::lines::sarif::Level,
) -> Result<()> {
    crate::store::write_output(path, crate::render::lines::sarif::render(report, level)?.as_bytes())
}
