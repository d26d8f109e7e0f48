//! `lines` (and `check`) of the folders `profile --backend sim` saved: the simulator's per-PTX-line
//! statistics and the PTX's `.loc`, read back from disk into `lines`' per-line rows, without
//! running the simulator again.

use std::path::Path;

use crate::error::{Error, Result};
use crate::metrics::Catalogue;
use crate::tools::gpgpusim::GpgpuSim;

use super::{demangled, sim_kernels};

/// The per-line report of run folders `profile --backend sim` saved (`lines RUN`): the rows
/// from the simulator's per-PTX-line statistics and the PTX's `.loc`, folder after folder;
/// `sim` demangles the kernels' names where it is installed.
pub(crate) fn line_report(
    folders: &[std::path::PathBuf],
    opts: &crate::lines::Options,
    catalogue: &Catalogue,
    sources: &mut crate::lines::source::Sources,
    sim: Option<&GpgpuSim>,
) -> Result<crate::lines::LineReport> {
    let mut report: Option<crate::lines::LineReport> = None;
    for f in folders {
        let run = crate::parse::gpgpusim::read_run(f).map_err(|e| Error::input(f, e.to_string()))?;
        let names = demangled(&run, sim);
        let r = crate::lines::sim::build(sim_kernels(&run, &names), opts, catalogue, sources)?;
        match &mut report {
            Some(all) => {
                all.rows.extend(r.rows);
                all.notices.extend(r.notices);
            }
            None => report = Some(r),
        }
    }
    report.ok_or_else(|| Error::usage("no simulated run given"))
}

/// The simulation folder of a run folder `profile --backend sim` saved (its `sim/`), or the
/// folder itself when it holds the simulator's statistics.
pub(crate) fn sim_folder(path: &Path) -> Option<std::path::PathBuf> {
    let stats = crate::parse::gpgpusim::STATS_FILE;
    [path.join("sim"), path.to_path_buf()].into_iter().find(|d| d.join(stats).is_file())
}
