//! `coalprof setup sim`: what `--backend sim` needs. Three steps: GPGPU-Sim's build
//! dependencies (Debian packages, installed with apt-get only as root); the CUDA 11.8 toolkit
//! from Debian bookworm non-free, assembled as one self-contained folder `<home>/cuda11` with
//! its own `bin/nvcc.profile` (or a link to `CUDA11_HOME`); and GPGPU-Sim built from its pinned
//! source with the project's patches (`scripts/sim-patches/`, embedded in the binary by
//! `build.rs`) into `<home>/gpgpu-sim`, with a `STAMP` (source and patches) so a changed
//! patch or source rebuilds it.
//!
//! The source, in order: `COALPROF_GPGPUSIM_SRC` (an archive or a folder, used as given); in
//! coalprof's checkout the vendored `git archive` checked against its `SHA256SUMS`; else the
//! pinned commit downloaded from GitHub, accepted only if its files are the pinned commit's
//! ([`PINNED_TREE`]; GitHub's tarball is not byte-equal to the vendored archive, so its bytes
//! cannot be pinned from a machine that cannot download it).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::debian::{self, Apt};
use super::stage::{self, Stage};
use super::{apt_install, need, program, run, Component, Report, Request, SetupError, Step};
use crate::tools::gpgpusim::CXX_LIBRARIES;
use crate::tools::home::ToolHome;
use crate::tools::process::{self, Cmd};

/// The commit of accel-sim/gpgpu-sim_distribution (branch `dev`, 2024-10-07) coalprof's
/// patches and tests are made for.
pub(crate) const COMMIT: &str = "667834cfe5214523edd7769aeab77f91b7137686";

/// GitHub's archive of [`COMMIT`] (one top-level folder, `gpgpu-sim_distribution-<commit>/`).
pub(crate) const UPSTREAM_URL: &str =
    "https://codeload.github.com/accel-sim/gpgpu-sim_distribution/tar.gz/667834cfe5214523edd7769aeab77f91b7137686";

/// sha256 of the vendored `git archive` of [`COMMIT`] (`../shared/vendor/gpgpu-sim/`, no
/// top-level folder): the only archive of it whose bytes were checked here.
pub(crate) const PINNED_ARCHIVE_SHA256: &str = "ce89934a0eca3b54c977da967168b63b24d4da316f47c825c967f3dad8693dc1";

/// [`tree_digest`] of [`COMMIT`]'s files, computed from the vendored archive (and by an
/// independent script, see the README): any archive of the commit unpacks to it, whatever its
/// compression or top-level folder, so it checks GitHub's tarball.
pub(crate) const PINNED_TREE: &str = "813e00666bd4395a6119e5290d348c01d57f9ef30d8567d61d84b623c225a47d";

/// What GPGPU-Sim's build needs from Debian (bison and flex for the PTX parser, the X and GL
/// headers its build links against, g++-11 for programs built for it with CUDA 11.8, and the
/// compiler, make and patch themselves).
pub(crate) const BUILD_DEPS: &[&str] = &[
    "bison",
    "flex",
    "zlib1g-dev",
    "libxi-dev",
    "libxmu-dev",
    "libglu1-mesa-dev",
    "xutils-dev",
    "g++-11",
    "g++",
    "make",
    "patch",
];

/// Debian's CUDA 11.8 packages (from `nvidia-cuda-dev` only the headers and runtime libraries:
/// it is 2.8 GB unpacked, mostly cuBLAS and cuFFT).
const CUDA11_DEBS: &[&str] = &["nvidia-cuda-toolkit", "libnvvm4", "libcudart11.0", "nvidia-cuda-dev"];

/// Debian's nvcc expects system paths; this profile makes the folder self-contained.
const NVCC_PROFILE: &str = r#"TOP              = $(_HERE_)/..
NVVMIR_LIBRARY_DIR = $(TOP)/nvvm/libdevice
LD_LIBRARY_PATH += $(TOP)/lib64:$(TOP)/nvvm/lib64:
PATH            += $(TOP)/nvvm/bin:$(_HERE_):
INCLUDES        +=  "-I$(TOP)/include" $(_SPACE_)
LIBRARIES        =+ $(_SPACE_) "-L$(TOP)/lib64/stubs" "-L$(TOP)/lib64"
CUDAFE_FLAGS    +=
PTXAS_FLAGS     +=
"#;

/// Sources `setup_environment` (it exports the build's configuration) and makes the one
/// library coalprof runs, `lib/<configuration>/libcudart.so` (make's default target also builds
/// `cuobjdump_to_ptxplus`, for SASS-level simulation, which coalprof does not use); prints the
/// configuration's name (`gcc-12.2.0/cuda-11080/release`), where the libraries land.
/// `set +eu`: the script reads variables that may be unset, and outside a git checkout it
/// prints harmless git errors.
const BUILD_SCRIPT: &str = r#"set +eu
source setup_environment >"$1/setup.log" 2>&1 || { tail -n 40 "$1/setup.log" >&2; exit 1; }
make -j"$2" "lib/$GPGPUSIM_CONFIG/libcudart.so" >"$1/build.log" 2>&1 || { tail -n 40 "$1/build.log" >&2; exit 1; }
printf '%s\n' "$GPGPUSIM_CONFIG"
"#;

mod embedded {
    // `build.rs` lists `scripts/sim-patches/` into this file, so a new patch is picked up
    // without a code change and an installed coalprof carries them all.
    include!(concat!(env!("OUT_DIR"), "/sim_patches.rs"));
}

/// One of the project's patches to GPGPU-Sim.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patch {
    /// Its file name in `scripts/sim-patches/` (`0001-ptx-64-bit-integer-immediates.patch`).
    pub name: &'static str,
    /// The patch (`patch -p1`).
    pub text: &'static [u8],
}

