//! `run --gpus`: the patterns of one run spread over the GPUs of a node. Only one ncu may
//! profile a GPU at a time (it locks the device under `$TMPDIR/nvidia/nsight_compute/`), but
//! separate GPUs can be profiled at once by separate ncu processes. So there is one worker per
//! GPU, each taking the next pattern from one queue (longest first, so the GPUs finish close
//! together), and every child of a worker (ncu, the timing run) is pinned to its GPU with
//! `CUDA_VISIBLE_DEVICES=<UUID>` and gets that GPU's own `TMPDIR`, so lock files never collide.
//! Kernels are built once per architecture before the workers start. A pattern that fails costs
//! only itself; a GPU that cannot profile, or fails two patterns in a row, stops taking patterns
//! and the others take the rest.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::patterns::{variants, Pattern, Sizing};
use crate::profile::{measure, Measured, Profiler};
use crate::render::safe_name;
use crate::results::{Placement, Results, Row};
use crate::store::RunDir;
use crate::tools::smi::Gpu;
use crate::tools::ToolError;

/// One `--gpus` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum GpuPick {
    All,
    Index(u32),
    Uuid(String),
}

/// Parse `--gpus`: `all`, or indices and `GPU-…`/`MIG-…` UUIDs.
pub(crate) fn parse_picks(values: &[String]) -> Result<Vec<GpuPick>> {
    let picks: Vec<GpuPick> = (values.iter().map(|v| v.trim()))
        .map(|v| match v {
            "all" => Ok(GpuPick::All),
            v if v.starts_with("GPU-") || v.starts_with("MIG-") => Ok(GpuPick::Uuid(v.to_string())),
            v => v.parse().map(GpuPick::Index).map_err(|_| {
                Error::usage(format!("`--gpus {v}`: give `all`, nvidia-smi indices (`0,2`) or UUIDs (`GPU-…`)"))
            }),
        })
        .collect::<Result<_>>()?;
    if picks.len() > 1 && picks.contains(&GpuPick::All) {
        return Err(Error::usage("`--gpus all` stands alone"));
    }
    Ok(picks)
}

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

/// Where a row was measured.
pub(crate) fn placement(gpu: &Gpu) -> Placement {
    Placement {
        gpu: Some(gpu.name.clone()),
        arch: Some(gpu.arch()),
        uuid: gpu.uuid.clone(),
        index: Some(gpu.index),
        ..Placement::default()
    }
}

/// Patterns longest first (by variant count; the catalogue's order among equals), so the last
/// pattern to start is a short one.
pub(crate) fn queue(patterns: &[Pattern], sizing: Sizing) -> VecDeque<Pattern> {
    let mut p = patterns.to_vec();
    p.sort_by_key(|&p| std::cmp::Reverse(variants(p, sizing).len()));
    p.into()
}

/// One GPU's worker: its pin, the profiler of its architecture's build, and the executables.
pub(crate) struct Worker<'a> {
    pub gpu: Gpu,
    pub env: Vec<(OsString, OsString)>,
    pub profiler: Profiler<'a>,
    pub exes: &'a BTreeMap<Pattern, PathBuf>,
}

/// What the workers share: the queue, the run so far, and the failures.
pub(crate) struct Shared {
    pub queue: Mutex<VecDeque<Pattern>>,
    pub results: Mutex<Results>,
    pub failed: Mutex<Vec<Error>>,
    pub stop: std::sync::atomic::AtomicBool,
}

/// Profile the queue on every worker at once; returns when the queue is empty or every worker
/// has stopped. `record` saves the run after each pattern.
pub(crate) fn profile_all(workers: Vec<Worker<'_>>, sizing: Sizing, dir: &RunDir, shared: &Shared) -> Result<()> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = workers.into_iter().map(|w| scope.spawn(move || work(&w, sizing, dir, shared))).collect();
        for h in handles {
            h.join().map_err(|_| Error::Internal("a GPU worker panicked".into()))??;
        }
        Ok(())
    })
}

fn work(w: &Worker<'_>, sizing: Sizing, dir: &RunDir, shared: &Shared) -> Result<()> {
    use std::sync::atomic::Ordering;
    let profiler = Profiler { env: &w.env, progress: false, ..w.profiler };
    let gpu = format!("GPU {} ({})", w.gpu.index, w.gpu.name);
    let mut failed_in_a_row = 0;
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let Some(pattern) = shared.queue.lock().expect("queue lock").pop_front() else { return Ok(()) };
        let started = Instant::now();
        let outcome = measure(pattern, sizing, &w.exes[&pattern], &profiler, dir);
        match outcome {
            Ok(m) => {
                failed_in_a_row = 0;
                crate::messages::progress(format!(
                    "{gpu}: `{pattern}` measured in {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
                let mut results = shared.results.lock().expect("results lock");
                add(&mut results, pattern, m, &placement(&w.gpu));
                dir.save_results(&results)?;
            }
            Err(e) if interrupted(&e) => {
                shared.stop.store(true, Ordering::Relaxed);
                shared.failed.lock().expect("failures lock").push(e);
                return Ok(());
            }
            Err(e) if gpu_unusable(&e) => {
                crate::messages::failure(format!(
                    "{gpu} cannot profile (`{pattern}` and its later patterns go to the other GPUs): {e}"
                ));
                shared.queue.lock().expect("queue lock").push_back(pattern);
                shared.failed.lock().expect("failures lock").push(e);
                return Ok(());
            }
            Err(e) => {
                crate::messages::failure(format!("pattern `{pattern}` on {gpu}: {e}"));
                shared.failed.lock().expect("failures lock").push(e);
                // One failure may be the pattern's; two in a row is the GPU (or its ncu), which
                // would otherwise fail every pattern left in the queue.
                failed_in_a_row += 1;
                if failed_in_a_row >= 2 {
                    crate::messages::failure(format!(
                        "{gpu} failed two patterns in a row; the other GPUs take the rest"
                    ));
                    return Ok(());
                }
            }
        }
    }
}

fn add(results: &mut Results, pattern: Pattern, m: Measured, place: &Placement) {
    let p = &mut results.provenance;
    p.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s.or(m.peak_bandwidth);
    p.settings.insert(format!("replay_passes.{pattern}"), serde_json::json!(m.passes));
    results.rows.extend(m.rows.into_iter().map(|r| Row { placement: Some(place.clone()), ..r }));
}

fn interrupted(e: &Error) -> bool {
    matches!(e, Error::Tool(ToolError::Interrupted { .. }))
}

/// This GPU cannot profile at all (no counter permission, no driver): the pattern was not at
/// fault, so it goes back on the queue for another GPU.
fn gpu_unusable(e: &Error) -> bool {
    matches!(e, Error::Unavailable { .. } | Error::Tool(ToolError::NoProfiler { .. }))
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
        let pick = |v: &[&str]| select(&listed, &parse_picks(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>())?);
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

    #[test]
    fn the_queue_starts_with_the_longest_pattern() {
        let q = queue(&Pattern::ALL, Sizing::default());
        let lens: Vec<usize> = q.iter().map(|&p| variants(p, Sizing::default()).len()).collect();
        assert!(lens.windows(2).all(|w| w[0] >= w[1]), "{lens:?}");
    }
}
