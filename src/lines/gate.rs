//! Per-line rows for the gate: each source line and access kind of a [`LineReport`] as a result
//! [`Row`] keyed by kernel, `file:line` and op, with the `line_*` counters and metrics of
//! `metrics.toml`, so `[[gate]]` rules and baselines work on lines as they do on kernels.

use crate::results::{Row, Source, WorstLine};

use super::{LineReport, LineRow};

/// `kernels/gemm.cu:42` of a row: its repository-relative path where it resolves.
pub(crate) fn line_label(r: &LineRow) -> Option<String> {
    Some(format!("{}:{}", r.path.as_deref().or(r.file.as_deref())?, r.line?))
}

/// One result row per source line and access kind of the report (instruction rows without a
/// line are left out), with every per-line counter and metric the derivation gave it.
pub(crate) fn rows(report: &LineReport) -> Vec<Row> {
    report.rows.iter().filter_map(row).collect()
}

/// The result row of one line row, if it has a line.
fn row(r: &LineRow) -> Option<Row> {
    let mut row = Row::new(r.kernel.clone(), Source::Measured);
    row.line = Some(line_label(r)?);
    row.op = r.op.clone();
    row.id = r.launch;
    row.launches = r.launches;
    row.rank = r.rank;
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

/// The report's rows that have a line, as the run's worst lines (the report is already cut to
/// the top rows per launch). `label` names each row's pattern and variant, from its launch id.
pub(crate) fn worst_lines(
    report: &LineReport,
    label: &dyn Fn(Option<u64>) -> (Option<String>, Option<String>),
) -> Vec<WorstLine> {
    report
        .rows
        .iter()
        .filter(|r| {
            r.excess_sectors.is_some_and(|e| e > 0.0)
                || r.shared_excess_wavefronts.is_some_and(|e| e > 0.0)
                || r.diagnosis.is_some()
        })
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
