//! `coalprof analyze FILE…`: existing ncu reports → the coalescing table.

use crate::error::Result;
use crate::exit::Exit;
use crate::render::render;
use crate::settings::{AnalyzeSettings, Common};

pub(crate) fn run(common: &Common, s: &AnalyzeSettings) -> Result<Exit> {
    let find_ncu = || common.tools.ncu_tool();
    let reader = super::reader(common, s.grouping, &find_ncu);
    let results = super::read_merged(&reader, &s.files)?;
    super::print(&render(&results, common.format, &common.style.summarising("analyze", None))?)?;
    Ok(Exit::Ok)
}
