//! Launch records into the results frame: the catalogue's metrics under their stable keys, as
//! totals over the launches a record stands for, fed in chunks so a report of a million
//! launches is never held whole; grouped per kernel and launch shape (counters summed, so every
//! ratio is a ratio of sums, never a mean of per-launch ratios) or kept one row per launch.

use std::collections::HashMap;
use std::sync::Arc;

use polars::prelude::*;

use super::cols::{BLOCK, GRID, ID, KERNEL, LAUNCHES, PROCESS, RANK};
use super::{polars_error, Frame};
use crate::error::Result;
use crate::metrics::{Kind, Mapped};
use crate::parse::{units, LaunchRecord, Value};
use crate::results::{Row, Source};

/// One row per kernel (name and launch shape) or one per launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Grouping {
    #[default]
    PerKernel,
    PerLaunch,
}

/// What the records said about the device they ran on.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeviceFacts {
    pub gpu: Option<String>,
    pub cc: Option<String>,
}

/// Records per chunk: large enough that polars' per-frame cost vanishes, small enough that a
/// chunk of a wide report stays a few megabytes.
const CHUNK: usize = 8192;

/// Builds the frame of a stream of records.
pub(crate) struct Launches<'a> {
    names: &'a HashMap<String, Mapped>,
    grouping: Grouping,
    /// The catalogue keys a chunk gets a column for, in a fixed order.
    keys: Vec<&'a str>,
    ratios: Vec<&'a str>,
    chunk: Vec<LaunchRecord>,
    /// Chunks already turned into frames (aggregated when grouping per kernel).
    done: Vec<DataFrame>,
    pub facts: DeviceFacts,
}

