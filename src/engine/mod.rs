//! The one loop of `coalprof run`: every backend and every place (here, the node's GPUs, a
//! Slurm cluster) goes through [`drive`], which takes tasks from one queue, merges what each
//! finished task measured into the run, saves its results after every task (its pages at most
//! once a second, and at the end), and decides with one policy ([`next_step`]) what a failure
//! means. An [`Executor`] only says *where* and *how* one task runs: `local` (the model, the
//! simulator), `ncu` (ncu on one GPU, or on each GPU of `--gpus` at once), `slurm` (one Slurm
//! job per task, its settings in a task file, `settings::task_file`).
//!
//! What is deliberately absent here: no process is spawned (executors call `tools/`), nothing is
//! printed but through `messages`, and no executor saves or merges results itself, so a
//! Ctrl-C, a failed pattern or a GPU that cannot profile means the same under every executor.

pub(crate) mod local;
pub(crate) mod ncu;
pub(crate) mod record;
pub(crate) mod slurm;

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::patterns::Pattern;
use crate::render::{results_file, run_folder, Style};
use crate::results::{Backend, Results, Row, WorstLine};
use crate::store::RunDir;
use crate::tools::ToolError;

pub(crate) use record::Record;

/// One unit of work: a pattern, and where it is bound when the executor binds it (a Slurm
/// partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Task {
    pub pattern: Pattern,
    /// The partition a Slurm task runs on (`None`: the cluster's default, or not Slurm).
    pub partition: Option<String>,
}

impl Task {
    /// The task's name: its pattern, `@partition` when it has one (a Slurm job's name).
    pub(crate) fn name(&self) -> String {
        match &self.partition {
            Some(p) => format!("{}@{p}", self.pattern.name()),
            None => self.pattern.name().to_string(),
        }
    }
}

/// What one finished task adds to the run.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Its rows (each with its placement, where the executor knows it).
    pub rows: Vec<Row>,
    /// Its launches' worst source lines.
    pub worst_lines: Vec<WorstLine>,
    /// What it learned about the device and the settings: fields the run's provenance does not
    /// have yet are taken from it.
    pub learned: crate::results::Provenance,
    /// Notices to show once under the run's table.
    pub notices: Vec<String>,
    /// Facts for `run.json`, merged at every depth (`ncu_warnings.<pattern>`, `seconds.<pattern>`).
    pub record: serde_json::Map<String, serde_json::Value>,
    /// The task ended badly but saved some rows first (a Slurm job that failed after writing
    /// its results): the rows are kept, and the error is handled as if the task had failed.
    pub failed: Option<Error>,
}

/// Where and how the tasks of a run execute.
pub(crate) trait Executor: Sync {
    /// How many tasks may run at once: one per place (one here, one per GPU, one per job).
    fn slots(&self) -> usize;

    /// Run `task` in slot `slot` (`0..slots()`), its files under `dir`.
    fn execute(&self, slot: usize, task: &Task, dir: &RunDir) -> Result<Outcome>;

    /// The slot in words, for messages (`GPU 1 (NVIDIA A100)`); `None` when there is one place.
    fn slot_name(&self, _slot: usize) -> Option<String> {
        None
    }

    /// How long `task` takes, roughly: the queue starts with the heaviest, so that the places
    /// finish close together (rows keep the order the tasks were given in either way).
    fn weight(&self, _task: &Task) -> usize {
        0
    }

    /// Whether a finished task is worth a progress line (only when several run at once).
    fn says_progress(&self) -> bool {
        self.slots() > 1
    }
}

/// What the loop does after a task failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// The task's own failure: record it, go on with the next task.
    Continue,
    /// The place cannot run anything (no profiler, no counter permission, no tool): the task
    /// goes back on the queue for another slot, and this slot takes no more.
    Requeue,
    /// Nothing else can succeed (Ctrl-C): save and stop.
    Stop,
}

/// The one failure policy of every executor.
pub(crate) fn next_step(e: &Error) -> Step {
    match e {
        Error::Interrupted | Error::Tool(ToolError::Interrupted { .. }) => Step::Stop,
        Error::Unavailable { .. } | Error::Tool(ToolError::NoProfiler { .. } | ToolError::NotFound { .. }) => {
            Step::Requeue
        }
        _ => Step::Continue,
    }
}

/// The run as the workers share it.
struct State {
    queue: VecDeque<(usize, Task)>,
    /// Tasks taken and not finished: a worker waits for them before it leaves an empty queue,
    /// since one may come back (`Requeue`).
    in_flight: usize,
    /// Slots still taking tasks.
    live: usize,
    results: Results,
    /// Each row's task, in step with `results.rows`: rows are kept in the tasks' order,
    /// whichever slot finished first.
    row_tasks: Vec<usize>,
    record: Record,
    failed: Vec<Error>,
    stop: Option<Error>,
    /// When the run folder's pages and plots were last written (or the run started).
    rendered: Instant,
}

