//! `coalprof run`: the built-in patterns, measured with ncu where a GPU is, predicted by the
//! address model elsewhere (`--backend` chooses). Every finished pattern is saved before the
//! next one starts; a pattern that fails does not cost the others their results.

use crate::build::build;
use crate::error::{Error, Result};
use crate::exit::Exit;
use crate::findings;
use crate::model::{predict, ModelSettings};
use crate::patterns::{variants, Variant};
use crate::render::render;
use crate::results::{Provenance, Results, Row, Source};
use crate::run::{measure, run_record, Profiler};
use crate::settings::{Backend, Common, RunSettings};
use crate::store::RunDir;
use crate::tools::ToolError;

pub fn run(common: &Common, s: &RunSettings) -> Result<Exit> {
    let (backend, notice) = choose(common, s)?;
    let model = ModelSettings { l2_fetch_bytes: s.l2_fetch_bytes };
    let (results, exit) = match backend {
        Backend::Model => (predicted(common, s, &model, notice)?, Exit::Ok),
        _ => measured(common, s, &model)?,
    };
    super::print(&render(&results, common.format, common.style)?)?;
    Ok(exit)
}

/// `auto` measures only where a GPU and ncu are both present, and says so when it cannot.
fn choose(common: &Common, s: &RunSettings) -> Result<(Backend, Option<String>)> {
    match s.backend {
        Backend::Auto => match common.gpus().and_then(|_| Ok(common.ncu()?)) {
            Ok(_) => Ok((Backend::Ncu, None)),
            Err(e) => Ok((
                Backend::Model,
                Some(format!("{e}: showing the address model's prediction (every number is predicted)")),
            )),
        },
        b => Ok((b, None)),
    }
}

fn provenance(backend: &str) -> Provenance {
    Provenance { coalprof: env!("CARGO_PKG_VERSION").into(), backend: backend.into(), ..Provenance::default() }
}

/// A row for `v` carrying the model's numbers.
fn predicted_row(v: &Variant, model: &ModelSettings) -> Row {
    let p = predict(v, model);
    Row {
        pattern: Some(v.pattern.name().into()),
        variant: Some(v.name.clone()),
        grid: Some(v.launch.grid),
        block: Some(v.launch.block),
        params: v.params(),
        metrics: p.metrics,
        notes: p.notes,
        ..Row::new(v.kernel, Source::Predicted)
    }
}

fn predicted(common: &Common, s: &RunSettings, model: &ModelSettings, notice: Option<String>) -> Result<Results> {
    let rows = s.patterns.iter().flat_map(|&p| variants(p, s.sizing)).map(|v| predicted_row(&v, model)).collect();
    let mut prov = provenance("model");
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());
    prov.settings.insert("size_bytes".into(), s.sizing.bytes.into());
    let mut results = Results::new(prov, rows);
    results.notices.extend(notice);
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "model")?;
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), format = ?common.format, "saved");
    Ok(results)
}

fn measured(common: &Common, s: &RunSettings, model: &ModelSettings) -> Result<(Results, Exit)> {
    let ncu = common.ncu()?;
    let nvcc = common.nvcc()?;
    let arch = match &s.arch {
        Some(a) => a.clone(),
        None => common.gpu_arch()?,
    };
    let built = build(&s.patterns, &arch, &nvcc, &common.cache)?;
    let dir = RunDir::create(&s.out_base, s.run_id.as_deref(), "ncu")?;
    let ncu_version = ncu.version().ok();
    let record = run_record(&s.profiler, s.sizing, &arch, ncu_version.as_deref(), &s.patterns);
    dir.write("run.json", format!("{record:#}\n").as_bytes())?;
    let mut prov = provenance("ncu");
    prov.ncu_version = ncu_version;
    if let Some(g) = common.gpus().ok().and_then(|g| g.into_iter().next()) {
        prov.gpu = Some(g.name);
        prov.compute_capability = Some(g.compute_capability);
        prov.driver = Some(g.driver);
    }
    prov.settings.insert("cache_control".into(), s.profiler.cache_control.clone().into());
    prov.settings.insert("clock_control".into(), s.profiler.clock_control.clone().into());
    prov.settings.insert("l2_fetch_bytes".into(), model.l2_fetch_bytes.into());
    let mut results = Results::new(prov, Vec::new());
    let mut failed: Vec<Error> = Vec::new();
    let profiler = Profiler {
        ncu: &ncu,
        catalogue: &common.catalogue,
        derivation: &common.derivation,
        settings: &s.profiler,
        rep_reader: common.rep_reader,
    };
    for b in &built {
        match measure(b.pattern, s.sizing, &b.exe, &profiler, &dir) {
            Ok(m) => {
                let plan = variants(b.pattern, s.sizing);
                for (mut row, v) in m.rows.into_iter().zip(&plan) {
                    row.predicted = Some(predict(v, model).metrics);
                    findings::compare(&mut row, &common.catalogue);
                    results.rows.push(row);
                }
                results.worst_lines.extend(m.worst_lines);
                let p = &mut results.provenance;
                p.gpu = p.gpu.take().or(m.gpu);
                p.compute_capability = p.compute_capability.take().or(m.cc);
                p.peak_bandwidth_bytes_per_s = p.peak_bandwidth_bytes_per_s.or(m.peak_bandwidth);
                p.settings.insert(format!("replay_passes.{}", b.pattern), serde_json::json!(m.passes));
                dir.save_results(&results)?;
            }
            Err(e) if fatal(&e) => {
                dir.save_results(&results)?;
                return Err(e);
            }
            Err(e) => {
                eprintln!("error: pattern `{}`: {e}", b.pattern);
                failed.push(e);
            }
        }
    }
    dir.save_results(&results)?;
    tracing::info!(run = %dir.path.display(), "saved");
    let exit = failed.first().map_or(Exit::Ok, Error::exit);
    Ok((results, exit))
}

/// Errors after which no other pattern can succeed: no profiler, or the user pressed Ctrl-C.
fn fatal(e: &Error) -> bool {
    matches!(
        e,
        Error::Unavailable { .. }
            | Error::Tool(ToolError::NoProfiler { .. } | ToolError::Interrupted { .. } | ToolError::NotFound { .. })
    )
}
