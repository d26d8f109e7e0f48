//! `coalprof setup`: `--dry-run` plans every step and writes nothing, a second run against an
//! installed home says everything is there (the checkout's `.tools/`, read only), and a failing
//! `setup sim` exits 3 with one `error:` line and leaves nothing behind.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{coalprof, root, skipped};

/// coalprof with the tool home at `home` and none of the variables setup reads from the
/// caller's environment.
fn setup_in(home: &Path, user_home: &Path) -> assert_cmd::Command {
    let mut c = coalprof();
    c.env("COALPROF_HOME", home)
        .env("HOME", user_home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("CUDA11_HOME")
        .env_remove("COALPROF_GPGPUSIM_SRC")
        .arg("setup");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn dry_run_in_a_fresh_home_lists_every_step_and_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let out = setup_in(&home, d.path()).arg("--dry-run").assert().success().get_output().clone();
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    // One line per step: cuda, ncu, then the simulator's build dependencies, toolkit, the
    // toolkit's C++ libraries and build.
    let want = [
        "cuda: nvcc, nvdisasm, cuobjdump",
        "ncu: ncu 2022.3",
        "sim: GPGPU-Sim's build dependencies",
        "sim: the CUDA 11.8 toolkit",
        "sim: CUDA 11.8's C++ libraries (libcu++, CUB, Thrust)",
        "sim: GPGPU-Sim:",
    ];
    assert_eq!(lines.len(), want.len(), "{stdout}");
    for (line, start) in lines.iter().zip(want) {
        assert!(line.starts_with(start), "`{line}` should start with `{start}`");
        assert!(line.contains(": would ") || line.contains(": already there") || line.contains(": cannot: "), "{line}");
    }
    // Nothing of the fresh home is there, so every install step would run, each saying where.
    for line in [lines[0], lines[1], lines[3], lines[4], lines[5]] {
        assert!(line.contains(": would ") && line.contains(&home.display().to_string()), "{line}");
    }
    assert!(!home.exists(), "--dry-run created the tool home");
    assert_eq!(text(&out.stderr), "", "a dry run prints its plan on stdout only");
}

/// `setup cuda ncu` against the checkout's `.tools/` (what `scripts/install-tools.sh` installed
/// through the same code): every step is already there, nothing is written, and it is quick.
#[test]
fn a_second_setup_says_everything_is_there_and_changes_nothing() {
    let tools = root().join(".tools");
    if !tools.join("cuda-home/bin/nvcc").exists() || !tools.join("bin/ncu").exists() {
        skipped(
            "a_second_setup_says_everything_is_there",
            ".tools/ has no nvcc or ncu; run scripts/install-tools.sh (CI does)",
        );
        return;
    }
    let links = || [tools.join("cuda-home"), tools.join("bin/ncu")].map(|l| std::fs::read_link(l).ok());
    let before = links();
    let d = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = setup_in(&tools, d.path()).args(["cuda", "ncu"]).assert().success().get_output().clone();
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    let steps: Vec<&str> = stderr.lines().filter(|l| l.starts_with("cuda: ") || l.starts_with("ncu: ")).collect();
    assert_eq!(steps.len(), 2, "{stderr}");
    for l in steps {
        assert!(l.contains("already there"), "{l}");
    }
    assert!(!stderr.contains("installed in"), "{stderr}");
    assert_eq!(links(), before, "the links were rewritten");
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

/// A corrupt source archive: exit 3, one `error:` line naming it with a `hint:`, and the tool
/// home holds no `gpgpu-sim` (nothing at all: the source is checked before any step runs).
#[test]
fn a_failing_setup_sim_exits_3_and_leaves_no_simulator_behind() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let archive = d.path().join("corrupt.tar.gz");
    // A gzip header, then garbage: what a download cut short by a proxy looks like.
    std::fs::write(&archive, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03not a tar stream at all").unwrap();
    let mut c = setup_in(&home, d.path());
    c.arg("sim").env("COALPROF_GPGPUSIM_SRC", &archive);
    let cuda11 = root().join(".tools/cuda11");
    if cuda11.join("bin/nvcc").exists() {
        c.env("CUDA11_HOME", &cuda11);
    }
    let out = c.assert().code(3).get_output().clone();
    let stderr = text(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(stderr.lines().any(|l| l.starts_with("hint: ")), "{stderr}");
    if !errors[0].contains("build dependencies are missing") {
        assert!(errors[0].contains(&archive.display().to_string()), "{stderr}");
    }
    assert!(!home.join("gpgpu-sim").exists());
    let left: Vec<_> =
        std::fs::read_dir(&home).map(|r| r.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "the failed setup left {left:?}");
}

#[test]
fn without_any_home_setup_is_a_usage_error() {
    let mut c = coalprof();
    c.env_remove("COALPROF_HOME").env_remove("XDG_DATA_HOME").env_remove("HOME").args(["setup", "--dry-run"]);
    let out = c.assert().code(2).get_output().clone();
    assert!(text(&out.stderr).contains("COALPROF_HOME"), "{}", text(&out.stderr));
}

/// `setup triton`: in a fresh home the dry run plans the pinned pip install and writes nothing;
/// against a home whose `triton/` is a Python environment with Triton (the tests' own, linked
/// in), it says it is there with that Triton's version, and `doctor` finds it in the tool home.
#[test]
fn setup_triton_plans_the_pinned_install_and_finds_an_installed_one() {
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("home");
    let out = setup_in(&home, d.path()).args(["triton", "--dry-run"]).assert().success().get_output().clone();
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(
        lines[0].starts_with("triton: Triton and numpy (no torch): would pip install triton==3.9.0 numpy"),
        "{stdout}"
    );
    assert!(lines[0].contains(&home.join("triton").display().to_string()), "{stdout}");
    assert!(!home.exists(), "--dry-run created the tool home");
    // `setup` alone (all) leaves Triton out: it is a gigabyte no other command needs.
    let all = setup_in(&home, d.path()).arg("--dry-run").assert().success().get_output().stdout.clone();
    assert!(!text(&all).contains("triton"), "{}", text(&all));

    let venv = match std::env::var_os("COALPROF_TEST_PYTHON") {
        Some(p) => Path::new(&p).parent().and_then(Path::parent).unwrap().to_path_buf(),
        None => root().join(".tools/triton"),
    };
    if !venv.join("bin/python3").exists() {
        skipped("setup_triton_plans_the_pinned_install_and_finds_an_installed_one", "no Python with Triton");
        return;
    }
    let version = std::process::Command::new(venv.join("bin/python3"))
        .args(["-c", "import importlib.metadata as m; print(m.version('triton'))"])
        .output()
        .unwrap();
    let version = text(&version.stdout).trim().to_string();
    std::fs::create_dir_all(&home).unwrap();
    std::os::unix::fs::symlink(&venv, home.join("triton")).unwrap();
    let out = setup_in(&home, d.path()).args(["triton", "--dry-run"]).assert().success().get_output().clone();
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!("triton: Triton and numpy (no torch): already there: triton {version} in")),
        "{stdout}"
    );
    // `doctor` finds it in the tool home (after COALPROF_PYTHON and coalprof's own environment,
    // neither of which a cargo-built coalprof with the variable unset has).
    let out = coalprof()
        .env("COALPROF_HOME", &home)
        .env_remove("COALPROF_PYTHON")
        .env("PATH", crate::util::no_gpu_path())
        .arg("doctor")
        .output()
        .unwrap();
    let doctor = text(&out.stdout);
    let line =
        doctor.lines().find(|l| l.split_whitespace().nth(1) == Some("triton")).unwrap_or_else(|| panic!("{doctor}"));
    assert!(line.starts_with(&format!("ok   triton     {version}")), "{line}");
    assert!(
        line.contains(&home.join("triton/bin/python3").display().to_string()) && line.contains("(from the tool home)"),
        "{line}"
    );
}
