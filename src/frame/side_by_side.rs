//! `compare`'s table: the rows of several inputs side by side, matched by key (pattern/variant,
//! or the kernel's function name — preferring the same launch shape — or, asked, name and exact
//! shape), with each later input's deltas and ratios against the first. Kernels left unmatched
//! by name pair up by their base name (no template arguments) where it is unique on each side:
//! one program's CUB kernel built against another CUB release.
//!
//! Each input becomes a frame of `key` and its metric columns suffixed `::<input>`; the frames
//! are full-joined on `key`, so a row present in one input only keeps its place with nulls in
//! the others (never dropped), and the deltas and ratios are columns computed over the joined
//! ones (null where either side is).

use std::collections::{BTreeSet, HashMap};

use polars_core::prelude::*;
use polars_ops::prelude::{DataFrameJoinOps, JoinArgs, JoinCoalesce, JoinType};

use super::{polars_error, series};
use crate::error::Result;
use crate::names::{function_name, match_name};
use crate::results::{Metrics, Row};

const KEY: &str = "key";

/// How rows of user kernels are matched across inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum MatchBy {
    /// By function name (inline namespaces such as `THRUST_…_NS` normalised), preferring the
    /// same launch shape: one program on two GPUs or at two sizes, kernel by kernel.
    #[default]
    Name,
    /// By function name and exact launch shape (grid and block).
    Shape,
}

/// One matched row: its identity and, per input, its metrics (`None` where the input lacks it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Matched {
    pub key: String,
    pub pattern: Option<String>,
    pub variant: Option<String>,
    /// The full signature, as the first input that has the row names it.
    pub kernel: String,
    /// The bare function name, for tables.
    pub name: String,
    /// Per input, the full signature of its row (`None` where it lacks the row).
    pub kernels: Vec<Option<String>>,
    /// Per input, whether its row was paired with the reference's by base name only: the same
    /// function, unique among the unmatched kernels on each side, with other template arguments.
    pub by_base_name: Vec<bool>,
    /// Per input, its launch shape (`grid 256x1x1, block 128x1x1`) where known.
    pub shapes: Vec<Option<String>>,
    /// One entry per input, in input order.
    pub values: Vec<Option<Metrics>>,
    /// Per input, `value − reference` for each metric both have (empty for the reference).
    pub deltas: Vec<Metrics>,
    /// Per input, `value / reference` (1 when both are 0; absent when only the reference is 0).
    pub ratios: Vec<Metrics>,
}

/// `grid 256x1x1, block 128x1x1`, where the row knows both ([`crate::results::RowKey::shape`]).
pub(crate) fn shape(r: &Row) -> Option<String> {
    r.row_key().shape()
}

/// The key rows are matched by: `pattern/variant` for built-in patterns; else the kernel's
/// [`match_name`], and with [`MatchBy::Shape`] its launch
/// shape too (`kernel [grid 256x1x1, block 128x1x1]`).
pub(crate) fn match_key(r: &Row, by: MatchBy) -> String {
    // Not the rank: the ranks of one run are column groups, matched kernel by kernel.
    let name = match_name(&r.kernel);
    match (&r.pattern, &r.variant, by, shape(r)) {
        (Some(p), Some(v), ..) => format!("{p}/{v}"),
        (_, _, MatchBy::Shape, Some(s)) => format!("{name} [{s}]"),
        _ => name,
    }
}

