//! `coalprof setup cuda`: nvcc, nvdisasm, cuobjdump, the runtime headers and NVTX from
//! NVIDIA's PyPI wheels into `<home>/cuda`, and the `cuda-home` link to the toolkit folder in it
//! (`nvidia/cu13/`: `bin/`, `include/`, `lib/`).
//!
//! `<home>/cuda` is a Python prefix (`pip install --prefix`), not a virtual environment: a venv's
//! scripts name the folder it was made in, so one built in a staging folder and renamed would
//! be half broken. The prefix holds only the wheels' files, which nvcc finds relative to itself;
//! the throwaway venv that runs pip stays in the stage and goes with it.

use std::path::{Path, PathBuf};

use super::stage::{self, Stage};
use super::{need, run, Component, Report, Request, SetupError, Step};
use crate::tools::home::cuda_bins_in_prefix;
use crate::tools::home::ToolHome;

/// The wheels: the compiler, the runtime headers and library, NVTX, the two disassemblers.
pub(crate) const WHEELS: &[&str] =
    &["nvidia-cuda-nvcc", "nvidia-cuda-runtime", "nvidia-nvtx", "nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"];

/// The programs discovery looks for in the toolkit folder.
const PROGRAMS: &[&str] = &["nvcc", "nvdisasm", "cuobjdump"];

const TITLE: &str = "nvcc, nvdisasm, cuobjdump, CUDA headers, NVTX";

pub(super) fn plan(req: &Request) -> Vec<Step> {
    let home = req.home.clone();
    let c = Component::Cuda;
    if let Some(kit) = toolkit(&home.cuda_venv()) {
        if linked(&home, &kit) {
            return vec![Step::present(c, TITLE, format!("{}", home.cuda_home().display()))];
        }
        let what = format!("link {} to {}", home.cuda_home().display(), kit.display());
        return vec![Step::missing(c, TITLE, what, move |_| link(&home, &kit).map(|()| "linked".into()))];
    }
    let python = match need(req, "python3", "python3 python3-venv", "the CUDA tools come from PyPI through pip") {
        Ok(p) => p,
        Err(e) => return vec![Step::blocked(c, TITLE, e)],
    };
    let what = format!("pip install {} (PyPI, about 100 MB) into {}", WHEELS.join(" "), home.cuda_venv().display());
    let req = req.clone();
    vec![Step::missing(c, TITLE, what, move |report| install(&req, &python, report))]
}

/// The wheels' toolkit folder under the prefix `prefix` that has every program discovery
/// looks for and the headers (`nvidia/cu13`), newest first.
fn toolkit(prefix: &Path) -> Option<PathBuf> {
    cuda_bins_in_prefix(prefix)
        .into_iter()
        .filter_map(|bin| bin.parent().map(Path::to_path_buf))
        .find(|kit| complete(kit))
}

fn complete(kit: &Path) -> bool {
    PROGRAMS.iter().all(|p| kit.join("bin").join(p).is_file())
        && kit.join("include/cuda_runtime.h").is_file()
        && kit.join("include/nvtx3").is_dir()
}

/// Whether `cuda-home` leads to `kit` (a link made by an older install script through another
/// path to the same folder counts).
fn linked(home: &ToolHome, kit: &Path) -> bool {
    match (std::fs::canonicalize(home.cuda_home()), std::fs::canonicalize(kit)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// `cuda-home` → the toolkit folder, relative, so the home can move.
fn link(home: &ToolHome, kit: &Path) -> Result<(), SetupError> {
    let rel = kit.strip_prefix(&home.root).unwrap_or(kit);
    stage::link(&home.root, rel, &home.cuda_home())
}

fn install(req: &Request, python: &Path, report: &dyn Report) -> Result<String, SetupError> {
    let home = &req.home;
    let stage = Stage::new(&home.root, "cuda")?;
    report.doing("creating a Python environment for pip");
    let venv = stage.join("pip");
    super::make_venv(req, python, &venv, Component::Cuda)?;
    report.doing("pip install (PyPI, about 100 MB)");
    let prefix = stage.join("cuda");
    run(
        &super::pip_install(&venv).arg("--prefix").arg(&prefix).args(WHEELS.iter().copied()),
        "cannot install NVIDIA's CUDA wheels from PyPI",
    )?;
    if toolkit(&prefix).is_none() {
        return Err(SetupError::cannot(
            format!(
                "pip installed the wheels, but `{}` has no lib/python3*/site-packages/nvidia/cu*/ with {} and the headers",
                prefix.display(),
                PROGRAMS.join(", ")
            ),
            "a pip that installs into another layout: please report it; meanwhile set CUDA_HOME to a CUDA toolkit",
        ));
    }
    stage.commit("cuda", &home.cuda_venv())?;
    let kit = toolkit(&home.cuda_venv()).ok_or_else(|| {
        SetupError::cannot(
            format!("{} lost its toolkit in the rename", home.cuda_venv().display()),
            "run `coalprof setup cuda` again",
        )
    })?;
    link(home, &kit)?;
    let version = crate::tools::nvcc::Nvcc { path: home.cuda_home().join("bin/nvcc") }.version()?;
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolkit_at(prefix: &Path, cu: &str, with_nvtx: bool) -> PathBuf {
        let kit = prefix.join(format!("lib/python3.11/site-packages/nvidia/{cu}"));
        for p in PROGRAMS {
            std::fs::create_dir_all(kit.join("bin")).unwrap();
            std::fs::write(kit.join("bin").join(p), "").unwrap();
        }
        std::fs::create_dir_all(kit.join("include")).unwrap();
        std::fs::write(kit.join("include/cuda_runtime.h"), "").unwrap();
        if with_nvtx {
            std::fs::create_dir_all(kit.join("include/nvtx3")).unwrap();
        }
        kit
    }

    /// Idempotence: a complete toolkit linked from `cuda-home` is there; one without NVTX, or
    /// without the link, is not.
    #[test]
    fn present_only_when_complete_and_linked() {
        let d = tempfile::tempdir().unwrap();
        let home = ToolHome::at(d.path());
        let req = Request {
            home: home.clone(),
            components: vec![Component::Cuda],
            dry_run: true,
            path: None,
            root: false,
            jobs: 1,
            cuda11_home: None,
            gpgpusim_src: None,
            vendor: None,
            user_home: None,
        };
        let state = |req: &Request| match &plan(req)[0].state {
            super::super::State::Present(_) => "present",
            super::super::State::Missing(_) => "missing",
            super::super::State::Blocked(_) => "blocked",
        };
        assert_eq!(state(&req), "blocked", "no python3 on an empty PATH");
        let kit = toolkit_at(&home.cuda_venv(), "cu13", false);
        assert_eq!(state(&req), "blocked", "no NVTX: not complete");
        std::fs::create_dir_all(kit.join("include/nvtx3")).unwrap();
        assert_eq!(state(&req), "missing", "complete, but not linked");
        link(&home, &kit).unwrap();
        assert_eq!(
            std::fs::read_link(home.cuda_home()).unwrap(),
            Path::new("cuda/lib/python3.11/site-packages/nvidia/cu13")
        );
        assert_eq!(state(&req), "present");
    }
}
