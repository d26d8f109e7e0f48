//! Launch records into the results frame: each record through the sanity check (`super::sanity`:
//! broken counters out, named), then the catalogue's metrics under their stable keys, as
//! totals over the launches a record stands for, fed one record at a time so a report of a
//! million launches is never held whole; grouped per kernel and launch shape (counters summed,
//! so every ratio is a ratio of sums, never a mean of per-launch ratios) or kept one row per
//! launch.

use std::collections::HashMap;
use std::sync::Arc;

use polars_core::prelude::*;

use super::cols::{BLOCK, GRID, ID, KERNEL, LAUNCHES, PROCESS, RANK};
use super::sanity::{Sanity, Suspect};
use super::{polars_error, Derivation, Frame, MeasuredBy};
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

/// Builds the frame of a stream of records.
///
/// The grouping is done here, as records arrive, not by a polars query: a report's records
/// are summed into their group's row at once (so memory is one row per group, whatever the
/// report's size), and the frame is made once, at the end. A polars `group_by` per chunk of
/// records and again over the partials cost two milliseconds of query planning on even a
/// one-launch report, most of `analyze`'s time on one (`docs/performance.md`, "Native report reading").
pub(crate) struct Launches<'a> {
    names: &'a HashMap<String, Mapped>,
    /// The catalogue keys the frame gets a column for, in a fixed order.
    keys: Vec<&'a str>,
    /// The positions in `keys` of the ratios, averaged over launches at the end.
    ratios: Vec<usize>,
    /// Each record's row (by [`LaunchKey`], or one per launch).
    grouper: Grouper,
    rows: Vec<Group>,
    /// Each record name's column and assumed unit, by position: the parsers share one
    /// `Arc<str>` per name, so consecutive records repeat the same pointers and are mapped
    /// without hashing (the plan holds the names, so no address is reused meanwhile).
    plan: Vec<(Arc<str>, Option<Target<'a>>)>,
    /// One record's values by slot (a metric named twice, by its name and an alias, counts
    /// once: the later value), and the slots it set.
    record: Vec<Option<f64>>,
    touched: Vec<usize>,
    pub facts: DeviceFacts,
    /// Every input's records pass the one sanity check here, on their way to rows.
    sanity: Sanity<'a>,
    suspects: Vec<Suspect>,
}

/// Which launches are one group, in the frame and in `lines` alike: process, rank, kernel,
/// grid and block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct LaunchKey {
    pub process: Option<String>,
    pub rank: Option<u32>,
    pub kernel: String,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
}

impl LaunchKey {
    /// The key of `rec`, taken out of it (its kernel and process are left empty).
    pub(crate) fn take(rec: &mut LaunchRecord) -> LaunchKey {
        LaunchKey {
            process: rec.process.take(),
            rank: rec.rank,
            kernel: std::mem::take(&mut rec.kernel),
            grid: rec.grid,
            block: rec.block,
        }
    }
}

/// Launches into groups under a [`Grouping`]: per kernel, the launches of one [`LaunchKey`] are
/// one group; per launch, each is its own. Groups are numbered in order of first appearance.
#[derive(Debug)]
pub(crate) struct Grouper {
    grouping: Grouping,
    keys: Vec<LaunchKey>,
    index: HashMap<LaunchKey, usize>,
}

impl Grouper {
    pub(crate) fn new(grouping: Grouping) -> Grouper {
        Grouper { grouping, keys: Vec::new(), index: HashMap::new() }
    }

    /// The group a launch of `key` belongs to, and whether it starts that group (its number
    /// is then the count of groups before it).
    pub(crate) fn group(&mut self, key: LaunchKey) -> (usize, bool) {
        if self.grouping == Grouping::PerKernel {
            // Consecutive launches are mostly of one kernel: its group is tried before hashing.
            if self.keys.last() == Some(&key) {
                return (self.keys.len() - 1, false);
            }
            if let Some(&i) = self.index.get(&key) {
                return (i, false);
            }
            self.index.insert(key.clone(), self.keys.len());
        }
        self.keys.push(key);
        (self.keys.len() - 1, true)
    }

    /// Group `i`'s key.
    pub(crate) fn key(&self, i: usize) -> &LaunchKey {
        &self.keys[i]
    }
}

/// One frame row: its launches' counters summed (null until a launch has the metric).
struct Group {
    launches: u64,
    /// The first launch's ID (kept only if the group is that one launch).
    id: Option<u64>,
    values: Vec<Option<f64>>,
}

