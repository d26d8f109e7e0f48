//! The command line, declared with clap derive. Only `settings.rs` reads these structs: it
//! turns them, `metrics.toml` and the environment into typed settings once. A choice that is a
//! domain type (the output format, the report reader, the simulator's mode, compare's matching,
//! lines' rows) is that type, deriving clap's `ValueEnum` where it is defined, not a mirror.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::frame::side_by_side::MatchBy;
use crate::import::RepReader;
use crate::results::Backend;
use crate::style::{By, Format};
use crate::tools::gpgpusim::SimMode;
use crate::tools::setup::Component;

/// Shows how CUDA kernels touch memory: sectors per request, amplification, bandwidth and
/// shared-memory bank conflicts, measured with Nsight Compute or predicted by an address model.
#[derive(Debug, Parser)]
#[command(name = "coalprof", version, propagate_version = true, max_term_width = 100)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
    #[command(flatten)]
    pub global: Global,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub(crate) struct Global {
    /// Output format on stdout. `run`, `profile`, `analyze` and `report` write all but svg;
    /// `lines`, `triton` and `check` table, markdown, json, csv, html, summary and summary-md;
    /// `compare` table, markdown, json, csv and html; `history` those and svg. A format a
    /// command does not write is refused (exit 2).
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Kernels, lines and checks `--format summary` and `summary-md` show, each (0: all); by
    /// default 5 of each, within 4 KB of JSON.
    #[arg(long, global = true, value_name = "N")]
    pub summary_limit: Option<usize>,
    /// When to colour the terminal table (`NO_COLOR` is honoured under `auto`).
    #[arg(long, global = true, value_enum, default_value_t = ColorArg::Auto)]
    pub color: ColorArg,
    /// Show every column of the terminal tables, however wide (by default they fit `COLUMNS`,
    /// the terminal, or 100 columns).
    #[arg(long, global = true)]
    pub wide: bool,
    /// More logs on stderr (-v info, -vv debug); `COALPROF_LOG` takes a tracing filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The metrics file (default: ./metrics.toml, else the built-in one).
    #[arg(long, global = true, value_name = "FILE")]
    pub metrics: Option<PathBuf>,
    /// The ncu to use.
    #[arg(long, global = true, env = "COALPROF_NCU", value_name = "PATH")]
    pub ncu: Option<PathBuf>,
    /// The nvcc to use.
    #[arg(long, global = true, env = "COALPROF_NVCC", value_name = "PATH")]
    pub nvcc: Option<PathBuf>,
    /// How to read `.ncu-rep` reports: coalprof's own reader (no ncu needed; `ncu --import` only
    /// for a report format version it does not know), or always `ncu --import`.
    #[arg(long, global = true, value_enum, default_value_t = RepReader::Native)]
    pub reader: RepReader,
    /// Read reports without the bounds that keep a forged one from taking the machine: a
    /// compressed report expanding past 256× its size (at least 64 MiB), a result item over
    /// 16 MiB, a module over 256 MiB. Only for a report you trust.
    #[arg(long, global = true)]
    pub trust_input: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum ColorArg {
    Auto,
    Always,
    Never,
}

/// Each subcommand's arguments are built only when it is the one run (or help or completions
/// need them): building all thirteen was most of clap's 0.2 ms at every start
/// (`docs/performance.md`, "Native report reading").
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum Command {
    /// List the built-in patterns, their variants and what each one shows.
    Patterns(PatternsArgs),
    /// Build, time and profile built-in patterns; print the table and save the run.
    Run(RunArgs),
    /// Profile your own program: the same metrics and table for its kernels.
    Profile(ProfileArgs),
    /// Predict the coalescing of your own layout: an index expression over lane, warp, tid,
    /// block and loop variables (the user guide's `docs/guide/commands/model.md`, "Modelling your
    /// own layout").
    Model(ExprArgs),
    /// Turn existing ncu reports (CSV of any page and version, or .ncu-rep) into the table.
    Analyze(AnalyzeArgs),
    /// Which source line wastes the bandwidth: per-line (or per-instruction) sectors, excess and
    /// bank conflicts from `.ncu-rep` reports made with the SourceCounters section (`--set full`),
    /// or from the run folders of `profile --backend sim` and `triton --out`.
    Lines(LinesArgs),
    /// A Triton kernel's per-line sectors per request without a GPU: compiled for the target (the
    /// layout and vector width of each load and store), every program's addresses from Triton's
    /// interpreter (needs a Python with `triton` and `numpy`: `pip install 'coalprof[triton]'`).
    Triton(TritonArgs),
    /// The gate: check runs or reports against `[[gate]]` rules and an optional baseline.
    Check(CheckArgs),
    /// Runs or reports side by side (GPUs, commits, settings): one column group per input, the
    /// first the reference, with each later input's deltas and ratios against it.
    Compare(CompareArgs),
    /// Manage the checked-in baseline.
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Re-render a saved run (a `profiles/<run>/` folder or its results.json) without profiling.
    Report(ReportArgs),
    /// Every saved run of a profiles folder over time: per row and metric, its value at each
    /// run and commit, and where it first changed.
    History(HistoryArgs),
    /// Compile the pattern executables with nvcc (cached; `run` does this itself).
    Build(BuildArgs),
    /// Print a shell completion script (`coalprof completions bash > ~/.local/share/bash-completion/completions/coalprof`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Say what is present and what is missing (nvcc, ncu, GPUs, counter permission), with fixes.
    Doctor,
    /// Serve coalprof's commands to an agent as Model Context Protocol tools on stdio (JSON-RPC
    /// on stdin and stdout; each call runs coalprof as a child process).
    Mcp,
    /// Install what each backend needs into the tool home (`COALPROF_HOME`, else
    /// `$XDG_DATA_HOME/coalprof`, else `~/.local/share/coalprof`): idempotent, nothing
    /// half-installed.
    Setup(SetupArgs),
    /// One task of `run --slurm`: the run's resolved settings, from the file it wrote.
    #[command(hide = true)]
    Task {
        /// The task's settings (`slurm/<task>.json` of the run folder).
        file: PathBuf,
    },
}

#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    /// What to install (several may be named).
    #[arg(value_enum, default_values_t = [Component::All])]
    pub components: Vec<Component>,
    /// List each step, and whether its result is already there, without changing anything.
    #[arg(long)]
    pub dry_run: bool,
}

