//! `check --format csv`: one line per check, in the report's order, with where it points
//! (the source line a line row or a kernel's worst line names, else the rule): a spreadsheet's
//! or a script's view of the same verdicts the table shows.

use crate::error::{Error, Result};
use crate::gate::verdict::Report;
use crate::text::visible;

/// The columns, in order.
pub(crate) const HEADER: [&str; 13] = [
    "arch", "row", "kernel", "metric", "verdict", "severity", "current", "baseline", "change", "limits", "file",
    "line", "message",
];

/// The CSV of every check of `report`.
pub(crate) fn render(report: &Report) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER).map_err(err)?;
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for c in &report.checks {
        let severity = match c.severity {
            crate::metrics::Severity::Fail => "fail",
            crate::metrics::Severity::Warn => "warn",
        };
        let place = c.place();
        // Names from the inputs stay text: a control character is written as a visible escape.
        let record = [
            visible(&c.arch).into_owned(),
            visible(&c.row).into_owned(),
            visible(&c.kernel).into_owned(),
            c.metric.clone(),
            c.verdict.as_str().to_string(),
            severity.to_string(),
            num(c.current),
            num(c.baseline),
            num(c.change()),
            c.limits.clone(),
            place.map(|p| visible(&p.file.display().to_string()).into_owned()).unwrap_or_default(),
            place.and_then(|p| p.line).map(|l| l.to_string()).unwrap_or_default(),
            visible(&c.message).into_owned(),
        ];
        w.write_record(&record).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn err(e: csv::Error) -> Error {
    Error::encoding("CSV", e)
}
