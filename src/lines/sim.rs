//! Per-source-line rows of a simulated run (`profile --backend sim`, then `lines RUN`): GPGPU-Sim
//! counts per PTX line, and the PTX's `.loc` names the source line, so the rows come from the
//! PTX rather than a cubin's line tables; from there they are `lines`' rows, diagnosed alike.

use std::collections::BTreeMap;

use super::aggregate::{LineReport, LineRow, Options, SCHEMA};
use super::diagnose::{diagnose, sectors_per_request};
use super::instructions::{Counters, GLOBAL, LOAD, SHARED, STORE};
use super::source::Sources;
use crate::parse::gpgpusim::{Access, Direction, LineStats, Space};

/// One memory instruction line of a kernel, with what the simulator counted for it.
#[derive(Debug, Clone)]
pub(crate) struct SimLine {
    /// The source file and line its `.loc` names (`None` without `-lineinfo`).
    pub source: Option<(String, u32)>,
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

/// The counters of one line, in `lines`' terms: requests and executions are warp-level, the
/// ideal is `ceil(active lanes × bytes / 32)` sectors (`/ 128` wavefronts) per instruction.
fn counters(l: &SimLine) -> Counters {
    let s = &l.stats;
    let bytes = f64::from(l.access.bytes);
    let threads = s.executions as f64;
    let mut c = Counters {
        access: if l.access.direction == Direction::Load { LOAD } else { STORE },
        access_bytes: Some(l.access.bytes),
        instructions: 1,
        ..Counters::default()
    };
    match l.access.space {
        Space::Global => {
            let warps = s.global_warps as f64;
            let ideal = warps.max((threads * bytes / 32.0).ceil());
            c.space = GLOBAL;
            c.executions = Some(warps);
            c.requests = Some(warps);
            c.sectors = Some(s.global_sectors as f64);
            c.ideal_sectors = Some(ideal);
            c.excess_sectors = Some((s.global_sectors as f64 - ideal).max(0.0));
        }
        Space::Shared => {
            let warps = s.shared_warps as f64;
            c.space = SHARED;
            c.executions = Some(warps);
            c.shared_wavefronts = Some(s.shared_wavefronts as f64);
            c.shared_ideal_wavefronts = Some(warps.max((threads * bytes / 128.0).ceil()));
        }
    }
    c
}

/// Add `b` into `a` (instructions of one source line).
fn add(a: &mut Counters, b: &Counters) {
    let sum = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (None, None) => None,
        (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
    };
    a.space |= b.space;
    a.access |= b.access;
    a.access_bytes = if a.instructions == 0 || a.access_bytes == b.access_bytes { b.access_bytes } else { None };
    a.executions = sum(a.executions, b.executions);
    a.requests = sum(a.requests, b.requests);
    a.sectors = sum(a.sectors, b.sectors);
    a.ideal_sectors = sum(a.ideal_sectors, b.ideal_sectors);
    a.excess_sectors = sum(a.excess_sectors, b.excess_sectors);
    a.shared_wavefronts = sum(a.shared_wavefronts, b.shared_wavefronts);
    a.shared_ideal_wavefronts = sum(a.shared_ideal_wavefronts, b.shared_ideal_wavefronts);
    a.instructions += b.instructions;
}

/// The rows of every kernel, worst first, as `lines` prints them.
pub(crate) fn build(kernels: Vec<SimKernel>, opts: &Options, sources: &mut Sources) -> LineReport {
    let mut rows = Vec::new();
    let mut notices = Vec::new();
    for k in kernels {
        if opts.kernel.as_ref().is_some_and(|re| !re.is_match(&k.kernel)) {
            continue;
        }
        if k.lines.iter().any(|l| l.source.is_none()) {
            notices.push(format!(
                "`{}`: built without `-lineinfo`: rows are PTX lines, not source lines (rebuild with `nvcc -lineinfo`)",
                k.kernel
            ));
        }
        // One row per source line and access kind (a line's load and its store apart), or per
        // PTX line where there is no source line; by instruction: per PTX line.
        type Key = (Option<(String, u32)>, Option<u32>, Space, Direction);
        let mut keyed: BTreeMap<Key, Counters> = BTreeMap::new();
        for l in k.lines.iter().filter(|l| l.stats.global_warps + l.stats.shared_warps > 0) {
            let (space, dir) = (l.access.space, l.access.direction);
            let key = match (&l.source, opts.by) {
                (Some(s), super::By::Line) => (Some(s.clone()), None, space, dir),
                (s, _) => (s.clone(), Some(l.ptx.1), space, dir),
            };
            add(keyed.entry(key).or_default(), &counters(l));
        }
        let total: f64 = keyed.values().filter_map(|c| c.excess_sectors).sum();
        let mut kernel_rows: Vec<LineRow> = keyed
            .into_iter()
            .map(|((loc, ptx_line, _, _), c)| {
                let (file, line) = loc.map(|(f, l)| (Some(f), Some(l))).unwrap_or_default();
                let path = file.as_deref().and_then(|f| sources.resolve(f).relative.clone());
                let source = match (&file, line) {
                    (Some(f), Some(l)) => sources.line(f, l),
                    _ => None,
                };
                let finding = diagnose(&c, false);
                let spr = sectors_per_request(&c);
                LineRow {
                    kernel: k.kernel.clone(),
                    launches: k.launches,
                    file,
                    line,
                    path,
                    // A PTX line stands where a SASS offset would.
                    pc_offset: ptx_line.map(u64::from),
                    op: c.op(),
                    access_bytes: c.access_bytes,
                    instructions: c.instructions,
                    executions: c.executions,
                    requests: c.requests,
                    sectors: c.sectors,
                    ideal_sectors: c.ideal_sectors,
                    excess_sectors: c.excess_sectors,
                    excess_share: c.excess_sectors.filter(|_| total > 0.0).map(|e| e / total),
                    sectors_per_request: spr.map(|s| s.0),
                    ideal_sectors_per_request: spr.and_then(|s| s.1),
                    shared_wavefronts: c.shared_wavefronts,
                    shared_ideal_wavefronts: c.shared_ideal_wavefronts,
                    shared_excess_wavefronts: c.shared_excess_wavefronts(),
                    source,
                    rule: finding.as_ref().and_then(|f| f.waste).map(|w| w.id()),
                    waste: finding.as_ref().and_then(|f| f.waste),
                    diagnosis: finding.map(|f| f.text),
                    global_loads: if c.is_global() && c.is_load() { c.clone() } else { Counters::default() },
                    global_stores: if c.is_global() && c.is_store() { c.clone() } else { Counters::default() },
                    ..LineRow::default()
                }
            })
            .collect();
        kernel_rows.sort_by(|a, b| {
            let key = |r: &LineRow| (r.excess_sectors.unwrap_or(-1.0), r.shared_excess_wavefronts.unwrap_or(-1.0));
            let (ka, kb) = (key(a), key(b));
            kb.0.total_cmp(&ka.0).then(kb.1.total_cmp(&ka.1)).then((&a.file, a.line).cmp(&(&b.file, b.line)))
        });
        if let Some(n) = opts.top {
            kernel_rows.truncate(n);
        }
        rows.extend(kernel_rows);
    }
    LineReport { schema: SCHEMA, rows, notices, arch: Some(crate::tools::gpgpusim::ARCH.into()) }
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
            ptx: ("app.ptx".into(), 40 + file_line),
            access: Access { space, direction: Direction::Load, bytes },
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
                line(14, Space::Shared, 4, 8, 256),
            ],
        };
        let mut sources = Sources::new(std::env::temp_dir());
        let r = build(vec![k], &Options::default(), &mut sources);
        assert_eq!(r.rows.len(), 3);
        let worst = &r.rows[0];
        assert_eq!(worst.line, Some(12));
        assert_eq!((worst.sectors_per_request, worst.ideal_sectors_per_request), (Some(32.0), Some(4.0)));
        assert_eq!((worst.excess_sectors, worst.excess_share), (Some(224.0), Some(1.0)));
        assert!(worst.diagnosis.as_deref().unwrap().contains("32.0 sectors/request"), "{:?}", worst.diagnosis);
        let shared = r.rows.iter().find(|r| r.line == Some(14)).unwrap();
        assert_eq!((shared.shared_wavefronts, shared.shared_ideal_wavefronts), (Some(256.0), Some(8.0)));
        assert!(r.rows.iter().find(|r| r.line == Some(10)).unwrap().diagnosis.is_none(), "4 sectors/request is ideal");
    }
}