/// The patches, in the order they apply (their file names').
pub(crate) fn patches() -> Vec<Patch> {
    embedded::SIM_PATCHES.iter().map(|&(name, text)| Patch { name, text }).collect()
}

/// sha256 of the patches one after the other (what `cat scripts/sim-patches/*.patch | sha256sum`
/// prints, as `install-sim.sh` recorded it).
pub(crate) fn patches_hash(patches: &[Patch]) -> String {
    let mut h = Sha256::new();
    for p in patches {
        h.update(p.text);
    }
    hex(&h.finalize())
}

/// The `STAMP` of a build: the source's id and the patches' hash.
pub(crate) fn stamp(source_id: &str, patches_hash: &str) -> String {
    format!("{source_id} {patches_hash}")
}

/// Whether `dir` holds a GPGPU-Sim built from one of `sources` (source ids) with the patches
/// whose hash is `patches_hash`, and its library is there.
pub(crate) fn built_from(dir: &Path, sources: &[String], patches_hash: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("STAMP")) else { return false };
    let current = sources.iter().any(|s| text.trim_end() == stamp(s, patches_hash));
    current && dir.join("lib/libcudart.so").is_file() && dir.join("configs").is_dir()
}

/// Where GPGPU-Sim's source comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// An archive (`COALPROF_GPGPUSIM_SRC`, or the vendored one, already checked).
    Archive {
        /// The file.
        path: PathBuf,
        /// Its sha256.
        sha256: String,
    },
    /// A source folder (`COALPROF_GPGPUSIM_SRC`).
    Folder(PathBuf),
    /// [`UPSTREAM_URL`], checked against [`PINNED_TREE`].
    Upstream,
}

impl Source {
    /// The source ids a `STAMP` may name for this source to count as built: the archive's
    /// sha256, `dir:<folder>`, or for the pinned commit both ways it can have been fetched.
    pub(crate) fn ids(&self) -> Vec<String> {
        let pinned = vec![format!("tree:{PINNED_TREE}"), PINNED_ARCHIVE_SHA256.to_string()];
        match self {
            Source::Archive { sha256, .. } if sha256 == PINNED_ARCHIVE_SHA256 => pinned,
            Source::Archive { sha256, .. } => vec![sha256.clone()],
            Source::Folder(p) => vec![format!("dir:{}", p.display())],
            Source::Upstream => pinned,
        }
    }

    fn describe(&self) -> String {
        match self {
            Source::Archive { path, sha256 } => format!("{} (sha256 {})", path.display(), &sha256[..12]),
            Source::Folder(p) => format!("the folder {}", p.display()),
            Source::Upstream => format!("{UPSTREAM_URL} (downloaded with curl, checked against the pinned commit)"),
        }
    }
}

/// Which source to build, checked as far as it can be before anything is changed.
pub(crate) fn resolve_source(req: &Request) -> Result<Source, SetupError> {
    if let Some(p) = &req.gpgpusim_src {
        let fix = "point COALPROF_GPGPUSIM_SRC at an archive of GPGPU-Sim's source (.tar.gz) or at a source folder";
        if p.is_dir() {
            let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            return Ok(Source::Folder(p));
        }
        if !p.is_file() {
            return Err(SetupError::cannot(format!("COALPROF_GPGPUSIM_SRC=`{}` does not exist", p.display()), fix));
        }
        let tar = need(req, "tar", "tar", "setup unpacks GPGPU-Sim's source with it")?;
        let listed = process::run_sync(&Cmd::new(tar).arg("-t").arg("-f").arg(p), None)?;
        if !listed.status.success() {
            // `tar: This does not look like a tar archive`, without tar's own path in front.
            let first = listed.stderr.lines().next().unwrap_or("").trim();
            let why = first.split_once("tar: ").map_or(first, |(_, w)| w).to_string();
            return Err(SetupError::cannot(
                format!("COALPROF_GPGPUSIM_SRC=`{}` is not a readable archive (tar: {why})", p.display()),
                fix,
            ));
        }
        let sha256 =
            sha256_file(p).map_err(|e| SetupError::cannot(format!("cannot read `{}`: {e}", p.display()), fix))?;
        return Ok(Source::Archive { path: p.clone(), sha256 });
    }
    if let Some((path, want)) = req.vendor.as_deref().and_then(vendored) {
        let got = sha256_file(&path).unwrap_or_default();
        if got != want {
            return Err(SetupError::cannot(
                format!(
                    "the vendored GPGPU-Sim archive `{}` fails its sha256 check (SHA256SUMS: {want}, the file: {got})",
                    path.display()
                ),
                "restore the archive, or set COALPROF_GPGPUSIM_SRC to a source archive or folder",
            ));
        }
        return Ok(Source::Archive { path, sha256: got });
    }
    Ok(Source::Upstream)
}

/// The vendored archive named in `SHA256SUMS` of `dir`, and its expected sha256.
fn vendored(dir: &Path) -> Option<(PathBuf, String)> {
    let sums = std::fs::read_to_string(dir.join("SHA256SUMS")).ok()?;
    sums.lines().find_map(|l| {
        let (hash, name) = l.split_once(char::is_whitespace)?;
        let name = name.trim_start().trim_start_matches('*');
        (name.ends_with(".tar.gz") && dir.join(name).is_file()).then(|| (dir.join(name), hash.to_ascii_lowercase()))
    })
}

pub(super) fn plan(req: &Request) -> Vec<Step> {
    vec![dependencies(req), cuda11(req), cxx_libraries(req), gpgpusim(req)]
}

// --- build dependencies ------------------------------------------------------------------------

const DEPS: &str = "GPGPU-Sim's build dependencies";

