//! `--backend sim`: the kernels' PTX executed in GPGPU-Sim instead of measured by ncu. Each
//! variant of a built-in pattern runs in its own simulator process and folder (the simulator's
//! statistics are per PTX line, summed over the whole process), its lines are summed into the
//! raw counters of `metrics.toml` under the names ncu's rows carry, and from there the pipeline
//! is a measured run's: the verified join with the launch manifest, the one derivation, and the
//! comparison with the model, rows marked `simulated`. The variants are independent processes:
//! they run side by side, as many at once as the run's [`Permits`] allow.
//!
//! A user's own program (`profile --backend sim`, [`simulate_program`]) takes the same way from
//! records to rows, per kernel and without a manifest; [`line_report`] reads the simulator's
//! folders such a run saved into the per-line rows of `lines`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::frame::launches::{rows_of, Grouping};
use crate::frame::manifest::{self, Entry};
use crate::frame::{Derivation, MeasuredBy};
use crate::metrics::Catalogue;
use crate::model::ModelSettings;
use crate::parse::gpgpusim::SimRun;
use crate::parse::gpgpusim::{Access, LoadOrStore, PtxInstruction, Space};
use crate::parse::{LaunchRecord, Value};
use crate::patterns::{sim_variants, Pattern, Sizing};
use crate::results::{Row, Source};
use crate::store::RunDir;
use crate::tools::gpgpusim::{GpgpuSim, SimMode, CONFIG};
use crate::tools::ToolError;

/// Kernels of the harness (buffer fills, the checksum): never a row.
const HARNESS_PREFIX: &str = "coalprof_init_";

/// The raw counters (`metrics.toml` keys) the simulator gives a kernel, each where the kernel
/// made such an access ([`KernelCounters::add_line`]): every other one (L2 and DRAM traffic, time)
/// it never measures, which is said once as such, not as missing from the input.
pub(crate) const MEASURES: &[&str] = &[
    "global_load_requests",
    "global_load_sectors",
    "global_load_instructions",
    "global_load_bytes_requested",
    "global_store_requests",
    "global_store_sectors",
    "shared_load_instructions",
    "shared_load_wavefronts",
    "shared_load_bank_conflicts",
    "shared_store_instructions",
    "shared_store_wavefronts",
    "shared_store_bank_conflicts",
];

/// The simulator as a backend of rows, for the derivation's notices.
pub(crate) const BACKEND: MeasuredBy<'static> = MeasuredBy { name: "GPGPU-Sim", measures: MEASURES };

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

/// The compute capability of the device the simulator's configuration models (a V100's).
pub(crate) const SIM_CC: &str = "7.0";

/// The device a simulated record names.
pub(crate) fn device_name() -> String {
    format!("GPGPU-Sim {CONFIG}")
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

/// The raw counters of one kernel, summed over its PTX lines, under `metrics.toml`'s keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KernelCounters {
    pub values: BTreeMap<&'static str, f64>,
}

impl KernelCounters {
    fn add(&mut self, key: &'static str, v: f64) {
        *self.values.entry(key).or_default() += v;
    }

    /// One line's statistics, by what its instruction accesses.
    pub(crate) fn add_line(&mut self, a: Access, st: &crate::parse::gpgpusim::LineStats) {
        let bytes = f64::from(a.bytes);
        match (a.space, a.direction) {
            (Space::Global, dir) if st.global_warps > 0 => {
                let p = if dir == LoadOrStore::Load { "global_load" } else { "global_store" };
                self.add(key(p, "requests"), st.global_warps as f64);
                self.add(key(p, "sectors"), st.global_sectors as f64);
                if dir == LoadOrStore::Load {
                    self.add("global_load_instructions", st.global_warps as f64);
                    self.add("global_load_bytes_requested", st.executions as f64 * bytes);
                }
            }
            (Space::Shared, dir) if st.shared_warps > 0 => {
                let p = if dir == LoadOrStore::Load { "shared_load" } else { "shared_store" };
                // Conflict-free: ceil(active lanes × bytes / 128) per instruction, at least one.
                let ideal = (st.shared_warps as f64).max((st.executions as f64 * bytes / 128.0).ceil());
                self.add(key(p, "instructions"), st.shared_warps as f64);
                self.add(key(p, "wavefronts"), st.shared_wavefronts as f64);
                self.add(key(p, "bank_conflicts"), st.shared_wavefronts as f64 - ideal);
            }
            _ => {}
        }
    }
}

