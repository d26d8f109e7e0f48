//! `coalprof analyze FILE…`: existing ncu reports → the coalescing table. The summary
//! (`--format summary`) also names the worst source lines of `.ncu-rep` inputs that carry
//! per-instruction counters, as `profile`'s results do.

use std::path::PathBuf;

use crate::error::Result;
use crate::exit::Exit;
use crate::import::{kind, Kind};
use crate::render::{render, Format};
use crate::results::WorstLine;
use crate::settings::{AnalyzeSettings, Common};

pub(crate) fn run(common: &Common, s: &AnalyzeSettings) -> Result<Exit> {
    let find_ncu = || common.tools.ncu_tool();
    let reader = super::reader(common, s.grouping, &find_ncu);
    let mut results = super::read_merged(&reader, &s.files)?;
    if matches!(common.format, Format::Summary | Format::SummaryMd) && results.worst_lines.is_empty() {
        results.worst_lines = worst_lines(common, s);
    }
    super::print(&render(&results, common.format, &common.style.summarising("analyze", None))?)?;
    Ok(Exit::Ok)
}

/// The worst lines of the `.ncu-rep` inputs, as `lines` ranks them (3 per kernel); none where
/// the reports have no per-instruction counters. Read within the same bounds as the rows; a
/// report whose lines cannot be read only loses its lines (logged under `-v`): its rows stand.
fn worst_lines(common: &Common, s: &AnalyzeSettings) -> Vec<WorstLine> {
    let reports: Vec<PathBuf> = s.files.iter().filter(|f| kind(f).is_ok_and(|k| k == Kind::NcuRep)).cloned().collect();
    if reports.is_empty() {
        return Vec::new();
    }
    let opts = crate::lines::Options {
        per_launch: s.grouping == crate::frame::launches::Grouping::PerLaunch,
        top: Some(3),
        ..Default::default()
    };
    let mut sources = crate::lines::source::Sources::new(common.cwd.clone());
    match crate::lines::report(&reports, common.bounds, &opts, &common.catalogue, &mut sources, &mut |_| None) {
        Ok(report) => crate::lines::gate::worst_lines(&report, &|_| (None, None)),
        Err(e) => {
            tracing::info!("no per-line attribution for the summary: {e}");
            Vec::new()
        }
    }
}