fn dependencies(req: &Request) -> Step {
    let c = Component::Sim;
    let Some(query) = program(req.path.as_deref(), "dpkg-query") else {
        // No Debian: the programs can be checked, the libraries only by the build itself.
        let programs = ["bison", "flex", "g++-11", "g++", "make", "patch"];
        let missing: Vec<&str> = programs.into_iter().filter(|p| program(req.path.as_deref(), p).is_none()).collect();
        if missing.is_empty() {
            let what = format!(
                "{} on PATH (no dpkg-query: the zlib, Xi, Xmu and GLU headers are not checked)",
                programs.join(", ")
            );
            return Step::present(c, DEPS, what);
        }
        let e = SetupError::cannot(
            format!("{DEPS} are missing: {} (not on PATH)", missing.join(", ")),
            format!("install them with your package manager (Debian's names: {})", BUILD_DEPS.join(" ")),
        );
        return Step::blocked(c, DEPS, e);
    };
    let missing = match missing_packages(&query) {
        Ok(m) => m,
        Err(e) => return Step::blocked(c, DEPS, e),
    };
    if missing.is_empty() {
        return Step::present(c, DEPS, format!("{} installed", BUILD_DEPS.join(" ")));
    }
    let names: Vec<&str> = missing.iter().map(String::as_str).collect();
    match program(req.path.as_deref(), "apt-get").filter(|_| req.root) {
        Some(apt_get) => {
            let what = format!("apt-get install {} (Debian main)", names.join(" "));
            Step::missing(c, DEPS, what, move |report| {
                report.doing("apt-get update");
                run(&Cmd::new(&apt_get).args(["-qq", "update"]), "apt-get update failed")?;
                report.doing(&format!("apt-get install {}", missing.join(" ")));
                run(
                    &Cmd::new(&apt_get)
                        .args(["install", "-y", "-qq", "--no-install-recommends"])
                        .args(missing.iter())
                        .env("DEBIAN_FRONTEND", "noninteractive"),
                    "cannot install GPGPU-Sim's build dependencies",
                )?;
                Ok(format!("installed {}", missing.join(" ")))
            })
        }
        None => Step::blocked(
            c,
            DEPS,
            SetupError::cannot(
                format!("{DEPS} are missing: {}", names.join(" ")),
                format!("run `{}`, then `coalprof setup sim` again", apt_install(false, &names)),
            ),
        ),
    }
}

/// The packages of [`BUILD_DEPS`] dpkg does not list as installed.
fn missing_packages(query: &Path) -> Result<Vec<String>, SetupError> {
    // dpkg-query exits 1 when a package is unknown; the ones it knows are still listed.
    let cmd = Cmd::new(query).args(["-W", "-f", "${Package} ${Status}\n"]).args(BUILD_DEPS.iter().copied());
    let out = process::run_sync(&cmd, None)?;
    let installed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.ends_with(" install ok installed"))
        .filter_map(|l| l.split_whitespace().next())
        .map(|p| p.split(':').next().unwrap_or(p))
        .collect();
    Ok(BUILD_DEPS.iter().filter(|p| !installed.contains(p)).map(|p| p.to_string()).collect())
}

// --- the CUDA 11.8 toolkit ---------------------------------------------------------------------

const CUDA11: &str = "the CUDA 11.8 toolkit";

fn cuda11(req: &Request) -> Step {
    let c = Component::Sim;
    let home = req.home.clone();
    if let Some(given) = req.cuda11_home.clone() {
        let version = match cuda11_version(&given) {
            Ok(v) => v,
            Err(e) => return Step::blocked(c, CUDA11, e),
        };
        let same = matches!(
            (std::fs::canonicalize(home.cuda11()), std::fs::canonicalize(&given)),
            (Ok(a), Ok(b)) if a == b
        );
        if same {
            return Step::present(c, CUDA11, format!("CUDA {version}: {} → CUDA11_HOME", home.cuda11().display()));
        }
        let what = format!("link {} to CUDA11_HOME={}", home.cuda11().display(), given.display());
        return Step::missing(c, CUDA11, what, move |_| {
            stage::link(&home.root, &given, &home.cuda11())?;
            Ok(format!("CUDA {version}, linked"))
        });
    }
    if complete_cuda11(&home.cuda11()) {
        return match cuda11_version(&home.cuda11()) {
            Ok(v) => Step::present(c, CUDA11, format!("CUDA {v} in {}", home.cuda11().display())),
            Err(e) => Step::blocked(c, CUDA11, e),
        };
    }
    let otherwise = "set CUDA11_HOME to a CUDA 11 toolkit";
    let need_all = || -> Result<(), SetupError> {
        Apt::new(req, CUDA11, otherwise)?;
        need(req, "tar", "tar", "setup unpacks Debian's packages with it")?;
        Ok(())
    };
    if let Err(e) = need_all() {
        return Step::blocked(c, CUDA11, e);
    }
    let what = format!(
        "download {} (about 870 MB) from {}, assemble into {}",
        CUDA11_DEBS.join(" "),
        Apt::describe(),
        home.cuda11().display()
    );
    let req = req.clone();
    Step::missing(c, CUDA11, what, move |report| install_cuda11(&req, report))
}

/// What discovery and the simulator's build need of the folder.
fn complete_cuda11(dir: &Path) -> bool {
    dir.join("bin/nvcc").is_file()
        && dir.join("bin/nvcc.profile").is_file()
        && dir.join("lib64/libcudadevrt.a").is_file()
}

/// The toolkit's version, if it is CUDA 11 or older (GPGPU-Sim's runtime and PTX parser
/// predate CUDA 12).
fn cuda11_version(dir: &Path) -> Result<String, SetupError> {
    let nvcc = dir.join("bin/nvcc");
    let fix =
        "point CUDA11_HOME at a CUDA 11 toolkit, or unset it: `coalprof setup sim` then unpacks CUDA 11.8 from Debian";
    if !nvcc.is_file() {
        return Err(SetupError::cannot(format!("`{}` has no bin/nvcc", dir.display()), fix));
    }
    let v = crate::tools::nvcc::Nvcc { path: nvcc }.version()?;
    let major: u32 = v.split('.').next().and_then(|m| m.parse().ok()).unwrap_or(u32::MAX);
    if major > 11 {
        return Err(SetupError::cannot(
            format!("`{}` is CUDA {v}: GPGPU-Sim needs CUDA 11 or older", dir.display()),
            fix,
        ));
    }
    Ok(v)
}