/// `global_load` + `sectors` → `global_load_sectors` (the keys are a closed set).
fn key(prefix: &str, what: &str) -> &'static str {
    MEASURES
        .iter()
        .copied()
        .find(|k| k.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')) == Some(what))
        .unwrap_or("")
}

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

/// The instruction of a statistics line, if the PTX it names was read.
pub(crate) fn instruction<'a>(run: &'a SimRun, file: &str, line: u32) -> Option<&'a PtxInstruction> {
    run.ptx.iter().find(|(n, _)| n == file).and_then(|(_, p)| p.instructions.get(&line))
}

/// Each kernel's counters (by the PTX's name), harness kernels left out. Lines of device
/// functions that were not inlined belong to no kernel: they are logged and left out.
pub(crate) fn kernel_counters(run: &SimRun) -> BTreeMap<String, KernelCounters> {
    let mut out: BTreeMap<String, KernelCounters> = BTreeMap::new();
    let mut orphans = 0u64;
    for st in &run.stats {
        let Some(inst) = instruction(run, &st.ptx_file, st.ptx_line) else {
            orphans += st.global_warps + st.shared_warps;
            continue;
        };
        if inst.function.starts_with(HARNESS_PREFIX) {
            continue;
        }
        if !inst.is_entry {
            orphans += st.global_warps + st.shared_warps;
            continue;
        }
        let c = out.entry(inst.function.clone()).or_default();
        if let Some(a) = inst.access {
            c.add_line(a, st);
        }
    }
    if orphans > 0 {
        tracing::warn!(
            "{orphans} memory instructions ran in device functions that were not inlined: no kernel counts them"
        );
    }
    // A kernel the log launched but whose lines made no memory access still gets a row.
    for l in &run.launches {
        if !l.kernel.starts_with(HARNESS_PREFIX) {
            out.entry(l.kernel.clone()).or_default();
        }
    }
    out
}

/// One record per kernel the process ran (harness kernels left out): its counters under the
/// names ncu's rows carry, its launch count and, when every launch had the same shape, its grid
/// and block. Values are per launch (the records' convention: totals are value × launches).
pub(crate) fn kernel_records(run: &SimRun, catalogue: &Catalogue) -> Vec<LaunchRecord> {
    let counters = kernel_counters(run);
    let mut out = Vec::new();
    for (kernel, c) in counters {
        let launches: Vec<_> = run.launches.iter().filter(|l| l.kernel == kernel).collect();
        let n = launches.len().max(1) as u64;
        let same = |f: fn(&crate::parse::gpgpusim::SimLaunch) -> [u32; 3]| {
            let first = f(launches.first()?);
            launches.iter().all(|l| f(l) == first).then_some(first)
        };
        let mut r = LaunchRecord::new(kernel.clone());
        r.grid = same(|l| l.grid);
        r.block = same(|l| l.block);
        r.device = Some(device_name());
        r.cc = Some(SIM_CC.into());
        r.launches = n;
        for (k, v) in &c.values {
            if let Some(raw) = catalogue.raw.get(*k) {
                r.metrics.push((Arc::from(raw.ncu.as_str()), Value::Number { value: v / n as f64, unit: "" }));
            }
        }
        out.push(r);
    }
    out
}

/// Rows of the simulator's per-kernel records (`profile --backend sim`): grouped per kernel
/// through the sanity check, derived, broken counters taken out and named; the notices with them.
pub(crate) fn kernel_rows(
    records: Vec<LaunchRecord>,
    catalogue: &Catalogue,
    derivation: &Derivation,
) -> Result<(Vec<Row>, Vec<String>)> {
    let names = catalogue.ncu_names();
    let (rows, notices, _) =
        rows_of(records.into_iter(), &names, Grouping::PerKernel, derivation, (Source::Simulated, Some(&BACKEND)))?;
    Ok((rows, notices))
}

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

