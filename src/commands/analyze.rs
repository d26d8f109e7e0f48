//! `coalprof analyze FILE…`: existing ncu reports → the coalescing table.

use crate::error::Result;
use crate::exit::Exit;
use crate::render::render;
use crate::results::Results;
use crate::settings::{AnalyzeSettings, Common};

pub(crate) fn run(common: &Common, s: &AnalyzeSettings) -> Result<Exit> {
    let find_ncu = || common.ncu();
    let reader = super::reader(common, s.grouping, &find_ncu);
    let mut all: Option<Results> = None;
    for path in &s.files {
        let r = reader.read(path)?;
        match all.as_mut() {
            None => all = Some(r),
            Some(acc) => acc.merge(r),
        }
    }
    let results = all.expect("clap requires at least one file");
    super::print(&render(&results, common.format, &common.style)?)?;
    Ok(Exit::Ok)
}
