//! The launch manifest a pattern executable writes: one JSON object per variant, in launch
//! order: what each launch was. The join (`join.rs`) puts ncu's results beside it and verifies
//! kernel, grid and block: a mismatch is an error, never a silent shift.

use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::patterns::Variant;

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
    // The executable also writes a "checksum" of the output, computed so the loads cannot be
    // optimised away; coalprof does not read it (its value depends on the data, not the
    // addresses, so there is nothing to check it against).
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const LINE: &str = r#"{"pattern":"stride","variant":"stride_8","kernel":"stride_copy","grid":[4,1,1],"block":[256,1,1],"bytes_read":4096,"bytes_written":4096,"checksum":12.5,"time_ms":0.25,"times_ms":[0.25,0.26]}"#;

    #[test]
    fn parses_lines_and_names_a_bad_one() {
        let e = parse(&format!("{LINE}\n")).unwrap();
        assert_eq!(e[0].variant, "stride_8");
        assert_eq!(e[0].time_ms, Some(0.25));
        assert_eq!(parse(&format!("{LINE}\n{{\"pattern\": 1}}\n")).unwrap_err().0, 2);
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
