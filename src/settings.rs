//! Flags + `metrics.toml` + environment → typed settings, once. Nothing below this layer reads
//! clap structs or the environment.

#![allow(clippy::disallowed_methods)] // the settings layer: the one reader of the environment

use std::io::IsTerminal;
use std::path::PathBuf;

use std::ffi::OsString;
use std::time::Duration;

use crate::build::parse_arch;
use crate::cli::{AnalyzeArgs, ColorArg, Command, Global, PatternChoice, ProfilerArgs, RunArgs};
use crate::error::{Error, Result};
use crate::frame::launches::Grouping;
use crate::frame::Derivation;
use crate::gate::Rule;
use crate::import::{Bounds, RepReader};
use crate::metrics::Catalogue;
use crate::patterns::{parse_size, Pattern, Sizing};
use crate::style::{Format, Style};
use crate::tools::gpgpusim::SimMode;
use crate::tools::home::ToolHome;
use crate::tools::locate::ToolSearch;
use crate::tools::ncu::ProfilerSettings;

mod env;
mod gpus;
mod launcher;
mod profile;
mod setup;
pub(crate) mod task_file;

pub(crate) use env::Env;
pub(crate) use gpus::{parse_picks, GpuPick};

/// What every command shares.
pub struct Common {
    pub format: Format,
    pub style: Style,
    pub catalogue: Catalogue,
    /// The catalogue's `[[gate]]` rules, compiled: the default gate (`check` without `--rules`,
    /// `baseline update`).
    pub rules: Vec<Rule>,
    pub derivation: Derivation,
    pub tools: ToolSearch,
    /// Where built pattern executables are cached.
    pub cache: PathBuf,
    /// How `.ncu-rep` reports are read (`--reader`).
    pub rep_reader: RepReader,
    /// What a report may claim before it is believed (`--trust-input` lifts the bounds).
    pub bounds: Bounds,
    /// The system's temporary folder (where `run --gpus` puts each GPU's `TMPDIR`).
    pub tmp: PathBuf,
    /// The folder coalprof runs in: the checkout a run records.
    pub cwd: PathBuf,
}

/// Everything `check` needs, resolved from flags and `metrics.toml` by the settings layer.
#[derive(Debug, Clone, Default)]
pub struct CheckSettings {
    /// Compiled `[[gate]]` rules, in file order (later ones override earlier ones).
    pub rules: Vec<Rule>,
    /// `--baseline FILE`: compared against by `regress` rules; unreadable → exit 3.
    pub baseline: Option<PathBuf>,
    /// `--junit FILE`: JUnit XML, overwritten.
    pub junit: Option<PathBuf>,
    /// `--github`: workflow-command annotations on `out` after the table.
    pub github: bool,
    /// The value of `$GITHUB_STEP_SUMMARY`, read by the caller: markdown is appended to it.
    pub step_summary: Option<PathBuf>,
    /// `--exit-zero`: report only; a failed gate exits 0 with the same outputs.
    pub exit_zero: bool,
    /// Colour the table's status words (`--color`, `NO_COLOR` resolved by the caller).
    pub color: bool,
    /// The width the verdict table fits (`None`: `--wide`).
    pub width: Option<usize>,
    /// `--sarif FILE`: the wasteful lines of `.ncu-rep` inputs as SARIF 2.1.0.
    pub sarif: Option<PathBuf>,
    /// How much `--format summary` shows (`--summary-limit`).
    pub summary: crate::style::SummaryOptions,
    /// The checkout source paths are made relative to (line rows, SARIF).
    pub source_root: PathBuf,
}

/// The global settings that change a run's numbers (`--metrics`, `--ncu`, `--nvcc`, `--reader`):
/// what a Slurm task takes from its run besides the run's own settings, in its task file.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct GlobalSettings {
    /// `--metrics`: the metrics file (`None`: `./metrics.toml`, else the built-in one).
    pub metrics: Option<PathBuf>,
    /// `--ncu` (or `COALPROF_NCU`).
    pub ncu: Option<PathBuf>,
    /// `--nvcc` (or `COALPROF_NVCC`).
    pub nvcc: Option<PathBuf>,
    /// `--reader`.
    pub reader: RepReader,
}

