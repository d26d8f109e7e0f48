//! `run --slurm`: the run as Slurm jobs. One task per pattern and partition (one partition per
//! GPU type gives the cross-GPU table), each a batch script in the run folder that `srun`s this
//! coalprof on its node with the same settings, into `tasks/<task>/` of the run folder (which
//! must be on storage the nodes share). coalprof follows the tasks with `squeue`, reads each
//! finished task's state, exit code and node from `scontrol` (or `sacct`), and merges the
//! tasks' rows into one run that `compare` and `check` read, every row naming its partition and
//! node. A failed or cancelled task is reported with its Slurm state and the end of its log; the
//! other tasks' rows are kept. Ctrl-C cancels the tasks still queued or running.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::import::read_results_json;
use crate::patterns::Pattern;
use crate::render::safe_name;
use crate::results::{Placement, Results, Row};
use crate::runtime::runtime;
use crate::settings::{Backend, Common, RunSettings, SlurmSettings};
use crate::store::RunDir;
use crate::tools::process::shell_quote;
use crate::tools::slurm::{Job, Slurm};
use crate::tools::ToolError;

/// One submitted task.
struct Task {
    name: String,
    partition: Option<String>,
    log: PathBuf,
    results: PathBuf,
    job: u64,
}

/// Submit, follow and merge the tasks; the merged results (saved in the run folder) and the exit
/// code the failed tasks call for, for the caller to print.
pub(crate) fn run(common: &Common, s: &RunSettings, slurm: &SlurmSettings) -> Result<(Results, Exit)> {
    let sbatch = common.tools.sbatch().map_err(|e| Error::unavailable(e.to_string(), e.hint().unwrap_or_default()))?;
    let tools = Slurm { bin: sbatch.path.parent().unwrap_or(Path::new("/")).to_path_buf() };
    let started = Instant::now();
    let dir =
        RunDir::create(&s.out_base, s.run_id.as_deref(), &format!("slurm-{}", backend_name(s.backend)), &common.style)?;
    let run = std::path::absolute(&dir.path).map_err(|e| Error::write(&dir.path, e))?;
    for sub in ["slurm", "tasks"] {
        std::fs::create_dir_all(run.join(sub)).map_err(|e| Error::write(run.join(sub), e))?;
    }
    let partitions: Vec<Option<String>> =
        if slurm.partitions.is_empty() { vec![None] } else { slurm.partitions.iter().cloned().map(Some).collect() };
    let mut tasks: Vec<Task> = Vec::new();
    for &pattern in &s.patterns {
        for partition in &partitions {
            match submit(&tools, s, slurm, &run, pattern, partition.as_deref()) {
                Ok(t) => tasks.push(t),
                Err(e) => {
                    cancel(&tools, &tasks.iter().map(|t| t.job).collect::<Vec<_>>());
                    return Err(e);
                }
            }
        }
    }
    let ids: Vec<String> = tasks.iter().map(|t| t.job.to_string()).collect();
    crate::messages::progress(format!(
        "slurm: submitted {} tasks (jobs {}); run folder `{}`",
        tasks.len(),
        ids.join(", "),
        run.display()
    ));
    let finals = wait(&tools, &tasks, slurm.poll)?;
    let (results, failures) = merge(&tasks, &finals, started.elapsed());
    dir.save_results(&results)?;
    for f in &failures {
        crate::messages::failure(f);
    }
    tracing::info!(run = %run.display(), "saved");
    Ok((results, if failures.is_empty() { Exit::Ok } else { Exit::Input }))
}

fn backend_name(b: Backend) -> &'static str {
    match b {
        Backend::Auto => "auto",
        Backend::Ncu => "ncu",
        Backend::Model => "model",
        Backend::Sim => "sim",
    }
}

/// Write the task's batch script and submit it.
fn submit(
    tools: &Slurm,
    s: &RunSettings,
    slurm: &SlurmSettings,
    run: &Path,
    pattern: Pattern,
    partition: Option<&str>,
) -> Result<Task> {
    let name = safe_name(&match partition {
        Some(p) => format!("{}@{p}", pattern.name()),
        None => pattern.name().to_string(),
    });
    let mut line: Vec<OsString> = vec![tools.bin.join("srun").into(), "--ntasks=1".into(), slurm.exe.clone().into()];
    line.extend(slurm.global_args.iter().cloned());
    line.extend(task_args(s, pattern, &run.join("tasks"), &name));
    let words: Vec<String> = line.iter().map(|w| shell_quote(&w.to_string_lossy())).collect();
    let script = run.join("slurm").join(format!("{name}.sh"));
    let text = format!(
        "#!/bin/sh\n# coalprof task `{name}` of `coalprof run --slurm`: pattern `{}` into {}\nexec {}\n",
        pattern.name(),
        run.join("tasks").join(&name).display(),
        words.join(" ")
    );
    crate::store::write_atomic(&script, text.as_bytes())?;
    let log = run.join("slurm").join(format!("{name}.log"));
    let mut args: Vec<OsString> = vec![
        format!("--job-name=coalprof-{name}").into(),
        format!("--output={}", log.display()).into(),
        format!("--chdir={}", slurm.cwd.display()).into(),
        "--ntasks=1".into(),
    ];
    if let Some(p) = partition {
        args.push(format!("--partition={p}").into());
    }
    args.extend(slurm.sbatch_args.iter().map(OsString::from));
    let job = tools.sbatch(&args, &script)?;
    tracing::info!(task = %name, job, "submitted");
    let results = run.join("tasks").join(&name).join("results.json");
    Ok(Task { name, partition: partition.map(str::to_string), log, results, job })
}

