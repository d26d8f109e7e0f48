//! `ncu`: argument vectors for import, profiling and the metric catalogue, and the reading of
//! its output, whose exit status says less than its `==ERROR==` lines.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;

use super::process::{run_sync, Captured, Cmd};
use super::ToolError;

/// How patterns are profiled, as the settings resolved it (ncu's own defaults unless asked
/// otherwise): what `measure/` runs ncu, the timing run and GPGPU-Sim with.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ProfilerSettings {
    pub cache_control: String,
    pub clock_control: String,
    /// Per process: a kernel that hangs is killed with its process group after this.
    pub timeout: Duration,
    pub warmup: u32,
    pub repeats: u32,
    /// `--backend sim`: GPGPU-Sim's functional or timing mode.
    pub sim_mode: super::gpgpusim::SimMode,
}

/// One profiling run: what to collect, from which program, into which report.
#[derive(Debug, Clone)]
pub struct ProfileRequest {
    /// Comma-separated metric names for `--metrics`.
    pub metrics: String,
    /// `all` (ncu's default: flush caches before every pass) or `none`.
    pub cache_control: String,
    /// `base` (ncu's default: lock clocks to base), `none` or `reset`.
    pub clock_control: String,
    /// Only kernels whose (function) name matches this regex.
    pub kernel_regex: Option<String>,
    /// `--launch-skip`: launches to skip before profiling.
    pub launch_skip: Option<u64>,
    /// `--launch-count`: launches to profile.
    pub launch_count: Option<u64>,
    /// The `.ncu-rep` to write.
    pub export: PathBuf,
    /// A launcher ncu runs under (`srun -n 4`), one ncu per rank; empty for none.
    pub launcher: Vec<OsString>,
    /// The program to profile.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// How long ncu may run.
    pub timeout: Option<Duration>,
    /// Also collect the SourceCounters section (per-instruction counters, the kernel's cubin)
    /// and embed the CUDA sources (`--import-source yes`): what `coalprof lines` reads.
    pub source_counters: bool,
    /// Extra environment for ncu and the program (`CUDA_VISIBLE_DEVICES`, `TMPDIR` under
    /// `run --gpus`).
    pub env: Vec<(OsString, OsString)>,
}

/// What a successful profiling run reported besides the report file.
#[derive(Debug, Clone, Default)]
pub struct Profiled {
    /// `(kernel, passes)` per profiled launch, in order, from the `==PROF== Profiling` lines.
    pub passes: Vec<(String, u32)>,
    /// `==WARNING==` lines.
    pub warnings: Vec<String>,
}

/// A located ncu and the environment it needs.
#[derive(Debug, Clone)]
pub struct Ncu {
    /// The executable.
    pub path: PathBuf,
    /// ncu wants a writable HOME for its section files; the settings layer picks one.
    pub home: Option<PathBuf>,
}

impl Ncu {
    fn cmd(&self) -> Cmd {
        self.under(&[])
    }

    /// ncu under `launcher` (`srun -n 4 ncu …`), or ncu itself when it is empty.
    fn under(&self, launcher: &[OsString]) -> Cmd {
        let mut c = match launcher.split_first() {
            Some((first, rest)) => Cmd::new(first).args(rest.iter().cloned()).arg(&self.path),
            None => Cmd::new(&self.path),
        };
        if let Some(h) = &self.home {
            c = c.env("HOME", h);
        }
        c
    }

    /// `ncu --version`'s version number (`2022.3.0.0`).
    pub fn version(&self) -> Result<String, ToolError> {
        let c = self.cmd().arg("--version").timeout(Some(Duration::from_secs(60)));
        let out = run_sync(&c, None)?;
        parse_version(&out.stdout).ok_or_else(|| failed("ncu --version printed no version", &c, &out))
    }

    /// Render an existing report as the raw page in base units (works without a GPU).
    pub fn import_raw(&self, report: &Path) -> Result<String, ToolError> {
        let c = self
            .cmd()
            .args(["--import".as_ref(), report.as_os_str()])
            .args(["--csv", "--page", "raw", "--print-units", "base"])
            .timeout(Some(Duration::from_secs(600)));
        let out = run_sync(&c, None)?;
        if !out.status.success() || out.stdout.trim().is_empty() {
            let mut what = format!("ncu could not import `{}`", report.display());
            let mut hint = None;
            if out.stderr.contains("Can't parse message") || out.stdout.contains("Failed to load report") {
                what.push_str(": the report is probably newer than this ncu");
                hint = Some(format!(
                    "this is ncu {}; import the report with the ncu version that wrote it (or newer)",
                    self.version().unwrap_or_else(|_| "of unknown version".into())
                ));
            }
            let e = ToolError::failed(what, &c, &out).with_output(both(&out));
            return Err(match hint {
                Some(h) => e.with_hint(h),
                None => e,
            });
        }
        Ok(out.stdout)
    }

