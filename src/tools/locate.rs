//! Finding every external tool in one order: the flag, then the environment variable, then
//! `CUDA_HOME` and `PATH`, then NVIDIA's PyPI wheels in the Python environment coalprof itself
//! is installed in (`pip install 'coalprof[cuda]'`), then the tool home (`coalprof setup`), and
//! last the checkout's `.tools/` when coalprof runs inside its own repository. The settings
//! layer gathers the inputs; this module only searches.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::home::{cuda_bins_in_prefix, ToolHome};
use super::ToolError;

/// Where to look for the tools, resolved once from flags and environment.
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
    /// The Python environment coalprof's executable sits in (`<prefix>/bin/coalprof`), where
    /// the `cuda` extra puts NVIDIA's wheels.
    pub prefix: Option<PathBuf>,
    /// The user's tool home (`COALPROF_HOME`, else the user data folder).
    pub home: Option<ToolHome>,
    /// The checkout's `.tools/`, when coalprof runs inside its repository.
    pub checkout: Option<ToolHome>,
    /// `COALPROF_GPGPUSIM`: GPGPU-Sim's install folder (`lib/libcudart.so`, `configs/`).
    pub gpgpusim: Option<PathBuf>,
    /// `CUDA11_HOME`: the CUDA ≤ 11 toolkit programs are built with for the simulator.
    pub cuda11: Option<PathBuf>,
    /// A writable HOME for ncu (it deploys section files there).
    pub ncu_home: Option<PathBuf>,
    /// `COALPROF_PYTHON`: the Python that has Triton (`coalprof triton`).
    pub python: Option<PathBuf>,
}

/// The step of the discovery order that found a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `--ncu`/`--nvcc`, or their `COALPROF_*` variable.
    Explicit,
    /// An environment variable naming a folder (`COALPROF_GPGPUSIM`, `CUDA11_HOME`).
    Environment,
    /// `CUDA_HOME`.
    CudaHome,
    /// `PATH`.
    Path,
    /// NVIDIA's PyPI wheels in coalprof's own Python environment.
    Prefix,
    /// The tool home.
    Home,
    /// The checkout's `.tools/`.
    Checkout,
}

impl Source {
    /// How `doctor` and `-v` say it.
    pub fn describe(self) -> &'static str {
        match self {
            Source::Explicit => "flag or COALPROF_* variable",
            Source::Environment => "environment variable",
            Source::CudaHome => "CUDA_HOME",
            Source::Path => "PATH",
            Source::Prefix => "coalprof's Python environment",
            Source::Home => "tool home",
            Source::Checkout => "checkout's .tools/",
        }
    }
}

/// A tool that was found, and how (logged under `-v`, shown by `doctor`).
#[derive(Debug, Clone)]
pub struct Found {
    /// The executable (or install folder).
    pub path: PathBuf,
    /// Which step of the discovery order found it.
    pub how: Source,
}

/// The `coalprof setup` command that installs `component`: the fix every "not found" names.
pub fn setup_hint(component: &str) -> String {
    format!("run `coalprof setup {component}` (installs into the tool home), or")
}

impl ToolSearch {
    /// The nvcc to use, ready to run, or why there is none.
    pub fn nvcc_tool(&self) -> Result<super::nvcc::Nvcc, ToolError> {
        let found = self.nvcc()?;
        tracing::info!(path = %found.path.display(), how = found.how.describe(), "using nvcc");
        Ok(super::nvcc::Nvcc { path: found.path })
    }

    /// The ncu to use, ready to run, or why there is none.
    pub fn ncu_tool(&self) -> Result<super::ncu::Ncu, ToolError> {
        let found = self.ncu()?;
        tracing::info!(path = %found.path.display(), how = found.how.describe(), "using ncu");
        Ok(self.ncu_at(found.path))
    }

    /// The ncu at `path`, run with the writable HOME it deploys its section files into.
    pub fn ncu_at(&self, path: PathBuf) -> super::ncu::Ncu {
        super::ncu::Ncu { path, home: self.ncu_home.clone() }
    }

    /// The GPUs nvidia-smi lists; an error (exit 4) when there is none.
    pub fn gpus(&self) -> Result<Vec<super::smi::Gpu>, ToolError> {
        let no_gpu = |why: &str| ToolError::NoProfiler {
            message: format!("no GPU found: {why}"),
            hint: "give `--arch sm_XX` to build anyway; `--backend model` predicts the metrics without a GPU".into(),
        };
        let smi = self.nvidia_smi().map_err(|_| no_gpu("nvidia-smi is not installed"))?;
        let gpus = super::smi::Smi { path: smi.path }.gpus().map_err(|e| no_gpu(&e.to_string()))?;
        if gpus.is_empty() {
            return Err(no_gpu("nvidia-smi lists none"));
        }
        Ok(gpus)
    }