/// How often a run rewrites its pages and plots while tasks finish. Its results are rewritten
/// after every task (nothing finished is lost, and `coalprof report` renders the rest from
/// them); the pages, every pattern's plots among them, at most once a second and at the end:
/// a run of quick tasks (the model's dozens, in milliseconds each) renders them once instead
/// of once per task, while a GPU run's page still follows its patterns.
const PAGES_EVERY: Duration = Duration::from_secs(1);

impl State {
    /// Save the run after a task: its results, and its pages when [`PAGES_EVERY`] has passed.
    fn save(&mut self, dir: &RunDir, style: &Style) -> Result<()> {
        if self.rendered.elapsed() < PAGES_EVERY {
            return dir.save(&[results_file(&self.results, style)?]);
        }
        self.save_all(dir, style)
    }

    /// Save the whole run folder: results, pages and plots (at the end, or on a stop).
    fn save_all(&mut self, dir: &RunDir, style: &Style) -> Result<()> {
        dir.save(&run_folder(&self.results, style)?)?;
        self.rendered = Instant::now();
        Ok(())
    }
}

/// Run `tasks` with `exec`, saving the run in `dir` after every task ([`State::save`]). Returns
/// the run and the exit code its failed tasks call for; an error when the run had to stop (Ctrl-C, or no slot
/// left that can run the rest) — what finished before is saved either way.
pub(crate) fn drive(
    exec: &dyn Executor,
    tasks: Vec<Task>,
    dir: &RunDir,
    style: &Style,
    record: Record,
) -> Result<(Results, Exit)> {
    record.save(dir)?;
    let slots = exec.slots().max(1);
    let total = tasks.len();
    let mut queue: Vec<(usize, Task)> = tasks.into_iter().enumerate().collect();
    queue.sort_by_key(|(_, t)| std::cmp::Reverse(exec.weight(t)));
    let state = State {
        queue: queue.into(),
        in_flight: 0,
        live: slots,
        results: Results { notices: record.notices.clone(), ..Results::new(record.provenance.clone(), Vec::new()) },
        row_tasks: Vec::new(),
        record,
        failed: Vec::new(),
        stop: None,
        rendered: Instant::now(),
    };
    let shared = (Mutex::new(state), Condvar::new());
    if slots == 1 {
        work(exec, 0, dir, style, &shared)?;
    } else {
        let shared = &shared;
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                (0..slots).map(|slot| scope.spawn(move || work(exec, slot, dir, style, shared))).collect();
            for h in handles {
                h.join().map_err(|_| Error::Internal("a worker of the run panicked".into()))??;
            }
            Ok::<(), Error>(())
        })?;
    }
    let mut state = shared.0.into_inner().map_err(|_| Error::Internal("the run's state was poisoned".into()))?;
    finish(&mut state.results);
    state.save_all(dir, style)?;
    tracing::info!(run = %dir.path.display(), tasks = total, "saved");
    if let Some(e) = state.stop {
        return Err(e);
    }
    if !state.queue.is_empty() {
        let names: Vec<String> = state.queue.iter().map(|(_, t)| format!("`{}`", t.name())).collect();
        let last = state.failed.pop();
        return Err(match last {
            Some(e) if slots == 1 => e,
            _ => Error::unavailable(
                format!("no GPU could run {}", names.join(", ")),
                "`coalprof doctor` says what each GPU lacks",
            ),
        });
    }
    let exit = state.failed.first().map_or(Exit::Ok, Error::exit);
    Ok((state.results, exit))
}

