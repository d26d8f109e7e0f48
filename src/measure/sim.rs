//! GPGPU-Sim's statistics as coalprof's counters (`--backend sim`). The simulator executes the
//! kernels' PTX, not SASS, and counts per PTX line, summed over its whole process: each line's
//! statistics are summed into the raw counters of `metrics.toml` under the names ncu's rows carry
//! ([`kernel_records`]), from where the pipeline is a measured run's (`measure::Rows`, the one
//! derivation), rows marked `simulated`; and into each kernel's memory lines ([`sim_kernels`])
//! for `lines`' per-source-line rows.
//!
//! The simulator's other jobs, each in a file of `sim/`: running it in a folder (`run.rs`), the
//! built-in patterns under it (`patterns.rs`, `run --backend sim`), a user's program under it
//! (`program.rs`, `profile --backend sim`), and the `lines` of the folders such a run saved
//! (`saved_lines.rs`).

mod patterns;
mod program;
mod run;
mod saved_lines;

pub(crate) use patterns::{simulate, Permits, Simulator};
pub(crate) use program::{simulate_program, Program};
pub(crate) use run::check_mode;
pub(crate) use saved_lines::{line_report, sim_folder};

// What the files of `sim/` take from `measure` (they name it `super::`, as they did here).
use super::{kernel_args, launch_facts, Rows};

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::Result;
use crate::frame::launches::{rows_of, Grouping};
use crate::frame::{Derivation, MeasuredBy};
use crate::metrics::Catalogue;
use crate::parse::gpgpusim::SimRun;
use crate::parse::gpgpusim::{Access, LoadOrStore, PtxInstruction, Space};
use crate::parse::{LaunchRecord, Value};
use crate::results::{Row, Source};
use crate::tools::gpgpusim::{GpgpuSim, CONFIG};

/// Kernels of the harness (buffer fills, the checksum): never a row.
const HARNESS_PREFIX: &str = "coalprof_init_";

/// The raw counters (`metrics.toml` keys) the simulator gives a kernel, each where the kernel
/// made such an access ([`KernelCounters::add_line`]): every other one (L2 and DRAM traffic, time)
/// it never measures, which is said once as such, not as missing from the input.
pub(crate) const MEASURES: &[&str] = &[
    "global_load_requests",
    "global_load_sectors",
    "global_load_instructions",
    "global_load_bytes_requested",
    "global_store_requests",
    "global_store_sectors",
    "shared_load_instructions",
    "shared_load_wavefronts",
    "shared_load_bank_conflicts",
    "shared_store_instructions",
    "shared_store_wavefronts",
    "shared_store_bank_conflicts",
];

/// The simulator as a backend of rows, for the derivation's notices.
pub(crate) const BACKEND: MeasuredBy<'static> = MeasuredBy { name: "GPGPU-Sim", measures: MEASURES };

/// The compute capability of the device the simulator's configuration models (a V100's).
pub(crate) const SIM_CC: &str = "7.0";

/// The device a simulated record names.
pub(crate) fn device_name() -> String {
    format!("GPGPU-Sim {CONFIG}")
}

/// The raw counters of one kernel, summed over its PTX lines, under `metrics.toml`'s keys.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KernelCounters {
    pub values: BTreeMap<&'static str, f64>,
}

impl KernelCounters {
    fn add(&mut self, key: &'static str, v: f64) {
        *self.values.entry(key).or_default() += v;
    }

    /// One line's statistics, by what its instruction accesses.
    pub(crate) fn add_line(&mut self, a: Access, st: &crate::parse::gpgpusim::LineStats) {
        let bytes = f64::from(a.bytes);
        match (a.space, a.direction) {
            (Space::Global, dir) if st.global_warps > 0 => {
                let p = if dir == LoadOrStore::Load { "global_load" } else { "global_store" };
                self.add(key(p, "requests"), st.global_warps as f64);
                self.add(key(p, "sectors"), st.global_sectors as f64);
                if dir == LoadOrStore::Load {
                    self.add("global_load_instructions", st.global_warps as f64);
                    self.add("global_load_bytes_requested", st.executions as f64 * bytes);
                }
            }
            (Space::Shared, dir) if st.shared_warps > 0 => {
                let p = if dir == LoadOrStore::Load { "shared_load" } else { "shared_store" };
                // Conflict-free: ceil(active lanes × bytes / 128) per instruction, at least one.
                let ideal = (st.shared_warps as f64).max((st.executions as f64 * bytes / 128.0).ceil());
                self.add(key(p, "instructions"), st.shared_warps as f64);
                self.add(key(p, "wavefronts"), st.shared_wavefronts as f64);
                self.add(key(p, "bank_conflicts"), st.shared_wavefronts as f64 - ideal);
            }
            _ => {}
        }
    }
}

