//! Launches → rows: launches of one kernel and launch shape summed per SASS offset (as
//! `analyze` sums counters, so every ratio is a ratio of sums), then attributed to source lines
//! through the cubin, ranked by excess sectors with each row's share of its kernel's excess, and
//! diagnosed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::cubin::{Cubin, Location};
use super::diagnose::{diagnose, sectors_per_request, Waste};
use super::instructions::{per_instruction, Counters, Launch};
use super::source::Sources;
use crate::parse::{LaunchRecord, SourceCounters};

/// Version of the JSON layout of [`LineReport`].
pub(crate) const SCHEMA: &str = "coalprof-lines/1";

/// Rows per source line, or per SASS instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum By {
    /// One row per source line.
    #[default]
    Line,
    /// One row per SASS instruction.
    Instruction,
}

/// What `lines` was asked for.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only kernels whose name matches.
    pub kernel: Option<regex::Regex>,
    /// Rows per kernel; `None` = all.
    pub top: Option<usize>,
    /// One row per launch instead of summing the launches of a kernel.
    pub per_launch: bool,
    /// Rows per line or per instruction.
    pub by: By,
}

/// SASS text per function name and offset (nvdisasm's), when a disassembler is at hand.
pub(crate) type Sass = BTreeMap<String, BTreeMap<u64, String>>;

/// One row: a source line (or an instruction) of one kernel (or one launch).
#[derive(Debug, Clone, Serialize, Default)]
pub struct LineRow {
    /// The kernel, as ncu names it.
    pub kernel: String,
    /// The rank whose report the row comes from (`rank-3.ncu-rep`), else null.
    pub rank: Option<u32>,
    /// The launch's id with `--per-launch`, else null.
    pub launch: Option<u64>,
    /// How many launches the numbers sum.
    pub launches: u64,
    /// The source file, as the line table names it.
    pub file: Option<String>,
    /// The line in it.
    pub line: Option<u32>,
    /// The file relative to the source root, when it resolves there.
    pub path: Option<String>,
    /// Null when grouped by line.
    pub pc_offset: Option<u64>,
    /// The instruction's SASS (instruction rows).
    pub sass: Option<String>,
    /// What the row's memory instructions do (`global load`, `shared store`).
    pub op: Option<String>,
    /// Bytes per thread of its accesses, when all agree.
    pub access_bytes: Option<u32>,
    /// Memory instructions the row sums (1 for an instruction row).
    pub instructions: u32,
    /// Warp-level executions of its instructions.
    #[serde(serialize_with = "count")]
    pub executions: Option<f64>,
    /// Global requests (L1 tag stage).
    #[serde(serialize_with = "count")]
    pub requests: Option<f64>,
    /// L2 sectors its global accesses fetch.
    #[serde(serialize_with = "count")]
    pub sectors: Option<f64>,
    /// The sectors perfectly coalesced accesses would fetch.
    #[serde(serialize_with = "count")]
    pub ideal_sectors: Option<f64>,
    /// Sectors beyond the ideal.
    #[serde(serialize_with = "count")]
    pub excess_sectors: Option<f64>,
    /// This row's share of its kernel's excess sectors (0–1).
    pub excess_share: Option<f64>,
    /// Sectors per global request.
    pub sectors_per_request: Option<f64>,
    /// The ideal sectors per request for its addresses.
    pub ideal_sectors_per_request: Option<f64>,
    /// Shared-memory wavefronts.
    #[serde(serialize_with = "count")]
    pub shared_wavefronts: Option<f64>,
    /// The wavefronts a conflict-free access would take.
    #[serde(serialize_with = "count")]
    pub shared_ideal_wavefronts: Option<f64>,
    /// Wavefronts beyond the ideal (bank conflicts).
    #[serde(serialize_with = "count")]
    pub shared_excess_wavefronts: Option<f64>,
    /// The line's code, when the source was found.
    pub source: Option<String>,
    /// What the numbers mean, in plain words.
    pub diagnosis: Option<String>,
    /// The rule the diagnosis is a finding of (`CP1001`…), null for advice or none.
    pub rule: Option<&'static str>,
    /// What the diagnosis weighs (excess sectors or wavefronts).
    #[serde(skip)]
    pub waste: Option<Waste>,
    /// The row's global loads (LDGSTS included) and global stores alone, for per-line metrics.
    #[serde(skip)]
    pub global_loads: Counters,
    /// The row's global stores alone.
    #[serde(skip)]
    pub global_stores: Counters,
}