impl GlobalSettings {
    /// As the command line (and `COALPROF_NCU`/`COALPROF_NVCC`) gave them.
    fn of(global: &Global) -> GlobalSettings {
        GlobalSettings {
            metrics: global.metrics.clone(),
            ncu: global.ncu.clone(),
            nvcc: global.nvcc.clone(),
            reader: global.reader,
        }
    }

    /// With the paths made absolute against `cwd` (a Slurm task may start elsewhere).
    fn absolute(self, cwd: &std::path::Path) -> GlobalSettings {
        let abs = |p: Option<PathBuf>| p.map(|p| cwd.join(p));
        GlobalSettings { metrics: abs(self.metrics), ncu: abs(self.ncu), nvcc: abs(self.nvcc), reader: self.reader }
    }

    /// As flags for a child of this executable (`coalprof mcp`'s calls): each path given, and
    /// the reader where it is not the default.
    fn child_flags(&self) -> Vec<OsString> {
        let paths = [("metrics", &self.metrics), ("ncu", &self.ncu), ("nvcc", &self.nvcc)];
        let mut flags: Vec<OsString> = paths
            .into_iter()
            .filter_map(|(name, value)| {
                let mut arg = OsString::from(format!("--{name}="));
                arg.push(value.as_ref()?);
                Some(arg)
            })
            .collect();
        if self.reader == RepReader::Ncu {
            flags.push("--reader=ncu".into());
        }
        flags
    }

    /// A task's: the file's where it says, else the node's own (`COALPROF_NCU` there, say).
    fn or(self, node: GlobalSettings) -> GlobalSettings {
        GlobalSettings {
            metrics: self.metrics.or(node.metrics),
            ncu: self.ncu.or(node.ncu),
            nvcc: self.nvcc.or(node.nvcc),
            reader: self.reader,
        }
    }
}

/// What `--slurm` needs besides the run's own settings.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlurmSettings {
    /// This coalprof: what every task runs (on shared storage, like the run folder).
    pub exe: PathBuf,
    /// The global settings that change the numbers, paths absolute: each task file carries them.
    pub global: GlobalSettings,
    /// `--partition`s; empty: the cluster's default.
    pub partitions: Vec<String>,
    /// `--slurm-arg`s, passed to `sbatch` as they are.
    pub sbatch_args: Vec<String>,
    /// The folder the tasks start in (`sbatch --chdir`).
    pub cwd: PathBuf,
    /// How often `squeue` is asked.
    pub poll: Duration,
}

pub(crate) struct LinesSettings {
    pub reports: Vec<PathBuf>,
    pub options: crate::lines::Options,
    pub source_root: PathBuf,
    pub sarif: Option<PathBuf>,
}

pub(crate) struct TritonSettings {
    pub request: crate::triton::Request,
    pub options: crate::lines::Options,
    pub source_root: PathBuf,
    pub out: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
}

pub(crate) struct AnalyzeSettings {
    pub files: Vec<PathBuf>,
    pub grouping: Grouping,
}

pub(crate) use crate::results::Backend;

/// A run's settings; a Slurm task's file carries them as they are (`task_file`), all but where
/// the run spreads its patterns, which a task never does again.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct RunSettings {
    pub patterns: Vec<Pattern>,
    /// `--variant`: only these variants (empty: every variant of the patterns).
    pub variants: Vec<String>,
    pub backend: Backend,
    pub sizing: Sizing,
    pub arch: Option<String>,
    pub profiler: ProfilerSettings,
    /// The model's L2 fetch granularity (32, 64 or 128 bytes).
    pub l2_fetch_bytes: u32,
    pub out_base: PathBuf,
    pub run_id: Option<String>,
    /// `--gpus`: spread the patterns over these GPUs of the node.
    #[serde(skip)]
    pub gpus: Option<Vec<GpuPick>>,
    /// `--slurm`: submit the patterns as Slurm tasks.
    #[serde(skip)]
    pub slurm: Option<SlurmSettings>,
}