/// `global_load` + `sectors` → `global_load_sectors` (the keys are a closed set).
fn key(prefix: &str, what: &str) -> &'static str {
    MEASURES
        .iter()
        .copied()
        .find(|k| k.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')) == Some(what))
        .unwrap_or("")
}

/// The instruction of a statistics line, if the PTX it names was read.
pub(crate) fn instruction<'a>(run: &'a SimRun, file: &str, line: u32) -> Option<&'a PtxInstruction> {
    run.ptx.iter().find(|(n, _)| n == file).and_then(|(_, p)| p.instructions.get(&line))
}

/// Each kernel's counters (by the PTX's name), harness kernels left out. Lines of device
/// functions that were not inlined belong to no kernel: they are logged and left out.
pub(crate) fn kernel_counters(run: &SimRun) -> BTreeMap<String, KernelCounters> {
    let mut out: BTreeMap<String, KernelCounters> = BTreeMap::new();
    let mut orphans = 0u64;
    for st in &run.stats {
        let Some(inst) = instruction(run, &st.ptx_file, st.ptx_line) else {
            orphans += st.global_warps + st.shared_warps;
            continue;
        };
        if inst.function.starts_with(HARNESS_PREFIX) {
            continue;
        }
        if !inst.is_entry {
            orphans += st.global_warps + st.shared_warps;
            continue;
        }
        let c = out.entry(inst.function.clone()).or_default();
        if let Some(a) = inst.access {
            c.add_line(a, st);
        }
    }
    if orphans > 0 {
        tracing::warn!(
            "{orphans} memory instructions ran in device functions that were not inlined: no kernel counts them"
        );
    }
    // A kernel the log launched but whose lines made no memory access still gets a row.
    for l in &run.launches {
        if !l.kernel.starts_with(HARNESS_PREFIX) {
            out.entry(l.kernel.clone()).or_default();
        }
    }
    out
}

/// One record per kernel the process ran (harness kernels left out): its counters under the
/// names ncu's rows carry, its launch count and, when every launch had the same shape, its grid
/// and block. Values are per launch (the records' convention: totals are value × launches).
pub(crate) fn kernel_records(run: &SimRun, catalogue: &Catalogue) -> Vec<LaunchRecord> {
    let counters = kernel_counters(run);
    let mut out = Vec::new();
    for (kernel, c) in counters {
        let launches: Vec<_> = run.launches.iter().filter(|l| l.kernel == kernel).collect();
        let n = launches.len().max(1) as u64;
        let same = |f: fn(&crate::parse::gpgpusim::SimLaunch) -> [u32; 3]| {
            let first = f(launches.first()?);
            launches.iter().all(|l| f(l) == first).then_some(first)
        };
        let mut r = LaunchRecord::new(kernel.clone());
        r.grid = same(|l| l.grid);
        r.block = same(|l| l.block);
        r.device = Some(device_name());
        r.cc = Some(SIM_CC.into());
        r.launches = n;
        for (k, v) in &c.values {
            if let Some(raw) = catalogue.raw.get(*k) {
                r.metrics.push((Arc::from(raw.ncu.as_str()), Value::Number { value: v / n as f64, unit: "" }));
            }
        }
        out.push(r);
    }
    out
}

/// Rows of the simulator's per-kernel records (`profile --backend sim`): grouped per kernel
/// through the sanity check, derived, broken counters taken out and named; the notices with them.
pub(crate) fn kernel_rows(
    records: Vec<LaunchRecord>,
    catalogue: &Catalogue,
    derivation: &Derivation,
) -> Result<(Vec<Row>, Vec<String>)> {
    let names = catalogue.ncu_names();
    let (rows, notices, _) =
        rows_of(records.into_iter(), &names, Grouping::PerKernel, derivation, (Source::Simulated, Some(&BACKEND)))?;
    Ok((rows, notices))
}

