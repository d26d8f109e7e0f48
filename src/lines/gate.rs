//! Per-line rows for the gate: each source line and access kind of a [`LineReport`] as a result
//! [`Row`] keyed by kernel, `file:line` and op, with the `line_*` counters and metrics of
//! `metrics.toml`, so `[[gate]]` rules and baselines work on lines as they do on kernels; and
//! the kernel metrics a report's per-line counters give where its kernel counters do not.

use std::collections::BTreeMap;

use crate::error::Result;
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::results::{Metrics, Results, Row, Source, WorstLine};

use super::{LineReport, LineRow, Op};

/// `kernels/gemm.cu:42` of a row: its repository-relative path where it resolves.
pub(crate) fn line_label(r: &LineRow) -> Option<String> {
    Some(format!("{}:{}", r.path.as_deref().or(r.file.as_deref())?, r.line?))
}

/// Where a gate row of `r` is: its line, else its SASS offset as `lines` shows it (`+0x1a0`),
/// so a kernel built without `-lineinfo` is gated instruction by instruction, not left out.
fn place_label(r: &LineRow) -> Option<String> {
    line_label(r).or_else(|| Some(format!("+{:#x}", r.pc_offset?)))
}

/// One result row per source line (or, without line info, SASS instruction) and access kind of
/// the report, with every per-line counter and metric the derivation gave it.
pub(crate) fn rows(report: &LineReport) -> Vec<Row> {
    report.rows.iter().filter_map(row).collect()
}

/// The result row of one line row, if it has a line or an offset.
fn row(r: &LineRow) -> Option<Row> {
    let mut row = Row::new(r.kernel.clone(), Source::Measured);
    row.line = Some(place_label(r)?);
    row.op = r.op.clone();
    row.id = r.launch;
    row.launches = r.launches;
    row.rank = r.rank;
    (row.grid, row.block) = (r.grid, r.block);
    row.metrics = r.metrics.clone();
    if let Some(d) = &r.diagnosis {
        row.notes.push(d.clone());
    }
    Some(row)
}

/// The gate's key of a line row (`kernel @ file:line (op)`): the one [`Row::key`] gives its row.
pub(crate) fn row_key(r: &LineRow) -> Option<String> {
    Some(row(r)?.key())
}

/// Whether a row is one of the worst lines: it wastes (sectors or wavefronts beyond the ideal)
/// or has advice. The run's worst lines and the summary's (`render/summary.rs`) keep these.
pub(crate) fn worth_naming(r: &LineRow) -> bool {
    r.excess_sectors.is_some_and(|e| e > 0.0)
        || r.shared_excess_wavefronts.is_some_and(|e| e > 0.0)
        || r.diagnosis.is_some()
}

/// The report's rows that have a line, as the run's worst lines (the report is already cut to
/// the top rows per launch). `label` names each row's pattern and variant, from its launch id.
pub(crate) fn worst_lines(
    report: &LineReport,
    label: &dyn Fn(Option<u64>) -> (Option<String>, Option<String>),
) -> Vec<WorstLine> {
    report
        .rows
        .iter()
        .filter(|r| worth_naming(r))
        .filter_map(|r| {
            let (pattern, variant) = label(r.launch);
            Some(WorstLine {
                pattern,
                variant,
                kernel: r.kernel.clone(),
                rank: r.rank,
                location: line_label(r)?,
                op: r.op.clone(),
                sectors_per_request: r.sectors_per_request,
                ideal_sectors_per_request: r.ideal_sectors_per_request,
                excess_sectors: r.excess_sectors,
                excess_share: r.excess_share,
                shared_ways: r.shared_wavefronts_per_ideal,
                code: r.source.clone(),
                diagnosis: r.diagnosis.clone(),
            })
        })
        .collect()
}

/// One kernel metric a report's per-line counters can give: taken from the per-line metric
/// `line_key` of the kernel's rows of access kind `op` summed as one row. A `pair` is taken
/// together with its partner (sectors per request and its ideal) or where the kernel's own
/// value equals its lines' (the same count: a simulated run's lines are its kernel's counters
/// split), never half from the kernel's counters and half from the per-line ones.
struct FromLines {
    key: &'static str,
    line_key: &'static str,
    op: Op,
    pair: Option<&'static str>,
}