pub(crate) struct ProfileSettings {
    /// `--backend sim`: run the program in GPGPU-Sim instead of under ncu.
    pub simulate: bool,
    /// Where the program's sources are found (the current folder): the report's worst lines.
    pub source_root: PathBuf,
    pub kernel: Option<String>,
    pub launch_skip: Option<u64>,
    pub launch_count: Option<u64>,
    pub grouping: Grouping,
    pub profiler: ProfilerSettings,
    pub out_base: PathBuf,
    /// The program to run; with `source`, where coalprof builds it (inside the run folder).
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// `FILE.cu` (`--backend sim`): the source coalprof compiles into `program` first.
    pub source: Option<SimSource>,
    /// `--per-rank`: the launcher ncu runs under, and how it numbers its ranks.
    pub per_rank: Option<PerRank>,
}

/// A CUDA source `profile --backend sim` compiles itself, with the user's extra nvcc arguments.
pub(crate) struct SimSource {
    pub file: PathBuf,
    pub nvcc_args: Vec<String>,
}

/// A launcher (`srun -n 4`) and the environment variable that holds each rank's number.
pub(crate) struct PerRank {
    pub launcher: Vec<OsString>,
    pub rank_env: String,
}

pub(crate) struct BuildSettings {
    pub patterns: Vec<Pattern>,
    pub archs: Vec<String>,
    pub cache: PathBuf,
}

pub(crate) struct PatternsSettings {
    pub sizing: Option<Sizing>,
}

/// One command, fully resolved.
pub(crate) enum Settings {
    Patterns(PatternsSettings),
    Run(RunSettings),
    /// `task FILE`: one Slurm task, its settings read from the file (`task_file`).
    Task(RunSettings),
    Profile(ProfileSettings),
    Analyze(AnalyzeSettings),
    Lines(LinesSettings),
    Triton(TritonSettings),
    Build(BuildSettings),
    Report(PathBuf),
    History(HistorySettings),
    Model(ExprSettings),
    Check(CheckCommand),
    Compare(CompareSettings),
    BaselineUpdate(BaselineSettings),
    Doctor,
    /// `mcp`: the server, and what each of its tool calls runs.
    Mcp(crate::mcp::McpSettings),
    Setup(crate::tools::setup::Request),
    /// `completions SHELL`.
    Completions(clap_complete::Shell),
}

pub(crate) struct HistorySettings {
    pub dir: PathBuf,
    pub filter: crate::frame::history::Filter,
}

pub(crate) struct ExprSettings {
    pub expr: String,
    pub bindings: Vec<(String, String)>,
    pub element_bytes: u32,
    pub shared: bool,
}

pub struct CheckCommand {
    pub inputs: Vec<PathBuf>,
    pub check: CheckSettings,
}

pub(crate) struct CompareSettings {
    pub inputs: Vec<PathBuf>,
    /// `--label`s, the first for the first input.
    pub labels: Vec<String>,
    /// Metric keys the human formats show (empty: the headline metrics).
    pub metrics: Vec<String>,
    /// How user kernels' rows are matched.
    pub match_by: crate::frame::side_by_side::MatchBy,
}

pub struct BaselineSettings {
    pub runs: Vec<PathBuf>,
    /// The checkout line rows' paths are relative to.
    pub source_root: PathBuf,
    pub path: PathBuf,
    /// Only metrics some `regress` rule compares, under these rules.
    pub only_gated: Option<Vec<crate::gate::Rule>>,
}

