//! The environment, read in one place: the settings layer's one reader of it.

use std::path::PathBuf;

use crate::tools::home::ToolHome;

/// The environment, read in one place.
pub(crate) struct Env {
    pub no_color: bool,
    pub cuda_home: Option<PathBuf>,
    pub path: Option<std::ffi::OsString>,
    pub home: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: where `check --github` appends its markdown.
    pub step_summary: Option<PathBuf>,
    /// `XDG_CACHE_HOME`, else `~/.cache`.
    pub cache_home: Option<PathBuf>,
    pub cwd: PathBuf,
    /// `TMPDIR`, else `/tmp`.
    pub tmp: PathBuf,
    /// This coalprof executable (what a Slurm task runs).
    pub exe: Option<PathBuf>,
    /// `COALPROF_GPGPUSIM`: GPGPU-Sim's install folder.
    pub gpgpusim: Option<PathBuf>,
    /// `CUDA11_HOME`: the CUDA ≤ 11 toolkit for the simulator.
    pub cuda11: Option<PathBuf>,
    /// `COALPROF_HOME`, else `XDG_DATA_HOME/coalprof`, else `~/.local/share/coalprof`.
    pub tool_home: Option<ToolHome>,
}

impl Env {
    pub(crate) fn read() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Env {
            no_color: var("NO_COLOR").is_some(),
            cuda_home: var("CUDA_HOME").or_else(|| var("CUDA_PATH")).map(PathBuf::from),
            path: var("PATH"),
            home: var("HOME").map(PathBuf::from),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            cache_home: var("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache"))),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            tmp: std::env::temp_dir(),
            exe: std::env::current_exe().ok(),
            gpgpusim: var("COALPROF_GPGPUSIM").map(PathBuf::from),
            cuda11: var("CUDA11_HOME").map(PathBuf::from),
            tool_home: ToolHome::resolve(
                var("COALPROF_HOME").map(PathBuf::from),
                var("XDG_DATA_HOME").map(PathBuf::from),
                var("HOME").map(PathBuf::from),
            ),
        }
    }
}
