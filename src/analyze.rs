//! Launch records → result rows: keep the catalogue's metrics under their stable keys, group
//! launches per kernel (or not), and derive. Counters of grouped launches are summed, so every
//! ratio is a ratio of sums, never a mean of per-launch ratios.

use std::collections::HashMap;

use crate::metrics::{Kind, Mapped};
use crate::report::{units, LaunchRecord, Value};
use crate::results::{Metrics, Row, Source};

/// One row per kernel (name and launch shape) or one per launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Grouping {
    #[default]
    PerKernel,
    PerLaunch,
}

/// What the records said about the device they ran on.
#[derive(Debug, Clone, Default)]
pub struct DeviceFacts {
    pub gpu: Option<String>,
    pub cc: Option<String>,
}

/// What makes launches "the same kernel": process, name, grid and block.
type KernelKey = (Option<String>, String, Option<[u32; 3]>, Option<[u32; 3]>);

/// Fold records into rows. `names` maps ncu metric names to catalogue keys; metrics not in it
/// are dropped. Fails on the first malformed record, keeping nothing half-read. `E` is the
/// parser's error (the CSV parser's, the native reader's).
pub fn rows_from_records<E>(
    records: impl Iterator<Item = Result<LaunchRecord, E>>,
    names: &HashMap<String, Mapped>,
    grouping: Grouping,
) -> Result<(Vec<Row>, DeviceFacts), E> {
    let mut rows: Vec<Row> = Vec::new();
    let mut index: HashMap<KernelKey, usize> = HashMap::new();
    let mut facts = DeviceFacts::default();
    for rec in records {
        let rec = rec?;
        if facts.gpu.is_none() {
            facts.gpu = rec.device.clone();
        }
        if facts.cc.is_none() {
            facts.cc = rec.cc.clone();
        }
        let metrics = keyed_totals(&rec, names);
        let key = (rec.process.clone(), rec.kernel.clone(), rec.grid, rec.block);
        match (grouping, index.get(&key)) {
            (Grouping::PerKernel, Some(&i)) => {
                let row = &mut rows[i];
                row.launches += rec.launches;
                row.id = None;
                for (k, v) in metrics {
                    *row.metrics.entry(k).or_insert(0.0) += v;
                }
            }
            _ => {
                index.insert(key, rows.len());
                rows.push(Row {
                    id: rec.id.filter(|_| rec.launches == 1),
                    launches: rec.launches,
                    grid: rec.grid,
                    block: rec.block,
                    metrics,
                    ..Row::new(rec.kernel, Source::Measured)
                });
            }
        }
    }
    // Ratios were summed weighted by launches: divide back to the weighted mean.
    let ratios: Vec<&str> = names.values().filter(|m| m.kind == Kind::Ratio).map(|m| m.key.as_str()).collect();
    for row in &mut rows {
        for key in &ratios {
            if let Some(v) = row.metrics.get_mut(*key) {
                *v /= row.launches.max(1) as f64;
            }
        }
    }
    Ok((rows, facts))
}

/// The record's catalogue metrics as totals over the launches it stands for.
fn keyed_totals(rec: &LaunchRecord, names: &HashMap<String, Mapped>) -> Metrics {
    let mut m = Metrics::new();
    for (name, value) in &rec.metrics {
        let (Some(mapped), Value::Number { value, unit }) = (names.get(&**name), value) else { continue };
        let v = match (&mapped.assume_unit, *unit) {
            (Some(assumed), "") => units::scale(assumed).apply(*value),
            _ => *value,
        };
        m.insert(mapped.key.clone(), v * rec.launches as f64);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn rec(id: u64, sectors: f64) -> LaunchRecord {
        LaunchRecord {
            id: Some(id),
            process: Some("1 app".into()),
            kernel: "k".into(),
            grid: Some([2, 1, 1]),
            block: Some([32, 1, 1]),
            device: None,
            cc: Some("9.0".into()),
            nvtx: None,
            launches: 1,
            metrics: vec![
                (Arc::from("s"), Value::Number { value: sectors, unit: "sector" }),
                (Arc::from("ignored"), Value::Number { value: 1.0, unit: "" }),
            ],
        }
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
        let recs = vec![Ok::<_, ()>(ratio(3, 4.0)), Ok(ratio(1, 8.0))].into_iter();
        let (rows, _) = rows_from_records(recs, &names, Grouping::PerKernel).unwrap();
        assert_eq!(rows[0].launches, 4);
        assert_eq!(rows[0].metric("reported_global_load_sectors_per_request"), Some(5.0));
    }

    #[test]
    fn per_kernel_sums_and_per_launch_keeps_ids() {
        let mapped = Mapped { key: "global_load_sectors".into(), assume_unit: None, kind: Kind::Counter };
        let names = HashMap::from([("s".to_string(), mapped)]);
        let recs = || vec![Ok::<_, ()>(rec(0, 4.0)), Ok(rec(1, 6.0))].into_iter();
        let (rows, facts) = rows_from_records(recs(), &names, Grouping::PerKernel).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].launches, rows[0].id), (2, None));
        assert_eq!(rows[0].metrics, Metrics::from([("global_load_sectors".into(), 10.0)]));
        assert_eq!(facts.cc.as_deref(), Some("9.0"));
        let (rows, _) = rows_from_records(recs(), &names, Grouping::PerLaunch).unwrap();
        assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [Some(0), Some(1)]);
    }
}