pub(crate) fn resolve(global: &Global, command: &Command, env: &Env) -> Result<(Common, Settings)> {
    // A Slurm task's settings are its file's, the global ones that change the numbers included.
    let mut task = match command {
        Command::Task { file } => Some(task_file::TaskFile::read(file)?),
        _ => None,
    };
    let numbers = match &task {
        Some(t) => t.global.clone().or(GlobalSettings::of(global)),
        None => GlobalSettings::of(global),
    };
    let common = common(global, numbers, env)?;
    let project = project_root(&env.cwd);
    let out_base = |out: &Option<PathBuf>| crate::store::runs_base(out.as_deref(), project.as_deref());
    let settings = match command {
        Command::Patterns(a) => Settings::Patterns(PatternsSettings {
            sizing: a.size.as_deref().map(parse_size).transpose().map_err(|e| Error::usage(e.to_string()))?,
        }),
        Command::Run(a) => Settings::Run(run(a, out_base(&a.out), global, env)?),
        Command::Profile(a) => Settings::Profile(profile::settings(a, out_base(&a.out), env)?),
        Command::Analyze(a) => Settings::Analyze(analyze(a)),
        Command::Lines(a) => Settings::Lines(lines(a, env)?),
        Command::Triton(a) => Settings::Triton(triton(a, env)?),
        Command::Build(a) => Settings::Build(BuildSettings {
            patterns: patterns(&a.patterns)?,
            archs: a.arch.iter().map(|s| parse_arch(s)).collect::<Result<_>>()?,
            cache: common.cache.clone(),
        }),
        Command::Report(a) => Settings::Report(a.run.clone()),
        Command::History(a) => Settings::History(history(a, &common)?),
        Command::Model(a) => Settings::Model(ExprSettings {
            expr: a.expr.clone(),
            bindings: a
                .bindings
                .iter()
                .map(|b| crate::model::expr::parse_binding(b).map_err(|e| Error::usage(format!("binding `{b}`: {e}"))))
                .collect::<Result<_>>()?,
            element_bytes: a.bytes,
            shared: a.shared,
        }),
        Command::Check(a) => Settings::Check(check(a, &common, env)?),
        Command::Compare(a) => Settings::Compare(compare(a, &common)?),
        Command::Baseline(crate::cli::BaselineCommand::Update(a)) => Settings::BaselineUpdate(BaselineSettings {
            runs: a.runs.clone(),
            source_root: env.cwd.clone(),
            path: a.baseline.clone(),
            only_gated: a.only_gated.then(|| common.rules.clone()),
        }),
        Command::Doctor => Settings::Doctor,
        Command::Mcp => Settings::Mcp(mcp(global, env)?),
        Command::Setup(a) => Settings::Setup(setup::request(a, env)?),
        Command::Task { file } => {
            Settings::Task(task.take().map_or_else(|| task_file::TaskFile::read(file), Ok)?.settings())
        }
        Command::Completions { shell } => Settings::Completions(*shell),
    };
    Ok((common, settings))
}

/// What every command shares, from the global flags and the global settings that change the
/// numbers (`numbers`: the command line's, or a Slurm task's from its file).
fn common(global: &Global, numbers: GlobalSettings, env: &Env) -> Result<Common> {
    let catalogue = Catalogue::load(numbers.metrics.as_deref(), &env.cwd)?;
    let rules = crate::gate::compile_rules(catalogue.rules.clone(), &catalogue.origin, catalogue.directions().into())?;
    let derivation = Derivation::new(&catalogue)?;
    let color = match global.color {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => !env.no_color && std::io::stdout().is_terminal(),
    };
    let tools = ToolSearch {
        ncu: numbers.ncu,
        nvcc: numbers.nvcc,
        cuda_home: env.cuda_home.clone(),
        path: env.path.clone(),
        prefix: env.exe.as_deref().and_then(|e| e.parent()?.parent()).map(PathBuf::from),
        home: env.tool_home.clone(),
        checkout: project_root(&env.cwd).map(|r| ToolHome::at(r.join(".tools"))),
        gpgpusim: env.gpgpusim.clone(),
        cuda11: env.cuda11.clone(),
        ncu_home: env.home.clone().filter(|h| h.is_dir()).or_else(|| Some(env.tmp.clone())),
        python: env.python.clone(),
    };
    let cache = kernel_cache(project_root(&env.cwd).as_deref(), env);
    let common = Common {
        format: global.format,
        style: Style::new(&catalogue, color)
            .with_width((!global.wide).then_some(env.columns))
            .with_summary_limit(global.summary_limit),
        catalogue,
        rules,
        derivation,
        tools,
        cache,
        rep_reader: numbers.reader,
        bounds: if global.trust_input { Bounds::Lifted } else { Bounds::Untrusted },
        tmp: env.tmp.clone(),
        cwd: env.cwd.clone(),
    };
    Ok(common)
}

