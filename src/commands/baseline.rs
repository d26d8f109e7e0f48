//! `coalprof baseline update`: record runs into the checked-in baseline.
//!
//! Each architecture present in the runs has its section rewritten whole (so removed rows leave
//! the file); other sections are kept byte for byte. The file stays sorted and rounded, so the
//! update is a small diff to review.

use std::path::Path;

use crate::error::Error;
use crate::exit::Exit;
use crate::gate::{Baseline, Rule};
use crate::results::{Results, Row};
use crate::settings::{BaselineSettings, Common};

/// `coalprof baseline update RUN…`: load the runs, record them, say which file changed.
pub fn command(common: &Common, b: &BaselineSettings) -> Result<Exit, Error> {
    let mut runs = super::load(common, &b.runs)?;
    // Only `regress` rules read a baseline. Lines are recorded when such a rule gates them,
    // keyed by kernel and file:line; kernel metrics a report's per-line counters stand in for
    // are recorded as `check` computes them.
    let regress: Vec<Rule> =
        (b.only_gated.as_deref().unwrap_or(&common.rules).iter()).filter(|r| r.regress.is_some()).cloned().collect();
    let (lines, fills) = (super::check::wants_lines(&regress, &common.catalogue), super::check::wants_fill(&regress));
    if lines || fills {
        let reports =
            super::check::line_reports(&b.runs, &b.source_root, &common.catalogue, &common.tools, common.bounds)?;
        for (results, report) in runs.iter_mut().zip(&reports) {
            if let Some(r) = report {
                if fills {
                    crate::lines::gate_rows::fill_kernel_metrics(results, r, &common.catalogue, true)?;
                }
                if lines {
                    results.rows.extend(crate::lines::gate_rows::rows(r));
                }
            }
        }
    }
    match &b.only_gated {
        Some(rules) => update_for_rules(&runs, &b.path, rules)?,
        None => update(&runs, &b.path)?,
    }
    crate::messages::progress(format!("updated `{}`", b.path.display()));
    Ok(Exit::Ok)
}

/// Merge every metric of every row of `runs` into the baseline at `path` (created if absent;
/// an unreadable or malformed existing file is an error, exit 3, and is left untouched).
pub fn update(runs: &[Results], path: &Path) -> Result<(), Error> {
    write(runs, path, &|_, _, _| true)
}

/// As [`update`], keeping only the metrics some `regress` rule applies to: noisy metrics no rule
/// compares (durations, DRAM bytes) stay out of the file and out of its diffs.
pub fn update_for_rules(runs: &[Results], path: &Path, rules: &[Rule]) -> Result<(), Error> {
    write(runs, path, &|key, row, metric| {
        (rules.iter())
            .filter(|r| r.matches_row(key, &row.kernel) && r.matches_metric(metric))
            .any(|r| r.regress.is_some())
    })
}

fn write(runs: &[Results], path: &Path, keep: &dyn Fn(&str, &Row, &str) -> bool) -> Result<(), Error> {
    if runs.iter().all(|r| r.rows.is_empty()) {
        return Err(Error::nothing_matched("the runs have no rows to record", None));
    }
    let mut baseline = if path.exists() { Baseline::load(path)? } else { Baseline::default() };
    baseline.merge_runs(runs, keep);
    // Atomic, so an interrupted update never leaves half a baseline.
    crate::store::write_output(path, baseline.to_json().as_bytes())?;
    tracing::info!(path = %path.display(), "baseline updated");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Provenance, Source};

    #[test]
    fn only_gated_metrics_are_kept_by_rules_matching_the_kernel_name_too() {
        let rules = crate::gate::parse_rules(
            "[[gate]]\nmatch = \"stride_copy\"\nmetric = \"global_load_sectors_per_request\"\nregress = \"+5%\"\n",
            Path::new("rules.toml"),
            &crate::metrics::Catalogue::builtin().directions(),
        )
        .unwrap();
        let row = Row {
            pattern: Some("stride".into()),
            variant: Some("stride_1".into()),
            metrics: [("global_load_sectors_per_request".to_string(), 4.0), ("duration".to_string(), 1e-3)].into(),
            ..Row::new("stride_copy", Source::Measured)
        };
        let prov = Provenance { compute_capability: Some("9.0".into()), ..Provenance::default() };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("baseline.json");
        update_for_rules(&[Results::new(prov, vec![row])], &path, &rules).unwrap();
        let b = Baseline::load(&path).unwrap();
        assert_eq!(b.get("sm_90", "stride/stride_1", "global_load_sectors_per_request"), Some(4.0));
        assert_eq!(b.get("sm_90", "stride/stride_1", "duration"), None, "no rule compares durations");
    }
}
