//! The ncu executor: the patterns measured on this node's GPUs, one ncu per GPU at a time.
//!
//! Without `--gpus` there is one place, the GPU the driver picks, and ncu draws its progress
//! bar. With `--gpus` there is one place per GPU: only one ncu may profile a GPU at a time (it
//! locks the device under `$TMPDIR/nvidia/nsight_compute/`), but separate GPUs can be profiled
//! at once by separate ncu processes, so every child of a place (ncu, the timing run) is pinned
//! to its GPU with `CUDA_VISIBLE_DEVICES=<UUID>` and gets that GPU's own `TMPDIR`, and each row
//! names the GPU it was measured on. Kernels are built once per architecture before the run.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::build::build;
use crate::engine::{Executor, Outcome, Record, Task};
use crate::error::{Error, Result};
use crate::measure::{measure, Profiler};
use crate::model::ModelSettings;
use crate::names::safe_name;
use crate::patterns::Pattern;
use crate::results::{Placement, Row};
use crate::settings::{Common, GpuPick, RunSettings};
use crate::store::RunDir;
use crate::tools::smi::Gpu;

/// The GPUs `picks` name among those nvidia-smi lists, in the order given, each once.
pub(crate) fn select(listed: &[Gpu], picks: &[GpuPick]) -> Result<Vec<Gpu>> {
    if picks.contains(&GpuPick::All) {
        return Ok(listed.to_vec());
    }
    let known = || listed.iter().map(|g| g.index.to_string()).collect::<Vec<_>>().join(", ");
    let mut out: Vec<Gpu> = Vec::new();
    for p in picks {
        let found = listed.iter().find(|g| match p {
            GpuPick::Index(i) => g.index == *i,
            GpuPick::Uuid(u) => g.uuid.as_deref() == Some(u.as_str()),
            GpuPick::All => true,
        });
        let g = found.ok_or_else(|| {
            let what = match p {
                GpuPick::Index(i) => i.to_string(),
                GpuPick::Uuid(u) => u.clone(),
                GpuPick::All => "all".into(),
            };
            Error::usage(format!("`--gpus {what}`: nvidia-smi lists no such GPU (it lists {})", known()))
        })?;
        if !out.contains(g) {
            out.push(g.clone());
        }
    }
    Ok(out)
}

/// The environment that pins a child to `gpu`: its UUID (the index where nvidia-smi gives
/// none), and a `TMPDIR` of its own under `tmp`, the same for every coalprof on this GPU so
/// that two runs on one GPU still see each other's ncu lock.
pub(crate) fn pin(gpu: &Gpu, tmp: &Path) -> Result<Vec<(OsString, OsString)>> {
    let id = gpu.uuid.clone().unwrap_or_else(|| gpu.index.to_string());
    let dir = tmp.join(format!("coalprof-gpu-{}", safe_name(&id)));
    std::fs::create_dir_all(&dir).map_err(|e| Error::write(&dir, e))?;
    Ok(vec![("CUDA_VISIBLE_DEVICES".into(), id.into()), ("TMPDIR".into(), dir.into())])
}

/// One place patterns are measured: a GPU pinned by `--gpus`, or whichever the driver picks.
struct Place {
    gpu: Option<Gpu>,
    env: Vec<(OsString, OsString)>,
    arch: String,
}

/// ncu on this node's GPUs.
pub(crate) struct NcuExecutor<'a> {
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
    ncu: crate::tools::ncu::Ncu,
    places: Vec<Place>,
    /// The executables, per architecture.
    exes: BTreeMap<String, BTreeMap<Pattern, PathBuf>>,
}

/// What measuring on one GPU needs, checked in the order a user must fix it: a GPU (unless
/// `--arch` says what to build for, in which case ncu itself reports a missing driver), then
/// ncu. When the GPU is missing, a missing ncu is mentioned in the same line, so one run tells
/// the user both things to install.
/// Returns ncu, the architecture, and the GPU the run records (nvidia-smi asked once).
fn preflight(common: &Common, s: &RunSettings) -> Result<(crate::tools::ncu::Ncu, String, Vec<Gpu>)> {
    let ncu = common.tools.ncu_tool();
    let (arch, gpus) = match (&s.arch, common.tools.gpus()) {
        (Some(a), gpus) => (a.clone(), gpus.unwrap_or_default()),
        (None, Ok(gpus)) => (gpus[0].arch(), gpus),
        (None, Err(no_gpu)) => {
            let Err(missing) = &ncu else { return Err(no_gpu.into()) };
            let hint = [no_gpu.hint(), missing.hint()].into_iter().flatten().collect::<Vec<_>>().join("; ");
            return Err(Error::unavailable(format!("{no_gpu}; and {missing}"), hint));
        }
    };
    Ok((ncu?, arch, gpus.into_iter().take(1).collect()))
}

