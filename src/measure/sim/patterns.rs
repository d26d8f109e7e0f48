//! The built-in patterns under the simulator (`run --backend sim`): each variant runs in its own
//! simulator process and folder (the simulator's statistics are per PTX line, summed over the
//! whole process), its one kernel's record is joined with the launch manifest (verified against
//! the plan) and compared with the model, as a measured pattern's is. The variants are
//! independent processes: they run side by side, as many at once as the run's [`Permits`] allow.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::frame::manifest::{self, Entry};
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::model::ModelSettings;
use crate::parse::LaunchRecord;
use crate::patterns::{sim_variants, Pattern, Sizing};
use crate::results::{Row, Source};
use crate::store::RunDir;
use crate::tools::gpgpusim::{GpgpuSim, SimMode, CONFIG};
use crate::tools::ToolError;

use super::run::run_in;
use super::{kernel_records, BACKEND};

/// What every pattern of a simulated run is run with.
#[derive(Clone, Copy)]
pub(crate) struct Simulator<'a> {
    pub sim: &'a GpgpuSim,
    pub catalogue: &'a Catalogue,
    pub derivation: &'a Derivation,
    pub model: &'a ModelSettings,
    /// Functional (the default) or timing.
    pub mode: SimMode,
    /// Per simulator process.
    pub timeout: Duration,
    /// Only these variants (`--variant`; empty: all).
    pub only: &'a [String],
    /// How many simulator processes may run at once, shared by every pattern of the run.
    pub permits: &'a Permits,
}

/// A counting semaphore over simulator processes: one simulator is one busy core, so a run
/// starts no more at once than the machine has cores, whichever patterns they belong to.
pub(crate) struct Permits {
    free: Mutex<usize>,
    freed: Condvar,
}

/// One simulator process's right to run; given back when dropped.
struct Permit<'a>(&'a Permits);

impl Permits {
    pub(crate) fn new(n: usize) -> Permits {
        Permits { free: Mutex::new(n.max(1)), freed: Condvar::new() }
    }

    /// Wait for a free permit (checking for Ctrl-C meanwhile).
    fn acquire(&self) -> Result<Permit<'_>> {
        let poisoned = || Error::Internal("the simulator permits were poisoned".into());
        let mut free = self.free.lock().map_err(|_| poisoned())?;
        while *free == 0 {
            crate::cancel::check()?;
            free = self.freed.wait_timeout(free, Duration::from_millis(200)).map_err(|_| poisoned())?.0;
        }
        *free -= 1;
        Ok(Permit(self))
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        if let Ok(mut free) = self.0.free.lock() {
            *free += 1;
        }
        self.0.freed.notify_one();
    }
}

/// One pattern simulated: its rows, how long the simulator took per variant, and what the
/// rows lack (the counters the simulator never measures).
pub(crate) struct Simulated {
    pub rows: Vec<Row>,
    pub seconds: Vec<(String, f64)>,
    pub notices: Vec<String>,
}

