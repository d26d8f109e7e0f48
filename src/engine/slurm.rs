//! The Slurm executor (`run --slurm`): one job per pattern and partition (one partition per GPU
//! type gives the cross-GPU table). Each task's resolved settings go into a file in the run
//! folder (`slurm/<task>.json`, which must be on storage the nodes share); its batch script
//! `srun`s this coalprof on its node with `coalprof task FILE`, into `tasks/<task>/`. A slot per
//! task follows its job (one `squeue` call serves every slot per poll), reads the finished
//! job's state, exit code and node from `scontrol` (or `sacct`), and returns the task's rows,
//! each naming its partition and node. A failed or cancelled job is an error with its Slurm
//! state and the end of its log; whatever rows it saved are kept. Ctrl-C cancels the jobs
//! still queued or running.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::engine::{Executor, Outcome, Record, Task};
use crate::error::{Error, Result};
use crate::import::read_results_json;
use crate::names::safe_name;
use crate::results::{Placement, Row};
use crate::settings::{Common, RunSettings, SlurmSettings};
use crate::store::RunDir;
use crate::tools::process::shell_quote;
use crate::tools::slurm::{Job, Slurm};
use crate::tools::ToolError;

/// Slurm's jobs, one slot per task.
pub(crate) struct SlurmExecutor<'a> {
    s: &'a RunSettings,
    slurm: &'a SlurmSettings,
    tools: Slurm,
    tasks: usize,
    board: Mutex<Board>,
}

/// What `squeue` last said about the open jobs, shared by the slots so it is asked once a poll.
#[derive(Default)]
struct Board {
    asked: Option<Instant>,
    states: BTreeMap<u64, String>,
    open: BTreeSet<u64>,
    finished: usize,
    said: String,
}

/// The run's tasks: every pattern on every partition (the cluster's default when none).
pub(crate) fn tasks(s: &RunSettings, slurm: &SlurmSettings) -> Vec<Task> {
    let partitions: Vec<Option<String>> =
        if slurm.partitions.is_empty() { vec![None] } else { slurm.partitions.iter().cloned().map(Some).collect() };
    (s.patterns.iter())
        .flat_map(|&pattern| partitions.iter().map(move |partition| Task { pattern, partition: partition.clone() }))
        .collect()
}

/// The executor for `tasks` tasks; exit 4 when `sbatch` is not installed.
pub(crate) fn prepare<'a>(
    common: &'a Common,
    s: &'a RunSettings,
    slurm: &'a SlurmSettings,
    tasks: usize,
) -> Result<(SlurmExecutor<'a>, Record)> {
    let sbatch = common.tools.sbatch().map_err(|e| Error::unavailable(e.to_string(), e.hint().unwrap_or_default()))?;
    let tools = Slurm { bin: sbatch.path.parent().unwrap_or(Path::new("/")).to_path_buf() };
    let record = Record::new(s.backend, common, s);
    Ok((SlurmExecutor { s, slurm, tools, tasks, board: Mutex::new(Board::default()) }, record))
}

impl Executor for SlurmExecutor<'_> {
    fn slots(&self) -> usize {
        self.tasks
    }

    /// squeue's summary says it instead.
    fn says_progress(&self) -> bool {
        false
    }

    fn execute(&self, _slot: usize, task: &Task, dir: &RunDir) -> Result<Outcome> {
        let run = std::path::absolute(&dir.path).map_err(|e| Error::write(&dir.path, e))?;
        for sub in ["slurm", "tasks"] {
            std::fs::create_dir_all(run.join(sub)).map_err(|e| Error::write(run.join(sub), e))?;
        }
        let name = safe_name(&task.name());
        let job = self.submit(&run, task, &name)?;
        let log = run.join("slurm").join(format!("{name}.log"));
        let done = self.wait(job)?;
        let partition = done.partition.clone().or(task.partition.clone());
        let facts = serde_json::json!({
            "job": job, "state": done.state, "exit_code": done.exit_code,
            "partition": partition, "node": done.node,
        });
        let read = read_results_json(&run.join("tasks").join(&name).join("results.json"));
        let mut outcome = match &read {
            Ok(r) => {
                let p = &r.provenance;
                let place = Placement {
                    gpu: p.gpu.clone(),
                    arch: p.compute_capability.as_ref().map(|_| p.arch()),
                    partition: partition.clone(),
                    node: done.node.clone(),
                    ..Placement::default()
                };
                Outcome {
                    rows: r.rows.iter().cloned().map(|row| Row { placement: Some(place.clone()), ..row }).collect(),
                    worst_lines: r.worst_lines.clone(),
                    notices: r.notices.clone(),
                    learned: p.clone(),
                    ..Outcome::default()
                }
            }
            Err(_) => Outcome::default(),
        };
        outcome.learned.settings.insert("slurm".into(), serde_json::json!({ "tasks": { &name: facts } }));
        if done.state != "COMPLETED" || read.is_err() {
            let mut ended = done.state.clone();
            if let Some(c) = &done.exit_code {
                ended += &format!(" with exit code {c}");
            }
            if let (Err(e), "COMPLETED") = (&read, done.state.as_str()) {
                ended += &format!(", but {e}");
            }
            outcome.failed =
                Some(ToolError::Task { task: name, job, ended, log: log.clone(), tail: log_tail(&log) }.into());
        }
        Ok(outcome)
    }
}

