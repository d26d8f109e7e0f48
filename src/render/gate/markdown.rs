//! The step-summary markdown (GitHub-flavoured), appended to `$GITHUB_STEP_SUMMARY`.
//!
//! Headline and counts, a table of everything that is not a pass, the explanations, then every
//! check folded in `<details>`. Names are wrapped in backticks (so `<float, 128>` is not eaten
//! as HTML) with `|` escaped and whitespace collapsed. GitHub refuses a step summary over 1 MiB,
//! so the output trims itself well below that.

use crate::gate::verdict::{Check, Report, Verdict};
use crate::text::fmt_num;

/// Bytes the summary stays under (GitHub's limit is 1 MiB per step).
pub(crate) const MAX_BYTES: usize = 900 * 1024;

/// Rows per table before the rest are counted instead of shown.
const MAX_ROWS: usize = 1000;

/// The markdown for a report.
pub(crate) fn render(report: &Report) -> String {
    let mut out = format!("## coalprof check: {} {}\n\n{}\n\n", icon(report), report.headline(), report.tally());
    if let Some(why) = &report.nothing_checked {
        out.push_str(&format!("> {}\n\n", inline(why)));
    }
    let notable: Vec<&Check> = report.sorted().into_iter().filter(|c| c.verdict != Verdict::Pass).collect();
    if !notable.is_empty() {
        out.push_str(&table(&notable));
        out.push('\n');
        for c in notable.iter().filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn)).take(MAX_ROWS) {
            out.push_str(&format!(
                "- **{}** {} {}: {}\n",
                c.verdict.as_str(),
                code(&c.row),
                code(&c.metric),
                inline(&c.message)
            ));
        }
        out.push('\n');
    }
    let all = report.sorted();
    if !all.is_empty() {
        let details =
            format!("<details><summary>All {} checks</summary>\n\n{}\n</details>\n\n", all.len(), table(&all));
        if out.len() + details.len() < MAX_BYTES {
            out.push_str(&details);
        }
    }
    out.push_str(&footer(report));
    if out.len() > MAX_BYTES {
        let mut cut = MAX_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push_str("\n\n(summary truncated: see the verdict table in the log or the JUnit report)\n");
    }
    out
}

fn icon(report: &Report) -> &'static str {
    if report.failed() {
        "❌"
    } else if report.count(Verdict::Warn) > 0 || report.all_skipped() {
        "⚠️"
    } else {
        "✅"
    }
}

fn table(checks: &[&Check]) -> String {
    let mut out = String::from("| Status | Arch | Row | Metric | Baseline | Current | Change | Limits |\n");
    out.push_str("|---|---|---|---|---:|---:|---:|---|\n");
    let num = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "-".to_string());
    for c in checks.iter().take(MAX_ROWS) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c.verdict.as_str(),
            cell(&c.arch),
            code(&c.row),
            code(&c.metric),
            num(c.baseline),
            num(c.current),
            cell(&c.change_text()),
            cell(&c.limits)
        ));
    }
    if checks.len() > MAX_ROWS {
        out.push_str(&format!("\n{} more rows omitted: see the JUnit report\n", checks.len() - MAX_ROWS));
    }
    out
}

fn footer(report: &Report) -> String {
    let mut out = String::new();
    for env in &report.environments {
        let mut parts = vec![env.backend.clone()];
        parts.extend(env.gpu.clone());
        parts.extend(env.ncu_version.as_ref().map(|v| format!("ncu {v}")));
        out.push_str(&format!("- {}: {}\n", code(&env.arch), inline(&parts.join(", "))));
    }
    let stale = report
        .checks
        .iter()
        .any(|c| matches!(c.verdict, Verdict::New | Verdict::Missing) || c.message.starts_with("improved"));
    if stale {
        out.push_str("\nThe baseline is out of date: review the numbers, then run `coalprof baseline update <run> --baseline <file>` and commit the diff.\n");
    }
    out
}

/// Control characters made visible (`text::visible`: a name cannot start a line or carry a
/// terminal escape), whitespace collapsed to single spaces (markdown tables are one line per row).
fn inline(s: &str) -> String {
    crate::text::visible(s).split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A plain table cell: whitespace collapsed, `|` escaped.
fn cell(s: &str) -> String {
    inline(s).replace('|', "\\|")
}

/// A name in backticks; a backtick inside becomes `'` and `|` stays escaped (GFM needs it even in code).
fn code(s: &str) -> String {
    format!("`{}`", cell(s).replace('`', "'"))
}