    /// The git checkout `dir` is in (commit, branch, dirty), if any and git is installed.
    pub(crate) fn checkout(&self, dir: &Path) -> Option<crate::results::Git> {
        let found = self.git().map_err(|e| tracing::info!("no commit recorded: {e}")).ok()?;
        super::git::Git { path: found.path }.checkout(dir)
    }

    /// Nsight Compute's command line.
    pub fn ncu(&self) -> Result<Found, ToolError> {
        let homes = self.homes().map(|(h, s)| (h.ncu(), s)).collect();
        self.find(
            "ncu",
            self.ncu.as_deref(),
            &["bin/ncu", "nsight-compute/ncu"],
            homes,
            &format!(
                "{} install Nsight Compute (it ships with the CUDA toolkit); point coalprof at it with `--ncu PATH` or `COALPROF_NCU`",
                setup_hint("ncu")
            ),
        )
    }

    /// The CUDA compiler.
    pub fn nvcc(&self) -> Result<Found, ToolError> {
        self.find(
            "nvcc",
            self.nvcc.as_deref(),
            &["bin/nvcc"],
            self.cuda_in_homes("nvcc"),
            &format!(
                "{} install the CUDA toolkit; point coalprof at it with `--nvcc PATH`, `COALPROF_NVCC` or `CUDA_HOME`",
                setup_hint("cuda")
            ),
        )
    }

    /// A CUDA toolkit program that ships beside nvcc (`nvdisasm`, `cuobjdump`): beside an nvcc
    /// given explicitly first, then the same order as nvcc.
    pub fn cuda_tool(&self, name: &'static str) -> Result<Found, ToolError> {
        if let Some(dir) = self.nvcc.as_deref().and_then(Path::parent) {
            let p = dir.join(name);
            if is_executable(&p) {
                return Ok(Found { path: p, how: Source::Explicit });
            }
        }
        self.find(
            name,
            None,
            &[&format!("bin/{name}")],
            self.cuda_in_homes(name),
            &format!("{} install the CUDA toolkit (or put `{name}` on PATH)", setup_hint("cuda")),
        )
    }

    /// The driver's `nvidia-smi`: on PATH (the driver puts it there), or beside nvcc.
    pub fn nvidia_smi(&self) -> Result<Found, ToolError> {
        let beside_nvcc = self.nvcc().ok().and_then(|f| f.path.parent().map(|d| (d.join("nvidia-smi"), f.how)));
        self.find("nvidia-smi", None, &[], beside_nvcc.into_iter().collect(), "install the NVIDIA driver")
    }

    /// GPGPU-Sim and its CUDA 11 toolkit: `COALPROF_GPGPUSIM` and `CUDA11_HOME`, else the tool
    /// home, else the checkout's `.tools/` (each half found on its own). The toolkit of the nvcc
    /// found above (with its `cuobjdump` and `ptxas`) serves programs built with CUDA 12 or 13.
    pub fn gpgpusim(&self) -> Result<super::gpgpusim::GpgpuSim, ToolError> {
        let pick = |explicit: &Option<PathBuf>, of_home: fn(&ToolHome) -> PathBuf, marker: &str| -> PathBuf {
            if let Some(p) = explicit {
                return p.clone();
            }
            let mut homes = self.homes().map(|(h, _)| of_home(h));
            let first = homes.next();
            first.clone().into_iter().chain(homes).find(|d| d.join(marker).exists()).or(first).unwrap_or_default()
        };
        let root = pick(&self.gpgpusim, ToolHome::gpgpusim, "lib/libcudart.so");
        let cuda = pick(&self.cuda11, ToolHome::cuda11, "bin/nvcc");
        let newer = (self.nvcc().ok())
            .and_then(|f| Some(f.path.parent()?.parent()?.to_path_buf()))
            .filter(|t| ["bin/cuobjdump", "bin/ptxas"].iter().all(|b| is_executable(&t.join(b))));
        Ok(super::gpgpusim::GpgpuSim { newer, ..super::gpgpusim::GpgpuSim::locate(&root, &cuda)? })
    }