/// Simulate every variant of `pattern` (built for the simulator as `exe`) into `dir`.
pub(crate) fn simulate(pattern: Pattern, sizing: Sizing, exe: &Path, s: &Simulator, dir: &RunDir) -> Result<Simulated> {
    let mut plan = sim_variants(pattern, sizing);
    plan.retain(|v| s.only.is_empty() || s.only.contains(&v.name));
    if plan.is_empty() {
        return Ok(Simulated { rows: Vec::new(), seconds: Vec::new(), notices: Vec::new() });
    }
    let stem = pattern.source_stem();
    // Each variant in its own thread, waiting for a permit; after a failure no other starts.
    let failed = AtomicBool::new(false);
    let outcomes: Vec<Result<Option<OneVariant>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (plan.iter())
            .map(|v| {
                let (failed, stem) = (&failed, &stem);
                scope.spawn(move || {
                    let permit = s.permits.acquire()?;
                    if failed.load(Ordering::SeqCst) {
                        return Ok(None);
                    }
                    let one = simulate_variant(v, stem, exe, s, dir);
                    drop(permit);
                    if one.is_err() {
                        failed.store(true, Ordering::SeqCst);
                    }
                    one.map(Some)
                })
            })
            .collect();
        (handles.into_iter())
            .map(|h| h.join().unwrap_or_else(|_| Err(Error::Internal("a simulator thread panicked".into()))))
            .collect()
    });
    let mut entries: Vec<Entry> = Vec::new();
    let mut records = Vec::new();
    let mut seconds = Vec::new();
    // The first failure in the plan's order (an interruption first: it explains the others).
    let interrupted = |o: &Result<_>| matches!(o, Err(Error::Interrupted | Error::Tool(ToolError::Interrupted { .. })));
    if let Some(i) = outcomes.iter().position(interrupted) {
        return Err(outcomes.into_iter().nth(i).and_then(Result::err).unwrap_or(Error::Interrupted));
    }
    for one in outcomes {
        let Some(one) = one? else { continue };
        seconds.push((one.variant, one.seconds));
        records.push(one.record);
        entries.extend(one.entries);
    }
    let combined: String =
        entries.iter().map(|e| serde_json::to_string(&EntryOut(e)).unwrap_or_default() + "\n").collect();
    let manifest_path = dir.write(&format!("{stem}.manifest.jsonl"), combined.as_bytes())?;
    manifest::check_against_plan(&entries, &plan).map_err(|e| Error::input(&manifest_path, e.to_string()))?;

    // No timing: a simulator's cycles are not a GPU's.
    let mut facts = || Ok(plan.iter().map(|v| (v.name.clone(), super::launch_facts(v, None, None))).collect());
    let way = super::Rows {
        catalogue: s.catalogue,
        derivation: s.derivation,
        model: s.model,
        source: Source::Simulated,
        backend: Some(&BACKEND),
    };
    let (mut rows, notices) = way.pattern_rows(records, &plan, &entries, &manifest_path, &mut facts)?;
    for row in &mut rows {
        row.notes.push(format!("simulated in GPGPU-Sim ({CONFIG}): PTX, not SASS"));
    }
    Ok(Simulated { rows, seconds, notices })
}

/// What one variant's simulator process gave.
struct OneVariant {
    variant: String,
    seconds: f64,
    record: LaunchRecord,
    entries: Vec<Entry>,
}

/// The file each variant's program writes its manifest to, in its folder.
const MANIFEST: &str = "manifest.jsonl";

/// Simulate variant `v` alone in its folder under `dir` and read its one kernel's record.
fn simulate_variant(
    v: &crate::patterns::Variant,
    stem: &str,
    exe: &Path,
    s: &Simulator,
    dir: &RunDir,
) -> Result<OneVariant> {
    crate::cancel::check()?;
    let folder = dir.path.join("sim").join(stem).join(&v.name);
    let manifest_path = folder.join(MANIFEST);
    // The program runs in `folder` (the simulator writes its files there): the manifest is named
    // from there, since the run folder may be relative to where coalprof was started.
    let mut args = super::kernel_args(Path::new(MANIFEST), std::slice::from_ref(v), None);
    // Inputs filled on the host: the simulator would spend most of its time in the fill kernels.
    args.push("--host-init".into());
    tracing::info!(variant = %v.id(), folder = %folder.display(), mode = s.mode.name(), "simulating");
    let run = run_in(s.sim, exe, &args, &folder, (s.mode, &s.sim.cuda), s.timeout)?;
    let mut kernels = kernel_records(&run, s.catalogue);
    let (Some(i), 1) = (kernels.iter().position(|r| r.kernel == v.kernel), kernels.len()) else {
        let names: Vec<&str> = kernels.iter().map(|r| r.kernel.as_str()).collect();
        return Err(Error::input(
            folder.join(crate::parse::gpgpusim::STATS_FILE),
            format!("variant `{}` should run one kernel, `{}`, but the simulator counted {names:?}", v.id(), v.kernel),
        ));
    };
    Ok(OneVariant {
        variant: v.name.clone(),
        seconds: run.elapsed.as_secs_f64(),
        record: kernels.swap_remove(i),
        entries: manifest::read(&manifest_path)?,
    })
}

/// A manifest entry as the executables write it (the combined manifest of a simulated pattern).
struct EntryOut<'a>(&'a Entry);

impl serde::Serialize for EntryOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let e = self.0;
        serde_json::json!({
            "pattern": e.pattern, "variant": e.variant, "kernel": e.kernel, "grid": e.grid,
            "block": e.block, "bytes_read": e.bytes_read, "bytes_written": e.bytes_written,
        })
        .serialize(s)
    }
}
