//! GitHub Actions workflow-command annotations (`::error …::`, `::warning …::`).
//!
//! GitHub shows at most 10 annotations of a kind per step and silently drops the rest, so the
//! gate emits the first [`MAX_ANNOTATIONS`] failures and warnings (failures first) and then one
//! `::notice` counting what was left out. Values are escaped like `actions/toolkit`'s
//! `command.ts`: C++ kernel names carry `:` and `,`, which would otherwise end a property.

use crate::gate::verdict::{Check, Report, Verdict};

/// Annotations emitted before the rest are summarized in one notice.
pub(crate) const MAX_ANNOTATIONS: usize = 10;

/// Escape a command's message: `%`, CR and LF; any other control character (an ESC a name
/// carried) becomes a visible escape (`text::visible`), so the log shows it and no terminal runs it.
pub(crate) fn escape_data(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '%' => out.push_str("%25"),
            '\r' => out.push_str("%0D"),
            '\n' => out.push_str("%0A"),
            c => out.push_str(&crate::text::visible(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// Escape a property value (`file=`, `title=`): as [`escape_data`], plus `:` and `,`.
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `text` (the verdict table printed beside the annotations) fenced so that the Actions runner
/// reads no workflow command in it: `::stop-commands::TOKEN` before, `::TOKEN::` after, with a
/// fresh random token the text cannot contain (GitHub's own defence for untrusted output).
/// Names in the table are escaped as well; the fence holds even if an escape were missed.
pub(crate) fn fenced(text: &str) -> String {
    let token = loop {
        let t = token();
        if !text.contains(&t) {
            break t;
        }
    };
    let mut out = format!("::stop-commands::{token}\n{text}");
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("::{token}::\n"));
    out
}

/// A token for [`fenced`]: 128 random bits as hex, from the kernel's generator; where that
/// cannot be read, the clock and the process id (unguessable enough for one step's log).
fn token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    format!("coalprof-{}", bytes.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

/// The workflow commands for a report, one per line (empty when nothing failed or warned and
/// something was checked).
pub(crate) fn annotations(report: &Report) -> String {
    let notable: Vec<&Check> =
        report.sorted().into_iter().filter(|c| matches!(c.verdict, Verdict::Fail | Verdict::Warn)).collect();
    let mut out = String::new();
    // A check of nothing is no green tick: the job's page says so.
    if let Some(why) = &report.nothing_checked {
        out.push_str(&format!(
            "::warning title={}::{}\n",
            escape_property("coalprof: nothing checked"),
            escape_data(why)
        ));
    }
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
    if let Some(loc) = c.place() {
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::gate::rules::parse_rules;
    use crate::gate::verdict::evaluate;
    use crate::results::{Provenance, Results, Row, Source};

    const GEMM: &str = "void gemm<float, 128>(const float*, float*, int)";

    fn row(kernel: &str, v: f64) -> Row {
        Row {
            metrics: [("global_load_sectors_per_request".to_string(), v)].into(),
            ..Row::new(kernel, Source::Measured)
        }
    }

    fn report(rows: Vec<Row>, severity: &str) -> Report {
        let rules = parse_rules(
            &format!("[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\nseverity = \"{severity}\"\n"),
            Path::new("ci/metrics.toml"),
            &crate::metrics::Catalogue::builtin().directions(),
        )
        .unwrap();
        let p = Provenance { compute_capability: Some("9.0".into()), ..Default::default() };
        evaluate(&rules, &[Results::new(p, rows)], None)
    }

    #[test]
    fn a_fence_stops_commands_with_a_fresh_token() {
        let text = "coalprof check: gate passed\nevil\n::warning::injected\n";
        let out = fenced(text);
        let lines: Vec<&str> = out.lines().collect();
        let token = lines[0].strip_prefix("::stop-commands::").expect("the fence opens first");
        assert!(token.len() >= 32 && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{token}");
        assert_eq!(*lines.last().unwrap(), format!("::{token}::"));
        assert_ne!(fenced(text), out, "a fresh token each time");
    }

    #[test]
    fn toolkit_escaping() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("50% a\nb: c, d"), "50%25 a%0Ab%3A c%2C d");
    }

    #[test]
    fn templated_kernel_names_are_escaped_in_title_and_message() {
        let out = annotations(&report(vec![row(GEMM, 8.0)], "fail"));
        assert_eq!(
            out,
            "::error file=ci/metrics.toml,line=1,title=coalprof sm_90 void gemm<float%2C 128>(const float*%2C float*%2C int)%3A \
             global_load_sectors_per_request::global_load_sectors_per_request 8 > 4.5 (max, rule #1 at ci/metrics.toml:1)\n"
        );
        assert_eq!(out.lines().count(), 1, "a newline in a name must not split the command");
    }

    #[test]
    fn warnings_are_warnings_and_passes_are_silent() {
        let out = annotations(&report(vec![row("k1", 8.0), row("k2", 1.0)], "warn"));
        assert!(out.starts_with("::warning ") && out.lines().count() == 1, "{out}");
    }

    #[test]
    fn at_most_ten_annotations_then_one_notice() {
        let rows = (0..13).map(|i| row(&format!("kernel_{i:02}"), 5.0 + i as f64)).collect();
        let out = annotations(&report(rows, "fail"));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), MAX_ANNOTATIONS + 1);
        assert!(lines[..10].iter().all(|l| l.starts_with("::error ")));
        assert!(lines[0].contains("kernel_00"), "same verdict, no baseline: by name: {}", lines[0]);
        assert_eq!(
            lines[10],
            "::notice title=coalprof::3 more coalprof checks not annotated (3 failed, 0 warnings): see the verdict table or the job summary"
        );
    }
}
