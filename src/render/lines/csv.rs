//! CSV of `lines`: one line per row, the JSON fields as columns, empty where absent; text with
//! its control characters escaped (`text::visible`).

use super::LinesExporter;
use crate::error::{Error, Result};
use crate::lines::LineReport;
use crate::render::Style;

pub(crate) struct Csv;

impl LinesExporter for Csv {
    fn render(&self, report: &LineReport, _: &Style) -> Result<String> {
        let err = |e: csv::Error| Error::encoding("CSV", e);
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = Vec::new();
        for row in &report.rows {
            let v = serde_json::to_value(row).map_err(|e| Error::encoding("CSV", e))?;
            let obj = v.as_object().cloned().unwrap_or_default();
            if header.is_empty() {
                header = obj.keys().cloned().collect();
                w.write_record(&header).map_err(err)?;
            }
            let cells = header.iter().map(|k| match obj.get(k) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => crate::text::visible(s).into_owned(),
                Some(other) => other.to_string(),
            });
            w.write_record(cells).map_err(err)?;
        }
        let bytes = w.into_inner().map_err(|e| Error::encoding("CSV", e))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
