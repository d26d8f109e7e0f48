//! The page of `coalprof check --format html`: the verdict, then every check, failures first,
//! with the rule that decided it (file and line) and, for a check of one source line, that line
//! and its code.

use maud::html;

use super::page;
use crate::gate::{Report, Verdict};
use crate::render::columns::Severity;
use crate::text::fmt_num;

/// The check page; a check of one source line shows its code where the report has it.
pub(crate) fn check(report: &Report) -> String {
    let sorted = report.sorted();
    let facts: Vec<String> = (report.environments.iter())
        .map(|e| {
            let gpu = e.gpu.as_deref().map(|g| format!(", {g}")).unwrap_or_default();
            format!("{} ({}{gpu})", e.arch, e.backend)
        })
        .chain([if report.has_baseline { "against a baseline".into() } else { "no baseline".into() }])
        .collect();
    let n = |v: Option<f64>| v.map_or("–".to_string(), fmt_num);
    let body = html! {
        p.verdict.(if report.failed() { "fail" } else if report.all_skipped() { "skipped" } else { "pass" }) {
            strong { (report.headline()) } " (" (report.tally()) ")"
        }
        @if let Some(why) = &report.nothing_checked { p.notice { (why) } }
        div.wide { table.checks.sortable {
            thead { tr {
                th { "status" } th { "arch" } th { "row" } th { "metric" } th { "baseline" } th { "current" }
                th { "change" } th { "limits" } th { "rule" } th { "source line" } th { "why" }
            } }
            tbody {
                @for c in &sorted {
                    @let line = c.row.split_once(" @ ").map(|(_, l)| l);
                    tr.(c.verdict.as_str()) data-verdict=(c.verdict.as_str()) data-row=(c.row) data-metric=(c.metric) {
                        td { span.tag.(c.verdict.as_str()) { (c.verdict.as_str()) } }
                        td { (c.arch) }
                        td title=(c.row) { code { (crate::render::gate::table::short_row(&c.row)) } }
                        td { code { (c.metric) } }
                        (super::num(c.baseline, &n(c.baseline), None))
                        (super::num(c.current, &n(c.current), (c.verdict == Verdict::Fail).then_some(Severity::Bad)))
                        td.n { (c.change_text()) }
                        td { (c.limits) }
                        td { @if let Some(l) = &c.location {
                            code { (l.file.display()) @if let Some(n) = l.line { ":" (n) } }
                        } }
                        td { @if let Some(l) = line {
                            code { (l) }
                            @if let Some(text) = report.code.get(&c.row) { br; code.src { (text) } }
                        } }
                        td { (c.message) }
                    }
                }
            }
        } }
    };
    page("coalprof check", &facts, body)
}