    /// Where GPGPU-Sim was found, for `doctor`.
    pub fn gpgpusim_source(&self, root: &Path) -> Source {
        if self.gpgpusim.is_some() {
            return Source::Environment;
        }
        self.homes().find(|(h, _)| h.gpgpusim() == root).map_or(Source::Environment, |(_, s)| s)
    }

    /// The Python with `triton` and `numpy` for `coalprof triton`: `COALPROF_PYTHON`, then the
    /// Python environment coalprof is installed in (where `pip install 'coalprof[triton]'` puts
    /// them; before PATH, whose `python3` rarely has Triton), the tool home's `triton/` (`coalprof
    /// setup triton`), the checkout's, and last `python3` on PATH: the first that has both.
    pub fn triton(&self) -> Result<(super::triton::Triton, Source), ToolError> {
        if let Some(p) = &self.python {
            return super::triton::Triton::check(p).map(|t| (t, Source::Explicit));
        }
        let mut candidates: Vec<(PathBuf, Source)> =
            self.prefix.iter().map(|p| (p.join("bin/python3"), Source::Prefix)).collect();
        candidates.extend(self.homes().map(|(h, s)| (h.triton_venv().join("bin/python3"), s)));
        if let Some(path) = &self.path {
            candidates.extend(std::env::split_paths(path).map(|d| (d.join("python3"), Source::Path)));
        }
        let mut searched = Vec::new();
        for (p, how) in candidates {
            if is_executable(&p) {
                if let Ok(t) = super::triton::Triton::check(&p) {
                    return Ok((t, how));
                }
            }
            searched.push(p.display().to_string());
        }
        Err(ToolError::NotFound {
            tool: "triton",
            searched,
            hint: "run `coalprof setup triton` (Triton and numpy, no torch, into the tool home), or \
                   `pip install 'coalprof[triton]'` beside coalprof, or set `COALPROF_PYTHON` to a Python that has \
                   `triton` and `numpy`"
                .into(),
        })
    }

    /// Slurm's `sbatch` on PATH; `squeue`, `scontrol`, `sacct` and `scancel` sit beside it.
    pub fn sbatch(&self) -> Result<Found, ToolError> {
        self.find(
            "sbatch",
            None,
            &[],
            Vec::new(),
            "`--slurm` needs Slurm's client commands on PATH (Debian: `apt-get install slurm-client`); \
             `scripts/slurm-local.sh start` brings up a one-node cluster for trying it",
        )
    }

    /// `git` on PATH: the checkout a run records (commit, branch, dirty).
    pub fn git(&self) -> Result<Found, ToolError> {
        self.find("git", None, &[], Vec::new(), "install git to record the commit a run was made at")
    }

    /// The tool home, then the checkout's `.tools/`, with the step each one is.
    fn homes(&self) -> impl Iterator<Item = (&ToolHome, Source)> {
        self.home.iter().map(|h| (h, Source::Home)).chain(self.checkout.iter().map(|h| (h, Source::Checkout)))
    }

    /// A CUDA program in coalprof's Python environment, the tool home and the checkout.
    fn cuda_in_homes(&self, tool: &str) -> Vec<(PathBuf, Source)> {
        let prefix = self.prefix.iter().flat_map(|p| cuda_bins_in_prefix(p)).map(|d| (d.join(tool), Source::Prefix));
        let homes = self.homes().flat_map(|(h, s)| h.cuda_bin(tool).into_iter().map(move |p| (p, s)));
        prefix.chain(homes).collect()
    }

