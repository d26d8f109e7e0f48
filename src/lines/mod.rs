//! Which line wastes the bandwidth: per-instruction counters of a report made with the
//! `SourceCounters` section, attributed to SASS instructions and, through the cubin's line
//! tables, to source lines; diagnosed in coalescing's own terms.
//!
//! [`cubin`] reads the line tables of the cubin the native reader hands over in
//! [`crate::parse::SourceCounters`]. [`report`] streams the launches into the per-line sums,
//! so memory holds one launch and the sums, whatever the report's size; [`read`] collects
//! them (small reports, and the oracle `report` is tested against).

pub(crate) mod aggregate;
pub mod counted;
pub mod cubin;
pub(crate) mod diagnose;
pub mod frames;
pub(crate) mod gate_rows;
pub mod instructions;
pub(crate) mod sim;
pub mod source;

pub use aggregate::{build, By, LineReport, LineRow, Options};
pub use instructions::Op;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::import::{kind, open_report, read_error, Content, Kind, Open, Opened};
use crate::metrics::Catalogue;
use crate::parse::csv::Keep;
use crate::parse::ncu_rep::{self, Bounds};
use crate::parse::{LaunchRecord, SourceCounters};
use source::Sources;

/// Every launch of every report, with its per-instruction counters (read within `bounds`).
pub fn read(reports: &[PathBuf], bounds: Bounds) -> Result<Vec<(LaunchRecord, SourceCounters)>> {
    Stream::new(reports, None, bounds).collect()
}

/// The per-line report of `reports`, read one launch at a time (the rows are those of
/// `build(read(reports)?, …)`; a read error is the same error, after the launches before it).
/// Launch records keep only the catalogue's metrics: the per-line sums need nothing else.
pub fn report(
    reports: &[PathBuf],
    bounds: Bounds,
    opts: &Options,
    catalogue: &Catalogue,
    sources: &mut Sources,
    disassemble: &mut dyn FnMut(&[u8]) -> Option<aggregate::SassByOffset>,
) -> Result<LineReport> {
    let keep = Keep::Only(catalogue.ncu_names().into_keys().collect());
    let mut failed = None;
    let launches = Stream::new(reports, Some(keep), bounds).map_while(|l| l.map_err(|e| failed = Some(e)).ok());
    let report = build(launches, opts, catalogue, sources, disassemble);
    match failed {
        Some(e) => Err(e),
        None => report,
    }
}

/// The launches of each report in turn, a report opened when the one before is done.
struct Stream<'a> {
    reports: std::slice::Iter<'a, PathBuf>,
    keep: Option<Keep>,
    bounds: Bounds,
    current: Option<(&'a Path, Option<u32>, ncu_rep::LaunchStream)>,
    failed: bool,
}

impl<'a> Stream<'a> {
    fn new(reports: &'a [PathBuf], keep: Option<Keep>, bounds: Bounds) -> Stream<'a> {
        Stream { reports: reports.iter(), keep, bounds, current: None, failed: false }
    }

    fn open(&self, path: &'a Path) -> Result<(&'a Path, Option<u32>, ncu_rep::LaunchStream)> {
        if kind(path)? != Kind::NcuRep {
            return Err(Error::input(
                path,
                "not an .ncu-rep report: per-instruction counters exist only in reports (ncu `-o`, with the \
                 SourceCounters section)",
            ));
        }
        // Natively only: ncu's CSV has no per-instruction counters.
        let Opened { content: Content::Native(launches), rank } = open_report(path, Open::NativeOnly, self.bounds)?
        else {
            return Err(Error::Internal("a report opened natively only came as CSV".into()));
        };
        let launches = match &self.keep {
            Some(keep) => (*launches).source_counters_only(keep.clone()),
            None => *launches,
        };
        Ok((path, rank, launches))
    }
}

impl Iterator for Stream<'_> {
    type Item = Result<(LaunchRecord, SourceCounters)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some((path, rank, launches)) = self.current.as_mut() {
                match launches.next() {
                    Some(Ok(l)) => return Some(Ok((LaunchRecord { rank: *rank, ..l.record }, l.source))),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(read_error(path, e)));
                    }
                    None => self.current = None,
                }
            }
            let path = self.reports.next()?;
            match self.open(path) {
                Ok(c) => self.current = Some(c),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
