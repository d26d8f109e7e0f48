//! `ncu`: argument vectors for import, profiling and the metric catalogue, and the reading of
//! its output, whose exit status says less than its `==ERROR==` lines.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Captured, Cmd};
use super::ToolError;

/// A located ncu and the environment it needs.
#[derive(Debug, Clone)]
pub struct Ncu {
    pub path: PathBuf,
    /// ncu wants a writable HOME for its section files; the settings layer picks one.
    pub home: Option<PathBuf>,
}

impl Ncu {
    fn cmd(&self) -> Cmd {
        let mut c = Cmd::new(&self.path);
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
            return Err(ToolError::Failed { what, command: c.to_string(), status: status(&out), stderr: both(&out), hint });
        }
        Ok(out.stdout)
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

fn status(out: &Captured) -> String {
    match out.status.code() {
        Some(c) => format!("exit status: {c}"),
        None => "killed by a signal".into(),
    }
}

/// ncu prints its own errors on stdout; keep both streams for the error.
fn both(out: &Captured) -> String {
    let ncu_lines: Vec<&str> = out.stdout.lines().filter(|l| l.contains("==ERROR==") || l.contains("==WARNING==")).collect();
    let mut s = out.stderr.trim_end().to_string();
    for l in ncu_lines {
        s.push('\n');
        s.push_str(l);
    }
    s
}

fn failed(what: &str, c: &Cmd, out: &Captured) -> ToolError {
    ToolError::Failed { what: what.into(), command: c.to_string(), status: status(out), stderr: both(out), hint: None }
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
    fn query_metrics_rows() {
        let text = "Device gh100\n---- ----\nMetric Name  Metric Type  Metric Unit  Metric Description\ndram__bytes_read  Counter  byte  # of bytes read\n==PROF== Note that these metrics must be appended\n";
        assert_eq!(parse_query_metrics(text), ["dram__bytes_read"]);
    }
}
