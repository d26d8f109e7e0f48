//! `coalprof run`'s pipeline for the ncu backend, for one pattern: profile the pattern's
//! executable under ncu (one process for all its variants), read the report (natively, through
//! `import::open_report`), join it to the launch manifest, time the variants with CUDA events
//! outside the profiler, derive and predict. Saving is the engine's (`engine::drive`, after every
//! task), as is choosing where and how many patterns run at once. From records to rows a simulated pattern ([`sim`]) takes the same way,
//! [`Rows::pattern_rows`].

pub(crate) mod sim;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{Error, Result};
use crate::frame::findings::against_model;
use crate::frame::launches::{Grouping, Launches};
use crate::frame::manifest::{self, Entry};
use crate::frame::{Derivation, Frame, MeasuredBy};
use crate::import::{open_report, read_error, Bounds, Content, Open, RepReader};

use crate::metrics::Catalogue;
use crate::model::{predicted_rows, ModelSettings};
use crate::parse::csv::{self as ncu_csv, Keep, ParseError};
use crate::parse::{LaunchRecord, Value};
use crate::patterns::{variants, Pattern, Sizing, Variant};
use crate::results::{Metrics, Row, Source};
use crate::store::RunDir;
use crate::tools::ncu::{profiling_started, Ncu, ProfileRequest, ProfilerSettings};
use crate::tools::process::{run_sync, Cmd};
use crate::tools::ToolError;

