//! The engine's loop against a fake executor whose tasks succeed, fail, or stop on cue: the
//! failure policy, the order of rows, what is saved.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;
use crate::results::{Provenance, Source};

/// A fake executor: `slots` places, `run` decides each task's outcome.
struct Fake<F: Fn(usize, &Task) -> Result<Outcome> + Sync> {
    slots: usize,
    run: F,
}

impl<F: Fn(usize, &Task) -> Result<Outcome> + Sync> Executor for Fake<F> {
    fn slots(&self) -> usize {
        self.slots
    }
    fn execute(&self, slot: usize, task: &Task, _dir: &RunDir) -> Result<Outcome> {
        (self.run)(slot, task)
    }
    fn slot_name(&self, slot: usize) -> Option<String> {
        (self.slots > 1).then(|| format!("place {slot}"))
    }
}

fn row(pattern: Pattern) -> Row {
    let mut r = Row::new(pattern.name(), Source::Predicted);
    r.pattern = Some(pattern.name().into());
    r
}

fn rows_of(pattern: Pattern) -> Outcome {
    Outcome { rows: vec![row(pattern)], ..Outcome::default() }
}

const THREE: [Pattern; 3] = [Pattern::Coalesced, Pattern::Stride, Pattern::Gather];

fn tasks() -> Vec<Task> {
    THREE.iter().map(|&pattern| Task { pattern, partition: None }).collect()
}

fn record() -> Record {
    Record {
        provenance: Provenance::new(crate::results::Backend::Model),
        extra: serde_json::Map::new(),
        notices: vec!["n".into()],
    }
}

fn dir() -> (tempfile::TempDir, RunDir) {
    let tmp = tempfile::tempdir().unwrap();
    let d = RunDir::create(tmp.path(), Some("run"), "model").unwrap();
    (tmp, d)
}

fn style() -> Style {
    Style::new(&crate::metrics::Catalogue::builtin(), false)
}

fn saved(d: &RunDir) -> Vec<String> {
    let r = crate::import::read_results_json(&d.file("results.json")).unwrap();
    r.rows.iter().map(|r| r.pattern.clone().unwrap()).collect()
}

fn failing() -> Error {
    Error::Tool(ToolError::Timeout { command: "k".into(), after: Duration::from_secs(1), stderr: String::new() })
}

#[test]
fn the_policy_stops_for_ctrl_c_requeues_for_a_place_that_cannot_profile_and_goes_on_otherwise() {
    assert_eq!(next_step(&Error::Interrupted), Step::Stop);
    assert_eq!(next_step(&ToolError::Interrupted { command: "ncu".into() }.into()), Step::Stop);
    assert_eq!(next_step(&Error::unavailable("no GPU", "h")), Step::Requeue);
    let no_profiler = ToolError::NoProfiler { message: "ERR_NVGPUCTRPERM".into(), hint: "h".into() };
    assert_eq!(next_step(&no_profiler.into()), Step::Requeue);
    assert_eq!(next_step(&failing()), Step::Continue);
    assert_eq!(next_step(&Error::input("r.ncu-rep", "bad")), Step::Continue);
}

#[test]
fn rows_keep_the_tasks_order_whichever_place_finishes_first_and_every_task_is_saved() {
    let (_tmp, d) = dir();
    // The first task is the slowest, so it finishes last.
    let exec = Fake {
        slots: 3,
        run: |_, t: &Task| {
            if t.pattern == Pattern::Coalesced {
                std::thread::sleep(Duration::from_millis(200));
            }
            Ok(rows_of(t.pattern))
        },
    };
    let (results, exit) = drive(&exec, tasks(), &d, &style(), record()).unwrap();
    assert_eq!(exit, Exit::Ok);
    let names: Vec<&str> = results.rows.iter().map(|r| r.pattern.as_deref().unwrap()).collect();
    assert_eq!(names, ["coalesced", "stride", "gather"]);
    assert_eq!(saved(&d), names);
    assert_eq!(results.notices, ["n"], "the record's notices are the run's");
    assert!(d.file("run.json").is_file() && d.file("results.md").is_file());
}

#[test]
fn quick_tasks_save_their_results_each_and_the_pages_once_at_the_end() {
    let (_tmp, d) = dir();
    let seen = Mutex::new(Vec::new());
    let exec = Fake {
        slots: 1,
        run: |_, t: &Task| {
            if t.pattern != Pattern::Coalesced {
                seen.lock().unwrap().push((saved(&d), d.file("report.html").exists()));
            }
            Ok(rows_of(t.pattern))
        },
    };
    drive(&exec, tasks(), &d, &style(), record()).unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen, [(vec!["coalesced".to_string()], false), (vec!["coalesced".into(), "stride".into()], false)]);
    assert!(d.file("report.html").is_file() && d.file("results.md").is_file());
}

#[test]
fn a_slow_run_rewrites_its_pages_while_tasks_finish() {
    let (_tmp, d) = dir();
    let page_before_the_last = AtomicUsize::new(0);
    let exec = Fake {
        slots: 1,
        run: |_, t: &Task| {
            match t.pattern {
                Pattern::Coalesced => std::thread::sleep(PAGES_EVERY + Duration::from_millis(50)),
                Pattern::Gather => {
                    page_before_the_last.store(usize::from(d.file("report.html").is_file()), Ordering::SeqCst)
                }
                _ => {}
            }
            Ok(rows_of(t.pattern))
        },
    };
    drive(&exec, tasks(), &d, &style(), record()).unwrap();
    assert_eq!(page_before_the_last.into_inner(), 1, "the page was not written before the last task");
}

