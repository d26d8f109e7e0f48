//! GPGPU-Sim: a CUDA program's PTX executed on the CPU with a model of the GPU's memory system
//! (`run --backend sim`, `profile --backend sim`). The simulator is a `libcudart.so` that the
//! program loads in place of NVIDIA's (so the program must be built with `-cudart shared`); it
//! runs in a folder holding a GPU configuration and writes its per-PTX-line statistics there.
//! `coalprof setup sim` builds it into the tool home's `gpgpu-sim/`, beside the CUDA 11.8 toolkit
//! in `cuda11/`. Programs built with CUDA 12 or 13 run too, with a toolkit of their CUDA
//! (the project's nvcc) as the simulator's `CUDA_INSTALL_PATH`: see `docs/simulator-cuda12.md`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::nvcc::Nvcc;
use super::process::{run_sync, Captured, Cmd};
use super::ToolError;
use crate::error::Error;

/// The GPU configuration every simulation runs with (`configs/tested-cfgs/SM7_QV100`): a V100,
/// whose sectors and requests follow the 32-byte-sector rules of every GPU since sm_70.
pub const CONFIG: &str = "SM7_QV100";
/// The architecture programs are built for: the configuration's.
pub const ARCH: &str = "sm_70";
/// What nvcc is given besides the kernel flags: the simulator replaces the shared CUDA runtime,
/// and CUDA 11.8 supports host compilers up to gcc 11.
pub const NVCC_FLAGS: &[&str] = &["-cudart", "shared", "-ccbin", "g++-11"];
/// The files of the configuration a run folder needs.
const CONFIG_FILES: &[&str] = &["gpgpusim.config", "config_volta_islip.icnt"];

/// How the simulator executes the kernels. Both give the same per-PTX-line counters (the
/// functional mode generates each warp's memory accesses as the timing core does, through
/// `scripts/sim-patches/0003-functional-mem-accesses.patch`); only the timing mode models cycles,
/// which coalprof never reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SimMode {
    /// Functional simulation only, one CTA at a time: 10–20× faster.
    #[default]
    Functional,
    /// The cycle-level timing model (GPGPU-Sim's default), for comparison.
    Timing,
}

impl SimMode {
    /// `functional` or `timing`: the name `--sim-mode` takes, as clap's `ValueEnum` derive gives it.
    pub fn name(self) -> String {
        let value = clap::ValueEnum::to_possible_value(&self).expect("no mode is skipped by `--sim-mode`");
        value.get_name().to_string()
    }

    /// The value of `PTX_SIM_MODE_FUNC`, which the simulator reads at every launch and which
    /// overrides the configuration's `-gpgpu_ptx_sim_mode`.
    fn env_value(self) -> &'static str {
        match self {
            SimMode::Functional => "1",
            SimMode::Timing => "0",
        }
    }
}

/// The install script's name for the patch the functional mode's counters need: `VERSION` lists
/// the patches a build has.
const FUNCTIONAL_PATCH: &str = "functional-mem-accesses";
/// The patch that lets programs built with CUDA 12 and 13 load the simulator's runtime.
const CUDA12_PATCH: &str = "cuda12-runtime";
/// The newest CUDA runtime the patched simulator stands in for (`libcudart.so.13`).
const NEWEST_CUDA: u32 = 13;
/// How to rebuild a program for the simulator with the CUDA 11.8 toolkit.
pub const REBUILD: &str = "coalprof profile --backend sim FILE.cu` (coalprof compiles it), or `nvcc -cudart shared -arch=sm_70 -lineinfo -ccbin g++-11` with the tool home's CUDA 11.8 `cuda11/bin/nvcc";

const INSTALL_HINT: &str = "run `coalprof setup sim` (it builds GPGPU-Sim and the CUDA 11.8 toolkit into the \
    tool home), or point coalprof at them with `COALPROF_GPGPUSIM` and `CUDA11_HOME`";

