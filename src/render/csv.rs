//! CSV: one line per row, every metric key as a column, exact numbers, empty when absent; names
//! with their control characters escaped (`text::visible`).

use std::collections::BTreeSet;

use super::{Exporter, Style};
use crate::error::{Error, Result};
use crate::results::Results;
use crate::text::visible;

pub(super) struct Csv;

impl Exporter for Csv {
    fn render(&self, results: &Results, _: &Style) -> Result<String> {
        let keys: BTreeSet<&str> = results.rows.iter().flat_map(|r| r.metrics.keys().map(String::as_str)).collect();
        let mut w = csv::Writer::from_writer(Vec::new());
        let ranks = results.rows.iter().any(|r| r.rank.is_some());
        let mut fixed = vec!["pattern", "variant", "kernel", "id", "launches", "source"];
        if ranks {
            fixed.insert(3, "rank");
        }
        let header = fixed.iter().copied().chain(keys.iter().copied());
        w.write_record(header).map_err(err)?;
        for r in &results.rows {
            let source = r.source.word();
            // Names stay text: a control character is written as a visible escape.
            let text = |s: Option<&str>| visible(s.unwrap_or_default()).into_owned();
            let mut rec = vec![text(r.pattern.as_deref()), text(r.variant.as_deref()), text(Some(&r.kernel))];
            if ranks {
                rec.push(r.rank.map(|n| n.to_string()).unwrap_or_default());
            }
            rec.extend([r.id.map(|i| i.to_string()).unwrap_or_default(), r.launches.to_string(), source.to_string()]);
            rec.extend(keys.iter().map(|k| r.metric(k).map(|v| v.to_string()).unwrap_or_default()));
            w.write_record(&rec).map_err(err)?;
        }
        let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

fn err(e: csv::Error) -> Error {
    Error::encoding("CSV", e)
}
