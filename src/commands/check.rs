//! `coalprof check`: evaluate the gate, write every output, then decide the exit code.
//!
//! Outputs are written before the exit code is decided, and all of them are attempted even if
//! one fails to write, so a failing gate still leaves its JUnit file and step summary behind
//! (gates that fail without reports, or report without failing, are the field's common bugs).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::exit::Exit;
use crate::gate::identity::identify;
use crate::gate::{evaluate, Baseline, Report};
use crate::lines::LineReport;
use crate::render::gate::{github, junit, markdown};
use crate::render::{Format, Style};
use crate::results::{is_line_metric, Results};
pub use crate::settings::CheckSettings;
use crate::settings::{CheckCommand, Common};

/// For each metric a rule names, the raw counters it is computed from as (key, ncu name): what
/// a check skipped for want of the metric lacked, and what to record.
pub(crate) type Needs = BTreeMap<String, Vec<(String, String)>>;

/// `coalprof check INPUT…`: load the inputs (with the per-line rows of `.ncu-rep` inputs when a
/// rule gates lines, and the kernel metrics their per-line counters give where the kernel
/// counters do not), write the SARIF if asked, then [`run`] on stdout and stderr.
pub fn command(common: &Common, c: &CheckCommand) -> Result<Exit, Error> {
    let mut inputs = super::load(common, &c.inputs)?;
    let lines = wants_lines(&c.check.rules, &common.catalogue);
    let fills = wants_fill(&c.check.rules);
    // Annotations and JUnit cases point at the kernel's worst source line where a report has
    // one, so reports are read per line for them too.
    let placed = c.check.github || c.check.junit.is_some();
    let reports = if lines || fills || placed || c.check.sarif.is_some() {
        line_reports(&c.inputs, &c.check.source_root, &common.catalogue, &common.tools, common.bounds)?
    } else {
        Vec::new()
    };
    for (results, report) in inputs.iter_mut().zip(&reports) {
        let Some(r) = report else { continue };
        if fills {
            crate::lines::gate::fill_kernel_metrics(results, r, &common.catalogue, true)?;
        }
        if lines {
            results.rows.extend(crate::lines::gate::rows(r));
        }
        if results.worst_lines.is_empty() {
            results.worst_lines = crate::lines::gate::worst_lines(r, &|_| (None, None));
        }
    }
    if let Some(path) = &c.check.sarif {
        write_sarif(path, &reports, &evaluate_report(&c.check, &inputs)?)?;
    }
    let needs = needs(&c.check.rules, common);
    let (out, log) = (&mut super::stdout(), &mut std::io::stderr().lock());
    // A check of one source line shows its code on the HTML page, from the same line reports.
    let code: Code = (reports.iter().flatten())
        .flat_map(|r| &r.rows)
        .filter_map(|row| Some((crate::lines::gate::row_key(row)?, row.source.clone()?)))
        .collect();
    run_printing(&c.check, &inputs, common.format, code, &needs, out, log)
}

/// The raw counters behind each metric `rules` name, with their ncu names (see [`Needs`]).
fn needs(rules: &[crate::gate::Rule], common: &Common) -> Needs {
    (rules.iter().filter_map(|r| r.literal_metric()))
        .map(|m| {
            let raw = common.derivation.reads(m).into_iter();
            let named =
                raw.map(|k| (k.to_string(), common.catalogue.raw.get(k).map(|r| r.ncu.clone()).unwrap_or_default()));
            (m.to_string(), named.collect())
        })
        .collect()
}

/// Whether a rule could check a kernel metric that a report's per-line counters can stand in
/// for ([`crate::lines::gate::fill_kernel_metrics`]).
pub(crate) fn wants_fill(rules: &[crate::gate::Rule]) -> bool {
    rules.iter().any(|r| crate::lines::gate::fillable().any(|k| r.matches_metric(k)))
}

