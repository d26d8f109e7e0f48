//! Rules × rows × baseline → one list of check results. Every output renders from that list.
//!
//! Threshold semantics (docs/metric-facts.md §7), for a lower-is-better metric with current `c`,
//! baseline `b`, `max = M`, `min = m`, `regress = +r%`, `min_delta = d`:
//!
//! * absolute: fails when `c > M` or `c < m`, with or without a baseline;
//! * relative: fails when `c − b > 0`, `c − b ≥ d` and, for `b ≠ 0`, `(c − b) / |b| > r`;
//!   with `b = 0` any rise of at least `d` fails and is reported as `0 → c`;
//! * an improvement beyond the same tolerance passes, with a note asking for a baseline update.
//!
//! Higher-is-better metrics mirror the relative check (`b − c`). Comparisons allow a relative
//! 1e-9 of floating-point slack, so a value exactly at a limit passes.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::gate::baseline::Baseline;
use crate::gate::identity::identify;
use crate::gate::rules::{Direction, Effective, Location, Rule, Severity};
use crate::results::{Provenance, Results, Row};
use crate::text::fmt_num;

/// The outcome of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Verdict {
    /// A fail-severity limit was violated: the gate fails.
    Fail,
    /// A warn-severity limit was violated.
    Warn,
    /// A regress rule applies but the baseline has no entry for this row and metric.
    New,
    /// The baseline has an entry (under a regress rule) that no current row has.
    Missing,
    /// The metric is absent from the row (or not a number), or nothing to compare with.
    Skipped,
    /// Every limit held.
    Pass,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
            Verdict::New => "new",
            Verdict::Missing => "missing",
            Verdict::Skipped => "skipped",
        }
    }
}

/// One (row × metric) check: what was compared, with what, and the verdict in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Check {
    /// Baseline section: `sm_90`, or `model` for predicted rows.
    pub arch: String,
    /// Row key: `pattern/variant` or the kernel name.
    pub row: String,
    /// The kernel's (demangled) name; the row key for `missing` checks.
    pub kernel: String,
    pub metric: String,
    pub verdict: Verdict,
    pub severity: Severity,
    pub current: Option<f64>,
    pub baseline: Option<f64>,
    /// The limits that applied, in words (`<= 4.5, +5%`).
    pub limits: String,
    /// One line: why this verdict.
    pub message: String,
    /// The whole explanation (JUnit failure bodies, summaries).
    pub details: String,
    /// The rule that decided it (`metrics.toml`, line).
    #[serde(skip)]
    pub location: Option<Location>,
    /// The code it is about, where the inputs know: a line row's line, or the worst source line
    /// of the row's kernel. Annotations and JUnit cases point here, else at the rule.
    #[serde(skip)]
    pub source: Option<Location>,
}

impl Check {
    /// Where an annotation goes: the code, else the rule.
    pub(crate) fn place(&self) -> Option<&Location> {
        self.source.as_ref().or(self.location.as_ref())
    }

    /// Relative change against the baseline (`0.25` for +25%), when both values exist and b ≠ 0.
    pub(crate) fn change(&self) -> Option<f64> {
        match (self.current, self.baseline) {
            (Some(c), Some(b)) if b != 0.0 => Some((c - b) / b.abs()),
            _ => None,
        }
    }

    /// `+98.5%`, `0 → 3`, or empty.
    pub(crate) fn change_text(&self) -> String {
        match (self.current, self.baseline, self.change()) {
            (_, _, Some(r)) => {
                format!("{}{}%", if r >= 0.0 { "+" } else { "" }, fmt_num(r * 100.0))
            }
            (Some(c), Some(_), None) if c != 0.0 => format!("0 → {}", fmt_num(c)),
            _ => String::new(),
        }
    }
}

/// The provenance of one architecture section, for suite properties and summaries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct EnvironmentInfo {
    pub arch: String,
    pub backend: String,
    pub gpu: Option<String>,
    pub ncu_version: Option<String>,
}

