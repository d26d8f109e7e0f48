//! `coalprof doctor`: what is present and what is missing, each tool with where the discovery
//! order found it (`src/tools/locate.rs`) and, when missing, the `coalprof setup` command.

use std::path::Path;

use crate::error::Result;
use crate::exit::Exit;
use crate::settings::Common;
use crate::tools::locate::Source;
use crate::tools::nvcc::Nvcc;
use crate::tools::ToolError;

/// One line of the report.
struct Check {
    what: &'static str,
    ok: bool,
    detail: String,
    fix: Option<String>,
    /// Missing, it does not make `doctor` fail: an extra, not what profiling needs.
    optional: bool,
}

impl Check {
    /// A tool that was found: its version, where, and which step of the discovery order found it.
    fn found(what: &'static str, version: Option<String>, how: Source, path: &Path) -> Check {
        let version = version.map_or(String::new(), |v| format!("{v} "));
        let detail = format!("{version}at {} (from the {})", path.display(), how.describe());
        Check { what, ok: true, detail, fix: None, optional: false }
    }

    /// A tool that is missing: where coalprof looked, what it is needed for, and the fix.
    fn missing(what: &'static str, e: &ToolError, needed_for: &str) -> Check {
        let detail = format!("{e} (needed {needed_for})");
        Check { what, ok: false, detail, fix: e.hint().map(str::to_string), optional: false }
    }

    fn optional(mut self) -> Check {
        self.optional = true;
        self
    }
}

pub(crate) fn run(common: &Common) -> Result<Exit> {
    let tools = &common.tools;
    let version =
        |v: std::result::Result<String, ToolError>| Some(v.unwrap_or_else(|e| format!("version unknown: {e}")));
    let mut checks = Vec::new();
    checks.push(match tools.nvcc() {
        Ok(f) => Check::found("nvcc", version(Nvcc { path: f.path.clone() }.version()), f.how, &f.path),
        Err(e) => Check::missing("nvcc", &e, "to build kernels: `run` on a GPU, `build`"),
    });
    for (tool, needed_for) in
        [("nvdisasm", "only for the SASS text of `lines`"), ("cuobjdump", "only to inspect cubins")]
    {
        checks.push(
            match tools.cuda_tool(tool) {
                Ok(f) => Check::found(tool, None, f.how, &f.path),
                Err(e) => Check::missing(tool, &e, needed_for),
            }
            .optional(),
        );
    }
    checks.push(match tools.ncu() {
        Ok(f) => Check::found("ncu", version(tools.ncu_at(f.path.clone()).version()), f.how, &f.path),
        // Only profiling needs ncu: analysis reads reports natively.
        Err(e) => Check::missing("ncu", &e, "only to profile: `run --backend ncu`, `profile`"),
    });
    checks.push(Check {
        what: "reports",
        ok: true,
        detail: format!(
            ".ncu-rep/.ncu-repz (format version {}) are read natively: `analyze` and `check` need no ncu",
            crate::parse::ncu_rep::FORMAT_VERSION
        ),
        fix: None,
        optional: false,
    });
    match tools.gpus() {
        Ok(gpus) => {
            for g in &gpus {
                let mem = g.memory_mib.map_or(String::new(), |m| format!(", {:.0} GiB", m as f64 / 1024.0));
                checks.push(Check {
                    what: "GPU",
                    ok: true,
                    detail: format!("{}: {} (compute capability {}, {}{mem}), driver {}", g.index, g.name, g.compute_capability, g.arch(), g.driver),
                    fix: None,
                    optional: false,
                });
            }
            checks.push(counter_permission());
        }
        Err(_) => checks.push(Check {
            what: "GPU",
            ok: false,
            detail: "no NVIDIA GPU or driver found (nvidia-smi is missing or lists none)".into(),
            fix: Some("profile on a machine with an NVIDIA GPU; here `coalprof run --backend model` predicts the metrics, `--backend sim` executes the kernels in GPGPU-Sim, and `coalprof analyze` reads reports made elsewhere".into()),
            optional: false,
        }),
    }
    // The simulator is an alternative to a GPU, never required.
    checks.push(simulator(common).optional());
    // Triton's Python, for `coalprof triton`: never required either.
    checks.push(
        match tools.triton() {
            Ok((t, how)) => {
                // The Triton counter leans on Triton's internals: a version it was not tested with is said.
                let version = t.version().map(|v| match crate::tools::triton::SUPPORTED.contains(&v.as_str()) {
                    true => v,
                    false => format!(
                        "{v} (untested: coalprof's Triton counter is tested with {})",
                        crate::tools::triton::SUPPORTED.join(", ")
                    ),
                });
                Check::found("triton", version, how, &t.python)
            }
            Err(e) => Check::missing("triton", &e, "only for `coalprof triton`: Triton kernels without a GPU"),
        }
        .optional(),
    );
    checks.extend(simulator_libraries(common));
    let ready = checks.iter().filter(|c| !c.optional).all(|c| c.ok);
    let mut out = String::new();
    for c in &checks {
        out.push_str(&format!("{} {:<10} {}\n", if c.ok { "ok  " } else { "MISS" }, c.what, c.detail));
        if let Some(f) = &c.fix {
            out.push_str(&format!("     {:<10} fix: {f}\n", ""));
        }
    }
    if let Some(home) = &common.tools.home {
        out.push_str(&format!(
            "     {:<10} {} (`coalprof setup` installs here; COALPROF_HOME moves it)\n",
            "tool home",
            home.root.display()
        ));
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
                "{} at {} (from the {}), CUDA {} at {} (`run|profile --backend sim`)",
                sim.version(),
                sim.root.display(),
                common.tools.gpgpusim_source(&sim.root).describe(),
                sim.nvcc().version().unwrap_or_else(|e| format!("version unknown: {e}")),
                sim.cuda.display()
            ),
            fix: None,
            optional: false,
        },
        Err(e) => Check::missing("gpgpu-sim", &e, "only for `--backend sim`: kernels executed without a GPU"),
    }
}