/// Each source line's code by its row key (`kernel @ file:line`), for the HTML page.
type Code = BTreeMap<String, String>;

/// Whether a rule could check a per-line metric: only then are `.ncu-rep` inputs read per line.
pub(crate) fn wants_lines(rules: &[crate::gate::Rule], catalogue: &crate::metrics::Catalogue) -> bool {
    rules.iter().any(|r| catalogue.line_keys().any(|k| r.matches_metric(k)))
}

/// The line report of every input that has per-line counters: an `.ncu-rep` (its source
/// counters, streamed one launch at a time into the per-line sums, read within `bounds`), a run
/// folder of `profile -- PROGRAM` (the report it measured), of `profile --backend sim` (the
/// simulator's per-line statistics) or of `coalprof triton` (the engine's counts); other inputs
/// get none. All rows of every kernel.
pub(crate) fn line_reports(
    inputs: &[PathBuf],
    source_root: &Path,
    catalogue: &crate::metrics::Catalogue,
    tools: &crate::tools::locate::ToolSearch,
    bounds: crate::import::Bounds,
) -> Result<Vec<Option<LineReport>>, Error> {
    (inputs.iter())
        .map(|p| {
            let mut sources = crate::lines::source::Sources::new(source_root.to_path_buf());
            let opts = crate::lines::Options::default();
            if let Some(doc) = crate::triton::folder(p) {
                return crate::triton::line_report(&crate::triton::read_folder(&doc)?, &opts, catalogue, &mut sources)
                    .map(Some);
            }
            if let Some(folder) = crate::measure::sim::sim_folder(p) {
                // The simulator only demangles the kernels' names; without it they stay mangled
                // on both sides (the results' rows were named the same way when it was absent).
                let sim = tools.gpgpusim().ok();
                let report = crate::measure::sim::line_report(&[folder], &opts, catalogue, &mut sources, sim.as_ref())?;
                return Ok(Some(report));
            }
            // A run folder of `profile -- PROGRAM` keeps the report it measured beside its
            // results; coalprof wrote that one, so it is read without the bounds.
            let measured = p.join("report.ncu-rep");
            let (report, bounds) = if p.is_dir() && measured.is_file() {
                (measured, crate::import::Bounds::Lifted)
            } else if crate::import::kind(p)? == crate::import::Kind::NcuRep {
                (p.clone(), bounds)
            } else {
                return Ok(None);
            };
            let report = std::slice::from_ref(&report);
            crate::lines::report(report, bounds, &opts, catalogue, &mut sources, &mut |_| None).map(Some)
        })
        .collect()
}

/// SARIF of every line report; a result's level is the worst verdict of its line's checks
/// (`error` for a failed rule, `warning` for a warned one or none, `note` where rules passed).
fn write_sarif(path: &Path, reports: &[Option<LineReport>], verdicts: &Report) -> Result<(), Error> {
    use crate::gate::Verdict;
    let mut all = LineReport::empty();
    for r in reports.iter().flatten() {
        all.rows.extend(r.rows.iter().cloned());
        all.arch = all.arch.take().or(r.arch.clone());
    }
    let level = |row: &crate::lines::LineRow| -> &'static str {
        let Some(key) = crate::lines::gate::row_key(row) else { return "warning" };
        let mine: Vec<Verdict> = verdicts.checks.iter().filter(|c| c.row == key).map(|c| c.verdict).collect();
        if mine.contains(&Verdict::Fail) {
            "error"
        } else if mine.contains(&Verdict::Warn) || mine.is_empty() {
            "warning"
        } else {
            "note"
        }
    };
    super::write_sarif(path, &all, &level)
}

/// Load the baseline (if any) and evaluate; no outputs.
fn evaluate_report(settings: &CheckSettings, inputs: &[Results]) -> Result<Report, Error> {
    let baseline = settings.baseline.as_deref().map(Baseline::load).transpose()?;
    Ok(evaluate(&settings.rules, inputs, baseline.as_ref()))
}

