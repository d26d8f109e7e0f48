//! Per-line rows for the gate: each source line of a [`LineReport`] as a result [`Row`] keyed by
//! kernel and `file:line`, with the `line_*` metrics `metrics.toml` declares, so `[[gate]]`
//! rules and baselines work on lines as they do on kernels.

use crate::results::{Row, Source, WorstLine};

use super::diagnose::sectors_per_request;
use super::instructions::Counters;
use super::{LineReport, LineRow};

/// The per-line metric keys this module computes (each is declared under `[line.*]` in
/// `metrics.toml`; a test keeps the two in step).
pub(crate) const KEYS: &[&str] = &[
    "line_global_load_sectors_per_request",
    "line_global_load_ideal_sectors_per_request",
    "line_global_store_sectors_per_request",
    "line_global_store_ideal_sectors_per_request",
    "line_excess_sectors",
    "line_excess_share",
    "line_shared_wavefronts_per_ideal",
];

/// `kernels/gemm.cu:42` of a row: its repository-relative path where it resolves.
pub(crate) fn line_label(r: &LineRow) -> Option<String> {
    Some(format!("{}:{}", r.path.as_deref().or(r.file.as_deref())?, r.line?))
}

/// One result row per source line of the report (instruction rows without a line are left out).
pub(crate) fn rows(report: &LineReport) -> Vec<Row> {
    report
        .rows
        .iter()
        .filter_map(|r| {
            let mut row = Row::new(r.kernel.clone(), Source::Measured);
            row.line = Some(line_label(r)?);
            row.id = r.launch;
            row.launches = r.launches;
            row.rank = r.rank;
            let mut put = |k: &str, v: Option<f64>| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    row.metrics.insert(k.to_string(), v);
                }
            };
            let spr = |c: &Counters| sectors_per_request(c);
            put(KEYS[0], spr(&r.global_loads).map(|s| s.0));
            put(KEYS[1], spr(&r.global_loads).and_then(|s| s.1));
            put(KEYS[2], spr(&r.global_stores).map(|s| s.0));
            put(KEYS[3], spr(&r.global_stores).and_then(|s| s.1));
            put(KEYS[4], r.excess_sectors);
            put(KEYS[5], r.excess_share);
            let ways = match (r.shared_wavefronts, r.shared_ideal_wavefronts) {
                (Some(w), Some(i)) if i > 0.0 => Some(w / i),
                _ => None,
            };
            put(KEYS[6], ways);
            if let Some(d) = &r.diagnosis {
                row.notes.push(d.clone());
            }
            Some(row)
        })
        .collect()
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
                shared_ways: match (r.shared_wavefronts, r.shared_ideal_wavefronts) {
                    (Some(w), Some(i)) if i > 0.0 => Some(w / i),
                    _ => None,
                },
                code: r.source.clone(),
                diagnosis: r.diagnosis.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_declared_in_metrics_toml_and_every_declared_one_computed() {
        let c = crate::metrics::Catalogue::builtin();
        let declared: Vec<&str> = c.line.keys().map(String::as_str).collect();
        let mut computed = KEYS.to_vec();
        computed.sort();
        assert_eq!(declared, computed);
    }
}