/// Everything the renderers need.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Report {
    /// In input order: rows as they appear, metrics sorted, then `missing` checks.
    pub checks: Vec<Check>,
    /// One per architecture seen in the inputs, sorted.
    pub environments: Vec<EnvironmentInfo>,
    /// How many current rows at least one rule applied to.
    pub matched_rows: usize,
    /// Whether a baseline was given.
    pub has_baseline: bool,
    /// Where every check was skipped: why, in words (what the inputs lack and how to record
    /// it), set by the command that knows the catalogue. Such a check is no pass.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nothing_checked: Option<String>,
    /// Each checked source line's code by its row key (`kernel @ file:line`), where a line
    /// report has it (the HTML page shows it); set by the command that read the line reports.
    #[serde(skip)]
    pub code: std::collections::BTreeMap<String, String>,
}

impl Report {
    pub(crate) fn count(&self, verdict: Verdict) -> usize {
        self.checks.iter().filter(|c| c.verdict == verdict).count()
    }

    /// Whether a fail-severity check failed.
    pub(crate) fn failed(&self) -> bool {
        self.count(Verdict::Fail) > 0
    }

    /// Whether rules applied but every check they made was skipped: nothing was compared, so
    /// the gate may not read as passed.
    pub(crate) fn all_skipped(&self) -> bool {
        !self.checks.is_empty() && self.count(Verdict::Skipped) == self.checks.len()
    }

    /// `3 failed, 1 warning, 10 passed, 2 new, 1 skipped` (zero counts left out).
    pub(crate) fn tally(&self) -> String {
        let parts = [
            (Verdict::Fail, "failed"),
            (Verdict::Warn, if self.count(Verdict::Warn) == 1 { "warning" } else { "warnings" }),
            (Verdict::Pass, "passed"),
            (Verdict::New, "new"),
            (Verdict::Missing, "missing"),
            (Verdict::Skipped, "skipped"),
        ];
        let text: Vec<String> = parts
            .iter()
            .filter_map(|(v, word)| Some(self.count(*v)).filter(|n| *n > 0).map(|n| format!("{n} {word}")))
            .collect();
        if text.is_empty() {
            "no checks".to_string()
        } else {
            text.join(", ")
        }
    }

    /// The headline: `gate failed` / `gate passed with warnings` / `gate passed`, or
    /// `nothing checked` where every check was skipped (never a pass).
    pub(crate) fn headline(&self) -> &'static str {
        if self.failed() {
            "gate failed"
        } else if self.count(Verdict::Warn) > 0 {
            "gate passed with warnings"
        } else if self.matched_rows == 0 {
            "nothing matched"
        } else if self.all_skipped() {
            "nothing checked"
        } else {
            "gate passed"
        }
    }

    /// Checks ordered for people: failures first, then warnings, new, missing, skipped, passes;
    /// within a verdict by the size of the change, largest first, then by name.
    pub(crate) fn sorted(&self) -> Vec<&Check> {
        let mut v: Vec<&Check> = self.checks.iter().collect();
        v.sort_by(|a, b| {
            let ca = a.change().map(f64::abs).unwrap_or(0.0);
            let cb = b.change().map(f64::abs).unwrap_or(0.0);
            a.verdict
                .cmp(&b.verdict)
                .then(cb.total_cmp(&ca))
                .then_with(|| a.arch.cmp(&b.arch))
                .then_with(|| natural_cmp(&a.row, &b.row))
                .then_with(|| a.metric.cmp(&b.metric))
        });
        v
    }
}

/// Compare with runs of digits as numbers, so `stride_2` sorts before `stride_16`.
pub(crate) fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, x), (db, y)) in ca.iter().zip(&cb) {
        let ord = if *da && *db {
            let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
            x.len().cmp(&y.len()).then_with(|| x.cmp(y))
        } else {
            x.cmp(y)
        };
        if ord.is_ne() {
            return ord;
        }
    }
    ca.len().cmp(&cb.len()).then_with(|| a.cmp(b))
}

