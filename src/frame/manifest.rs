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
    /// The pattern, by its CLI name (`stride`).
    pub pattern: String,
    /// The variant (`stride_8`).
    pub variant: String,
    /// The kernel function it launched.
    pub kernel: String,
    /// The grid it launched.
    pub grid: [u32; 3],
    /// The block it launched.
    pub block: [u32; 3],
    /// Bytes the algorithm reads.
    pub bytes_read: u64,
    /// Bytes the algorithm writes.
    pub bytes_written: u64,
    // The executable also writes a "checksum" of the output, computed so the loads cannot be
    // optimised away; coalprof does not read it (its value depends on the data, not the
    // addresses, so there is nothing to check it against).
    /// Median of the timed repeats (`--time` runs only).
    #[serde(default)]
    pub time_ms: Option<f64>,
    /// Every timed repeat, in ms (`--time` runs only).
    #[serde(default)]
    pub times_ms: Vec<f64>,
}

/// Read a manifest; a bad line is an error naming the file and the line.
pub fn read(path: &Path) -> Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::input_caused(path, "cannot read the manifest", e))?;
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

/// Why the executable's manifest is not what the catalogue planned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    /// The executable launched more or fewer variants than asked for.
    #[error("the executable ran {ran} variants, coalprof asked for {asked}")]
    Count {
        /// How many it launched.
        ran: usize,
        /// How many the plan has.
        asked: usize,
    },
    #[error(
        "variant `{variant}` was launched as `{}` {:?}x{:?}, the catalogue says `{}` {:?}x{:?}",
        launched.0, launched.1, launched.2, planned.0, planned.1, planned.2
    )]
    /// A variant was launched with another kernel, grid or block than the plan's.
    Mismatch {
        /// The variant's name.
        variant: String,
        /// How the executable launched it.
        launched: Shape,
        /// How the catalogue plans it.
        planned: Shape,
    },
}

/// A launch's kernel, grid and block.
pub type Shape = (String, [u32; 3], [u32; 3]);

/// Check that the executable launched what the catalogue asked for, in order.
pub fn check_against_plan(entries: &[Entry], plan: &[Variant]) -> std::result::Result<(), PlanError> {
    if entries.len() != plan.len() {
        return Err(PlanError::Count { ran: entries.len(), asked: plan.len() });
    }
    for (e, v) in entries.iter().zip(plan) {
        if e.variant != v.name || e.kernel != v.kernel || e.grid != v.launch.grid || e.block != v.launch.block {
            return Err(PlanError::Mismatch {
                variant: v.name.clone(),
                launched: (e.kernel.clone(), e.grid, e.block),
                planned: (v.kernel.to_string(), v.launch.grid, v.launch.block),
            });
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

    #[test]
    fn a_manifest_that_differs_from_the_plan_names_the_difference() {
        use crate::patterns::{variants, Pattern, Sizing};
        let plan = variants(Pattern::Stride, Sizing { bytes: 1 << 20 });
        let entry = |v: &Variant| Entry {
            pattern: "stride".into(),
            variant: v.name.clone(),
            kernel: v.kernel.to_string(),
            grid: v.launch.grid,
            block: v.launch.block,
            bytes_read: 0,
            bytes_written: 0,
            time_ms: None,
            times_ms: vec![],
        };
        let mut entries: Vec<Entry> = plan.iter().map(entry).collect();
        assert_eq!(check_against_plan(&entries, &plan), Ok(()));
        assert_eq!(
            check_against_plan(&entries[1..], &plan),
            Err(PlanError::Count { ran: plan.len() - 1, asked: plan.len() })
        );
        entries[1].block = [32, 1, 1];
        let err = check_against_plan(&entries, &plan).unwrap_err();
        assert!(
            matches!(&err, PlanError::Mismatch { variant, launched, .. }
            if *variant == plan[1].name && launched.2 == [32, 1, 1]),
            "{err:?}"
        );
        assert!(err.to_string().contains(&format!("`{}`", plan[1].name)), "{err}");
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