/// The `--metrics` list of every profiling run: the catalogue's raw metrics and the device's.
pub(crate) fn profiled_metrics(catalogue: &Catalogue) -> String {
    std::iter::once(catalogue.ncu_metric_list())
        .chain(crate::parse::csv::DEVICE_METRICS.iter().map(|m| m.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// One pattern measured: its rows and what the run learned about the device.
pub(crate) struct Measured {
    pub rows: Vec<Row>,
    pub gpu: Option<String>,
    pub cc: Option<String>,
    pub peak_bandwidth: Option<f64>,
    pub passes: Vec<(String, u32)>,
    /// ncu's `==WARNING==` lines (kept in `run.json`, logged under `-v`).
    pub ncu_warnings: Vec<String>,
    /// Each launch's worst source lines (when the report has source counters).
    pub worst_lines: Vec<crate::results::WorstLine>,
}

/// What every pattern of a run is measured with.
#[derive(Clone, Copy)]
pub(crate) struct Profiler<'a> {
    pub ncu: &'a Ncu,
    pub catalogue: &'a Catalogue,
    pub derivation: &'a Derivation,
    pub settings: &'a ProfilerSettings,
    pub rep_reader: RepReader,
    /// What the measured rows are compared with.
    pub model: &'a ModelSettings,
    /// Environment of every child (ncu and the timing run): the GPU pin under `run --gpus`.
    pub env: &'a [(OsString, OsString)],
    /// Draw a progress bar (not when several patterns are profiled at once).
    pub progress: bool,
}

/// Profile one built pattern (`exe`) into `dir`.
pub(crate) fn measure(
    pattern: Pattern,
    sizing: Sizing,
    exe: &Path,
    profiler: &Profiler,
    dir: &RunDir,
) -> Result<Measured> {
    let Profiler { ncu, catalogue, derivation, settings, rep_reader, model, env, progress } = *profiler;
    let plan = variants(pattern, sizing);
    let stem = pattern.source_stem();
    let kernels: Vec<&str> = dedup(plan.iter().map(|v| v.kernel));
    let metrics = profiled_metrics(catalogue);

    // 1. The profiling run: every variant launched once, under ncu, into a report.
    let manifest_path = dir.file(&format!("{stem}.manifest.jsonl"));
    let partial = dir.file(&format!(".{stem}.partial.ncu-rep"));
    let request = ProfileRequest {
        metrics,
        cache_control: settings.cache_control.clone(),
        clock_control: settings.clock_control.clone(),
        kernel_regex: Some(format!("^({})$", kernels.join("|"))),
        launch_skip: None,
        launch_count: None,
        export: partial.clone(),
        launcher: Vec::new(),
        program: exe.to_path_buf(),
        args: kernel_args(&manifest_path, &plan, None),
        timeout: Some(settings.timeout),
        source_counters: source_counters(ncu),
        env: env.to_vec(),
    };
    let bar = if progress { progress_bar(pattern, plan.len()) } else { ProgressBar::hidden() };
    let mut on_line = |line: &str| {
        if let Some(k) = profiling_started(line) {
            bar.set_message(k.to_string());
            bar.inc(1);
        }
    };
    let profiled = ncu.profile(&request, &mut on_line);
    bar.finish_and_clear();
    let profiled = profiled?;
    let report = dir.file(&format!("{stem}.ncu-rep"));
    std::fs::rename(&partial, &report).map_err(|e| Error::write(&report, e))?;

    crate::cancel::check()?;
    // 2. The report's launches, joined to the manifest.
    let records = report_records(&report, ncu, catalogue, rep_reader, dir, &stem)?;
    let entries = manifest::read(&manifest_path)?;
    manifest::check_against_plan(&entries, &plan).map_err(|e| Error::input(&manifest_path, e.to_string()))?;
    let device = device_facts(&records);
    let ids: Vec<Option<u64>> = records.iter().map(|r| r.id).collect();
    // 3. Once the join held, the timing run, outside the profiler: CUDA-event medians per
    // variant, into the launch facts. 4. Every derived metric, and the comparison with the model.
    let mut facts = || {
        crate::cancel::check()?;
        let timing_path = dir.file(&format!("{stem}.timing.jsonl"));
        let times = time_variants(exe, &plan, &timing_path, settings, env)?;
        Ok((plan.iter())
            .map(|v| (v.name.clone(), launch_facts(v, times.get(&v.name).copied(), device.peak_bandwidth)))
            .collect())
    };
    let way = Rows { catalogue, derivation, model, source: Source::Measured, backend: None };
    let (rows, _) = way.pattern_rows(records, &plan, &entries, &report, &mut facts)?;
    // The join held, so launch i is entry i: ncu's result IDs name the variants' source lines.
    let variant_of: std::collections::HashMap<u64, String> =
        ids.iter().zip(&entries).filter_map(|(id, e)| Some(((*id)?, e.variant.clone()))).collect();
    // Sources resolve against the checkout the kernels were built from.
    let root = exe.ancestors().find(|d| d.join("metrics.toml").is_file()).unwrap_or(exe);
    let worst_lines = worst_lines(std::slice::from_ref(&report), root, true, catalogue, &|id| {
        (Some(pattern.name().to_string()), id.and_then(|i| variant_of.get(&i).cloned()))
    });
    Ok(Measured {
        rows,
        gpu: device.gpu,
        cc: device.cc,
        peak_bandwidth: device.peak_bandwidth,
        passes: profiled.passes,
        ncu_warnings: profiled.warnings,
        worst_lines,
    })
}

/// How a pattern's records become rows: the catalogue, the derivation, the model they are
/// compared with, and what the rows are (measured, or simulated by a `backend` that never
/// measures some counters).
pub(crate) struct Rows<'a> {
    pub catalogue: &'a Catalogue,
    pub derivation: &'a Derivation,
    pub model: &'a ModelSettings,
    pub source: Source,
    pub backend: Option<&'a MeasuredBy<'a>>,
}

impl Rows<'_> {
    /// One pattern's launch records → its rows, the one way measured and simulated runs take:
    /// each record through the sanity check into a row of its own (`Launches`), the verified
    /// join with the launch manifest (`entries`; its errors name `at`), the launch facts
    /// (asked for only once the join held: a broken report wastes no timing run), the
    /// derivation, the comparison with the model's prediction of `plan`, broken counters out;
    /// each row with its variant's parameters. The notices say what the rows lack.
    pub(crate) fn pattern_rows(
        &self,
        records: Vec<LaunchRecord>,
        plan: &[Variant],
        entries: &[Entry],
        at: &Path,
        facts: &mut dyn FnMut() -> Result<Vec<(String, Metrics)>>,
    ) -> Result<(Vec<Row>, Vec<String>)> {
        let Rows { catalogue, derivation, model, source, backend } = *self;
        let names = catalogue.ncu_names();
        let mut launches = Launches::new(&names, Grouping::PerLaunch);
        for r in records {
            launches.push(r)?;
        }
        let (frame, _, suspects) = launches.finish()?;
        let joined = frame.join_manifest(entries)?.map_err(|e| Error::input(at, e.to_string()))?;
        let facts = facts()?;
        let fact_keys: Vec<&str> = catalogue.facts.keys().map(String::as_str).collect();
        let derived = derivation.derive(joined.join_facts(&facts, &fact_keys)?)?;
        let mut predicted = predicted_rows(plan, model);
        derivation.apply(&mut predicted)?;
        let predicted = Frame::from_rows(&predicted, derivation.inputs().chain(derivation.keys()))?;
        let mut rows = against_model(derived, predicted, catalogue, source)?;
        let mut notices = derivation.discard(&mut rows, &suspects);
        notices.extend(derivation.notices_by(&mut rows, backend));
        for row in &mut rows {
            if let Some(v) = plan.iter().find(|v| Some(&v.name) == row.variant.as_ref()) {
                row.params = v.params();
            }
        }
        Ok((rows, notices))
    }
}