impl<'a> Launches<'a> {
    /// `names` maps ncu metric names to catalogue keys; metrics not in it are dropped.
    pub(crate) fn new(names: &'a HashMap<String, Mapped>, grouping: Grouping) -> Launches<'a> {
        let mut keys: Vec<&str> = names.values().map(|m| m.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut ratios: Vec<&str> = names.values().filter(|m| m.kind == Kind::Ratio).map(|m| m.key.as_str()).collect();
        ratios.sort_unstable();
        ratios.dedup();
        Launches { names, grouping, keys, ratios, chunk: Vec::new(), done: Vec::new(), facts: DeviceFacts::default() }
    }

    /// Add one record; `Err(Interrupted)` once Ctrl-C was pressed (a long report stops here).
    pub(crate) fn push(&mut self, rec: LaunchRecord) -> Result<()> {
        crate::cancel::check()?;
        if self.facts.gpu.is_none() {
            self.facts.gpu = rec.device.clone();
        }
        if self.facts.cc.is_none() {
            self.facts.cc = rec.cc.clone();
        }
        self.chunk.push(rec);
        if self.chunk.len() >= CHUNK {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.chunk);
        let df = self.chunk_frame(&chunk)?;
        let df = match self.grouping {
            Grouping::PerKernel => self.group(df)?,
            Grouping::PerLaunch => df,
        };
        self.done.push(df);
        // Per-kernel partials are few rows each: fold them so memory stays flat.
        if self.grouping == Grouping::PerKernel && self.done.len() >= 64 {
            if let Some(all) = concat(std::mem::take(&mut self.done))? {
                self.done.push(self.group(all)?);
            }
        }
        Ok(())
    }

    /// The whole frame, ratios divided back to their launch-weighted mean.
    pub(crate) fn finish(mut self) -> Result<(Frame, DeviceFacts)> {
        self.flush()?;
        // One partial (a report of one chunk, every small one) is grouped already: grouping it
        // again would give the same rows, for one more polars query (a millisecond of a
        // small report's start-to-finish).
        let partials = self.done.len();
        let mut df = match concat(std::mem::take(&mut self.done))? {
            Some(df) => df,
            None => self.chunk_frame(&[])?, // no launches: the columns, no rows
        };
        if self.grouping == Grouping::PerKernel && df.height() > 0 && partials > 1 {
            df = self.group(df)?;
        }
        let weighted = self.ratios.iter().map(|k| (col(*k) / col(LAUNCHES).cast(DataType::Float64)).alias(*k));
        let df = df.lazy().with_columns(weighted.collect::<Vec<_>>()).collect().map_err(polars_error)?;
        Ok((Frame(df), self.facts))
    }

    /// One frame row per record; metrics as totals over the record's launches.
    fn chunk_frame(&self, recs: &[LaunchRecord]) -> Result<DataFrame> {
        let dim = |f: fn(&LaunchRecord) -> Option<[u32; 3]>, i: usize| -> Vec<Option<u32>> {
            recs.iter().map(|r| f(r).map(|d| d[i])).collect()
        };
        let mut columns = vec![
            Column::new(KERNEL.into(), recs.iter().map(|r| r.kernel.as_str()).collect::<Vec<_>>()),
            Column::new(PROCESS.into(), recs.iter().map(|r| r.process.as_deref()).collect::<Vec<_>>()),
            Column::new(RANK.into(), recs.iter().map(|r| r.rank).collect::<Vec<_>>()),
            Column::new(ID.into(), recs.iter().map(|r| r.id.filter(|_| r.launches == 1)).collect::<Vec<_>>()),
            Column::new(LAUNCHES.into(), recs.iter().map(|r| r.launches).collect::<Vec<_>>()),
        ];
        for i in 0..3 {
            columns.push(Column::new(GRID[i].into(), dim(|r| r.grid, i)));
            columns.push(Column::new(BLOCK[i].into(), dim(|r| r.block, i)));
        }
        let mut values: Vec<Vec<Option<f64>>> = vec![vec![None; recs.len()]; self.keys.len()];
        // Each record name's column and assumed unit, by position: the parsers share one
        // `Arc<str>` per name, so consecutive records repeat the same pointers and are mapped
        // without hashing (the plan holds the names, so no address is reused meanwhile).
        let mut plan: Vec<(Arc<str>, Option<Target<'_>>)> = Vec::new();
        for (i, rec) in recs.iter().enumerate() {
            for (j, (name, value)) in rec.metrics.iter().enumerate() {
                let target = match plan.get(j) {
                    Some((p, t)) if Arc::ptr_eq(p, name) => *t,
                    _ => {
                        let t = self.names.get(&**name).and_then(|m| {
                            let slot = self.keys.binary_search(&m.key.as_str()).ok()?;
                            Some((slot, m.assume_unit.as_deref()))
                        });
                        if j < plan.len() {
                            plan[j] = (name.clone(), t);
                        } else {
                            plan.push((name.clone(), t));
                        }
                        t
                    }
                };
                let (Some((slot, assume_unit)), Value::Number { value, unit }) = (target, value) else { continue };
                let v = match (assume_unit, *unit) {
                    (Some(assumed), "") => units::scale(assumed).apply(*value),
                    _ => *value,
                };
                values[slot][i] = Some(v * rec.launches as f64);
            }
        }
        for (k, v) in self.keys.iter().zip(values) {
            columns.push(Column::new((*k).into(), v));
        }
        DataFrame::new(columns).map_err(polars_error)
    }

    /// Group by process, rank, kernel, grid and block, in order of first appearance: launches and
    /// counters summed (a metric no launch of the group has stays null), the ID kept only for a
    /// group of one launch.
    fn group(&self, df: DataFrame) -> Result<DataFrame> {
        let by: Vec<Expr> = [PROCESS, RANK, KERNEL].into_iter().chain(GRID).chain(BLOCK).map(col).collect();
        let mut aggs = vec![
            col(LAUNCHES).sum(),
            when(col(LAUNCHES).sum().eq(lit(1u64))).then(col(ID).first()).otherwise(lit(NULL).cast(DataType::UInt64)),
        ];
        aggs.extend(self.keys.iter().map(|k| {
            when(col(*k).count().gt(lit(0u32)))
                .then(col(*k).sum())
                .otherwise(lit(NULL).cast(DataType::Float64))
                .alias(*k)
        }));
        df.lazy().group_by_stable(by).agg(aggs).collect().map_err(polars_error)
    }
}

/// Where a record's metric lands in a chunk's columns: the column, and the unit to assume when
/// the value has none.
type Target<'a> = (usize, Option<&'a str>);

fn concat(frames: Vec<DataFrame>) -> Result<Option<DataFrame>> {
    let mut it = frames.into_iter();
    let Some(mut first) = it.next() else { return Ok(None) };
    for f in it {
        first.vstack_mut(&f).map_err(polars_error)?;
    }
    first.align_chunks_par();
    Ok(Some(first))
}

impl Frame {
    /// The frame as result rows of `source`: identity columns into the row's fields, every
    /// float column into its metrics.
    pub fn into_rows(self, source: Source) -> Result<Vec<Row>> {
        if self.height() == 0 {
            return Ok(Vec::new());
        }
        let kernels = self.strings(KERNEL)?;
        let ids = self.floats(ID)?;
        let launches = self.floats(LAUNCHES)?;
        let ranks = self.floats(RANK)?;
        let dims = |names: [&str; 3]| -> Result<Vec<Option<[u32; 3]>>> {
            let [x, y, z] = names.map(|n| self.floats(n));
            Ok((x?.into_iter().zip(y?).zip(z?)).map(|((x, y), z)| Some([x? as u32, y? as u32, z? as u32])).collect())
        };
        let (grids, blocks) = (dims(GRID)?, dims(BLOCK)?);
        let metrics = self.metrics(&[])?;
        let rows = (kernels.into_iter().zip(metrics).enumerate())
            .map(|(i, (kernel, metrics))| Row {
                id: ids[i].map(|v| v as u64),
                launches: launches[i].map_or(1, |v| v as u64),
                rank: ranks[i].map(|v| v as u32),
                grid: grids[i],
                block: blocks[i],
                metrics,
                ..Row::new(kernel.unwrap_or_default(), source)
            })
            .collect();
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Metrics;
    use std::sync::Arc;

    fn rec(id: u64, sectors: f64) -> LaunchRecord {
        LaunchRecord {
            id: Some(id),
            process: Some("1 app".into()),
            grid: Some([2, 1, 1]),
            block: Some([32, 1, 1]),
            cc: Some("9.0".into()),
            metrics: vec![
                (Arc::from("s"), Value::Number { value: sectors, unit: "sector" }),
                (Arc::from("ignored"), Value::Number { value: 1.0, unit: "" }),
            ],
            ..LaunchRecord::new("k")
        }
    }

    fn rows(recs: Vec<LaunchRecord>, names: &HashMap<String, Mapped>, g: Grouping) -> (Vec<Row>, DeviceFacts) {
        let mut launches = Launches::new(names, g);
        for r in recs {
            launches.push(r).unwrap();
        }
        let (frame, facts) = launches.finish().unwrap();
        (frame.into_rows(Source::Measured).unwrap(), facts)
    }

    #[test]
    fn ratios_are_averaged_weighted_by_launches_not_summed() {
        let ratio = |launches: u64, v: f64| LaunchRecord {
            launches,
            metrics: vec![(Arc::from("r"), Value::Number { value: v, unit: "sector/request" })],
            ..rec(0, 0.0)
        };
        let mapped =
            Mapped { key: "reported_global_load_sectors_per_request".into(), assume_unit: None, kind: Kind::Ratio };
        let names = HashMap::from([("r".to_string(), mapped)]);
        let (rows, _) = rows(vec![ratio(3, 4.0), ratio(1, 8.0)], &names, Grouping::PerKernel);
        assert_eq!(rows[0].launches, 4);
        assert_eq!(rows[0].metric("reported_global_load_sectors_per_request"), Some(5.0));
    }

    #[test]
    fn per_kernel_sums_and_per_launch_keeps_ids() {
        let mapped = Mapped { key: "global_load_sectors".into(), assume_unit: None, kind: Kind::Counter };
        let names = HashMap::from([("s".to_string(), mapped)]);
        let recs = || vec![rec(0, 4.0), rec(1, 6.0)];
        let (r, facts) = rows(recs(), &names, Grouping::PerKernel);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].launches, r[0].id), (2, None));
        assert_eq!(r[0].metrics, Metrics::from([("global_load_sectors".into(), 10.0)]));
        assert_eq!(facts.cc.as_deref(), Some("9.0"));
        let (r, _) = rows(recs(), &names, Grouping::PerLaunch);
        assert_eq!(r.iter().map(|r| r.id).collect::<Vec<_>>(), [Some(0), Some(1)]);
    }

    #[test]
    fn groups_keep_first_appearance_order_and_absent_metrics_stay_absent_across_chunks() {
        let mapped = Mapped { key: "global_load_sectors".into(), assume_unit: None, kind: Kind::Counter };
        let names = HashMap::from([("s".to_string(), mapped)]);
        let mut recs = Vec::new();
        for i in 0..(3 * CHUNK as u64) {
            let mut r = rec(i, 1.0);
            r.kernel = if i % 2 == 0 { "b".into() } else { "a".into() };
            if r.kernel == "a" {
                r.metrics.clear();
            }
            recs.push(r);
        }
        let (r, _) = rows(recs, &names, Grouping::PerKernel);
        assert_eq!(r.iter().map(|r| r.kernel.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(r[0].metric("global_load_sectors"), Some(1.5 * CHUNK as f64));
        assert_eq!(r[0].launches, 3 * CHUNK as u64 / 2);
        assert!(r[1].metrics.is_empty(), "{:?}", r[1].metrics);
    }
}