/// Kernel metrics and the per-line metrics they are taken from where a kernel row lacks them.
const FROM_LINES: [FromLines; 8] = [
    FromLines {
        key: "global_load_sectors_over_ideal",
        line_key: "line_sectors_over_ideal",
        op: Op::GlobalLoad,
        pair: None,
    },
    FromLines {
        key: "global_load_sectors_per_request",
        line_key: "line_sectors_per_request",
        op: Op::GlobalLoad,
        pair: Some("global_load_ideal_sectors_per_request"),
    },
    FromLines {
        key: "global_load_ideal_sectors_per_request",
        line_key: "line_ideal_sectors_per_request",
        op: Op::GlobalLoad,
        pair: Some("global_load_sectors_per_request"),
    },
    FromLines {
        key: "global_store_sectors_over_ideal",
        line_key: "line_sectors_over_ideal",
        op: Op::GlobalStore,
        pair: None,
    },
    FromLines {
        key: "global_store_sectors_per_request",
        line_key: "line_sectors_per_request",
        op: Op::GlobalStore,
        pair: Some("global_store_ideal_sectors_per_request"),
    },
    FromLines {
        key: "global_store_ideal_sectors_per_request",
        line_key: "line_ideal_sectors_per_request",
        op: Op::GlobalStore,
        pair: Some("global_store_sectors_per_request"),
    },
    FromLines {
        key: "shared_load_wavefronts_over_ideal",
        line_key: "line_shared_wavefronts_per_ideal",
        op: Op::SharedLoad,
        pair: None,
    },
    FromLines {
        key: "shared_store_wavefronts_over_ideal",
        line_key: "line_shared_wavefronts_per_ideal",
        op: Op::SharedStore,
        pair: None,
    },
];

/// The kernel metrics [`fill_kernel_metrics`] can give a row, for commands that decide whether
/// to read a report per line.
pub(crate) fn fillable() -> impl Iterator<Item = &'static str> {
    FROM_LINES.iter().map(|f| f.key)
}

/// Give each kernel row of `results` the waste metrics its kernel counters could not (a report
/// without `global_load_bytes_requested` and friends has no load ideal; no kernel counter says a
/// store's or a shared access's width), from the per-line counters: the `[line_counter.*]`
/// values of the kernel's rows of one access kind summed into one row and derived by the same
/// `[line.*]` formulas `lines` uses, so the kernel's value is its lines' taken together. A row
/// says so in a note where `say` (a report's kernel counters and its per-line ones are counted
/// apart; a simulated run's lines are its kernel's counters split, nothing to say). Metrics a
/// row has (or has broken) are left as they are.
pub(crate) fn fill_kernel_metrics(
    results: &mut Results,
    report: &LineReport,
    catalogue: &Catalogue,
    say: bool,
) -> Result<()> {
    let derivation = Derivation::lines(catalogue)?;
    let kernel_rows: Vec<usize> = (results.rows.iter().enumerate())
        .filter(|(_, row)| row.line.is_none() && FROM_LINES.iter().any(|f| wants(row, f.key)))
        .map(|(i, _)| i)
        .collect();
    let ops = [Op::GlobalLoad, Op::GlobalStore, Op::SharedLoad, Op::SharedStore];
    // (kernel row, access kind) → its lines summed as one row.
    let mut summed: Vec<(usize, Op, Row)> = Vec::new();
    for i in kernel_rows {
        let row = &results.rows[i];
        for op in ops {
            let mine: Vec<&LineRow> =
                report.rows.iter().filter(|l| l.kind == Some(op) && same_kernel(row, l)).collect();
            if mine.is_empty() {
                continue;
            }
            let mut metrics = Metrics::new();
            // Only counters every row has: a sum over some of the lines is no kernel's count.
            for key in catalogue.line_counters.keys() {
                let values: Option<Vec<f64>> = mine.iter().map(|l| l.metrics.get(key).copied()).collect();
                if let Some(v) = values {
                    metrics.insert(key.clone(), v.iter().sum());
                }
            }
            summed.push((i, op, Row { metrics, ..Row::new(row.kernel.clone(), Source::Measured) }));
        }
    }
    let mut sums: Vec<Row> = summed.iter().map(|(_, _, r)| r.clone()).collect();
    derivation.fill(&mut sums)?;
    let mut taken: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for ((i, op, _), sum) in summed.iter().zip(&sums) {
        let row = &mut results.rows[*i];
        let line = |k: &str| sum.metrics.get(k).copied();
        let mut fills = Vec::new();
        for f in FROM_LINES.iter().filter(|f| f.op == *op) {
            let Some(v) = line(f.line_key) else { continue };
            if !wants(row, f.key) {
                continue;
            }
            let ok = match f.pair.and_then(|p| FROM_LINES.iter().find(|g| g.key == p)) {
                None => true,
                Some(partner) => match row.metrics.get(partner.key) {
                    None => wants(row, partner.key),
                    Some(own) => line(partner.line_key).is_some_and(|l| (l - own).abs() <= 1e-9 * own.abs().max(1.0)),
                },
            };
            if ok {
                fills.push((f.key, v));
            }
        }
        for (k, v) in fills {
            row.metrics.insert(k.to_string(), v);
            taken.entry(*i).or_default().push(format!("`{k}`"));
        }
    }
    for (i, keys) in taken.into_iter().filter(|_| say) {
        results.rows[i].notes.push(format!(
            "{} from the per-line counters (the kernel's accesses of that kind summed over its lines): the kernel's \
             own counters do not give them",
            keys.join(", ")
        ));
    }
    Ok(())
}

