//! Running the simulator: a program under GPGPU-Sim in a folder, in a mode the installed build can
//! count in, and what it left there read back; a PTX line it rejected is placed in the source.

use std::path::Path;

use crate::error::{Error, Result};
use crate::parse::gpgpusim::SimRun;
use crate::tools::gpgpusim::{GpgpuSim, SimMode};

/// Whether `sim` can count in `mode`: the functional mode needs the patch that makes it count
/// (an older build writes no statistics there).
pub(crate) fn check_mode(sim: &GpgpuSim, mode: SimMode) -> Result<()> {
    if mode == SimMode::Functional && !sim.counts_functionally() {
        return Err(Error::unavailable(
            format!(
                "the GPGPU-Sim in `{}` ({}) counts no memory accesses in its functional mode",
                sim.root.display(),
                sim.version()
            ),
            "run `coalprof setup sim` again (it rebuilds GPGPU-Sim with \
             `scripts/sim-patches/0003-functional-mem-accesses.patch`), or pass `--sim-mode timing`",
        ));
    }
    Ok(())
}

/// Run `program args` under the simulator in `dir`, in `mode` with the toolkit `cuda`, and read
/// what it left there.
pub(crate) fn run_in(
    sim: &GpgpuSim,
    program: &Path,
    args: &[std::ffi::OsString],
    dir: &Path,
    (mode, cuda): (SimMode, &Path),
    timeout: std::time::Duration,
) -> Result<SimRun> {
    check_mode(sim, mode)?;
    let rejected = |log: &str| {
        let why = crate::parse::gpgpusim::failure(log)?;
        // The place after what failed, the simulator's own words last.
        Some(match (where_in_the_source(sim, dir, log), why.split_once(" (GPGPU-Sim: ")) {
            (Some(place), Some((what, words))) => format!("{what}, {place} (GPGPU-Sim: {words}"),
            (Some(place), None) => format!("{why}, {place}"),
            (None, _) => why,
        })
    };
    let (_, elapsed) = sim.run(program, args, dir, (mode, cuda), timeout, &rejected)?;
    let mut run = crate::parse::gpgpusim::read_run(dir)
        .map_err(|e| Error::input(dir, format!("`{}` ran under GPGPU-Sim, but {e}", program.display())))?;
    run.elapsed = elapsed;
    Ok(run)
}

/// For a PTX line the simulator could not parse: the kernel (or device function) that holds
/// it and the source line of the `.loc` in force there, from the PTX file it left in `dir`
/// (`in kernel `widen(…)`, from cuda_bf16.hpp:571`), where the PTX says.
fn where_in_the_source(sim: &GpgpuSim, dir: &Path, log: &str) -> Option<String> {
    let (file, line) = crate::parse::gpgpusim::failure_place(log)?;
    let text = std::fs::read_to_string(dir.join(&file)).ok()?;
    let ptx = crate::parse::gpgpusim::Ptx::parse(&text);
    // The bad line itself may not parse as an instruction: the one before it is in the same body.
    let (_, near) = ptx.instructions.range(..=line).next_back()?;
    let name = sim.demangle(std::slice::from_ref(&near.function)).pop().unwrap_or_else(|| near.function.clone());
    let what = if near.is_entry { "kernel" } else { "device function" };
    Some(match &near.source {
        Some((path, l)) => {
            let short = Path::new(path).file_name().map_or(path.clone(), |f| f.to_string_lossy().into_owned());
            format!("in {what} `{name}`, near {short}:{l}")
        }
        None => format!("in {what} `{name}`"),
    })
}
