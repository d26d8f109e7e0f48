//! The executors that need no GPU, on this machine: the address model's prediction (a pattern
//! per core), and the built-in patterns executed in GPGPU-Sim (CUDA 11, `sm_70`, `-cudart
//! shared`) and compared with the model like a measured run: one simulator process per core,
//! patterns and their variants side by side.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;

use crate::build::build_with;
use crate::engine::{Executor, Outcome, Record, Task};
use crate::error::Result;
use crate::measure::sim::{simulate, Permits, Simulator};
use crate::model::{predicted_rows, ModelSettings};
use crate::patterns::{variants, Pattern};
use crate::settings::{Common, RunSettings};
use crate::store::RunDir;
use crate::tools::gpgpusim::{GpgpuSim, ARCH, CONFIG, NVCC_FLAGS};

/// The address model, a pattern per core.
pub(crate) struct ModelExecutor<'a> {
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
}

/// The model's executor and record; `notice` says why the model stands in for a GPU, if it does.
pub(crate) fn model<'a>(
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
    notice: Option<String>,
) -> (ModelExecutor<'a>, Record) {
    let mut record = Record::new(crate::results::Backend::Model, common, s);
    record.notices.extend(notice);
    (ModelExecutor { common, s, model }, record)
}

impl Executor for ModelExecutor<'_> {
    /// A pattern per core. The gather's lane-by-lane count keeps every core busy only in its
    /// main loop; its other variants, and the other patterns (closed forms, replays of a few
    /// CTAs, single-threaded), fill the cores around it.
    fn slots(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cores.min(self.s.patterns.len()).max(1)
    }

    /// The gather first: the only pattern counted lane by lane (2^25 lookups at 1 GiB), most of
    /// the run's time; the rest then run beside it.
    fn weight(&self, task: &Task) -> usize {
        usize::from(task.pattern == Pattern::Gather)
    }

    /// A model run takes a fraction of a second: no line per finished pattern.
    fn says_progress(&self) -> bool {
        false
    }

    fn execute(&self, _slot: usize, task: &Task, _dir: &RunDir) -> Result<Outcome> {
        let mut plan = variants(task.pattern, self.s.sizing);
        plan.retain(|v| self.s.variants.is_empty() || self.s.variants.contains(&v.name));
        let model = self.model;
        // Raced against Ctrl-C: the gather's replay at 1 GiB takes a while.
        let mut rows = crate::cancel::race(move || predicted_rows(&plan, &model))?;
        self.common.derivation.apply(&mut rows)?;
        Ok(Outcome { rows, ..Outcome::default() })
    }
}

/// GPGPU-Sim, pattern by pattern.
pub(crate) struct SimExecutor<'a> {
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
    sim: GpgpuSim,
    exes: BTreeMap<Pattern, PathBuf>,
    /// Simulator processes at once: the machine's cores.
    width: usize,
    permits: Permits,
}

/// The simulator, the patterns built for it, and what the run records about them.
pub(crate) fn sim<'a>(
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
) -> Result<(SimExecutor<'a>, Record)> {
    let sim = common.tools.gpgpusim()?;
    crate::measure::sim::check_mode(&sim, s.profiler.sim_mode)?;
    let nvcc = sim.nvcc();
    let nvcc_version = nvcc.version()?;
    tracing::info!(simulator = %sim.root.display(), cuda = %sim.cuda.display(), nvcc = %nvcc_version, "using GPGPU-Sim");
    let built = build_with(&s.patterns, ARCH, &nvcc, &common.cache, NVCC_FLAGS)?;
    let version = sim.version();
    let mut record = Record::new(crate::results::Backend::Sim, common, s).simulator(&version, s.profiler.sim_mode);
    for (k, v) in [
        ("simulator", json!(version)),
        ("config", json!(CONFIG)),
        ("arch", json!(ARCH)),
        ("nvcc_version", json!(nvcc_version)),
        ("nvcc_flags", json!(NVCC_FLAGS)),
        ("sim_mode", json!(s.profiler.sim_mode.name())),
        ("timeout_s", json!(s.profiler.timeout.as_secs())),
    ] {
        record.extra.insert(k.into(), v);
    }
    let exes = built.into_iter().map(|b| (b.pattern, b.exe)).collect();
    // One simulator process is one busy core (the patched simulator sleeps while it waits).
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok((SimExecutor { common, s, model, sim, exes, width, permits: Permits::new(width) }, record))
}

impl Executor for SimExecutor<'_> {
    /// A pattern per core: each also runs its variants side by side, all of them sharing
    /// the run's permits, so no more simulators run at once than there are cores.
    fn slots(&self) -> usize {
        self.width.min(self.s.patterns.len()).max(1)
    }

    /// Its variant count: each is one simulator process.
    fn weight(&self, task: &Task) -> usize {
        let only = &self.s.variants;
        (crate::patterns::sim_variants(task.pattern, self.s.sizing).iter())
            .filter(|v| only.is_empty() || only.contains(&v.name))
            .count()
    }

    fn execute(&self, _slot: usize, task: &Task, dir: &RunDir) -> Result<Outcome> {
        let simulator = Simulator {
            sim: &self.sim,
            catalogue: &self.common.catalogue,
            derivation: &self.common.derivation,
            model: &self.model,
            mode: self.s.profiler.sim_mode,
            timeout: self.s.profiler.timeout,
            only: &self.s.variants,
            permits: &self.permits,
        };
        let m = simulate(task.pattern, self.s.sizing, &self.exes[&task.pattern], &simulator, dir)?;
        let seconds: serde_json::Map<String, serde_json::Value> =
            m.seconds.into_iter().map(|(k, v)| (k, json!(v))).collect();
        let mut record = serde_json::Map::new();
        record.insert("seconds".into(), json!({ task.pattern.name(): seconds }));
        Ok(Outcome { rows: m.rows, record, notices: m.notices, ..Outcome::default() })
    }
}
