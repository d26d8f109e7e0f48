//! `coalprof run`: the built-in patterns, measured with ncu where a GPU is, predicted by the
//! address model elsewhere (`--backend` chooses). Every finished pattern is saved before the
//! next one starts; a pattern that fails does not cost the others their results.

use crate::build::build;
use crate::cancel;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::model::{predicted_rows, ModelSettings};
use crate::patterns::variants;
use crate::profile::{measure, run_record};
use crate::render::render;
use crate::results::{Provenance, Results};
use crate::settings::{Backend, Common, RunSettings};
use crate::store::RunDir;
use crate::tools::ncu::Ncu;
use crate::tools::nvcc::Nvcc;

pub(crate) fn run(common: &Common, s: &RunSettings) -> Result<Exit> {
    // Under Slurm each task chooses its backend on its own node, where the GPUs are.
    let (results, exit) = match &s.slurm {
        Some(slurm) => crate::slurm::run(common, s, slurm)?,
        None => run_here(common, s)?,
    };
    super::print(&render(&results, common.format, &common.style)?)?;
    Ok(exit)
}

/// The run on this machine: the model, the ncu on one GPU, or spread over several.
fn run_here(common: &Common, s: &RunSettings) -> Result<(Results, Exit)> {
    let (backend, notice) = choose(common, s)?;
    let model = ModelSettings { l2_fetch_bytes: s.l2_fetch_bytes };
    let (results, exit) = match (backend, &s.gpus) {
        (Backend::Model, _) => (predicted(common, s, &model, notice)?, Exit::Ok),
        (Backend::Sim, _) => super::simulate::run(common, s, &model)?,
        (_, Some(picks)) => super::spread::measured(common, s, &model, picks)?,
        _ => measured(common, s, &model)?,
    };
    Ok((results, exit))
}

/// `auto` measures only where a GPU and ncu are both present, and says so when it cannot.
fn choose(common: &Common, s: &RunSettings) -> Result<(Backend, Option<String>)> {
    match s.backend {
        Backend::Auto => match common.gpus().and_then(|_| Ok(common.ncu()?)) {
            Ok(_) => Ok((Backend::Ncu, None)),
            Err(e) => Ok((
                Backend::Model,
                Some(format!("{e}: showing the address model's prediction (every number is predicted)")),
            )),
        },
        b => Ok((b, None)),
    }
}

/// The model's prediction, pattern by pattern; each finished pattern is saved before the next
/// starts, so a Ctrl-C in the middle keeps every pattern predicted so far.
fn predicted(common: &Common, s: &RunSettings, model: &ModelSettings, notice: Option<String>) -> Result<Results> {
    let mut prov = Provenance::new("model");
    prov.git = common.checkout();
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());
    prov.settings.insert("size_bytes".into(), s.sizing.bytes.into());
    let mut results = Results::new(prov, Vec::new());
    results.notices.extend(notice);
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "model", &common.style)?;
    for &pattern in &s.patterns {
        let mut plan = variants(pattern, s.sizing);
        plan.retain(|v| s.variants.is_empty() || s.variants.contains(&v.name));
        let model = *model;
        let mut rows = cancel::race(move || predicted_rows(&plan, &model))?;
        common.derivation.apply(&mut rows)?;
        results.rows.extend(rows);
        dir.save_results(&results)?;
    }
    tracing::info!(run = %dir.path.display(), format = ?common.format, "saved");
    Ok(results)
}

/// What measuring needs, checked in the order a user must fix it: a GPU (unless `--arch` says
/// what to build for, in which case ncu itself reports a missing driver), then ncu, then nvcc.
/// When the GPU is missing, a missing ncu is mentioned in the same line, so one run tells the
/// user both things to install.
fn preflight(common: &Common, s: &RunSettings) -> Result<(Ncu, Nvcc, String)> {
    let ncu = common.ncu();
    let arch = match &s.arch {
        Some(a) => a.clone(),
        None => match (common.gpu_arch(), &ncu) {
            (Ok(arch), _) => arch,
            (Err(Error::Unavailable { message, hint }), Err(missing)) => {
                let hint = [hint.as_deref(), missing.hint()].into_iter().flatten().collect::<Vec<_>>().join("; ");
                return Err(Error::unavailable(format!("{message}; and {missing}"), hint));
            }
            (Err(e), _) => return Err(e),
        },
    };
    Ok((ncu?, common.nvcc()?, arch))
}

fn measured(common: &Common, s: &RunSettings, model: &ModelSettings) -> Result<(Results, Exit)> {
    let (ncu, nvcc, arch) = preflight(common, s)?;
    let built = build(&s.patterns, &arch, &nvcc, &common.cache)?;
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "ncu", &common.style)?;
    let ncu_version = ncu.version().ok();
    let mut record = run_record(&s.profiler, s.sizing, &arch, ncu_version.as_deref(), &s.patterns);
    let git = common.checkout();
    record["git"] = serde_json::json!(git);
    dir.write("run.json", format!("{record:#}\n").as_bytes())?;
    let mut prov = Provenance::new("ncu");
    prov.git = git;
    prov.ncu_version = ncu_version;
    if let Some(g) = common.gpus().ok().and_then(|g| g.into_iter().next()) {
        prov.gpu = Some(g.name);
        prov.compute_capability = Some(g.compute_capability);
        prov.driver = Some(g.driver);
    }
    prov.settings.insert("cache_control".into(), s.profiler.cache_control.clone().into());
    prov.settings.insert("clock_control".into(), s.profiler.clock_control.clone().into());
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());
    let mut results = Results::new(prov, Vec::new());
    let mut failed: Vec<Error> = Vec::new();
    let profiler = super::profiler(common, &ncu, s, model, true);
    for b in &built {
        if let Err(e) = cancel::check() {
            dir.save_results(&results)?;
            return Err(e.into());
        }
        match measure(b.pattern, s.sizing, &b.exe, &profiler, &dir) {
            Ok(m) => {
                results.rows.extend(m.rows);
                results.worst_lines.extend(m.worst_lines);
                let p = &mut results.provenance;
                p.gpu = p.gpu.take().or(m.gpu);
                p.compute_capability = p.compute_capability.take().or(m.cc);
                p.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s.or(m.peak_bandwidth);
                p.settings.insert(format!("replay_passes.{}", b.pattern), serde_json::json!(m.passes));
                if !m.ncu_warnings.is_empty() {
                    for w in &m.ncu_warnings {
                        tracing::info!(pattern = %b.pattern, "ncu: {w}");
                    }
                    record["ncu_warnings"][b.pattern.name()] = serde_json::json!(m.ncu_warnings);
                    dir.write("run.json", format!("{record:#}\n").as_bytes())?;
                }
                dir.save_results(&results)?;
            }
            Err(e) if super::fatal(&e) => {
                dir.save_results(&results)?;
                return Err(e);
            }
            Err(e) => {
                crate::messages::failure(format!("pattern `{}`: {e}", b.pattern));
                failed.push(e);
            }
        }
    }
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), "saved");
    let exit = failed.first().map_or(Exit::Ok, Error::exit);
    Ok((results, exit))
}
