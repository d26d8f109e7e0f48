//! The Slurm task file (`coalprof task FILE`): a run's resolved settings, narrowed to one
//! pattern and the task's folder, written by the Slurm executor (`super::slurm`) and read back
//! on the node, so a task runs with exactly its run's settings and no flag is spelled twice.

use crate::tools::gpgpusim::SimMode;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::patterns::{Pattern, Sizing};
use crate::results::Backend;
use crate::settings::RunSettings;
use crate::tools::ncu::ProfilerSettings;

/// One Slurm task's settings (`coalprof task FILE`): the run's, resolved once by `run --slurm`,
/// narrowed to one pattern and the task's own folder. Written by the engine, read back here, so
/// a task runs with exactly its run's settings and no flag is spelled twice.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TaskFile {
    pub pattern: String,
    pub variants: Vec<String>,
    pub backend: Backend,
    pub size_bytes: u64,
    pub arch: Option<String>,
    pub cache_control: String,
    pub clock_control: String,
    pub timeout_s: u64,
    pub warmup: u32,
    pub repeats: u32,
    pub l2_fetch_bytes: u32,
    /// `functional` or `timing` (files written before the flag existed: functional).
    #[serde(default = "functional")]
    pub sim_mode: String,
    /// The run's `tasks/` folder.
    pub out: PathBuf,
    /// The task's name: its folder under `out`.
    pub run_id: String,
}

fn functional() -> String {
    SimMode::Functional.name()
}

impl RunSettings {
    /// The settings of the task that runs `pattern` into `out/<run_id>`.
    pub(crate) fn task(&self, pattern: Pattern, out: &Path, run_id: &str) -> TaskFile {
        let p = &self.profiler;
        TaskFile {
            pattern: pattern.name().into(),
            variants: self.variants.clone(),
            backend: self.backend,
            size_bytes: self.sizing.bytes,
            arch: self.arch.clone(),
            cache_control: p.cache_control.clone(),
            clock_control: p.clock_control.clone(),
            timeout_s: p.timeout.as_secs(),
            warmup: p.warmup,
            repeats: p.repeats,
            l2_fetch_bytes: self.l2_fetch_bytes,
            sim_mode: p.sim_mode.name(),
            out: out.to_path_buf(),
            run_id: run_id.into(),
        }
    }
}

impl TaskFile {
    /// Read `path` (exit 3 when it cannot be read or is not a task file).
    pub(crate) fn read(path: &Path) -> Result<TaskFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input_caused(path, "cannot read", e))?;
        serde_json::from_str(&text).map_err(|e| Error::input_caused(path, "not a coalprof task file", e))
    }

    /// The run settings of the task: one pattern, here (no `--gpus`, no `--slurm`).
    pub(crate) fn settings(self) -> Result<RunSettings> {
        let bad = |what: &str| Error::usage(format!("task file: {what}"));
        let pattern: Pattern = self.pattern.parse().map_err(|_| bad(&format!("no pattern `{}`", self.pattern)))?;
        let sim_mode =
            SimMode::named(&self.sim_mode).ok_or_else(|| bad(&format!("no simulator mode `{}`", self.sim_mode)))?;
        Ok(RunSettings {
            patterns: vec![pattern],
            variants: self.variants,
            backend: self.backend,
            sizing: Sizing { bytes: self.size_bytes },
            arch: self.arch,
            profiler: ProfilerSettings {
                cache_control: self.cache_control,
                clock_control: self.clock_control,
                timeout: Duration::from_secs(self.timeout_s),
                warmup: self.warmup,
                repeats: self.repeats,
                sim_mode,
            },
            l2_fetch_bytes: self.l2_fetch_bytes,
            out_base: self.out,
            run_id: Some(self.run_id),
            gpus: None,
            slurm: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{resolve, Env, Settings};

    /// Every `run` flag a Slurm task needs reaches it through the task file: resolved from the
    /// command line, written, read back and narrowed to one pattern, the settings are the run's.
    #[test]
    fn a_task_file_carries_the_runs_resolved_settings() {
        use clap::Parser;
        let dir = tempfile::tempdir().unwrap();
        let env = Env { cwd: dir.path().into(), exe: Some("/bin/coalprof".into()), ..Env::read() };
        let line = "coalprof run --pattern stride,gather --backend ncu --size 16M --arch sm_90 --cache-control none \
                    --clock-control none --timeout 77 --warmup 2 --repeats 5 --l2-fetch 64 --slurm --run-id r";
        let cli = crate::cli::Cli::try_parse_from(line.split_whitespace()).unwrap();
        let Settings::Run(run) = resolve(&cli.global, &cli.command, &env).unwrap().1 else { panic!("not a run") };
        let file = run.task(Pattern::Gather, &dir.path().join("tasks"), "gather");
        let path = dir.path().join("gather.json");
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        let task = TaskFile::read(&path).unwrap().settings().unwrap();
        let expected = RunSettings {
            patterns: vec![Pattern::Gather],
            out_base: dir.path().join("tasks"),
            run_id: Some("gather".into()),
            slurm: None,
            ..run.clone()
        };
        assert_eq!(task, expected);
        assert_eq!((task.profiler.timeout.as_secs(), task.l2_fetch_bytes, task.sizing.bytes), (77, 64, 16 << 20));
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        assert_eq!(TaskFile::read(&bad).unwrap_err().exit(), crate::exit::Exit::Input);
    }
}