/// What a task's job runs: `srun` of this coalprof with `task FILE`, and nothing else. Every
/// setting, the global ones that change the numbers included, is in the file: a flag spelled
/// here would be a second spelling of it, free to disagree.
fn job_line(bin: &Path, exe: &Path, task_file: &Path) -> Vec<OsString> {
    vec![bin.join("srun").into(), "--ntasks=1".into(), exe.into(), "task".into(), task_file.into()]
}

impl SlurmExecutor<'_> {
    /// Write the task's settings and batch script, and submit it.
    fn submit(&self, run: &Path, task: &Task, name: &str) -> Result<u64> {
        let settings = run.join("slurm").join(format!("{name}.json"));
        let file = self.s.task(task.pattern, &run.join("tasks"), name, &self.slurm.global);
        let text = serde_json::to_string_pretty(&file).map_err(|e| Error::encoding("JSON", e))?;
        crate::store::write_atomic(&settings, (text + "\n").as_bytes())?;
        let line = job_line(&self.tools.bin, &self.slurm.exe, &settings);
        let words: Vec<String> = line.iter().map(|w| shell_quote(&w.to_string_lossy())).collect();
        let script = run.join("slurm").join(format!("{name}.sh"));
        let text = format!(
            "#!/bin/sh\n# coalprof task `{name}` of `coalprof run --slurm`: pattern `{}` into {}\nexec {}\n",
            task.pattern.name(),
            run.join("tasks").join(name).display(),
            words.join(" ")
        );
        crate::store::write_atomic(&script, text.as_bytes())?;
        let log = run.join("slurm").join(format!("{name}.log"));
        let mut args: Vec<OsString> = vec![
            format!("--job-name=coalprof-{name}").into(),
            format!("--output={}", log.display()).into(),
            format!("--chdir={}", self.slurm.cwd.display()).into(),
            "--ntasks=1".into(),
        ];
        if let Some(p) = &task.partition {
            args.push(format!("--partition={p}").into());
        }
        args.extend(self.slurm.sbatch_args.iter().map(OsString::from));
        let job = self.tools.sbatch(&args, &script)?;
        tracing::info!(task = %name, job, "submitted");
        self.board.lock().map_err(|_| poisoned())?.open.insert(job);
        Ok(job)
    }

    /// Follow `job` until it has finished; Ctrl-C cancels it.
    fn wait(&self, job: u64) -> Result<Job> {
        loop {
            if let Some(done) = self.poll(job)? {
                return Ok(done);
            }
            let until = Instant::now() + self.slurm.poll;
            while Instant::now() < until {
                if crate::cancel::cancelled() {
                    match self.tools.scancel(&[job]) {
                        Ok(()) => crate::messages::progress(format!("slurm: cancelled job {job}")),
                        Err(e) => crate::messages::error_in(None, &e, e.hint()),
                    }
                    let command = format!("waiting for Slurm job {job} (cancelled)");
                    return Err(ToolError::Interrupted { command }.into());
                }
                std::thread::sleep(Duration::from_millis(50).min(self.slurm.poll));
            }
        }
    }

    /// `job`'s final facts once it has finished; `squeue` is asked at most once a poll for
    /// every open job, whichever slot asks first.
    fn poll(&self, job: u64) -> Result<Option<Job>> {
        let mut b = self.board.lock().map_err(|_| poisoned())?;
        if b.asked.is_none_or(|t| t.elapsed() >= self.slurm.poll) {
            let open: Vec<u64> = b.open.iter().copied().collect();
            b.states = self.tools.squeue(&open)?;
            b.asked = Some(Instant::now());
        }
        let listed = b.states.get(&job).map(|s| Job { state: s.clone(), ..Job::default() });
        let mut done = None;
        if listed.as_ref().is_none_or(|j| j.finished()) {
            // Finished, or forgotten by squeue: ask for the final state, exit code and node.
            let j = self.tools.job(job)?.or(listed).unwrap_or(Job { state: "UNKNOWN".into(), ..Job::default() });
            if j.finished() {
                tracing::info!(job, state = %j.state, "finished");
                b.open.remove(&job);
                b.finished += 1;
                done = Some(j);
            }
        }
        let summary = summary(&b, self.tasks);
        if summary != b.said {
            crate::messages::progress(format!("slurm: {summary}"));
            b.said = summary;
        }
        Ok(done)
    }
}

