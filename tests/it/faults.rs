//! Faults: a crashing program, a hang, ncu killed mid-run, an unwritable output folder, Ctrl-C.
//! Each gets a clear message and its documented exit code, and leaves no process behind.
//! The ncu here is a fake shell script (a test seam: the faults are what it simulates).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::coalprof;

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn profile_with(ncu: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    coalprof()
        .env("COALPROF_NCU", ncu)
        .arg("profile")
        .args(extra)
        .arg("--out")
        .arg(out)
        .args(["--", "/opt/app", "arg"])
        .output()
        .unwrap()
}

#[test]
fn a_program_that_crashes_under_ncu_is_exit_3_with_its_code_and_output() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = script(dir.path(), "ncu", "echo 'Segmentation fault in kernel' >&2\necho '==ERROR== The application returned an error code (139).'\nexit 1");
    let out = profile_with(&ncu, dir.path(), &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("`/opt/app` failed under ncu (it returned the error code 139)"), "{e}");
    assert!(
        e.contains("Segmentation fault in kernel") && e.contains("command: "),
        "the error carries stderr and the command: {e}"
    );
}

#[test]
fn a_hang_is_killed_with_its_whole_process_group_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("grandchild-alive");
    // ncu starts a grandchild that would write the marker after 3 s, then hangs itself.
    let body = format!("(sleep 3; touch '{}') &\nsleep 60", marker.display());
    let ncu = script(dir.path(), "ncu", &body);
    let started = Instant::now();
    let out = profile_with(&ncu, dir.path(), &["--timeout", "1"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("did not finish within 1s and was killed with its process group"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists(), "a grandchild survived the timeout");
}

#[test]
fn ncu_killed_in_the_middle_is_exit_3_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let ncu = script(dir.path(), "ncu", "echo '==PROF== Profiling \"k\" - 0: 0%....'\nkill -9 $$");
    let out = profile_with(&ncu, dir.path(), &[]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("killed by a signal") || e.contains("signal: 9"), "{e}");
}

#[test]
fn an_output_folder_that_cannot_be_written_is_exit_3_naming_it() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let out = coalprof()
        .args(["run", "--pattern", "coalesced", "--backend", "model", "--size", "1M", "--out"])
        .arg(file.path().join("runs"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("cannot write") && e.contains(&file.path().display().to_string()), "{e}");
}

#[test]
fn ctrl_c_kills_the_profiled_program_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("child-alive");
    let body = format!("(sleep 4; touch '{}') &\nsleep 60", marker.display());
    let ncu = script(dir.path(), "ncu", &body);
    let bin = assert_cmd::cargo::cargo_bin("coalprof");
    let mut child = Command::new(bin)
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--out"])
        .arg(dir.path())
        .args(["--", "/opt/app"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: sending SIGINT to a child we own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut e = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut e).unwrap();
    assert_eq!(status.code(), Some(130), "{e}");
    assert!(e.contains("interrupted"), "{e}");
    std::thread::sleep(Duration::from_secs(5));
    assert!(!marker.exists(), "the profiled program's group outlived Ctrl-C");
}

/// Ctrl-C during the model phase of a long run (no child process running): coalprof stops
/// within a second, exit 130, and the patterns predicted before it are saved.
#[test]
fn ctrl_c_during_the_model_stops_within_a_second_keeping_the_finished_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("coalprof");
    let mut child = Command::new(bin)
        .args(["run", "--all", "--backend", "model", "--size", "8G", "--format", "json", "--out"])
        .arg(dir.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first pattern to be saved, so the interrupt lands inside the model.
    let results = || {
        let run = std::fs::read_dir(dir.path()).ok()?.next()?.ok()?.path();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(run.join("results.json")).ok()?).ok()?;
        Some(v["rows"].as_array()?.len())
    };
    let waited = Instant::now();
    while results().unwrap_or(0) == 0 {
        assert!(waited.elapsed() < Duration::from_secs(60), "no pattern saved within a minute");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be interrupted");
        std::thread::sleep(Duration::from_millis(20));
    }
    let saved = results().unwrap();
    // SAFETY: sending SIGINT to a child we own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = Instant::now();
    let status = child.wait().unwrap();
    let took = sent.elapsed();
    let mut e = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut e).unwrap();
    assert_eq!(status.code(), Some(130), "{e}");
    assert!(took < Duration::from_secs(1), "took {took:?} to stop");
    assert_eq!(e.lines().filter(|l| l.starts_with("error: ")).count(), 1, "{e}");
    let kept = results().unwrap();
    assert!(kept >= saved && kept < 42, "the finished patterns are on disk ({saved} then {kept} rows)");
}

#[test]
fn a_full_disk_is_exit_3_naming_the_file_and_leaves_no_partial_file() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("coalprof"));
    cmd.args(["run", "--pattern", "stride", "--backend", "model", "--size", "1M", "--run-id", "full", "--out"])
        .arg(dir.path());
    // A file-size limit of 2 KiB stands in for a full disk: writes past it fail (EFBIG), the
    // way they fail with ENOSPC, and SIGXFSZ is ignored so the write reports the error.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 2048, rlim_max: 2048 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("cannot write") && e.contains("results.json"), "{e}");
    // What was written before the disk filled (the small run.json) is whole; nothing is half.
    let left: Vec<String> = (std::fs::read_dir(dir.path().join("full")).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|f| f == "run.json"), "no partial file is left behind: {left:?}");
    if !left.is_empty() {
        let record = std::fs::read(dir.path().join("full/run.json")).unwrap();
        serde_json::from_slice::<serde_json::Value>(&record).expect("run.json is whole");
    }
}
