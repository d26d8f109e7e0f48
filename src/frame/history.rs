//! `history`: every saved run of a profiles folder as one long polars frame (a row per run, row
//! key and metric), filtered by metric, kernel and date, sorted into one series per row key and
//! metric over the runs in time order, with each value's change from the run before.

use std::collections::HashMap;

use polars_core::prelude::*;

use super::polars_error;
use crate::error::Result;
use crate::results::{Git, Results};

/// A run as it was saved, with the time it was made (UTC, `YYYY-MM-DD HH:MM:SS`).
#[derive(Debug, Clone)]
pub(crate) struct SavedRun {
    pub name: String,
    pub path: String,
    pub time: String,
    pub results: Results,
}

/// A run of the history: its name, folder, time and checkout.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct RunInfo {
    pub name: String,
    pub path: String,
    pub time: String,
    pub backend: String,
    pub gpu: Option<String>,
    pub git: Option<Git>,
}

impl RunInfo {
    /// `abc123def456 (main, dirty)`, or the run's name where no commit was recorded.
    pub(crate) fn commit_label(&self) -> String {
        match &self.git {
            Some(g) => {
                let mut tags: Vec<&str> = g.branch.iter().map(String::as_str).collect();
                if g.dirty {
                    tags.push("dirty");
                }
                let tags = if tags.is_empty() { String::new() } else { format!(" ({})", tags.join(", ")) };
                format!("{}{tags}", g.short())
            }
            None => "no commit".into(),
        }
    }
}

/// One value of a series: the run (index into [`History::runs`]), the value, the change from the
/// series' previous point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Point {
    pub run: usize,
    pub value: f64,
    pub change: Option<f64>,
}

/// One row key and metric over the runs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct Series {
    pub key: String,
    pub kernel: String,
    pub metric: String,
    pub points: Vec<Point>,
}

impl Series {
    /// The first point whose value differs from the one before it.
    pub(crate) fn first_change(&self) -> Option<&Point> {
        self.points.iter().find(|p| p.change.is_some_and(|c| c != 0.0))
    }
}

/// Every run in time order and every series.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct History {
    pub runs: Vec<RunInfo>,
    pub series: Vec<Series>,
}

/// What to keep.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    /// Metric keys (empty: every metric).
    pub metrics: Vec<String>,
    /// Rows whose key or kernel matches.
    pub kernel: Option<regex::Regex>,
    /// Runs made at or after this time (`YYYY-MM-DD`, or with the time of day).
    pub since: Option<String>,
}

const RUN: &str = "run";
const TIME: &str = "time";
const KEY: &str = "key";
const KERNEL: &str = "kernel";
const METRIC: &str = "metric";
const VALUE: &str = "value";
const ORDER: &str = "series_order";
const CHANGE: &str = "change";

/// The history of `runs` under `filter`.
pub(crate) fn history(mut runs: Vec<SavedRun>, filter: &Filter) -> Result<History> {
    // Time order; runs made in the same second by commit date, then name.
    runs.sort_by(|a, b| {
        let date = |r: &SavedRun| r.results.provenance.git.as_ref().and_then(|g| g.date.clone());
        (&a.time, date(a), &a.name).cmp(&(&b.time, date(b), &b.name))
    });
    let long = super::Frame(long_frame(&runs)?);
    let kernel_keys = filter.kernel.as_ref().map(|re| matching_keys(&runs, re));
    let (metric, key, time) = (long.strings(METRIC)?, long.strings(KEY)?, long.strings(TIME)?);
    let wanted = |i: usize| {
        let (Some(metric), Some(key), Some(time)) = (&metric[i], &key[i], &time[i]) else { return false };
        (filter.metrics.is_empty() || filter.metrics.contains(metric))
            && kernel_keys.as_ref().is_none_or(|keys| keys.binary_search(key).is_ok())
            && filter.since.as_ref().is_none_or(|since| time >= since)
    };
    let keep = BooleanChunked::from_iter_values(PlSmallStr::EMPTY, (0..long.height()).map(wanted));
    let sorted = (long.0.filter(&keep))
        .and_then(|df| df.sort([ORDER, RUN], SortMultipleOptions::default()))
        .map_err(polars_error)?;
    let mut f = super::Frame(sorted);
    // Each value's change from the value before it in its series (its `series_order`).
    let (order, value) = (f.floats(ORDER)?, f.floats(VALUE)?);
    let change: Float64Chunked = (0..order.len())
        .map(|i| if i > 0 && order[i] == order[i - 1] { Some(value[i]? - value[i - 1]?) } else { None })
        .collect();
    f.0.with_column(change.with_name(CHANGE.into())).map_err(polars_error)?;
    let (keys, kernels, metrics) = (f.strings(KEY)?, f.strings(KERNEL)?, f.strings(METRIC)?);
    let (run, values, changes) = (f.floats(RUN)?, f.floats(VALUE)?, f.floats(CHANGE)?);
    let mut series: Vec<Series> = Vec::new();
    let mut used = vec![false; runs.len()];
    for i in 0..keys.len() {
        let (Some(key), Some(metric), Some(r), Some(value)) = (&keys[i], &metrics[i], run[i], values[i]) else {
            continue;
        };
        let point = Point { run: r as usize, value, change: changes[i] };
        used[r as usize] = true;
        match series.last_mut() {
            Some(s) if s.key == *key && s.metric == *metric => s.points.push(point),
            _ => series.push(Series {
                key: key.clone(),
                kernel: kernels[i].clone().unwrap_or_default(),
                metric: metric.clone(),
                points: vec![point],
            }),
        }
    }
    // Only the runs some series has a point in (`--since` leaves the older ones out).
    let index: Vec<Option<usize>> = used
        .iter()
        .scan(0, |n, &u| {
            Some(u.then(|| {
                *n += 1;
                *n - 1
            }))
        })
        .collect();
    for s in &mut series {
        for p in &mut s.points {
            p.run = index[p.run].unwrap_or_default();
        }
    }
    let runs = (runs.iter().zip(&used))
        .filter(|(_, u)| **u)
        .map(|(r, _)| {
            let p = &r.results.provenance;
            RunInfo {
                name: r.name.clone(),
                path: r.path.clone(),
                time: r.time.clone(),
                backend: p.backend.to_string(),
                gpu: p.gpu.clone(),
                git: p.git.clone(),
            }
        })
        .collect();
    Ok(History { runs, series })
}

