//! The Slurm task file (`coalprof task FILE`): a run's resolved settings, narrowed to one
//! pattern and the task's folder, written by the Slurm executor (`engine/slurm.rs`) and read back
//! on the node into the same typed settings, so a task runs with exactly its run's settings and
//! its job's command line is `coalprof task FILE` alone: no flag is spelled twice.

use std::path::Path;

use crate::error::{Error, Result};
use crate::patterns::Pattern;

use super::{GlobalSettings, RunSettings};

/// One Slurm task's settings (`coalprof task FILE`): the run's, resolved once by `run --slurm`,
/// narrowed to one pattern and the task's own folder, in the types the settings hold them in.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct TaskFile {
    /// The run's settings: one pattern, the run's `tasks/` folder as `out_base`, the task's
    /// name as `run_id`, neither `--gpus` nor `--slurm`.
    pub run: RunSettings,
    /// The global settings that change the numbers (`--metrics`, `--ncu`, `--nvcc`,
    /// `--reader`), paths absolute.
    pub global: GlobalSettings,
}

impl RunSettings {
    /// The settings of the task that runs `pattern` into `out/<run_id>` with the run's `global`
    /// settings.
    pub(crate) fn task(&self, pattern: Pattern, out: &Path, run_id: &str, global: &GlobalSettings) -> TaskFile {
        let run = RunSettings {
            patterns: vec![pattern],
            out_base: out.to_path_buf(),
            run_id: Some(run_id.into()),
            gpus: None,
            slurm: None,
            ..self.clone()
        };
        TaskFile { run, global: global.clone() }
    }
}

impl TaskFile {
    /// Read `path` (exit 3 when it cannot be read or is not a task file).
    pub(crate) fn read(path: &Path) -> Result<TaskFile> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::input_caused(path, "cannot read", e))?;
        serde_json::from_str(&text).map_err(|e| Error::input_caused(path, "not a coalprof task file", e))
    }

    /// The run settings of the task: one pattern, here (no `--gpus`, no `--slurm`).
    pub(crate) fn settings(self) -> RunSettings {
        self.run
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::RepReader;
    use crate::results::Backend;
    use crate::settings::{resolve, Env, Settings};
    use crate::tools::gpgpusim::SimMode;

    fn resolved(line: &str, env: &Env) -> (crate::settings::Common, Settings) {
        use clap::Parser;
        let cli = crate::cli::Cli::try_parse_from(line.split_whitespace()).unwrap();
        resolve(&cli.global, &cli.command, env).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    /// Every setting a Slurm task needs reaches it through the task file, typed: resolved from
    /// the command line, written, read back by `coalprof task FILE` and narrowed to one pattern,
    /// the run settings and the global ones that change the numbers are the run's.
    #[test]
    fn a_task_file_carries_the_runs_resolved_settings() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = dir.path().join("my-metrics.toml");
        std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/metrics.toml"), &metrics).unwrap();
        let env = Env { cwd: dir.path().into(), exe: Some("/bin/coalprof".into()), ..Env::read() };
        // Relative tool paths, as a person types them: the task file makes them absolute, since
        // a node may start elsewhere.
        let line = format!(
            "coalprof --metrics {} --ncu bin/ncu --nvcc bin/nvcc --reader ncu \
                    run --pattern stride,gather --backend sim --size 16M --arch sm_90 --cache-control none \
                    --clock-control none --timeout 77 --warmup 2 --repeats 5 --l2-fetch 64 --sim-mode timing \
                    --slurm --run-id r",
            metrics.display()
        );
        let Settings::Run(run) = resolved(&line, &env).1 else { panic!("not a run") };
        let global = run.slurm.as_ref().unwrap().global.clone();
        let file = run.task(Pattern::Gather, &dir.path().join("tasks"), "gather", &global);
        let path = dir.path().join("gather.json");
        std::fs::write(&path, serde_json::to_string(&file).unwrap()).unwrap();
        assert_eq!(TaskFile::read(&path).unwrap(), file, "the file round-trips");

        // The node: `coalprof task FILE`, no other flag, in another folder.
        let elsewhere = tempfile::tempdir().unwrap();
        let node = Env { cwd: elsewhere.path().into(), ..Env::read() };
        let (common, Settings::Task(task)) = resolved(&format!("coalprof task {}", path.display()), &node) else {
            panic!("not a task")
        };
        let expected = RunSettings {
            patterns: vec![Pattern::Gather],
            out_base: dir.path().join("tasks"),
            run_id: Some("gather".into()),
            slurm: None,
            ..run.clone()
        };
        assert_eq!(task, expected);
        let p = &task.profiler;
        assert_eq!(
            (p.timeout.as_secs(), p.sim_mode, task.l2_fetch_bytes, task.sizing.bytes),
            (77, SimMode::Timing, 64, 16 << 20)
        );
        assert_eq!(task.backend, Backend::Sim);
        // The global settings, typed, with the paths made absolute against the run's folder.
        assert_eq!(
            global,
            GlobalSettings {
                metrics: Some(metrics.clone()),
                ncu: Some(dir.path().join("bin/ncu")),
                nvcc: Some(dir.path().join("bin/nvcc")),
                reader: RepReader::Ncu,
            }
        );
        assert_eq!(common.catalogue.origin, metrics, "the run's metrics file, not the node's");
        assert_eq!(common.tools.ncu, global.ncu);
        assert_eq!(common.tools.nvcc, global.nvcc);
        assert_eq!(common.rep_reader, RepReader::Ncu);

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{}").unwrap();
        assert_eq!(TaskFile::read(&bad).unwrap_err().exit(), crate::exit::Exit::Input);
    }

    /// The file spells each closed set as its flag does (`--backend sim`, `--sim-mode timing`,
    /// `--reader ncu`, `--pattern gather`), so a person reading it reads the run's own words.
    #[test]
    fn a_task_file_names_choices_as_their_flags_do() {
        use clap::ValueEnum;
        let flag = |v: Option<clap::builder::PossibleValue>| format!("\"{}\"", v.unwrap().get_name());
        for m in SimMode::value_variants() {
            assert_eq!(serde_json::to_string(m).unwrap(), flag(m.to_possible_value()));
        }
        for r in RepReader::value_variants() {
            assert_eq!(serde_json::to_string(r).unwrap(), flag(r.to_possible_value()));
        }
        for b in Backend::value_variants() {
            assert_eq!(serde_json::to_string(b).unwrap(), flag(b.to_possible_value()));
        }
        for &p in &Pattern::ALL {
            assert_eq!(serde_json::to_string(&p).unwrap(), format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Pattern>(&format!("\"{}\"", p.name())).unwrap(), p);
        }
        assert!(serde_json::from_str::<Pattern>("\"no-such-pattern\"").is_err());
    }
}