/// The three worst source lines of each launch (or kernel) of `report`, for the run's tables
/// and review; none (with a log line) when the report has no source counters or cannot be read
/// for them. Paths are made relative to `root`.
pub(crate) fn worst_lines(
    reports: &[PathBuf],
    root: &Path,
    per_launch: bool,
    catalogue: &crate::metrics::Catalogue,
    label: &dyn Fn(Option<u64>) -> (Option<String>, Option<String>),
) -> Vec<crate::results::WorstLine> {
    // Reports this run wrote: not untrusted input, so a real program's large module reads.
    let launches = match crate::lines::read(reports, crate::import::Bounds::Lifted) {
        Ok(l) => l,
        Err(e) => {
            crate::messages::warning(format!("no per-line attribution: {e}"));
            return Vec::new();
        }
    };
    let mut sources = crate::lines::source::Sources::new(root.to_path_buf());
    let opts = crate::lines::Options { per_launch, top: Some(3), ..Default::default() };
    let lines = match crate::lines::build(launches, &opts, catalogue, &mut sources, &mut |_| None) {
        Ok(l) => l,
        Err(e) => {
            crate::messages::warning(format!("no per-line attribution: {e}"));
            return Vec::new();
        }
    };
    for n in &lines.notices {
        tracing::info!("lines: {n}");
    }
    crate::lines::gate_rows::worst_lines(&lines, label)
}

/// Whether to collect per-instruction counters (`coalprof lines`): when this ncu has the
/// SourceCounters section; otherwise warn, each time it is asked, that lines will not be attributed.
pub(crate) fn source_counters(ncu: &Ncu) -> bool {
    let yes = ncu.has_section("SourceCounters");
    if !yes {
        crate::messages::warning(format!(
            "{} has no SourceCounters section: the report will carry no per-instruction counters \
             (`coalprof lines` needs them)",
            ncu.path.display()
        ));
    }
    yes
}

/// The arguments of a pattern executable: its manifest, the timing run if any, then one
/// `--variant` per variant of `plan`, in the one encoding of `Variant::kernel_arg`.
pub fn kernel_args(manifest: &Path, plan: &[Variant], timing: Option<(u32, u32)>) -> Vec<OsString> {
    let mut a: Vec<OsString> = vec!["--manifest".into(), manifest.into()];
    if let Some((warmup, repeats)) = timing {
        a.extend([
            "--time".into(),
            "--warmup".into(),
            warmup.to_string().into(),
            "--repeats".into(),
            repeats.to_string().into(),
        ]);
    }
    for v in plan {
        a.push("--variant".into());
        a.push(v.kernel_arg().into());
    }
    a
}

/// The facts a row gets from the catalogue and the timing run (see `metrics.toml`).
fn launch_facts(v: &Variant, event_time: Option<f64>, peak: Option<f64>) -> Metrics {
    let mut m = Metrics::new();
    m.insert("access_bytes".into(), f64::from(v.access_bytes));
    m.insert("algorithm_bytes_read".into(), v.bytes_read as f64);
    m.insert("algorithm_bytes_written".into(), v.bytes_written as f64);
    if let Some(t) = event_time {
        m.insert("event_time".into(), t);
    }
    if let Some(p) = peak {
        m.insert("peak_bandwidth".into(), p);
    }
    m
}