/// Counters are whole numbers: print them as integers, absent as null.
fn count<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(*x as i64),
        Some(x) => s.serialize_f64(*x),
        None => s.serialize_none(),
    }
}

/// The rows of every kernel, and what could not be attributed.
#[derive(Debug, Clone, Serialize)]
pub struct LineReport {
    /// The JSON schema name (`coalprof-lines/1`).
    pub schema: &'static str,
    /// Every row, worst first within each kernel.
    pub rows: Vec<LineRow>,
    /// What could not be attributed, and why.
    pub notices: Vec<String>,
    /// The GPU architecture the reports ran on (`sm_80`), when they say.
    #[serde(skip)]
    pub arch: Option<String>,
}

/// What makes launches one group: process, kernel, grid, block (as `analyze`), and the launch
/// id with `--per-launch`.
type GroupKey = (Option<String>, Option<u32>, String, Option<[u32; 3]>, Option<[u32; 3]>, Option<u64>);

/// One kernel (or launch) being summed.
struct Group {
    kernel: String,
    rank: Option<u32>,
    launch: Option<u64>,
    launches: u64,
    mangled: Option<String>,
    cubin: Option<Arc<[u8]>>,
    counters: Launch,
}

/// Build the report from the launches of every input. `disassemble` gives SASS text for a
/// cubin (nvdisasm), or `None` when it cannot.
pub fn build(
    launches: impl IntoIterator<Item = (LaunchRecord, SourceCounters)>,
    opts: &Options,
    sources: &mut Sources,
    disassemble: &mut dyn FnMut(&[u8]) -> Option<Sass>,
) -> LineReport {
    let mut notices = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<GroupKey, usize> = HashMap::new();
    let mut without: BTreeMap<String, u64> = BTreeMap::new();
    let mut arch = None;
    for (rec, sc) in launches {
        if opts.kernel.as_ref().is_some_and(|re| !re.is_match(&rec.kernel)) {
            continue;
        }
        arch = arch.or(sc.sm_revision.map(|r| format!("sm_{r}")));
        sources.embed(&sc.sources);
        let Some(counters) = per_instruction(&sc) else {
            *without.entry(rec.kernel.clone()).or_default() += 1;
            continue;
        };
        let launch = opts.per_launch.then_some(rec.id).flatten();
        let key = (rec.process.clone(), rec.rank, rec.kernel.clone(), rec.grid, rec.block, launch);
        match index.get(&key) {
            Some(&i) if !opts.per_launch => {
                let g = &mut groups[i];
                g.launches += rec.launches;
                for (off, c) in counters.instructions {
                    let e = g.counters.instructions.entry(off).or_default();
                    let n = e.instructions.max(1);
                    e.add(&c);
                    e.instructions = n;
                }
                g.counters.entry_executions = match (g.counters.entry_executions, counters.entry_executions) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            _ => {
                index.insert(key, groups.len());
                groups.push(Group {
                    kernel: rec.kernel.clone(),
                    rank: rec.rank,
                    launch,
                    launches: rec.launches,
                    mangled: sc.mangled.clone(),
                    cubin: sc.cubin.clone(),
                    counters,
                });
            }
        }
    }
    for (k, n) in without {
        notices.push(format!(
            "`{k}`: {n} launch(es) without per-instruction counters (profile with `--section SourceCounters` \
             or `--set full`)"
        ));
    }

    let mut cubins: HashMap<*const u8, (Option<Cubin>, Option<Sass>)> = HashMap::new();
    let mut rows = Vec::new();
    for g in &groups {
        let empty = (None, None);
        let (cubin, sass) = match &g.cubin {
            Some(bytes) => &*cubins.entry(bytes.as_ptr()).or_insert_with(|| match Cubin::parse(bytes) {
                Ok(c) => (Some(c), disassemble(bytes)),
                Err(e) => {
                    notices.push(format!("`{}`: {e}; rows are SASS offsets", g.kernel));
                    (None, None)
                }
            }),
            None => {
                notices.push(format!("`{}`: the report holds no cubin; rows are SASS offsets", g.kernel));
                &empty
            }
        };
        let function = cubin.as_ref().and_then(|c| {
            g.mangled
                .as_deref()
                .and_then(|m| c.functions.iter().find(|f| f.name == m))
                .or_else(|| c.function(&g.kernel))
        });
        if let Some(c) = cubin {
            match function {
                None => notices.push(format!(
                    "`{}`: no function of its cubin matches the kernel; rows are SASS offsets",
                    g.kernel
                )),
                Some(f) if !f.has_lines() => {
                    let why = c.notices.first().cloned().unwrap_or_else(|| {
                        "the kernel was built without `-lineinfo`: rows are SASS instructions, not source lines \
                         (rebuild with `nvcc -lineinfo`)"
                            .into()
                    });
                    notices.push(format!("`{}`: {why}", g.kernel));
                }
                Some(_) => notices.extend(c.notices.iter().map(|n| format!("`{}`: {n}", g.kernel))),
            }
        }
        let locate = |off: u64| -> Option<Location> { cubin.as_ref()?.location(function?, off) };
        let sass_of = |off: u64| -> Option<String> { sass.as_ref()?.get(&function?.name)?.get(&off).cloned() };
        let in_loop = |c: &Counters| match (c.executions, g.counters.entry_executions) {
            (Some(e), Some(entry)) => e > entry * 1.01 * f64::from(c.instructions.max(1)),
            _ => false,
        };
        let total_excess: Option<f64> =
            g.counters.instructions.values().filter_map(|c| c.excess_sectors).reduce(|a, b| a + b);

        let mut keyed: BTreeMap<(Option<Location>, Option<u64>), [Counters; 3]> = BTreeMap::new();
        for (&off, c) in &g.counters.instructions {
            if c.executions == Some(0.0) {
                continue;
            }
            let loc = locate(off);
            let key = match (opts.by, loc) {
                (By::Line, Some(l)) => (Some(l), None),
                (_, loc) => (loc, Some(off)),
            };
            let parts = keyed.entry(key).or_default();
            parts[0].add(c);
            if c.is_global() && c.is_load() {
                parts[1].add(c);
            } else if c.is_global() && c.is_store() {
                parts[2].add(c);
            }
        }
        let mut kernel_rows: Vec<LineRow> = keyed
            .into_iter()
            .map(|((loc, off), [c, global_loads, global_stores])| {
                let (file, line) = loc.map(|l| (Some(l.file), Some(l.line))).unwrap_or_default();
                let resolved = file.as_deref().and_then(|f| sources.resolve(f).relative.clone());
                let source = match (&file, line) {
                    (Some(f), Some(l)) => sources.line(f, l),
                    _ => None,
                };
                let finding = diagnose(&c, in_loop(&c));
                let spr = sectors_per_request(&c);
                LineRow {
                    kernel: g.kernel.clone(),
                    rank: g.rank,
                    launch: g.launch,
                    launches: g.launches,
                    file,
                    line,
                    path: resolved,
                    pc_offset: off,
                    sass: off.and_then(sass_of),
                    op: c.op(),
                    access_bytes: c.access_bytes,
                    instructions: c.instructions,
                    executions: c.executions,
                    requests: c.requests,
                    sectors: c.sectors,
                    ideal_sectors: c.ideal_sectors,
                    excess_sectors: c.excess_sectors,
                    excess_share: match (c.excess_sectors, total_excess) {
                        (Some(e), Some(t)) if t > 0.0 => Some(e / t),
                        _ => None,
                    },
                    sectors_per_request: spr.map(|s| s.0),
                    ideal_sectors_per_request: spr.and_then(|s| s.1),
                    shared_wavefronts: c.shared_wavefronts,
                    shared_ideal_wavefronts: c.shared_ideal_wavefronts,
                    shared_excess_wavefronts: c.shared_excess_wavefronts(),
                    source,
                    rule: finding.as_ref().and_then(|f| f.waste).map(Waste::id),
                    waste: finding.as_ref().and_then(|f| f.waste),
                    diagnosis: finding.map(|f| f.text),
                    global_loads,
                    global_stores,
                }
            })
            .collect();
        kernel_rows.sort_by(|a, b| {
            // Waste first; among equals, the heaviest traffic; then by place, for stable output.
            let key = |r: &LineRow| {
                let traffic = r.sectors.unwrap_or(0.0) + r.shared_wavefronts.unwrap_or(0.0);
                (r.excess_sectors.unwrap_or(-1.0), r.shared_excess_wavefronts.unwrap_or(-1.0), traffic)
            };
            let (ka, kb) = (key(a), key(b));
            kb.0.total_cmp(&ka.0)
                .then(kb.1.total_cmp(&ka.1))
                .then(kb.2.total_cmp(&ka.2))
                .then((&a.file, a.line, a.pc_offset).cmp(&(&b.file, b.line, b.pc_offset)))
        });
        if let Some(n) = opts.top {
            kernel_rows.truncate(n);
        }
        rows.extend(kernel_rows);
    }
    let unresolved: Vec<String> = {
        let mut v: Vec<String> = rows.iter().filter(|r| r.source.is_none()).filter_map(|r| r.file.clone()).collect();
        v.sort();
        v.dedup();
        v
    };
    if !unresolved.is_empty() {
        notices.push(format!(
            "source text left out: not embedded in the report and not found under the source root: {}",
            unresolved.join(", ")
        ));
    }
    LineReport { schema: SCHEMA, rows, notices, arch }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(id: u64, kernel: &str, cubin: Option<&[u8]>, sectors: f64) -> (LaunchRecord, SourceCounters) {
        let pc = 0x1000u64;
        let m = |n: &str, v: f64| (Arc::from(n), vec![(pc + 0x10, v)]);
        let rec =
            LaunchRecord { id: Some(id), grid: Some([1, 1, 1]), block: Some([32, 1, 1]), ..LaunchRecord::new(kernel) };
        let sc = SourceCounters {
            function_pc: Some(pc),
            instanced: vec![
                m("memory_type", 4.0),
                m("memory_access_type", 2.0),
                m("memory_access_size_type", 32.0),
                m("inst_executed", 1.0),
                m("memory_l1_tag_requests_global", 1.0),
                m("memory_l2_theoretical_sectors_global", sectors),
                m("memory_l2_theoretical_sectors_global_ideal", 4.0),
            ],
            cubin: cubin.map(Arc::from),
            ..SourceCounters::default()
        };
        (rec, sc)
    }

    fn run(launches: Vec<(LaunchRecord, SourceCounters)>, opts: &Options) -> LineReport {
        let mut sources = Sources::new(std::env::temp_dir());
        build(launches, opts, &mut sources, &mut |_| None)
    }

    #[test]
    fn launches_of_one_kernel_and_shape_are_summed_and_ratios_are_of_the_sums() {
        let r = run(vec![launch(0, "k", None, 32.0), launch(1, "k", None, 4.0)], &Options::default());
        assert_eq!(r.rows.len(), 1);
        let row = &r.rows[0];
        assert_eq!(
            (row.launches, row.sectors, row.requests, row.excess_sectors),
            (2, Some(36.0), Some(2.0), Some(28.0))
        );
        assert_eq!((row.sectors_per_request, row.excess_share, row.launch), (Some(18.0), Some(1.0), None));
        let per = run(
            vec![launch(0, "k", None, 32.0), launch(1, "k", None, 4.0)],
            &Options { per_launch: true, ..Options::default() },
        );
        assert_eq!(per.rows.iter().map(|r| r.launch).collect::<Vec<_>>(), [Some(0), Some(1)]);
    }

    #[test]
    fn a_cubin_that_is_not_elf_is_a_notice_and_rows_stay_instructions() {
        let r = run(vec![launch(0, "k", Some(b"\x7fELF garbage"), 32.0)], &Options::default());
        assert!(r.notices.iter().any(|n| n.contains("not a readable ELF")), "{:?}", r.notices);
        assert_eq!((r.rows[0].pc_offset, r.rows[0].line), (Some(0x10), None));
        let none = run(vec![launch(0, "k", None, 32.0)], &Options::default());
        assert!(none.notices.iter().any(|n| n.contains("no cubin")), "{:?}", none.notices);
    }

    #[test]
    fn the_kernel_filter_and_top_apply() {
        let two = || vec![launch(0, "a", None, 8.0), launch(1, "b", None, 8.0)];
        let only_a = Options { kernel: Some(regex::Regex::new("^a$").unwrap()), ..Options::default() };
        assert_eq!(run(two(), &only_a).rows.iter().map(|r| r.kernel.as_str()).collect::<Vec<_>>(), ["a"]);
        assert_eq!(run(two(), &Options { top: Some(0), ..Options::default() }).rows.len(), 0);
        assert_eq!(run(two(), &Options::default()).rows.len(), 2);
    }
}
