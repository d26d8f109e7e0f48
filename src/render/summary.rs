//! The summary (`--format summary`, `summary-md`): a compact, versioned projection of any result
//! for kernel-writing agents and people — per kernel the headline numbers against their ideal,
//! the worst lines with their diagnosis, the gate's verdict, the run folder that holds the rest.
//! One [`Summary`] is built from what each command already has (results, a line report, the
//! gate's report) and written as JSON (`coalprof-summary/1`, one line) or as markdown.
//!
//! Bounded: by default 5 kernels, 5 lines and 5 checks, and then, should the JSON still pass
//! [`DEFAULT_BYTES`], the last lines, checks and kernels are left out until it fits; what was
//! left out is counted in `truncated`. Names are cut as the tables cut them and made visible
//! text (`text::visible`) before they enter the struct, so no format carries a control
//! character; markdown escapes them once more for its cells.

use serde::Serialize;

use super::columns::function_name;
use super::{Fmt, Style};
use crate::error::{Error, Result};
use crate::gate::Report;
use crate::lines::{LineReport, LineRow};
use crate::results::{ranked, Results, Row, WorstLine};
use crate::text::{cut_middle, elide_left, visible};

/// Version of the summary's JSON layout. Bump it on any change that could break a reader.
pub(crate) const SCHEMA: &str = "coalprof-summary/1";

/// Kernels, lines and checks shown of each by default (`--summary-limit` changes it).
pub(crate) const DEFAULT_LIMIT: usize = 5;

/// The most bytes the default summary's JSON takes (with its newline).
pub(crate) const DEFAULT_BYTES: usize = 4096;

/// The widest kernel name shown: the terminal table's kernel column.
const NAME: usize = 48;
/// The widest location shown (the file name and line are never cut).
const LOCATION: usize = 64;
/// The widest line of code shown: the `lines` table's code column.
const CODE: usize = 60;
/// The widest input path and notice shown.
const TEXT: usize = 200;
/// Inputs named; the others are counted.
const INPUTS: usize = 3;

/// What a summary says, whatever made it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Summary {
    /// `coalprof-summary/1`.
    schema: &'static str,
    /// The command that made the result (`analyze`, `lines`, `profile`, `run`, `check`, `triton`).
    command: &'static str,
    /// What gave the numbers: `import` (reports read), `ncu`, `model`, `sim`, `triton`.
    #[serde(skip_serializing_if = "Option::is_none")]
    backend: Option<String>,
    /// The GPU the numbers come from, where the inputs say.
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<String>,
    /// The inputs read (the first few; the others are counted in `truncated`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<String>,
    /// The run folder holding the whole result (`profile`, `run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    run_folder: Option<String>,
    /// `check`'s verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    gate: Option<Gate>,
    /// Per kernel (or built-in variant), worst first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    kernels: Vec<Kernel>,
    /// The worst source lines across the kernels, worst first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    lines: Vec<Line>,
    /// What the numbers cannot say (run-level notices), each cut to a line.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notices: Vec<String>,
    /// What was left out to keep the summary short.
    truncated: Truncated,
}

