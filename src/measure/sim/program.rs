//! A user's own program under the simulator (`profile --backend sim`): it takes the way from the
//! simulator's statistics to rows that a built-in pattern takes, per kernel and without a
//! manifest, and its lines give the kernel metrics no kernel counter gives and its worst lines.

use std::path::Path;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::parse::LaunchRecord;
use crate::results::Row;
use crate::tools::gpgpusim::{GpgpuSim, SimMode, CONFIG};

use super::run::run_in;
use super::{demangled, kernel_records, kernel_rows, sim_kernels};

/// A user's program to simulate (`profile --backend sim`).
pub(crate) struct Program<'a> {
    /// The executable (absolute: the simulator runs it in its own folder) and its arguments.
    pub exe: &'a Path,
    pub args: &'a [std::ffi::OsString],
    /// `--kernel`: only the kernels it matches get rows and lines.
    pub kernel: Option<&'a regex::Regex>,
    /// Functional or timing, and the toolkit the program was built with.
    pub mode: SimMode,
    pub cuda: &'a Path,
    pub timeout: Duration,
    /// Where the worst lines' sources are found.
    pub source_root: &'a Path,
}

/// A program simulated: one row per kernel (counters summed over its launches), what the rows
/// lack, each kernel's worst lines, and how long the simulator took.
pub(crate) struct ProgramRun {
    pub rows: Vec<Row>,
    pub notices: Vec<String>,
    pub worst_lines: Vec<crate::results::WorstLine>,
    pub seconds: f64,
}

/// Run `p` under the simulator in `folder`, and take the simulator's statistics the pipeline's
/// way: per-kernel records → the sanity check and grouping → the derivation → rows (and the
/// per-line rows, for the worst lines).
pub(crate) fn simulate_program(
    sim: &GpgpuSim,
    p: &Program,
    folder: &Path,
    catalogue: &Catalogue,
    derivation: &Derivation,
) -> Result<ProgramRun> {
    let run = run_in(sim, p.exe, p.args, folder, (p.mode, p.cuda), p.timeout)?;
    let names = demangled(&run, Some(sim));
    let keep = |k: &str| p.kernel.is_none_or(|re| re.is_match(k));
    let records: Vec<_> = (kernel_records(&run, catalogue).into_iter())
        .map(|r| LaunchRecord { kernel: names.get(&r.kernel).cloned().unwrap_or(r.kernel.clone()), ..r })
        .filter(|r| keep(&r.kernel))
        .collect();
    if records.is_empty() {
        return Err(Error::nothing_matched(
            format!("`{}` ran under GPGPU-Sim but launched no kernel coalprof could count", p.exe.display()),
            p.kernel.map(|k| format!("check `--kernel {k}`")),
        ));
    }
    let (mut rows, notices) = kernel_rows(records, catalogue, derivation)?;
    for r in &mut rows {
        r.notes.push(format!(
            "simulated in GPGPU-Sim ({CONFIG}): PTX, not SASS; counters summed over the kernel's launches"
        ));
    }
    let mut sources = crate::lines::source::Sources::new(p.source_root.to_path_buf());
    // Every line, for the kernel metrics no kernel counter gives (a store's and a shared
    // access's ideal), then the three worst of each kernel.
    let opts = crate::lines::Options { kernel: p.kernel.cloned(), ..Default::default() };
    let lines = crate::lines::sim::build(sim_kernels(&run, &names), &opts, catalogue, &mut sources)?;
    let mut results = crate::results::Results::new(crate::results::Provenance::new(crate::results::Backend::Sim), rows);
    crate::lines::gate_rows::fill_kernel_metrics(&mut results, &lines, catalogue, false)?;
    let opts = crate::lines::Options { top: Some(3), ..opts };
    let lines = crate::lines::sim::build(sim_kernels(&run, &names), &opts, catalogue, &mut sources)?;
    let worst_lines = crate::lines::gate_rows::worst_lines(&lines, &|_| (None, None));
    Ok(ProgramRun { rows: results.rows, notices, worst_lines, seconds: run.elapsed.as_secs_f64() })
}
