//! The tool home: the one folder where `coalprof setup` installs what each backend needs, and
//! its layout. The checkout's `.tools/` (where the test command installs) has the same layout,
//! so one set of paths serves both.

use std::path::{Path, PathBuf};

/// A folder laid out as `coalprof setup` leaves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolHome {
    /// `$COALPROF_HOME`, else `$XDG_DATA_HOME/coalprof`, else `~/.local/share/coalprof`.
    pub root: PathBuf,
}

impl ToolHome {
    /// The user's tool home: `COALPROF_HOME`, else the platform's user data folder
    /// (`$XDG_DATA_HOME`, else `~/.local/share`) with `coalprof/` under it, as rustup and uv
    /// keep theirs. `None` only when neither variable nor `HOME` is set.
    pub fn resolve(
        coalprof_home: Option<PathBuf>,
        xdg_data_home: Option<PathBuf>,
        home: Option<PathBuf>,
    ) -> Option<ToolHome> {
        // XDG says a relative XDG_DATA_HOME is invalid and must be ignored.
        let data = xdg_data_home.filter(|p| p.is_absolute()).or_else(|| home.map(|h| h.join(".local/share")));
        coalprof_home.or_else(|| data.map(|d| d.join("coalprof"))).map(|root| ToolHome { root })
    }

    /// A folder with this layout (the checkout's `.tools/`).
    pub fn at(root: impl Into<PathBuf>) -> ToolHome {
        ToolHome { root: root.into() }
    }

    /// The virtual environment NVIDIA's PyPI wheels go into (nvcc, nvdisasm, cuobjdump, the
    /// runtime headers): a Python prefix, searched as [`cuda_bins_in_prefix`] describes.
    pub fn cuda_venv(&self) -> PathBuf {
        self.root.join("cuda")
    }

    /// The virtual environment `coalprof setup triton` puts `triton` and `numpy` into.
    pub fn triton_venv(&self) -> PathBuf {
        self.root.join("triton")
    }

    /// A stable link to the toolkit folder inside [`ToolHome::cuda_venv`] (`bin/nvcc`, `include/`).
    pub fn cuda_home(&self) -> PathBuf {
        self.root.join("cuda-home")
    }

    /// Where Debian's `nsight-compute-target` package is unpacked.
    pub fn ncu_root(&self) -> PathBuf {
        self.root.join("ncu")
    }

    /// The `ncu` executable (a link into [`ToolHome::ncu_root`]).
    pub fn ncu(&self) -> PathBuf {
        self.root.join("bin/ncu")
    }

    /// The CUDA 11.8 toolkit programs are built with for the simulator.
    pub fn cuda11(&self) -> PathBuf {
        self.root.join("cuda11")
    }

    /// GPGPU-Sim's install folder (`lib/libcudart.so`, `configs/`, `VERSION`).
    pub fn gpgpusim(&self) -> PathBuf {
        self.root.join("gpgpu-sim")
    }

    /// A CUDA toolkit program installed here: under the stable link, else in the venv.
    pub fn cuda_bin(&self, tool: &str) -> Vec<PathBuf> {
        let mut v = vec![self.cuda_home().join("bin").join(tool)];
        v.extend(cuda_bins_in_prefix(&self.cuda_venv()).into_iter().map(|d| d.join(tool)));
        v
    }
}

/// The `bin/` folders of NVIDIA's PyPI CUDA wheels installed in the Python environment at
/// `prefix`: `lib/python3*/site-packages/nvidia/cu*/bin` (the wheels of CUDA 12 and 13 put
/// their toolkit under `nvidia/cu12/` or `nvidia/cu13/`), newest first.
pub fn cuda_bins_in_prefix(prefix: &Path) -> Vec<PathBuf> {
    let children = |dir: &Path, prefix: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .map(|e| e.path())
            .collect();
        v.sort();
        v.reverse();
        v
    };
    children(&prefix.join("lib"), "python3")
        .into_iter()
        .flat_map(|py| children(&py.join("site-packages/nvidia"), "cu"))
        .map(|cu| cu.join("bin"))
        .filter(|bin| bin.is_dir())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalprof_home_wins_then_xdg_then_home() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(ToolHome::resolve(p("/t"), p("/x"), p("/h")).unwrap().root, PathBuf::from("/t"));
        assert_eq!(ToolHome::resolve(None, p("/x"), p("/h")).unwrap().root, PathBuf::from("/x/coalprof"));
        assert_eq!(ToolHome::resolve(None, None, p("/h")).unwrap().root, PathBuf::from("/h/.local/share/coalprof"));
        // A relative XDG_DATA_HOME is ignored, as the XDG spec requires.
        assert_eq!(ToolHome::resolve(None, p("rel"), p("/h")).unwrap().root, PathBuf::from("/h/.local/share/coalprof"));
        assert_eq!(ToolHome::resolve(None, None, None), None);
    }

    #[test]
    fn finds_the_wheels_bin_folders_newest_first() {
        let d = tempfile::tempdir().unwrap();
        for cu in ["cu12", "cu13"] {
            std::fs::create_dir_all(d.path().join(format!("lib/python3.12/site-packages/nvidia/{cu}/bin"))).unwrap();
        }
        // A wheel without a bin/ (cublas) is no place to look.
        std::fs::create_dir_all(d.path().join("lib/python3.12/site-packages/nvidia/cublas/lib")).unwrap();
        let bins = cuda_bins_in_prefix(d.path());
        assert_eq!(bins.len(), 2, "{bins:?}");
        assert!(bins[0].ends_with("cu13/bin"), "{bins:?}");
        assert!(cuda_bins_in_prefix(&d.path().join("nope")).is_empty());
    }
}