/// Which patterns: a comma-separated list, or all of them.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(crate) struct PatternChoice {
    /// Patterns to run, comma-separated (`coalprof patterns` lists them).
    #[arg(long, short, value_delimiter = ',', value_name = "P[,P…]")]
    pub pattern: Vec<String>,
    /// Every built-in pattern.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PatternsArgs {
    /// Also list each variant's parameters at this size (bytes, e.g. `1G`, `64M`).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub patterns: PatternChoice,
    #[arg(long, value_enum, default_value_t = Backend::Auto)]
    pub backend: Backend,
    /// Only these variants of the patterns (`--variant nhd_fp16,hdn_fp16`; `coalprof patterns`
    /// lists them), with `--backend sim` or `--backend model`.
    #[arg(long, value_delimiter = ',', value_name = "V[,V…]")]
    pub variant: Vec<String>,
    /// Size of each pattern's main array (`1G` default: far beyond a 50 MB L2; `256K` under
    /// `--backend sim`, `64K` with `--sim-mode timing`: the simulator finishes them in seconds).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<String>,
    #[command(flatten)]
    pub build: ArchArg,
    #[command(flatten)]
    pub profiler: ProfilerArgs,
    #[command(flatten)]
    pub model: L2Args,
    /// Folder for the run (default: profiles/ in the checkout, else ./profiles).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Name of the run's folder (default: UTC time and backend).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// CUDA-event timing: warm-up launches, then timed repeats (median reported).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub warmup: u32,
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub repeats: u32,
    #[command(flatten)]
    pub scale: ScaleArgs,
}