/// The C++ libraries of a whole CUDA toolkit that Debian's CUDA 11.8 ships apart and
/// `coalprof setup sim` adds (cooperative groups need libcu++): each with the header that
/// marks it and the header and macro that give its version.
pub const CXX_LIBRARIES: &[CxxLibrary] = &[
    CxxLibrary {
        name: "libcu++",
        header: "cuda/std/type_traits",
        version_in: ("cuda/std/detail/__config", "_LIBCUDACXX_CUDA_API_VERSION", [1_000_000, 1000, 1000]),
    },
    CxxLibrary {
        name: "CUB",
        header: "cub/cub.cuh",
        version_in: ("cub/version.cuh", "CUB_VERSION", [100_000, 100, 100]),
    },
    CxxLibrary {
        name: "Thrust",
        header: "thrust/version.h",
        version_in: ("thrust/version.h", "THRUST_VERSION", [100_000, 100, 100]),
    },
];

/// One of [`CXX_LIBRARIES`].
#[derive(Debug, Clone, Copy)]
pub struct CxxLibrary {
    /// `libcu++`, `CUB`, `Thrust`.
    pub name: &'static str,
    /// A header it has, relative to the toolkit's `include/`.
    pub header: &'static str,
    /// The header and macro of its version, and how the number encodes it: `[m, n, p]` for
    /// `MAJOR·m + MINOR·n + PATCH` with `PATCH < p` (libcu++'s `1008001` is 1.8.1:
    /// `[1_000_000, 1000, 1000]`; Thrust's and CUB's `101702` is 1.17.2: `[100_000, 100, 100]`).
    pub version_in: (&'static str, &'static str, [u64; 3]),
}

impl CxxLibrary {
    /// Whether the toolkit `cuda` has it.
    pub fn in_toolkit(&self, cuda: &Path) -> bool {
        cuda.join("include").join(self.header).is_file()
    }

    /// Its version in the toolkit `cuda` (`1.17.2`), if its version macro is readable.
    pub fn version(&self, cuda: &Path) -> Option<String> {
        let (file, name, [m, n, p]) = self.version_in;
        let text = std::fs::read_to_string(cuda.join("include").join(file)).ok()?;
        let v: u64 = text.lines().find_map(|l| {
            let rest = l.trim_start().strip_prefix("#define")?.trim_start().strip_prefix(name)?;
            rest.trim().parse().ok()
        })?;
        Some(format!("{}.{}.{}", v / m, (v % m) / n, v % p))
    }
}

/// A located GPGPU-Sim and the CUDA ≤ 11 toolkit it works with.
#[derive(Debug, Clone)]
pub struct GpgpuSim {
    /// The install folder: `lib/libcudart.so`, `configs/SM7_QV100/`, `VERSION`.
    pub root: PathBuf,
    /// The CUDA toolkit (`bin/nvcc`, `bin/cuobjdump`: the simulator extracts PTX with it).
    pub cuda: PathBuf,
    /// A CUDA 12+ toolkit (the project's nvcc's folder), for programs built with CUDA 12 or 13:
    /// its `cuobjdump` unpacks their compressed fatbins and its `ptxas` reads their PTX.
    pub newer: Option<PathBuf>,
}

impl GpgpuSim {
    /// The simulator under `root` with the toolkit under `cuda`, or why it cannot be used.
    pub fn locate(root: &Path, cuda: &Path) -> Result<GpgpuSim, ToolError> {
        let lib = root.join("lib/libcudart.so");
        let nvcc = cuda.join("bin/nvcc");
        let missing = [(&lib, "GPGPU-Sim's libcudart.so"), (&nvcc, "the CUDA 11 nvcc")]
            .into_iter()
            .filter(|(p, _)| !p.exists())
            .map(|(p, what)| format!("{what} ({})", p.display()))
            .collect::<Vec<_>>();
        if !missing.is_empty() {
            return Err(ToolError::NotFound { tool: "gpgpu-sim", searched: missing, hint: INSTALL_HINT.into() });
        }
        Ok(GpgpuSim { root: root.to_path_buf(), cuda: cuda.to_path_buf(), newer: None })
    }