/// Each kernel's memory lines (harness kernels left out), named by `names` (mangled →
/// demangled), for the per-source-line rows.
pub(crate) fn sim_kernels(run: &SimRun, names: &BTreeMap<String, String>) -> Vec<crate::lines::sim::SimKernel> {
    let mut by_kernel: BTreeMap<&str, Vec<crate::lines::sim::SimLine>> = BTreeMap::new();
    for st in &run.stats {
        let Some(inst) = instruction(run, &st.ptx_file, st.ptx_line) else { continue };
        let Some(access) = inst.access else { continue };
        if !inst.is_entry || inst.function.starts_with(HARNESS_PREFIX) {
            continue;
        }
        // An access inside a CUDA header (`__ldg`, `__stcs`: `sm_32_intrinsics.hpp`) belongs to
        // the user's line that called it; the header's line is kept beside it.
        let (source, header) = match (&inst.source, &inst.call_site) {
            (Some(h), Some(call)) if crate::lines::sim::is_toolkit_header(&h.0) => {
                (Some(call.clone()), Some(h.clone()))
            }
            (s, _) => (s.clone(), None),
        };
        by_kernel.entry(&inst.function).or_default().push(crate::lines::sim::SimLine {
            source,
            header,
            ptx: (st.ptx_file.clone(), st.ptx_line),
            access,
            stats: st.clone(),
        });
    }
    by_kernel
        .into_iter()
        .map(|(k, lines)| crate::lines::sim::SimKernel {
            kernel: names.get(k).cloned().unwrap_or_else(|| k.to_string()),
            launches: run.launches.iter().filter(|l| l.kernel == k).count().max(1) as u64,
            lines,
        })
        .collect()
}

