//! The environment, read in one place: the settings layer's one reader of it.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::tools::home::ToolHome;

/// The environment, read in one place.
pub(crate) struct Env {
    pub no_color: bool,
    /// The width terminal tables fit: `COLUMNS`, else the terminal's, else 100 (not a terminal).
    pub columns: usize,
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
    /// `COALPROF_GPGPUSIM_SRC`: the GPGPU-Sim source `setup sim` builds (archive or folder).
    pub gpgpusim_src: Option<PathBuf>,
    /// `COALPROF_PYTHON`: the Python with Triton for `coalprof triton`.
    pub python: Option<PathBuf>,
    /// Whether coalprof runs as root (`setup` then installs system packages with apt-get).
    pub root: bool,
}

impl Env {
    pub(crate) fn read() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        // Folders named by a variable, made absolute here once: a relative one means the folder
        // coalprof was started in, also for a child that runs elsewhere (the simulated program
        // runs in its run folder, and would look for a relative library path from there).
        let folder = |k: &str| var(k).map(|v| cwd.join(v));
        let home = folder("HOME");
        Env {
            no_color: var("NO_COLOR").is_some(),
            columns: columns(var("COLUMNS").as_deref()),
            cuda_home: folder("CUDA_HOME").or_else(|| folder("CUDA_PATH")),
            path: var("PATH"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            // XDG says a relative XDG_CACHE_HOME is invalid and must be ignored.
            cache_home: (var("XDG_CACHE_HOME").map(PathBuf::from).filter(|p| p.is_absolute()))
                .or_else(|| home.as_ref().map(|h| h.join(".cache"))),
            tmp: std::env::temp_dir(),
            exe: std::env::current_exe().ok(),
            gpgpusim: folder("COALPROF_GPGPUSIM"),
            cuda11: folder("CUDA11_HOME"),
            tool_home: ToolHome::resolve(
                folder("COALPROF_HOME"),
                var("XDG_DATA_HOME").map(PathBuf::from),
                home.clone(),
            ),
            gpgpusim_src: folder("COALPROF_GPGPUSIM_SRC"),
            python: folder("COALPROF_PYTHON"),
            // SAFETY: geteuid cannot fail and touches no memory.
            root: unsafe { libc::geteuid() } == 0,
            home,
            cwd,
        }
    }
}

/// Tables fit this many columns when neither `COLUMNS` nor a terminal says otherwise.
const DEFAULT_COLUMNS: usize = 100;

/// The width terminal tables fit: `COLUMNS` (a positive number), else the size of the terminal
/// stdout is, else [`DEFAULT_COLUMNS`].
fn columns(var: Option<&std::ffi::OsStr>) -> usize {
    let given = var.and_then(|v| v.to_str()).and_then(|v| v.trim().parse::<usize>().ok()).filter(|n| *n > 0);
    given.or_else(terminal_columns).unwrap_or(DEFAULT_COLUMNS)
}

/// The columns of the terminal on stdout (`TIOCGWINSZ`), if stdout is one.
fn terminal_columns() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one `winsize` through the pointer, which points at one.
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size as *mut libc::winsize) } == 0;
    (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_fit_columns_else_the_terminal_else_100() {
        assert_eq!(columns(Some("80".as_ref())), 80);
        assert_eq!(columns(Some(" 132 ".as_ref())), 132);
        // Not a number, or 0: the terminal's width, or 100 where stdout is none.
        let fallback = terminal_columns().unwrap_or(DEFAULT_COLUMNS);
        assert_eq!(columns(Some("wide".as_ref())), fallback);
        assert_eq!(columns(Some("0".as_ref())), fallback);
        assert_eq!(columns(None), fallback);
    }
}