fn install_cuda11(req: &Request, report: &dyn Report) -> Result<String, SetupError> {
    let home = &req.home;
    let apt = Apt::new(req, CUDA11, "set CUDA11_HOME to a CUDA 11 toolkit")?;
    let stage = Stage::new(&home.root, "cuda11")?;
    report.doing("apt-get update (Debian non-free)");
    apt.update()?;
    report.doing("downloading the CUDA 11.8 toolkit (about 870 MB)");
    let debs = apt.download(CUDA11_DEBS, &stage.join("debs"))?;
    let root = stage.join("root");
    for (deb, name) in debs.iter().zip(CUDA11_DEBS) {
        report.doing(&format!("unpacking {name}"));
        let only: &[&str] = if *name == "nvidia-cuda-dev" {
            &[
                "./usr/include/*",
                "./usr/lib/x86_64-linux-gnu/libcudadevrt.a",
                "./usr/lib/x86_64-linux-gnu/libcudart_static.a",
                "./usr/lib/x86_64-linux-gnu/libcudart.so",
                "./usr/lib/x86_64-linux-gnu/stubs/libcuda.so",
            ]
        } else {
            &[]
        };
        debian::unpack(req, deb, &root, only)?;
        let _ = std::fs::remove_file(deb);
    }
    report.doing("assembling the toolkit folder");
    assemble_cuda11(&root.join("usr"), &stage.join("cuda11"))?;
    let version = cuda11_version(&stage.join("cuda11"))?;
    stage.commit("cuda11", &home.cuda11())?;
    Ok(format!("CUDA {version}"))
}

/// Move Debian's files (under `usr`) into one CUDA folder `out` (`bin/`, `include/`, `lib64/`,
/// `nvvm/`), as `CUDA_INSTALL_PATH` expects: renames within the stage, no copies.
fn assemble_cuda11(usr: &Path, out: &Path) -> Result<(), SetupError> {
    let tk = usr.join("lib/nvidia-cuda-toolkit");
    let lib = usr.join("lib/x86_64-linux-gnu");
    for d in ["bin", "nvvm/bin", "nvvm/lib64", "nvvm/include", "lib64/stubs"] {
        let d = out.join(d);
        std::fs::create_dir_all(&d).map_err(|e| SetupError::io(&d, e))?;
    }
    let mv = |from: PathBuf, to: PathBuf| -> Result<(), SetupError> {
        std::fs::rename(&from, &to).map_err(|e| SetupError::Io { path: to, source: with_from(e, &from) })
    };
    // Debian's /usr/bin/nvcc is a shell wrapper around the real one in nvidia-cuda-toolkit/bin.
    mv(tk.join("bin/nvcc"), out.join("bin/nvcc"))?;
    for b in ["ptxas", "fatbinary", "nvlink", "cudafe++", "cuobjdump", "nvdisasm", "bin2c", "nvprune", "cu++filt"] {
        mv(usr.join("bin").join(b), out.join("bin").join(b))?;
    }
    mv(tk.join("bin/crt"), out.join("bin/crt"))?;
    mv(tk.join("bin/cicc"), out.join("nvvm/bin/cicc"))?;
    mv(tk.join("libdevice"), out.join("nvvm/libdevice"))?;
    for f in starting_with(&lib, "libnvvm.so") {
        mv(lib.join(&f), out.join("nvvm/lib64").join(&f))?;
    }
    mv(usr.join("include/nvvm.h"), out.join("nvvm/include/nvvm.h"))?;
    mv(usr.join("include"), out.join("include"))?;
    let mut libs = starting_with(&lib, "libcudart.so");
    libs.extend(["libcudadevrt.a".into(), "libcudart_static.a".into()]);
    for f in libs {
        mv(lib.join(&f), out.join("lib64").join(&f))?;
    }
    let so = out.join("lib64/libcudart.so");
    let _ = std::fs::remove_file(&so);
    std::os::unix::fs::symlink("libcudart.so.11.0", &so).map_err(|e| SetupError::io(&so, e))?;
    mv(lib.join("stubs/libcuda.so"), out.join("lib64/stubs/libcuda.so"))?;
    let profile = out.join("bin/nvcc.profile");
    std::fs::write(&profile, NVCC_PROFILE).map_err(|e| SetupError::io(&profile, e))?;
    Ok(())
}

/// The names in `dir` that start with `prefix`, sorted.
fn starting_with(dir: &Path, prefix: &str) -> Vec<OsString> {
    let mut v: Vec<OsString> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(prefix))
        .collect();
    v.sort();
    v
}

fn with_from(e: std::io::Error, from: &Path) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("moving `{}` there: {e}", from.display()))
}

// --- the toolkit's C++ libraries ---------------------------------------------------------------

const CXX_LIBS: &str = "CUDA 11.8's C++ libraries (libcu++, CUB, Thrust)";

/// Debian's packages of the headers NVIDIA's toolkit ships in its `include/` and Debian ships
/// apart (bookworm main: libcu++ 1.8.1, as CUDA 11.8 has it; CUB and Thrust 1.17.2, which
/// support CUDA 11): cooperative groups include libcu++ (`cuda/std/type_traits`).
pub(crate) const CXX_DEBS: &[&str] = &["libcu++-dev", "libcub-dev", "libthrust-dev"];

/// The folders the packages put in `/usr/include`, moved into the toolkit's `include/` in this
/// order (Thrust, last, is the mark that all are there).
const CXX_FOLDERS: &[&str] = &["cuda", "nv", "cub", "thrust"];

