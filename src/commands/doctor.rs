//! `coalprof doctor`: what is present and what is missing, each with the fix.

use crate::error::Result;
use crate::exit::Exit;
use crate::settings::Common;

/// One line of the report.
struct Check {
    what: &'static str,
    ok: bool,
    detail: String,
    fix: Option<String>,
}

pub(crate) fn run(common: &Common) -> Result<Exit> {
    let mut checks = Vec::new();
    checks.push(match common.nvcc() {
        Ok(n) => {
            let v = n.version().unwrap_or_else(|e| format!("version unknown: {e}"));
            Check { what: "nvcc", ok: true, detail: format!("{v} at {}", n.path.display()), fix: None }
        }
        Err(e) => Check { what: "nvcc", ok: false, detail: e.to_string(), fix: e.hint().map(str::to_string) },
    });
    checks.push(match common.ncu() {
        Ok(n) => {
            let v = n.version().unwrap_or_else(|e| format!("version unknown: {e}"));
            Check { what: "ncu", ok: true, detail: format!("{v} at {}", n.path.display()), fix: None }
        }
        // Only profiling needs ncu: analysis reads reports natively.
        Err(e) => Check {
            what: "ncu",
            ok: false,
            detail: format!("{e} (needed only to profile: `run --backend ncu`, `profile`)"),
            fix: e.hint().map(str::to_string),
        },
    });
    checks.push(Check {
        what: "reports",
        ok: true,
        detail: format!(
            ".ncu-rep/.ncu-repz (format version {}) are read natively: `analyze` and `check` need no ncu",
            crate::parse::ncu_rep::FORMAT_VERSION
        ),
        fix: None,
    });
    let gpus = common.gpus();
    match gpus {
        Ok(gpus) if !gpus.is_empty() => {
            for g in &gpus {
                let mem = g.memory_mib.map_or(String::new(), |m| format!(", {:.0} GiB", m as f64 / 1024.0));
                checks.push(Check {
                    what: "GPU",
                    ok: true,
                    detail: format!("{}: {} (compute capability {}, {}{mem}), driver {}", g.index, g.name, g.compute_capability, g.arch(), g.driver),
                    fix: None,
                });
            }
            checks.push(counter_permission());
        }
        Ok(_) | Err(_) => checks.push(Check {
            what: "GPU",
            ok: false,
            detail: "no NVIDIA GPU or driver found (nvidia-smi is missing or lists none)".into(),
            fix: Some("profile on a machine with an NVIDIA GPU; here `coalprof run --backend model` predicts the metrics, `--backend sim` executes the kernels in GPGPU-Sim, and `coalprof analyze` reads reports made elsewhere".into()),
        }),
    }
    // The simulator is an alternative to a GPU, never required: it does not change the exit code.
    let ready = checks.iter().all(|c| c.ok);
    checks.push(simulator(common));
    let mut out = String::new();
    for c in &checks {
        out.push_str(&format!("{} {:<10} {}\n", if c.ok { "ok  " } else { "MISS" }, c.what, c.detail));
        if let Some(f) = &c.fix {
            out.push_str(&format!("     {:<10} fix: {f}\n", ""));
        }
    }
    super::print(&out)?;
    Ok(if ready { Exit::Ok } else { Exit::ProfilerUnavailable })
}

/// GPGPU-Sim and its CUDA 11 toolkit (`--backend sim`).
fn simulator(common: &Common) -> Check {
    match common.tools.gpgpusim() {
        Ok(sim) => Check {
            what: "gpgpu-sim",
            ok: true,
            detail: format!(
                "{} at {}, CUDA {} at {} (`run|profile --backend sim`)",
                sim.version(),
                sim.root.display(),
                sim.nvcc().version().unwrap_or_else(|e| format!("version unknown: {e}")),
                sim.cuda.display()
            ),
            fix: None,
        },
        Err(e) => Check {
            what: "gpgpu-sim",
            ok: false,
            detail: format!("{e} (needed only for `--backend sim`: kernels executed without a GPU)"),
            fix: e.hint().map(str::to_string),
        },
    }
}

/// The NVIDIA driver's `RmProfilingAdminOnly` setting decides whether non-root users may read
/// the performance counters (ERR_NVGPUCTRPERM otherwise).
fn counter_permission() -> Check {
    let admin_only = std::fs::read_to_string("/proc/driver/nvidia/params")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("RmProfilingAdminOnly: ").map(|v| v.trim() == "1")));
    let root = unsafe { libc::geteuid() } == 0;
    match admin_only {
        Some(true) if !root => Check {
            what: "counters",
            ok: false,
            detail: "only administrators may read the performance counters (RmProfilingAdminOnly: 1)".into(),
            fix: Some("run as root, or set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` and reload the driver; see https://developer.nvidia.com/ERR_NVGPUCTRPERM".into()),
        },
        Some(_) => Check { what: "counters", ok: true, detail: "performance counters readable".into(), fix: None },
        None => Check { what: "counters", ok: true, detail: "permission unknown (no /proc/driver/nvidia/params); ncu will say".into(), fix: None },
    }
}