/// How many of each were left out.
#[derive(Debug, Clone, Default, Serialize)]
struct Truncated {
    kernels_omitted: usize,
    lines_omitted: usize,
    #[serde(skip_serializing_if = "is_zero")]
    checks_omitted: usize,
    #[serde(skip_serializing_if = "is_zero")]
    inputs_omitted: usize,
    #[serde(skip_serializing_if = "is_zero")]
    notices_omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One kernel and its headline numbers.
#[derive(Debug, Clone, Serialize)]
struct Kernel {
    /// `pattern/variant`, or the kernel's function name (with its rank), cut as the table cuts it.
    name: String,
    /// `measured`, `predicted` or `simulated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'static str>,
    /// Launches the numbers sum.
    launches: u64,
    /// The catalogue's headline metrics and those with an ideal, in its column order, by key.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "as_map")]
    metrics: Vec<(String, Metric)>,
}

/// One metric's value and, where the catalogue names one, its ideal.
#[derive(Debug, Clone, Serialize)]
struct Metric {
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    ideal: Option<f64>,
    /// The column's header and rounding, for markdown.
    #[serde(skip)]
    header: String,
    #[serde(skip)]
    format: Fmt,
}

/// `[(key, metric)]` as a JSON object, in the vector's order.
fn as_map<S: serde::Serializer>(v: &[(String, Metric)], s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_map(v.iter().map(|(k, m)| (k, m)))
}

/// One of the worst lines.
#[derive(Debug, Clone, Serialize)]
struct Line {
    kernel: String,
    /// `kernels/stride.cu:20`.
    location: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    op: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sectors_per_request: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ideal_sectors_per_request: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    excess_sectors: Option<f64>,
    /// Its share of the kernel's excess sectors (0–1).
    #[serde(skip_serializing_if = "Option::is_none")]
    excess_share: Option<f64>,
    /// Shared wavefronts per ideal one: n for an n-way bank conflict.
    #[serde(skip_serializing_if = "Option::is_none")]
    shared_wavefronts_per_ideal: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shared_excess_wavefronts: Option<f64>,
    /// The rule of the waste it is (`CP1001`), where `lines` gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'static str>,
    /// What the numbers mean and the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    diagnosis: Option<String>,
    /// The line's code, cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
}

/// `check`'s verdict.
#[derive(Debug, Clone, Serialize)]
struct Gate {
    /// `fail`, `pass`, or `nothing-checked` (every check skipped: no pass).
    verdict: &'static str,
    /// `1 failed, 2 passed`.
    tally: String,
    /// The failing checks, then the warnings.
    checks: Vec<GateCheck>,
}

/// One failing or warning check.
#[derive(Debug, Clone, Serialize)]
struct GateCheck {
    verdict: &'static str,
    /// The row: the kernel, or `kernel @ file:line (op)` for a line row.
    row: String,
    metric: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    /// The limits that applied (`<= 4.5`).
    limits: String,
    /// Why, in one line.
    message: String,
    /// The source line it is about, where the inputs know.
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<String>,
}

/// Text from an input: visible, cut in the middle.
fn name(s: &str, max: usize) -> String {
    cut_middle(&visible(s), max)
}

/// A location: visible, elided from the left.
fn place(s: &str) -> String {
    elide_left(&visible(s), LOCATION)
}

impl Summary {
    fn new(style: &Style) -> Summary {
        Summary {
            schema: SCHEMA,
            command: style.summary.command,
            backend: None,
            gpu: None,
            inputs: Vec::new(),
            run_folder: style.summary.run_folder.as_ref().map(|p| name(&p.display().to_string(), TEXT)),
            gate: None,
            kernels: Vec::new(),
            lines: Vec::new(),
            notices: Vec::new(),
            truncated: Truncated::default(),
        }
    }

    /// The summary of `results`: its kernels, worst lines and notices.
    pub(crate) fn of_results(results: &Results, style: &Style) -> Summary {
        let mut s = Summary::new(style);
        s.backend = Some(results.provenance.backend.to_string());
        s.gpu = results.provenance.gpu.as_deref().map(|g| name(g, NAME));
        s.inputs(&results.provenance.inputs);
        s.notices = results.notices.iter().map(|n| name(n, TEXT)).collect();
        let mut kernels: Vec<&Row> = results.rows.iter().filter(|r| r.line.is_none()).collect();
        // Worst first: the largest ratio to its ideal the catalogue's `*_over_ideal` metrics
        // give (none: after those that have one, in input order).
        kernels.sort_by(|a, b| over_ideal(b).total_cmp(&over_ideal(a)));
        s.kernels = kernels.into_iter().map(|r| kernel(r, style)).collect();
        // Each kernel's worst lines come worst first from `lines`; across kernels, by their
        // excess sectors (stable: a bank conflict keeps its place in its kernel's list).
        let mut worst: Vec<&WorstLine> = results.worst_lines.iter().collect();
        worst.sort_by(|a, b| b.excess_sectors.unwrap_or(0.0).total_cmp(&a.excess_sectors.unwrap_or(0.0)));
        s.lines = worst.into_iter().map(worst_line).collect();
        s
    }

