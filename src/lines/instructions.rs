//! Per-instruction counters out of a launch's [`SourceCounters`]: one [`Counters`] per memory
//! instruction and access kind ([`Op`]), keyed by its SASS offset (PC − the kernel's start PC).
//!
//! The instanced metric names changed across ncu versions; each field takes the first name the
//! report has (2022+ first, then 2020–2021, then 2019), and stays `None` when none is there, so
//! a number the report lacks is absent, never 0. `memory_type` and `memory_access_type` are bit
//! sets (4 global, 16 shared; 2 load, 4 store). An `LDGSTS` (global and shared, load and store)
//! is two parts: its global side a load, its shared side a store.
//!
//! A request is one warp-level memory instruction, so a global instruction's requests are its
//! `inst_executed` (docs/ncu-rep-format.md); `memory_l1_tag_requests_global` counts the
//! 128-byte lines those requests look up, and is kept apart as `tag_requests`.

use std::collections::BTreeMap;

use crate::parse::source_metrics::{
    ACCESS, ACCESS_BITS, EXCESS_SECTORS, EXECUTIONS, IDEAL_SECTORS, SECTORS, SHARED_IDEAL, SHARED_WAVEFRONTS, SPACE,
    TAG_REQUESTS, THREADS,
};
use crate::parse::SourceCounters;

pub(crate) const GLOBAL: u32 = 4;
pub(crate) const SHARED: u32 = 16;
pub(crate) const LOAD: u32 = 2;
pub(crate) const STORE: u32 = 4;

/// What a row's instructions do: the memory space and the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// A global load (the global side of an `LDGSTS` too).
    GlobalLoad,
    /// A global store.
    GlobalStore,
    /// A global atomic or reduction (neither the load nor the store bit).
    GlobalAtomic,
    /// A global access of a report that does not say which.
    Global,
    /// A shared load.
    SharedLoad,
    /// A shared store (the shared side of an `LDGSTS` too).
    SharedStore,
    /// A shared atomic.
    SharedAtomic,
    /// A shared access of a report that does not say which.
    Shared,
}

impl Op {
    /// `global load`, `shared store`, …
    pub fn name(self) -> &'static str {
        match self {
            Op::GlobalLoad => "global load",
            Op::GlobalStore => "global store",
            Op::GlobalAtomic => "global atomic",
            Op::Global => "global",
            Op::SharedLoad => "shared load",
            Op::SharedStore => "shared store",
            Op::SharedAtomic => "shared atomic",
            Op::Shared => "shared",
        }
    }

    /// Whether it accesses global memory.
    pub fn is_global(self) -> bool {
        matches!(self, Op::GlobalLoad | Op::GlobalStore | Op::GlobalAtomic | Op::Global)
    }

    /// Whether its requests are what the kernel's load and store request counters count
    /// (atomics have counters of their own).
    pub fn is_load_or_store(self) -> bool {
        matches!(self, Op::GlobalLoad | Op::GlobalStore)
    }
}

/// The counters of one instruction's part (or of several, summed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// Bytes per thread; `None` when unknown or when summed instructions differ.
    pub access_bytes: Option<u32>,
    /// Warp-level executions.
    pub executions: Option<f64>,
    /// Global requests: warp-level executions of a global instruction (0 for one that moved
    /// no sector: every execution had all its threads predicated off); `None` for shared.
    pub requests: Option<f64>,
    /// L1 tag requests: the 128-byte lines the requests looked up.
    pub tag_requests: Option<f64>,
    /// Thread-level executions with a true predicate.
    pub threads: Option<f64>,
    /// L2 sectors fetched by global accesses.
    pub sectors: Option<f64>,
    /// The sectors perfectly coalesced accesses would fetch.
    pub ideal_sectors: Option<f64>,
    /// ncu's own excessive-sector count where the report has it, else sectors − ideal.
    pub excess_sectors: Option<f64>,
    /// Shared-memory wavefronts.
    pub shared_wavefronts: Option<f64>,
    /// Conflict-free shared wavefronts.
    pub shared_ideal_wavefronts: Option<f64>,
    /// How many instructions were summed (for "4-byte accesses on one line" and the like).
    pub instructions: u32,
}

impl Counters {
    /// Shared wavefronts beyond the conflict-free ones.
    pub fn shared_excess_wavefronts(&self) -> Option<f64> {
        Some((self.shared_wavefronts? - self.shared_ideal_wavefronts?).max(0.0))
    }