/// The libraries of [`CXX_LIBRARIES`] that the toolkit `cuda` lacks.
pub(crate) fn missing_cxx_headers(cuda: &Path) -> Vec<&'static str> {
    CXX_LIBRARIES.iter().filter(|l| !l.in_toolkit(cuda)).map(|l| l.name).collect()
}

fn cxx_libraries(req: &Request) -> Step {
    let c = Component::Sim;
    let cuda = req.home.cuda11();
    if complete_cuda11(&cuda) && missing_cxx_headers(&cuda).is_empty() {
        return Step::present(c, CXX_LIBS, format!("in {}", cuda.join("include").display()));
    }
    if let Some(given) = &req.cuda11_home {
        // A toolkit of the user's: NVIDIA's own has them; coalprof writes nothing into it.
        let missing = missing_cxx_headers(given);
        if missing.is_empty() {
            return Step::present(c, CXX_LIBS, format!("in {}", given.join("include").display()));
        }
        // Not a failure: plain CUDA runs without them; what needs them is said, and doctor says it too.
        let what = format!(
            "CUDA11_HOME=`{}` lacks {}: programs using cooperative groups, CUB or Thrust will not compile (install Debian's {} into its include/, or unset CUDA11_HOME)",
            given.display(),
            missing.join(", "),
            CXX_DEBS.join(" ")
        );
        return Step::present(c, CXX_LIBS, what);
    }
    if let Err(e) = Apt::of(req, debian::Component::Main, CXX_LIBS, "install them into the toolkit's include/ yourself")
        .and_then(|_| need(req, "tar", "tar", "setup unpacks Debian's packages with it").map(|_| ()))
    {
        return Step::blocked(c, CXX_LIBS, e);
    }
    let what = format!(
        "download {} (about 1.3 MB) from Debian bookworm main (a private apt configuration), unpack into {}",
        CXX_DEBS.join(" "),
        cuda.join("include").display()
    );
    let req = req.clone();
    Step::missing(c, CXX_LIBS, what, move |report| install_cxx_libraries(&req, report))
}

fn install_cxx_libraries(req: &Request, report: &dyn Report) -> Result<String, SetupError> {
    let home = &req.home;
    let include = home.cuda11().join("include");
    if !include.is_dir() {
        return Err(SetupError::cannot(
            format!("`{}` is missing: the CUDA 11.8 toolkit is not installed", include.display()),
            "run `coalprof setup sim` again",
        ));
    }
    let apt = Apt::of(req, debian::Component::Main, CXX_LIBS, "install them into the toolkit's include/ yourself")?;
    let stage = Stage::new(&home.root, "cuda11-cxx")?;
    report.doing("apt-get update (Debian main)");
    apt.update()?;
    report.doing(&format!("downloading {}", CXX_DEBS.join(" ")));
    let debs = apt.download(CXX_DEBS, &stage.join("debs"))?;
    let root = stage.join("root");
    let mut versions = Vec::new();
    for (deb, name) in debs.iter().zip(CXX_DEBS) {
        report.doing(&format!("unpacking {name}"));
        debian::unpack(req, deb, &root, &["./usr/include/*"])?;
        // `libcub-dev_1.17.2-2_all.deb`: the version is the name's second part.
        let file = deb.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        versions.push(format!("{name} {}", file.split('_').nth(1).unwrap_or("?")));
    }
    let usr_include = root.join("usr/include");
    for folder in CXX_FOLDERS {
        let (from, to) = (usr_include.join(folder), include.join(folder));
        if !from.is_dir() {
            return Err(SetupError::cannot(
                format!("Debian's packages {} hold no usr/include/{folder}", CXX_DEBS.join(" ")),
                "run `coalprof setup sim` again; if it persists, install them into the toolkit's include/ yourself",
            ));
        }
        // A folder left by an earlier, interrupted install is replaced whole.
        if to.exists() {
            std::fs::remove_dir_all(&to).map_err(|e| SetupError::io(&to, e))?;
        }
        std::fs::rename(&from, &to).map_err(|e| SetupError::Io { path: to.clone(), source: with_from(e, &from) })?;
    }
    drop(stage);
    Ok(versions.join(", "))
}

// --- GPGPU-Sim ---------------------------------------------------------------------------------

const SIM: &str = "GPGPU-Sim";

fn gpgpusim(req: &Request) -> Step {
    let c = Component::Sim;
    let home = req.home.clone();
    let source = match resolve_source(req) {
        Ok(s) => s,
        Err(e) => return Step::blocked(c, SIM, e),
    };
    let patches = patches();
    let ph = patches_hash(&patches);
    if built_from(&home.gpgpusim(), &source.ids(), &ph) {
        let version = std::fs::read_to_string(home.gpgpusim().join("VERSION")).unwrap_or_default();
        return Step::present(c, SIM, format!("{} in {}", version.trim(), home.gpgpusim().display()));
    }
    let found = || -> Result<Programs, SetupError> {
        need(req, "make", "make", "GPGPU-Sim is built with make")?;
        Ok(Programs {
            bash: need(req, "bash", "bash", "GPGPU-Sim's build sources its setup_environment")?,
            patch: need(req, "patch", "patch", "coalprof's fixes to GPGPU-Sim are applied with patch")?,
            tar: need(req, "tar", "tar", "GPGPU-Sim's source is unpacked with tar")?,
            cp: need(req, "cp", "coreutils", "a source folder is copied with cp")?,
            curl: match source {
                Source::Upstream => Some(need(
                    req,
                    "curl",
                    "curl",
                    "GPGPU-Sim's source is downloaded with it (or set COALPROF_GPGPUSIM_SRC)",
                )?),
                _ => None,
            },
        })
    };
    let programs = match found() {
        Ok(p) => p,
        Err(e) => return Step::blocked(c, SIM, e),
    };
    let what = format!(
        "build from {} with {} patch(es) (make -j{}: a few minutes) into {}",
        source.describe(),
        patches.len(),
        req.jobs,
        home.gpgpusim().display()
    );
    let jobs = req.jobs;
    Step::missing(c, SIM, what, move |report| build(&home, &source, &patches, &programs, jobs, report))
}

