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
        self.command(source, arch, output, FLAGS.iter().chain(extra).copied())
    }

    /// `nvcc -arch=ARCH FLAGS… -o OUTPUT SOURCE`, with exactly `flags`.
    fn command<'a>(&self, source: &Path, arch: &str, output: &Path, flags: impl IntoIterator<Item = &'a str>) -> Cmd {
        Cmd::new(&self.path)
            .arg(format!("-arch={arch}"))
            .args(flags)
            .arg("-o")
            .arg(output)
            .arg(source)
            .timeout(Some(Duration::from_secs(600)))
    }

    /// Compile a user's own source (`profile --backend sim FILE.cu`): line info and
    /// optimisation as for the patterns, but no `-Werror` (their code, not ours), then `extra`
    /// (the simulator's runtime flags, the user's `-I`/`-D`). `what` ends the failure's first
    /// line (`for the simulator`).
    pub fn compile_source(
        &self,
        source: &Path,
        arch: &str,
        output: &Path,
        extra: &[&str],
        what: &str,
    ) -> Result<(), ToolError> {
        refuse_shell_words(source, output, extra)?;
        let c = self.command(source, arch, output, ["-lineinfo", "-O3"].into_iter().chain(extra.iter().copied()));
        checked(&c, &run_sync(&c, None)?, &format!("`{}` does not compile {what}", source.display()))
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
        refuse_shell_words(source, output, extra)?;
        let c = self.compile_cmd_with(source, arch, output, extra);
        checked(&c, &run(&c, None).await?, &format!("`{}` does not compile for {arch}", source.display()))
    }
}

/// What nvcc would misread. It runs its compilation steps through `sh -c` with every file
/// name and flag inside double quotes, where `$`, `` ` ``, `"` and `\\` keep a meaning: a source
/// named `x$(touch P).cu` runs `touch P`. A comma in a file name splits fatbinary's
/// `key=value` lists. So such a word is refused before nvcc starts, never quoted around.
fn refuse_shell_words(source: &Path, output: &Path, flags: &[&str]) -> Result<(), ToolError> {
    const IN_QUOTES: &[char] = &['$', '`', '"', '\\'];
    let word_is_bad =
        |w: &str, in_name: bool| w.chars().any(|c| IN_QUOTES.contains(&c) || c.is_control() || (in_name && c == ','));
    let files = [source, output].into_iter().map(|p| (p.to_string_lossy(), true));
    let flags = flags.iter().map(|f| (std::borrow::Cow::Borrowed(*f), false));
    match files.chain(flags).find(|(w, in_name)| word_is_bad(w, *in_name)) {
        None => Ok(()),
        Some((word, _)) => Err(ToolError::Refused {
            message: format!(
                "nvcc cannot be given `{}`: it passes file names and flags through a shell, where {} would be read as shell syntax",
                word,
                "`$`, a backquote, `\"` or `\\`",
            ),
            hint: "rename the file (or its folder), or drop the character from the flag; a comma cannot be in a file name either".into(),
        }),
    }
}

/// A compile that failed is `what`, with nvcc's diagnostics (it prints them on stdout too).
fn checked(c: &Cmd, out: &super::process::Captured, what: &str) -> Result<(), ToolError> {
    if out.status.success() {
        return Ok(());
    }
    Err(ToolError::failed(what, c, out).with_output(format!("{}{}", out.stdout, out.stderr)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_a_shell_would_read_are_refused_before_nvcc_runs() {
        let ok = Path::new("dir with space/it's (v2)+.cu");
        let out = Path::new("/tmp/out");
        assert!(refuse_shell_words(ok, out, &["-DN=4", "-I/opt/x y"]).is_ok());
        for bad in ["x$(touch P).cu", "a`id`.cu", "a\"b.cu", "a\\b.cu", "a,b.cu", "a\nb.cu"] {
            let e = refuse_shell_words(Path::new(bad), out, &[]).expect_err(bad);
            assert!(matches!(e, ToolError::Refused { .. }), "{bad}: {e}");
            assert_eq!(e.exit(), crate::exit::Exit::Input);
        }
        assert!(refuse_shell_words(ok, out, &["-DX=$(id)"]).is_err(), "a flag too");
        assert!(refuse_shell_words(ok, out, &["-DLIST=a,b"]).is_ok(), "a comma is fine in a flag");
    }
}
