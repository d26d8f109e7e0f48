//! Shared test helpers: the binary under test, fixture paths, and the project-local tools
//! (tests that need a tool that is absent skip loudly, saying why).

use std::path::{Path, PathBuf};

use assert_cmd::Command;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(rel: &str) -> PathBuf {
    root().join("tests/fixtures").join(rel)
}

/// `coalprof` with a clean environment: no colour, no tool overrides, logs quiet, and a tool
/// home that does not exist (so what the machine's user installed with `coalprof setup` never
/// changes a test; inside the checkout the project's `.tools/` is found).
pub fn coalprof() -> Command {
    let mut c = Command::cargo_bin("coalprof").expect("the binary is built");
    c.env_remove("COALPROF_NCU")
        .env_remove("COALPROF_NVCC")
        .env_remove("COALPROF_LOG")
        .env_remove("CUDA_HOME")
        .env_remove("CUDA_PATH")
        .env_remove("COALPROF_GPGPUSIM")
        .env_remove("CUDA11_HOME")
        .env_remove("COALPROF_PYTHON")
        .env("COALPROF_HOME", root().join("target/no-tool-home"))
        .env("NO_COLOR", "1")
        .current_dir(root());
    c
}

/// The project's ncu (installed by `scripts/install-tools.sh`), or `None` with a loud notice.
pub fn real_ncu(test: &str) -> Option<PathBuf> {
    tool(test, ".tools/bin/ncu")
}

/// The project's nvcc, or `None` with a loud notice.
pub fn real_nvcc(test: &str) -> Option<PathBuf> {
    tool(test, ".tools/cuda-home/bin/nvcc")
}

/// The project's nvdisasm (beside nvcc), or `None` with a loud notice.
pub fn real_nvdisasm(test: &str) -> Option<PathBuf> {
    tool(test, ".tools/cuda-home/bin/nvdisasm")
}

/// The Python of the test venv that holds NVIDIA's `ncu_report` (the native reader's oracle).
pub fn real_ncu_report(test: &str) -> Option<PathBuf> {
    tool(test, ".tools/ncu-report/bin/python")
}

/// Every real `.ncu-rep` fixture, sorted by name.
pub fn ncu_rep_fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture("ncu-rep"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ncu-rep"))
        .collect();
    v.sort();
    v
}

/// Any project-local tool under the checkout (`.tools/sarif/bin/python`), or `None` with a loud notice.
pub fn tool_path(test: &str, rel: &str) -> Option<PathBuf> {
    tool(test, rel)
}

fn tool(test: &str, rel: &str) -> Option<PathBuf> {
    let p = root().join(rel);
    if p.exists() {
        Some(p)
    } else {
        skipped(test, &format!("{} is missing; run scripts/install-tools.sh (CI does)", p.display()));
        None
    }
}

/// Parse stdout as JSON.
pub fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

/// Run a command that must succeed and return its stdout (failing with its stderr otherwise).
pub trait OkStdout {
    fn ok_stdout(&mut self) -> Vec<u8>;
}

impl OkStdout for assert_cmd::Command {
    fn ok_stdout(&mut self) -> Vec<u8> {
        self.assert().success().get_output().stdout.clone()
    }
}

/// A `PATH` of a machine without a GPU and without CUDA: a fake `nvidia-smi` that finds no
/// device (tests/fake_gpu/no-gpu/), then the system's own folders. A test of "no GPU" must
/// not trust the host to have none.
pub fn no_gpu_path() -> String {
    format!("{}:/usr/bin:/bin", root().join("tests/fake_gpu/no-gpu").display())
}

/// Say loudly that `test` did not run and why: straight to the process's stderr, which the test
/// harness does not capture (its `eprintln!` capture would hide the line of a passing test).
/// Where every tool must be there (`COALPROF_REQUIRE_TOOLS`, set by scripts/test.sh in CI), a
/// skip is a failure: a half-failed install cannot pass for a green run.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write;
    if std::env::var_os("COALPROF_REQUIRE_TOOLS").is_some_and(|v| !v.is_empty()) {
        panic!("{test} would be skipped, but COALPROF_REQUIRE_TOOLS is set: {why}");
    }
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {test}: {why}");
}

/// Debian's `chromium` on PATH (installed by `scripts/install-tools.sh` where it runs as root),
/// or `None` with a loud notice.
pub fn chromium(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|d| d.join("chromium")).find(|p| p.is_file());
    if found.is_none() {
        skipped(test, "chromium is not on PATH; run scripts/install-tools.sh as root (CI does)");
    }
    found
}

/// An `.ncu-rep` written by the fake ncu (`tests/fake_gpu/ncu --fake-write-report`) from the
/// JSON spec `spec` (text, so that a test may write what JSON cannot: a bare `NaN`), which is
/// kept beside it as `report` with a `.json` extension.
/// One launch for [`fake_report`]'s spec: `kernel` (its mangled name `_Z<len><kernel>v`) shown as
/// `demangled`, 512 global load requests of 128 bytes (32 lanes × 4 B: 4 sectors ideal) that take
/// `sectors` sectors each.
pub fn fake_load_launch(kernel: &str, demangled: &str, sectors: u32) -> serde_json::Value {
    serde_json::json!({
        "kernel": kernel,
        "mangled": format!("_Z{}{kernel}v", kernel.len()),
        "demangled": demangled,
        "grid": [64, 1, 1],
        "block": [256, 1, 1],
        "metrics": {
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 512,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 512 * sectors,
            "smsp__sass_data_bytes_mem_global_op_ld.sum": 512 * 128,
            "smsp__sass_inst_executed_op_global_ld.sum": 512
        }
    })
}

pub fn fake_report(spec: &str, report: &Path) -> PathBuf {
    let spec_path = report.with_extension("json");
    std::fs::write(&spec_path, spec).unwrap();
    let o = std::process::Command::new(root().join("tests/fake_gpu/ncu"))
        .arg("--fake-write-report")
        .arg(&spec_path)
        .arg(report)
        .output()
        .unwrap();
    assert!(o.status.success(), "the fake ncu's writer: {}", String::from_utf8_lossy(&o.stderr));
    report.to_path_buf()
}