/// `mcp`: this executable (each tool call runs it) and the global flags the calls pass on.
fn mcp(global: &Global, env: &Env) -> Result<crate::mcp::McpSettings> {
    let exe = env
        .exe
        .clone()
        .ok_or_else(|| Error::unavailable("cannot find the coalprof executable itself", "run coalprof by its path"))?;
    // Absolute: a child of a later call resolves nothing against another folder.
    let mut pass = GlobalSettings::of(global).absolute(&env.cwd).child_flags();
    if global.trust_input {
        pass.push("--trust-input".into());
    }
    Ok(crate::mcp::McpSettings { exe, global: pass })
}

fn check(a: &crate::cli::CheckArgs, common: &Common, env: &Env) -> Result<CheckCommand> {
    let rules = match &a.rules {
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| Error::usage(format!("cannot read `{}`: {e}", p.display())))?;
            crate::gate::parse_rules(&text, p, &common.catalogue.directions())?
        }
        None => common.rules.clone(),
    };
    Ok(CheckCommand {
        inputs: a.inputs.clone(),
        check: CheckSettings {
            rules,
            baseline: a.baseline.clone(),
            junit: a.junit.clone(),
            github: a.github,
            step_summary: if a.github { env.step_summary.clone() } else { None },
            exit_zero: a.exit_zero,
            color: common.style.color,
            width: common.style.width,
            summary: crate::style::SummaryOptions {
                inputs: a.inputs.clone(),
                ..common.style.summarising("check", None).summary
            },
            sarif: a.sarif.clone(),
            source_root: env.cwd.clone(),
        },
    })
}

fn history(a: &crate::cli::HistoryArgs, common: &Common) -> Result<HistorySettings> {
    if let Some(m) = a.metric.iter().find(|m| !common.catalogue.defines(m)) {
        return Err(Error::usage(format!("`--metric {m}`: metrics.toml defines no metric `{m}`")));
    }
    let kernel = (a.kernel.as_deref())
        .map(|k| regex::Regex::new(k).map_err(|e| Error::usage(format!("`--kernel {k}` is not a valid regex: {e}"))))
        .transpose()?;
    let date = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$").expect("a valid regex");
    if let Some(s) = a.since.as_deref().filter(|s| !date.is_match(s)) {
        return Err(Error::usage(format!("`--since {s}` is not a date: give `YYYY-MM-DD` (UTC)")));
    }
    // The human formats show the headline metrics unless told; JSON and CSV carry every one.
    let metrics = match (a.metric.is_empty(), common.format) {
        (false, _) => a.metric.clone(),
        (true, Format::Json | Format::Csv) => Vec::new(),
        (true, _) => common.catalogue.columns.iter().filter(|c| c.headline).map(|c| c.key.clone()).collect(),
    };
    let filter = crate::frame::history::Filter { metrics, kernel, since: a.since.clone() };
    Ok(HistorySettings { dir: a.dir.clone(), filter })
}