/// One slot's loop: take a task, run it, merge or classify, until the queue is empty (and no
/// task can come back), the run stops, or the slot retires.
fn work(exec: &dyn Executor, slot: usize, dir: &RunDir, style: &Style, shared: &(Mutex<State>, Condvar)) -> Result<()> {
    let (lock, changed) = shared;
    let poisoned = || Error::Internal("the run's state was poisoned".into());
    let place = exec.slot_name(slot).map(|s| format!(" on {s}")).unwrap_or_default();
    let mut failed_in_a_row = 0;
    loop {
        let (index, task) = {
            let mut s = lock.lock().map_err(|_| poisoned())?;
            loop {
                if crate::cancel::cancelled() && s.stop.is_none() {
                    s.stop = Some(Error::Interrupted);
                }
                if s.stop.is_some() {
                    return Ok(());
                }
                if let Some(t) = s.queue.pop_front() {
                    s.in_flight += 1;
                    break t;
                }
                if s.in_flight == 0 {
                    return Ok(());
                }
                s = changed.wait(s).map_err(|_| poisoned())?;
            }
        };
        let started = Instant::now();
        let outcome = exec.execute(slot, &task, dir);
        let mut s = lock.lock().map_err(|_| poisoned())?;
        s.in_flight -= 1;
        changed.notify_all();
        let e = match outcome {
            Ok(mut o) => {
                let failed = o.failed.take();
                if failed.is_none() {
                    failed_in_a_row = 0;
                    if exec.says_progress() {
                        let secs = started.elapsed().as_secs_f64();
                        crate::messages::progress(format!("`{}`{place} finished in {secs:.1} s", task.name()));
                    }
                }
                let new_facts = !o.record.is_empty();
                merge(&mut s, index, o);
                if new_facts {
                    s.record.save(dir)?;
                }
                s.save(dir, style)?;
                match failed {
                    None => continue,
                    Some(e) => e,
                }
            }
            Err(e) => e,
        };
        match next_step(&e) {
            Step::Stop => {
                if s.stop.is_none() {
                    s.stop = Some(e);
                }
                s.save_all(dir, style)?;
                return Ok(());
            }
            Step::Requeue => {
                s.live -= 1;
                if s.live > 0 {
                    let context = format!("`{}`{place} (the other places take it and the rest)", task.name());
                    crate::messages::error_in(Some(&context), &e, e.hint());
                }
                s.queue.push_back((index, task));
                s.failed.push(e);
                return Ok(());
            }
            Step::Continue => {
                let context = match &e {
                    // It names its task itself.
                    Error::Tool(ToolError::Task { .. }) => None,
                    _ => Some(format!("pattern `{}`{place}", task.name())),
                };
                crate::messages::error_in(context.as_ref().map(|c| c as &dyn std::fmt::Display), &e, e.hint());
                s.failed.push(e);
                // One failure may be the task's; two in a row is the place (a GPU, its ncu),
                // which would otherwise fail every task left, while other places could run them.
                failed_in_a_row += 1;
                if failed_in_a_row >= 2 && s.live > 1 {
                    s.live -= 1;
                    crate::messages::failure(&format!(
                        "{} failed two tasks in a row; the others take the rest",
                        place.trim_start_matches(" on ")
                    ));
                    return Ok(());
                }
            }
        }
    }
}

/// Add a finished task to the run: rows in task order, provenance fields it is the first to know.
fn merge(s: &mut State, index: usize, o: Outcome) {
    let at = s.row_tasks.partition_point(|&t| t <= index);
    let n = o.rows.len();
    s.results.rows.splice(at..at, o.rows);
    s.row_tasks.splice(at..at, std::iter::repeat_n(index, n));
    s.results.worst_lines.extend(o.worst_lines);
    for notice in o.notices {
        if !s.results.notices.contains(&notice) {
            s.results.notices.push(notice);
        }
    }
    let p = &mut s.results.provenance;
    let l = o.learned;
    p.ncu_version = p.ncu_version.take().or(l.ncu_version);
    p.gpu = p.gpu.take().or(l.gpu);
    p.compute_capability = p.compute_capability.take().or(l.compute_capability);
    p.driver = p.driver.take().or(l.driver);
    p.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s.or(l.peak_bandwidth_bytes_per_s);
    if p.backend == Backend::Auto && l.backend != Backend::Auto {
        // `--slurm --backend auto`: each task chose on its node; the run says what they chose.
        p.backend = l.backend;
    }
    record::merge_settings(&mut p.settings, l.settings);
    s.record.merge(o.record);
}

/// A run whose rows were measured on several GPU models names them all, and no one compute
/// capability or driver when their architectures differ.
fn finish(results: &mut Results) {
    let mut gpus: Vec<(String, Option<String>)> = (results.rows.iter())
        .filter_map(|r| r.placement.as_ref())
        .filter_map(|p| Some((p.gpu.clone()?, p.arch.clone())))
        .collect();
    gpus.sort();
    gpus.dedup();
    let mut names: Vec<&str> = gpus.iter().map(|(g, _)| g.as_str()).collect();
    names.dedup();
    if names.len() > 1 {
        results.provenance.gpu = Some(names.join(", "));
    }
    let mut archs: Vec<&Option<String>> = gpus.iter().map(|(_, a)| a).collect();
    archs.sort();
    archs.dedup();
    if archs.len() > 1 {
        results.provenance.compute_capability = None;
        results.provenance.driver = None;
    }
}

#[cfg(test)]
mod tests;