/// The programs the build runs, found while planning.
struct Programs {
    bash: PathBuf,
    patch: PathBuf,
    tar: PathBuf,
    cp: PathBuf,
    curl: Option<PathBuf>,
}

fn build(
    home: &ToolHome,
    source: &Source,
    patches: &[Patch],
    programs: &Programs,
    jobs: usize,
    report: &dyn Report,
) -> Result<String, SetupError> {
    let stage = Stage::new(&home.root, "gpgpu-sim")?;
    let sim = stage.join("gpgpu-sim");
    let src = sim.join("src");
    std::fs::create_dir_all(&sim).map_err(|e| SetupError::io(&sim, e))?;
    // 1. The source, in `src/`.
    let source_id = match source {
        Source::Archive { path, sha256 } => {
            report.doing("unpacking GPGPU-Sim's source");
            unpack_source(&programs.tar, path, &stage.join("unpacked"), &src)?;
            sha256.clone()
        }
        Source::Folder(p) => {
            report.doing("copying GPGPU-Sim's source");
            std::fs::create_dir(&src).map_err(|e| SetupError::io(&src, e))?;
            run(&Cmd::new(&programs.cp).arg("-a").arg(p.join(".")).arg(&src), "cannot copy GPGPU-Sim's source folder")?;
            format!("dir:{}", p.display())
        }
        Source::Upstream => {
            let curl = programs.curl.as_ref().expect("curl was found while planning");
            let archive = stage.join("gpgpu-sim.tar.gz");
            report.doing("downloading GPGPU-Sim's source from GitHub");
            run(
                &Cmd::new(curl).args(["-fsSL", "--retry", "3", "-o"]).arg(&archive).arg(UPSTREAM_URL),
                &format!("cannot download GPGPU-Sim's source from {UPSTREAM_URL}"),
            )
            .map_err(|e| download_failed(e.to_string()))?;
            unpack_source(&programs.tar, &archive, &stage.join("unpacked"), &src)?;
            let got = tree_digest(&src).map_err(|e| SetupError::io(&src, e))?;
            if got != PINNED_TREE {
                return Err(download_failed(format!(
                    "the archive {UPSTREAM_URL} served is not commit {COMMIT}: its files' digest is {got}, the pinned commit's {PINNED_TREE}"
                )));
            }
            format!("tree:{PINNED_TREE}")
        }
    };
    let pinned = tree_digest(&src).map(|d| d == PINNED_TREE).unwrap_or(false);
    // 2. coalprof's fixes.
    let dir = stage.join("patches");
    std::fs::create_dir_all(&dir).map_err(|e| SetupError::io(&dir, e))?;
    for p in patches {
        report.doing(&format!("applying {}", p.name));
        let file = dir.join(p.name);
        std::fs::write(&file, p.text).map_err(|e| SetupError::io(&file, e))?;
        let mut cmd = Cmd::new(&programs.patch).args(["-p1", "--forward", "--quiet", "-i"]).arg(&file);
        cmd.cwd = Some(src.clone());
        run(&cmd, &format!("{} does not apply to this GPGPU-Sim source", p.name))?;
    }
    // 3. The build, with the CUDA 11 toolkit of the home.
    report.doing(&format!("building GPGPU-Sim (make -j{jobs}: a few minutes)"));
    let mut cmd = Cmd::new(&programs.bash)
        .args(["-c", BUILD_SCRIPT, "bash"])
        .arg(&sim)
        .arg(jobs.to_string())
        .env("CUDA_INSTALL_PATH", home.cuda11())
        // The build string names the git commit it is built in: not a checkout around the home.
        .env("GIT_CEILING_DIRECTORIES", stage.path());
    cmd.cwd = Some(src.clone());
    let built = run(&cmd, "building GPGPU-Sim failed");
    let config = match built {
        Ok(out) => out.stdout.lines().last().unwrap_or("").trim().to_string(),
        Err(e) => return Err(keep_log(home, &sim, e)),
    };
    let lib = sim.join("lib");
    std::os::unix::fs::symlink(Path::new("src/lib").join(&config), &lib).map_err(|e| SetupError::io(&lib, e))?;
    let configs = sim.join("configs");
    std::os::unix::fs::symlink("src/configs/tested-cfgs", &configs).map_err(|e| SetupError::io(&configs, e))?;
    if config.is_empty() || !lib.join("libcudart.so").is_file() {
        return Err(keep_log(
            home,
            &sim,
            SetupError::cannot(
                format!("GPGPU-Sim's build made no lib/libcudart.so (configuration `{config}`)"),
                "see the build log",
            ),
        ));
    }
    // 4. What was built, from what.
    let version = version_line(&src, source, pinned, patches);
    for (name, text) in [("VERSION", version.clone()), ("STAMP", stamp(&source_id, &patches_hash(patches)))] {
        let f = sim.join(name);
        std::fs::write(&f, text + "\n").map_err(|e| SetupError::io(&f, e))?;
    }
    stage.commit("gpgpu-sim", &home.gpgpusim())?;
    let _ = std::fs::remove_file(failed_log(home));
    Ok(version)
}