    /// Add `other` (another launch of the instruction, or another instruction of the line).
    pub fn add(&mut self, other: &Counters) {
        let sum = |a: &mut Option<f64>, b: Option<f64>| {
            *a = match (*a, b) {
                (Some(x), Some(y)) => Some(x + y),
                (x, y) => x.or(y),
            }
        };
        if self.instructions == 0 {
            self.access_bytes = other.access_bytes;
        } else if self.access_bytes != other.access_bytes {
            self.access_bytes = None;
        }
        sum(&mut self.executions, other.executions);
        sum(&mut self.requests, other.requests);
        sum(&mut self.tag_requests, other.tag_requests);
        sum(&mut self.threads, other.threads);
        sum(&mut self.sectors, other.sectors);
        sum(&mut self.ideal_sectors, other.ideal_sectors);
        sum(&mut self.excess_sectors, other.excess_sectors);
        sum(&mut self.shared_wavefronts, other.shared_wavefronts);
        sum(&mut self.shared_ideal_wavefronts, other.shared_ideal_wavefronts);
        self.instructions += other.instructions;
    }
}

/// Every memory instruction of one launch by SASS offset and access kind, and the executions
/// of the function's first instruction (once per warp: what "in a loop" is measured against).
#[derive(Debug, Clone, Default)]
pub struct LaunchInstructions {
    /// Counters by SASS offset and access kind.
    pub instructions: BTreeMap<(u64, Op), Counters>,
    /// Executions of the function's first instruction.
    pub entry_executions: Option<f64>,
    /// Memory instructions whose PCs lie in another function of the launch (one it calls):
    /// counted, not attributed, since ncu names only the kernel.
    pub elsewhere: u32,
}

/// Why a launch has no per-instruction rows.
#[derive(Debug, Clone, PartialEq)]
pub enum NoCounters {
    /// The report was made without the SourceCounters section.
    Absent,
    /// The report has per-instruction metrics, but their PCs cannot be placed in the kernel.
    Unplaced(String),
}

/// One instruction's counters as the report has them, before splitting into parts.
#[derive(Default)]
struct Raw {
    space: Option<u32>,
    access: Option<u32>,
    bytes: Option<u32>,
    executions: Option<f64>,
    tag_requests: Option<f64>,
    threads: Option<f64>,
    sectors: Option<f64>,
    ideal_sectors: Option<f64>,
    excess_sectors: Option<f64>,
    wavefronts: Option<f64>,
    ideal_wavefronts: Option<f64>,
}

/// Split a launch's instanced metrics per instruction and access kind.
pub fn per_instruction(sc: &SourceCounters) -> Result<LaunchInstructions, NoCounters> {
    let metric = |names: &[&str]| {
        names.iter().find_map(|n| sc.instanced.iter().find(|(m, _)| &**m == *n).map(|(_, v)| v.as_slice()))
    };
    let memory = [SECTORS, SHARED_WAVEFRONTS, TAG_REQUESTS, SPACE];
    if memory.iter().all(|m| metric(m).is_none()) {
        return Err(match (sc.unplaced.first(), sc.function_pcs.first()) {
            (Some(m), Some(pc)) => NoCounters::Unplaced(format!(
                "the report has per-instruction counters (`{m}`…), but none at a PC of the kernel (start PC {pc:#x})"
            )),
            (Some(m), None) => NoCounters::Unplaced(format!(
                "the report has per-instruction counters (`{m}`…), but no `launch__function_pcs` to place them"
            )),
            (None, _) => NoCounters::Absent,
        });
    }
    let Some(&start) = sc.function_pcs.first() else {
        return Err(NoCounters::Unplaced("the report has no `launch__function_pcs`".into()));
    };
    // The kernel runs from its start PC to the next function's start (ncu lists the functions
    // a launch runs, the kernel first).
    let end = sc.function_pcs.iter().copied().filter(|&pc| pc > start).min().unwrap_or(u64::MAX);
    let mut all: BTreeMap<u64, Raw> = BTreeMap::new();
    let mut fill = |names: &[&str], set: &dyn Fn(&mut Raw, f64)| {
        for &(pc, v) in metric(names).unwrap_or_default() {
            set(all.entry(pc).or_default(), v);
        }
    };
    fill(SPACE, &|c, v| c.space = Some(v as u32));
    fill(ACCESS, &|c, v| c.access = Some(v as u32));
    fill(ACCESS_BITS, &|c, v| c.bytes = (v > 0.0).then_some((v / 8.0) as u32));
    fill(EXECUTIONS, &|c, v| c.executions = Some(v));
    fill(TAG_REQUESTS, &|c, v| c.tag_requests = Some(v));
    fill(THREADS, &|c, v| c.threads = Some(v));
    fill(SECTORS, &|c, v| c.sectors = Some(v));
    fill(IDEAL_SECTORS, &|c, v| c.ideal_sectors = Some(v));
    fill(EXCESS_SECTORS, &|c, v| c.excess_sectors = Some(v));
    fill(SHARED_WAVEFRONTS, &|c, v| c.wavefronts = Some(v));
    fill(SHARED_IDEAL, &|c, v| c.ideal_wavefronts = Some(v));
    let has_access = metric(ACCESS).is_some();
    let entry_executions = all.get(&start).and_then(|c| c.executions);
    let mut launch = LaunchInstructions { instructions: BTreeMap::new(), entry_executions, elsewhere: 0 };
    for (pc, raw) in all {
        let parts = parts(&raw, has_access);
        if parts.is_empty() {
            continue;
        }
        if pc < start || pc >= end {
            launch.elsewhere += 1;
            continue;
        }
        for (op, c) in parts {
            launch.instructions.insert((pc - start, op), c);
        }
    }
    Ok(launch)
}