/// Run the executable with `--time`; returns each variant's median in seconds.
fn time_variants(
    exe: &Path,
    plan: &[Variant],
    manifest_path: &Path,
    s: &ProfilerSettings,
    env: &[(OsString, OsString)],
) -> Result<BTreeMap<String, f64>> {
    let mut cmd =
        Cmd::new(exe).args(kernel_args(manifest_path, plan, Some((s.warmup, s.repeats)))).timeout(Some(s.timeout));
    for (k, v) in env {
        cmd = cmd.env(k, v);
    }
    let out = run_sync(&cmd, None)?;
    if !out.status.success() {
        return Err(ToolError::failed(format!("the timing run of `{}` failed", exe.display()), &cmd, &out).into());
    }
    let entries = manifest::read(manifest_path)?;
    Ok(entries.into_iter().filter_map(|e| Some((e.variant, e.time_ms? / 1e3))).collect())
}

/// The launches of a report this run wrote, opened as every report is
/// ([`crate::import::open_report`]: natively; through `ncu --import` under `--reader ncu` or for
/// a format version the native reader does not know, the CSV then kept beside the report).
fn report_records(
    report: &Path,
    ncu: &Ncu,
    catalogue: &Catalogue,
    rep_reader: RepReader,
    dir: &RunDir,
    stem: &str,
) -> Result<Vec<LaunchRecord>> {
    let find_ncu = || Ok(ncu.clone());
    // A report this run wrote is not untrusted input: no bounds on what it holds.
    let opened = open_report(report, Open::Fallback { reader: rep_reader, ncu: &find_ncu }, Bounds::Lifted)?;
    match opened.content {
        Content::Native(launches) => {
            let keep = Keep::Only(catalogue.ncu_names().into_keys().collect());
            let records = (*launches).records_only(keep).map(|l| l.map(|l| l.record));
            records.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| read_error(report, e))
        }
        Content::Csv { text, .. } => {
            let csv = dir.write(&format!("{stem}.csv"), text.as_bytes())?;
            parse_records(&text, catalogue).map_err(|e| Error::input(csv, e.to_string()))
        }
    }
}

fn parse_records(csv: &str, catalogue: &Catalogue) -> std::result::Result<Vec<LaunchRecord>, ParseError> {
    // Launch and device facts (the peak-bandwidth attributes too) are always kept by the parser.
    let keep = catalogue.ncu_names().into_keys().collect();
    ncu_csv::open(csv.as_bytes(), Keep::Only(keep))?.collect()
}

struct Device {
    gpu: Option<String>,
    cc: Option<String>,
    peak_bandwidth: Option<f64>,
}

/// GPU name, compute capability and peak DRAM bandwidth (2 transfers per memory clock across
/// the bus: `2 × clock × bus_width / 8`), from the device attributes in the report.
fn device_facts(records: &[LaunchRecord]) -> Device {
    let first = records.first();
    let num = |n: &str| first.and_then(|r| r.metric(n)).and_then(Value::number);
    // ncu prints the memory clock in kHz as a bare number in base units (`hz` scaled, or none).
    let clock_hz = num("device__attribute_memory_clock_rate").map(|v| if v < 1e7 { v * 1e3 } else { v });
    let bus_bits = num("device__attribute_global_memory_bus_width");
    Device {
        gpu: first.and_then(|r| r.device.clone()),
        cc: first.and_then(|r| r.cc.clone()),
        peak_bandwidth: clock_hz.zip(bus_bits).map(|(c, b)| 2.0 * c * b / 8.0),
    }
}

fn progress_bar(pattern: Pattern, n: usize) -> ProgressBar {
    let bar = ProgressBar::new(n as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:24}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(format!("ncu {pattern}"));
    bar
}

fn dedup<'a>(it: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for k in it {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_bandwidth_from_the_device_attributes_of_a_real_report() {
        // ncu 2022.3's raw page of a GTX 1080 report: memory clock 5,005,000 kHz, 256-bit bus.
        let csv = include_str!(
            "../../tests/fixtures/ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv"
        );
        let records = parse_records(csv, &Catalogue::builtin()).unwrap();
        let d = device_facts(&records);
        assert_eq!(d.gpu.as_deref(), Some("NVIDIA GeForce GTX 1080"));
        assert_eq!(d.cc.as_deref(), Some("6.1"));
        assert_eq!(d.peak_bandwidth, Some(320.32e9), "the GTX 1080's 320 GB/s");
    }
}
