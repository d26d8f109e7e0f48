//! `profile --backend sim` and `lines` on its run folder: the user's own program in GPGPU-Sim
//! (`run --backend sim`, the built-in patterns, is an executor of the engine: `engine/local.rs`).

use std::path::PathBuf;

use serde_json::json;

use crate::engine::Record;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::frame::launches::Grouping;
use crate::lines::source::Sources;
use crate::lines::Options as LineOptions;
use crate::measure::sim::{demangled, device_name, kernel_records, kernel_rows, sim_kernels};
use crate::parse::LaunchRecord;
use crate::render::render;
use crate::results::{Provenance, Results};
use crate::settings::{Common, LinesSettings, ProfileSettings};
use crate::store::RunDir;
use crate::tools::gpgpusim::CONFIG;

/// `profile --backend sim -- CMD ARGS…`: the user's program in GPGPU-Sim, one row per kernel
/// (the simulator's statistics are summed over the process), and the per-source-line rows kept
/// in the run folder for `lines`.
pub(crate) fn profile(common: &Common, s: &ProfileSettings) -> Result<Exit> {
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
    let cuda = sim.toolkit_for(&program).map_err(Error::usage)?;
    let folder = dir.file("sim");
    let run = crate::measure::sim::run_in(
        &sim,
        &program,
        &s.args,
        &folder,
        (s.profiler.sim_mode, &cuda),
        s.profiler.timeout,
    )?;
    let names = demangled(&run, Some(&sim));
    let kernel_re = s.kernel.as_deref().map(regex::Regex::new).transpose().map_err(|e| Error::usage(e.to_string()))?;
    let keep = |k: &str| kernel_re.as_ref().is_none_or(|re| re.is_match(k));
    let records: Vec<_> = (kernel_records(&run, &common.catalogue).into_iter())
        .map(|r| LaunchRecord { kernel: names.get(&r.kernel).cloned().unwrap_or(r.kernel.clone()), ..r })
        .filter(|r| keep(&r.kernel))
        .collect();
    if records.is_empty() {
        return Err(Error::nothing_matched(
            format!("`{}` ran under GPGPU-Sim but launched no kernel coalprof could count", program.display()),
            s.kernel.as_ref().map(|k| format!("check `--kernel {k}`")),
        ));
    }
    let (mut rows, notices) = kernel_rows(records, &common.catalogue, &common.derivation)?;
    for r in &mut rows {
        r.notes.push(format!(
            "simulated in GPGPU-Sim ({CONFIG}): PTX, not SASS; counters summed over the kernel's launches"
        ));
    }
    let mut record = Record::with_provenance("sim", common, Provenance::new("sim"));
    let prov = &mut record.provenance;
    prov.gpu = Some(device_name());
    prov.compute_capability = Some("7.0".into());
    prov.settings.insert("simulator".into(), sim.version().into());
    prov.settings.insert("config".into(), CONFIG.into());
    prov.settings.insert("sim_mode".into(), s.profiler.sim_mode.name().into());
    prov.inputs = vec![s.source.as_ref().map_or(&program, |src| &src.file).display().to_string()];
    let facts = json!({
        "simulator": sim.version(),
        "config": CONFIG,
        "program": program,
        "source": s.source.as_ref().map(|src| &src.file),
        "nvcc_args": s.source.as_ref().map(|src| &src.nvcc_args),
        "args": s.args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
        "seconds": run.elapsed.as_secs_f64(),
    });
    if let serde_json::Value::Object(facts) = facts {
        record.merge(facts);
    }
    let mut results = Results::new(record.provenance.clone(), rows);
    results.notices = notices;
    let mut sources = Sources::new(s.source_root.clone());
    let opts = LineOptions { kernel: kernel_re.clone(), top: Some(3), ..LineOptions::default() };
    let lines = crate::lines::sim::build(sim_kernels(&run, &names), &opts, &common.catalogue, &mut sources)?;
    results.worst_lines = crate::lines::gate::worst_lines(&lines, &|_| (None, None));
    record.save(&dir)?;
    dir.save(&crate::render::run_folder(&results, &common.style)?)?;
    tracing::info!(run = %dir.path.display(), "saved; `coalprof lines {}` names the lines", dir.path.display());
    super::print(&render(&results, common.format, &common.style)?)?;
    Ok(Exit::Ok)
}

/// `lines RUN` on run folders `profile --backend sim` saved: the rows from the simulator's
/// per-PTX-line statistics and the PTX's `.loc`.
pub(crate) fn lines(common: &Common, s: &LinesSettings, folders: &[PathBuf]) -> Result<Exit> {
    if folders.len() != s.reports.len() {
        return Err(Error::usage("give simulated run folders and `.ncu-rep` reports to `lines` separately"));
    }
    let sim = common.tools.gpgpusim().ok();
    let mut sources = Sources::new(s.source_root.clone());
    let mut report: Option<crate::lines::LineReport> = None;
    for f in folders {
        let run = crate::parse::gpgpusim::read_run(f).map_err(|e| Error::input(f, e))?;
        let names = demangled(&run, sim.as_ref());
        let r = crate::lines::sim::build(sim_kernels(&run, &names), &s.options, &common.catalogue, &mut sources)?;
        match &mut report {
            Some(all) => {
                all.rows.extend(r.rows);
                all.notices.extend(r.notices);
            }
            None => report = Some(r),
        }
    }
    let report = report.ok_or_else(|| Error::usage("no simulated run given"))?;
    if report.rows.is_empty() {
        return Err(Error::nothing_matched(
            "no memory instruction of the simulated kernels matches".to_string(),
            s.options.kernel.as_ref().map(|k| format!("check `--kernel {k}`")),
        ));
    }
    super::print(&crate::render::render_lines(&report, common.format, &common.style)?)?;
    if let Some(path) = &s.sarif {
        super::write_sarif(path, &report, &|_| "warning")?;
    }
    Ok(Exit::Ok)
}
