//! The launches of a built-in pattern joined to what the pattern executable says it launched
//! (its manifest), by launch position, and verified: each launch's kernel, grid and block must
//! be the manifest's, so a missing, extra or reordered launch is an error naming both sides,
//! never a silent shift of results between variants. Then each variant's launch facts (the
//! pattern's access width and bytes, the timing run, the GPU's peak) are joined by name.

use polars_core::prelude::*;
use polars_ops::prelude::{DataFrameJoinOps, JoinArgs, JoinType};

use super::cols::{BLOCK, GRID, KERNEL, PATTERN, VARIANT};
use super::{polars_error, Frame};
use crate::error::Result;
use crate::frame::manifest::Entry;
use crate::results::Metrics;

/// Why ncu's launches and the manifest do not line up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JoinError {
    #[error(
        "ncu profiled {profiled} launches but the manifest lists {listed}: the join would shift results between variants"
    )]
    Count { profiled: usize, listed: usize },
    #[error(
        "launch {launch}: ncu profiled `{}` {} but the manifest says `{}` {} (variant `{variant}`)",
        profiled.0, shape(profiled.1, profiled.2), listed.0, shape(listed.1, listed.2)
    )]
    Mismatch { launch: usize, variant: String, profiled: SeenLaunch, listed: SeenLaunch },
}

/// A launch as one side saw it: kernel, grid, block (ncu may not report a dimension).
pub(crate) type SeenLaunch = (String, Option<[u32; 3]>, Option<[u32; 3]>);

fn shape(grid: Option<[u32; 3]>, block: Option<[u32; 3]>) -> String {
    let d = |d: Option<[u32; 3]>| d.map_or("?".to_string(), |[x, y, z]| format!("({x}, {y}, {z})"));
    format!("grid {} block {}", d(grid), d(block))
}

impl Frame {
    /// Join per-launch rows (in launch order) to the manifest's entries by position, verified;
    /// the result has the entries' `pattern` and `variant` columns.
    pub fn join_manifest(self, entries: &[Entry]) -> Result<std::result::Result<Frame, JoinError>> {
        if self.height() != entries.len() {
            return Ok(Err(JoinError::Count { profiled: self.height(), listed: entries.len() }));
        }
        let kernels = self.strings(KERNEL)?;
        // Each row's dimensions, `None` where ncu did not report one of the three.
        let dims = |names: [&str; 3]| -> Result<Vec<Option<[u32; 3]>>> {
            let [x, y, z] = names.map(|n| self.floats(n));
            let (x, y, z) = (x?, y?, z?);
            Ok((0..x.len()).map(|i| Some([x[i]? as u32, y[i]? as u32, z[i]? as u32])).collect())
        };
        let (grids, blocks) = (dims(GRID)?, dims(BLOCK)?);
        // A dimension ncu did not report cannot disagree.
        let agrees = |have: Option<[u32; 3]>, want: [u32; 3]| have.is_none_or(|h| h == want);
        for (i, e) in entries.iter().enumerate() {
            let kernel = kernels[i].clone().unwrap_or_default();
            // ncu prints C++ kernels with their parameter list: the name before it is the function.
            let function = kernel.split('(').next().unwrap_or("");
            if (kernel != e.kernel && function != e.kernel) || !agrees(grids[i], e.grid) || !agrees(blocks[i], e.block)
            {
                return Ok(Err(JoinError::Mismatch {
                    launch: i,
                    variant: e.variant.clone(),
                    profiled: (kernel, grids[i], blocks[i]),
                    listed: (e.kernel.clone(), Some(e.grid), Some(e.block)),
                }));
            }
        }
        let names = |f: fn(&Entry) -> &str| entries.iter().map(f).collect::<Vec<_>>();
        let columns = [
            Column::new(PATTERN.into(), names(|e| e.pattern.as_str())),
            Column::new(VARIANT.into(), names(|e| e.variant.as_str())),
        ];
        Ok(Ok(Frame(self.0.hstack(&columns).map_err(polars_error)?)))
    }

    /// Join each variant's launch facts (`metrics.toml`'s `[fact.*]`) by variant name.
    pub fn join_facts(self, facts: &[(String, Metrics)], keys: &[&str]) -> Result<Frame> {
        let mut columns = vec![Column::new(VARIANT.into(), facts.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>())];
        for k in keys {
            columns.push(Column::new((*k).into(), facts.iter().map(|(_, m)| m.get(*k).copied()).collect::<Vec<_>>()));
        }
        let facts = DataFrame::new(columns).map_err(polars_error)?;
        let joined = self.0.join(&facts, [VARIANT], [VARIANT], JoinArgs::new(JoinType::Left), None);
        joined.map(Frame).map_err(polars_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::launches::{Grouping, Launches};
    use crate::parse::LaunchRecord;

    fn entry(variant: &str, kernel: &str, grid: u32) -> Entry {
        Entry {
            pattern: "stride".into(),
            variant: variant.into(),
            kernel: kernel.into(),
            grid: [grid, 1, 1],
            block: [256, 1, 1],
            bytes_read: 4096,
            bytes_written: 4096,
            time_ms: None,
            times_ms: vec![],
        }
    }

    fn launches(kernels: &[(&str, u32)]) -> Frame {
        let names = Default::default();
        let mut l = Launches::new(&names, Grouping::PerLaunch);
        for (i, (k, g)) in kernels.iter().enumerate() {
            l.push(LaunchRecord {
                id: Some(i as u64),
                grid: Some([*g, 1, 1]),
                block: Some([256, 1, 1]),
                ..LaunchRecord::new(*k)
            })
            .unwrap();
        }
        l.finish().unwrap().0
    }

    #[test]
    fn joins_in_launch_order_and_matches_cxx_names_by_function() {
        let e = [entry("stride_1", "stride_copy", 4), entry("stride_2", "stride_copy", 8)];
        let f = launches(&[("stride_copy(const float *, float *)", 4), ("stride_copy", 8)]);
        let joined = f.join_manifest(&e).unwrap().unwrap();
        assert_eq!(joined.strings(VARIANT).unwrap(), [Some("stride_1".into()), Some("stride_2".into())]);
    }

    #[test]
    fn a_missing_or_reordered_launch_is_an_error_naming_both_sides() {
        let e = [entry("stride_1", "stride_copy", 4), entry("stride_2", "stride_copy", 8)];
        let missing = launches(&[("stride_copy", 4)]).join_manifest(&e).unwrap().unwrap_err();
        assert_eq!(missing, JoinError::Count { profiled: 1, listed: 2 });
        let swapped = launches(&[("stride_copy", 8), ("stride_copy", 4)]).join_manifest(&e).unwrap().unwrap_err();
        let text = swapped.to_string();
        assert!(text.starts_with("launch 0: ncu profiled `stride_copy` grid (8, 1, 1)"), "{text}");
        assert!(text.contains("manifest says `stride_copy` grid (4, 1, 1)") && text.contains("`stride_1`"), "{text}");
        let other = launches(&[("offset_copy", 4), ("stride_copy", 8)]).join_manifest(&e).unwrap().unwrap_err();
        assert!(matches!(other, JoinError::Mismatch { launch: 0, .. }), "{other}");
    }
}
