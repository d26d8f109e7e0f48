//! `coalprof report RUN`: re-render a saved run in any format, without profiling again.

use std::path::Path;

use crate::error::Result;
use crate::exit::Exit;
use crate::inputs::{kind, read_results_json, Kind};
use crate::render::render;
use crate::settings::Common;

pub fn run(common: &Common, run: &Path) -> Result<Exit> {
    let file = match kind(run)? {
        Kind::RunDir => run.join("results.json"),
        _ => run.to_path_buf(),
    };
    let results = read_results_json(&file)?;
    super::print(&render(&results, common.format, common.style)?)?;
    Ok(Exit::Ok)
}
