//! GitHub Actions workflow-command annotations (`::error …::`, `::warning …::`).
//!
//! GitHub shows at most 10 annotations of a kind per step and silently drops the rest, so the
//! gate emits the first [`MAX_ANNOTATIONS`] failures and warnings (failures first) and then one
//! `::notice` counting what was left out. Values are escaped like `actions/toolkit`'s
//! `command.ts`: C++ kernel names carry `:` and `,`, which would otherwise end a property.

use crate::gate::verdict::{Check, Report, Verdict};

/// Annotations emitted before the rest are summarized in one notice.
pub const MAX_ANNOTATIONS: usize = 10;

/// Escape a command's message: `%`, CR and LF.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escape a property value (`file=`, `title=`): as [`escape_data`], plus `:` and `,`.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow commands for a report, one per line (empty when nothing failed or warned).
pub fn annotations(report: &Report) -> String {
    let notable: Vec<&Check> = report
        .sorted()
        .into_iter()
        .filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn))
        .collect();
    let mut out = String::new();
    for c in notable.iter().take(MAX_ANNOTATIONS) {
        out.push_str(&annotation(c));
        out.push('\n');
    }
    if notable.len() > MAX_ANNOTATIONS {
        let rest = &notable[MAX_ANNOTATIONS..];
        let failed = rest.iter().filter(|c| c.verdict == Verdict::Fail).count();
        let message = format!(
            "{} more coalprof checks not annotated ({failed} failed, {} warnings): see the verdict table or the job summary",
            rest.len(),
            rest.len() - failed
        );
        out.push_str(&format!("::notice title={}::{}\n", escape_property("coalprof"), escape_data(&message)));
    }
    out
}

fn annotation(c: &Check) -> String {
    let command = if c.verdict == Verdict::Fail { "error" } else { "warning" };
    let mut props = Vec::new();
    if let Some(loc) = &c.location {
        props.push(format!("file={}", escape_property(&loc.file.display().to_string())));
        if let Some(line) = loc.line {
            props.push(format!("line={line}"));
        }
    }
    props.push(format!("title={}", escape_property(&format!("coalprof {} {}: {}", c.arch, c.row, c.metric))));
    let mut message = c.message.clone();
    if c.kernel != c.row {
        message.push_str(&format!("\nkernel: {}", c.kernel));
    }
    format!("::{command} {}::{}", props.join(","), escape_data(&message))
}
