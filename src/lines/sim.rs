//! Per-source-line rows of a simulated run (`profile --backend sim`, then `lines RUN`): GPGPU-Sim
//! counts per PTX line, and the PTX's `.loc` names the source line, so the rows come from the
//! PTX rather than a cubin's line tables; from there they are `lines`' rows, diagnosed alike.

use std::collections::{BTreeMap, BTreeSet};

use super::aggregate::{finish, line_row, unresolved, LineReport, Options, RowId, SCHEMA};
use super::instructions::{Counters, Op};
use super::source::Sources;
use crate::error::Result;
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::parse::gpgpusim::{Access, LineStats, LoadOrStore, Space};

/// One memory instruction line of a kernel, with what the simulator counted for it.
#[derive(Debug, Clone)]
pub(crate) struct SimLine {
    /// The source file and line its `.loc` names (`None` without `-lineinfo`): for an access
    /// inside a library (a CUDA header, CUB…), the user's line that called it (`lines::frames`).
    pub source: Option<(String, u32)>,
    /// The library's file and line an access was made in, when `source` is its call site.
    pub header: Option<(String, u32)>,
    /// The PTX file and line, for rows that have no source line.
    pub ptx: (String, u32),
    pub access: Access,
    pub stats: LineStats,
}

/// One kernel of a simulated process: its name (demangled) and memory lines.
#[derive(Debug, Clone)]
pub(crate) struct SimKernel {
    pub kernel: String,
    pub launches: u64,
    pub lines: Vec<SimLine>,
}

/// The access kind of a simulated line.
fn op(a: &Access) -> Op {
    match (a.space, a.direction) {
        (Space::Global, LoadOrStore::Load) => Op::GlobalLoad,
        (Space::Global, LoadOrStore::Store) => Op::GlobalStore,
        (Space::Shared, LoadOrStore::Load) => Op::SharedLoad,
        (Space::Shared, LoadOrStore::Store) => Op::SharedStore,
    }
}

/// The counters of one line, in `lines`' terms: a request is one warp-level instruction (the
/// simulator's `gmem_warp`), the active lanes its thread executions, and the ideal
/// `ceil(active lanes × bytes / 32)` sectors (`/ 128` wavefronts) per instruction.
fn counters(l: &SimLine) -> Counters {
    let s = &l.stats;
    let bytes = f64::from(l.access.bytes);
    let threads = s.executions as f64;
    let mut c =
        Counters { access_bytes: Some(l.access.bytes), threads: Some(threads), instructions: 1, ..Counters::default() };
    match l.access.space {
        Space::Global => {
            let warps = s.global_warps as f64;
            let ideal = warps.max((threads * bytes / 32.0).ceil());
            c.executions = Some(warps);
            c.requests = Some(warps);
            c.sectors = Some(s.global_sectors as f64);
            c.ideal_sectors = Some(ideal);
            c.excess_sectors = Some((s.global_sectors as f64 - ideal).max(0.0));
        }
        Space::Shared => {
            let warps = s.shared_warps as f64;
            c.executions = Some(warps);
            c.shared_wavefronts = Some(s.shared_wavefronts as f64);
            c.shared_ideal_wavefronts = Some(warps.max((threads * bytes / 128.0).ceil()));
        }
    }
    c
}