/// The `run` line of one task: the run's resolved settings, one pattern, its own folder.
fn task_args(s: &RunSettings, pattern: Pattern, tasks: &Path, name: &str) -> Vec<OsString> {
    let p = &s.profiler;
    let mut a: Vec<String> = vec![
        "run".into(),
        "--pattern".into(),
        pattern.name().into(),
        "--backend".into(),
        backend_name(s.backend).into(),
        "--size".into(),
        s.sizing.bytes.to_string(),
        "--cache-control".into(),
        p.cache_control.clone(),
        "--clock-control".into(),
        p.clock_control.clone(),
        "--timeout".into(),
        p.timeout.as_secs().to_string(),
        "--warmup".into(),
        p.warmup.to_string(),
        "--repeats".into(),
        p.repeats.to_string(),
        "--l2-fetch".into(),
        s.l2_fetch_bytes.to_string(),
        "--color".into(),
        "never".into(),
        "--run-id".into(),
        name.into(),
    ];
    if let Some(arch) = &s.arch {
        a.extend(["--arch".into(), arch.clone()]);
    }
    let mut out: Vec<OsString> = a.into_iter().map(OsString::from).collect();
    out.extend(["--out".into(), tasks.as_os_str().to_owned()]);
    out
}

/// Follow the tasks with `squeue` until every one has finished; each task's final facts.
fn wait(tools: &Slurm, tasks: &[Task], poll: Duration) -> Result<BTreeMap<u64, Job>> {
    let mut finals: BTreeMap<u64, Job> = BTreeMap::new();
    let mut said = String::new();
    loop {
        let open: Vec<u64> = tasks.iter().map(|t| t.job).filter(|id| !finals.contains_key(id)).collect();
        if open.is_empty() {
            return Ok(finals);
        }
        let states = tools.squeue(&open)?;
        for t in tasks.iter().filter(|t| open.contains(&t.job)) {
            let listed = states.get(&t.job).map(|s| Job { state: s.clone(), ..Job::default() });
            if listed.as_ref().is_some_and(|j| !j.finished()) {
                continue;
            }
            // Finished, or forgotten by squeue: ask for the final state, exit code and node.
            let job = tools.job(t.job)?.or(listed).unwrap_or(Job { state: "UNKNOWN".into(), ..Job::default() });
            if job.finished() {
                tracing::info!(task = %t.name, job = t.job, state = %job.state, "finished");
                finals.insert(t.job, job);
            }
        }
        let summary = progress(tasks, &states, &finals);
        if summary != said {
            crate::messages::progress(format!("slurm: {summary}"));
            said = summary;
        }
        if finals.len() < tasks.len() && interrupted_during(poll) {
            let open: Vec<u64> = tasks.iter().map(|t| t.job).filter(|id| !finals.contains_key(id)).collect();
            cancel(tools, &open);
            return Err(ToolError::Interrupted { command: "waiting for the Slurm tasks (cancelled)".into() }.into());
        }
    }
}

