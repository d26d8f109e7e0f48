//! The staging machinery of `coalprof setup`: a step builds its result in a hidden temporary
//! folder inside the tool home and renames it into place only when it is complete, so a folder
//! that exists under its real name is one that works. A step that fails, or is interrupted,
//! drops its stage, and the stage removes itself: nothing half-built is left under a name that
//! discovery looks at.

use std::path::{Path, PathBuf};

use super::SetupError;

/// The prefix of every staging folder (`.setup-cuda-a1B2c3`): hidden, and never a name the
/// tool home's layout uses.
pub(crate) const PREFIX: &str = ".setup-";

/// A temporary folder in the tool home (the same file system as the result, so the final
/// rename is atomic), removed with everything left in it when dropped.
#[derive(Debug)]
pub(crate) struct Stage {
    dir: tempfile::TempDir,
}

impl Stage {
    /// A new staging folder for `name` in `home` (created if it does not exist yet).
    pub(crate) fn new(home: &Path, name: &str) -> Result<Stage, SetupError> {
        std::fs::create_dir_all(home).map_err(|e| SetupError::io(home, e))?;
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{name}-"))
            .tempdir_in(home)
            .map_err(|e| SetupError::io(home, e))?;
        Ok(Stage { dir })
    }

    /// The staging folder.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `rel` inside the staging folder.
    pub(crate) fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Put `rel` (a folder, file or link built in the stage) at `dest`, replacing whatever is
    /// there, then remove the stage. What `dest` held is moved into the stage first (a rename,
    /// never a copy) and put back if the second rename fails, so `dest` is at every moment
    /// either the old result or the new one.
    pub(crate) fn commit(self, rel: impl AsRef<Path>, dest: &Path) -> Result<(), SetupError> {
        let built = self.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| SetupError::io(parent, e))?;
        }
        let old = self.join(".replaced");
        let had_old = exists_or_link(dest);
        if had_old {
            std::fs::rename(dest, &old).map_err(|e| SetupError::io(dest, e))?;
        }
        if let Err(e) = std::fs::rename(&built, dest) {
            if had_old {
                let _ = std::fs::rename(&old, dest);
            }
            return Err(SetupError::io(dest, e));
        }
        Ok(())
    }
}

/// Make `link` a symbolic link to `target` (replacing a file, link or folder there), through a
/// stage in `home` so the link appears whole or not at all.
pub(crate) fn link(home: &Path, target: &Path, link: &Path) -> Result<(), SetupError> {
    let stage = Stage::new(home, "link")?;
    std::os::unix::fs::symlink(target, stage.join("link")).map_err(|e| SetupError::io(link, e))?;
    stage.commit("link", link)
}

/// Whether something (even a dangling link) is at `p`.
pub(crate) fn exists_or_link(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// The staging folders an earlier setup left when it was killed outright (SIGKILL, a power
/// cut): they never look installed, but they take space; setup names them.
pub(crate) fn leftovers(home: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(home)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    /// A step that fails half-way (returns its error before `commit`) leaves nothing in the home.
    #[test]
    fn a_step_that_fails_leaves_nothing() {
        let home = tempfile::tempdir().unwrap();
        let step = || -> Result<(), SetupError> {
            let stage = Stage::new(home.path(), "gpgpu-sim")?;
            std::fs::create_dir_all(stage.join("gpgpu-sim/lib")).unwrap();
            std::fs::write(stage.join("gpgpu-sim/lib/libcudart.so"), "half").unwrap();
            Err(SetupError::Cannot { message: "make failed".into(), hint: None })
        };
        assert!(step().is_err());
        assert_eq!(listing(home.path()), Vec::<String>::new(), "the stage is gone, no gpgpu-sim appeared");
    }

    #[test]
    fn a_step_that_succeeds_renames_into_place_and_removes_its_stage() {
        let home = tempfile::tempdir().unwrap();
        let stage = Stage::new(home.path(), "ncu").unwrap();
        assert!(stage.path().file_name().unwrap().to_string_lossy().starts_with(".setup-ncu-"));
        std::fs::create_dir_all(stage.join("ncu/root")).unwrap();
        std::fs::write(stage.join("ncu/root/ncu"), "new").unwrap();
        stage.commit("ncu", &home.path().join("ncu")).unwrap();
        assert_eq!(listing(home.path()), ["ncu"]);
        assert_eq!(std::fs::read_to_string(home.path().join("ncu/root/ncu")).unwrap(), "new");
    }

    #[test]
    fn commit_replaces_a_folder_or_a_link_and_link_is_whole() {
        let home = tempfile::tempdir().unwrap();
        let dest = home.path().join("cuda11");
        std::fs::create_dir_all(dest.join("bin")).unwrap();
        std::fs::write(dest.join("bin/old"), "old").unwrap();
        let stage = Stage::new(home.path(), "cuda11").unwrap();
        std::fs::create_dir_all(stage.join("cuda11/bin")).unwrap();
        std::fs::write(stage.join("cuda11/bin/nvcc"), "new").unwrap();
        stage.commit("cuda11", &dest).unwrap();
        assert_eq!(listing(&dest.join("bin")), ["nvcc"], "the old folder is replaced, not merged");
        // A folder replaced by a link, and a link by another link.
        let elsewhere = home.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        link(home.path(), &elsewhere, &dest).unwrap();
        assert_eq!(std::fs::read_link(&dest).unwrap(), elsewhere);
        link(home.path(), Path::new("relative/target"), &dest).unwrap();
        assert_eq!(std::fs::read_link(&dest).unwrap(), Path::new("relative/target"));
        assert_eq!(listing(home.path()), ["cuda11", "elsewhere"]);
        assert!(leftovers(home.path()).is_empty());
    }

    #[test]
    fn leftovers_are_the_staging_folders_only() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".setup-sim-x1")).unwrap();
        std::fs::create_dir(home.path().join("cuda")).unwrap();
        let stage = Stage::new(home.path(), "cuda").unwrap();
        let mut want = vec![home.path().join(".setup-sim-x1"), stage.path().to_path_buf()];
        want.sort();
        assert_eq!(leftovers(home.path()), want);
    }
}
