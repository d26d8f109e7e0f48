//! `run --slurm` through a real Slurm: Debian's slurm-wlm on this machine, one node on
//! loopback, brought up by `scripts/slurm-local.sh start` (scripts/test.sh does it and exports
//! `SLURM_CONF`). `--backend model` goes through sbatch and srun end to end and must give the
//! rows of a local run; a cancelled task is reported with its Slurm state, the rest kept.
//! Without a cluster these tests skip loudly.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{coalprof, json, OkStdout};

/// `SLURM_CONF` of a running cluster, or `None` with a loud notice.
fn cluster(test: &str) -> Option<PathBuf> {
    let conf = std::env::var_os("SLURM_CONF").map(PathBuf::from).filter(|c| c.is_file());
    let sinfo = conf.as_ref().and_then(|_| Command::new("sinfo").arg("--noheader").output().ok());
    match (conf, sinfo) {
        (Some(c), Some(o)) if o.status.success() => Some(c),
        _ => {
            crate::util::skipped(
                test,
                "no Slurm cluster (run `scripts/slurm-local.sh start` and export the SLURM_CONF it prints; \
                 scripts/test.sh does)",
            );
            None
        }
    }
}

fn rows_without_placement(results: &Value) -> Vec<Value> {
    (results["rows"].as_array().unwrap().iter())
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("placement");
            r
        })
        .collect()
}

fn run_model(out: &Path, id: &str, extra: &[&str]) -> assert_cmd::Command {
    let mut c = coalprof();
    c.args(["run", "--all", "--backend", "model", "--size", "16M", "--format", "json", "--run-id", id, "--out"])
        .arg(out)
        .args(extra);
    c
}

#[test]
fn slurm_model_run_through_a_real_cluster_matches_the_local_run() {
    let test = "slurm_model_run_through_a_real_cluster_matches_the_local_run";
    if cluster(test).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let local = json(&run_model(tmp.path(), "local", &[]).ok_stdout());
    let started = Instant::now();
    let out = run_model(tmp.path(), "slurm", &["--slurm"]).output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    eprintln!("{test}: {} tasks through Slurm in {:.1} s", local["rows"].as_array().unwrap().len(), took.as_secs_f64());
    let patterns = coalprof::patterns::Pattern::ALL.len();
    assert!(err.contains(&format!("of {patterns} tasks")), "progress from squeue: {err}");
    let merged = json(&out.stdout);
    assert_eq!(rows_without_placement(&merged), rows_without_placement(&local), "the same rows as a local run");
    for r in merged["rows"].as_array().unwrap() {
        assert_eq!(r["placement"]["partition"], "debug", "{r}");
        assert!(r["placement"]["node"].as_str().is_some_and(|n| !n.is_empty()), "{r}");
    }
    let tasks = merged["provenance"]["settings"]["slurm"]["tasks"].as_object().unwrap();
    assert_eq!(tasks.len(), patterns);
    assert!(tasks.values().all(|t| t["state"] == "COMPLETED" && t["exit_code"] == "0:0"), "{tasks:?}");

    // The merged run folder: the tasks' scripts and logs, their runs, one results.json that
    // `check` and `compare` read.
    let run = tmp.path().join("slurm");
    for f in ["slurm/stride.sh", "slurm/stride.json", "slurm/stride.log", "tasks/stride/results.json", "results.json"] {
        assert!(run.join(f).is_file(), "{f} is missing");
    }
    // The task runs with its run's settings, from a file, not re-spelled flags.
    let script = std::fs::read_to_string(run.join("slurm/stride.sh")).unwrap();
    assert!(script.contains("srun --ntasks=1") && script.contains(" task "), "{script}");
    let exec = script.lines().find(|l| l.starts_with("exec ")).unwrap();
    assert_eq!(exec.matches(" --").count(), 1, "no flag but srun's --ntasks: {exec}");
    let settings = json(&std::fs::read(run.join("slurm/stride.json")).unwrap());
    let task = &settings["run"];
    assert_eq!((task["patterns"][0].as_str(), task["sizing"]["bytes"].as_u64()), (Some("stride"), Some(16 << 20)));
    assert_eq!(settings["global"]["reader"], "native", "{settings}");
    coalprof().arg("check").arg(&run).assert().code(0);
    let cmp =
        json(&coalprof().args(["compare", "--format", "json"]).arg(tmp.path().join("local")).arg(&run).ok_stdout());
    for r in cmp["rows"].as_array().unwrap() {
        assert_eq!(r["values"][0], r["values"][1], "{r}");
    }
}

