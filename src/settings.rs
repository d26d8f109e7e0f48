//! Flags + `metrics.toml` + environment → typed settings, once. Nothing below this layer reads
//! clap structs or the environment.

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::analyze::Grouping;
use crate::cli::{AnalyzeArgs, ColorArg, Command, FormatArg, Global};
use crate::error::Result;
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::render::{Format, Style};
use crate::tools::locate::ToolSearch;
use crate::tools::ncu::Ncu;
use crate::tools::ToolError;

/// What every command shares.
pub struct Common {
    pub format: Format,
    pub style: Style,
    pub catalogue: Catalogue,
    pub derivation: Derivation,
    pub tools: ToolSearch,
    /// A writable HOME for ncu (it deploys section files there).
    pub ncu_home: Option<PathBuf>,
}

impl Common {
    /// The ncu to use, or why there is none.
    pub fn ncu(&self) -> std::result::Result<Ncu, ToolError> {
        let found = self.tools.ncu()?;
        tracing::info!(path = %found.path.display(), how = found.how, "using ncu");
        Ok(Ncu { path: found.path, home: self.ncu_home.clone() })
    }
}

/// The environment, read in one place.
pub struct Env {
    pub no_color: bool,
    pub cuda_home: Option<PathBuf>,
    pub path: Option<std::ffi::OsString>,
    pub home: Option<PathBuf>,
    pub cwd: PathBuf,
}

impl Env {
    pub fn read() -> Env {
        let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
        Env {
            no_color: var("NO_COLOR").is_some(),
            cuda_home: var("CUDA_HOME").or_else(|| var("CUDA_PATH")).map(PathBuf::from),
            path: var("PATH"),
            home: var("HOME").map(PathBuf::from),
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }
}

pub struct AnalyzeSettings {
    pub files: Vec<PathBuf>,
    pub grouping: Grouping,
}

/// One command, fully resolved.
pub enum Settings {
    Analyze(AnalyzeSettings),
}

pub fn resolve(global: &Global, command: &Command, env: &Env) -> Result<(Common, Settings)> {
    let catalogue = Catalogue::load(global.metrics.as_deref(), &env.cwd)?;
    let derivation = Derivation::new(&catalogue)?;
    let format = match global.format {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Json => Format::Json,
        FormatArg::Csv => Format::Csv,
    };
    let color = match global.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => !env.no_color && std::io::stdout().is_terminal(),
    };
    let project_tools = project_root(&env.cwd).map(|r| r.join(".tools"));
    let tools = ToolSearch {
        ncu: global.ncu.clone(),
        nvcc: global.nvcc.clone(),
        cuda_home: env.cuda_home.clone(),
        path: env.path.clone(),
        project_tools,
    };
    let ncu_home = env.home.clone().filter(|h| h.is_dir()).or_else(|| Some(std::env::temp_dir()));
    let common = Common { format, style: Style { color }, catalogue, derivation, tools, ncu_home };
    let settings = match command {
        Command::Analyze(a) => Settings::Analyze(analyze(a)),
    };
    Ok((common, settings))
}

fn analyze(a: &AnalyzeArgs) -> AnalyzeSettings {
    let grouping = if a.per_launch { Grouping::PerLaunch } else { Grouping::PerKernel };
    AnalyzeSettings { files: a.files.clone(), grouping }
}

/// The coalprof checkout `cwd` is in (it has `kernels/` and `metrics.toml`), if any.
pub fn project_root(cwd: &std::path::Path) -> Option<PathBuf> {
    cwd.ancestors().find(|d| d.join("metrics.toml").is_file() && d.join("kernels").is_dir()).map(PathBuf::from)
}