    fn find(
        &self,
        tool: &'static str,
        explicit: Option<&Path>,
        under_cuda_home: &[&str],
        later: Vec<(PathBuf, Source)>,
        hint: &str,
    ) -> Result<Found, ToolError> {
        let mut searched = Vec::new();
        if let Some(p) = explicit {
            if is_executable(p) {
                return Ok(Found { path: p.to_path_buf(), how: Source::Explicit });
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
                    return Ok(Found { path: p, how: Source::CudaHome });
                }
                searched.push(p.display().to_string());
            }
        }
        if let Some(path) = &self.path {
            for dir in std::env::split_paths(path) {
                let p = dir.join(tool);
                if is_executable(&p) {
                    return Ok(Found { path: p, how: Source::Path });
                }
            }
            searched.push("PATH".into());
        }
        for (p, how) in later {
            if is_executable(&p) {
                return Ok(Found { path: p, how });
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

    fn exe(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }

    #[test]
    fn explicit_path_that_is_missing_is_an_error_not_a_fallback() {
        let s = ToolSearch { ncu: Some("/nope/ncu".into()), path: Some("/usr/bin".into()), ..Default::default() };
        let err = s.ncu().unwrap_err();
        assert!(err.to_string().contains("/nope/ncu"), "{err}");
    }

    #[test]
    fn not_found_lists_where_it_looked_and_names_the_setup_command() {
        let home = ToolHome::at("/definitely/not/home");
        let s = ToolSearch { path: Some("/definitely/not/here".into()), home: Some(home), ..Default::default() };
        let err = s.nvcc().unwrap_err();
        assert!(err.to_string().contains("PATH"), "{err}");
        assert!(err.to_string().contains("/definitely/not/home/cuda-home/bin/nvcc"), "{err}");
        assert!(err.hint().unwrap().contains("coalprof setup cuda"), "{:?}", err.hint());
        assert!(s.ncu().unwrap_err().hint().unwrap().contains("coalprof setup ncu"));
    }

    #[test]
    fn finds_on_path() {
        let dir = tempfile::tempdir().unwrap();
        let ncu = dir.path().join("ncu");
        exe(&ncu);
        let s = ToolSearch { path: Some(dir.path().as_os_str().to_owned()), ..Default::default() };
        let f = s.ncu().unwrap();
        assert_eq!(f.path, ncu);
        assert_eq!(f.how, Source::Path);
    }

    /// Every step of the order, each shadowing the ones after it.
    #[test]
    fn one_order_path_then_environment_then_home_then_checkout() {
        let d = tempfile::tempdir().unwrap();
        let on_path = d.path().join("path/nvdisasm");
        let prefix = d.path().join("venv");
        let in_prefix = prefix.join("lib/python3.12/site-packages/nvidia/cu13/bin/nvdisasm");
        let home = ToolHome::at(d.path().join("home"));
        let in_home = home.cuda_home().join("bin/nvdisasm");
        let checkout = ToolHome::at(d.path().join("checkout"));
        let in_venv_of_checkout = checkout.cuda_venv().join("lib/python3.11/site-packages/nvidia/cu12/bin/nvdisasm");
        for p in [&on_path, &in_prefix, &in_home, &in_venv_of_checkout] {
            exe(p);
        }
        let mut s = ToolSearch {
            path: Some(on_path.parent().unwrap().as_os_str().to_owned()),
            prefix: Some(prefix),
            home: Some(home),
            checkout: Some(checkout),
            ..Default::default()
        };
        let expect = [
            (on_path, Source::Path),
            (in_prefix, Source::Prefix),
            (in_home, Source::Home),
            (in_venv_of_checkout, Source::Checkout),
        ];
        for (path, how) in expect {
            let f = s.cuda_tool("nvdisasm").unwrap();
            assert_eq!((&f.path, f.how), (&path, how));
            std::fs::remove_file(&path).unwrap();
        }
        assert!(s.cuda_tool("nvdisasm").is_err());
        // Beside an nvcc given explicitly comes first.
        let nvcc = d.path().join("explicit/nvcc");
        exe(&nvcc);
        exe(&d.path().join("explicit/nvdisasm"));
        s.nvcc = Some(nvcc);
        assert_eq!(s.cuda_tool("nvdisasm").unwrap().how, Source::Explicit);
    }

    #[test]
    fn the_simulator_is_found_in_whichever_home_has_it() {
        let d = tempfile::tempdir().unwrap();
        let home = ToolHome::at(d.path().join("home"));
        let checkout = ToolHome::at(d.path().join("checkout"));
        exe(&checkout.gpgpusim().join("lib/libcudart.so"));
        exe(&home.cuda11().join("bin/nvcc"));
        let s = ToolSearch { home: Some(home.clone()), checkout: Some(checkout.clone()), ..Default::default() };
        let sim = s.gpgpusim().unwrap();
        assert_eq!(sim.root, checkout.gpgpusim());
        assert_eq!(sim.cuda, home.cuda11());
        assert_eq!(s.gpgpusim_source(&sim.root), Source::Checkout);
        // Missing everywhere: the error names the tool home (where setup would put it) and the fix.
        let empty = ToolSearch { home: Some(ToolHome::at(d.path().join("empty"))), ..Default::default() };
        let err = empty.gpgpusim().unwrap_err();
        assert!(err.to_string().contains("empty/gpgpu-sim"), "{err}");
        assert!(err.hint().unwrap().contains("coalprof setup sim"), "{:?}", err.hint());
    }
}
