//! Building the pattern executables: every `.cu` in parallel, each with nvcc, cached by the
//! source, the harness, the flags, the nvcc version and the architecture. The kernel sources
//! are built into coalprof, so it builds the same kernels wherever it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::error::{Error, Result};
use crate::patterns::Pattern;
use crate::tools::nvcc::{Nvcc, FLAGS};

/// The headers pattern sources include: the harness, and the strided copy that the coalesced,
/// offset and stride patterns share. Each is written beside the source when building.
const HEADERS: &[(&str, &str)] = &[
    ("common.cuh", include_str!("../../kernels/common.cuh")),
    ("strided.cuh", include_str!("../../kernels/strided.cuh")),
];

/// A pattern's `.cu` source, as built into this coalprof.
pub fn source(p: Pattern) -> &'static str {
    match p {
        Pattern::Coalesced => include_str!("../../kernels/coalesced.cu"),
        Pattern::Offset => include_str!("../../kernels/offset.cu"),
        Pattern::Stride => include_str!("../../kernels/stride.cu"),
        Pattern::Broadcast => include_str!("../../kernels/broadcast.cu"),
        Pattern::Gather => include_str!("../../kernels/gather.cu"),
        Pattern::Vector => include_str!("../../kernels/vector.cu"),
        Pattern::KvLayout => include_str!("../../kernels/kv_layout.cu"),
        Pattern::BankConflicts => include_str!("../../kernels/bank_conflicts.cu"),
        Pattern::Column => include_str!("../../kernels/column.cu"),
        Pattern::Reuse => include_str!("../../kernels/reuse.cu"),
    }
}

/// A built pattern executable.
#[derive(Debug, Clone)]
pub struct Built {
    /// The pattern it runs.
    pub pattern: Pattern,
    /// The executable, in the kernel cache.
    pub exe: PathBuf,
    /// Whether it came from the cache.
    pub cached: bool,
}

/// Build `patterns` for `arch` under `cache`, in parallel; already-built ones are reused.
pub fn build(patterns: &[Pattern], arch: &str, nvcc: &Nvcc, cache: &Path) -> Result<Vec<Built>> {
    build_with(patterns, arch, nvcc, cache, &[])
}

/// [`build`] with `extra` nvcc flags (part of the cache key): the simulator's executables.
pub fn build_with(
    patterns: &[Pattern],
    arch: &str,
    nvcc: &Nvcc,
    cache: &Path,
    extra: &'static [&'static str],
) -> Result<Vec<Built>> {
    let version = nvcc.version()?;
    let width = std::thread::available_parallelism().map_or(2, |n| n.get());
    let limit = Arc::new(Semaphore::new(width));
    let jobs: Vec<_> = patterns
        .iter()
        .map(|&p| {
            let (nvcc, arch, limit) = (nvcc.clone(), arch.to_string(), limit.clone());
            let dir = cache.join(&arch).join(format!("{}-{}", p.source_stem(), key(p, &arch, &version, extra)));
            crate::runtime::runtime().spawn(async move {
                let _permit = limit.acquire().await.expect("the semaphore is never closed");
                build_one(p, &arch, &nvcc, &dir, extra).await
            })
        })
        .collect();
    crate::runtime::runtime().block_on(async {
        let mut out = Vec::new();
        for j in jobs {
            out.push(j.await.map_err(|e| Error::Internal(format!("a build task failed: {e}")))??);
        }
        Ok(out)
    })
}

async fn build_one(p: Pattern, arch: &str, nvcc: &Nvcc, dir: &Path, extra: &[&str]) -> Result<Built> {
    let exe = dir.join(p.source_stem());
    if exe.is_file() {
        tracing::info!(pattern = %p, exe = %exe.display(), "cached");
        return Ok(Built { pattern: p, exe, cached: true });
    }
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(|e| Error::write(parent, e))?;
    let stage =
        tempfile::Builder::new().prefix(".building-").tempdir_in(parent).map_err(|e| Error::write(parent, e))?;
    let src = stage.path().join(format!("{}.cu", p.source_stem()));
    for (name, text) in HEADERS {
        std::fs::write(stage.path().join(name), text).map_err(|e| Error::write(stage.path(), e))?;
    }
    std::fs::write(&src, source(p)).map_err(|e| Error::write(&src, e))?;
    let out = stage.path().join(p.source_stem());
    tracing::info!(pattern = %p, arch, "compiling");
    nvcc.compile_with(&src, arch, &out, extra).await?;
    // Publish the finished folder in one rename, so a half-built one is never used.
    let staged = stage.keep();
    match std::fs::rename(&staged, dir) {
        Ok(()) => {}
        Err(_) if exe.is_file() => {
            let _ = std::fs::remove_dir_all(&staged); // another build won the race
        }
        Err(e) => return Err(Error::write(dir, e)),
    }
    Ok(Built { pattern: p, exe, cached: false })
}

/// The cache key: everything that changes the binary.
fn key(p: Pattern, arch: &str, nvcc_version: &str, extra: &[&str]) -> String {
    let mut h = Sha256::new();
    let headers = HEADERS.iter().map(|(_, text)| *text);
    let flags = FLAGS.iter().chain(extra).copied().collect::<Vec<_>>().join(" ");
    for part in std::iter::once(source(p)).chain(headers).chain([flags.as_str(), arch, nvcc_version]) {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Check an architecture name (`sm_90`) before it reaches nvcc.
pub fn parse_arch(s: &str) -> Result<String> {
    let digits = s.strip_prefix("sm_").filter(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric()));
    digits
        .map(|_| s.to_string())
        .ok_or_else(|| Error::usage(format!("`{s}` is not a GPU architecture (expected e.g. `sm_90`)")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_changes_with_every_input() {
        let a = key(Pattern::Stride, "sm_90", "13.0.88", &[]);
        assert_ne!(a, key(Pattern::Stride, "sm_80", "13.0.88", &[]));
        assert_ne!(a, key(Pattern::Stride, "sm_90", "13.1.0", &[]));
        assert_ne!(a, key(Pattern::Offset, "sm_90", "13.0.88", &[]));
        assert_eq!(a, key(Pattern::Stride, "sm_90", "13.0.88", &[]));
        assert_ne!(a, key(Pattern::Stride, "sm_90", "13.0.88", &["-cudart", "shared"]));
    }

    #[test]
    fn arch_names() {
        assert_eq!(parse_arch("sm_90").unwrap(), "sm_90");
        assert!(parse_arch("sm90").is_err());
        assert!(parse_arch("sm_9;0").is_err());
    }
}
