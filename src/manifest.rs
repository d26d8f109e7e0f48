//! The launch manifest a pattern executable writes: one JSON object per variant, in launch
//! order. coalprof joins ncu's results to it and verifies the join (kernel, grid, block): a
//! mismatch is an error, never a silent shift.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::patterns::Variant;
use crate::report::LaunchRecord;

/// One launched variant, as the executable recorded it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Entry {
    pub pattern: String,
    pub variant: String,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub bytes_read: u64,
    pub bytes_written: u64,
    #[serde(default)]
    pub checksum: Option<f64>,
    /// Median of the timed repeats (`--time` runs only).
    #[serde(default)]
    pub time_ms: Option<f64>,
    #[serde(default)]
    pub times_ms: Vec<f64>,
}

/// Read a manifest; a bad line is an error naming the file and the line.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::input(path, format!("cannot read the manifest: {e}")))?;
    parse(&text).map_err(|(line, msg)| Error::input(path, format!("line {line}: {msg}")))
}

/// Parse manifest text: `Err((line, message))` on the first bad line.
pub fn parse(text: &str) -> std::result::Result<Vec<Entry>, (usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| (i + 1, format!("not a manifest entry: {e}"))))
        .collect()
}

/// Check that the executable launched what the catalogue asked for, in order.
pub fn check_against_plan(entries: &[Entry], plan: &[Variant]) -> std::result::Result<(), String> {
    if entries.len() != plan.len() {
        return Err(format!("the executable ran {} variants, coalprof asked for {}", entries.len(), plan.len()));
    }
    for (e, v) in entries.iter().zip(plan) {
        if e.variant != v.name || e.kernel != v.kernel || e.grid != v.launch.grid || e.block != v.launch.block {
            return Err(format!(
                "variant `{}` was launched as `{}` {:?}x{:?}, the catalogue says `{}` {:?}x{:?}",
                v.name, e.kernel, e.grid, e.block, v.kernel, v.launch.grid, v.launch.block
            ));
        }
    }
    Ok(())
}

/// Join ncu's records (in launch order) to the manifest, verifying kernel name, grid and block.
pub fn join<'a>(
    records: &'a [LaunchRecord],
    entries: &'a [Entry],
) -> std::result::Result<Vec<(&'a LaunchRecord, &'a Entry)>, String> {
    if records.len() != entries.len() {
        return Err(format!(
            "ncu profiled {} launches but the manifest lists {}: the join would shift results between variants",
            records.len(),
            entries.len()
        ));
    }
    for (i, (r, e)) in records.iter().zip(entries).enumerate() {
        let name_ok = r.kernel == e.kernel || r.kernel.starts_with(&format!("{}(", e.kernel));
        let grid_ok = r.grid.is_none_or(|g| g == e.grid);
        let block_ok = r.block.is_none_or(|b| b == e.block);
        if !(name_ok && grid_ok && block_ok) {
            return Err(format!(
                "launch {i}: ncu profiled `{}` {:?}x{:?} but the manifest says `{}` {:?}x{:?} (variant `{}`)",
                r.kernel, r.grid, r.block, e.kernel, e.grid, e.block, e.variant
            ));
        }
    }
    Ok(records.iter().zip(entries).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const LINE: &str = r#"{"pattern":"stride","variant":"stride_8","kernel":"stride_copy","grid":[4,1,1],"block":[256,1,1],"bytes_read":4096,"bytes_written":4096,"checksum":12.5,"time_ms":0.25,"times_ms":[0.25,0.26]}"#;

    fn record(kernel: &str, grid: [u32; 3]) -> LaunchRecord {
        LaunchRecord {
            id: Some(0),
            process: None,
            kernel: kernel.into(),
            grid: Some(grid),
            block: Some([256, 1, 1]),
            device: None,
            cc: None,
            nvtx: None,
            launches: 1,
            metrics: vec![],
        }
    }

    #[test]
    fn parses_lines_and_names_a_bad_one() {
        let e = parse(&format!("{LINE}\n")).unwrap();
        assert_eq!(e[0].variant, "stride_8");
        assert_eq!(e[0].time_ms, Some(0.25));
        assert_eq!(parse(&format!("{LINE}\n{{\"pattern\": 1}}\n")).unwrap_err().0, 2);
    }

    #[test]
    fn join_refuses_a_shift() {
        let e = parse(LINE).unwrap();
        assert!(join(&[record("stride_copy", [4, 1, 1])], &e).is_ok());
        let err = join(&[record("stride_copy", [8, 1, 1])], &e).unwrap_err();
        assert!(err.contains("launch 0") && err.contains("stride_8"), "{err}");
        assert!(join(&[], &e).unwrap_err().contains("shift"));
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// Any text, and any byte-level damage to a real line, gives entries or a line error.
        #[test]
        fn never_panics(text in ".{0,400}") {
            let _ = super::parse(&text);
        }

        #[test]
        fn damaged_lines_fail_with_their_line_number(cut in 0usize..200, junk in "[{}\\[\\],:\"a-z0-9]{0,8}") {
            let good = super::tests::LINE;
            let bad = format!("{}{junk}", &good[..cut.min(good.len())]);
            let text = format!("{good}\n{bad}\n");
            match super::parse(&text) {
                // A blank damaged line is skipped; any other that parses is a second entry.
                Ok(e) => prop_assert_eq!(e.len(), if bad.trim().is_empty() { 1 } else { 2 }),
                Err((line, _)) => prop_assert_eq!(line, 2),
            }
        }
    }
}
