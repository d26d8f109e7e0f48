//! GPGPU-Sim: a CUDA program's PTX executed on the CPU with a model of the GPU's memory system
//! (`run --backend sim`, `profile --backend sim`). The simulator is a `libcudart.so` that the
//! program loads in place of NVIDIA's (so the program must be built with CUDA ≤ 11.x and
//! `-cudart shared`); it runs in a folder holding a GPU configuration and writes its per-PTX-line
//! statistics there. `scripts/install-sim.sh` builds it into `.tools/gpgpu-sim/`, beside the
//! CUDA 11.8 toolkit in `.tools/cuda11/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::nvcc::Nvcc;
use super::process::{run_sync, Captured, Cmd};
use super::ToolError;

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

const INSTALL_HINT: &str = "run `coalprof setup sim` (it builds GPGPU-Sim and the CUDA 11.8 toolkit into the \
    tool home), or point coalprof at them with `COALPROF_GPGPUSIM` and `CUDA11_HOME`";

/// A located GPGPU-Sim and the CUDA ≤ 11 toolkit it works with.
#[derive(Debug, Clone)]
pub struct GpgpuSim {
    /// The install folder: `lib/libcudart.so`, `configs/SM7_QV100/`, `VERSION`.
    pub root: PathBuf,
    /// The CUDA toolkit (`bin/nvcc`, `bin/cuobjdump`: the simulator extracts PTX with it).
    pub cuda: PathBuf,
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
        Ok(GpgpuSim { root: root.to_path_buf(), cuda: cuda.to_path_buf() })
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
        let cmd = Cmd::new(self.cuda.join("bin/nvcc"))
            .arg(format!("-arch={ARCH}"))
            .args(["-lineinfo", "-O3"])
            .args(NVCC_FLAGS.iter().copied())
            .args(extra.iter().map(String::as_str))
            .arg("-o")
            .arg(output)
            .arg(source)
            .timeout(Some(Duration::from_secs(600)));
        let out = run_sync(&cmd, None)?;
        if out.status.success() {
            return Ok(());
        }
        let diagnostics = format!("{}{}", out.stdout, out.stderr);
        Err(ToolError::failed(format!("`{}` does not compile for the simulator", source.display()), &cmd, &out)
            .with_output(diagnostics))
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

    /// The command that runs `program args` under the simulator in `dir`.
    pub fn command(&self, program: &Path, args: &[std::ffi::OsString], dir: &Path, timeout: Duration) -> Cmd {
        let mut cmd = Cmd::new(program)
            .args(args.iter().cloned())
            .env("LD_LIBRARY_PATH", self.root.join("lib"))
            .env("CUDA_INSTALL_PATH", &self.cuda)
            // Set, the simulator takes its PTX from `cuobjdump -xptx` alone (the files it parses,
            // left in the folder); unset, it also splits `cuobjdump -sass` output, which for
            // CUDA 11.8 programs finds no PTX section and aborts.
            .env("CUOBJDUMP_SIM_FILE", "jj")
            .timeout(Some(timeout));
        cmd.cwd = Some(dir.to_path_buf());
        cmd
    }

    /// Run `program args` under the simulator in `dir` (made a run folder first) and return its
    /// log (also kept as `gpgpusim.log` there) and wall time. A program that fails, or a
    /// simulator that rejects it (`rejected` finds the line in the log that says so), is an
    /// error with the log's tail. What it left in `dir` is the caller's to read.
    pub fn run(
        &self,
        program: &Path,
        args: &[std::ffi::OsString],
        dir: &Path,
        timeout: Duration,
        rejected: &dyn Fn(&str) -> Option<String>,
    ) -> Result<(String, Duration), ToolError> {
        self.prepare(dir)
            .map_err(|source| ToolError::Spawn { command: format!("prepare {}", dir.display()), source })?;
        let cmd = self.command(program, args, dir, timeout);
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

/// Why `program` cannot run under the simulator, when its ELF says so: it links the CUDA
/// runtime statically (nvcc's default), or a CUDA 12+ one. `None` when it looks fine or
/// cannot be told (a script that starts the program, say).
pub fn unsuitable(program: &Path) -> Option<String> {
    use object::{Object, ObjectSection};
    let data = std::fs::read(program).ok()?;
    let file = object::File::parse(&*data).ok()?;
    let dynstr = file.section_by_name(".dynstr").and_then(|s| s.data().ok()).unwrap_or(&[]);
    let libs: Vec<String> = dynstr
        .split(|b| *b == 0)
        .filter_map(|s| std::str::from_utf8(s).ok())
        .filter(|s| s.starts_with("libcudart.so"))
        .map(str::to_string)
        .collect();
    // Device code without a shared runtime to replace: the runtime is linked in.
    let has_device_code = file.section_by_name(".nv_fatbin").is_some();
    let p = program.display();
    match libs.iter().find_map(|l| l.strip_prefix("libcudart.so.")) {
        Some(v) if v.split('.').next().and_then(|m| m.parse::<u32>().ok()).is_some_and(|m| m > 11) => Some(format!(
            "`{p}` is built with CUDA {v} (it needs libcudart.so.{v}); GPGPU-Sim runs programs built with CUDA 11.8 or older: \
             rebuild it with `.tools/cuda11/bin/nvcc -cudart shared -arch=sm_70`"
        )),
        Some(_) => None,
        None if has_device_code => Some(format!(
            "`{p}` links the CUDA runtime statically (nvcc's default), so GPGPU-Sim cannot take its place: \
             rebuild it with `-cudart shared` (CUDA 11.8 or older: `.tools/cuda11/bin/nvcc -cudart shared -arch=sm_70`)"
        )),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(unsuitable(&script), None);
        // This test binary links no CUDA runtime at all: nothing to say either.
        assert_eq!(unsuitable(&std::env::current_exe().unwrap()), None);
    }
}