/// Beyond one GPU: spread a run over the GPUs of this node, or over a Slurm cluster.
#[derive(Debug, Args)]
pub(crate) struct ScaleArgs {
    /// Spread the patterns over these GPUs of this node, one ncu per GPU at a time, each child
    /// pinned with `CUDA_VISIBLE_DEVICES`: `all`, nvidia-smi indices (`0,2`) or UUIDs (`GPU-…`).
    #[arg(long, value_delimiter = ',', value_name = "all|I,…|UUID,…", conflicts_with_all = ["arch", "slurm"])]
    pub gpus: Vec<String>,
    /// Submit one Slurm task per pattern (and partition), each running coalprof on its node into
    /// this run's folder (shared storage), wait, and merge them into one run.
    #[arg(long)]
    pub slurm: bool,
    /// A partition to run every pattern on, repeatable (one per GPU type gives the cross-GPU
    /// table); default: the cluster's default partition.
    #[arg(long, value_name = "P", requires = "slurm")]
    pub partition: Vec<String>,
    /// An argument passed to `sbatch` as is, repeatable (`--slurm-arg=--gres=gpu:1`).
    #[arg(long = "slurm-arg", value_name = "ARG", requires = "slurm", allow_hyphen_values = true)]
    pub slurm_arg: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ArchArg {
    /// GPU architecture to build for (default: the GPU's, from nvidia-smi).
    #[arg(long, value_name = "sm_XX")]
    pub arch: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ProfilerArgs {
    /// ncu's `--cache-control` (all: flush caches before every replay pass).
    #[arg(long, value_parser = ["all", "none"], default_value = "all")]
    pub cache_control: String,
    /// ncu's `--clock-control` (base: lock clocks to base; `none` where locking is refused).
    #[arg(long, value_parser = ["base", "none", "reset"], default_value = "base")]
    pub clock_control: String,
    /// Kill a kernel process (and its process group) that runs longer than this many seconds.
    #[arg(long, default_value_t = 600, value_name = "SECS")]
    pub timeout: u64,
    /// `--backend sim`: GPGPU-Sim's mode; both give the same counters.
    #[arg(long, value_enum, default_value_t = SimMode::Functional)]
    pub sim_mode: SimMode,
}

#[derive(Debug, Args)]
pub(crate) struct L2Args {
    /// The model's L2→DRAM fetch granularity in bytes (undocumented on Hopper).
    #[arg(long, value_parser = ["32", "64", "128"], default_value = "32")]
    pub l2_fetch: String,
}

/// `profile --backend`: the backends that run a program, `ncu` (on the GPU) or `sim` (in
/// GPGPU-Sim, no GPU: the program built with `-cudart shared`, CUDA 13 or older).
fn program_backend() -> impl clap::builder::TypedValueParser<Value = Backend> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["ncu", "sim"]).try_map(|name: String| Backend::from_str(&name, false))
}

