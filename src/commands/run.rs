//! `coalprof run`: the built-in patterns, measured with ncu where a GPU is, predicted by the
//! address model elsewhere (`--backend` chooses), executed in GPGPU-Sim, spread over the node's
//! GPUs (`--gpus`) or a Slurm cluster (`--slurm`). Wiring only: choose the executor, hand it to
//! the one loop (`engine::drive`), print what it returns.

use std::path::PathBuf;

use crate::engine::{self, local, ncu, slurm, Executor, Record, Task};
use crate::error::Result;
use crate::exit::Exit;
use crate::model::ModelSettings;
use crate::render::render;
use crate::results::Results;
use crate::settings::{Backend, Common, RunSettings};
use crate::store::RunDir;

pub(crate) fn run(common: &Common, s: &RunSettings) -> Result<Exit> {
    let (results, exit, folder) = execute(common, s)?;
    super::print(&render(&results, common.format, &common.style.summarising("run", Some(&folder)))?)?;
    Ok(exit)
}

/// The run's results, its exit code, and the run folder it saved.
fn execute(common: &Common, s: &RunSettings) -> Result<(Results, Exit, PathBuf)> {
    let model = ModelSettings { l2_fetch_bytes: s.l2_fetch_bytes };
    let one_per_pattern = || s.patterns.iter().map(|&pattern| Task { pattern, partition: None }).collect::<Vec<_>>();
    // Under Slurm each task chooses its backend on its own node, where the GPUs are.
    if let Some(cluster) = &s.slurm {
        let tasks = slurm::tasks(s, cluster);
        let (exec, record) = slurm::prepare(common, s, cluster, tasks.len())?;
        return drive(&exec, tasks, s, common, &format!("slurm-{}", s.backend), record);
    }
    match choose(common, s) {
        (Backend::Sim, _) => {
            let (exec, record) = local::sim(common, s, model)?;
            drive(&exec, one_per_pattern(), s, common, "sim", record)
        }
        (Backend::Model | Backend::Auto, notice) => {
            let (exec, record) = local::model(common, s, model, notice);
            drive(&exec, one_per_pattern(), s, common, "model", record)
        }
        (Backend::Ncu, _) => {
            let (exec, record) = ncu::prepare(common, s, model)?;
            drive(&exec, one_per_pattern(), s, common, "ncu", record)
        }
        // Only a task file could ask for these: clap offers neither.
        (b @ (Backend::Import | Backend::Triton), _) => {
            Err(crate::error::Error::usage(format!("`run` has no backend `{b}`: it takes auto, ncu, model or sim")))
        }
    }
}

fn drive(
    exec: &dyn Executor,
    tasks: Vec<Task>,
    s: &RunSettings,
    common: &Common,
    backend: &str,
    record: Record,
) -> Result<(Results, Exit, PathBuf)> {
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), backend)?;
    let (results, exit) = engine::drive(exec, tasks, &dir, &common.style, record)?;
    Ok((results, exit, dir.path))
}

/// `auto` measures only where a GPU and ncu are both present, and says so when it cannot: the
/// backend, and the notice the prediction carries.
fn choose(common: &Common, s: &RunSettings) -> (Backend, Option<String>) {
    match s.backend {
        Backend::Auto => match common.tools.gpus().and_then(|_| common.tools.ncu_tool()) {
            Ok(_) => (Backend::Ncu, None),
            Err(e) => (
                Backend::Model,
                Some(format!("{e}: showing the address model's prediction (every number is predicted)")),
            ),
        },
        b => (b, None),
    }
}