/// The job ids of this test's held tasks, by job name, once sbatch has queued both.
fn held_jobs(run_id: &str, names: &[&str]) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = Command::new("squeue").args(["--noheader", "--format=%i|%j|%o"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let found: Vec<(String, String)> = (text.lines())
            .filter(|l| l.contains(run_id))
            .filter_map(|l| {
                let f: Vec<&str> = l.split('|').collect();
                Some((f.first()?.trim().to_string(), f.get(1)?.trim().trim_start_matches("coalprof-").to_string()))
            })
            .collect();
        if names.iter().all(|n| found.iter().any(|(_, name)| name == n)) {
            return found;
        }
        assert!(Instant::now() < deadline, "the held tasks never showed in squeue: {text}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn slurm_a_cancelled_task_is_reported_with_its_state_and_log_and_the_rest_kept() {
    let test = "slurm_a_cancelled_task_is_reported_with_its_state_and_log_and_the_rest_kept";
    if cluster(test).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Held tasks wait until the test releases one and cancels the other.
    let run_id = format!("held-{}", std::process::id());
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("coalprof"));
    cmd.args(["run", "--pattern", "stride,offset", "--backend", "model", "--size", "16M", "--format", "json"])
        .args(["--slurm", "--slurm-arg=--hold", "--run-id", &run_id, "--out"])
        .arg(tmp.path())
        .env("NO_COLOR", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    let jobs = held_jobs(&run_id, &["stride", "offset"]);
    let id = |n: &str| jobs.iter().find(|(_, name)| name == n).unwrap().0.clone();
    assert!(Command::new("scancel").arg(id("offset")).status().unwrap().success());
    assert!(Command::new("scontrol").args(["release", &id("stride")]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let expected = format!("error: slurm task `offset` (job {}) ended CANCELLED", id("offset"));
    assert!(err.contains(&expected), "{err}");
    assert!(err.contains("its log `"), "{err}");
    let results = json(&out.stdout);
    let patterns: Vec<&str> =
        results["rows"].as_array().unwrap().iter().map(|r| r["pattern"].as_str().unwrap()).collect();
    assert!(!patterns.is_empty() && patterns.iter().all(|p| *p == "stride"), "{patterns:?}");
    let saved = json(&std::fs::read(tmp.path().join(&run_id).join("results.json")).unwrap());
    assert_eq!(saved["rows"], results["rows"]);
}

#[test]
fn slurm_without_sbatch_is_exit_4_and_slurm_flags_need_slurm() {
    let tmp = tempfile::tempdir().unwrap();
    let out = coalprof()
        .env("PATH", tmp.path())
        .args(["run", "--pattern", "stride", "--backend", "model", "--slurm", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: `sbatch` not found"), "{err}");
    assert!(err.contains("hint: `--slurm` needs Slurm's client commands on PATH"), "{err}");
    let partition = coalprof().args(["run", "--pattern", "stride", "--partition", "gpu"]).output().unwrap();
    assert_eq!(partition.status.code(), Some(2), "--partition without --slurm is a usage error");
    let both = coalprof().args(["run", "--pattern", "stride", "--slurm", "--gpus", "all"]).output().unwrap();
    assert_eq!(both.status.code(), Some(2), "--gpus and --slurm exclude each other");
}

/// `profile --per-rank -- srun -n 2 PROGRAM` through the real cluster: srun starts ncu (the
/// fake that replays a real report, tests/it/profile.rs) once per task, each report is named by
/// the task's `SLURM_PROCID`, and the rows of the two ranks come back, each with its rank.
#[test]
fn slurm_srun_per_rank_profile_gives_one_report_per_task_with_its_rank() {
    let Some(_) = cluster("slurm_srun_per_rank_profile_gives_one_report_per_task_with_its_rank") else { return };
    let dir = tempfile::tempdir().unwrap();
    let ncu = crate::profile::fake_ncu(
        dir.path(),
        &crate::util::fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep"),
    );
    let out = coalprof()
        .env("COALPROF_NCU", &ncu)
        .args(["profile", "--per-rank", "--format", "json", "--out"])
        .arg(dir.path().join("runs"))
        .args(["--", "srun", "-n", "2", "--time", "1", "/bin/true"])
        .timeout(Duration::from_secs(120))
        .ok_stdout();
    let v = json(&out);
    let ranks: Vec<u64> = v["rows"].as_array().unwrap().iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [0, 1], "{v:#}");
    assert_eq!(v["provenance"]["settings"]["launcher"], "srun -n 2 --time 1");
    let run = std::fs::read_dir(dir.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    assert!(run.join("rank-0.ncu-rep").is_file() && run.join("rank-1.ncu-rep").is_file());
}

/// Ctrl-C while the tasks wait in the real cluster's queue: coalprof cancels its jobs, says
/// so, and stops with exit 130 and the run folder saved: the same loop as a local run.
#[test]
fn slurm_ctrl_c_cancels_the_queued_tasks_with_exit_130() {
    let test = "slurm_ctrl_c_cancels_the_queued_tasks_with_exit_130";
    if cluster(test).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let run_id = format!("ctrl-c-{}", std::process::id());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coalprof"))
        .args(["run", "--pattern", "stride,offset", "--backend", "model", "--size", "16M"])
        .args(["--slurm", "--slurm-arg=--hold", "--run-id", &run_id, "--out"])
        .arg(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let jobs = held_jobs(&run_id, &["stride", "offset"]);
    // SAFETY: sending SIGINT to a child we own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("slurm: cancelled job"), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line, the interruption: {err}");
    // Cancelled: no longer pending in the queue.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out =
            Command::new("squeue").args(["--noheader", "--states=PENDING,RUNNING", "--format=%i"]).output().unwrap();
        let open = String::from_utf8_lossy(&out.stdout).into_owned();
        if jobs.iter().all(|(id, _)| !open.lines().any(|l| l.trim() == id)) {
            break;
        }
        assert!(Instant::now() < deadline, "the held jobs were not cancelled: {open}");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(tmp.path().join(&run_id).join("results.json").is_file(), "the run folder is saved");
}