fn compare(a: &crate::cli::CompareArgs, common: &Common) -> Result<CompareSettings> {
    // `--label`s are counted against column groups, not inputs: one spread run may be several.
    if let Some(m) = a.metric.iter().find(|m| !common.catalogue.defines(m)) {
        return Err(Error::usage(format!("`--metric {m}`: metrics.toml defines no metric `{m}`")));
    }
    Ok(CompareSettings {
        inputs: a.inputs.clone(),
        labels: a.label.clone(),
        metrics: a.metric.clone(),
        match_by: a.match_by,
    })
}

fn run(a: &RunArgs, out_base: PathBuf, global: &Global, env: &Env) -> Result<RunSettings> {
    let gpus = if a.scale.gpus.is_empty() { None } else { Some(parse_picks(&a.scale.gpus)?) };
    let slurm = a.scale.slurm.then(|| slurm_settings(a, global, env)).transpose()?;
    let backend = a.backend;
    if backend == Backend::Sim && gpus.is_some() {
        return Err(Error::usage(
            "`--gpus` spreads ncu runs over GPUs; `--backend sim` needs none (`--slurm` spreads sim runs)",
        ));
    }
    let default_size = match backend {
        Backend::Sim => Sizing::simulated(a.profiler.sim_mode == SimMode::Timing),
        _ => Sizing::default(),
    };
    let patterns = patterns(&a.patterns)?;
    let sizing =
        a.size.as_deref().map(parse_size).transpose().map_err(|e| Error::usage(e.to_string()))?.unwrap_or(default_size);
    // Variant names can depend on the size (the reuse pattern's sequence lengths scale with it).
    let variants = only_variants(&a.variant, &patterns, backend, sizing)?;
    Ok(RunSettings {
        gpus,
        slurm,
        patterns,
        variants,
        backend,
        sizing,
        arch: a.build.arch.as_deref().map(parse_arch).transpose()?,
        profiler: profiler(&a.profiler, a.warmup, a.repeats),
        l2_fetch_bytes: a.model.l2_fetch.parse().map_err(|_| Error::usage("`--l2-fetch` takes 32, 64 or 128"))?,
        out_base,
        run_id: a.run_id.clone(),
    })
}

/// `--variant`s, checked against the chosen patterns' variants (empty: all of them).
fn only_variants(names: &[String], patterns: &[Pattern], backend: Backend, sizing: Sizing) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    if !matches!(backend, Backend::Sim | Backend::Model) {
        return Err(Error::usage("`--variant` picks variants for `--backend sim` or `--backend model`"));
    }
    let known: Vec<String> =
        (patterns.iter()).flat_map(|&p| crate::patterns::variants(p, sizing).into_iter().map(|v| v.name)).collect();
    match names.iter().find(|n| !known.contains(n)) {
        Some(n) => {
            Err(Error::usage(format!("no variant `{n}` in the chosen patterns (they have: {})", known.join(", "))))
        }
        None => Ok(names.to_vec()),
    }
}

/// What each Slurm task is told besides the run's settings: this coalprof, and the global
/// settings that change its numbers (both carried by the task file, not by flags).
fn slurm_settings(a: &RunArgs, global: &Global, env: &Env) -> Result<SlurmSettings> {
    let exe = env.exe.clone().ok_or_else(|| Error::usage("`--slurm`: cannot find this coalprof's own executable"))?;
    Ok(SlurmSettings {
        exe,
        global: GlobalSettings::of(global).absolute(&env.cwd),
        partitions: a.scale.partition.clone(),
        sbatch_args: a.scale.slurm_arg.clone(),
        cwd: env.cwd.clone(),
        poll: Duration::from_millis(500),
    })
}

