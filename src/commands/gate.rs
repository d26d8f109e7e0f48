//! `coalprof check` and `coalprof baseline update` from the command line: load the inputs (any
//! kind `analyze` reads, or saved runs), then hand over to `check` / `baseline`.

use std::path::PathBuf;

use crate::analyze::Grouping;
use crate::error::Result;
use crate::exit::Exit;
use crate::inputs::Reader;
use crate::render::Format;
use crate::results::Results;
use crate::settings::{BaselineSettings, CheckCommand, Common};

fn load(common: &Common, paths: &[PathBuf]) -> Result<Vec<Results>> {
    let find_ncu = || common.ncu();
    let reader = Reader {
        catalogue: &common.catalogue,
        derivation: &common.derivation,
        grouping: Grouping::PerKernel,
        rep_reader: common.rep_reader,
        ncu: &find_ncu,
    };
    paths.iter().map(|p| reader.read(p)).collect()
}

/// Whether a rule could check a per-line metric: only then are `.ncu-rep` inputs read per line.
fn wants_lines(rules: &[crate::gate::Rule]) -> bool {
    rules.iter().any(|r| crate::lines::gate::KEYS.iter().any(|k| r.matches_metric(k)))
}

/// The line report of every `.ncu-rep` input (other inputs get none), all rows of every kernel.
fn line_reports(c: &CheckCommand) -> Result<Vec<Option<crate::lines::LineReport>>> {
    c.inputs
        .iter()
        .map(|p| {
            if crate::inputs::kind(p)? != crate::inputs::Kind::NcuRep {
                return Ok(None);
            }
            let launches = crate::lines::read(std::slice::from_ref(p))?;
            let mut sources = crate::lines::source::Sources::new(c.check.source_root.clone());
            let opts = crate::lines::Options::default();
            Ok(Some(crate::lines::build(launches, &opts, &mut sources, &mut |_| None)))
        })
        .collect()
}

pub fn check(common: &Common, c: &CheckCommand) -> Result<Exit> {
    let mut inputs = load(common, &c.inputs)?;
    let reports = if wants_lines(&c.check.rules) || c.check.sarif.is_some() { line_reports(c)? } else { Vec::new() };
    if wants_lines(&c.check.rules) {
        for (results, report) in inputs.iter_mut().zip(&reports) {
            if let Some(r) = report {
                results.rows.extend(crate::lines::gate::rows(r));
            }
        }
    }
    if let Some(path) = &c.check.sarif {
        let verdicts = super::check::evaluate_report(&c.check, &inputs)?;
        write_sarif(path, &reports, &verdicts)?;
    }
    if common.format == Format::Json {
        let report = super::check::evaluate_report(&c.check, &inputs)?;
        super::print(&(serde_json::to_string_pretty(&report).unwrap_or_default() + "\n"))?;
        return Ok(if report.failed() && !c.check.exit_zero { Exit::GateFailed } else { Exit::Ok });
    }
    let mut out = std::io::stdout().lock();
    super::check::run(&c.check, &inputs, &mut out)
}

/// SARIF of every line report; a result's level is the worst verdict of its line's checks
/// (`error` for a failed rule, `warning` for a warned one or none, `note` where rules passed).
fn write_sarif(
    path: &std::path::Path,
    reports: &[Option<crate::lines::LineReport>],
    verdicts: &crate::gate::Report,
) -> Result<()> {
    use crate::gate::Verdict;
    let mut all = crate::lines::LineReport {
        schema: crate::lines::aggregate::SCHEMA,
        rows: Vec::new(),
        notices: Vec::new(),
        arch: None,
    };
    for r in reports.iter().flatten() {
        all.rows.extend(r.rows.iter().cloned());
        all.arch = all.arch.take().or(r.arch.clone());
    }
    let level = |row: &crate::lines::LineRow| -> &'static str {
        let Some(label) = crate::lines::gate::line_label(row) else { return "warning" };
        let key = format!("{} @ {label}", row.kernel);
        let mine: Vec<Verdict> = verdicts.checks.iter().filter(|c| c.row == key).map(|c| c.verdict).collect();
        if mine.contains(&Verdict::Fail) {
            "error"
        } else if mine.contains(&Verdict::Warn) || mine.is_empty() {
            "warning"
        } else {
            "note"
        }
    };
    let log = crate::lines::sarif::sarif(&all, &level);
    let text = serde_json::to_string_pretty(&log)
        .map_err(|e| crate::error::Error::usage(format!("cannot encode SARIF: {e}")))?;
    std::fs::write(path, text + "\n").map_err(|e| crate::error::Error::write(path, e))
}

pub fn baseline_update(common: &Common, b: &BaselineSettings) -> Result<Exit> {
    let mut runs = load(common, &b.runs)?;
    // Lines are recorded when a rule gates them, keyed by kernel and file:line.
    if wants_lines(b.only_gated.as_deref().unwrap_or(&common.catalogue.rules)) {
        for (results, path) in runs.iter_mut().zip(&b.runs) {
            if crate::inputs::kind(path)? == crate::inputs::Kind::NcuRep {
                let launches = crate::lines::read(std::slice::from_ref(path))?;
                let mut sources = crate::lines::source::Sources::new(b.source_root.clone());
                let report =
                    crate::lines::build(launches, &crate::lines::Options::default(), &mut sources, &mut |_| None);
                results.rows.extend(crate::lines::gate::rows(&report));
            }
        }
    }
    match &b.only_gated {
        Some(rules) => super::baseline::update_for_rules(&runs, &b.path, rules)?,
        None => super::baseline::update(&runs, &b.path)?,
    }
    eprintln!("updated `{}`", b.path.display());
    Ok(Exit::Ok)
}
