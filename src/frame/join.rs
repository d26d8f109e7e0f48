//! The launches of a built-in pattern joined to what the pattern executable says it launched
//! (its manifest), by launch position, and verified: each launch's kernel, grid and block must
//! be the manifest's, so a missing, extra or reordered launch is an error naming both sides,
//! never a silent shift of results between variants. Then each variant's launch facts (the
//! pattern's access width and bytes, the timing run, the GPU's peak) are joined by name.

use polars::prelude::*;

use super::cols::{BLOCK, GRID, KERNEL, PATTERN, VARIANT};
use super::{polars_error, Frame};
use crate::error::Result;
use crate::frame::manifest::Entry;
use crate::results::Metrics;

const LAUNCH: &str = "launch";
const FUNCTION: &str = "function";
const WANT_KERNEL: &str = "manifest_kernel";
const WANT_GRID: [&str; 3] = ["manifest_grid_x", "manifest_grid_y", "manifest_grid_z"];
const WANT_BLOCK: [&str; 3] = ["manifest_block_x", "manifest_block_y", "manifest_block_z"];

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
    Mismatch { launch: usize, variant: String, profiled: Launch, listed: Launch },
}

/// A launch as one side saw it: kernel, grid, block (ncu may not report a dimension).
pub(crate) type Launch = (String, Option<[u32; 3]>, Option<[u32; 3]>);

fn shape(grid: Option<[u32; 3]>, block: Option<[u32; 3]>) -> String {
    let d = |d: Option<[u32; 3]>| d.map_or("?".to_string(), |[x, y, z]| format!("({x}, {y}, {z})"));
    format!("grid {} block {}", d(grid), d(block))
}

impl Frame {
    /// Join per-launch rows (in launch order) to the manifest's entries, verified; the result
    /// has the entries' `pattern` and `variant` columns.
    pub fn join_manifest(self, entries: &[Entry]) -> Result<std::result::Result<Frame, JoinError>> {
        if self.height() != entries.len() {
            return Ok(Err(JoinError::Count { profiled: self.height(), listed: entries.len() }));
        }
        let n = entries.len() as u32;
        let dim = |f: fn(&Entry) -> [u32; 3], i: usize| entries.iter().map(|e| f(e)[i]).collect::<Vec<_>>();
        let mut columns = vec![
            Column::new(LAUNCH.into(), (0..n).collect::<Vec<_>>()),
            Column::new(PATTERN.into(), entries.iter().map(|e| e.pattern.as_str()).collect::<Vec<_>>()),
            Column::new(VARIANT.into(), entries.iter().map(|e| e.variant.as_str()).collect::<Vec<_>>()),
            Column::new(WANT_KERNEL.into(), entries.iter().map(|e| e.kernel.as_str()).collect::<Vec<_>>()),
        ];
        for i in 0..3 {
            columns.push(Column::new(WANT_GRID[i].into(), dim(|e| e.grid, i)));
            columns.push(Column::new(WANT_BLOCK[i].into(), dim(|e| e.block, i)));
        }
        let manifest = DataFrame::new(columns).map_err(polars_error)?.lazy();
        // ncu prints C++ kernels with their parameter list: the name before it is the function.
        let function: Vec<Option<String>> = self
            .strings(KERNEL)?
            .into_iter()
            .map(|k| k.map(|k| k.split('(').next().unwrap_or("").to_string()))
            .collect();
        let mut launches = self.0;
        launches.with_column(Column::new(FUNCTION.into(), function)).map_err(polars_error)?;
        let launches = launches.lazy().with_row_index(LAUNCH, None);
        // A dimension ncu did not report cannot disagree.
        let mut agrees = col(KERNEL).eq(col(WANT_KERNEL)).or(col(FUNCTION).eq(col(WANT_KERNEL)));
        for (have, want) in GRID.iter().zip(WANT_GRID).chain(BLOCK.iter().zip(WANT_BLOCK)) {
            agrees = agrees.and(col(*have).is_null().or(col(*have).eq(col(want))));
        }
        let joined = launches
            .join(manifest, [col(LAUNCH)], [col(LAUNCH)], JoinArgs::new(JoinType::Inner))
            .sort([LAUNCH], SortMultipleOptions::default())
            .with_column(agrees.alias("agrees"))
            .collect()
            .map_err(polars_error)?;
        let joined = Frame(joined);
        let agrees = joined.0.column("agrees").map_err(polars_error)?.bool().map_err(polars_error)?.clone();
        if let Some(i) = agrees.into_iter().position(|ok| ok != Some(true)) {
            let e = &entries[i];
            let profiled = joined.launch(i)?;
            return Ok(Err(JoinError::Mismatch {
                launch: i,
                variant: e.variant.clone(),
                profiled,
                listed: (e.kernel.clone(), Some(e.grid), Some(e.block)),
            }));
        }
        let mut drop: Vec<&str> = vec![LAUNCH, FUNCTION, WANT_KERNEL, "agrees"];
        drop.extend(WANT_GRID.iter().chain(&WANT_BLOCK));
        Ok(Ok(Frame(joined.0.drop_many(drop))))
    }

    /// Kernel, grid and block of row `i`, as the profiler reported them.
    fn launch(&self, i: usize) -> Result<Launch> {
        let kernel = self.strings(KERNEL)?.swap_remove(i).unwrap_or_default();
        let dims = |names: [&str; 3]| -> Result<Option<[u32; 3]>> {
            let [x, y, z] = names.map(|n| self.floats(n).map(|v| v[i]));
            Ok(x?.zip(y?).zip(z?).map(|((x, y), z)| [x as u32, y as u32, z as u32]))
        };
        Ok((kernel, dims(GRID)?, dims(BLOCK)?))
    }

    /// Join each variant's launch facts (`metrics.toml`'s `[fact.*]`) by variant name.
    pub fn join_facts(self, facts: &[(String, Metrics)], keys: &[&str]) -> Result<Frame> {
        let mut columns = vec![Column::new(VARIANT.into(), facts.iter().map(|(v, _)| v.as_str()).collect::<Vec<_>>())];
        for k in keys {
            columns.push(Column::new((*k).into(), facts.iter().map(|(_, m)| m.get(*k).copied()).collect::<Vec<_>>()));
        }
        let facts = DataFrame::new(columns).map_err(polars_error)?.lazy();
        let lf = self.0.lazy().join(facts, [col(VARIANT)], [col(VARIANT)], JoinArgs::new(JoinType::Left));
        lf.collect().map(Frame).map_err(polars_error)
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
