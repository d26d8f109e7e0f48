//! `nvcc`: the version, and compiling one pattern's `.cu` into its executable.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run, run_sync, Cmd};
use super::ToolError;

/// Flags every kernel is built with: line info for ncu's source view, full optimisation,
/// warnings as errors (a kernel edit that warns does not land).
pub const FLAGS: &[&str] = &["-lineinfo", "-O3", "-Werror", "all-warnings"];

/// A located `nvcc`.
#[derive(Debug, Clone)]
pub struct Nvcc {
    /// The executable.
    pub path: PathBuf,
}

impl Nvcc {
    /// `Cuda compilation tools, release 13.0, V13.0.88` → `13.0.88` (the `V…` token).
    pub fn version(&self) -> Result<String, ToolError> {
        let c = Cmd::new(&self.path).arg("--version").timeout(Some(Duration::from_secs(60)));
        let out = run_sync(&c, None)?;
        out.stdout
            .split_whitespace()
            .rev()
            .find_map(|w| w.strip_prefix('V').filter(|v| v.starts_with(|c: char| c.is_ascii_digit())))
            .map(|v| v.trim_end_matches(',').to_string())
            .ok_or_else(|| ToolError::failed("nvcc --version printed no version", &c, &out))
    }

    /// The command that compiles `source` for `arch` into `output`.
    pub fn compile_cmd(&self, source: &Path, arch: &str, output: &Path) -> Cmd {
        self.compile_cmd_with(source, arch, output, &[])
    }

    /// [`Nvcc::compile_cmd`] with `extra` flags after [`FLAGS`] (the simulator's
    /// `-cudart shared -ccbin g++-11`).
    pub fn compile_cmd_with(&self, source: &Path, arch: &str, output: &Path, extra: &[&str]) -> Cmd {
        Cmd::new(&self.path)
            .arg(format!("-arch={arch}"))
            .args(FLAGS.iter().copied())
            .args(extra.iter().copied())
            .arg("-o")
            .arg(output)
            .arg(source)
            .timeout(Some(Duration::from_secs(600)))
    }

    /// Compile; a failure names the file and carries nvcc's diagnostics.
    pub async fn compile(&self, source: &Path, arch: &str, output: &Path) -> Result<(), ToolError> {
        self.compile_with(source, arch, output, &[]).await
    }

    /// [`Nvcc::compile`] with `extra` flags.
    pub async fn compile_with(
        &self,
        source: &Path,
        arch: &str,
        output: &Path,
        extra: &[&str],
    ) -> Result<(), ToolError> {
        let c = self.compile_cmd_with(source, arch, output, extra);
        let out = run(&c, None).await?;
        if out.status.success() {
            return Ok(());
        }
        let diagnostics = format!("{}{}", out.stdout, out.stderr);
        Err(ToolError::failed(format!("`{}` does not compile for {arch}", source.display()), &c, &out)
            .with_output(diagnostics))
    }
}