/// Whether `row` lacks `key` (and it is not broken: a broken counter is never papered over).
fn wants(row: &Row, key: &str) -> bool {
    !row.metrics.contains_key(key) && !row.broken.contains_key(key)
}

/// Whether line row `l` is of the kernel row `row`: the kernel, its rank and, where both say,
/// its launch and shape.
fn same_kernel(row: &Row, l: &LineRow) -> bool {
    let agree = |a: Option<[u32; 3]>, b: Option<[u32; 3]>| a.is_none() || b.is_none() || a == b;
    l.kernel == row.kernel
        && l.rank == row.rank
        && (l.launch.is_none() || row.id.is_none() || l.launch == row.id)
        && agree(l.grid, row.grid)
        && agree(l.block, row.block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Provenance;

    /// A line row of kernel `k` and `op` with these counters.
    fn line(op: Op, sectors: f64, ideal: f64, requests: f64) -> LineRow {
        let metrics = [("line_sectors", sectors), ("line_ideal_sectors", ideal), ("line_requests", requests)];
        LineRow {
            kernel: "k".into(),
            kind: Some(op),
            grid: Some([4, 1, 1]),
            metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            ..LineRow::default()
        }
    }

    fn kernel(name: &str, metrics: &[(&str, f64)]) -> Row {
        Row { metrics: metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect(), ..Row::new(name, Source::Measured) }
    }

    #[test]
    fn a_kernel_without_an_ideal_gets_its_global_loads_taken_together() {
        let report = LineReport {
            rows: vec![
                line(Op::GlobalLoad, 320.0, 40.0, 10.0),
                line(Op::GlobalLoad, 40.0, 40.0, 10.0),
                line(Op::GlobalStore, 3200.0, 40.0, 10.0),
            ],
            ..LineReport::empty()
        };
        let mut broken = kernel("k", &[]);
        broken.broken.insert("global_load_sectors_over_ideal".into(), "nan".into());
        let mut other_shape = kernel("k", &[]);
        other_shape.grid = Some([8, 1, 1]);
        let mut results = Results::new(
            Provenance::new(crate::results::Backend::Ncu),
            vec![
                kernel("k", &[]),
                kernel("k", &[("global_load_sectors_per_request", 1.5)]),
                broken,
                kernel("other", &[]),
                other_shape,
            ],
        );
        fill_kernel_metrics(&mut results, &report, &Catalogue::builtin(), true).unwrap();
        let m = |i: usize, k: &str| results.rows[i].metric(k);
        // The loads' sums: 360 sectors, 80 ideal, 20 requests; the store is no load.
        assert_eq!(m(0, "global_load_sectors_over_ideal"), Some(360.0 / 80.0));
        assert_eq!(m(0, "global_load_sectors_per_request"), Some(360.0 / 20.0));
        assert_eq!(m(0, "global_load_ideal_sectors_per_request"), Some(80.0 / 20.0));
        assert!(results.rows[0].notes.iter().any(|n| n.contains("per-line counters")), "{:?}", results.rows[0]);
        // A kernel's own sectors/request is kept, and no ideal of another count is set beside it.
        assert_eq!(m(1, "global_load_sectors_per_request"), Some(1.5));
        assert_eq!(m(1, "global_load_ideal_sectors_per_request"), None);
        assert_eq!(m(1, "global_load_sectors_over_ideal"), Some(360.0 / 80.0));
        assert_eq!(m(2, "global_load_sectors_over_ideal"), None, "a broken value stays out");
        assert_eq!(m(3, "global_load_sectors_over_ideal"), None, "another kernel's lines are not its");
        assert_eq!(m(4, "global_load_sectors_over_ideal"), None, "nor another launch shape's");
    }

    #[test]
    fn the_metrics_filled_are_the_catalogues() {
        let c = Catalogue::builtin();
        for f in FROM_LINES {
            assert!(c.derived(f.key).is_some() && c.line_metric(f.line_key).is_some(), "{} ← {}", f.key, f.line_key);
        }
    }

    #[test]
    fn instruction_rows_without_a_line_are_gate_rows_at_their_offset() {
        let mut r = line(Op::GlobalLoad, 320.0, 40.0, 10.0);
        r.pc_offset = Some(0x1a0);
        let report = LineReport { rows: vec![r], ..LineReport::empty() };
        let rows = rows(&report);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].key(), "k @ +0x1a0");
    }
}
