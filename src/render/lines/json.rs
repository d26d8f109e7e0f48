//! JSON of `lines`: the versioned contract (`schema`, `rows`, `notices`), exact numbers, null
//! where the report has none.

use super::LinesExporter;
use crate::error::{Error, Result};
use crate::lines::LineReport;
use crate::render::Style;

pub(crate) struct Json;

impl LinesExporter for Json {
    fn render(&self, report: &LineReport, _: &Style) -> Result<String> {
        let mut s = serde_json::to_string_pretty(report).map_err(|e| Error::encoding("JSON", e))?;
        s.push('\n');
        Ok(s)
    }
}
