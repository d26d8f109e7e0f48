//! `run --backend sim`: the built-in patterns built for GPGPU-Sim (CUDA 11, `sm_70`,
//! `-cudart shared`), each variant executed in the simulator and compared with the model like a
//! measured run. Every finished pattern is saved before the next one starts.

use serde_json::json;

use crate::build::build_with;
use crate::cancel;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::model::ModelSettings;
use crate::profile::sim::{device_name, simulate, Simulator};
use crate::results::{Provenance, Results};
use crate::settings::{Common, RunSettings};
use crate::store::RunDir;
use crate::tools::gpgpusim::{ARCH, CONFIG, NVCC_FLAGS};

pub(crate) fn run(common: &Common, s: &RunSettings, model: &ModelSettings) -> Result<(Results, Exit)> {
    let sim = common.tools.gpgpusim()?;
    let nvcc = sim.nvcc();
    let nvcc_version = nvcc.version()?;
    tracing::info!(simulator = %sim.root.display(), cuda = %sim.cuda.display(), nvcc = %nvcc_version, "using GPGPU-Sim");
    let built = build_with(&s.patterns, ARCH, &nvcc, &common.cache, NVCC_FLAGS)?;
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "sim", &common.style)?;
    let version = sim.version();
    let mut record = json!({
        "backend": "sim",
        "simulator": version,
        "config": CONFIG,
        "arch": ARCH,
        "nvcc_version": nvcc_version,
        "nvcc_flags": NVCC_FLAGS,
        "size_bytes": s.sizing.bytes,
        "timeout_s": s.profiler.timeout.as_secs(),
        "patterns": s.patterns.iter().map(|p| p.name()).collect::<Vec<_>>(),
    });
    dir.write("run.json", format!("{record:#}\n").as_bytes())?;
    let mut prov = Provenance::new("sim");
    prov.gpu = Some(device_name());
    prov.compute_capability = Some("7.0".into());
    prov.settings.insert("simulator".into(), version.into());
    prov.settings.insert("config".into(), CONFIG.into());
    prov.settings.insert("size_bytes".into(), s.sizing.bytes.into());
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());
    let mut results = Results::new(prov, Vec::new());
    let simulator = Simulator {
        sim: &sim,
        catalogue: &common.catalogue,
        derivation: &common.derivation,
        model,
        timeout: s.profiler.timeout,
    };
    let mut failed: Vec<Error> = Vec::new();
    for b in &built {
        if let Err(e) = cancel::check() {
            dir.save_results(&results)?;
            return Err(e.into());
        }
        match simulate(b.pattern, s.sizing, &b.exe, &simulator, &dir) {
            Ok(m) => {
                results.rows.extend(m.rows);
                record["seconds"][b.pattern.name()] =
                    json!(m.seconds.into_iter().map(|(k, v)| (k, json!(v))).collect::<serde_json::Map<_, _>>());
                dir.write("run.json", format!("{record:#}\n").as_bytes())?;
                dir.save_results(&results)?;
            }
            Err(e) if super::run::fatal(&e) => {
                dir.save_results(&results)?;
                return Err(e);
            }
            Err(e) => {
                eprintln!("error: pattern `{}`: {e}", b.pattern);
                failed.push(e);
            }
        }
    }
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), "saved");
    Ok((results, failed.first().map_or(Exit::Ok, Error::exit)))
}
