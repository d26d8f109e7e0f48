//! Per-instruction counters out of a launch's [`SourceCounters`]: one [`Counters`] per memory
//! instruction, keyed by its SASS offset (PC − `launch__function_pcs`).
//!
//! The instanced metric names changed across ncu versions; each field takes the first name the
//! report has (2022+ first, then 2020–2021, then 2019), and stays `None` when none is there, so
//! a number the report lacks is absent, never 0. `memory_type` and `memory_access_type` are bit
//! sets (4 global, 16 shared; 2 load, 4 store): an `LDGSTS` is global and shared, load and store,
//! as the source page of ncu's CSV lists it.

use std::collections::BTreeMap;

use crate::parse::SourceCounters;

/// Field ← instanced metric names, newest first.
pub const REQUESTS: &[&str] = &["memory_l1_tag_requests_global"];
/// Global sectors fetched.
pub const SECTORS: &[&str] =
    &["memory_l2_theoretical_sectors_global", "memory_l2_sectors_global", "memory_l2_transactions_global"];
/// Global sectors perfectly coalesced accesses would fetch.
pub const IDEAL_SECTORS: &[&str] = &[
    "memory_l2_theoretical_sectors_global_ideal",
    "memory_l2_sectors_global_ideal",
    "memory_ideal_l2_transactions_global",
];
/// ncu's own count of sectors beyond the ideal.
pub const EXCESS_SECTORS: &[&str] =
    &["derived__memory_l2_theoretical_sectors_global_excessive", "derived__memory_l2_sectors_global_excessive"];
/// ncu 2020–2021 count shared accesses as "L1 Sectors Shared", later as wavefronts.
pub const SHARED_WAVEFRONTS: &[&str] = &["memory_l1_wavefronts_shared", "memory_l1_sectors_shared"];
/// Conflict-free shared wavefronts.
pub const SHARED_IDEAL: &[&str] = &["memory_l1_wavefronts_shared_ideal", "memory_l1_sectors_shared_ideal"];
/// Warp-level executions.
pub const EXECUTIONS: &[&str] = &["inst_executed"];
/// Bits per thread of an access.
pub const ACCESS_BITS: &[&str] = &["memory_access_size_type"];
/// The memory space (global, shared, local).
pub const SPACE: &[&str] = &["memory_type"];
/// Load, store or atomic.
pub const ACCESS: &[&str] = &["memory_access_type"];

pub(crate) const GLOBAL: u32 = 4;
pub(crate) const SHARED: u32 = 16;
pub(crate) const LOAD: u32 = 2;
pub(crate) const STORE: u32 = 4;

/// The counters of one instruction (or of several, summed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// Bit set of `GLOBAL` / `SHARED`; 0 when the report does not say.
    pub space: u32,
    /// Bit set of `LOAD` / `STORE`.
    pub access: u32,
    /// Bytes per thread; `None` when unknown or when summed instructions differ.
    pub access_bytes: Option<u32>,
    /// Warp-level executions.
    pub executions: Option<f64>,
    /// Global requests (L1 tag stage).
    pub requests: Option<f64>,
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
    /// Whether it accesses global memory.
    pub fn is_global(&self) -> bool {
        self.space & GLOBAL != 0 || (self.space == 0 && self.sectors.is_some())
    }

    /// Whether it accesses shared memory.
    pub fn is_shared(&self) -> bool {
        self.space & SHARED != 0 || (self.space == 0 && self.shared_wavefronts.is_some())
    }

    /// Whether it loads.
    pub fn is_load(&self) -> bool {
        self.access & LOAD != 0
    }

    /// Whether it stores.
    pub fn is_store(&self) -> bool {
        self.access & STORE != 0
    }

    /// `global load`, `shared store`, `global+shared load+store` (LDGSTS); `None` if unknown.
    pub fn op(&self) -> Option<String> {
        let space: Vec<&str> = [(self.is_global(), "global"), (self.is_shared(), "shared")]
            .into_iter()
            .filter_map(|(y, s)| y.then_some(s))
            .collect();
        let access: Vec<&str> = [(self.is_load(), "load"), (self.is_store(), "store")]
            .into_iter()
            .filter_map(|(y, s)| y.then_some(s))
            .collect();
        match (space.is_empty(), access.is_empty()) {
            (true, true) => None,
            (false, true) => Some(space.join("+")),
            (true, false) => Some(access.join("+")),
            (false, false) => Some(format!("{} {}", space.join("+"), access.join("+"))),
        }
    }

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
        self.space |= other.space;
        self.access |= other.access;
        sum(&mut self.executions, other.executions);
        sum(&mut self.requests, other.requests);
        sum(&mut self.sectors, other.sectors);
        sum(&mut self.ideal_sectors, other.ideal_sectors);
        sum(&mut self.excess_sectors, other.excess_sectors);
        sum(&mut self.shared_wavefronts, other.shared_wavefronts);
        sum(&mut self.shared_ideal_wavefronts, other.shared_ideal_wavefronts);
        self.instructions += other.instructions;
    }
}