/// `GPGPU-Sim 4.2.0 (accel-sim/gpgpu-sim_distribution dev 667834c + 0001-…,0002-…)`, as
/// `run.json` records it; a source that is not the pinned commit says where it came from.
fn version_line(src: &Path, source: &Source, pinned: bool, patches: &[Patch]) -> String {
    let text = std::fs::read_to_string(src.join("version")).unwrap_or_default();
    let re = regex::Regex::new(r"Version ([0-9.]+)").expect("a valid regex");
    let ver = re.captures(&text).map_or("(version unknown)".to_string(), |c| c[1].to_string());
    let names: Vec<&str> = patches.iter().map(|p| p.name.trim_end_matches(".patch")).collect();
    let origin = if pinned {
        format!("accel-sim/gpgpu-sim_distribution dev {}", &COMMIT[..7])
    } else {
        match source {
            Source::Archive { path, .. } => format!("{}, not commit {}", path.display(), &COMMIT[..7]),
            Source::Folder(p) => format!("{}, not commit {}", p.display(), &COMMIT[..7]),
            Source::Upstream => format!("accel-sim/gpgpu-sim_distribution {}", &COMMIT[..7]),
        }
    };
    format!("GPGPU-Sim {ver} ({origin} + {})", names.join(","))
}

fn download_failed(why: String) -> SetupError {
    SetupError::cannot(
        why,
        format!(
            "download {UPSTREAM_URL} (or clone accel-sim/gpgpu-sim_distribution at {COMMIT}) yourself and set COALPROF_GPGPUSIM_SRC to the archive or folder"
        ),
    )
}

/// Where the log of a failed build is kept (the stage, with the build, is removed).
fn failed_log(home: &ToolHome) -> PathBuf {
    home.root.join("gpgpu-sim-build-failed.log")
}

fn keep_log(home: &ToolHome, sim: &Path, e: SetupError) -> SetupError {
    let log = failed_log(home);
    if std::fs::rename(sim.join("build.log"), &log).is_err() && std::fs::rename(sim.join("setup.log"), &log).is_err() {
        return e;
    }
    let hint = format!("the whole log is `{}`", log.display());
    match e {
        SetupError::Tool(t) => SetupError::Tool(t.with_hint(hint)),
        SetupError::Cannot { message, .. } => SetupError::Cannot { message, hint: Some(hint) },
        other => other,
    }
}

/// Unpack `archive` into `scratch` and move its source folder to `dest`: the archive's top
/// level (a `git archive`, as vendored) or its one top-level folder (GitHub's tarball).
pub(crate) fn unpack_source(tar: &Path, archive: &Path, scratch: &Path, dest: &Path) -> Result<(), SetupError> {
    std::fs::create_dir_all(scratch).map_err(|e| SetupError::io(scratch, e))?;
    run(
        &Cmd::new(tar).arg("-x").arg("-f").arg(archive).arg("-C").arg(scratch),
        &format!("cannot unpack GPGPU-Sim's source `{}`", archive.display()),
    )?;
    let marker = "setup_environment";
    let root = if scratch.join(marker).is_file() {
        scratch.to_path_buf()
    } else {
        let entries: Vec<PathBuf> =
            std::fs::read_dir(scratch).map_err(|e| SetupError::io(scratch, e))?.flatten().map(|e| e.path()).collect();
        match entries.as_slice() {
            [one] if one.join(marker).is_file() => one.clone(),
            _ => {
                return Err(SetupError::cannot(
                    format!(
                        "`{}` holds no GPGPU-Sim source: no {marker} at its top or in its one top-level folder",
                        archive.display()
                    ),
                    "point COALPROF_GPGPUSIM_SRC at an archive of accel-sim/gpgpu-sim_distribution",
                ))
            }
        }
    };
    std::fs::rename(&root, dest).map_err(|e| SetupError::io(dest, e))
}

/// A digest of a source tree's content: each file's path, executable bit and sha256, and each
/// link's target, in path order (folders, and a clone's top-level `.git`, left out). Archives of
/// one commit unpack to the same digest whatever their compression or top-level folder.
///
/// Each entry is one line, `F <x|-> <sha256> <path>` or `L <target> <path>`, and the digest is
/// the sha256 of the lines.
pub(crate) fn tree_digest(root: &Path) -> std::io::Result<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
            if rel == ".git" {
                continue;
            }
            let kind = entry.file_type()?;
            if kind.is_dir() {
                walk(root, &path, out)?;
            } else if kind.is_symlink() {
                out.push((rel.clone(), format!("L {} {rel}", std::fs::read_link(&path)?.display())));
            } else {
                use std::os::unix::fs::PermissionsExt;
                let x = if entry.metadata()?.permissions().mode() & 0o100 != 0 { "x" } else { "-" };
                out.push((rel.clone(), format!("F {x} {} {rel}", sha256_file(&path)?)));
            }
        }
        Ok(())
    }
    let mut lines = Vec::new();
    walk(root, root, &mut lines)?;
    lines.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (_, line) in lines {
        h.update(line.as_bytes());
        h.update(b"\n");
    }
    Ok(hex(&h.finalize()))
}

