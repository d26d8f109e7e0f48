//! JSON: the versioned contract (`schema`, `rows`), exact numbers, pretty-printed.

use super::{Exporter, Style};
use crate::error::{Error, Result};
use crate::results::Results;

pub(super) struct Json;

impl Exporter for Json {
    fn render(&self, results: &Results, _: &Style) -> Result<String> {
        let mut s = serde_json::to_string_pretty(results).map_err(|e| Error::encoding("JSON", e))?;
        s.push('\n');
        Ok(s)
    }
}