/// Match the rows of `inputs` (the first is the reference) and compute deltas and ratios.
/// Rows come out in the reference's order, then rows new in later inputs in their order.
pub(crate) fn side_by_side(inputs: &[&[Row]], by: MatchBy) -> Result<Vec<Matched>> {
    let keyed = keys(inputs, by);
    let metrics: BTreeSet<&str> =
        inputs.iter().flat_map(|rows| rows.iter()).flat_map(|r| r.metrics.keys().map(String::as_str)).collect();
    let mut joined: Option<DataFrame> = None;
    for (i, rows) in keyed.iter().enumerate() {
        let frame = input_frame(i, rows, &metrics)?;
        joined = Some(match joined {
            None => frame,
            Some(acc) => {
                let args = JoinArgs::new(JoinType::Full).with_coalesce(JoinCoalesce::CoalesceColumns);
                acc.join(&frame, [KEY], [KEY], args, None).map_err(polars_error)?
            }
        });
    }
    let Some(mut df) = joined else { return Ok(Vec::new()) };
    for m in &metrics {
        let base = series(&df, &named(m, 0))?;
        for i in 1..inputs.len() {
            let other = series(&df, &named(m, i))?;
            let delta = (&other - &base).map_err(polars_error)?;
            let ratio: Float64Chunked = (base.f64().map_err(polars_error)?.into_iter())
                .zip(other.f64().map_err(polars_error)?)
                .map(|(b, o)| ratio(b?, o?))
                .collect();
            let columns = [
                delta.with_name(format!("{m}::delta::{i}").into()).into_column(),
                ratio.with_name(format!("{m}::ratio::{i}").into()).into_column(),
            ];
            df.hstack_mut(&columns).map_err(polars_error)?;
        }
    }
    extract(&df, inputs.len(), &metrics, &keyed)
}

/// One input's row and the key it joins on.
struct Keyed<'a> {
    key: String,
    row: &'a Row,
    /// Paired with the reference's row by base name ([`pair_by_base_name`]).
    by_base_name: bool,
}

/// Each input's rows with the key they join on, one-to-one: a key that repeats in one input
/// is numbered `#2`, `#3` …. Matching by name, a later input's row takes the key of the
/// reference row with its name and its shape where there is one, else the next of its name
/// in order, so one kernel launched at two sizes pairs up whatever the sizes; the kernels
/// still unmatched then pair by base name.
fn keys<'a>(inputs: &[&'a [Row]], by: MatchBy) -> Vec<Vec<Keyed<'a>>> {
    let numbered = |key: String, n: usize| if n == 1 { key } else { format!("{key}#{n}") };
    let mut reference: Vec<(String, String, Option<String>)> = Vec::new(); // (base, key, shape)
    let mut reference_rows: Vec<&Row> = Vec::new();
    let mut out = Vec::new();
    for (i, rows) in inputs.iter().enumerate() {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut taken: BTreeSet<String> = BTreeSet::new();
        let mut keyed = Vec::new();
        for r in rows.iter() {
            let base = match_key(r, by);
            let same =
                |(b, k, s): &&(String, String, Option<String>)| *b == base && !taken.contains(k) && *s == shape(r);
            let any = |(b, k, _): &&(String, String, Option<String>)| *b == base && !taken.contains(k);
            let key = match (i, by) {
                (0, _) | (_, MatchBy::Shape) => None,
                (_, MatchBy::Name) => {
                    reference.iter().find(same).or_else(|| reference.iter().find(any)).map(|(_, k, _)| k.clone())
                }
            };
            let key = key.unwrap_or_else(|| loop {
                let n = seen.entry(base.clone()).or_default();
                *n += 1;
                let k = numbered(base.clone(), *n);
                // By name, a row the reference lacks must not take a reference row's key.
                let clash = by == MatchBy::Name && i > 0 && reference.iter().any(|(_, rk, _)| *rk == k);
                if !taken.contains(&k) && !clash {
                    break k;
                }
            });
            taken.insert(key.clone());
            if i == 0 {
                reference.push((base, key.clone(), shape(r)));
                reference_rows.push(r);
            }
            keyed.push(Keyed { key, row: r, by_base_name: false });
        }
        if i > 0 && by == MatchBy::Name {
            let reference: Vec<(&str, &Row)> =
                reference.iter().zip(&reference_rows).map(|((_, k, _), r)| (k.as_str(), *r)).collect();
            pair_by_base_name(&reference, &mut keyed);
        }
        out.push(keyed);
    }
    out
}