    /// Profile a program into a report. ncu's exit status says less than its output, so the
    /// output is classified: no driver or GPU and forbidden counters are [`ToolError::NoProfiler`],
    /// nothing profiled is [`ToolError::NoKernels`], a failing program is [`ToolError::Failed`].
    pub fn profile(&self, r: &ProfileRequest, on_line: &mut (dyn FnMut(&str) + Send)) -> Result<Profiled, ToolError> {
        let mut c = self
            .under(&r.launcher)
            .args(["--metrics", &r.metrics, "--cache-control", &r.cache_control, "--clock-control", &r.clock_control])
            .args(["--export".as_ref(), r.export.as_os_str()])
            .arg("--force-overwrite");
        if r.source_counters {
            c = c.args(["--section", "SourceCounters", "--import-source", "yes"]);
        }
        if let Some(k) = &r.kernel_regex {
            c = c.args(["--kernel-name-base", "function", "--kernel-name"]).arg(format!("regex:{k}"));
        }
        if let Some(n) = r.launch_skip {
            c = c.args(["--launch-skip".to_string(), n.to_string()]);
        }
        if let Some(n) = r.launch_count {
            c = c.args(["--launch-count".to_string(), n.to_string()]);
        }
        // The program and its arguments pass through verbatim, after nothing ncu could parse.
        c = c.arg(&r.program).args(r.args.iter().cloned()).timeout(r.timeout);
        for (k, v) in &r.env {
            c = c.env(k, v);
        }
        let out = super::process::run_sync(&c, Some(on_line))?;
        classify(&c, &out, r)
    }

    /// Whether this ncu ships section `id` (`SourceCounters`): its section files lie in
    /// `sections/` beside the binary or up to three folders above it
    /// (`nsight-compute/target/<platform>/ncu`), or in an `nsight-compute*/sections` there (the
    /// CUDA toolkit's `bin/ncu` wrapper). Asking for a section ncu lacks would fail the run.
    pub fn has_section(&self, id: &str) -> bool {
        let file = format!("{id}.section");
        let real = self.path.canonicalize().unwrap_or_else(|_| self.path.clone());
        real.ancestors().skip(1).take(4).any(|dir| {
            dir.join("sections").join(&file).is_file()
                || std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| {
                    e.file_name().to_string_lossy().starts_with("nsight-compute")
                        && e.path().join("sections").join(&file).is_file()
                })
        })
    }

    /// `ncu --query-metrics --chip CHIP`: the base names of the metric catalogue.
    pub fn query_metrics(&self, chip: &str) -> Result<Vec<String>, ToolError> {
        let c = self.cmd().args(["--query-metrics", "--chip", chip]).timeout(Some(Duration::from_secs(120)));
        let out = run_sync(&c, None)?;
        if !out.status.success() {
            return Err(failed(&format!("ncu could not list the metrics of chip `{chip}`"), &c, &out));
        }
        Ok(parse_query_metrics(&out.stdout))
    }
}

/// Turn what a profiling run printed into its outcome.
fn classify(c: &Cmd, out: &Captured, r: &ProfileRequest) -> Result<Profiled, ToolError> {
    let all = format!("{}\n{}", out.stdout, out.stderr);
    if all.contains("ERR_NVGPUCTRPERM") {
        return Err(ToolError::NoProfiler {
            message: "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM)".into(),
            hint:
                "run as root, or allow profiling for all users (driver option NVreg_RestrictProfilingToAdminUsers=0); \
                   see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
                    .into(),
        });
    }
    const NO_DRIVER: &[&str] = &[
        "failed to connect to the CUDA driver",
        "CUDA driver version is insufficient",
        "cudaErrorInsufficientDriver",
        "cudaErrorNoDevice",
        "no CUDA-capable device",
    ];
    if NO_DRIVER.iter().any(|n| all.contains(n)) {
        return Err(ToolError::NoProfiler {
            message: "no GPU or NVIDIA driver found: ncu could not connect to the CUDA driver".into(),
            hint: "profile on a machine with an NVIDIA GPU and driver; anywhere, `--backend model` predicts the same metrics".into(),
        });
    }
    let app_error = all.lines().find_map(|l| l.split("The application returned an error code").nth(1)).map(str::trim);
    if !out.status.success() || app_error.is_some() {
        let what = match app_error {
            Some(code) => format!(
                "`{}` failed under ncu (it returned the error code {})",
                r.program.display(),
                code.trim_end_matches('.').trim_matches(|c| c == '(' || c == ')')
            ),
            None => "ncu failed".to_string(),
        };
        return Err(failed(&what, c, out));
    }
    if all.contains("No kernels were profiled") {
        let filter = r.kernel_regex.as_deref().map_or("no kernel filter".to_string(), |k| format!("the filter `{k}`"));
        return Err(ToolError::NoKernels {
            message: format!("ncu profiled no kernels ({filter})"),
            hint: "check the kernel filter (`--kernel`, matched against the function name) and the launch skip/count"
                .into(),
        });
    }
    let warnings =
        out.stdout.lines().filter_map(|l| l.split_once("==WARNING==").map(|(_, w)| w.trim().to_string())).collect();
    Ok(Profiled { passes: parse_passes(&out.stdout), warnings })
}