    /// The summary of a line report: its kernels (names and launches) and worst lines.
    pub(crate) fn of_lines(report: &LineReport, style: &Style) -> Summary {
        let mut s = Summary::new(style);
        let inputs: Vec<String> = style.summary.inputs.iter().map(|p| p.display().to_string()).collect();
        s.inputs(&inputs);
        s.notices = report.notices.iter().map(|n| name(n, TEXT)).collect();
        for r in &report.rows {
            let n = kernel_name(None, None, &r.kernel, r.rank);
            if !s.kernels.iter().any(|k| k.name == n) {
                s.kernels.push(Kernel { name: n, source: None, launches: r.launches, metrics: Vec::new() });
            }
        }
        let mut rows: Vec<&LineRow> = report.rows.iter().filter(|r| crate::lines::gate::worth_naming(r)).collect();
        rows.sort_by(|a, b| crate::lines::aggregate::waste_order(a, b));
        s.lines = rows.into_iter().map(line_row).collect();
        s
    }

    /// The summary of `check`: the verdict and its failing and warning checks.
    pub(crate) fn of_check(report: &Report, style: &Style) -> Summary {
        use crate::gate::verdict::Verdict;
        let mut s = Summary::new(style);
        let verdict = if report.failed() {
            "fail"
        } else if report.nothing_checked.is_some() {
            "nothing-checked"
        } else {
            "pass"
        };
        let bad = |v: Verdict| report.checks.iter().filter(move |c| c.verdict == v);
        let checks = bad(Verdict::Fail)
            .chain(bad(Verdict::Warn))
            .map(|c| GateCheck {
                verdict: c.verdict.as_str(),
                row: name(&c.row, NAME + LOCATION),
                metric: visible(&c.metric).into_owned(),
                value: c.current,
                limits: name(&c.limits, TEXT),
                message: name(&c.message, TEXT),
                line: c.source.as_ref().map(|l| match l.line {
                    Some(n) => place(&format!("{}:{n}", l.file.display())),
                    None => place(&l.file.display().to_string()),
                }),
            })
            .collect();
        if let Some(why) = &report.nothing_checked {
            // Its first line; the rest (what to record) is on stderr.
            s.notices.push(name(why.lines().next().unwrap_or_default(), TEXT));
        }
        let inputs: Vec<String> = style.summary.inputs.iter().map(|p| p.display().to_string()).collect();
        s.inputs(&inputs);
        s.gate = Some(Gate { verdict, tally: report.tally(), checks });
        s
    }

    fn inputs(&mut self, inputs: &[String]) {
        self.inputs = inputs.iter().take(INPUTS).map(|i| name(i, TEXT)).collect();
        self.truncated.inputs_omitted = inputs.len().saturating_sub(INPUTS);
    }

    /// Cut to `limit` kernels, lines, checks and notices each (`Some(0)`: all); by default
    /// ([`DEFAULT_LIMIT`]) then to [`DEFAULT_BYTES`] of JSON.
    pub(crate) fn bounded(mut self, limit: Option<usize>) -> Result<Summary> {
        let n = match limit {
            Some(0) => usize::MAX,
            Some(n) => n,
            None => DEFAULT_LIMIT,
        };
        let t = &mut self.truncated;
        t.kernels_omitted += cut(&mut self.kernels, n);
        t.lines_omitted += cut(&mut self.lines, n);
        t.notices_omitted += cut(&mut self.notices, n);
        if let Some(g) = &mut self.gate {
            t.checks_omitted += cut(&mut g.checks, n);
        }
        if limit.is_none() {
            // Longest list first, lines before kernels at a tie (each kernel has its numbers
            // beside the lines), until the JSON fits.
            while self.json()?.len() > DEFAULT_BYTES {
                let checks = self.gate.as_ref().map_or(0, |g| g.checks.len());
                let t = &mut self.truncated;
                if !self.notices.is_empty() {
                    self.notices.pop();
                    t.notices_omitted += 1;
                } else if !self.lines.is_empty() && self.lines.len() >= self.kernels.len().max(checks) {
                    self.lines.pop();
                    t.lines_omitted += 1;
                } else if checks > 0 && checks >= self.kernels.len() {
                    self.gate.as_mut().map(|g| g.checks.pop());
                    t.checks_omitted += 1;
                } else if !self.kernels.is_empty() {
                    self.kernels.pop();
                    t.kernels_omitted += 1;
                } else if !self.lines.is_empty() {
                    self.lines.pop();
                    t.lines_omitted += 1;
                } else {
                    break;
                }
            }
        }
        Ok(self)
    }

    /// The JSON: one line.
    pub(crate) fn json(&self) -> Result<String> {
        Ok(serde_json::to_string(self).map_err(|e| Error::encoding("JSON", e))? + "\n")
    }

