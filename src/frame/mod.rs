//! The data-frame module: the one place polars is used. From the parsed launch records on, the
//! results table is a polars [`DataFrame`]:
//!
//! * [`launches`]: records go in one by one, each through [`sanity`] (broken counters out,
//!   named), grouped by kernel and launch shape with their counters summed (so every ratio is
//!   a ratio of sums), or kept one row per launch (the one `LaunchKey` and `Grouper`, which
//!   `lines` groups by too); `rows_of` is the whole way to rows of an input without a manifest;
//! * [`join`]: the launches of a built-in pattern joined to its launch manifest by position and
//!   verified (kernel, grid, block), then to the variants' launch facts;
//! * [`derive`]: every derived metric of `metrics.toml`, its formula compiled once and
//!   evaluated over the frame's columns, for measured and predicted rows alike;
//! * [`findings`]: measured against predicted, a finding where they differ beyond tolerance.
//!
//! The frame becomes [`Row`]s only at the end, for the exporters and the gate.

pub(crate) mod derive;
pub(crate) mod findings;
mod formula;
pub(crate) mod history;
pub(crate) mod join;
pub(crate) mod launches;
pub mod manifest;
pub(crate) mod sanity;
pub(crate) mod side_by_side;

use std::collections::HashSet;

use polars_core::prelude::*;

pub(crate) use derive::{Derivation, MeasuredBy};

use crate::error::{Error, Result};
use crate::results::{Metrics, Row};

/// Identity columns every results frame has, besides its metric columns.
pub(crate) mod cols {
    pub(crate) const KERNEL: &str = "kernel";
    pub(crate) const PROCESS: &str = "process";
    pub(crate) const RANK: &str = "rank";
    pub(crate) const ID: &str = "id";
    pub(crate) const LAUNCHES: &str = "launches";
    pub(crate) const GRID: [&str; 3] = ["grid_x", "grid_y", "grid_z"];
    pub(crate) const BLOCK: [&str; 3] = ["block_x", "block_y", "block_z"];
    pub(crate) const PATTERN: &str = "pattern";
    pub(crate) const VARIANT: &str = "variant";
}

/// A results table: one row per result row, identity columns and `f64` metric columns (null
/// where a metric is absent).
#[derive(Debug, Clone)]
pub struct Frame(pub(crate) DataFrame);

pub(crate) fn polars_error(e: PolarsError) -> Error {
    Error::Internal(format!("the results frame: {e}"))
}

impl Frame {
    /// Rows that were made as rows (the model's predictions): kernel, pattern and variant, and
    /// their metrics under `keys`.
    pub fn from_rows<'a>(rows: &[Row], keys: impl Iterator<Item = &'a str>) -> Result<Frame> {
        let text =
            |name: &str, f: fn(&Row) -> Option<&str>| Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>());
        let mut columns = vec![
            text(cols::KERNEL, |r| Some(r.kernel.as_str())),
            text(cols::PATTERN, |r| r.pattern.as_deref()),
            text(cols::VARIANT, |r| r.variant.as_deref()),
        ];
        for k in keys {
            if columns.iter().all(|c| c.name().as_str() != k) {
                columns.push(Column::new(k.into(), rows.iter().map(|r| r.metrics.get(k).copied()).collect::<Vec<_>>()));
            }
        }
        DataFrame::new(columns).map(Frame).map_err(polars_error)
    }

    pub fn height(&self) -> usize {
        self.0.height()
    }

    /// The frame with an all-null `f64` column for each of `keys` it lacks (a report without
    /// shared-memory counters still gets every formula evaluated, to null).
    ///
    /// One set of the frame's names and one `hstack_mut`: polars finds a column by name with a
    /// linear search, and a lookup and a `with_column` per key added up for the derivation's
    /// inputs (`docs/performance.md`, "Native report reading").
    pub fn with_float_columns<'a>(mut self, keys: impl Iterator<Item = &'a str>) -> Result<Frame> {
        let n = self.0.height();
        let have: HashSet<&str> = self.0.get_column_names().into_iter().map(|c| c.as_str()).collect();
        let mut seen = HashSet::new();
        let missing: Vec<Column> = keys
            .filter(|k| !have.contains(k) && seen.insert(*k))
            .map(|k| Column::full_null(k.into(), n, &DataType::Float64))
            .collect();
        self.0.hstack_mut(&missing).map_err(polars_error)?;
        Ok(self)
    }

    /// A float column's values, `None` where null (or when the column is absent).
    pub fn floats(&self, name: &str) -> Result<Vec<Option<f64>>> {
        match self.0.column(name) {
            Ok(c) => floats_of(c),
            Err(_) => Ok(vec![None; self.0.height()]),
        }
    }

    /// A string column's values.
    pub fn strings(&self, name: &str) -> Result<Vec<Option<String>>> {
        let Ok(c) = self.0.column(name) else { return Ok(vec![None; self.0.height()]) };
        Ok(c.str().map_err(polars_error)?.into_iter().map(|s| s.map(str::to_string)).collect())
    }

    /// Every float column not in `except`, per row, as metrics (nulls skipped).
    pub fn metrics(&self, except: &[&str]) -> Result<Vec<Metrics>> {
        let mut out = vec![Metrics::new(); self.0.height()];
        for c in self.0.get_columns() {
            let name = c.name().as_str();
            if c.dtype() != &DataType::Float64 || except.contains(&name) {
                continue;
            }
            for (m, v) in out.iter_mut().zip(c.f64().map_err(polars_error)?) {
                if let Some(v) = v {
                    m.insert(name.to_string(), v);
                }
            }
        }
        Ok(out)
    }
}

/// The column `name` of `df` as a series (for polars' column arithmetic).
pub(crate) fn series(df: &DataFrame, name: &str) -> Result<Series> {
    Ok(df.column(name).map_err(polars_error)?.as_materialized_series().clone())
}

/// A column's values as floats, `None` where null. Integer columns (ids, launch shapes) are
/// converted here: a polars cast per column was 0.05 ms of a small report's `analyze`.
pub(crate) fn floats_of(c: &Column) -> Result<Vec<Option<f64>>> {
    Ok(match c.dtype() {
        DataType::Float64 => c.f64().map_err(polars_error)?.into_iter().collect(),
        DataType::UInt32 => c.u32().map_err(polars_error)?.into_iter().map(|v| v.map(f64::from)).collect(),
        DataType::UInt64 => c.u64().map_err(polars_error)?.into_iter().map(|v| v.map(|v| v as f64)).collect(),
        _ => c.cast(&DataType::Float64).map_err(polars_error)?.f64().map_err(polars_error)?.into_iter().collect(),
    })
}
