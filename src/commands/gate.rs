//! `coalprof check` and `coalprof baseline update` from the command line: load the inputs (any
//! kind `analyze` reads, or saved runs), then hand over to `check` / `baseline`.

use std::path::PathBuf;

use crate::error::Result;
use crate::exit::Exit;
use crate::frame::launches::Grouping;
use crate::inputs::Reader;
use crate::render::Format;
use crate::results::Results;
use crate::settings::{BaselineSettings, CheckCommand, Common};

/// Read each input as `check` does (reports grouped per kernel and launch shape).
pub(crate) fn load(common: &Common, paths: &[PathBuf]) -> Result<Vec<Results>> {
    let find_ncu = || common.ncu();
    let reader = Reader {
        catalogue: &common.catalogue,
        derivation: &common.derivation,
        grouping: Grouping::PerKernel,
        rep_reader: common.rep_reader,
        ncu: &find_ncu,
    };
    paths.iter().map(|p| reader.read(p)).collect()
}

pub fn check(common: &Common, c: &CheckCommand) -> Result<Exit> {
    let inputs = load(common, &c.inputs)?;
    if common.format == Format::Json {
        let report = super::check::evaluate_report(&c.check, &inputs)?;
        super::print(&(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"))?;
        return Ok(if report.failed() && !c.check.exit_zero { Exit::GateFailed } else { Exit::Ok });
    }
    let mut out = std::io::stdout().lock();
    super::check::run(&c.check, &inputs, &mut out)
}

pub fn baseline_update(common: &Common, b: &BaselineSettings) -> Result<Exit> {
    let runs = load(common, &b.runs)?;
    match &b.only_gated {
        Some(rules) => super::baseline::update_for_rules(&runs, &b.path, rules)?,
        None => super::baseline::update(&runs, &b.path)?,
    }
    eprintln!("updated `{}`", b.path.display());
    Ok(Exit::Ok)
}
