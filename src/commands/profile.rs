//! `coalprof profile -- CMD ARGS…`: the user's own program under ncu, the same table. With no
//! manifest, amplification is over the bytes the threads asked for (the table says so). With
//! `--per-rank`, ncu runs under the launcher, one report per rank, and the rows say their rank.
//! The run folder keeps the reports, `results.json` and `run.json` (one `engine::Record`).
//! With `--backend sim`, GPGPU-Sim runs the program instead (`measure::sim`), one row per kernel.

use std::path::PathBuf;

use crate::engine::Record;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::frame::launches::Grouping;
use crate::measure::profiled_metrics;
use crate::measure::sim::{simulate_program, Program};
use crate::render::{render, run_folder};
use crate::results::{Provenance, Results};
use crate::settings::{Common, PerRank, ProfileSettings};
use crate::store::RunDir;
use crate::tools::ncu::ProfileRequest;

/// Where a rank's report is written before it is complete: ncu expands `%q{VAR}` per rank.
const PARTIAL_RANK: &str = ".partial-rank-";

pub(crate) fn run(common: &Common, s: &ProfileSettings) -> Result<Exit> {
    if s.simulate {
        return simulated(common, s);
    }
    let ncu = common.tools.ncu_tool()?;
    let dir = RunDir::create(&s.out_base, None, "profile")?;
    let partial = match &s.per_rank {
        // Absolute: the ranks may start elsewhere (other nodes, another working folder).
        Some(p) => std::path::absolute(dir.file(&format!("{PARTIAL_RANK}%q{{{}}}.ncu-rep", p.rank_env)))
            .map_err(|e| Error::write(&dir.path, e))?,
        None => dir.file(".report.partial.ncu-rep"),
    };
    let request = ProfileRequest {
        metrics: profiled_metrics(&common.catalogue),
        cache_control: s.profiler.cache_control.clone(),
        clock_control: s.profiler.clock_control.clone(),
        kernel_regex: s.kernel.clone(),
        launch_skip: s.launch_skip,
        launch_count: s.launch_count,
        export: partial.clone(),
        launcher: s.per_rank.as_ref().map(|p| p.launcher.clone()).unwrap_or_default(),
        program: s.program.clone(),
        args: s.args.clone(),
        timeout: Some(s.profiler.timeout),
        source_counters: crate::measure::source_counters(&ncu),
        env: Vec::new(),
    };
    let mut echo = |line: &str| tracing::debug!(target: "ncu", "{line}");
    let profiled = ncu.profile(&request, &mut echo)?;
    let reports = match &s.per_rank {
        Some(p) => rank_reports(&dir, p)?,
        None => {
            let report = dir.file("report.ncu-rep");
            std::fs::rename(&partial, &report).map_err(|e| Error::write(&report, e))?;
            vec![report]
        }
    };
    // Read natively: no `ncu --import` process (ncu only for a format version the reader
    // does not know, or under `--reader ncu`). A rank's rows get its rank from the file name.
    let find_ncu = || Ok(ncu.clone());
    let reader = super::reader(common, s.grouping, &find_ncu);
    let mut results = super::read_merged(&reader, &reports)?;
    let mut record =
        Record::with_provenance(crate::results::Backend::Ncu, common, std::mem::take(&mut results.provenance));
    record.extra.insert("program".into(), s.program.to_string_lossy().into_owned().into());
    record.extra.insert("args".into(), s.args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().into());
    let settings = &mut record.provenance.settings;
    settings.insert("cache_control".into(), s.profiler.cache_control.clone().into());
    settings.insert("clock_control".into(), s.profiler.clock_control.clone().into());
    settings.insert("replay_passes".into(), serde_json::json!(profiled.passes));
    if let Some(p) = &s.per_rank {
        let launcher: Vec<String> = p.launcher.iter().map(|w| w.to_string_lossy().into_owned()).collect();
        settings.insert("launcher".into(), launcher.join(" ").into());
        settings.insert("ranks".into(), reports.len().into());
    }
    if !profiled.warnings.is_empty() {
        for w in &profiled.warnings {
            tracing::info!("ncu: {w}");
        }
        settings.insert("ncu_warnings".into(), serde_json::json!(profiled.warnings));
    }
    results.provenance = record.provenance.clone();
    record.save(&dir)?;
    results.worst_lines = crate::measure::worst_lines(
        &reports,
        &s.source_root,
        s.grouping == Grouping::PerLaunch,
        &common.catalogue,
        &|_| (None, None),
    );
    dir.save(&run_folder(&results, &common.style)?)?;
    tracing::info!(run = %dir.path.display(), "saved");
    super::print(&render(&results, common.format, &common.style.summarising("profile", Some(&dir.path)))?)?;
    Ok(Exit::Ok)
}