/// Evaluate every rule against every row of `inputs` and, when given, the baseline.
pub(crate) fn evaluate(rules: &[Rule], inputs: &[Results], baseline: Option<&Baseline>) -> Report {
    let mut checks = Vec::new();
    let mut matched_rows = 0;
    let mut current: BTreeSet<(String, String)> = BTreeSet::new();
    let mut environments: BTreeMap<String, EnvironmentInfo> = BTreeMap::new();
    for (arch, key, row, provenance) in identify(inputs) {
        environments.entry(arch.clone()).or_insert_with(|| env_info(&arch, provenance));
        let before = checks.len();
        for metric in metrics_for(rules, &key, row) {
            let Some(eff) = Effective::resolve(rules, &key, &row.kernel, &metric) else {
                continue;
            };
            if !eff.has_limit() {
                continue;
            }
            let b = baseline.and_then(|bl| bl.get(&arch, &key, &metric));
            let mut check = check_row(&arch, &key, row, &metric, &eff, b, baseline.is_some());
            check.source = source_place(inputs, row);
            checks.push(check);
        }
        matched_rows += usize::from(checks.len() > before);
        current.insert((arch, key));
    }
    if let Some(bl) = baseline {
        checks.extend(missing_checks(rules, bl, &environments, &current));
    }
    Report {
        checks,
        environments: environments.into_values().collect(),
        matched_rows,
        has_baseline: baseline.is_some(),
        nothing_checked: None,
        code: Default::default(),
    }
}

/// Where in the code a check belongs, when the inputs know: a line row's own line, else the
/// worst source line of the row's kernel (the input's worst lines, worst first), so an
/// annotation lands on the code that wastes the bandwidth, not on the rule that caught it.
fn source_place(inputs: &[Results], row: &Row) -> Option<Location> {
    if let Some(l) = &row.line {
        return parse_place(l);
    }
    let results = inputs.iter().find(|r| r.rows.as_ptr_range().contains(&std::ptr::from_ref(row)))?;
    let worst = results.worst_lines.iter().find(|w| match (&row.pattern, &row.variant) {
        (Some(p), Some(v)) => w.pattern.as_ref() == Some(p) && w.variant.as_ref() == Some(v),
        _ => w.kernel == row.kernel && w.rank == row.rank,
    })?;
    parse_place(&worst.location)
}

/// `kernels/stride.cu:20` → the file and the line.
fn parse_place(text: &str) -> Option<Location> {
    let (file, line) = text.rsplit_once(':')?;
    Some(Location { file: file.into(), line: Some(line.parse().ok()?) })
}

fn env_info(arch: &str, p: &Provenance) -> EnvironmentInfo {
    EnvironmentInfo {
        arch: arch.to_string(),
        backend: if arch == "model" { "model".to_string() } else { p.backend.to_string() },
        gpu: p.gpu.clone(),
        ncu_version: p.ncu_version.clone(),
    }
}

/// The metrics any rule could check on this row: named ones (even if absent: that is a
/// `skipped` check) and the row's metrics that a metric glob matches.
fn metrics_for(rules: &[Rule], key: &str, row: &Row) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    // Per-line metrics are checked on line rows only, and kernel metrics on kernel rows only:
    // a `match = "*"` rule must not turn every line into a `skipped` check.
    let fits = |m: &str| crate::results::is_line_metric(m) == row.line.is_some();
    // A line row has the per-line metrics of its access kind only (no sectors on a shared
    // load): one it lacks is no input's fault, so not a `skipped` check either.
    let has = |m: &str| row.line.is_none() || row.metrics.contains_key(m) || row.broken.contains_key(m);
    for rule in rules.iter().filter(|r| r.matches_row(key, &row.kernel)) {
        match rule.literal_metric() {
            Some(m) if fits(m) && has(m) => {
                out.insert(m.to_string());
            }
            Some(_) => {}
            None => out.extend(row.metrics.keys().filter(|m| rule.matches_metric(m) && fits(m)).cloned()),
        }
    }
    out
}