/// Every memory instruction of one launch by SASS offset, and the executions of the
/// function's first instruction (once per warp: what "in a loop" is measured against).
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// Counters by SASS offset.
    pub instructions: BTreeMap<u64, Counters>,
    /// Executions of the function's first instruction.
    pub entry_executions: Option<f64>,
}

/// Split a launch's instanced metrics per instruction. `None` when the report has no
/// per-instruction counters for it (made without the SourceCounters section).
pub fn per_instruction(sc: &SourceCounters) -> Option<Launch> {
    let base = sc.function_pc?;
    let metric = |names: &[&str]| {
        names.iter().find_map(|n| sc.instanced.iter().find(|(m, _)| &**m == *n).map(|(_, v)| v.as_slice()))
    };
    let memory = [SECTORS, SHARED_WAVEFRONTS, REQUESTS, SPACE];
    if memory.iter().all(|m| metric(m).is_none()) {
        return None;
    }
    let mut all: BTreeMap<u64, Counters> = BTreeMap::new();
    let mut fill = |names: &[&str], set: &dyn Fn(&mut Counters, f64)| {
        for &(pc, v) in metric(names).unwrap_or_default() {
            if let Some(off) = pc.checked_sub(base) {
                set(all.entry(off).or_insert_with(|| Counters { instructions: 1, ..Counters::default() }), v);
            }
        }
    };
    fill(SPACE, &|c, v| c.space = v as u32);
    fill(ACCESS, &|c, v| c.access = v as u32);
    fill(ACCESS_BITS, &|c, v| c.access_bytes = (v > 0.0).then_some((v / 8.0) as u32));
    fill(EXECUTIONS, &|c, v| c.executions = Some(v));
    fill(REQUESTS, &|c, v| c.requests = Some(v));
    fill(SECTORS, &|c, v| c.sectors = Some(v));
    fill(IDEAL_SECTORS, &|c, v| c.ideal_sectors = Some(v));
    fill(EXCESS_SECTORS, &|c, v| c.excess_sectors = Some(v));
    fill(SHARED_WAVEFRONTS, &|c, v| c.shared_wavefronts = Some(v));
    fill(SHARED_IDEAL, &|c, v| c.shared_ideal_wavefronts = Some(v));
    let entry_executions = all.get(&0).and_then(|c| c.executions);
    let mut launch = Launch { instructions: BTreeMap::new(), entry_executions };
    for (off, mut c) in all {
        if c.excess_sectors.is_none() {
            if let (Some(s), Some(i)) = (c.sectors, c.ideal_sectors) {
                c.excess_sectors = Some((s - i).max(0.0));
            }
        }
        let memory_space = if c.space != 0 {
            c.space & (GLOBAL | SHARED) != 0
        } else {
            [c.requests, c.sectors, c.shared_wavefronts].iter().any(|v| v.is_some_and(|v| v > 0.0))
        };
        if memory_space {
            launch.instructions.insert(off, c);
        }
    }
    Some(launch)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn sc(metrics: &[(&str, &[(u64, f64)])]) -> SourceCounters {
        SourceCounters {
            function_pc: Some(0x1000),
            instanced: metrics.iter().map(|(n, v)| (Arc::from(*n), v.to_vec())).collect(),
            ..SourceCounters::default()
        }
    }

    #[test]
    fn splits_per_offset_and_keeps_absent_numbers_absent() {
        let s = sc(&[
            ("memory_type", &[(0x1000, 0.0), (0x1010, 4.0), (0x1020, 16.0)]),
            ("memory_access_type", &[(0x1010, 2.0), (0x1020, 4.0)]),
            ("memory_access_size_type", &[(0x1010, 32.0), (0x1020, 32.0)]),
            ("inst_executed", &[(0x1000, 8.0), (0x1010, 16.0), (0x1020, 16.0)]),
            ("memory_l1_tag_requests_global", &[(0x1010, 16.0)]),
            ("memory_l2_theoretical_sectors_global", &[(0x1010, 512.0)]),
            ("memory_l2_theoretical_sectors_global_ideal", &[(0x1010, 64.0)]),
            ("memory_l1_wavefronts_shared", &[(0x1020, 512.0)]),
            ("memory_l1_wavefronts_shared_ideal", &[(0x1020, 16.0)]),
        ]);
        let l = per_instruction(&s).unwrap();
        assert_eq!(l.entry_executions, Some(8.0));
        assert_eq!(l.instructions.keys().copied().collect::<Vec<_>>(), vec![0x10, 0x20]);
        let g = &l.instructions[&0x10];
        assert_eq!((g.op().as_deref(), g.access_bytes, g.excess_sectors), (Some("global load"), Some(4), Some(448.0)));
        assert_eq!(g.shared_wavefronts, None);
        let s = &l.instructions[&0x20];
        assert_eq!(
            (s.op().as_deref(), s.requests, s.shared_excess_wavefronts()),
            (Some("shared store"), None, Some(496.0))
        );
    }

    #[test]
    fn no_instanced_memory_metrics_is_none() {
        assert!(per_instruction(&sc(&[("inst_executed", &[(0x1000, 1.0)])])).is_none());
        assert!(per_instruction(&SourceCounters::default()).is_none());
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
