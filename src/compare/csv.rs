//! The comparison as CSV, long by metric: one line per row and metric, the value of every
//! input, then each later input's delta and ratio against the first. Every metric, exact
//! numbers, empty where absent: the shape a spreadsheet or pandas pivots.

use std::collections::BTreeSet;

use super::Comparison;
use crate::error::{Error, Result};

pub(super) fn render(c: &Comparison) -> Result<String> {
    let err = |e: csv::Error| Error::encoding("CSV", e);
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = ["key", "pattern", "variant", "kernel", "metric"].map(String::from).to_vec();
    header.extend(c.inputs.iter().map(|i| format!("{} shape", i.label)));
    header.extend(c.inputs.iter().map(|i| i.label.clone()));
    for i in c.inputs.iter().skip(1) {
        header.push(format!("{} delta", i.label));
        header.push(format!("{} ratio", i.label));
    }
    w.write_record(&header).map_err(err)?;
    let num = |v: Option<&f64>| v.map(f64::to_string).unwrap_or_default();
    for r in &c.rows {
        let metrics: BTreeSet<&str> = r.values.iter().flatten().flat_map(|m| m.keys().map(String::as_str)).collect();
        for m in metrics {
            let mut rec = vec![
                r.key.clone(),
                r.pattern.clone().unwrap_or_default(),
                r.variant.clone().unwrap_or_default(),
                r.kernel.clone(),
                m.to_string(),
            ];
            rec.extend(r.shapes.iter().map(|s| s.clone().unwrap_or_default()));
            rec.extend(r.values.iter().map(|v| num(v.as_ref().and_then(|v| v.get(m)))));
            for i in 1..c.inputs.len() {
                rec.push(num(r.deltas[i].get(m)));
                rec.push(num(r.ratios[i].get(m)));
            }
            w.write_record(&rec).map_err(err)?;
        }
    }
    let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