/// `a` is beyond `limit` by more than floating-point noise.
fn beyond(a: f64, limit: f64) -> bool {
    a > limit && (a - limit) > 1e-9 * a.abs().max(limit.abs())
}

/// `a` reaches `floor` (≥), allowing floating-point noise.
fn reaches(a: f64, floor: f64) -> bool {
    a >= floor || (floor - a) <= 1e-9 * a.abs().max(floor.abs())
}

struct Draft<'a> {
    problems: Vec<(String, Option<Location>)>,
    /// The value comes from a broken counter: the check fails with this reason.
    broken: Option<String>,
    notes: Vec<String>,
    new: bool,
    skipped: Option<String>,
    eff: &'a Effective<'a>,
}

fn check_row(
    arch: &str,
    key: &str,
    row: &Row,
    metric: &str,
    eff: &Effective,
    b: Option<f64>,
    has_baseline: bool,
) -> Check {
    let mut d = Draft { problems: Vec::new(), broken: None, notes: Vec::new(), new: false, skipped: None, eff };
    let c = row.metric(metric);
    match (c, row.broken.get(metric)) {
        // A broken counter never passes a gate, whatever the rule's severity.
        (None, Some(why)) => d.broken = Some(format!("{metric} cannot be trusted: {why}")),
        (Some(v), _) if !v.is_finite() => d.broken = Some(format!("{metric} is {v} on this row: a broken counter")),
        (None, None) => d.skipped = Some(absent_reason(row, metric)),
        (Some(c), _) => {
            absolute(&mut d, metric, c);
            relative(&mut d, metric, c, b, has_baseline, arch);
        }
    }
    finish(arch, key, &row.kernel, metric, c, b, d, &row.notes)
}

fn absent_reason(row: &Row, metric: &str) -> String {
    let why: Vec<&str> = row.notes.iter().filter(|n| n.contains(metric)).map(String::as_str).collect();
    if why.is_empty() {
        format!("`{metric}` is absent from this row ({} values)", source_word(row))
    } else {
        format!("`{metric}` is absent from this row: {}", why.join("; "))
    }
}

fn source_word(row: &Row) -> &'static str {
    row.source.word()
}

fn absolute(d: &mut Draft, metric: &str, c: f64) {
    if let Some((max, rule)) = d.eff.max {
        if beyond(c, max) {
            d.problems.push((
                format!("{metric} {} > {} (max, {})", fmt_num(c), fmt_num(max), rule.describe()),
                Some(rule.location.clone()),
            ));
        }
    }
    if let Some((min, rule)) = d.eff.min {
        if beyond(min, c) {
            d.problems.push((
                format!("{metric} {} < {} (min, {})", fmt_num(c), fmt_num(min), rule.describe()),
                Some(rule.location.clone()),
            ));
        }
    }
}