/// Run the gate over `inputs`, print the verdict table (or the checks as JSON) and the
/// annotations to `out`, write the JUnit file and step summary, and return the exit code: `Ok`
/// (0), `GateFailed` (1, unless `exit_zero`). Errors: an unreadable baseline (3), an output that
/// cannot be written (3), no rule matching any row (5; after the outputs are written;
/// `exit_zero` does not mask it). Every output format takes this one path.
pub fn run(
    settings: &CheckSettings,
    inputs: &[Results],
    json: bool,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> Result<Exit, Error> {
    let format = if json { Format::Json } else { Format::Table };
    run_printing(settings, inputs, format, Code::new(), &Needs::new(), out, log)
}

/// [`run`], printing the verdicts in `format` on stdout (`render::render_check`'s formats; the
/// HTML page with each line's `code`); `needs` says what a skipped metric is made of.
/// Where every check was skipped, a warning says so and why: nothing was compared, so the
/// gate does not read as passed (the exit code stays 0: no rule failed).
pub(crate) fn run_printing(
    settings: &CheckSettings,
    inputs: &[Results],
    format: Format,
    code: Code,
    needs: &Needs,
    out: &mut dyn Write,
    log: &mut dyn Write,
) -> Result<Exit, Error> {
    let mut report = evaluate_report(settings, inputs)?;
    if report.all_skipped() {
        let why = nothing_checked(&report, &settings.rules, inputs, needs);
        crate::messages::warning(&why);
        report.nothing_checked = Some(why);
    }
    report.code = code;
    let mut errors = Vec::new();
    let mut style = Style::plain(settings.color, settings.width);
    style.summary = settings.summary.clone();
    let text = crate::render::render_check(&report, format, &style)?;
    // The table and the markdown are text for people: annotations follow them on stdout. JSON,
    // CSV and HTML are parsed: nothing else may share stdout with them.
    let table = matches!(format, Format::Table | Format::Markdown);
    // Beside annotations, the table is fenced: nothing in it can be read as a workflow command.
    let text = if settings.github && table { github::fenced(&text) } else { text };
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        errors.push(Error::write("<stdout>", e));
    }
    if settings.github {
        // Workflow commands after the table; beside JSON or HTML on stdout they would break
        // `jq` or the page, so they go to stderr, which the Actions runner reads for commands too.
        let sink: &mut dyn Write = if table { out } else { log };
        if let Err(e) = sink.write_all(github::annotations(&report).as_bytes()).and_then(|()| sink.flush()) {
            errors.push(Error::write("<stdout>", e));
        }
    }
    if let Some(path) = &settings.junit {
        errors.extend(write_file(path, &junit::render(&report)).err());
    }
    if let Some(path) = &settings.step_summary {
        errors.extend(append_file(path, &markdown::render(&report)).err());
    }
    if let Some(e) = errors.into_iter().next() {
        return Err(e);
    }
    if report.matched_rows == 0 {
        return Err(nothing_matched(settings, inputs));
    }
    Ok(if report.failed() && !settings.exit_zero { Exit::GateFailed } else { Exit::Ok })
}