/// Mangled → demangled, for every kernel the run names.
pub(crate) fn demangled(run: &SimRun, sim: Option<&GpgpuSim>) -> BTreeMap<String, String> {
    let mut names: Vec<String> =
        run.stats.iter().filter_map(|s| Some(instruction(run, &s.ptx_file, s.ptx_line)?.function.clone())).collect();
    names.extend(run.launches.iter().map(|l| l.kernel.clone()));
    names.sort();
    names.dedup();
    let pretty = match sim {
        Some(sim) => sim.demangle(&names),
        None => names.clone(),
    };
    names.into_iter().zip(pretty).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::gpgpusim::{LineStats, Ptx, SimLaunch};

    fn run(ptx: &str, stats: &[(u32, LineStats)]) -> SimRun {
        SimRun {
            log: String::new(),
            launches: vec![SimLaunch { kernel: "k".into(), grid: [2, 1, 1], block: [64, 1, 1] }],
            stats: stats
                .iter()
                .map(|(l, s)| LineStats { ptx_file: "a.ptx".into(), ptx_line: *l, ..s.clone() })
                .collect(),
            ptx: vec![("a.ptx".into(), Ptx::parse(ptx))],
            elapsed: Duration::ZERO,
        }
    }

    const PTX: &str = ".visible .entry k(\n.param .u64 p\n)\n{\nld.global.v2.f32 {%f1, %f2}, [%rd1];\nst.global.f32 [%rd2], %f1;\nld.shared.u32 %r1, [%r2];\nadd.s32 %r1, %r1, 1;\n}\n\
                       .visible .entry coalprof_init_zero(\n)\n{\nst.global.u32 [%rd2], %r1;\n}\n";

    #[test]
    fn lines_sum_into_the_kernels_raw_counters_by_their_access() {
        let r = run(
            PTX,
            &[
                (5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() }),
                (6, LineStats { executions: 128, global_sectors: 16, global_warps: 4, ..Default::default() }),
                (7, LineStats { executions: 128, shared_wavefronts: 64, shared_warps: 4, ..Default::default() }),
                (8, LineStats { executions: 128, ..Default::default() }),
                (13, LineStats { executions: 64, global_sectors: 8, global_warps: 2, ..Default::default() }),
            ],
        );
        let c = kernel_counters(&r);
        assert_eq!(c.keys().collect::<Vec<_>>(), ["k"], "the harness kernel is no row");
        let v = &c["k"].values;
        assert_eq!(v["global_load_sectors"], 32.0);
        assert_eq!(v["global_load_requests"], 4.0);
        assert_eq!(v["global_load_instructions"], 4.0);
        assert_eq!(v["global_load_bytes_requested"], 128.0 * 8.0, "lanes × the vector's 8 bytes");
        assert_eq!((v["global_store_sectors"], v["global_store_requests"]), (16.0, 4.0));
        assert_eq!((v["shared_load_wavefronts"], v["shared_load_instructions"]), (64.0, 4.0));
        assert_eq!(v["shared_load_bank_conflicts"], 60.0, "16 wavefronts where 1 would do, 4 times");
        assert!(!v.contains_key("shared_store_instructions"), "no shared store ran: absent, not 0");
    }

    #[test]
    fn records_carry_ncu_names_per_launch_values_and_the_launch_shape() {
        let mut r =
            run(PTX, &[(5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() })]);
        r.launches.push(r.launches[0].clone());
        let recs = kernel_records(&r, &Catalogue::builtin());
        assert_eq!(recs.len(), 1);
        let rec = &recs[0];
        assert_eq!((rec.launches, rec.grid, rec.block), (2, Some([2, 1, 1]), Some([64, 1, 1])));
        let sectors = Catalogue::builtin().raw["global_load_sectors"].ncu.clone();
        assert_eq!(rec.metric(&sectors).and_then(Value::number), Some(16.0), "32 sectors over 2 launches");
        r.launches[1].grid = [3, 1, 1];
        assert_eq!(kernel_records(&r, &Catalogue::builtin())[0].grid, None, "shapes differ: no one grid");
    }

    #[test]
    fn counters_the_simulator_never_measures_are_said_once_as_such_not_as_missing_input() {
        let r = run(
            PTX,
            &[
                (5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() }),
                (6, LineStats { executions: 128, global_sectors: 16, global_warps: 4, ..Default::default() }),
                (7, LineStats { executions: 128, shared_wavefronts: 64, shared_warps: 4, ..Default::default() }),
            ],
        );
        let values = &kernel_counters(&r)["k"].values;
        assert!(values.keys().all(|k| MEASURES.contains(k)), "{values:?} are all declared measured");
        let catalogue = Catalogue::builtin();
        let derivation = Derivation::new(&catalogue).unwrap();
        let rows = || {
            let mut row = Row::new("k", Source::Simulated);
            row.metrics = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            let mut rows = vec![row];
            derivation.fill(&mut rows).unwrap();
            rows
        };
        let notices = derivation.notices_by(&mut rows(), Some(&BACKEND));
        assert_eq!(notices.len(), 1, "{notices:?}");
        let n = &notices[0];
        assert!(n.starts_with("not measured by GPGPU-Sim: "), "{n}");
        for never in ["dram_bytes_read", "dram_bytes_write", "duration", "l2_read_sectors"] {
            assert!(n.contains(never), "{never}: {n}");
        }
        // No shared store ran: the simulator counted none, which is no gap in the input.
        assert!(!n.contains("shared_store") && !n.contains("not in the input"), "{n}");
        // The same rows from an unknown source: every gap is the input's.
        let plain = derivation.notices(&mut rows());
        assert!(plain.len() == 1 && plain[0].starts_with("not in the input: "), "{plain:?}");
        assert!(plain[0].contains("shared_store_instructions") && plain[0].contains("dram_bytes_read"), "{plain:?}");
    }

    /// The sanity check runs on simulated rows: a statistics file (as the simulator writes it)
    /// whose load made fewer sectors than requests gives a row without those counters and a notice.
    fn sanity_on(stats: &str) -> (Vec<Row>, Vec<String>) {
        let stats = crate::parse::gpgpusim::parse_inst_stats(stats).unwrap();
        let r = run(PTX, &stats.iter().map(|s| (s.ptx_line, s.clone())).collect::<Vec<_>>());
        let c = Catalogue::builtin();
        kernel_rows(kernel_records(&r, &c), &c, &Derivation::new(&c).unwrap()).unwrap()
    }

    #[test]
    fn simulated_rows_pass_the_sanity_check() {
        // FILE LINE : count latency dram_traffic smem_bk_conflicts smem_warp gmem_access_generated gmem_warp …
        let (rows, notices) = sanity_on("kernel line : count latency dram_traffic\na.ptx 5 : 128 0 0 0 0 2 4 0 0\n");
        assert_eq!(rows.len(), 1);
        assert!(
            notices.iter().any(|n| n.contains("global_load_sectors 2 is below global_load_requests 4")),
            "{notices:?}"
        );
        assert!(!rows[0].metrics.contains_key("global_load_sectors"), "{:?}", rows[0].metrics);
        assert!(rows[0].broken.contains_key("global_load_sectors"), "{:?}", rows[0].broken);
        // The same line with sectors ≥ requests is a row like any other.
        let (rows, notices) = sanity_on("a.ptx 5 : 128 0 0 0 0 8 4 0 0\n");
        assert!(notices.iter().all(|n| !n.contains("below")), "{notices:?}");
        assert_eq!(rows[0].metrics.get("global_load_sectors").copied(), Some(8.0));
    }
}
