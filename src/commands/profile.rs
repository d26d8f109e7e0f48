//! `coalprof profile -- CMD ARGS…`: the user's own program under ncu, the same table. With no
//! manifest, amplification is over the bytes the threads asked for (the table says so).

use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::frame::launches::Grouping;
use crate::profile::profiled_metrics;
use crate::render::render;
use crate::settings::{Common, ProfileSettings};
use crate::store::RunDir;
use crate::tools::ncu::ProfileRequest;

pub(crate) fn run(common: &Common, s: &ProfileSettings) -> Result<Exit> {
    let ncu = common.ncu()?;
    let dir = RunDir::create(&s.out_base, None, "profile", &common.style)?;
    let partial = dir.file(".report.partial.ncu-rep");
    let metrics = profiled_metrics(&common.catalogue);
    let request = ProfileRequest {
        metrics,
        cache_control: s.profiler.cache_control.clone(),
        clock_control: s.profiler.clock_control.clone(),
        kernel_regex: s.kernel.clone(),
        launch_skip: s.launch_skip,
        launch_count: s.launch_count,
        export: partial.clone(),
        program: s.program.clone(),
        args: s.args.clone(),
        timeout: Some(s.profiler.timeout),
        source_counters: crate::profile::source_counters(&ncu),
        env: Vec::new(),
    };
    let mut echo = |line: &str| tracing::debug!(target: "ncu", "{line}");
    let profiled = ncu.profile(&request, &mut echo)?;
    let report = dir.file("report.ncu-rep");
    std::fs::rename(&partial, &report).map_err(|e| Error::write(&report, e))?;
    // Read natively: no `ncu --import` process (ncu only for a format version the reader
    // does not know, or under `--reader ncu`).
    let find_ncu = || Ok(ncu.clone());
    let reader = super::reader(common, s.grouping, &find_ncu);
    let mut results = reader.read(&report)?;
    results.provenance.backend = "ncu".into();
    let settings = &mut results.provenance.settings;
    settings.insert("cache_control".into(), s.profiler.cache_control.clone().into());
    settings.insert("clock_control".into(), s.profiler.clock_control.clone().into());
    settings.insert("replay_passes".into(), serde_json::json!(profiled.passes));
    if !profiled.warnings.is_empty() {
        for w in &profiled.warnings {
            tracing::info!("ncu: {w}");
        }
        settings.insert("ncu_warnings".into(), serde_json::json!(profiled.warnings));
    }
    results.worst_lines =
        crate::profile::worst_lines(&report, &s.source_root, s.grouping == Grouping::PerLaunch, &|_| (None, None));
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), "saved");
    super::print(&render(&results, common.format, &common.style)?)?;
    Ok(Exit::Ok)
}