/// Pair the user kernels of a later input that no reference row matched with the reference's
/// unmatched ones, where their base name (the function without template arguments or inline
/// namespaces, `names::function_name`) is unique among the unmatched on each side.
fn pair_by_base_name(reference: &[(&str, &Row)], keyed: &mut [Keyed<'_>]) {
    let user = |r: &Row| r.pattern.is_none() && r.variant.is_none();
    let taken: BTreeSet<&str> = keyed.iter().map(|k| k.key.as_str()).collect();
    let known: BTreeSet<&str> = reference.iter().map(|(k, _)| *k).collect();
    let mut left: HashMap<String, Vec<&str>> = HashMap::new();
    for (key, r) in reference.iter().filter(|(k, r)| user(r) && !taken.contains(k)) {
        left.entry(function_name(&r.kernel)).or_default().push(key);
    }
    let mut right: HashMap<String, Vec<usize>> = HashMap::new();
    for (j, k) in keyed.iter().enumerate().filter(|(_, k)| user(k.row) && !known.contains(k.key.as_str())) {
        right.entry(function_name(&k.row.kernel)).or_default().push(j);
    }
    for (base, js) in right {
        if let (Some([key]), [j]) = (left.get(&base).map(Vec::as_slice), js.as_slice()) {
            keyed[*j].key = key.to_string();
            keyed[*j].by_base_name = true;
        }
    }
}

/// `other / base`: 1 where both are 0 (nothing changed), none where only the base is.
fn ratio(base: f64, other: f64) -> Option<f64> {
    match (base == 0.0, other == 0.0) {
        (true, true) => Some(1.0),
        (true, false) => None,
        _ => Some(other / base),
    }
}

fn named(metric: &str, input: usize) -> String {
    format!("{metric}::{input}")
}

/// `key`, the input's row order (`::order::i`, null after the join where the input lacks the
/// row), and every metric as `metric::i`.
fn input_frame(i: usize, rows: &[Keyed<'_>], metrics: &BTreeSet<&str>) -> Result<DataFrame> {
    let mut columns = vec![
        Column::new(KEY.into(), rows.iter().map(|k| k.key.as_str()).collect::<Vec<_>>()),
        Column::new(format!("::order::{i}").into(), (0..rows.len() as u64).collect::<Vec<_>>()),
    ];
    for m in metrics {
        let values: Vec<Option<f64>> = rows.iter().map(|k| k.row.metric(m)).collect();
        columns.push(Column::new(named(m, i).into(), values));
    }
    DataFrame::new(columns).map_err(polars_error)
}

fn extract(df: &DataFrame, n: usize, metrics: &BTreeSet<&str>, keyed: &[Vec<Keyed<'_>>]) -> Result<Vec<Matched>> {
    let frame = super::Frame(df.clone());
    let keys = frame.strings(KEY)?;
    let orders: Vec<Vec<Option<f64>>> =
        (0..n).map(|i| frame.floats(&format!("::order::{i}"))).collect::<Result<_>>()?;
    let column = |name: String| frame.floats(&name);
    let mut values: Vec<Vec<Option<Metrics>>> =
        orders.iter().map(|o| o.iter().map(|x| x.map(|_| Metrics::new())).collect()).collect();
    let mut deltas = vec![vec![Metrics::new(); keys.len()]; n];
    let mut ratios = vec![vec![Metrics::new(); keys.len()]; n];
    for m in metrics {
        for i in 0..n {
            for (j, v) in column(named(m, i))?.into_iter().enumerate() {
                if let (Some(v), Some(slot)) = (v, values[i][j].as_mut()) {
                    slot.insert(m.to_string(), v);
                }
            }
            if i == 0 {
                continue;
            }
            for (j, v) in column(format!("{m}::delta::{i}"))?.into_iter().enumerate() {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    deltas[i][j].insert(m.to_string(), v);
                }
            }
            for (j, v) in column(format!("{m}::ratio::{i}"))?.into_iter().enumerate() {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    ratios[i][j].insert(m.to_string(), v);
                }
            }
        }
    }
    let mut out: Vec<((usize, u64), Matched)> = Vec::new();
    for (j, key) in keys.into_iter().enumerate() {
        let key = key.unwrap_or_default();
        let first = (0..n).find_map(|i| orders[i][j].map(|o| (i, o as u64))).unwrap_or((n, 0));
        let keyed_of = |i: usize| keyed[i].iter().find(|k| k.key == key);
        let row_of = |i: usize| keyed_of(i).map(|k| k.row);
        let row = row_of(first.0.min(n - 1));
        out.push((
            first,
            Matched {
                pattern: row.and_then(|r| r.pattern.clone()),
                variant: row.and_then(|r| r.variant.clone()),
                kernel: row.map(|r| r.kernel.clone()).unwrap_or_default(),
                name: row.map(|r| function_name(&r.kernel)).unwrap_or_default(),
                shapes: (0..n).map(|i| row_of(i).and_then(shape)).collect(),
                kernels: (0..n).map(|i| row_of(i).map(|r| r.kernel.clone())).collect(),
                by_base_name: (0..n).map(|i| keyed_of(i).is_some_and(|k| k.by_base_name)).collect(),
                key,
                values: (0..n).map(|i| values[i][j].take()).collect(),
                deltas: (0..n).map(|i| std::mem::take(&mut deltas[i][j])).collect(),
                ratios: (0..n).map(|i| std::mem::take(&mut ratios[i][j])).collect(),
            },
        ));
    }
    out.sort_by_key(|(order, _)| *order);
    Ok(out.into_iter().map(|(_, m)| m).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Source;

    fn row(variant: &str, spr: f64) -> Row {
        let mut r = Row::new("k", Source::Predicted);
        r.pattern = Some("stride".into());
        r.variant = Some(variant.into());
        r.metrics.insert("global_load_sectors_per_request".into(), spr);
        r
    }

    #[test]
    fn matches_by_key_keeps_rows_of_one_input_and_computes_deltas_and_ratios() {
        let a = vec![row("s1", 4.0), row("s2", 8.0), row("only_a", 1.0)];
        let b = vec![row("only_b", 2.0), row("s2", 16.0), row("s1", 4.0)];
        let m = side_by_side(&[&a, &b], MatchBy::Name).unwrap();
        let keys: Vec<&str> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["stride/s1", "stride/s2", "stride/only_a", "stride/only_b"]);
        let spr = "global_load_sectors_per_request";
        assert_eq!(m[1].values[1].as_ref().unwrap()[spr], 16.0);
        assert_eq!(m[1].deltas[1][spr], 8.0);
        assert_eq!(m[1].ratios[1][spr], 2.0);
        assert_eq!(m[0].ratios[1][spr], 1.0);
        assert!(m[2].values[1].is_none(), "only in the first input");
        assert!(m[3].values[0].is_none() && m[3].values[1].is_some(), "only in the second");
        assert!(m[3].deltas[1].is_empty());
    }

    #[test]
    fn zero_reference_ratio_is_absent_unless_both_are_zero() {
        let (a, b) = (vec![row("a", 0.0), row("b", 0.0)], vec![row("a", 0.0), row("b", 3.0)]);
        let m = side_by_side(&[&a, &b], MatchBy::Name).unwrap();
        let spr = "global_load_sectors_per_request";
        assert_eq!(m[0].ratios[1].get(spr), Some(&1.0));
        assert_eq!(m[1].ratios[1].get(spr), None);
        assert_eq!(m[1].deltas[1].get(spr), Some(&3.0));
    }

    #[test]
    fn user_kernels_match_by_name_preferring_the_shape_and_repeats_are_numbered() {
        let k = |name: &str, grid: u32| Row {
            grid: Some([grid, 1, 1]),
            block: Some([128, 1, 1]),
            ..Row::new(name, Source::Measured)
        };
        assert_eq!(match_key(&k("gemm", 256), MatchBy::Shape), "gemm [grid 256x1x1, block 128x1x1]");
        assert_eq!(match_key(&k("void gemm(float *)", 256), MatchBy::Name), "gemm");
        // Exact shapes: the second input's grid-2 row pairs with the reference's grid-2 row.
        let (a, b) = (vec![k("gemm", 1), k("gemm", 1), k("gemm", 2)], vec![k("gemm", 2)]);
        let m = side_by_side(&[&a, &b], MatchBy::Shape).unwrap();
        let keys: Vec<&str> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys[1], "gemm [grid 1x1x1, block 128x1x1]#2");
        assert!(m[2].values[1].is_some());
        let m = side_by_side(&[&a, &b], MatchBy::Name).unwrap();
        assert_eq!(m.len(), 3, "by name, the grid-2 row still finds its own shape: {m:?}");
        assert!(m[2].values[1].is_some() && m[0].values[1].is_none());
        // Two sizes of one program on two GPUs: every kernel matched, each side's shape kept.
        let small = vec![k("void thrust::THRUST_200301_890_NS::fill<int>(int *)", 64), k("scan", 64)];
        let large = vec![k("scan", 1024), k("void thrust::THRUST_200301_900_NS::fill<int>(int *)", 1024)];
        let m = side_by_side(&[&small, &large], MatchBy::Name).unwrap();
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m.iter().all(|r| r.values.iter().all(Option::is_some)), "{m:?}");
        assert_eq!(m[0].name, "thrust::fill");
        assert_eq!(m[0].shapes[1].as_deref(), Some("grid 1024x1x1, block 128x1x1"));
        assert_eq!(side_by_side(&[&small, &large], MatchBy::Shape).unwrap().len(), 4);
    }

    #[test]
    fn kernels_left_unmatched_pair_by_a_base_name_unique_on_each_side() {
        let k = |name: &str| Row::new(name, Source::Measured);
        let h100 = vec![
            k("void cub::CUB_200100_900_NS::DeviceScanKernel<Policy600, int *, int *>(int *)"),
            k("void cub::CUB_200100_900_NS::DeviceScanInitKernel<cub::ScanTileState<int, true>>(int)"),
            k("void fill<int>(int *)"),
            k("void fill<float>(float *)"),
            k("vecAdd"),
        ];
        let ada = vec![
            k("vecAdd"),
            k("void cub::CUB_200300_890_NS::DeviceScanKernel<Policy900, int *, int *, float>(int *)"),
            k("void cub::CUB_200300_890_NS::DeviceScanInitKernel<cub::ScanTileState<int, true>>(int)"),
            k("void fill<double>(double *)"),
            k("void fill<short>(short *)"),
        ];
        let m = side_by_side(&[&h100, &ada], MatchBy::Name).unwrap();
        let scan = m.iter().find(|r| r.name == "cub::DeviceScanKernel").unwrap();
        assert!(scan.values.iter().all(Option::is_some), "{m:#?}");
        assert_eq!(scan.by_base_name, [false, true]);
        assert!(scan.kernels[1].as_deref().unwrap().contains("Policy900"));
        let init = m.iter().find(|r| r.name == "cub::DeviceScanInitKernel").unwrap();
        assert!(init.values.iter().all(Option::is_some) && init.by_base_name == [false, false]);
        // Two `fill`s unmatched on each side: no base name is unique, so none pairs.
        let fills: Vec<&Matched> = m.iter().filter(|r| r.name == "fill").collect();
        assert_eq!(fills.len(), 4, "{m:#?}");
        assert!(fills.iter().all(|r| r.values.iter().filter(|v| v.is_some()).count() == 1));
        assert_eq!(m.len(), 7);
    }
}
