//! Which line wastes the bandwidth: per-instruction counters of a report made with the
//! `SourceCounters` section, attributed to SASS instructions and, through the cubin's line
//! tables, to source lines; diagnosed in the lesson's words.
//!
//! [`cubin`] reads the line tables of the cubin the native reader hands over in
//! [`crate::parse::SourceCounters`].

pub(crate) mod aggregate;
pub mod cubin;
mod diagnose;
pub(crate) mod gate;
pub mod instructions;
pub mod sarif;
pub(crate) mod sim;
pub mod source;

pub use aggregate::{build, By, LineReport, LineRow, Options};
pub use instructions::Op;

use crate::error::{Error, Result};
use crate::import::{kind, Kind};
use crate::parse::ncu_rep::{self, ReadError};
use crate::parse::{LaunchRecord, SourceCounters};

/// Every launch of every report, with its per-instruction counters.
pub fn read(reports: &[std::path::PathBuf]) -> Result<Vec<(LaunchRecord, SourceCounters)>> {
    let mut all = Vec::new();
    for path in reports {
        if kind(path)? != Kind::NcuRep {
            return Err(Error::input(
                path,
                "not an .ncu-rep report: per-instruction counters exist only in reports (ncu `-o`, with the \
                 SourceCounters section)",
            ));
        }
        let report = ncu_rep::read_launches(path).map_err(|e| match e {
            ReadError::UnknownVersion { .. } => {
                Error::input(path, e.to_string()).with_hint("`lines` reads reports natively only; no ncu fallback")
            }
            e => Error::input(path, e.to_string()),
        })?;
        let rank = crate::import::rank_of(path);
        all.extend(report.launches.into_iter().map(|l| (LaunchRecord { rank, ..l.record }, l.source)));
    }
    Ok(all)
}