/// The C++ libraries of the simulator's toolkit (cooperative groups, CUB, Thrust need them).
fn simulator_libraries(common: &Common) -> Option<Check> {
    let sim = common.tools.gpgpusim().ok()?;
    let libs = crate::tools::gpgpusim::CXX_LIBRARIES;
    let missing: Vec<&str> = libs.iter().filter(|l| !l.in_toolkit(&sim.cuda)).map(|l| l.name).collect();
    let include = sim.cuda.join("include");
    Some(if missing.is_empty() {
        let found: Vec<String> = libs
            .iter()
            .map(|l| format!("{} {}", l.name, l.version(&sim.cuda).unwrap_or_else(|| "(version unknown)".into())))
            .collect();
        Check {
            what: "sim-libs",
            ok: true,
            detail: format!(
                "{} in {} (cooperative groups, CUB, Thrust under `--backend sim`)",
                found.join(", "),
                include.display()
            ),
            fix: None,
            optional: true,
        }
    } else {
        Check {
            what: "sim-libs",
            ok: false,
            detail: format!(
                "{} missing from {} (needed for programs using cooperative groups, CUB or Thrust under `--backend sim`)",
                missing.join(", "),
                include.display()
            ),
            fix: Some("run `coalprof setup sim` (it adds them from Debian bookworm's libcu++-dev, libcub-dev, libthrust-dev)".into()),
            optional: true,
        }
    })
}

/// The NVIDIA driver's `RmProfilingAdminOnly` setting decides whether non-root users may read
/// the performance counters (ERR_NVGPUCTRPERM otherwise).
fn counter_permission() -> Check {
    let admin_only = std::fs::read_to_string("/proc/driver/nvidia/params")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("RmProfilingAdminOnly: ").map(|v| v.trim() == "1")));
    let root = unsafe { libc::geteuid() } == 0;
    let (ok, detail, fix) = match admin_only {
        Some(true) if !root => (
            false,
            "only administrators may read the performance counters (RmProfilingAdminOnly: 1)",
            Some("run as root, or set `options nvidia NVreg_RestrictProfilingToAdminUsers=0` and reload the driver; see https://developer.nvidia.com/ERR_NVGPUCTRPERM".to_string()),
        ),
        Some(_) => (true, "performance counters readable", None),
        None => (true, "permission unknown (no /proc/driver/nvidia/params); ncu will say", None),
    };
    Check { what: "counters", ok, detail: detail.into(), fix, optional: false }
}