#[derive(Debug, Args)]
pub(crate) struct ProfileArgs {
    #[arg(long, value_parser = program_backend(), default_value = "ncu")]
    pub backend: Backend,
    /// Only kernels whose function name matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Skip this many matching launches.
    #[arg(long, value_name = "N")]
    pub launch_skip: Option<u64>,
    /// Profile at most this many matching launches.
    #[arg(long, value_name = "N")]
    pub launch_count: Option<u64>,
    /// One row per launch instead of one per kernel and launch shape.
    #[arg(long)]
    pub per_launch: bool,
    #[command(flatten)]
    pub profiler: ProfilerArgs,
    /// Folder for the run (default: profiles/ in the checkout, else ./profiles).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// CMD starts with a launcher (`srun -n 4`, `mpirun -np 4`): run ncu under it, one report
    /// per rank (`rank-N.ncu-rep`), and show the rows with their rank. The program is the first
    /// executable after the launcher's options, or whatever follows a second `--`.
    #[arg(long)]
    pub per_rank: bool,
    /// The variable the launcher numbers its ranks by (default: `SLURM_PROCID` for srun,
    /// `OMPI_COMM_WORLD_RANK` for mpirun/mpiexec; `PMI_RANK` for MPICH or Intel MPI).
    #[arg(long, value_name = "VAR", requires = "per_rank")]
    pub rank_env: Option<String>,
    /// A CUDA source file (`--backend sim`): coalprof compiles it for the simulator itself
    /// (CUDA 11.8, `-cudart shared -lineinfo -arch=sm_70`) and runs it with the arguments after `--`.
    #[arg(value_name = "FILE.cu")]
    pub source: Option<PathBuf>,
    /// An extra nvcc argument for FILE.cu (`--nvcc-arg=-Iinclude --nvcc-arg=-DN=4096`), repeatable.
    #[arg(long = "nvcc-arg", value_name = "ARG", allow_hyphen_values = true, requires = "source")]
    pub nvcc_args: Vec<String>,
    /// The program and its arguments, passed through verbatim (with FILE.cu: its arguments).
    #[arg(last = true, required_unless_present = "source", value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Run folders, results.json files, ncu CSVs or .ncu-rep reports.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Rules file (its `[[gate]]` entries replace those of metrics.toml).
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Baseline to compare `regress` rules against.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Print GitHub Actions annotations and append a summary to `$GITHUB_STEP_SUMMARY`.
    #[arg(long)]
    pub github: bool,
    /// Report only: exit 0 even when the gate fails (outputs unchanged).
    #[arg(long)]
    pub exit_zero: bool,
    /// Write the wasteful source lines of `.ncu-rep` inputs as SARIF 2.1.0 (GitHub code scanning).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct CompareArgs {
    /// Run folders, results.json files, ncu CSVs or .ncu-rep reports; the first is the
    /// reference. One run spread over several GPUs (`run --gpus`, `--slurm`) compares its GPUs.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// A column group's label, one per input (or per GPU of a spread run) in order (default:
    /// the GPU's name and architecture, or the backend, with the run's name where two would
    /// read the same).
    #[arg(long, value_name = "LABEL")]
    pub label: Vec<String>,
    /// The metrics the table and markdown show, comma-separated (default: the headline
    /// metrics; JSON and CSV carry every metric).
    #[arg(long, value_delimiter = ',', value_name = "M[,M…]")]
    pub metric: Vec<String>,
    /// How your kernels' rows are matched: `name` (the function name, inline namespaces such as
    /// `THRUST_…_NS` ignored, the same launch shape preferred: one program on two GPUs or at two
    /// sizes) or `shape` (name and exact grid and block).
    #[arg(long = "match", value_enum, default_value_t = MatchBy::Name)]
    pub match_by: MatchBy,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub(crate) enum BaselineCommand {
    /// Record runs into the baseline file (one section per GPU architecture, sorted, rounded).
    Update(BaselineUpdateArgs),
}

#[derive(Debug, Args)]
pub(crate) struct BaselineUpdateArgs {
    /// Run folders or results.json files.
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<PathBuf>,
    /// The baseline file.
    #[arg(long, default_value = "coalprof.baseline.json", value_name = "FILE")]
    pub baseline: PathBuf,
    /// Record only the metrics some `regress` rule compares (smaller diffs).
    #[arg(long)]
    pub only_gated: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ExprArgs {
    /// The element index each lane reads, e.g. `((block * block_size + offset) * n_kv_heads + h) * head_dim + t`.
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    pub expr: String,
    /// `name=VALUE` constants and `name=A..B` loop variables (each value of a loop variable is one warp instruction).
    #[arg(value_name = "NAME=VALUE")]
    pub bindings: Vec<String>,
    /// Bytes per element (1, 2, 4, 8 or 16).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub bytes: u32,
    /// The array is in shared memory: report wavefronts and bank conflicts.
    #[arg(long)]
    pub shared: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ReportArgs {
    /// A run folder or a results.json.
    #[arg(value_name = "RUN")]
    pub run: PathBuf,
}

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The folder of saved runs (`profiles/`).
    #[arg(value_name = "PROFILES_DIR")]
    pub dir: PathBuf,
    /// Only these metrics, comma-separated (default: the headline metrics; JSON and CSV carry
    /// every metric).
    #[arg(long, value_delimiter = ',', value_name = "M[,M…]")]
    pub metric: Vec<String>,
    /// Only rows whose key (`pattern/variant`) or kernel matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Only runs made on or after this UTC date (`YYYY-MM-DD`, or `YYYY-MM-DD HH:MM:SS`).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub patterns: PatternChoice,
    /// GPU architectures to build for, comma-separated (default: the GPU's, from nvidia-smi).
    #[arg(long, value_delimiter = ',', value_name = "sm_XX")]
    pub arch: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct LinesArgs {
    /// `.ncu-rep` reports made with the SourceCounters section (and kernels built with
    /// `-lineinfo`), or the run folders `profile --backend sim` and `triton --out` saved.
    #[arg(required = true, value_name = "REPORT")]
    pub reports: Vec<PathBuf>,
    /// Only kernels whose name matches this regex.
    #[arg(long, value_name = "REGEX")]
    pub kernel: Option<String>,
    /// Rows per kernel, worst first (0: all).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// One table per launch instead of launches of one kernel and shape summed.
    #[arg(long)]
    pub per_launch: bool,
    /// Rows per source line or per SASS instruction.
    #[arg(long, value_enum, default_value_t = By::Line)]
    pub by: By,
    /// The checkout the source paths are made relative to and read from (default: the current folder).
    #[arg(long, value_name = "DIR")]
    pub source_root: Option<PathBuf>,
    /// Also write the findings as SARIF 2.1.0 (GitHub code scanning) here.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct TritonArgs {
    /// The kernel: `FILE.py::KERNEL` (the file is read, never imported: it may `import torch`).
    #[arg(value_name = "FILE.py::KERNEL")]
    pub target: String,
    /// Programs along x[,y[,z]].
    #[arg(long, required = true, value_name = "X[,Y,Z]", value_delimiter = ',')]
    pub grid: Vec<u32>,
    /// A kernel argument: `NAME=f32[8192]` (a buffer: dtype and shape), `NAME=INTEGER`,
    /// `NAME=FLOAT`, or `NAME=@file.npy` (data that addresses depend on). Repeat per argument.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A `tl.constexpr` value: `BLOCK=1024`. Repeat per value.
    #[arg(long, value_name = "NAME=VALUE")]
    pub meta: Vec<String>,
    /// Warps per program (Triton's default: 4).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub num_warps: u32,
    /// Software pipelining stages (Triton's default: 3; loads a pipelined `tl.dot` loop issues
    /// as `cp.async` are reported as not modelled).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub num_stages: u32,
    /// The GPU architecture compiled for.
    #[arg(long, default_value = "sm_90", value_name = "sm_XX")]
    pub arch: String,
    /// Interpret N programs spread over the grid (each axis's last among them) and scale the
    /// totals; default: every program.
    #[arg(long, value_name = "N")]
    pub programs: Option<u64>,
    /// Rows per kernel, worst first (0: all).
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Rows per source line or per PTX instruction.
    #[arg(long, value_enum, default_value_t = By::Line)]
    pub by: By,
    /// Save a run folder here (`run.json`, `triton.json`) for `lines RUN` and `check RUN`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Also write the findings as SARIF 2.1.0 (GitHub code scanning) here.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    /// ncu CSV files, `.ncu-rep` reports (read natively: no ncu needed; see `--reader`), or `-` for stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// One row per launch instead of one per kernel and launch shape.
    #[arg(long)]
    pub per_launch: bool,
}

/// Write the completion script for `shell` (the one place besides parsing that needs clap's
/// view of the command line).
pub(crate) fn write_completions(shell: clap_complete::Shell, out: &mut dyn std::io::Write) {
    use clap::CommandFactory;
    clap_complete::generate(shell, &mut Cli::command(), "coalprof", out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