/// `3 pending, 2 running, 4 finished of 9`.
fn progress(tasks: &[Task], states: &BTreeMap<u64, String>, finals: &BTreeMap<u64, Job>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for t in tasks {
        let state =
            if finals.contains_key(&t.job) { "finished" } else { states.get(&t.job).map_or("queued", |s| s.as_str()) };
        *counts.entry(state).or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {}", s.to_lowercase())).collect();
    format!("{} of {} tasks", parts.join(", "), tasks.len())
}

/// Sleep `poll`; whether Ctrl-C came meanwhile (the runner's handler owns SIGINT).
fn interrupted_during(poll: Duration) -> bool {
    runtime().block_on(async {
        tokio::select! {
            _ = tokio::time::sleep(poll) => false,
            _ = tokio::signal::ctrl_c() => true,
        }
    })
}

fn cancel(tools: &Slurm, ids: &[u64]) {
    if ids.is_empty() {
        return;
    }
    match tools.scancel(ids) {
        Ok(()) => crate::messages::progress(format!("slurm: cancelled jobs {ids:?}")),
        Err(e) => crate::messages::failure(e),
    }
}

/// The finished tasks' rows in one run, each row naming where it ran; one message per task
/// that failed, with its state, exit code and the end of its log.
fn merge(tasks: &[Task], finals: &BTreeMap<u64, Job>, wall: Duration) -> (Results, Vec<String>) {
    let mut merged: Option<Results> = None;
    let mut rows: Vec<Row> = Vec::new();
    let mut failures = Vec::new();
    let mut jobs = Vec::new();
    for t in tasks {
        let job = finals.get(&t.job).cloned().unwrap_or_default();
        jobs.push(serde_json::json!({
            "task": t.name, "job": t.job, "state": job.state, "exit_code": job.exit_code,
            "partition": job.partition.clone().or(t.partition.clone()), "node": job.node,
        }));
        let read = read_results_json(&t.results);
        if let Ok(r) = &read {
            let p = &r.provenance;
            let place = Placement {
                gpu: p.gpu.clone(),
                arch: p.compute_capability.as_ref().map(|_| p.arch()),
                partition: job.partition.clone().or(t.partition.clone()),
                node: job.node.clone(),
                ..Placement::default()
            };
            rows.extend(r.rows.iter().cloned().map(|row| Row { placement: Some(place.clone()), ..row }));
        }
        if job.state != "COMPLETED" || read.is_err() {
            let why = match &read {
                Err(e) if job.state == "COMPLETED" => format!(", but {e}"),
                _ => String::new(),
            };
            failures.push(format!(
                "slurm task `{}` (job {}) ended {}{}{}; its log `{}`:{}",
                t.name,
                t.job,
                job.state,
                job.exit_code.as_deref().map(|c| format!(" with exit code {c}")).unwrap_or_default(),
                why,
                t.log.display(),
                log_tail(&t.log)
            ));
        }
        if let (None, Ok(r)) = (&merged, read) {
            merged = Some(r);
        }
    }
    let mut results = merged.unwrap_or_else(|| Results::new(crate::results::Provenance::new("slurm"), Vec::new()));
    let mut gpus: Vec<String> = Vec::new();
    for g in rows.iter().filter_map(|r| r.placement.as_ref()?.gpu.clone()) {
        if !gpus.contains(&g) {
            gpus.push(g);
        }
    }
    if gpus.len() > 1 {
        results.provenance.gpu = Some(gpus.join(", "));
        results.provenance.compute_capability = None;
    }
    results.rows = rows;
    results
        .provenance
        .settings
        .insert("slurm".into(), serde_json::json!({ "tasks": jobs, "wall_s": wall.as_secs_f64() }));
    results.notices.extend(failures.iter().map(|f| f.lines().next().unwrap_or_default().to_string()));
    (results, failures)
}

/// The last lines of a task's log, indented under its error.
fn log_tail(log: &Path) -> String {
    let Ok(text) = std::fs::read_to_string(log) else { return " (no log was written)".into() };
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let tail = &lines[lines.len().saturating_sub(15)..];
    tail.iter().map(|l| format!("\n    {l}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, job: u64, results: PathBuf) -> Task {
        Task { name: name.into(), partition: None, log: PathBuf::from("/nonexistent.log"), results, job }
    }

    #[test]
    fn merge_keeps_the_finished_tasks_and_reports_the_failed_with_their_state() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.json");
        let mut row = Row::new("k", crate::results::Source::Predicted);
        row.pattern = Some("stride".into());
        let r = Results::new(crate::results::Provenance::new("model"), vec![row]);
        std::fs::write(&ok, serde_json::to_string(&r).unwrap()).unwrap();
        let tasks = [task("stride", 1, ok), task("gather", 2, dir.path().join("missing.json"))];
        let done = |state: &str, exit: &str| Job {
            state: state.into(),
            exit_code: Some(exit.into()),
            partition: Some("debug".into()),
            node: Some("n1".into()),
        };
        let finals = BTreeMap::from([(1, done("COMPLETED", "0:0")), (2, done("CANCELLED", "0:15"))]);
        let (merged, failures) = merge(&tasks, &finals, Duration::from_secs(1));
        assert_eq!(merged.rows.len(), 1);
        let place = merged.rows[0].placement.as_ref().unwrap();
        assert_eq!((place.partition.as_deref(), place.node.as_deref()), (Some("debug"), Some("n1")));
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].starts_with("slurm task `gather` (job 2) ended CANCELLED with exit code 0:15"),
            "{}",
            failures[0]
        );
        assert!(failures[0].contains("no log was written"));
    }
}