    /// The markdown: a heading, the kernels' numbers, the worst lines, the verdict, what was
    /// left out. Every name is escaped for a cell or a code span (`text::markdown`).
    pub(crate) fn markdown(&self) -> String {
        let esc = crate::text::markdown;
        let mut out = format!("# coalprof {} summary\n\n", self.command);
        let mut facts = Vec::new();
        if let Some(b) = &self.backend {
            facts.push(format!("backend `{}`", esc(b)));
        }
        if let Some(g) = &self.gpu {
            facts.push(format!("GPU `{}`", esc(g)));
        }
        if !self.inputs.is_empty() {
            let inputs: Vec<String> = self.inputs.iter().map(|i| format!("`{}`", esc(i))).collect();
            facts.push(format!("inputs {}", inputs.join(", ")));
        }
        if let Some(f) = &self.run_folder {
            facts.push(format!("run folder `{}`", esc(f)));
        }
        if !facts.is_empty() {
            out.push_str(&format!("{}\n\n", facts.join("; ")));
        }
        if let Some(g) = &self.gate {
            out.push_str(&format!("**Gate: {}** ({})\n\n", g.verdict, esc(&g.tally)));
            for c in &g.checks {
                let value = c.value.map(crate::text::fmt_num).unwrap_or_else(|| "–".into());
                let line = c.line.as_ref().map(|l| format!(" at `{}`", esc(l))).unwrap_or_default();
                out.push_str(&format!(
                    "- {} `{}` `{}` = {value} ({}){line}: {}\n",
                    c.verdict,
                    esc(&c.row),
                    esc(&c.metric),
                    esc(&c.limits),
                    esc(&c.message)
                ));
            }
            if !g.checks.is_empty() {
                out.push('\n');
            }
        }
        if !self.kernels.is_empty() {
            out.push_str("| kernel | source | launches | numbers (ideal) |\n|:--|:--|--:|:--|\n");
            for k in &self.kernels {
                let numbers: Vec<String> = (k.metrics.iter())
                    .map(|(_, m)| {
                        let ideal = m.ideal.map(|i| format!(" (ideal {})", m.format.show(i))).unwrap_or_default();
                        format!("{} {}{ideal}", esc(&m.header), m.format.show(m.value))
                    })
                    .collect();
                let numbers = if numbers.is_empty() { "–".into() } else { numbers.join("; ") };
                let source = k.source.unwrap_or("–");
                out.push_str(&format!("| `{}` | {source} | {} | {numbers} |\n", esc(&k.name), k.launches));
            }
            out.push('\n');
        }
        if !self.lines.is_empty() {
            out.push_str("**Worst lines**\n\n");
            for l in &self.lines {
                out.push_str(&format!("- `{}` in `{}`", esc(&l.location), esc(&l.kernel)));
                if let Some(op) = &l.op {
                    out.push_str(&format!(" ({})", esc(op)));
                }
                out.push_str(&format!(": {}", line_numbers(l)));
                if let Some(c) = &l.code {
                    out.push_str(&format!("; code `{}`", esc(c)));
                }
                out.push('\n');
                if let Some(d) = &l.diagnosis {
                    out.push_str(&format!("  {}\n", esc(d)));
                }
            }
            out.push('\n');
        }
        for n in &self.notices {
            out.push_str(&format!("> {}\n\n", esc(n)));
        }
        let t = &self.truncated;
        let left: Vec<String> = [
            (t.kernels_omitted, "kernel"),
            (t.lines_omitted, "line"),
            (t.checks_omitted, "check"),
            (t.inputs_omitted, "input"),
            (t.notices_omitted, "notice"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}{}", if *n == 1 { "" } else { "s" }))
        .collect();
        if !left.is_empty() {
            out.push_str(&format!("Left out: {} (`--summary-limit N` shows more, 0 all).\n", left.join(", ")));
        }
        // One newline at the end, whatever section came last.
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    }
}

/// `32.00 sectors/request (ideal 4.00); 1,234 excess sectors (93%); 8.0-way bank conflict`.
fn line_numbers(l: &Line) -> String {
    use crate::text::{count, percent, ratio};
    let mut parts = Vec::new();
    if let Some(s) = l.sectors_per_request {
        let ideal = l.ideal_sectors_per_request.map(|i| format!(" (ideal {})", ratio(i))).unwrap_or_default();
        parts.push(format!("{} sectors/request{ideal}", ratio(s)));
    }
    if let Some(e) = l.excess_sectors.filter(|&e| e > 0.0) {
        let share = l.excess_share.map(|s| format!(" ({} of the kernel's)", percent(s))).unwrap_or_default();
        parts.push(format!("{} excess sectors{share}", count(e)));
    }
    if let Some(w) = l.shared_wavefronts_per_ideal.filter(|&w| w > 1.0) {
        parts.push(format!("{w:.1} shared wavefronts per ideal ({w:.1}-way bank conflict)"));
    }
    if parts.is_empty() {
        "–".into()
    } else {
        parts.join("; ")
    }
}

/// Cut `v` to `n`; how many went.
fn cut<T>(v: &mut Vec<T>, n: usize) -> usize {
    let gone = v.len().saturating_sub(n);
    v.truncate(n);
    gone
}

/// The largest `*_over_ideal` metric of a row (catalogue keys: load and store sectors, shared
/// wavefronts, each over its ideal), or -1 where it has none.
fn over_ideal(r: &Row) -> f64 {
    (r.metrics.iter())
        .filter(|(k, _)| k.ends_with("_over_ideal") && !crate::results::is_line_metric(k))
        .map(|(_, v)| *v)
        .filter(|v| v.is_finite())
        .fold(-1.0, f64::max)
}

/// `pattern/variant`, else the kernel's function name with its rank, visible and cut.
fn kernel_name(pattern: Option<&str>, variant: Option<&str>, kernel: &str, rank: Option<u32>) -> String {
    match (pattern, variant) {
        (Some(p), Some(v)) => name(&format!("{p}/{v}"), NAME),
        (None, Some(v)) => name(v, NAME),
        _ => name(&ranked(&function_name(kernel), rank), NAME),
    }
}

/// A kernel row's summary: the catalogue's columns that are headlines or have an ideal (not
/// those that are another column's ideal: they stand beside it), where the row has a value.
fn kernel(r: &Row, style: &Style) -> Kernel {
    let ideals: Vec<&str> = style.columns.iter().filter_map(|c| c.ideal.as_deref()).collect();
    let metrics = (style.columns.iter())
        .filter(|c| (c.headline || c.ideal.is_some()) && !ideals.contains(&c.key.as_str()))
        .filter_map(|c| {
            let value = r.metric(&c.key).filter(|v| v.is_finite())?;
            let ideal = c.ideal.as_deref().and_then(|i| r.metric(i));
            Some((c.key.clone(), Metric { value, ideal, header: c.header.clone(), format: c.format }))
        })
        .collect();
    Kernel {
        name: kernel_name(r.pattern.as_deref(), r.variant.as_deref(), &r.kernel, r.rank),
        source: Some(r.source.word()),
        launches: r.launches,
        metrics,
    }
}

/// A worst line of results (`profile`, `run`, a saved run).
fn worst_line(w: &WorstLine) -> Line {
    Line {
        kernel: kernel_name(w.pattern.as_deref(), w.variant.as_deref(), &w.kernel, w.rank),
        location: place(&w.location),
        op: w.op.as_deref().map(|o| visible(o).into_owned()),
        sectors_per_request: w.sectors_per_request,
        ideal_sectors_per_request: w.ideal_sectors_per_request,
        excess_sectors: w.excess_sectors.map(f64::round),
        excess_share: w.excess_share,
        shared_wavefronts_per_ideal: w.shared_ways,
        shared_excess_wavefronts: None,
        rule: None,
        diagnosis: w.diagnosis.as_deref().map(|d| visible(d).into_owned()),
        code: w.code.as_deref().map(|c| name(c.trim(), CODE)),
    }
}

/// A row of a line report (`lines`, `triton`).
fn line_row(r: &LineRow) -> Line {
    Line {
        kernel: kernel_name(None, None, &r.kernel, r.rank),
        location: place(&crate::lines::gate::line_label(r).unwrap_or_else(|| super::lines::location(r))),
        op: r.op.as_deref().map(|o| visible(o).into_owned()),
        sectors_per_request: r.sectors_per_request,
        ideal_sectors_per_request: r.ideal_sectors_per_request,
        excess_sectors: r.excess_sectors.map(f64::round),
        excess_share: r.excess_share,
        shared_wavefronts_per_ideal: r.shared_wavefronts_per_ideal,
        shared_excess_wavefronts: r.shared_excess_wavefronts.map(f64::round),
        rule: r.rule,
        diagnosis: r.diagnosis.as_deref().map(|d| visible(d).into_owned()),
        code: r.source.as_deref().map(|c| name(c.trim(), CODE)),
    }
}

/// The summary in `format` (`Summary` or `SummaryMd`), cut as `style` says.
pub(crate) fn render(summary: Summary, markdown: bool, style: &Style) -> Result<String> {
    let s = summary.bounded(style.summary.limit)?;
    if markdown {
        Ok(s.markdown())
    } else {
        s.json()
    }
}

/// The results exporter (`analyze`, `profile`, `run`).
pub(super) struct Exporter {
    pub(super) markdown: bool,
}

impl super::Exporter for Exporter {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        render(Summary::of_results(results, style), self.markdown, style)
    }
}

impl super::lines::LinesExporter for Exporter {
    fn render(&self, report: &LineReport, style: &Style) -> Result<String> {
        render(Summary::of_lines(report, style), self.markdown, style)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Catalogue;
    use crate::results::{Backend, Provenance, Source};

    /// `n` kernels with every headline metric and long names, and `n` worst lines with long
    /// diagnoses: far more than 4 KB whole.
    fn big(n: usize) -> (Results, Style) {
        let catalogue = Catalogue::builtin();
        let style = Style::new(&catalogue, false);
        let rows = (0..n)
            .map(|i| {
                let mut r = Row::new(format!("void kernel_{i}<{}>(float*)", "T".repeat(300)), Source::Measured);
                for c in &style.columns {
                    r.metrics.insert(c.key.clone(), 1.5 + i as f64);
                }
                r.metrics.insert("global_load_sectors_over_ideal".into(), i as f64);
                r
            })
            .collect();
        let mut results = Results::new(Provenance::new(Backend::Import), rows);
        results.worst_lines = (0..n)
            .map(|i| WorstLine {
                pattern: None,
                variant: None,
                kernel: format!("kernel_{i}"),
                rank: None,
                location: format!("{}/k.cu:{i}", "d/".repeat(100)),
                op: Some("global load".into()),
                sectors_per_request: Some(32.0),
                ideal_sectors_per_request: Some(4.0),
                excess_sectors: Some(i as f64 * 28.0),
                excess_share: Some(1.0),
                shared_ways: None,
                code: Some("x".repeat(200)),
                diagnosis: Some("why and the fix ".repeat(20)),
            })
            .collect();
        (results, style)
    }

    #[test]
    fn the_default_fits_4_kb_by_leaving_out_and_counting_what_did_not_fit() {
        let (results, style) = big(40);
        let whole = Summary::of_results(&results, &style);
        // Five of each alone would not fit: the byte bound, not the count, decides.
        let five = whole.clone().bounded(Some(5)).unwrap();
        assert!(five.json().unwrap().len() > DEFAULT_BYTES);
        let s = whole.clone().bounded(None).unwrap();
        let json = s.json().unwrap();
        assert!(json.len() <= DEFAULT_BYTES, "{}", json.len());
        assert!(!s.kernels.is_empty() && !s.lines.is_empty(), "{json}");
        assert_eq!(s.kernels.len() + s.truncated.kernels_omitted, 40);
        assert_eq!(s.lines.len() + s.truncated.lines_omitted, 40);
        // Worst first: the kernel most over its ideal, the line with the most excess sectors.
        assert!(s.kernels[0].name.starts_with("kernel_39<"), "{}", s.kernels[0].name);
        assert_eq!(s.lines[0].excess_sectors, Some(39.0 * 28.0));
        // Names are cut as the table cuts them; locations keep their file and line.
        assert!(s.kernels.iter().all(|k| k.name.chars().count() <= NAME));
        assert!(s.lines.iter().all(|l| l.location.contains("/k.cu:") && l.location.chars().count() <= LOCATION));
        // All of it, on asking.
        let all = whole.bounded(Some(0)).unwrap();
        assert_eq!((all.kernels.len(), all.lines.len(), all.truncated.lines_omitted), (40, 40, 0));
    }
}