/// The rows of every kernel, worst first, as `lines` prints them: the same rows, derivation
/// and diagnoses as a report's, from the simulator's per-PTX-line counts.
pub(crate) fn build(
    kernels: Vec<SimKernel>,
    opts: &Options,
    catalogue: &Catalogue,
    sources: &mut Sources,
) -> Result<LineReport> {
    let derivation = Derivation::lines(catalogue)?;
    let mut rows = Vec::new();
    let mut notices = Vec::new();
    for (gi, k) in kernels.into_iter().enumerate() {
        if opts.kernel.as_ref().is_some_and(|re| !re.is_match(&k.kernel)) {
            continue;
        }
        if k.lines.iter().any(|l| l.source.is_none()) {
            notices.push(format!(
                "`{}`: built without `-lineinfo`: rows are PTX lines, not source lines (rebuild with `nvcc -lineinfo`)",
                k.kernel
            ));
        }
        // Accesses made inside CUDA headers stand on the user's lines that called them; where
        // they were made is said beside, once per kernel.
        let inlined: BTreeSet<String> = (k.lines.iter())
            .filter_map(|l| {
                let ((hf, hl), (cf, cl)) = (l.header.as_ref()?, l.source.as_ref()?);
                Some(format!("{} (inside {})", super::frames::short(cf, *cl), super::frames::short(hf, *hl)))
            })
            .collect();
        if !inlined.is_empty() {
            notices.push(format!(
                "`{}`: accesses inside CUDA headers are counted on the lines that called them: {}",
                k.kernel,
                inlined.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        // One row per source line and access kind (a line's load and its store apart), or per
        // PTX line where there is no source line; by instruction: per PTX line.
        type Key = (Option<(String, u32)>, Option<u32>, Op);
        let mut keyed: BTreeMap<Key, (Counters, BTreeSet<(String, u32)>)> = BTreeMap::new();
        for l in k.lines.iter().filter(|l| l.stats.global_warps + l.stats.shared_warps > 0) {
            let key = match (&l.source, opts.by) {
                (Some(s), super::By::Line) => (Some(s.clone()), None, op(&l.access)),
                (s, _) => (s.clone(), Some(l.ptx.1), op(&l.access)),
            };
            let e = keyed.entry(key).or_default();
            e.0.add(&counters(l));
            e.1.extend(l.header.clone());
        }
        let total: f64 = keyed.values().filter_map(|c| c.0.excess_sectors).sum();
        let id =
            RowId { kernel: k.kernel.clone(), rank: None, launch: None, launches: k.launches, grid: None, block: None };
        for ((place, ptx_line, op), (c, via)) in keyed {
            // A PTX line stands where a SASS offset would.
            let mut row = line_row(&id, place, ptx_line.map(u64::from), None, op, &c, Some(total), sources);
            row.via = via.into_iter().collect();
            rows.push((gi, false, row));
        }
    }
    let rows = finish(rows, &derivation, opts.top)?;
    notices.extend(unresolved(&rows));
    // Every simulated kernel the filter let through counts as matched.
    let matched = rows.iter().map(|r| (&r.kernel, r.launch)).collect::<std::collections::HashSet<_>>().len();
    Ok(LineReport { schema: SCHEMA, rows, notices, arch: Some(crate::tools::gpgpusim::ARCH.into()), matched })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(file_line: u32, space: Space, bytes: u32, warps: u64, sectors_or_wavefronts: u64) -> SimLine {
        let mut stats = LineStats { executions: warps * 32, ..LineStats::default() };
        match space {
            Space::Global => (stats.global_warps, stats.global_sectors) = (warps, sectors_or_wavefronts),
            Space::Shared => (stats.shared_warps, stats.shared_wavefronts) = (warps, sectors_or_wavefronts),
        }
        SimLine {
            source: Some(("app.cu".into(), file_line)),
            header: None,
            ptx: ("app.ptx".into(), 40 + file_line),
            access: Access { space, direction: LoadOrStore::Load, bytes },
            stats,
        }
    }

    #[test]
    fn the_strided_line_comes_first_with_its_diagnosis() {
        let k = SimKernel {
            kernel: "strided(float const*, float*)".into(),
            launches: 1,
            lines: vec![
                line(10, Space::Global, 4, 8, 32),
                line(12, Space::Global, 4, 8, 256),
                // A 16-way conflict: 8 × 15 = 120 excess wavefronts, below the stride's 224
                // excess sectors.
                line(14, Space::Shared, 4, 8, 128),
            ],
        };
        let mut sources = Sources::new(std::path::PathBuf::from("/nonexistent-source-root"));
        let r = build(vec![k], &Options::default(), &Catalogue::builtin(), &mut sources).unwrap();
        assert_eq!(r.rows.len(), 3);
        let worst = &r.rows[0];
        assert_eq!(worst.line, Some(12));
        assert_eq!((worst.sectors_per_request, worst.ideal_sectors_per_request), (Some(32.0), Some(4.0)));
        assert_eq!((worst.excess_sectors, worst.excess_share), (Some(224.0), Some(1.0)));
        assert!(worst.diagnosis.as_deref().unwrap().contains("32.0 sectors/request"), "{:?}", worst.diagnosis);
        let shared = r.rows.iter().find(|r| r.line == Some(14)).unwrap();
        assert_eq!((shared.shared_wavefronts, shared.shared_ideal_wavefronts), (Some(128.0), Some(8.0)));
        assert_eq!(r.rows[1].line, Some(14), "the conflict ranks above the coalesced load");
        assert!(r.rows.iter().find(|r| r.line == Some(10)).unwrap().diagnosis.is_none(), "4 sectors/request is ideal");
    }

    #[test]
    fn a_kernels_only_waste_a_32_way_conflict_ranks_first() {
        // A `[32][32]` tile read down a column: 8 warps, 32 wavefronts each (ideal 1); the
        // coalesced load beside it (8 warps × 4 sectors, its ideal) wastes nothing, and used to
        // rank first for having excess sectors (0) where the shared line had none.
        let k = SimKernel {
            kernel: "tile".into(),
            launches: 1,
            lines: vec![line(10, Space::Global, 4, 8, 8 * 4), line(12, Space::Shared, 4, 8, 8 * 32)],
        };
        let mut sources = Sources::new(std::path::PathBuf::from("/nonexistent-source-root"));
        let r = build(vec![k], &Options::default(), &Catalogue::builtin(), &mut sources).unwrap();
        assert_eq!(r.rows[0].line, Some(12), "{:?}", r.rows);
        assert_eq!(r.rows[0].shared_wavefronts_per_ideal, Some(32.0));
    }

    #[test]
    fn a_header_access_stands_on_its_call_site_with_the_header_said_beside() {
        let mut l = line(4, Space::Global, 4, 8, 256);
        l.header = Some(("/opt/cuda11/include/sm_32_intrinsics.hpp".into(), 134));
        let k = SimKernel { kernel: "k".into(), launches: 1, lines: vec![l] };
        let mut sources = Sources::new(std::path::PathBuf::from("/nonexistent-source-root"));
        let r = build(vec![k], &Options::default(), &Catalogue::builtin(), &mut sources).unwrap();
        assert_eq!(r.rows[0].line, Some(4));
        assert_eq!(r.rows[0].via, [("/opt/cuda11/include/sm_32_intrinsics.hpp".to_string(), 134)]);
        assert!(r.notices.iter().any(|n| n.contains("app.cu:4 (inside sm_32_intrinsics.hpp:134)")), "{:?}", r.notices);
    }
}
