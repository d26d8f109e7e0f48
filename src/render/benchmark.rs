//! The continuous-benchmarking tools CI already runs, fed counters instead of timings: Bencher
//! Metric Format (`bencher run --adapter json --file`) and github-action-benchmark's custom JSON.
//!
//! Both carry one value per row (`pattern/variant`, or the kernel) and metric: the catalogue's
//! `[[column]]` metrics a row has, less those that only hold another's ideal. The numbers are
//! the JSON's, unrounded. github-action-benchmark takes one direction per file, so
//! `github-benchmark` holds the lower-is-better metrics (its `customSmallerIsBetter`) and
//! `github-benchmark-bigger` the higher-is-better ones (`customBiggerIsBetter`), each direction
//! from `metrics.toml`.

use serde_json::{json, Map, Value};

use super::{Exporter, Style};
use crate::error::{Error, Result};
use crate::metrics::Direction;
use crate::results::{Results, Row};

/// `{benchmark: {measure: {value}}}`.
pub(super) struct Bencher;

/// `[{name, unit, value, extra}]` of one direction.
pub(super) struct GithubBenchmark(pub Direction);

/// The metrics exported: the columns, less the ideals other columns point at.
fn metrics(style: &Style) -> Vec<&str> {
    let ideals: Vec<&str> = style.columns.iter().filter_map(|c| c.ideal.as_deref()).collect();
    (style.columns.iter()).map(|c| c.key.as_str()).filter(|k| !ideals.contains(k)).collect()
}

/// Every (row, metric, value) exported, in row order.
fn values<'a>(results: &'a Results, style: &'a Style) -> impl Iterator<Item = (&'a Row, &'a str, f64)> + 'a {
    let keys = metrics(style);
    results.rows.iter().flat_map(move |r| {
        keys.clone().into_iter().filter_map(move |k| r.metric(k).filter(|v| v.is_finite()).map(|v| (r, k, v)))
    })
}

/// Bencher's measure slug of a metric: `global-load-sectors-per-request`.
pub(crate) fn slug(metric: &str) -> String {
    metric.replace('_', "-")
}

fn pretty(v: &Value) -> Result<String> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| Error::encoding("JSON", e))?;
    s.push('\n');
    Ok(s)
}

impl Exporter for Bencher {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let mut out = Map::new();
        for (r, metric, v) in values(results, style) {
            let bench = out.entry(r.key()).or_insert_with(|| Value::Object(Map::new()));
            bench[slug(metric)] = json!({ "value": v });
        }
        pretty(&Value::Object(out))
    }
}

impl Exporter for GithubBenchmark {
    fn render(&self, results: &Results, style: &Style) -> Result<String> {
        let p = &results.provenance;
        let entries: Vec<Value> = values(results, style)
            .filter(|(_, m, _)| style.directions.get(*m).copied().unwrap_or_default() == self.0)
            .map(|(r, metric, v)| {
                let unit = style.units.get(metric).filter(|u| !u.is_empty()).map_or("ratio", String::as_str);
                let mut extra = vec![format!("{:?}", r.source).to_lowercase()];
                extra.extend(p.gpu.clone());
                extra.extend(p.git.as_ref().map(|g| format!("commit {}", g.short())));
                json!({ "name": format!("{}: {metric}", r.key()), "unit": unit, "value": v, "extra": extra.join(", ") })
            })
            .collect();
        pretty(&Value::Array(entries))
    }
}