/// The access kinds of one instruction with their counters; none for an instruction that
/// touches neither global nor shared memory.
fn parts(raw: &Raw, has_access: bool) -> Vec<(Op, Counters)> {
    let positive = |v: Option<f64>| v.is_some_and(|v| v > 0.0);
    let (global, shared) = match raw.space {
        Some(s) => (s & GLOBAL != 0, s & SHARED != 0),
        // Reports without `memory_type`: the counters say which space.
        None => (positive(raw.sectors) || positive(raw.tag_requests), positive(raw.wavefronts)),
    };
    let access = raw.access.unwrap_or(0);
    let (load, store) = (access & LOAD != 0, access & STORE != 0);
    let known = has_access;
    let mut out = Vec::new();
    let base = Counters {
        access_bytes: raw.bytes,
        executions: raw.executions,
        threads: raw.threads,
        instructions: 1,
        ..Counters::default()
    };
    if global {
        let op = match (known, load, store) {
            (false, _, _) => Op::Global,
            (true, true, false) => Op::GlobalLoad,
            (true, true, true) if shared => Op::GlobalLoad,
            (true, false, true) => Op::GlobalStore,
            (true, _, _) => Op::GlobalAtomic,
        };
        let excess = raw.excess_sectors.or_else(|| Some((raw.sectors? - raw.ideal_sectors?).max(0.0)));
        // An execution with every thread predicated off issues no request; one that moved no
        // sector at all issued none.
        let requests = if raw.sectors == Some(0.0) { Some(0.0) } else { raw.executions };
        out.push((
            op,
            Counters {
                requests,
                tag_requests: raw.tag_requests,
                sectors: raw.sectors,
                ideal_sectors: raw.ideal_sectors,
                excess_sectors: excess,
                ..base.clone()
            },
        ));
    }
    if shared {
        let op = match (known, load, store) {
            (false, _, _) => Op::Shared,
            (true, _, true) if global => Op::SharedStore,
            (true, true, false) => Op::SharedLoad,
            (true, false, true) => Op::SharedStore,
            (true, _, _) => Op::SharedAtomic,
        };
        out.push((
            op,
            Counters { shared_wavefronts: raw.wavefronts, shared_ideal_wavefronts: raw.ideal_wavefronts, ..base },
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn sc(pcs: Vec<u64>, metrics: &[(&str, &[(u64, f64)])]) -> SourceCounters {
        SourceCounters {
            function_pcs: pcs,
            instanced: metrics.iter().map(|(n, v)| (Arc::from(*n), v.to_vec())).collect(),
            ..SourceCounters::default()
        }
    }

    #[test]
    fn splits_per_offset_and_kind_and_keeps_absent_numbers_absent() {
        let s = sc(
            vec![0x1000],
            &[
                ("memory_type", &[(0x1000, 0.0), (0x1010, 4.0), (0x1020, 16.0), (0x1030, 20.0)]),
                ("memory_access_type", &[(0x1010, 2.0), (0x1020, 4.0), (0x1030, 6.0)]),
                ("memory_access_size_type", &[(0x1010, 32.0), (0x1020, 32.0), (0x1030, 128.0)]),
                ("inst_executed", &[(0x1000, 8.0), (0x1010, 16.0), (0x1020, 16.0), (0x1030, 4.0)]),
                ("memory_l1_tag_requests_global", &[(0x1010, 64.0), (0x1030, 16.0)]),
                ("memory_l2_theoretical_sectors_global", &[(0x1010, 512.0), (0x1030, 64.0)]),
                ("memory_l2_theoretical_sectors_global_ideal", &[(0x1010, 64.0), (0x1030, 64.0)]),
                ("memory_l1_wavefronts_shared", &[(0x1020, 512.0), (0x1030, 16.0)]),
                ("memory_l1_wavefronts_shared_ideal", &[(0x1020, 16.0), (0x1030, 16.0)]),
            ],
        );
        let l = per_instruction(&s).unwrap();
        assert_eq!(l.entry_executions, Some(8.0));
        let keys: Vec<(u64, Op)> = l.instructions.keys().copied().collect();
        assert_eq!(
            keys,
            vec![(0x10, Op::GlobalLoad), (0x20, Op::SharedStore), (0x30, Op::GlobalLoad), (0x30, Op::SharedStore)]
        );
        let g = &l.instructions[&(0x10, Op::GlobalLoad)];
        // Requests are the warp-level executions, not the tag requests (the lines looked up).
        assert_eq!(
            (g.requests, g.tag_requests, g.access_bytes, g.excess_sectors),
            (Some(16.0), Some(64.0), Some(4), Some(448.0))
        );
        assert_eq!(g.shared_wavefronts, None);
        let s = &l.instructions[&(0x20, Op::SharedStore)];
        assert_eq!((s.requests, s.shared_excess_wavefronts()), (None, Some(496.0)));
        let ldgsts = &l.instructions[&(0x30, Op::SharedStore)];
        assert_eq!((ldgsts.shared_wavefronts, ldgsts.sectors), (Some(16.0), None));
    }

    #[test]
    fn an_instruction_that_moved_no_sector_issued_no_request_and_atomics_are_their_own_kind() {
        let s = sc(
            vec![0x1000],
            &[
                ("memory_type", &[(0x1010, 4.0), (0x1020, 4.0)]),
                ("memory_access_type", &[(0x1010, 4.0)]),
                ("inst_executed", &[(0x1010, 100.0), (0x1020, 50.0)]),
                ("memory_l2_theoretical_sectors_global", &[(0x1010, 0.0), (0x1020, 50.0)]),
            ],
        );
        let l = per_instruction(&s).unwrap();
        assert_eq!(l.instructions[&(0x10, Op::GlobalStore)].requests, Some(0.0));
        assert_eq!(l.instructions[&(0x20, Op::GlobalAtomic)].requests, Some(50.0));
    }

    #[test]
    fn pcs_of_other_functions_are_counted_not_attributed() {
        // ncu 2025 lists every function a launch runs; the kernel's start is the first.
        let s = sc(
            vec![0x2000, 0x1000],
            &[
                ("memory_type", &[(0x1010, 4.0), (0x2010, 4.0)]),
                ("memory_access_type", &[(0x1010, 2.0), (0x2010, 2.0)]),
                ("inst_executed", &[(0x1010, 1.0), (0x2010, 1.0)]),
            ],
        );
        let l = per_instruction(&s).unwrap();
        assert_eq!(l.instructions.keys().copied().collect::<Vec<_>>(), vec![(0x10, Op::GlobalLoad)]);
        assert_eq!(l.elsewhere, 1);
    }

    #[test]
    fn no_instanced_memory_metrics_says_why() {
        assert_eq!(
            per_instruction(&sc(vec![0x1000], &[("inst_executed", &[(0x1000, 1.0)])])).err(),
            Some(NoCounters::Absent)
        );
        assert_eq!(per_instruction(&SourceCounters::default()).err(), Some(NoCounters::Absent));
        let unplaced = SourceCounters {
            function_pcs: vec![1],
            unplaced: vec![Arc::from("memory_type")],
            ..SourceCounters::default()
        };
        let Err(NoCounters::Unplaced(why)) = per_instruction(&unplaced) else { panic!("unplaced counters are said") };
        assert!(why.contains("memory_type") && why.contains("0x1"), "{why}");
    }

    #[test]
    fn summing_keeps_a_common_width_and_drops_a_mixed_one() {
        let a = Counters { access_bytes: Some(4), sectors: Some(4.0), instructions: 1, ..Counters::default() };
        let b = Counters { access_bytes: Some(16), sectors: None, instructions: 1, ..Counters::default() };
        let mut s = Counters::default();
        s.add(&a);
        s.add(&a);
        assert_eq!((s.access_bytes, s.sectors, s.instructions), (Some(4), Some(8.0), 2));
        s.add(&b);
        assert_eq!((s.access_bytes, s.sectors), (None, Some(8.0)));
    }
}