/// The keys of rows whose key or kernel matches `re`, sorted (for a binary search).
fn matching_keys(runs: &[SavedRun], re: &regex::Regex) -> Vec<String> {
    let mut keys: Vec<String> = (runs.iter().flat_map(|r| &r.results.rows))
        .filter(|row| re.is_match(&row.key()) || re.is_match(&row.kernel))
        .map(|row| row.key())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// One frame row per run, row and metric; `series_order` numbers (key, metric) pairs in the
/// order they first appear.
fn long_frame(runs: &[SavedRun]) -> Result<DataFrame> {
    let (mut run, mut time, mut key, mut kernel, mut metric, mut value, mut order) =
        (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
    let mut orders: HashMap<(String, String), u32> = HashMap::new();
    for (i, r) in runs.iter().enumerate() {
        for row in &r.results.rows {
            let k = row.key();
            for (m, v) in row.metrics.iter().filter(|(_, v)| v.is_finite()) {
                let next = orders.len() as u32;
                order.push(*orders.entry((k.clone(), m.clone())).or_insert(next));
                run.push(i as u32);
                time.push(r.time.clone());
                key.push(k.clone());
                kernel.push(row.kernel.clone());
                metric.push(m.clone());
                value.push(*v);
            }
        }
    }
    DataFrame::new(vec![
        Column::new(RUN.into(), run),
        Column::new(TIME.into(), time),
        Column::new(KEY.into(), key),
        Column::new(KERNEL.into(), kernel),
        Column::new(METRIC.into(), metric),
        Column::new(VALUE.into(), value),
        Column::new(ORDER.into(), order),
    ])
    .map_err(polars_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Provenance, Row, Source};

    fn run(name: &str, time: &str, commit: &str, spr: f64) -> SavedRun {
        let mut row = Row::new("stride_copy", Source::Predicted);
        (row.pattern, row.variant) = (Some("stride".into()), Some("stride_8".into()));
        row.metrics.insert("global_load_sectors_per_request".into(), spr);
        row.metrics.insert("duration".into(), 1e-3);
        let mut p = Provenance::new(crate::results::Backend::Model);
        p.git = Some(Git { commit: commit.into(), branch: Some("main".into()), dirty: false, date: None });
        SavedRun { name: name.into(), path: name.into(), time: time.into(), results: Results::new(p, vec![row]) }
    }

    #[test]
    fn series_over_runs_in_time_order_with_changes() {
        let runs = vec![
            run("c", "2026-03-01 00:00:00", "ccc", 32.0),
            run("a", "2026-01-01 00:00:00", "aaa", 8.0),
            run("b", "2026-02-01 00:00:00", "bbb", 8.0),
        ];
        let filter = Filter { metrics: vec!["global_load_sectors_per_request".into()], ..Filter::default() };
        let h = history(runs.clone(), &filter).unwrap();
        let names: Vec<&str> = h.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(h.series.len(), 1);
        let values: Vec<f64> = h.series[0].points.iter().map(|p| p.value).collect();
        assert_eq!(values, [8.0, 8.0, 32.0]);
        assert_eq!(h.series[0].points[0].change, None);
        let first = h.series[0].first_change().unwrap();
        assert_eq!((h.runs[first.run].name.as_str(), first.change), ("c", Some(24.0)));

        let since = Filter { since: Some("2026-02-01".into()), ..Filter::default() };
        let h = history(runs.clone(), &since).unwrap();
        assert_eq!(h.runs.len(), 2);
        assert_eq!(h.series.len(), 2, "every metric without --metric");
        assert!(h.series.iter().all(|s| s.points.iter().all(|p| p.run < 2)));

        let none = Filter { kernel: Some(regex::Regex::new("^gemm").unwrap()), ..Filter::default() };
        assert!(history(runs, &none).unwrap().series.is_empty());
    }
}
