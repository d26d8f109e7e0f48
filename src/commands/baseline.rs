//! `coalprof baseline update`: record runs into the checked-in baseline.
//!
//! Each architecture present in the runs has its section rewritten whole (so removed rows leave
//! the file); other sections are kept byte for byte. The file stays sorted and rounded, so the
//! update is a small diff to review.

use std::path::Path;

use crate::error::Error;
use crate::gate::{Baseline, Rule};
use crate::results::Results;

/// Merge every metric of every row of `runs` into the baseline at `path` (created if absent;
/// an unreadable or malformed existing file is an error, exit 3, and is left untouched).
pub fn update(runs: &[Results], path: &Path) -> Result<(), Error> {
    write(runs, path, &|_, _| true)
}

/// As [`update`], keeping only the metrics some `regress` rule applies to: noisy metrics no rule
/// compares (durations, DRAM bytes) stay out of the file and out of its diffs.
pub fn update_for_rules(runs: &[Results], path: &Path, rules: &[Rule]) -> Result<(), Error> {
    write(runs, path, &|key, metric| {
        rules.iter().filter(|r| r.matches_row(key, key) && r.matches_metric(metric)).any(|r| r.regress.is_some())
    })
}

fn write(runs: &[Results], path: &Path, keep: &dyn Fn(&str, &str) -> bool) -> Result<(), Error> {
    if runs.iter().all(|r| r.rows.is_empty()) {
        return Err(Error::nothing_matched("the runs have no rows to record", None));
    }
    let mut baseline = if path.exists() { Baseline::load(path)? } else { Baseline::default() };
    baseline.merge_runs(runs, keep);
    baseline.save(path)?;
    tracing::info!(path = %path.display(), "baseline updated");
    Ok(())
}