#[test]
fn a_failed_task_costs_only_itself_and_sets_the_exit_code() {
    let (_tmp, d) = dir();
    let exec = Fake {
        slots: 1,
        run: |_, t: &Task| if t.pattern == Pattern::Stride { Err(failing()) } else { Ok(rows_of(t.pattern)) },
    };
    let (results, exit) = drive(&exec, tasks(), &d, &style(), record()).unwrap();
    assert_eq!(exit, Exit::Input);
    assert_eq!(results.rows.len(), 2);
    assert_eq!(saved(&d), ["coalesced", "gather"]);
}

#[test]
fn a_task_that_failed_after_saving_rows_keeps_them_and_still_fails() {
    let (_tmp, d) = dir();
    let exec = Fake {
        slots: 1,
        run: |_, t: &Task| Ok(Outcome { failed: (t.pattern == Pattern::Gather).then(failing), ..rows_of(t.pattern) }),
    };
    let (results, exit) = drive(&exec, tasks(), &d, &style(), record()).unwrap();
    assert_eq!(exit, Exit::Input);
    assert_eq!(results.rows.len(), 3);
}

#[test]
fn a_place_that_cannot_profile_hands_its_task_to_another_and_takes_no_more() {
    let (_tmp, d) = dir();
    let on_bad = AtomicUsize::new(0);
    let exec = Fake {
        slots: 2,
        run: |slot, t: &Task| {
            if slot == 0 {
                on_bad.fetch_add(1, Ordering::SeqCst);
                return Err(Error::unavailable("no counter permission", "h"));
            }
            std::thread::sleep(Duration::from_millis(20));
            Ok(rows_of(t.pattern))
        },
    };
    let (results, exit) = drive(&exec, tasks(), &d, &style(), record()).unwrap();
    assert_eq!(on_bad.load(Ordering::SeqCst), 1, "the bad place took one task and retired");
    assert_eq!(results.rows.len(), 3, "its task ran elsewhere");
    assert_eq!(exit, Exit::ProfilerUnavailable, "a GPU that could not profile is still reported");
}

#[test]
fn with_no_place_left_the_run_stops_with_the_reason_and_keeps_what_finished() {
    let (_tmp, d) = dir();
    let exec = Fake {
        slots: 1,
        run: |_, t: &Task| {
            if t.pattern == Pattern::Stride {
                Err(Error::unavailable("no counter permission", "h"))
            } else {
                Ok(rows_of(t.pattern))
            }
        },
    };
    let e = drive(&exec, tasks(), &d, &style(), record()).unwrap_err();
    assert_eq!(e.to_string(), "no counter permission", "one place: its own error");
    assert_eq!(saved(&d), ["coalesced"]);

    let (_tmp, d) = dir();
    let exec = Fake { slots: 2, run: |_, _: &Task| Err(Error::unavailable("no counter permission", "h")) };
    let e = drive(&exec, tasks(), &d, &style(), record()).unwrap_err();
    assert!(e.to_string().starts_with("no GPU could run `"), "{e}");
    assert_eq!(e.exit(), Exit::ProfilerUnavailable);
}

#[test]
fn ctrl_c_in_any_form_stops_every_place_and_keeps_what_finished() {
    for stop in [Error::Interrupted, ToolError::Interrupted { command: "ncu".into() }.into()] {
        let (_tmp, d) = dir();
        let stop = std::sync::Mutex::new(Some(stop));
        let started = AtomicUsize::new(0);
        let exec = Fake {
            slots: 2,
            run: |_, t: &Task| {
                started.fetch_add(1, Ordering::SeqCst);
                match t.pattern {
                    Pattern::Coalesced => Ok(rows_of(t.pattern)),
                    Pattern::Stride => {
                        std::thread::sleep(Duration::from_millis(50));
                        Err(stop.lock().unwrap().take().unwrap())
                    }
                    _ => {
                        std::thread::sleep(Duration::from_millis(200));
                        Ok(rows_of(t.pattern))
                    }
                }
            },
        };
        let e = drive(&exec, tasks(), &d, &style(), record()).unwrap_err();
        assert_eq!(e.exit(), Exit::Interrupted, "{e}");
        assert!(saved(&d).contains(&"coalesced".to_string()), "{:?}", saved(&d));
    }
}

#[test]
fn a_place_that_fails_twice_in_a_row_retires_while_others_remain() {
    let (_tmp, d) = dir();
    let on_bad = AtomicUsize::new(0);
    let tasks: Vec<Task> = Pattern::ALL.iter().map(|&pattern| Task { pattern, partition: None }).collect();
    let exec = Fake {
        slots: 2,
        run: |slot, t: &Task| {
            if slot == 0 {
                on_bad.fetch_add(1, Ordering::SeqCst);
                return Err(failing());
            }
            std::thread::sleep(Duration::from_millis(30));
            Ok(rows_of(t.pattern))
        },
    };
    let (results, exit) = drive(&exec, tasks, &d, &style(), record()).unwrap();
    assert_eq!(on_bad.load(Ordering::SeqCst), 2);
    assert_eq!(results.rows.len(), Pattern::ALL.len() - 2);
    assert_eq!(exit, Exit::Input);
}
