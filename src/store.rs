//! A run's folder, `profiles/<run-id>/`: every file is written to a temporary name and renamed
//! into place, and the results are rewritten after each pattern (`engine`), so an interrupted
//! run keeps every pattern it finished, loadable by `coalprof report`. What the files say is
//! rendered above (`render::run_folder`); the store only writes bytes.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::names::safe_name;

/// An open run folder.
#[derive(Debug, Clone)]
pub struct RunDir {
    /// The folder.
    pub path: PathBuf,
}

impl RunDir {
    /// Create `base/<id>`; `id` defaults to the UTC time and the backend (`20261130-091500-ncu`),
    /// a new folder every time (`20261130-091500-ncu-2` for a second run in that second).
    pub fn create(base: &Path, id: Option<&str>, backend: &str) -> Result<RunDir> {
        if let Some(id) = id {
            let path = base.join(safe_name(id));
            std::fs::create_dir_all(&path).map_err(|e| Error::write(&path, e))?;
            return Ok(RunDir { path });
        }
        // Without an id every run gets a folder of its own, made by the one `create_dir` that
        // succeeds: runs started in the same second (a model run takes a tenth of one, and
        // scripts start them back to back) would otherwise share a folder, the second
        // overwriting the first's results. The later ones are numbered `-2`, `-3` ….
        std::fs::create_dir_all(base).map_err(|e| Error::write(base, e))?;
        let stamp = format!("{}-{backend}", timestamp());
        let mut n = 1;
        loop {
            let name = if n == 1 { stamp.clone() } else { format!("{stamp}-{n}") };
            let path = base.join(safe_name(&name));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(RunDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => n += 1,
                Err(e) => return Err(Error::write(&path, e)),
            }
        }
    }

    /// The path of `name` in the folder.
    pub fn file(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Write `name` atomically (temporary file in the same folder, then rename).
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        write_atomic(&self.file(name), bytes)?;
        Ok(self.file(name))
    }

    /// Rewrite the folder's rendered files (`render::run_folder`: `results.json`, the plots,
    /// `results.md`, `report.html`) with everything finished so far, each atomically, in the
    /// order given (the plots before the markdown that links them).
    pub fn save(&self, files: &[(String, String)]) -> Result<()> {
        for (name, text) in files {
            self.write(name, text.as_bytes())?;
        }
        Ok(())
    }
}

/// Where run folders go: `--out`, else the checkout's `profiles/`, else `./profiles`.
pub(crate) fn runs_base(out: Option<&Path>, project: Option<&Path>) -> PathBuf {
    out.map(Path::to_path_buf)
        .or_else(|| project.map(|p| p.join("profiles")))
        .unwrap_or_else(|| PathBuf::from("profiles"))
}

/// Write an output a flag names (`--sarif`, `--junit`, `baseline update`): its folder created
/// when missing, the file replaced atomically like every file of a run folder.
pub fn write_output(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e))?;
    }
    write_atomic(path, bytes)
}

/// Write `path` so that a reader sees the old content or the new, never half of it. The rename
/// is what makes it atomic; the data is not flushed to the disk first (`fsync`): that guards
/// only against a power cut, and a run rewrites its results after every pattern, waiting on the
/// disk each time (docs/performance.md, "Model").
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir).map_err(|e| Error::write(path, e))?;
    tmp.write_all(bytes).map_err(|e| Error::write(path, e))?;
    tmp.persist(path).map_err(|e| Error::write(path, e.error))?;
    Ok(())
}

/// `YYYYMMDD-HHMMSS` in UTC, from the system clock (no date crate for one format).
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}{m:02}{d:02}-{:02}{:02}{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC: when a saved run was made, for `history`.
pub(crate) fn utc(t: std::time::SystemTime) -> String {
    let secs = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// Howard Hinnant's days-to-civil algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_without_an_id_never_share_a_folder_and_an_id_is_kept() {
        let base = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..3).map(|_| RunDir::create(base.path(), None, "model").unwrap().path).collect();
        let names: std::collections::BTreeSet<_> = dirs.iter().map(|d| d.file_name().unwrap().to_owned()).collect();
        assert_eq!(names.len(), 3, "{dirs:?}");
        assert!(dirs.iter().all(|d| d.is_dir() && d.file_name().unwrap().to_string_lossy().contains("-model")));
        let a = RunDir::create(base.path(), Some("mine"), "model").unwrap().path;
        assert_eq!(a, RunDir::create(base.path(), Some("mine"), "model").unwrap().path, "an id names its folder");
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_787), (2026, 11, 30));
    }

    #[test]
    fn atomic_write_replaces_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "no temporary file is left");
    }
}