    /// `GPGPU-Sim 4.2.0 (… + patches)`, as the install script recorded it.
    pub fn version(&self) -> String {
        std::fs::read_to_string(self.root.join("VERSION"))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|_| "GPGPU-Sim (version unknown)".into())
    }

    /// The nvcc that builds programs for the simulator.
    pub fn nvcc(&self) -> Nvcc {
        Nvcc { path: self.cuda.join("bin/nvcc") }
    }

    /// Compile a CUDA source into a program the simulator can run: its CUDA 11 nvcc, the
    /// configuration's architecture, the shared runtime it replaces, line info for `lines`, and
    /// the user's own arguments (`-I`, `-D`) last. No `-Werror`: the user's code, not ours.
    pub fn build_program(&self, source: &Path, output: &Path, extra: &[String]) -> Result<(), ToolError> {
        let flags: Vec<&str> = NVCC_FLAGS.iter().copied().chain(extra.iter().map(String::as_str)).collect();
        self.nvcc().compile_source(source, ARCH, output, &flags, "for the simulator")
    }

    /// The configuration's folder.
    pub fn config_dir(&self) -> PathBuf {
        self.root.join("configs").join(CONFIG)
    }

    /// Make `dir` a run folder: the GPU configuration copied in (so the folder says what ran).
    pub fn prepare(&self, dir: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for f in CONFIG_FILES {
            std::fs::copy(self.config_dir().join(f), dir.join(f))?;
        }
        Ok(())
    }

    /// Whether this build counts memory accesses in the functional mode (it has the patch that
    /// makes it; an older build writes no per-line statistics there).
    pub fn counts_functionally(&self) -> bool {
        self.version().contains(FUNCTIONAL_PATCH)
    }

    /// The toolkit the simulator runs `program` with (its `CUDA_INSTALL_PATH`), or why the
    /// program cannot run in it, naming the command that rebuilds it: the CUDA 11.8 toolkit
    /// for a CUDA ≤ 11 program (or one that cannot be told: a script that starts it), a CUDA
    /// 12+ toolkit for a CUDA 12 or 13 one; never a program with the runtime linked in.
    pub fn toolkit_for(&self, program: &Path) -> crate::error::Result<PathBuf> {
        let p = program.display();
        let version = match runtime(program) {
            Runtime::Static => {
                return Err(Error::usage(format!(
                    "`{p}` links the CUDA runtime statically (nvcc's default), so GPGPU-Sim cannot take its place: \
                     rebuild it with `-cudart shared` (with CUDA 11.8: `{REBUILD}`)"
                )))
            }
            Runtime::Shared(v) => v,
            Runtime::Unknown => return Ok(self.cuda.clone()),
        };
        let major = version.split('.').next().and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
        if major <= 11 {
            return Ok(self.cuda.clone());
        }
        let needs = format!("`{p}` is built with CUDA {major} (it loads libcudart.so.{version})");
        if major > NEWEST_CUDA {
            return Err(Error::usage(format!(
                "{needs}; GPGPU-Sim's runtime stands in for CUDA {NEWEST_CUDA} at most: rebuild it with `{REBUILD}`"
            )));
        }
        if !self.version().contains(CUDA12_PATCH) {
            return Err(Error::usage(format!(
                "{needs}, and the GPGPU-Sim in `{}` predates CUDA 12 support: run `coalprof setup sim` again, \
                 or rebuild the program with `{REBUILD}`",
                self.root.display()
            )));
        }
        let found = self.newer.as_ref().map(|t| (t, Nvcc { path: t.join("bin/nvcc") }.version()));
        match found {
            Some((t, Ok(v))) if v.split('.').next().and_then(|m| m.parse::<u32>().ok()) >= Some(major) => Ok(t.clone()),
            Some((t, v)) => Err(Error::usage(format!(
                "{needs}, but the CUDA toolkit beside coalprof's nvcc (`{}`, {}) is older: the simulator reads \
                 the program's fatbin and PTX with that toolkit's `cuobjdump` and `ptxas`; point `--nvcc` at a \
                 CUDA {major}+ nvcc, or rebuild the program with `{REBUILD}`",
                t.display(),
                v.map_or_else(|e| e.to_string(), |v| format!("CUDA {v}"))
            ))),
            None => Err(Error::usage(format!(
                "{needs}, and no CUDA {major}+ toolkit was found to read its fatbin and PTX (`cuobjdump`, `ptxas` \
                 beside nvcc; `scripts/install-tools.sh` puts one in `.tools/cuda-home`): install one, or rebuild \
                 the program with `{REBUILD}`"
            ))),
        }
    }

    /// The command that runs `program args` under the simulator in `dir`, in `mode`, with the
    /// toolkit `cuda` (see [`GpgpuSim::toolkit_for`]).
    pub fn command(
        &self,
        program: &Path,
        args: &[std::ffi::OsString],
        dir: &Path,
        (mode, cuda): (SimMode, &Path),
        timeout: Duration,
    ) -> Cmd {
        let mut cmd = Cmd::new(program)
            .args(args.iter().cloned())
            .env("LD_LIBRARY_PATH", self.root.join("lib"))
            .env("CUDA_INSTALL_PATH", cuda)
            .env("PTX_SIM_MODE_FUNC", mode.env_value())
            // Set, the simulator takes its PTX from `cuobjdump -xptx` alone (the files it parses,
            // left in the folder); unset, it also splits `cuobjdump -sass` output, which for
            // CUDA 11.8 programs finds no PTX section and aborts.
            .env("CUOBJDUMP_SIM_FILE", "jj")
            .timeout(Some(timeout));
        cmd.cwd = Some(dir.to_path_buf());
        cmd
    }

    /// Run `program args` under the simulator in `dir` (made a run folder first), in `mode` with
    /// the toolkit `cuda`, and return its log (also kept as `gpgpusim.log` there) and wall time. A program that fails,
    /// or a simulator that rejects it (`rejected` finds the line in the log that says so), is an
    /// error with the log's tail. What it left in `dir` is the caller's to read.
    pub fn run(
        &self,
        program: &Path,
        args: &[std::ffi::OsString],
        dir: &Path,
        how: (SimMode, &Path),
        timeout: Duration,
        rejected: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(String, Duration), ToolError> {
        self.prepare(dir)
            .map_err(|source| ToolError::Spawn { command: format!("prepare {}", dir.display()), source })?;
        let cmd = self.command(program, args, dir, how, timeout);
        let out = run_sync(&cmd, None)?;
        let log = format!("{}{}", out.stdout, out.stderr);
        let _ = std::fs::write(dir.join("gpgpusim.log"), &log);
        let failed = |what: String, out: &Captured| {
            let tail: Vec<&str> = log.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
            ToolError::failed(what, &cmd, out)
                .with_output(tail.join("\n"))
                .with_hint(format!("the whole log is `{}`", dir.join("gpgpusim.log").display()))
        };
        if let Some(line) = rejected(&log) {
            return Err(failed(format!("GPGPU-Sim rejected `{}`: {line}", program.display()), &out));
        }
        if !out.status.success() {
            return Err(failed(format!("`{}` failed under GPGPU-Sim", program.display()), &out));
        }
        Ok((log, out.elapsed))
    }

    /// Demangle C++ kernel names with the toolkit's `cu++filt` (one process for all); a name
    /// it cannot demangle, or a missing `cu++filt`, leaves the name as it is.
    pub fn demangle(&self, names: &[String]) -> Vec<String> {
        let mangled: Vec<&String> = names.iter().filter(|n| n.starts_with("_Z")).collect();
        if mangled.is_empty() {
            return names.to_vec();
        }
        let cmd = Cmd::new(self.cuda.join("bin/cu++filt"))
            .args(mangled.iter().map(|n| n.as_str()))
            .timeout(Some(Duration::from_secs(60)));
        let demangled: Vec<String> = match run_sync(&cmd, None) {
            Ok(out) if out.status.success() => out.stdout.lines().map(str::to_string).collect(),
            _ => return names.to_vec(),
        };
        if demangled.len() != mangled.len() {
            return names.to_vec();
        }
        let mut it = demangled.into_iter();
        names
            .iter()
            .map(|n| if n.starts_with("_Z") { it.next().unwrap_or_else(|| n.clone()) } else { n.clone() })
            .collect()
    }
}