/// Why every check was skipped, for people: the metrics the inputs could not give and the
/// counters they lack (with ncu's names), the checks that need a baseline, whether per-line
/// counters are missing, and how to record what is missing.
fn nothing_checked(report: &Report, rules: &[crate::gate::Rule], inputs: &[Results], needs: &Needs) -> String {
    let rows: HashMap<(String, String), &crate::results::Row> =
        identify(inputs).into_iter().map(|(arch, key, row, _)| ((arch, key), row)).collect();
    let (mut absent, mut lacked, mut baseline, mut other) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for c in &report.checks {
        if c.current.is_none() {
            absent.insert(format!("`{}`", c.metric));
            let row = rows.get(&(c.arch.clone(), c.row.clone()));
            for (key, ncu) in needs.get(&c.metric).into_iter().flatten() {
                if row.is_none_or(|r| !r.metrics.contains_key(key)) {
                    lacked.insert(if ncu.is_empty() { key.clone() } else { format!("{key} ({ncu})") });
                }
            }
        } else if !report.has_baseline && c.message.starts_with("no baseline given") {
            baseline.insert(format!("`{}`", c.metric));
        } else {
            other.insert(format!("`{}`: {}", c.metric, c.message));
        }
    }
    let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
    let rows_checked = report.checks.iter().map(|c| (&c.arch, &c.row)).collect::<BTreeSet<_>>().len();
    let mut why = vec![format!(
        "nothing was checked: every rule was skipped ({} check{} on {rows_checked} row{}), so this is no pass",
        report.checks.len(),
        if report.checks.len() == 1 { "" } else { "s" },
        if rows_checked == 1 { "" } else { "s" },
    )];
    if !absent.is_empty() {
        why.push(match lacked.is_empty() {
            true => format!("{} could not be computed from the inputs", list(&absent)),
            false => format!("{} could not be computed: the inputs lack {}", list(&absent), list(&lacked)),
        });
    }
    if !baseline.is_empty() {
        why.push(format!(
            "{} {} only compared against a baseline: give `--baseline FILE` (written by `coalprof baseline update`)",
            list(&baseline),
            if baseline.len() == 1 { "is" } else { "are" }
        ));
    }
    why.extend(other);
    let line_rules: BTreeSet<String> = (rules.iter().filter_map(|r| r.literal_metric()))
        .filter(|m| is_line_metric(m))
        .map(|m| format!("`{m}`"))
        .collect();
    let no_lines = !line_rules.is_empty() && inputs.iter().flat_map(|r| &r.rows).all(|r| r.line.is_none());
    if no_lines {
        why.push(format!(
            "no input has per-instruction counters (a `.ncu-rep` with the SourceCounters section), which the per-line \
             rules on {} check",
            list(&line_rules)
        ));
    }
    if !lacked.is_empty() || no_lines {
        why.push(
            "to record them: `coalprof profile -- PROGRAM` asks ncu for every counter coalprof uses; with ncu itself, \
             `ncu --set full -o REPORT PROGRAM` (`--section SourceCounters` adds the per-line counters, `--metrics` \
             with the ncu names above the kernel ones)"
                .to_string(),
        );
    }
    why.join("\n  ")
}

fn nothing_matched(settings: &CheckSettings, inputs: &[Results]) -> Error {
    let rows = identify(inputs);
    if settings.rules.is_empty() {
        return Error::nothing_matched(
            "no [[gate]] rules to check",
            Some("add [[gate]] entries to `metrics.toml`".into()),
        );
    }
    if rows.is_empty() {
        return Error::nothing_matched("the inputs have no rows to check", None);
    }
    let mut keys: Vec<String> = rows.iter().map(|(_, key, _, _)| format!("`{key}`")).collect();
    keys.dedup();
    let more = if keys.len() > 5 { format!(" and {} more", keys.len() - 5) } else { String::new() };
    keys.truncate(5);
    Error::nothing_matched(
        format!("no [[gate]] rule matched any of the {} rows", rows.len()),
        Some(format!(
            "`match` is a glob over row keys (`pattern/variant`) or kernel names, or `re:<regex>`; the rows are {}{more}",
            keys.join(", ")
        )),
    )
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    crate::store::write_output(path, text.as_bytes())
}

fn append_file(path: &Path, text: &str) -> Result<(), Error> {
    create_parent(path)?;
    let mut f = OpenOptions::new().create(true).append(true).open(path).map_err(|e| Error::write(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::write(path, e))
}

fn create_parent(path: &Path) -> Result<(), Error> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, e)),
        _ => Ok(()),
    }
}