/// Each kernel's memory lines (harness kernels left out), named by `names` (mangled →
/// demangled), for the per-source-line rows.
pub(crate) fn sim_kernels(run: &SimRun, names: &BTreeMap<String, String>) -> Vec<crate::lines::sim::SimKernel> {
    let mut by_kernel: BTreeMap<&str, Vec<crate::lines::sim::SimLine>> = BTreeMap::new();
    for st in &run.stats {
        let Some(inst) = instruction(run, &st.ptx_file, st.ptx_line) else { continue };
        let Some(access) = inst.access else { continue };
        if !inst.is_entry || inst.function.starts_with(HARNESS_PREFIX) {
            continue;
        }
        // An access inside a library (`__ldg`, `__stcs` in `sm_32_intrinsics.hpp`; CUB, Thrust,
        // cooperative groups) belongs to the user's line that called it, the library's line kept
        // beside it: `lines::frames`' rule, which `.ncu-rep` reports follow too.
        let chain: Vec<(String, u32)> = inst.source.iter().chain(&inst.call_sites).cloned().collect();
        let (source, header) = match crate::lines::frames::attribute(&chain, |(f, _)| f.as_str()) {
            Some(a) => (Some(a.at), a.via),
            None => (None, None),
        };
        by_kernel.entry(&inst.function).or_default().push(crate::lines::sim::SimLine {
            source,
            header,
            ptx: (st.ptx_file.clone(), st.ptx_line),
            access,
            stats: st.clone(),
        });
    }
    by_kernel
        .into_iter()
        .map(|(k, lines)| crate::lines::sim::SimKernel {
            kernel: names.get(k).cloned().unwrap_or_else(|| k.to_string()),
            launches: run.launches.iter().filter(|l| l.kernel == k).count().max(1) as u64,
            lines,
        })
        .collect()
}