fn poisoned() -> Error {
    Error::Internal("the Slurm board was poisoned".into())
}

/// `3 pending, 2 running, 4 finished of 9 tasks`.
fn summary(b: &Board, tasks: usize) -> String {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for id in &b.open {
        *counts.entry(b.states.get(id).map_or("queued".into(), |s| s.to_lowercase())).or_default() += 1;
    }
    if b.finished > 0 {
        counts.insert("finished".into(), b.finished);
    }
    let parts: Vec<String> = counts.iter().map(|(s, n)| format!("{n} {s}")).collect();
    format!("{} of {tasks} tasks", parts.join(", "))
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

    #[test]
    fn the_summary_counts_open_jobs_by_state_and_the_finished() {
        let mut b = Board::default();
        b.open.extend([1, 2, 3]);
        b.states.insert(1, "PENDING".into());
        b.states.insert(2, "RUNNING".into());
        b.finished = 4;
        assert_eq!(summary(&b, 7), "4 finished, 1 pending, 1 queued, 1 running of 7 tasks");
    }

    #[test]
    fn a_log_tail_is_its_last_fifteen_lines_indented() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.log");
        let text: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&log, text).unwrap();
        let tail = log_tail(&log);
        assert!(tail.starts_with("\n    line 6\n"), "{tail}");
        assert!(tail.ends_with("line 20"), "{tail}");
        assert_eq!(log_tail(&dir.path().join("none.log")), " (no log was written)");
    }

    /// The job's command line is `srun … coalprof task FILE` whatever the run was given: the
    /// global flags that change the numbers travel in the file (`settings::task_file`'s tests
    /// read them back), never as flags here.
    #[test]
    fn a_job_runs_task_file_and_spells_no_flag_again() {
        use clap::Parser;
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/metrics.toml"), dir.path().join("m.toml")).unwrap();
        let env = crate::settings::Env {
            cwd: dir.path().into(),
            exe: Some("/shared/coalprof".into()),
            ..crate::settings::Env::read()
        };
        let metrics = dir.path().join("m.toml");
        let line = format!(
            "coalprof --metrics {} --ncu /opt/ncu --nvcc /opt/nvcc --reader ncu --trust-input -v \
                    run --pattern gather --slurm --partition a100",
            metrics.display()
        );
        let cli = crate::cli::Cli::try_parse_from(line.split_whitespace()).unwrap();
        let (_, crate::settings::Settings::Run(run)) =
            crate::settings::resolve(&cli.global, &cli.command, &env).unwrap()
        else {
            panic!("not a run")
        };
        let slurm = run.slurm.as_ref().unwrap();
        let file = dir.path().join("slurm/gather.json");
        let words = job_line(Path::new("/usr/bin"), &slurm.exe, &file);
        let expected: Vec<OsString> = ["/usr/bin/srun", "--ntasks=1", "/shared/coalprof", "task"]
            .map(OsString::from)
            .into_iter()
            .chain([file.into()])
            .collect();
        assert_eq!(words, expected);
        // What the flags said is in the settings the file is written from.
        assert_eq!(slurm.global.ncu.as_deref(), Some(Path::new("/opt/ncu")));
        assert_eq!(slurm.global.metrics, Some(metrics));
    }
}