/// The places (one GPU, or each of `--gpus`), the executables built for their architectures,
/// and what the run records about them.
pub(crate) fn prepare<'a>(
    common: &'a Common,
    s: &'a RunSettings,
    model: ModelSettings,
) -> Result<(NcuExecutor<'a>, Record)> {
    let (ncu, places, listed) = match &s.gpus {
        None => {
            let (ncu, arch, first) = preflight(common, s)?;
            (ncu, vec![Place { gpu: None, env: Vec::new(), arch }], first)
        }
        Some(picks) => {
            let gpus = select(&common.tools.gpus()?, picks)?;
            let places = (gpus.iter())
                .map(|g| Ok(Place { gpu: Some(g.clone()), env: pin(g, &common.tmp)?, arch: g.arch() }))
                .collect::<Result<Vec<_>>>()?;
            (common.tools.ncu_tool()?, places, gpus)
        }
    };
    let nvcc = common.tools.nvcc_tool()?;
    let mut archs: Vec<String> = places.iter().map(|p| p.arch.clone()).collect();
    archs.sort();
    archs.dedup();
    let mut exes = BTreeMap::new();
    for arch in &archs {
        let built = build(&s.patterns, arch, &nvcc, &common.cache)?;
        exes.insert(arch.clone(), built.into_iter().map(|b| (b.pattern, b.exe)).collect());
    }
    let mut record = Record::new(crate::results::Backend::Ncu, common, s).ncu(s, ncu.version().ok(), &archs.join(","));
    let p = &mut record.provenance;
    let mut names: Vec<&str> = Vec::new();
    for g in &listed {
        if !names.contains(&g.name.as_str()) {
            names.push(&g.name);
        }
    }
    p.gpu = (!names.is_empty()).then(|| names.join(", "));
    if let (Some(g), 1) = (listed.first(), archs.len()) {
        p.compute_capability = Some(g.compute_capability.clone());
        p.driver = Some(g.driver.clone());
    }
    if s.gpus.is_some() {
        let gpus: Vec<serde_json::Value> = (listed.iter())
            .map(|g| serde_json::json!({ "index": g.index, "name": g.name, "arch": g.arch(), "uuid": g.uuid }))
            .collect();
        p.settings.insert("gpus".into(), gpus.clone().into());
        record.extra.insert("gpus".into(), gpus.into());
        let n = places.len();
        crate::messages::progress(format!("profiling {} patterns on {n} GPUs at once", s.patterns.len()));
    }
    Ok((NcuExecutor { common, s, model, ncu, places, exes }, record))
}

impl Executor for NcuExecutor<'_> {
    fn slots(&self) -> usize {
        self.places.len()
    }

    /// Its variant count: each is one profiled launch.
    fn weight(&self, task: &Task) -> usize {
        crate::patterns::variants(task.pattern, self.s.sizing).len()
    }

    fn slot_name(&self, slot: usize) -> Option<String> {
        let g = self.places[slot].gpu.as_ref()?;
        Some(format!("GPU {} ({})", g.index, g.name))
    }

    fn execute(&self, slot: usize, task: &Task, dir: &RunDir) -> Result<Outcome> {
        let place = &self.places[slot];
        let profiler = Profiler {
            ncu: &self.ncu,
            catalogue: &self.common.catalogue,
            derivation: &self.common.derivation,
            settings: &self.s.profiler,
            rep_reader: self.common.rep_reader,
            model: &self.model,
            env: &place.env,
            progress: self.places.len() == 1,
        };
        let exe = &self.exes[&place.arch][&task.pattern];
        let m = measure(task.pattern, self.s.sizing, exe, &profiler, dir)?;
        let pattern = task.pattern.name();
        for w in &m.ncu_warnings {
            tracing::info!(pattern, "ncu: {w}");
        }
        let placement = place.gpu.as_ref().map(|g| Placement {
            gpu: Some(g.name.clone()),
            arch: Some(g.arch()),
            uuid: g.uuid.clone(),
            index: Some(g.index),
            ..Placement::default()
        });
        let mut learned = crate::results::Provenance {
            gpu: m.gpu,
            compute_capability: m.cc,
            peak_bandwidth_bytes_per_s: m.peak_bandwidth,
            ..Default::default()
        };
        learned.settings.insert(format!("replay_passes.{pattern}"), serde_json::json!(m.passes));
        let mut record = serde_json::Map::new();
        if !m.ncu_warnings.is_empty() {
            record.insert("ncu_warnings".into(), serde_json::json!({ pattern: m.ncu_warnings }));
        }
        Ok(Outcome {
            rows: m.rows.into_iter().map(|r| Row { placement: placement.clone(), ..r }).collect(),
            worst_lines: m.worst_lines,
            learned,
            record,
            ..Outcome::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, cc: &str) -> Gpu {
        Gpu {
            index,
            name: format!("GPU{cc}"),
            compute_capability: cc.into(),
            memory_mib: None,
            driver: "570".into(),
            uuid: Some(format!("GPU-{index}")),
        }
    }

    #[test]
    fn picks_select_listed_gpus_by_index_or_uuid() {
        let listed = [gpu(0, "8.0"), gpu(1, "8.0"), gpu(2, "9.0")];
        let pick = |v: &[&str]| {
            select(&listed, &crate::settings::parse_picks(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())?)
        };
        assert_eq!(pick(&["all"]).unwrap().len(), 3);
        let two = pick(&["2", "GPU-0", "2"]).unwrap();
        assert_eq!(two.iter().map(|g| g.index).collect::<Vec<_>>(), [2, 0]);
        assert!(pick(&["7"]).unwrap_err().to_string().contains("lists 0, 1, 2"));
        assert!(pick(&["x"]).is_err());
        assert!(pick(&["all", "0"]).is_err());
    }

    #[test]
    fn pin_names_the_uuid_and_a_tmpdir_per_gpu() {
        let tmp = tempfile::tempdir().unwrap();
        let env = pin(&gpu(3, "9.0"), tmp.path()).unwrap();
        assert_eq!(env[0], ("CUDA_VISIBLE_DEVICES".into(), "GPU-3".into()));
        assert_eq!(PathBuf::from(&env[1].1), tmp.path().join("coalprof-gpu-GPU-3"));
        assert!(tmp.path().join("coalprof-gpu-GPU-3").is_dir());
    }
}