impl<'a> Launches<'a> {
    /// `names` maps ncu metric names to catalogue keys; metrics not in it are dropped.
    pub(crate) fn new(names: &'a HashMap<String, Mapped>, grouping: Grouping) -> Launches<'a> {
        let mut keys: Vec<&str> = names.values().map(|m| m.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        let ratios = (keys.iter().enumerate())
            .filter(|(_, k)| names.values().any(|m| m.key == **k && m.kind == Kind::Ratio))
            .map(|(i, _)| i)
            .collect();
        let keys_len = keys.len();
        Launches {
            names,
            keys,
            ratios,
            grouper: Grouper::new(grouping),
            rows: Vec::new(),
            plan: Vec::new(),
            record: vec![None; keys_len],
            touched: Vec::new(),
            facts: DeviceFacts::default(),
            sanity: Sanity::new(names),
            suspects: Vec::new(),
        }
    }

    /// Add one record, its broken counters taken out; `Err(Interrupted)` once Ctrl-C was
    /// pressed (a long report stops here).
    pub(crate) fn push(&mut self, mut rec: LaunchRecord) -> Result<()> {
        crate::cancel::check()?;
        self.suspects.extend(self.sanity.check(&mut rec));
        if self.facts.gpu.is_none() {
            self.facts.gpu = rec.device.clone();
        }
        if self.facts.cc.is_none() {
            self.facts.cc = rec.cc.clone();
        }
        let id = rec.id.filter(|_| rec.launches == 1);
        let (row, new) = self.grouper.group(LaunchKey::take(&mut rec));
        if new {
            self.rows.push(Group { launches: 0, id, values: vec![None; self.keys.len()] });
        }
        for (j, (name, value)) in rec.metrics.iter().enumerate() {
            let target = match self.plan.get(j) {
                Some((p, t)) if Arc::ptr_eq(p, name) => *t,
                _ => {
                    let t = self.names.get(&**name).and_then(|m| {
                        let slot = self.keys.binary_search(&m.key.as_str()).ok()?;
                        Some((slot, m.assume_unit.as_deref()))
                    });
                    if j < self.plan.len() {
                        self.plan[j] = (name.clone(), t);
                    } else {
                        self.plan.push((name.clone(), t));
                    }
                    t
                }
            };
            let (Some((slot, assume_unit)), Value::Number { value, unit }) = (target, value) else { continue };
            let v = match (assume_unit, *unit) {
                (Some(assumed), "") => units::scale(assumed).apply(*value),
                _ => *value,
            };
            if self.record[slot].replace(v * rec.launches as f64).is_none() {
                self.touched.push(slot);
            }
        }
        let group = &mut self.rows[row];
        group.launches += rec.launches;
        for slot in self.touched.drain(..) {
            if let Some(v) = self.record[slot].take() {
                let sum = &mut group.values[slot];
                *sum = Some(sum.unwrap_or(0.0) + v);
            }
        }
        Ok(())
    }

    /// The whole frame, ratios divided back to their launch-weighted mean, and the broken
    /// counters the sanity check took out (for `crate::frame::Derivation::discard`).
    pub(crate) fn finish(self) -> Result<(Frame, DeviceFacts, Vec<Suspect>)> {
        let rows = &self.rows;
        let keys = &self.grouper.keys;
        let dim = |f: fn(&LaunchKey) -> Option<[u32; 3]>, i: usize| -> Vec<Option<u32>> {
            keys.iter().map(|k| f(k).map(|d| d[i])).collect()
        };
        let mut columns = vec![
            Column::new(KERNEL.into(), keys.iter().map(|k| k.kernel.as_str()).collect::<Vec<_>>()),
            Column::new(PROCESS.into(), keys.iter().map(|k| k.process.as_deref()).collect::<Vec<_>>()),
            Column::new(RANK.into(), keys.iter().map(|k| k.rank).collect::<Vec<_>>()),
            Column::new(ID.into(), rows.iter().map(|r| r.id.filter(|_| r.launches == 1)).collect::<Vec<_>>()),
            Column::new(LAUNCHES.into(), rows.iter().map(|r| r.launches).collect::<Vec<_>>()),
        ];
        for i in 0..3 {
            columns.push(Column::new(GRID[i].into(), dim(|k| k.grid, i)));
            columns.push(Column::new(BLOCK[i].into(), dim(|k| k.block, i)));
        }
        for (slot, k) in self.keys.iter().enumerate() {
            let ratio = self.ratios.contains(&slot);
            let values = rows.iter().map(|r| {
                let v = r.values[slot]?;
                Some(if ratio { v / r.launches as f64 } else { v })
            });
            columns.push(Column::new((*k).into(), values.collect::<Vec<_>>()));
        }
        let df = DataFrame::new(columns).map_err(polars_error)?;
        Ok((Frame(df), self.facts, self.suspects))
    }
}

/// Records → rows where no manifest joins them (a report, a user's program in the simulator):
/// each record through the sanity check into its group ([`Launches`]), the derivation, rows of
/// `source`, broken counters out; the notices say what the rows lack (as `backend`'s, where it
/// never measures a counter). No records, no rows. The way of a built-in pattern, with its
/// manifest and model, is `measure::Rows::pattern_rows`.
pub(crate) fn rows_of(
    records: impl Iterator<Item = LaunchRecord>,
    names: &HashMap<String, Mapped>,
    grouping: Grouping,
    derivation: &Derivation,
    (source, backend): (Source, Option<&MeasuredBy>),
) -> Result<(Vec<Row>, Vec<String>, DeviceFacts)> {
    let mut launches = Launches::new(names, grouping);
    for rec in records {
        launches.push(rec)?;
    }
    let (frame, facts, suspects) = launches.finish()?;
    if frame.height() == 0 {
        return Ok((Vec::new(), Vec::new(), facts));
    }
    let mut rows = derivation.derive(frame)?.into_rows(source)?;
    let mut notices = derivation.discard(&mut rows, &suspects);
    notices.extend(derivation.notices_by(&mut rows, backend));
    Ok((rows, notices, facts))
}

/// Where a record's metric lands in a row's values: the slot, and the unit to assume when
/// the value has none.
type Target<'a> = (usize, Option<&'a str>);

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
        let (frame, facts, _) = launches.finish().unwrap();
        (frame.into_rows(Source::Measured).unwrap(), facts)
    }

    #[test]
    fn one_key_groups_per_kernel_and_shape_and_per_launch_keeps_each() {
        let key = |kernel: &str, grid: u32| {
            let mut r = LaunchRecord { grid: Some([grid, 1, 1]), rank: Some(1), ..rec(0, 0.0) };
            r.kernel = kernel.into();
            LaunchKey::take(&mut r)
        };
        let mut g = Grouper::new(Grouping::PerKernel);
        assert_eq!(g.group(key("a", 1)), (0, true));
        assert_eq!(g.group(key("a", 1)), (0, false));
        assert_eq!(g.group(key("a", 2)), (1, true), "another grid is another group");
        assert_eq!(g.group(key("b", 1)), (2, true));
        assert_eq!(g.group(key("a", 1)), (0, false), "not only the last group is found");
        assert_eq!((g.key(1).kernel.as_str(), g.key(1).grid, g.key(1).rank), ("a", Some([2, 1, 1]), Some(1)));
        let mut g = Grouper::new(Grouping::PerLaunch);
        assert_eq!(g.group(key("a", 1)), (0, true));
        assert_eq!(g.group(key("a", 1)), (1, true));
    }

    #[test]
    fn ratios_are_averaged_weighted_by_launches_not_summed() {
        let ratio = |launches: u64, v: f64| LaunchRecord {
            launches,
            metrics: vec![(Arc::from("r"), Value::Number { value: v, unit: "sector/request" })],
            ..rec(0, 0.0)
        };
        let mapped = Mapped {
            key: "reported_global_load_sectors_per_request".into(),
            assume_unit: None,
            kind: Kind::Ratio,
            at_least: None,
        };
        let names = HashMap::from([("r".to_string(), mapped)]);
        let (rows, _) = rows(vec![ratio(3, 4.0), ratio(1, 8.0)], &names, Grouping::PerKernel);
        assert_eq!(rows[0].launches, 4);
        assert_eq!(rows[0].metric("reported_global_load_sectors_per_request"), Some(5.0));
    }

    #[test]
    fn per_kernel_sums_and_per_launch_keeps_ids() {
        let mapped =
            Mapped { key: "global_load_sectors".into(), assume_unit: None, kind: Kind::Counter, at_least: None };
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
    fn groups_keep_first_appearance_order_and_absent_metrics_stay_absent() {
        const N: u64 = 10_000;
        let mapped =
            Mapped { key: "global_load_sectors".into(), assume_unit: None, kind: Kind::Counter, at_least: None };
        let names = HashMap::from([("s".to_string(), mapped)]);
        let mut recs = Vec::new();
        for i in 0..(3 * N) {
            let mut r = rec(i, 1.0);
            r.kernel = if i % 2 == 0 { "b".into() } else { "a".into() };
            if r.kernel == "a" {
                r.metrics.clear();
            }
            recs.push(r);
        }
        let (r, _) = rows(recs, &names, Grouping::PerKernel);
        assert_eq!(r.iter().map(|r| r.kernel.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(r[0].metric("global_load_sectors"), Some(1.5 * N as f64));
        assert_eq!(r[0].launches, 3 * N / 2);
        assert!(r[1].metrics.is_empty(), "{:?}", r[1].metrics);
    }
}