/// `profile --backend sim -- CMD ARGS…`: the user's program in GPGPU-Sim (`measure::sim`), one
/// row per kernel, the simulator's folder kept in the run folder for `lines` (`run --backend
/// sim`, the built-in patterns, is an executor of the engine: `engine/local.rs`).
fn simulated(common: &Common, s: &ProfileSettings) -> Result<Exit> {
    if s.per_rank.is_some() || s.launch_skip.is_some() || s.launch_count.is_some() {
        return Err(Error::usage(
            "`--backend sim` runs the whole program in one simulator process: `--per-rank`, `--launch-skip` and \
             `--launch-count` are for ncu",
        ));
    }
    if s.grouping == Grouping::PerLaunch {
        return Err(Error::usage(
            "`--backend sim` counts per kernel (summed over its launches): `--per-launch` is for ncu",
        ));
    }
    let kernel = s.kernel.as_deref().map(regex::Regex::new).transpose().map_err(|e| Error::usage(e.to_string()))?;
    let sim = common.tools.gpgpusim()?;
    let dir = RunDir::create(&s.out_base, None, "profile-sim")?;
    // A source is built into the run folder, so the run keeps the very program it measured.
    let program = match &s.source {
        Some(src) => {
            // Absolute: the simulator runs the program in its own folder.
            let exe =
                std::path::absolute(dir.file(&s.program.to_string_lossy())).map_err(|e| Error::write(&dir.path, e))?;
            crate::messages::progress(format_args!("building {} for GPGPU-Sim", src.file.display()));
            sim.build_program(&src.file, &exe, &src.nvcc_args)?;
            exe
        }
        None => s.program.clone(),
    };
    let cuda = sim.toolkit_for(&program)?;
    let p = Program {
        exe: &program,
        args: &s.args,
        kernel: kernel.as_ref(),
        mode: s.profiler.sim_mode,
        cuda: &cuda,
        timeout: s.profiler.timeout,
        source_root: &s.source_root,
    };
    let run = simulate_program(&sim, &p, &dir.file("sim"), &common.catalogue, &common.derivation)?;
    let mut record =
        Record::with_provenance(crate::results::Backend::Sim, common, Provenance::new(crate::results::Backend::Sim))
            .simulator(&sim.version(), p.mode);
    record.provenance.inputs = vec![s.source.as_ref().map_or(&program, |src| &src.file).display().to_string()];
    let facts = serde_json::json!({
        "simulator": sim.version(),
        "config": crate::tools::gpgpusim::CONFIG,
        "program": program,
        "source": s.source.as_ref().map(|src| &src.file),
        "nvcc_args": s.source.as_ref().map(|src| &src.nvcc_args),
        "args": s.args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "seconds": run.seconds,
    });
    if let serde_json::Value::Object(facts) = facts {
        record.merge(facts);
    }
    let mut results = Results::new(record.provenance.clone(), run.rows);
    results.notices = run.notices;
    results.worst_lines = run.worst_lines;
    record.save(&dir)?;
    dir.save(&run_folder(&results, &common.style)?)?;
    tracing::info!(run = %dir.path.display(), "saved; `coalprof lines {}` names the lines", dir.path.display());
    super::print(&render(&results, common.format, &common.style.summarising("profile", Some(&dir.path)))?)?;
    Ok(Exit::Ok)
}

/// The ranks' finished reports, renamed to `rank-N.ncu-rep`, in rank order. A report whose
/// name has no number means the ranks did not have the variable set.
fn rank_reports(dir: &RunDir, p: &PerRank) -> Result<Vec<PathBuf>> {
    let entries = std::fs::read_dir(&dir.path).map_err(|e| Error::input_caused(&dir.path, "cannot list", e))?;
    let mut ranks: Vec<(u32, PathBuf)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(n) = name.strip_prefix(PARTIAL_RANK).and_then(|n| n.strip_suffix(".ncu-rep")) else { continue };
        let rank: u32 = n.parse().map_err(|_| {
            Error::input(
                e.path(),
                format!("a rank's report is not numbered: `{}` was not set in its environment", p.rank_env),
            )
            .with_hint("name the variable the launcher numbers its ranks by with `--rank-env VAR`")
        })?;
        let report = dir.file(&format!("rank-{rank}.ncu-rep"));
        std::fs::rename(e.path(), &report).map_err(|e| Error::write(&report, e))?;
        ranks.push((rank, report));
    }
    if ranks.is_empty() {
        return Err(Error::nothing_matched(
            format!("the launcher ran, but no rank wrote a report into `{}`", dir.path.display()),
            Some(format!(
                "check that the launcher runs ncu on each rank and that `{}` is shared storage",
                dir.path.display()
            )),
        ));
    }
    ranks.sort();
    Ok(ranks.into_iter().map(|(_, p)| p).collect())
}
