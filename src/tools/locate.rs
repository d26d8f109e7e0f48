//! Finding `ncu` and `nvcc`: an explicit path, then `CUDA_HOME`, then `PATH`, then the
//! project's `.tools/` (where `scripts/install-tools.sh` puts them). The settings layer
//! gathers the inputs; this module only searches.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::ToolError;

/// Where to look for the CUDA tools, resolved once from flags and environment.
#[derive(Debug, Clone, Default)]
pub struct ToolSearch {
    /// `--ncu` or `COALPROF_NCU`.
    pub ncu: Option<PathBuf>,
    /// `--nvcc` or `COALPROF_NVCC`.
    pub nvcc: Option<PathBuf>,
    /// `CUDA_HOME` (or `CUDA_PATH`).
    pub cuda_home: Option<PathBuf>,
    /// `PATH`.
    pub path: Option<OsString>,
    /// The project's `.tools/` folder, when coalprof runs inside its checkout.
    pub project_tools: Option<PathBuf>,
    /// `COALPROF_GPGPUSIM`: GPGPU-Sim's install folder (`lib/libcudart.so`, `configs/`).
    pub gpgpusim: Option<PathBuf>,
    /// `CUDA11_HOME`: the CUDA ≤ 11 toolkit programs are built with for the simulator.
    pub cuda11: Option<PathBuf>,
}

/// A tool that was found, and how (logged under `-v`, shown by `doctor`).
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub how: &'static str,
}

impl ToolSearch {
    pub fn ncu(&self) -> Result<Found, ToolError> {
        let tools = self.project_tools.as_deref();
        self.find(
            "ncu",
            self.ncu.as_deref(),
            &["bin/ncu", "nsight-compute/ncu"],
            tools.map(|t| t.join("bin/ncu")),
            "install Nsight Compute (it ships with the CUDA toolkit), or run `scripts/install-tools.sh`; \
             point coalprof at it with `--ncu PATH` or `COALPROF_NCU`",
        )
    }

    pub fn nvcc(&self) -> Result<Found, ToolError> {
        let tools = self.project_tools.as_deref();
        self.find(
            "nvcc",
            self.nvcc.as_deref(),
            &["bin/nvcc"],
            tools.map(|t| t.join("cuda-home/bin/nvcc")),
            "install the CUDA toolkit, or run `scripts/install-tools.sh`; point coalprof at it \
             with `--nvcc PATH`, `COALPROF_NVCC` or `CUDA_HOME`",
        )
    }

    /// Any other CUDA binary (`cuobjdump`, `nvidia-smi`) beside nvcc or on PATH.
    pub fn cuda_binary(&self, name: &'static str) -> Result<Found, ToolError> {
        let beside_nvcc = self.nvcc().ok().and_then(|f| f.path.parent().map(|d| d.join(name)));
        self.find(name, None, &[], beside_nvcc, "install the CUDA toolkit or the NVIDIA driver")
    }

    /// GPGPU-Sim and its CUDA 11 toolkit: `COALPROF_GPGPUSIM` and `CUDA11_HOME`, else the
    /// project's `.tools/gpgpu-sim` and `.tools/cuda11` (where `scripts/install-sim.sh` builds them).
    /// The toolkit of the nvcc found above (with its `cuobjdump` and `ptxas`) serves programs
    /// built with CUDA 12 or 13.
    pub fn gpgpusim(&self) -> Result<super::gpgpusim::GpgpuSim, ToolError> {
        let tools = self.project_tools.clone().unwrap_or_else(|| PathBuf::from(".tools"));
        let root = self.gpgpusim.clone().unwrap_or_else(|| tools.join("gpgpu-sim"));
        let cuda = self.cuda11.clone().unwrap_or_else(|| tools.join("cuda11"));
        let newer = (self.nvcc().ok())
            .and_then(|f| Some(f.path.parent()?.parent()?.to_path_buf()))
            .filter(|t| ["bin/cuobjdump", "bin/ptxas"].iter().all(|b| is_executable(&t.join(b))));
        Ok(super::gpgpusim::GpgpuSim { newer, ..super::gpgpusim::GpgpuSim::locate(&root, &cuda)? })
    }

    /// Slurm's `sbatch` on PATH; `squeue`, `scontrol`, `sacct` and `scancel` sit beside it.
    pub fn sbatch(&self) -> Result<Found, ToolError> {
        self.find(
            "sbatch",
            None,
            &[],
            None,
            "`--slurm` needs Slurm's client commands on PATH (Debian: `apt-get install slurm-client`); \
             `scripts/slurm-local.sh start` brings up a one-node cluster for trying it",
        )
    }

    /// `git` on PATH: the checkout a run records (commit, branch, dirty).
    pub fn git(&self) -> Result<Found, ToolError> {
        self.find("git", None, &[], None, "install git to record the commit a run was made at")
    }

    fn find(
        &self,
        tool: &'static str,
        explicit: Option<&Path>,
        under_cuda_home: &[&str],
        project: Option<PathBuf>,
        hint: &str,
    ) -> Result<Found, ToolError> {
        let mut searched = Vec::new();
        if let Some(p) = explicit {
            if is_executable(p) {
                return Ok(Found { path: p.to_path_buf(), how: "explicit (--flag or COALPROF_*)" });
            }
            // An explicit path that is wrong is not silently replaced by another tool.
            return Err(ToolError::NotFound {
                tool,
                searched: vec![format!("{} (given explicitly)", p.display())],
                hint: format!("`{}` is not an executable file", p.display()),
            });
        }
        if let Some(home) = &self.cuda_home {
            for rel in under_cuda_home {
                let p = home.join(rel);
                if is_executable(&p) {
                    return Ok(Found { path: p, how: "CUDA_HOME" });
                }
                searched.push(p.display().to_string());
            }
        }
        if let Some(path) = &self.path {
            for dir in std::env::split_paths(path) {
                let p = dir.join(tool);
                if is_executable(&p) {
                    return Ok(Found { path: p, how: "PATH" });
                }
            }
            searched.push("PATH".into());
        }
        if let Some(p) = project {
            if is_executable(&p) {
                return Ok(Found { path: p, how: "the project's .tools/" });
            }
            searched.push(p.display().to_string());
        }
        Err(ToolError::NotFound { tool, searched, hint: hint.to_string() })
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_path_that_is_missing_is_an_error_not_a_fallback() {
        let s = ToolSearch { ncu: Some("/nope/ncu".into()), path: Some("/usr/bin".into()), ..Default::default() };
        let err = s.ncu().unwrap_err();
        assert!(err.to_string().contains("/nope/ncu"), "{err}");
    }

    #[test]
    fn not_found_lists_where_it_looked_and_hints() {
        let s = ToolSearch { path: Some("/definitely/not/here".into()), ..Default::default() };
        let err = s.nvcc().unwrap_err();
        assert!(err.to_string().contains("PATH"), "{err}");
        assert!(err.hint().unwrap().contains("install-tools.sh"));
    }

    #[test]
    fn finds_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let ncu = dir.path().join("ncu");
        std::fs::write(&ncu, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&ncu, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let s = ToolSearch { path: Some(dir.path().as_os_str().to_owned()), ..Default::default() };
        let f = s.ncu().unwrap();
        assert_eq!(f.path, ncu);
        assert_eq!(f.how, "PATH");
    }
}