fn relative(d: &mut Draft, metric: &str, c: f64, b: Option<f64>, has_baseline: bool, arch: &str) {
    let Some((regress, rule)) = d.eff.regress else {
        return;
    };
    let dir = d.eff.direction(metric);
    if regress.direction() != dir {
        d.skipped = Some(format!(
            "regress = \"{}\" ({}) contradicts `{metric}`, where {} is better",
            regress.display(),
            rule.describe(),
            if dir == Direction::Lower { "lower" } else { "higher" }
        ));
        return;
    }
    let Some(b) = b else {
        if has_baseline {
            d.new = true;
            d.notes.push(format!("no baseline for `{metric}` in `{arch}`: record it with `coalprof baseline update`"));
        } else if d.eff.max.is_none() && d.eff.min.is_none() {
            d.skipped = Some(format!("no baseline given for regress = \"{}\"", regress.display()));
        }
        return;
    };
    let worse = if dir == Direction::Lower { c - b } else { b - c };
    let tolerance = regress.fraction * b.abs();
    let significant = |delta: f64| delta > 0.0 && reaches(delta, d.eff.min_delta);
    if significant(worse) && (b == 0.0 || beyond(worse, tolerance)) {
        let what = if b == 0.0 {
            format!("{metric} 0 → {} against a zero baseline", fmt_num(c))
        } else {
            format!(
                "{metric} {} is {}{}% vs baseline {} (allowed {}",
                fmt_num(c),
                if c >= b { "+" } else { "" },
                fmt_num((c - b) / b.abs() * 100.0),
                fmt_num(b),
                regress.display()
            ) + &if d.eff.min_delta > 0.0 { format!(", min_delta {})", fmt_num(d.eff.min_delta)) } else { ")".into() }
        };
        d.problems.push((format!("{what} ({})", rule.describe()), Some(rule.location.clone())));
    } else if significant(-worse) && b != 0.0 && beyond(-worse, tolerance) {
        d.notes.push(format!(
            "improved: {} vs baseline {}; run `coalprof baseline update` to lock it in",
            fmt_num(c),
            fmt_num(b)
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    arch: &str,
    key: &str,
    kernel: &str,
    metric: &str,
    c: Option<f64>,
    b: Option<f64>,
    d: Draft,
    row_notes: &[String],
) -> Check {
    let eff = d.eff;
    let (verdict, message, location) = if let Some(why) = d.broken.clone() {
        (Verdict::Fail, why, eff.last.map(|r| r.location.clone()))
    } else if !d.problems.is_empty() {
        let v = if eff.severity == Severity::Fail { Verdict::Fail } else { Verdict::Warn };
        let msg = d.problems.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join("; ");
        (v, msg, d.problems[0].1.clone())
    } else if let Some(why) = d.skipped.clone() {
        (Verdict::Skipped, why, eff.last.map(|r| r.location.clone()))
    } else if d.new {
        (Verdict::New, d.notes[0].clone(), eff.regress.map(|(_, r)| r.location.clone()))
    } else {
        let msg = d.notes.first().cloned().unwrap_or_else(|| format!("{metric} within {}", eff.describe_limits()));
        (Verdict::Pass, msg, eff.last.map(|r| r.location.clone()))
    };
    let mut details = vec![
        format!("verdict: {}", verdict.as_str()),
        format!("row: {key}"),
        format!("kernel: {kernel}"),
        format!("arch: {arch}"),
        format!("metric: {metric}"),
        format!("current: {}", c.map(fmt_num).unwrap_or_else(|| "-".into())),
        format!("baseline: {}", b.map(fmt_num).unwrap_or_else(|| "-".into())),
        format!(
            "limits: {} (severity {})",
            eff.describe_limits(),
            if eff.severity == Severity::Fail { "fail" } else { "warn" }
        ),
    ];
    details.extend(d.problems.iter().map(|(p, _)| format!("violated: {p}")));
    details.extend(d.broken.iter().map(|b| format!("broken: {b}")));
    details.extend(d.skipped.iter().map(|s| format!("skipped: {s}")));
    details.extend(d.notes.iter().map(|n| format!("note: {n}")));
    details.extend(row_notes.iter().map(|n| format!("row note: {n}")));
    Check {
        arch: arch.to_string(),
        row: key.to_string(),
        kernel: kernel.to_string(),
        metric: metric.to_string(),
        verdict,
        severity: eff.severity,
        current: c,
        baseline: b,
        limits: eff.describe_limits(),
        message,
        details: details.join("\n"),
        location,
        source: None,
    }
}

/// Baseline entries, in the architectures being checked, that no current row has.
fn missing_checks(
    rules: &[Rule],
    baseline: &Baseline,
    environments: &BTreeMap<String, EnvironmentInfo>,
    current: &BTreeSet<(String, String)>,
) -> Vec<Check> {
    let mut out = Vec::new();
    for (arch, env) in baseline.environments.iter().filter(|(a, _)| environments.contains_key(*a)) {
        for (key, values) in env.rows.iter().filter(|(k, _)| !current.contains(&(arch.clone(), (*k).clone()))) {
            for (metric, b) in values {
                let Some(eff) = Effective::resolve(rules, key, key, metric) else {
                    continue;
                };
                let Some((regress, rule)) = eff.regress else {
                    continue;
                };
                let message = format!("`{key}` is in the `{arch}` baseline but not in this run");
                out.push(Check {
                    arch: arch.clone(),
                    row: key.clone(),
                    kernel: key.clone(),
                    metric: metric.clone(),
                    verdict: Verdict::Missing,
                    severity: eff.severity,
                    current: None,
                    baseline: Some(*b),
                    limits: eff.describe_limits(),
                    details: format!(
                        "verdict: missing\nrow: {key}\narch: {arch}\nmetric: {metric}\nbaseline: {}\nlimits: {} ({})\nnote: {message}; \
                         if it was removed on purpose, run `coalprof baseline update`",
                        fmt_num(*b),
                        regress.display(),
                        rule.describe()
                    ),
                    message,
                    location: Some(rule.location.clone()),
                    source: None,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::gate::rules::parse_rules;
    use crate::results::Source;

    const M: &str = "global_load_sectors_per_request";

    fn row(key: &str, metrics: &[(&str, f64)]) -> Row {
        let (p, v) = key.split_once('/').unwrap();
        Row {
            pattern: Some(p.into()),
            variant: Some(v.into()),
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Row::new(format!("{p}_kernel"), Source::Measured)
        }
    }

    fn run(rows: Vec<Row>) -> Results {
        let p = Provenance {
            backend: crate::results::Backend::Ncu,
            compute_capability: Some("9.0".into()),
            ..Default::default()
        };
        Results::new(p, rows)
    }

    fn rules(body: &str) -> Vec<Rule> {
        parse_rules(body, Path::new("metrics.toml"), &crate::metrics::Catalogue::builtin().directions()).unwrap()
    }

    fn baseline(entries: &[(&str, &str, f64)]) -> Baseline {
        let mut b = Baseline::default();
        for (key, metric, v) in entries {
            b.environments
                .entry("sm_90".into())
                .or_default()
                .rows
                .entry(key.to_string())
                .or_default()
                .insert(metric.to_string(), *v);
        }
        b
    }

    /// The single check produced for one row with one value.
    fn verdict(rule: &str, c: Option<f64>, b: Option<f64>, metric: &str) -> Check {
        let r = rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{metric}\"\n{rule}\n"));
        let metrics: Vec<(&str, f64)> = c.map(|c| vec![(metric, c)]).unwrap_or_default();
        let bl = b.map(|b| baseline(&[("p/v", metric, b)])).unwrap_or_else(|| baseline(&[]));
        let report = evaluate(&r, &[run(vec![row("p/v", &metrics)])], Some(&bl));
        assert_eq!(report.checks.len(), 1, "{:#?}", report.checks);
        report.checks[0].clone()
    }

    fn v(rule: &str, c: f64, b: Option<f64>) -> Verdict {
        verdict(rule, Some(c), b, M).verdict
    }

    #[test]
    fn absolute_limits_hold_at_the_limit_and_fail_beyond_it() {
        assert_eq!(v("max = 4.5", 4.5, None), Verdict::Pass);
        assert_eq!(v("max = 4.5", 4.51, None), Verdict::Fail);
        assert_eq!(v("min = 4", 3.99, None), Verdict::Fail);
        assert_eq!(v("max = 4.5\nseverity = \"warn\"", 8.0, None), Verdict::Warn);
        let c = verdict("max = 4.5", Some(32.0), None, M);
        assert_eq!(c.message, "global_load_sectors_per_request 32 > 4.5 (max, rule #1 at metrics.toml:1)");
    }

    #[test]
    fn relative_limit_edges() {
        let r = "regress = \"+5%\"";
        assert_eq!(v(r, 4.2, Some(4.0)), Verdict::Pass, "exactly +5% passes");
        assert_eq!(v(r, 4.21, Some(4.0)), Verdict::Fail);
        assert_eq!(v(r, 3.0, Some(4.0)), Verdict::Pass, "an improvement passes");
        assert!(verdict(r, Some(3.0), Some(4.0), M).message.contains("improved"));
        let c = verdict(r, Some(8.0), Some(4.0), M);
        assert_eq!(c.change_text(), "+100%");
        assert!(c.message.contains("+100% vs baseline 4 (allowed +5%)"), "{}", c.message);
    }

    #[test]
    fn min_delta_is_a_noise_floor() {
        let r = "regress = \"+0%\"\nmin_delta = 0.05";
        assert_eq!(v(r, 4.04, Some(4.0)), Verdict::Pass, "below the floor");
        assert_eq!(v(r, 4.05, Some(4.0)), Verdict::Fail, "at the floor");
        assert_eq!(v("regress = \"+0%\"", 4.0001, Some(4.0)), Verdict::Fail, "+0% with no floor: any rise");
    }

    #[test]
    fn zero_baseline() {
        let r = "regress = \"+5%\"\nmin_delta = 0.5";
        assert_eq!(v(r, 0.0, Some(0.0)), Verdict::Pass, "0 → 0 is no change");
        assert_eq!(v(r, 0.4, Some(0.0)), Verdict::Pass, "below min_delta");
        let c = verdict(r, Some(1.0), Some(0.0), M);
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.message.contains("0 → 1 against a zero baseline"), "{}", c.message);
        assert_eq!(c.change_text(), "0 → 1");
        assert_eq!(v("regress = \"+5%\"", 1e-6, Some(0.0)), Verdict::Fail, "no floor: any rise from 0");
    }

    #[test]
    fn higher_is_better_metrics_mirror_the_relative_check() {
        let m = "global_load_sector_efficiency";
        let r = "regress = \"-5%\"";
        assert_eq!(verdict(r, Some(0.5), Some(1.0), m).verdict, Verdict::Fail);
        assert_eq!(verdict(r, Some(0.96), Some(1.0), m).verdict, Verdict::Pass);
        assert_eq!(verdict(r, Some(1.5), Some(1.0), m).verdict, Verdict::Pass);
        assert_eq!(verdict("min = 0.9", Some(0.5), None, m).verdict, Verdict::Fail);
    }

    #[test]
    fn new_when_the_baseline_lacks_the_row_unless_a_limit_fails() {
        assert_eq!(v("regress = \"+5%\"", 4.0, None), Verdict::New);
        assert_eq!(v("regress = \"+5%\"\nmax = 4.5", 4.0, None), Verdict::New);
        assert_eq!(v("regress = \"+5%\"\nmax = 4.5", 8.0, None), Verdict::Fail);
        assert_eq!(v("max = 4.5", 4.0, None), Verdict::Pass, "no regress rule: nothing is new");
    }

    #[test]
    fn skipped_when_the_metric_is_absent_with_the_reason() {
        let c = verdict("max = 4.5", None, None, M);
        assert_eq!(c.verdict, Verdict::Skipped);
        assert!(c.message.contains("absent"), "{}", c.message);
        assert_eq!(verdict("max = 4.5", Some(f64::NAN), None, M).verdict, Verdict::Fail, "NaN never passes");
        let mut r = row("p/v", &[]);
        r.notes.push(format!("{M} needs the _op_ld counters, which this ncu lacks"));
        let report =
            evaluate(&rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nmax = 1\n")), &[run(vec![r])], None);
        assert!(report.checks[0].message.contains("which this ncu lacks"));
    }

    #[test]
    fn a_broken_counter_fails_any_rule_on_it_with_the_reason_even_a_warning_one() {
        let mut r = row("p/v", &[]);
        r.broken.insert(M.into(), "launch 3 (`k`): ncu recorded `l1tex__…` as nan".into());
        let rule = |extra: &str| rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nmax = 8\n{extra}"));
        for extra in ["", "severity = \"warn\"\n"] {
            let report = evaluate(&rule(extra), &[run(vec![r.clone()])], None);
            assert_eq!(report.checks[0].verdict, Verdict::Fail, "{extra}");
            assert!(report.checks[0].message.contains("cannot be trusted") && report.checks[0].message.contains("nan"));
        }
    }

    #[test]
    fn regress_without_any_baseline_is_skipped() {
        let r = rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nregress = \"+5%\"\n"));
        let report = evaluate(&r, &[run(vec![row("p/v", &[(M, 4.0)])])], None);
        assert_eq!(report.checks[0].verdict, Verdict::Skipped);
    }

    #[test]
    fn missing_when_a_baseline_row_is_gone() {
        let r = rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nregress = \"+5%\"\n"));
        let bl = baseline(&[("p/v", M, 4.0), ("p/gone", M, 4.0)]);
        let report = evaluate(&r, &[run(vec![row("p/v", &[(M, 4.0)])])], Some(&bl));
        let verdicts: Vec<_> = report.checks.iter().map(|c| (c.row.as_str(), c.verdict)).collect();
        assert_eq!(verdicts, [("p/v", Verdict::Pass), ("p/gone", Verdict::Missing)]);
        assert!(!report.failed());
    }

    #[test]
    fn predicted_rows_use_the_model_section_and_nothing_matched_is_counted() {
        let r = rules(&format!("[[gate]]\nmatch = \"stride/*\"\nmetric = \"{M}\"\nmax = 4.5\n"));
        let mut p = row("stride/s2", &[(M, 8.0)]);
        p.source = Source::Predicted;
        let report = evaluate(&r, &[run(vec![p, row("other/x", &[(M, 8.0)])])], None);
        assert_eq!(report.matched_rows, 1);
        assert_eq!(report.checks[0].arch, "model");
        let none = evaluate(&r, &[run(vec![row("other/x", &[(M, 8.0)])])], None);
        assert_eq!((none.matched_rows, none.checks.len()), (0, 0));
    }

    #[test]
    fn sorted_puts_failures_first() {
        let r = rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nmax = 4.5\n"));
        let report = evaluate(&r, &[run(vec![row("a/ok", &[(M, 4.0)]), row("b/bad", &[(M, 8.0)])])], None);
        let order: Vec<_> = report.sorted().iter().map(|c| c.verdict).collect();
        assert_eq!(order, [Verdict::Fail, Verdict::Pass]);
        assert_eq!(report.tally(), "1 failed, 1 passed");
    }

    #[test]
    fn every_check_skipped_is_nothing_checked_never_a_pass() {
        let r = rules(&format!("[[gate]]\nmatch = \"*\"\nmetric = \"{M}\"\nmax = 4.5\n"));
        let skipped = evaluate(&r, &[run(vec![row("a/x", &[]), row("b/y", &[])])], None);
        assert!(skipped.all_skipped());
        assert_eq!((skipped.headline(), skipped.failed()), ("nothing checked", false));
        let one = evaluate(&r, &[run(vec![row("a/x", &[(M, 4.0)]), row("b/y", &[])])], None);
        assert_eq!((one.all_skipped(), one.headline()), (false, "gate passed"));
    }

    #[test]
    fn a_line_row_without_a_per_line_metric_is_not_checked_on_it() {
        // A shared load's line has no sectors: the rule on them passes it by, no `skipped`.
        let r = rules("[[gate]]\nmatch = \"*\"\nmetric = \"line_sectors_over_ideal\"\nmax = 2\n");
        let line = |op: &str, metrics: &[(&str, f64)]| Row {
            line: Some("k.cu:3".into()),
            op: Some(op.into()),
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..Row::new("k", Source::Measured)
        };
        let report = evaluate(
            &r,
            &[run(vec![line("shared load", &[]), line("global load", &[("line_sectors_over_ideal", 3.0)])])],
            None,
        );
        let verdicts: Vec<_> = report.checks.iter().map(|c| (c.row.as_str(), c.verdict)).collect();
        assert_eq!(verdicts, [("k @ k.cu:3 (global load)", Verdict::Fail)]);
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["stride/stride_16", "stride/stride_2", "stride/stride_1", "a10", "a9b"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["a9b", "a10", "stride/stride_1", "stride/stride_2", "stride/stride_16"]);
    }
}