/// `==PROF== Profiling "k" - 0: 0%....50%....100% - 6 passes` (also `- 0 (1/3):`, no ID,
/// and `- 1 pass`), possibly after application text on the same line.
pub fn parse_pass_line(line: &str) -> Option<(String, u32)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r#"==PROF== Profiling "([^"]*)".*?- (\d+) pass(?:es)?\s*$"#).expect("the pattern is valid")
    });
    let c = re.captures(line)?;
    Some((c[1].to_string(), c[2].parse().ok()?))
}

fn parse_passes(stdout: &str) -> Vec<(String, u32)> {
    stdout.lines().filter_map(parse_pass_line).collect()
}

/// The kernel a progress line starts profiling (`==PROF== Profiling "k" - 3: 0%`).
pub fn profiling_started(line: &str) -> Option<&str> {
    let rest = line.split_once("==PROF== Profiling \"")?.1;
    rest.split_once('"').map(|(name, _)| name)
}

/// ncu prints its own errors on stdout; keep both streams for the error.
fn both(out: &Captured) -> String {
    let ncu_lines: Vec<&str> =
        out.stdout.lines().filter(|l| l.contains("==ERROR==") || l.contains("==WARNING==")).collect();
    let mut s = out.stderr.trim_end().to_string();
    for l in ncu_lines {
        s.push('\n');
        s.push_str(l);
    }
    s
}

fn failed(what: &str, c: &Cmd, out: &Captured) -> ToolError {
    ToolError::failed(what, c, out).with_output(both(out))
}

/// `Version 2022.3.0.0 (build 31729285) (public-release)` → `2022.3.0.0`.
pub fn parse_version(text: &str) -> Option<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Version "))
        .filter_map(|rest| rest.split_whitespace().next())
        .next()
        .map(str::to_string)
}

/// Rows of the `--query-metrics` table: the first word of each line after the header ruler.
pub fn parse_query_metrics(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains("__") && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// The base name and suffix of `l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`.
pub fn split_suffix(metric: &str) -> (&str, Option<&str>) {
    match metric.split_once('.') {
        Some((b, s)) => (b, Some(s)),
        None => (metric, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_line() {
        assert_eq!(parse_version("NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2022.3.0.0 (build 31729285) (public-release)\n").as_deref(), Some("2022.3.0.0"));
        assert_eq!(parse_version("nothing"), None);
    }

    #[test]
    fn pass_lines_of_every_era() {
        let lines = [
            (
                r#"==PROF== Profiling "smem_cuda_transpose" - 0: 0%....50%....100% - 6 passes"#,
                Some(("smem_cuda_transpose", 6)),
            ),
            (
                r#"==PROF== Profiling "kernel_phase1_global" - 0: 0%....50%....100% - 1 pass"#,
                Some(("kernel_phase1_global", 1)),
            ),
            (r#"==PROF== Profiling "sgemm_naive_dmalt": 0%....50%....100% - 8 passes"#, Some(("sgemm_naive_dmalt", 8))),
            (r#"==PROF== Profiling "fused" - 0 (1/1): 0%....50%....100% - 9 passes"#, Some(("fused", 9))),
            (r#"  [4/4] S. cerevisiae ==PROF== Profiling "k" - 0: 0%....100% - 3 passes"#, Some(("k", 3))),
            (r#"==PROF== Profiling "vadd" - 1: 0%....50%....100%A[0] = 0.84"#, None),
        ];
        for (line, want) in lines {
            assert_eq!(parse_pass_line(line), want.map(|(k, p)| (k.to_string(), p)), "{line}");
        }
        assert_eq!(profiling_started(r#"==PROF== Profiling "k" - 3: 0%"#), Some("k"));
    }

    #[test]
    fn query_metrics_rows() {
        let text = "Device gh100\n---- ----\nMetric Name  Metric Type  Metric Unit  Metric Description\ndram__bytes_read  Counter  byte  # of bytes read\n==PROF== Note that these metrics must be appended\n";
        assert_eq!(parse_query_metrics(text), ["dram__bytes_read"]);
    }
}