fn sha256_file(p: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(p)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn the_embedded_patches_are_the_files_of_scripts_sim_patches_in_order() {
        let dir = manifest().join("scripts/sim-patches");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "patch"))
            .collect();
        files.sort();
        let embedded = patches();
        assert!(!files.is_empty());
        assert_eq!(embedded.len(), files.len(), "a patch file is not embedded: {files:?}");
        for (p, f) in embedded.iter().zip(&files) {
            assert_eq!(p.name, f.file_name().unwrap().to_str().unwrap());
            assert_eq!(p.text, std::fs::read(f).unwrap().as_slice(), "{} differs from its file", p.name);
        }
    }

    /// The oracle is the shell pipeline `install-sim.sh` wrote its STAMP with, so a home it
    /// built is recognised (and not rebuilt) by `coalprof setup sim`.
    #[test]
    fn the_patches_hash_is_the_one_install_sim_sh_recorded() {
        let mut cmd = Cmd::new("sh").args(["-c", "cat scripts/sim-patches/*.patch | sha256sum"]);
        cmd.cwd = Some(manifest());
        let out = process::run_sync(&cmd, None).unwrap();
        assert!(out.status.success(), "{}", out.stderr);
        assert_eq!(patches_hash(&patches()), out.stdout[..64]);
    }

    #[test]
    fn a_build_counts_only_for_its_source_and_patches_and_with_its_library() {
        let d = tempfile::tempdir().unwrap();
        let sim = d.path();
        let vendored = Source::Archive { path: "v.tar.gz".into(), sha256: PINNED_ARCHIVE_SHA256.into() };
        let other = Source::Archive { path: "o.tar.gz".into(), sha256: "ab".repeat(32) };
        std::fs::write(sim.join("STAMP"), stamp(PINNED_ARCHIVE_SHA256, "p1") + "\n").unwrap();
        assert!(!built_from(sim, &vendored.ids(), "p1"), "no library yet");
        std::fs::create_dir_all(sim.join("lib")).unwrap();
        std::fs::write(sim.join("lib/libcudart.so"), "").unwrap();
        std::fs::create_dir_all(sim.join("configs")).unwrap();
        assert!(built_from(sim, &vendored.ids(), "p1"));
        assert!(!built_from(sim, &vendored.ids(), "p2"), "a changed patch rebuilds");
        assert!(!built_from(sim, &other.ids(), "p1"), "another archive rebuilds");
        // The pinned commit, however it was fetched, counts for the download and the vendored archive.
        assert!(built_from(sim, &Source::Upstream.ids(), "p1"));
        std::fs::write(sim.join("STAMP"), stamp(&format!("tree:{PINNED_TREE}"), "p1")).unwrap();
        assert!(built_from(sim, &vendored.ids(), "p1"));
        assert!(!built_from(sim, &other.ids(), "p1"));
        let folder = Source::Folder("/src/gpgpu-sim".into());
        assert!(!built_from(sim, &folder.ids(), "p1"));
        std::fs::write(sim.join("STAMP"), stamp("dir:/src/gpgpu-sim", "p1")).unwrap();
        assert!(built_from(sim, &folder.ids(), "p1"));
        assert!(!built_from(sim, &Source::Upstream.ids(), "p1"), "a folder is not the pinned commit");
    }

    #[test]
    fn the_version_line_says_whether_the_source_is_the_pinned_commit() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("version"),
            "const char *g_gpgpusim_version_string = \"GPGPU-Sim Simulator Version 4.2.0 \";\n",
        )
        .unwrap();
        let p = patches();
        let names: Vec<&str> = p.iter().map(|p| p.name.trim_end_matches(".patch")).collect();
        let src = Source::Archive { path: "/x/fork.tar.gz".into(), sha256: "ab".repeat(32) };
        assert_eq!(
            version_line(d.path(), &src, true, &p),
            format!("GPGPU-Sim 4.2.0 (accel-sim/gpgpu-sim_distribution dev 667834c + {})", names.join(","))
        );
        assert!(version_line(d.path(), &src, false, &p)
            .starts_with("GPGPU-Sim 4.2.0 (/x/fork.tar.gz, not commit 667834c + "));
    }

    /// The vendored `git archive` (no top-level folder) and the same files under one top-level
    /// folder, as GitHub serves them, both unpack to the pinned commit's tree; an archive with
    /// no source in it is refused.
    #[test]
    fn both_archive_layouts_unpack_to_the_pinned_tree() {
        use std::io::Write;
        let vendored = manifest().join("../shared/vendor/gpgpu-sim/gpgpu-sim_distribution-dev-667834c.tar.gz");
        if !vendored.is_file() {
            let _ = writeln!(std::io::stderr().lock(), "SKIPPED both_archive_layouts: no {}", vendored.display());
            return;
        }
        assert_eq!(sha256_file(&vendored).unwrap(), PINNED_ARCHIVE_SHA256);
        let d = tempfile::tempdir().unwrap();
        let tar = Path::new("tar");
        let flat = d.path().join("flat");
        unpack_source(tar, &vendored, &d.path().join("scratch1"), &flat).unwrap();
        assert_eq!(tree_digest(&flat).unwrap(), PINNED_TREE);
        // GitHub's layout: one folder named after the repository and commit.
        let top = d.path().join("gh").join(format!("gpgpu-sim_distribution-{COMMIT}"));
        std::fs::create_dir_all(top.parent().unwrap()).unwrap();
        std::fs::rename(&flat, &top).unwrap();
        let repacked = d.path().join("github.tar.gz");
        let mut pack =
            Cmd::new("tar").arg("-czf").arg(&repacked).arg("-C").arg(d.path().join("gh")).arg(top.file_name().unwrap());
        pack.cwd = Some(d.path().to_path_buf());
        assert!(process::run_sync(&pack, None).unwrap().status.success());
        let nested = d.path().join("nested");
        unpack_source(tar, &repacked, &d.path().join("scratch2"), &nested).unwrap();
        assert_eq!(tree_digest(&nested).unwrap(), PINNED_TREE);
        // One changed byte is another tree.
        let f = nested.join("setup_environment");
        let mut text = std::fs::read(&f).unwrap();
        text.push(b'\n');
        std::fs::write(&f, text).unwrap();
        assert_ne!(tree_digest(&nested).unwrap(), PINNED_TREE);
        // Two top-level folders: no source to pick.
        std::fs::create_dir_all(d.path().join("two/a")).unwrap();
        std::fs::create_dir_all(d.path().join("two/b")).unwrap();
        let two = d.path().join("two.tar.gz");
        let pack = Cmd::new("tar").arg("-czf").arg(&two).arg("-C").arg(d.path().join("two")).args(["a", "b"]);
        assert!(process::run_sync(&pack, None).unwrap().status.success());
        let err = unpack_source(tar, &two, &d.path().join("scratch3"), &d.path().join("none")).unwrap_err();
        assert!(err.to_string().contains("holds no GPGPU-Sim source"), "{err}");
        assert!(!d.path().join("none").exists());
    }
}
