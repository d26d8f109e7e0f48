//! The comparison as CSV, long by metric: one line per row and metric, the value of every
//! input, then each later input's delta and ratio against the first. Every metric, exact
//! numbers, empty where absent: the shape a spreadsheet or pandas pivots. The last column says
//! whether the row was paired by base name only; names carry their control characters escaped.

use std::collections::BTreeSet;

use crate::compare::Comparison;
use crate::error::{Error, Result};
use crate::text::visible;

pub(crate) fn render(c: &Comparison) -> Result<String> {
    let err = |e: csv::Error| Error::encoding("CSV", e);
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["key", "pattern", "variant", "kernel", "metric"].map(String::from).to_vec();
    header.extend(c.inputs.iter().map(|i| format!("{} shape", i.label)));
    header.extend(c.inputs.iter().map(|i| i.label.clone()));
    for i in c.inputs.iter().skip(1) {
        header.push(format!("{} delta", i.label));
        header.push(format!("{} ratio", i.label));
    }
    header.push("matched_by_base_name".into());
    let header: Vec<String> = header.iter().map(|h| visible(h).into_owned()).collect();
    w.write_record(&header).map_err(err)?;
    let num = |v: Option<&f64>| v.map(f64::to_string).unwrap_or_default();
    for r in &c.rows {
        let metrics: BTreeSet<&str> = r.values.iter().flatten().flat_map(|m| m.keys().map(String::as_str)).collect();
        for m in metrics {
            let text = |s: Option<&str>| visible(s.unwrap_or_default()).into_owned();
            let mut rec = vec![
                text(Some(&r.key)),
                text(r.pattern.as_deref()),
                text(r.variant.as_deref()),
                text(Some(&r.kernel)),
                text(Some(m)),
            ];
            rec.extend(r.shapes.iter().map(|s| text(s.as_deref())));
            rec.extend(r.values.iter().map(|v| num(v.as_ref().and_then(|v| v.get(m)))));
            for i in 1..c.inputs.len() {
                rec.push(num(r.deltas[i].get(m)));
                rec.push(num(r.ratios[i].get(m)));
            }
            rec.push(r.by_base_name.iter().any(|b| *b).to_string());
            w.write_record(&rec).map_err(err)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
