//! Triton's compiler and interpreter, through coalprof's Triton counter (`python/coalprof/_triton.py`,
//! embedded here and written into the cache): the Python that has `triton` and `numpy`, found
//! in the one discovery order ([`super::locate::ToolSearch::python`]), runs it with the request
//! as JSON and prints the counts as JSON. The counter's own failures (a syntax error, a missing
//! kernel or `--arg`, an access out of bounds) are one `error:` line and exit 2 or 3, passed on
//! as they are; anything else is the tool's failure.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::process::{run_sync, Cmd};
use super::ToolError;
use crate::error::{Error, Result};

/// The counter's source, carried by the binary so a `cargo install`ed coalprof has it too.
pub const COUNTER: &str = include_str!("../../python/coalprof/_triton.py");

/// The Triton versions `tests/it/triton.rs` passes on (docs/guide/triton.md lists them too;
/// `coalprof setup triton` installs the newest).
pub const SUPPORTED: &[&str] = &["3.6.0", "3.9.0"];

/// A Python with `triton` and `numpy` importable.
#[derive(Debug, Clone)]
pub struct Triton {
    /// The interpreter.
    pub python: PathBuf,
}

impl Triton {
    /// The `python` given, if `triton` and `numpy` import there (asked without importing them:
    /// `find_spec` takes milliseconds, `import triton` a second).
    pub fn check(python: &Path) -> std::result::Result<Triton, ToolError> {
        let probe =
            "import importlib.util as u,sys; sys.exit(0 if u.find_spec('triton') and u.find_spec('numpy') else 7)";
        let cmd = Cmd::new(python).args(["-c", probe]).timeout(Some(Duration::from_secs(60)));
        let out = run_sync(&cmd, None)?;
        if out.status.success() {
            Ok(Triton { python: python.to_path_buf() })
        } else {
            Err(ToolError::failed(format!("`{}` has no `triton` or `numpy`", python.display()), &cmd, &out)
                .with_hint("install them there (`python -m pip install triton numpy`; torch is not needed)"))
        }
    }

    /// The installed Triton's version (for `doctor`).
    pub fn version(&self) -> Option<String> {
        let cmd = Cmd::new(&self.python)
            .args(["-c", "from importlib.metadata import version; print(version('triton'))"])
            .timeout(Some(Duration::from_secs(60)));
        let out = run_sync(&cmd, None).ok()?;
        out.status.success().then(|| out.stdout.trim().to_string())
    }

    /// Run the counter (written under `cache` first) on `request` (JSON) about `file`: its JSON
    /// document, or the counter's one `error:` line as a usage (exit 2) or input (exit 3) error.
    pub fn run(&self, cache: &Path, file: &Path, request: &str) -> Result<String> {
        let script = counter_file(cache)?;
        let cmd = Cmd::new(&self.python).arg(&script).arg(request).env("PYTHONDONTWRITEBYTECODE", "1");
        let out = run_sync(&cmd, None)?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let said = out.stderr.lines().rev().find_map(|l| l.strip_prefix("error: ")).map(str::to_string);
        match (out.status.code(), said) {
            (Some(2), Some(m)) => Err(Error::usage(m)),
            (Some(3), Some(m)) => Err(Error::input(file, m)),
            (Some(130), _) => Err(Error::Interrupted),
            _ => Err(ToolError::failed("coalprof's Triton counter failed", &cmd, &out).into()),
        }
    }
}

/// The counter's file in the cache, named by a hash of its text (written once per version).
fn counter_file(cache: &Path) -> Result<PathBuf> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    COUNTER.hash(&mut h);
    let path = cache.join("triton").join(format!("counter-{:016x}.py", h.finish()));
    if !path.is_file() {
        // Written beside and renamed, so a concurrent run never runs half a file.
        let dir = path.parent().unwrap_or(cache);
        let tmp = dir.join(format!(".counter-{}.tmp", std::process::id()));
        std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&tmp, COUNTER))
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| Error::write(&path, e))?;
    }
    Ok(path)
}