/// Mangled → demangled, for every kernel the run names.
pub(crate) fn demangled(run: &SimRun, sim: Option<&GpgpuSim>) -> BTreeMap<String, String> {
    let mut names: Vec<String> =
        run.stats.iter().filter_map(|s| Some(instruction(run, &s.ptx_file, s.ptx_line)?.function.clone())).collect();
    names.extend(run.launches.iter().map(|l| l.kernel.clone()));
    names.sort();
    names.dedup();
    let pretty = match sim {
        Some(sim) => sim.demangle(&names),
        None => names.clone(),
    };
    names.into_iter().zip(pretty).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::gpgpusim::{LineStats, Ptx, SimLaunch};
    use std::time::Duration;

    fn run(ptx: &str, stats: &[(u32, LineStats)]) -> SimRun {
        SimRun {
            log: String::new(),
            launches: vec![SimLaunch { kernel: "k".into(), grid: [2, 1, 1], block: [64, 1, 1] }],
            stats: stats
                .iter()
                .map(|(l, s)| LineStats { ptx_file: "a.ptx".into(), ptx_line: *l, ..s.clone() })
                .collect(),
            ptx: vec![("a.ptx".into(), Ptx::parse(ptx))],
            elapsed: Duration::ZERO,
        }
    }

    const PTX: &str = ".visible .entry k(\n.param .u64 p\n)\n{\nld.global.v2.f32 {%f1, %f2}, [%rd1];\nst.global.f32 [%rd2], %f1;\nld.shared.u32 %r1, [%r2];\nadd.s32 %r1, %r1, 1;\n}\n\
                       .visible .entry coalprof_init_zero(\n)\n{\nst.global.u32 [%rd2], %r1;\n}\n";

    #[test]
    fn lines_sum_into_the_kernels_raw_counters_by_their_access() {
        let r = run(
            PTX,
            &[
                (5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() }),
                (6, LineStats { executions: 128, global_sectors: 16, global_warps: 4, ..Default::default() }),
                (7, LineStats { executions: 128, shared_wavefronts: 64, shared_warps: 4, ..Default::default() }),
                (8, LineStats { executions: 128, ..Default::default() }),
                (13, LineStats { executions: 64, global_sectors: 8, global_warps: 2, ..Default::default() }),
            ],
        );
        let c = kernel_counters(&r);
        assert_eq!(c.keys().collect::<Vec<_>>(), ["k"], "the harness kernel is no row");
        let v = &c["k"].values;
        assert_eq!(v["global_load_sectors"], 32.0);
        assert_eq!(v["global_load_requests"], 4.0);
        assert_eq!(v["global_load_instructions"], 4.0);
        assert_eq!(v["global_load_bytes_requested"], 128.0 * 8.0, "lanes × the vector's 8 bytes");
        assert_eq!((v["global_store_sectors"], v["global_store_requests"]), (16.0, 4.0));
        assert_eq!((v["shared_load_wavefronts"], v["shared_load_instructions"]), (64.0, 4.0));
        assert_eq!(v["shared_load_bank_conflicts"], 60.0, "16 wavefronts where 1 would do, 4 times");
        assert!(!v.contains_key("shared_store_instructions"), "no shared store ran: absent, not 0");
    }

    #[test]
    fn records_carry_ncu_names_per_launch_values_and_the_launch_shape() {
        let mut r =
            run(PTX, &[(5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() })]);
        r.launches.push(r.launches[0].clone());
        let recs = kernel_records(&r, &Catalogue::builtin());
        assert_eq!(recs.len(), 1);
        let rec = &recs[0];
        assert_eq!((rec.launches, rec.grid, rec.block), (2, Some([2, 1, 1]), Some([64, 1, 1])));
        let sectors = Catalogue::builtin().raw["global_load_sectors"].ncu.clone();
        assert_eq!(rec.metric(&sectors).and_then(Value::number), Some(16.0), "32 sectors over 2 launches");
        r.launches[1].grid = [3, 1, 1];
        assert_eq!(kernel_records(&r, &Catalogue::builtin())[0].grid, None, "shapes differ: no one grid");
    }

    #[test]
    fn counters_the_simulator_never_measures_are_said_once_as_such_not_as_missing_input() {
        let r = run(
            PTX,
            &[
                (5, LineStats { executions: 128, global_sectors: 32, global_warps: 4, ..Default::default() }),
                (6, LineStats { executions: 128, global_sectors: 16, global_warps: 4, ..Default::default() }),
                (7, LineStats { executions: 128, shared_wavefronts: 64, shared_warps: 4, ..Default::default() }),
            ],
        );
        let values = &kernel_counters(&r)["k"].values;
        assert!(values.keys().all(|k| MEASURES.contains(k)), "{values:?} are all declared measured");
        let catalogue = Catalogue::builtin();
        let derivation = Derivation::new(&catalogue).unwrap();
        let rows = || {
            let mut row = Row::new("k", Source::Simulated);
            row.metrics = values.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            let mut rows = vec![row];
            derivation.fill(&mut rows).unwrap();
            rows
        };
        let notices = derivation.notices_by(&mut rows(), Some(&BACKEND));
        assert_eq!(notices.len(), 1, "{notices:?}");
        let n = &notices[0];
        assert!(n.starts_with("not measured by GPGPU-Sim: "), "{n}");
        for never in ["dram_bytes_read", "dram_bytes_write", "duration", "l2_read_sectors"] {
            assert!(n.contains(never), "{never}: {n}");
        }
        // No shared store ran: the simulator counted none, which is no gap in the input.
        assert!(!n.contains("shared_store") && !n.contains("not in the input"), "{n}");
        // The same rows from an unknown source: every gap is the input's.
        let plain = derivation.notices(&mut rows());
        assert!(plain.len() == 1 && plain[0].starts_with("not in the input: "), "{plain:?}");
        assert!(plain[0].contains("shared_store_instructions") && plain[0].contains("dram_bytes_read"), "{plain:?}");
    }

    /// The sanity check runs on simulated rows: a statistics file (as the simulator writes it)
    /// whose load made fewer sectors than requests gives a row without those counters and a notice.
    fn sanity_on(stats: &str) -> (Vec<Row>, Vec<String>) {
        let stats = crate::parse::gpgpusim::parse_inst_stats(stats).unwrap();
        let r = run(PTX, &stats.iter().map(|s| (s.ptx_line, s.clone())).collect::<Vec<_>>());
        let c = Catalogue::builtin();
        kernel_rows(kernel_records(&r, &c), &c, &Derivation::new(&c).unwrap()).unwrap()
    }

    #[test]
    fn simulated_rows_pass_the_sanity_check() {
        // FILE LINE : count latency dram_traffic smem_bk_conflicts smem_warp gmem_access_generated gmem_warp …
        let (rows, notices) = sanity_on("kernel line : count latency dram_traffic\na.ptx 5 : 128 0 0 0 0 2 4 0 0\n");
        assert_eq!(rows.len(), 1);
        assert!(
            notices.iter().any(|n| n.contains("global_load_sectors 2 is below global_load_requests 4")),
            "{notices:?}"
        );
        assert!(!rows[0].metrics.contains_key("global_load_sectors"), "{:?}", rows[0].metrics);
        assert!(rows[0].broken.contains_key("global_load_sectors"), "{:?}", rows[0].broken);
        // The same line with sectors ≥ requests is a row like any other.
        let (rows, notices) = sanity_on("a.ptx 5 : 128 0 0 0 0 8 4 0 0\n");
        assert!(notices.iter().all(|n| !n.contains("below")), "{notices:?}");
        assert_eq!(rows[0].metrics.get("global_load_sectors").copied(), Some(8.0));
    }
}