/// How a program links the CUDA runtime, as its ELF says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runtime {
    /// `libcudart.so.<version>` in its dynamic section (`11.0`, `12`, `13`).
    Shared(String),
    /// Device code (`.nv_fatbin`) but no shared runtime: the runtime is linked in (nvcc's
    /// default, `-cudart static`).
    Static,
    /// Nothing to tell by: not an ELF (a script that starts the program), or no CUDA at all.
    Unknown,
}

/// How `program` links the CUDA runtime.
pub fn runtime(program: &Path) -> Runtime {
    use object::{Object, ObjectSection};
    let Ok(data) = std::fs::read(program) else { return Runtime::Unknown };
    let Ok(file) = object::File::parse(&*data) else { return Runtime::Unknown };
    let dynstr = file.section_by_name(".dynstr").and_then(|s| s.data().ok()).unwrap_or(&[]);
    let shared = (dynstr.split(|b| *b == 0))
        .filter_map(|s| std::str::from_utf8(s).ok())
        .find_map(|s| s.strip_prefix("libcudart.so.").map(str::to_string));
    match shared {
        Some(v) => Runtime::Shared(v),
        None if file.section_by_name(".nv_fatbin").is_some() => Runtime::Static,
        None => Runtime::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The version macros as the Debian packages' headers define them (libcu++ 1.8.1's
    /// `cuda/std/detail/__config`, Thrust's and CUB's 1.17.2 `version` headers).
    #[test]
    fn the_c_plus_plus_libraries_are_found_by_their_headers_and_versions_decoded() {
        let dir = tempfile::tempdir().unwrap();
        let cuda = dir.path();
        let write = |rel: &str, text: &str| {
            let f = cuda.join("include").join(rel);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        assert!(CXX_LIBRARIES.iter().all(|l| !l.in_toolkit(cuda)));
        write("cuda/std/type_traits", "");
        write("cuda/std/detail/__config", "#define _LIBCUDACXX_CUDA_API_VERSION 1008001\n");
        write("cub/cub.cuh", "");
        write("cub/version.cuh", "/** the version */\n#define CUB_VERSION 101702\n");
        write("thrust/version.h", "#define THRUST_VERSION_MAJOR 1\n#define THRUST_VERSION 101702\n");
        let got: Vec<(bool, Option<String>)> =
            CXX_LIBRARIES.iter().map(|l| (l.in_toolkit(cuda), l.version(cuda))).collect();
        let want = |v: &str| (true, Some(v.to_string()));
        assert_eq!(got, vec![want("1.8.1"), want("1.17.2"), want("1.17.2")]);
        // CUDA 12.2's own Thrust, 2.1.0, the same way.
        write("thrust/version.h", "#define THRUST_VERSION 200100\n");
        assert_eq!(CXX_LIBRARIES[2].version(cuda).as_deref(), Some("2.1.0"));
    }

    #[test]
    fn a_modes_name_is_the_one_sim_mode_takes() {
        use clap::ValueEnum;
        let names: Vec<String> = SimMode::value_variants().iter().map(|m| m.name()).collect();
        assert_eq!(names, ["functional", "timing"]);
    }

    #[test]
    fn a_missing_simulator_names_what_is_missing_and_the_install_script() {
        let dir = tempfile::tempdir().unwrap();
        let err = GpgpuSim::locate(&dir.path().join("sim"), &dir.path().join("cuda11")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("libcudart.so") && text.contains("nvcc"), "{text}");
        assert!(err.hint().unwrap().contains("coalprof setup sim"));
    }

    #[test]
    fn a_program_that_is_no_elf_cannot_be_judged() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("run.sh");
        std::fs::write(&script, "#!/bin/sh\nexec ./app\n").unwrap();
        assert_eq!(runtime(&script), Runtime::Unknown);
        // This test binary links no CUDA runtime at all: nothing to say either.
        assert_eq!(runtime(&std::env::current_exe().unwrap()), Runtime::Unknown);
        let sim = GpgpuSim { root: dir.path().into(), cuda: dir.path().join("cuda11"), newer: None };
        assert_eq!(sim.toolkit_for(&script).unwrap(), dir.path().join("cuda11"), "run with the CUDA 11 toolkit");
    }
}