fn triton(a: &crate::cli::TritonArgs, env: &Env) -> Result<TritonSettings> {
    use crate::triton::{parse_arch, parse_arg, parse_meta, parse_target};
    let (file, kernel) = parse_target(&a.target)?;
    if a.grid.is_empty() || a.grid.len() > 3 || a.grid.contains(&0) {
        return Err(Error::usage("`--grid` takes one to three positive program counts: `--grid 64` or `--grid 8,8`"));
    }
    if !(1..=32).contains(&a.num_warps) || !a.num_warps.is_power_of_two() {
        return Err(Error::usage(format!("`--num-warps {}` is not a power of two from 1 to 32", a.num_warps)));
    }
    if a.programs == Some(0) {
        return Err(Error::usage("`--programs 0` runs nothing: give at least 1"));
    }
    let meta = a.meta.iter().map(|m| parse_meta(m)).collect::<Result<serde_json::Map<_, _>>>()?;
    let args = a.args.iter().map(|m| parse_arg(m)).collect::<Result<Vec<_>>>()?;
    let npy = |p: PathBuf| if p.is_absolute() { p } else { env.cwd.join(p) };
    let args = args
        .into_iter()
        .map(|a| match a {
            crate::triton::Arg::Npy { name, path } => crate::triton::Arg::Npy { name, path: npy(path) },
            other => other,
        })
        .collect();
    Ok(TritonSettings {
        request: crate::triton::Request {
            file,
            kernel,
            grid: a.grid.clone(),
            args,
            meta,
            num_warps: a.num_warps,
            num_stages: a.num_stages,
            cc: parse_arch(&a.arch)?,
            programs: a.programs,
        },
        options: crate::lines::Options { kernel: None, top: (a.top > 0).then_some(a.top), per_launch: false, by: a.by },
        source_root: env.cwd.clone(),
        out: a.out.clone(),
        sarif: a.sarif.clone(),
    })
}

fn lines(a: &crate::cli::LinesArgs, env: &Env) -> Result<LinesSettings> {
    let kernel = a
        .kernel
        .as_deref()
        .map(|k| regex::Regex::new(k).map_err(|e| Error::usage(format!("`--kernel {k}` is not a valid regex: {e}"))))
        .transpose()?;
    let source_root = a.source_root.clone().unwrap_or_else(|| env.cwd.clone());
    if !source_root.is_dir() {
        return Err(Error::usage(format!("`--source-root {}` is not a folder", source_root.display())));
    }
    Ok(LinesSettings {
        reports: a.reports.clone(),
        options: crate::lines::Options {
            kernel,
            top: (a.top > 0).then_some(a.top),
            per_launch: a.per_launch,
            by: a.by,
        },
        source_root,
        sarif: a.sarif.clone(),
    })
}

fn profiler(p: &ProfilerArgs, warmup: u32, repeats: u32) -> ProfilerSettings {
    ProfilerSettings {
        cache_control: p.cache_control.clone(),
        clock_control: p.clock_control.clone(),
        timeout: Duration::from_secs(p.timeout.max(1)),
        warmup,
        repeats: repeats.max(1),
        sim_mode: p.sim_mode,
    }
}

fn patterns(c: &PatternChoice) -> Result<Vec<Pattern>> {
    if c.all {
        return Ok(Pattern::ALL.to_vec());
    }
    let mut out = Vec::new();
    for name in &c.pattern {
        let p: Pattern = name.parse().map_err(|e: crate::patterns::UnknownPattern| Error::usage(e.to_string()))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// Where built kernels are cached: `kernels/build/` in the checkout, else the user's cache.
fn kernel_cache(project: Option<&std::path::Path>, env: &Env) -> PathBuf {
    match project {
        Some(p) => p.join("kernels/build"),
        None => env.cache_home.clone().unwrap_or_else(std::env::temp_dir).join("coalprof/kernels"),
    }
}

fn analyze(a: &AnalyzeArgs) -> AnalyzeSettings {
    let grouping = if a.per_launch { Grouping::PerLaunch } else { Grouping::PerKernel };
    AnalyzeSettings { files: a.files.clone(), grouping }
}

/// The coalprof checkout `cwd` is in (it has `kernels/` and `metrics.toml`), if any.
pub(crate) fn project_root(cwd: &std::path::Path) -> Option<PathBuf> {
    cwd.ancestors().find(|d| d.join("metrics.toml").is_file() && d.join("kernels").is_dir()).map(PathBuf::from)
}
