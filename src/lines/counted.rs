//! Rows from counters another backend counted per instruction (`coalprof triton`: Triton's
//! interpreter and compiled layout): the seam a backend that counts by itself joins `lines` at.
//! From here they are `lines`' rows — the same derivation, diagnoses, formats and gate rows as a
//! report's.

use std::collections::BTreeMap;

use super::aggregate::{finish, line_row, unresolved, LineReport, Options, RowId, SCHEMA};
use super::instructions::{Counters, Op};
use super::source::Sources;
use crate::error::Result;
use crate::frame::Derivation;
use crate::metrics::Catalogue;

/// One memory instruction, with what the backend counted for it.
#[derive(Debug, Clone)]
pub struct CountedInstruction {
    /// The source file and line it belongs to.
    pub source: (String, u32),
    /// Its place among the kernel's instructions (the row key with `--by instruction`).
    pub index: u64,
    /// Its text (`ld.global.v4.b32`), shown where a report's SASS would be.
    pub text: Option<String>,
    /// What it accesses.
    pub op: Op,
    /// Its counters.
    pub counters: Counters,
}

/// One kernel's instructions.
#[derive(Debug, Clone)]
pub struct CountedKernel {
    /// The kernel's name.
    pub kernel: String,
    /// Its grid, where it has one.
    pub grid: Option<[u32; 3]>,
    /// Threads per program.
    pub block: Option<[u32; 3]>,
    /// Its memory instructions.
    pub instructions: Vec<CountedInstruction>,
}

/// The rows of every kernel, worst first, with `notices` and `arch` as the backend says them.
pub fn build(
    kernels: Vec<CountedKernel>,
    opts: &Options,
    catalogue: &Catalogue,
    sources: &mut Sources,
    arch: Option<String>,
    mut notices: Vec<String>,
) -> Result<LineReport> {
    let derivation = Derivation::lines(catalogue)?;
    let mut rows = Vec::new();
    for (gi, k) in kernels.into_iter().enumerate() {
        if opts.kernel.as_ref().is_some_and(|re| !re.is_match(&k.kernel)) {
            continue;
        }
        type Key = ((String, u32), Option<u64>, Op);
        let mut keyed: BTreeMap<Key, (Counters, Option<String>)> = BTreeMap::new();
        for i in &k.instructions {
            let key = match opts.by {
                super::By::Line => (i.source.clone(), None, i.op),
                _ => (i.source.clone(), Some(i.index), i.op),
            };
            let e = keyed.entry(key).or_insert_with(|| (Counters::default(), i.text.clone()));
            e.0.add(&i.counters);
            if e.1 != i.text {
                e.1 = None;
            }
        }
        let total: f64 = keyed.values().filter_map(|(c, _)| c.excess_sectors).sum();
        let id =
            RowId { kernel: k.kernel.clone(), rank: None, launch: None, launches: 1, grid: k.grid, block: k.block };
        for ((place, index, op), (c, text)) in keyed {
            let row = line_row(&id, Some(place), index, text, op, &c, Some(total), sources);
            rows.push((gi, false, row));
        }
    }
    let rows = finish(rows, &derivation, opts.top)?;
    notices.extend(unresolved(&rows));
    let matched = rows.iter().map(|r| &r.kernel).collect::<std::collections::HashSet<_>>().len();
    Ok(LineReport { schema: SCHEMA, rows, notices, arch, matched })
}
