//! `run --gpus`: the glue between the settings and the multi-GPU scheduler (`spread.rs`):
//! select and pin the GPUs, build the patterns once per architecture, profile, sort the rows
//! into the catalogue's order and save one run folder.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

use crate::build::build;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::model::ModelSettings;
use crate::patterns::Pattern;
use crate::profile::run_record;
use crate::results::Results;
use crate::settings::{Common, RunSettings};
use crate::spread::{pin, profile_all, queue, select, GpuPick, Shared, Worker};
use crate::store::RunDir;

pub(crate) fn measured(
    common: &Common,
    s: &RunSettings,
    model: &ModelSettings,
    picks: &[GpuPick],
) -> Result<(Results, Exit)> {
    let gpus = select(&common.gpus()?, picks)?;
    let (ncu, nvcc) = (common.ncu()?, common.nvcc()?);
    let mut archs: Vec<String> = gpus.iter().map(|g| g.arch()).collect();
    archs.dedup();
    archs.sort();
    archs.dedup();
    let mut exes: BTreeMap<String, BTreeMap<Pattern, PathBuf>> = BTreeMap::new();
    for arch in &archs {
        let built = build(&s.patterns, arch, &nvcc, &common.cache)?;
        exes.insert(arch.clone(), built.into_iter().map(|b| (b.pattern, b.exe)).collect());
    }
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "ncu", &common.style)?;
    let ncu_version = ncu.version().ok();
    let mut record = run_record(&s.profiler, s.sizing, &archs.join(","), ncu_version.as_deref(), &s.patterns);
    let listed: Vec<serde_json::Value> = (gpus.iter())
        .map(|g| serde_json::json!({ "index": g.index, "name": g.name, "arch": g.arch(), "uuid": g.uuid }))
        .collect();
    record["gpus"] = serde_json::Value::Array(listed.clone());
    let git = common.checkout();
    record["git"] = serde_json::json!(git);
    dir.write("run.json", format!("{record:#}\n").as_bytes())?;

    let mut prov = crate::results::Provenance::new("ncu");
    prov.git = git;
    prov.ncu_version = ncu_version;
    let mut names: Vec<&str> = Vec::new();
    for g in &gpus {
        if !names.contains(&g.name.as_str()) {
            names.push(&g.name);
        }
    }
    prov.gpu = Some(names.join(", "));
    if archs.len() == 1 {
        prov.compute_capability = Some(gpus[0].compute_capability.clone());
        prov.driver = Some(gpus[0].driver.clone());
    }
    prov.settings.insert("gpus".into(), serde_json::Value::Array(listed));
    prov.settings.insert("cache_control".into(), s.profiler.cache_control.clone().into());
    prov.settings.insert("clock_control".into(), s.profiler.clock_control.clone().into());
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());

    let shared = Shared {
        queue: Mutex::new(queue(&s.patterns, s.sizing)),
        results: Mutex::new(Results::new(prov, Vec::new())),
        failed: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
    };
    let base = super::profiler(common, &ncu, s, model, false);
    let workers = (gpus.iter())
        .map(|g| Ok(Worker { gpu: g.clone(), env: pin(g, &common.tmp)?, profiler: base, exes: &exes[&g.arch()] }))
        .collect::<Result<Vec<_>>>()?;
    crate::messages::progress(format!("profiling {} patterns on {} GPUs at once", s.patterns.len(), workers.len()));
    profile_all(workers, s.sizing, &dir, &shared)?;

    let mut results = shared.results.into_inner().expect("results lock");
    let mut failed = shared.failed.into_inner().expect("failures lock");
    let left = shared.queue.into_inner().expect("queue lock");
    if !left.is_empty() {
        let names: Vec<String> = left.iter().map(|p| format!("`{p}`")).collect();
        let e = Error::unavailable(
            format!("no GPU could profile {}", names.join(", ")),
            "`coalprof doctor` says what each GPU lacks",
        );
        crate::messages::error(&e, e.hint());
        failed.push(e);
    }
    let order = |p: &Option<String>| s.patterns.iter().position(|x| Some(x.name()) == p.as_deref());
    results.rows.sort_by_key(|r| order(&r.pattern));
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), "saved");
    Ok((results, failed.first().map_or(Exit::Ok, Error::exit)))
}
