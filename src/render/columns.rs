//! The column model shared by the human formats: the catalogue's `[[column]]`s (which metrics a
//! table shows, under which header, rounded how), of which only those with a value in some row
//! are shown.

pub(crate) use crate::metrics::{Column, Fmt};
use crate::results::{Results, Row};
pub(crate) use crate::text::thousands;
use crate::text::{count, percent, ratio};

/// The `columns` with at least one value (measured or predicted) in `results`.
pub(super) fn present<'c>(results: &Results, columns: &'c [Column]) -> Vec<&'c Column> {
    let has = |c: &Column| results.rows.iter().any(|r| r.metric(&c.key).is_some() || predicted(r, &c.key).is_some());
    columns.iter().filter(|c| has(c)).collect()
}

fn predicted(r: &Row, key: &str) -> Option<f64> {
    r.predicted.as_ref().and_then(|p| p.get(key).copied())
}

impl Fmt {
    /// `v` rounded for people.
    pub fn show(self, v: f64) -> String {
        match self {
            Fmt::Ratio => ratio(v),
            Fmt::Factor => format!("{}x", ratio(v)),
            Fmt::Percent => percent(v),
            Fmt::GbPerSec => format!("{:.1}", v / 1e9),
            Fmt::Megabytes => format!("{:.1}", v / 1e6),
            Fmt::Micros => format!("{:.1}", v * 1e6),
            Fmt::Count => count(v),
        }
    }
}

/// How a value reads for people: beside its ideal, or beside a reference. The terminal table
/// colours it (`fit.rs` alone maps it to a terminal colour), the HTML pages give it a class.
/// Not a gate rule's severity (`gate::rules::Severity`: whether a violation fails or warns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Good,
    Warn,
    Bad,
}

impl Severity {
    /// The HTML pages' class (`page.css`).
    pub(crate) fn class(self) -> &'static str {
        match self {
            Severity::Good => "good",
            Severity::Warn => "warn",
            Severity::Bad => "bad",
        }
    }
}

/// A value far from its ideal is bad beyond twice the ideal, a warning above it (the columns
/// whose metric names an `ideal` in the catalogue: lower is better for them).
pub(super) fn severity(r: &Row, c: &Column) -> Option<Severity> {
    let (v, ideal) = (r.metric(&c.key)?, r.metric(c.ideal.as_deref()?)?);
    if v > 2.0 * ideal {
        Some(Severity::Bad)
    } else if v > ideal * 1.05 {
        Some(Severity::Warn)
    } else {
        Some(Severity::Good)
    }
}

/// One cell: the value, with the prediction beside it on measured rows that have one.
pub(super) fn cell(r: &Row, c: &Column) -> String {
    let measured = r.metric(&c.key).map(|v| c.format.show(v));
    match (measured, predicted(r, &c.key)) {
        (Some(m), Some(p)) => format!("{m} ({})", c.format.show(p)),
        (Some(m), None) => m,
        (None, Some(p)) => format!("– ({})", c.format.show(p)),
        (None, None) => "–".into(),
    }
}

/// The name a row is shown under in the human formats: `variant` for built-in patterns, else
/// the kernel's function name (JSON and CSV keep the full signature).
pub(super) fn label(r: &Row) -> String {
    match &r.variant {
        Some(v) => v.clone(),
        None => function_name(&r.kernel),
    }
}

/// The rank cell of a row (`–` for a row of no rank's report).
pub(crate) fn rank(r: &Row) -> String {
    r.rank.map_or("–".into(), |n| n.to_string())
}

/// `matrix_unrolling_kernel<float>` of `void matrix_unrolling_kernel<float>(float const*, int)`:
/// the name before the parameter list (template arguments kept, so instantiations differ),
/// without a leading return type or a library's inline namespace (`crate::names`).
pub(crate) fn function_name(kernel: &str) -> String {
    crate::names::match_name(kernel)
}

/// Findings and notes of `rows`, each text once: a note every row shares is said once without
/// a row name (the model's assumptions, say); the others name their rows.
pub(super) fn notes(rows: &[&Row]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        for f in &r.findings {
            out.push(format!("{}: {f}", label(r)));
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for r in rows {
        for n in &r.notes {
            if seen.contains(&n.as_str()) {
                continue;
            }
            seen.push(n);
            let having: Vec<String> = rows.iter().filter(|x| x.notes.contains(n)).map(|x| label(x)).collect();
            let lacking: Vec<String> = rows.iter().filter(|x| !x.notes.contains(n)).map(|x| label(x)).collect();
            // Name the smaller side: a note most rows share is said once, with its exceptions.
            if lacking.is_empty() && rows.len() > 1 {
                out.push(n.clone());
            } else if having.len() > 3 && lacking.len() < having.len() {
                out.push(format!("{n} (all rows but {})", lacking.join(", ")));
            } else {
                out.push(format!("{}: {n}", having.join(", ")));
            }
        }
    }
    out
}

/// The rows grouped by pattern (user kernels form one group, named `None`), in first-seen order.
pub(super) fn groups(results: &Results) -> Vec<(Option<&str>, Vec<&Row>)> {
    let mut out: Vec<(Option<&str>, Vec<&Row>)> = Vec::new();
    for r in &results.rows {
        let p = r.pattern.as_deref();
        match out.iter_mut().find(|(k, _)| *k == p) {
            Some((_, rows)) => rows.push(r),
            None => out.push((p, vec![r])),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Source;

    #[test]
    fn formats() {
        assert_eq!(thousands(268_427_291), "268,427,291");
        assert_eq!(thousands(-1000), "-1,000");
        assert_eq!(Fmt::Percent.show(0.934), "93%");
        assert_eq!(Fmt::GbPerSec.show(3.9e12), "3900.0");
        assert_eq!(Fmt::Factor.show(8.0), "8.00x");
        assert_eq!(Fmt::Megabytes.show(1_073_741_824.0), "1073.7");
    }

    #[test]
    fn function_names_without_parameters_or_return_type() {
        assert_eq!(
            function_name("void matrix_unrolling_kernel<float>(float const*, int, int)"),
            "matrix_unrolling_kernel<float>"
        );
        assert_eq!(function_name("stride_copy(const float *, float *)"), "stride_copy");
        assert_eq!(function_name("void ns::k<std::pair<int, int> >(int)"), "ns::k<std::pair<int, int> >");
        assert_eq!(function_name("plain"), "plain");
    }

    #[test]
    fn a_note_most_rows_share_is_said_once_with_its_exceptions() {
        let row = |v: &str, notes: &[&str]| Row {
            variant: Some(v.into()),
            notes: notes.iter().map(|n| n.to_string()).collect(),
            ..Row::new("k", Source::Predicted)
        };
        let rows = [row("a", &["n"]), row("b", &["n"]), row("c", &["n"]), row("d", &["n"]), row("e", &[])];
        let refs: Vec<&Row> = rows.iter().collect();
        assert_eq!(notes(&refs), ["n (all rows but e)"]);
        let few = [row("a", &["m"]), row("b", &[])];
        assert_eq!(notes(&few.iter().collect::<Vec<_>>()), ["a: m"]);
    }
}
