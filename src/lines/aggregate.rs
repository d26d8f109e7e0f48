//! Launches → rows: launches of one kernel and launch shape summed per SASS offset and access
//! kind (as `analyze` sums counters, so every ratio is a ratio of sums), then attributed to
//! source lines through the cubin — one row per line *and* access kind, so a line that loads
//! and stores shows both — ranked by excess sectors with each row's share of its kernel's
//! excess, derived through `metrics.toml`'s `[line.*]` formulas, and diagnosed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;

use super::cubin::{Cubin, Location};
use super::diagnose::{diagnose, Numbers, Waste};
use super::instructions::{per_instruction, Counters, Launch, NoCounters, Op};
use super::source::Sources;
use crate::error::Result;
use crate::frame::launches::{Grouper, Grouping, LaunchKey};
use crate::frame::Derivation;
use crate::metrics::Catalogue;
use crate::names::quoted;
use crate::parse::{LaunchRecord, SourceCounters};
use crate::results::{thousands, Metrics, Row, Source};
pub use crate::style::By;

/// Version of the JSON layout of [`LineReport`]. `/2`: `requests` are warp-level executions
/// (`inst_executed`) of global instructions, no longer L1 tag requests (now `tag_requests`);
/// one row per line and access kind; `lines_per_request` and `active_lanes`.
pub(crate) const SCHEMA: &str = "coalprof-lines/2";

/// A launch's Σ requests may differ from its kernel-level request count by this much before
/// the report says so.
const REQUEST_TOLERANCE: f64 = 0.02;

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

/// One row: a source line (or an instruction) of one kernel (or one launch) and one access kind.
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
    /// The launches' grid and block, where the report says: with the kernel and rank, what
    /// finds the row's kernel row among `analyze`'s (which groups launches by shape too).
    #[serde(skip)]
    pub grid: Option<[u32; 3]>,
    /// See `grid`.
    #[serde(skip)]
    pub block: Option<[u32; 3]>,
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
    /// What the row's memory instructions do: `global load`, `global store`, `global atomic`,
    /// `shared load`, `shared store` (`global`/`shared` where the report does not say).
    pub op: Option<String>,
    /// The same, typed.
    #[serde(skip)]
    pub kind: Option<Op>,
    /// Bytes per thread of its accesses, when all agree.
    pub access_bytes: Option<u32>,
    /// Memory instructions the row sums (1 for an instruction row).
    pub instructions: u32,
    /// Warp-level executions of the row's memory instructions.
    #[serde(serialize_with = "count")]
    pub executions: Option<f64>,
    /// Global requests: warp-level executions of its global instructions (`inst_executed`).
    #[serde(serialize_with = "count")]
    pub requests: Option<f64>,
    /// L1 tag requests: the 128-byte lines those requests looked up.
    #[serde(serialize_with = "count")]
    pub tag_requests: Option<f64>,
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
    /// Sectors per request.
    pub sectors_per_request: Option<f64>,
    /// The ideal sectors per request for its addresses.
    pub ideal_sectors_per_request: Option<f64>,
    /// 128-byte lines per request (tag requests / requests): 1 coalesced, 32 a column walk.
    pub lines_per_request: Option<f64>,
    /// Active lanes per warp-level execution.
    pub active_lanes: Option<f64>,
    /// Shared-memory wavefronts.
    #[serde(serialize_with = "count")]
    pub shared_wavefronts: Option<f64>,
    /// The wavefronts a conflict-free access would take.
    #[serde(serialize_with = "count")]
    pub shared_ideal_wavefronts: Option<f64>,
    /// Wavefronts beyond the ideal (bank conflicts).
    #[serde(serialize_with = "count")]
    pub shared_excess_wavefronts: Option<f64>,
    /// Wavefronts per ideal wavefront: n for an n-way bank conflict.
    pub shared_wavefronts_per_ideal: Option<f64>,
    /// The line's code, when the source was found.
    pub source: Option<String>,
    /// What the numbers mean, in plain words.
    pub diagnosis: Option<String>,
    /// The rule the diagnosis is a finding of (`CP1001`…), null for advice or none.
    pub rule: Option<&'static str>,
    /// What the diagnosis weighs (excess sectors or wavefronts).
    #[serde(skip)]
    pub waste: Option<Waste>,
    /// Every per-line counter and metric of the row by `metrics.toml` key (what the gate reads).
    #[serde(skip)]
    pub metrics: Metrics,
}

/// Counters are whole numbers: print them as integers, absent as null.
fn count<S: serde::Serializer>(v: &Option<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(*x as i64),
        Some(x) => s.serialize_f64(*x),
        None => s.serialize_none(),
    }
}

/// The rows of every kernel, and what could not be attributed.
#[derive(Debug, Clone, Serialize)]
pub struct LineReport {
    /// The JSON schema name (`coalprof-lines/2`).
    pub schema: &'static str,
    /// Every row, worst first within each kernel.
    pub rows: Vec<LineRow>,
    /// What could not be attributed, and why.
    pub notices: Vec<String>,
    /// The GPU architecture the reports ran on (`sm_80`), when they say.
    #[serde(skip)]
    pub arch: Option<String>,
    /// How many launches passed the kernel filter (0: nothing matched).
    #[serde(skip)]
    pub matched: usize,
}

impl LineReport {
    /// A report of no rows.
    pub(crate) fn empty() -> LineReport {
        LineReport { schema: SCHEMA, rows: Vec::new(), notices: Vec::new(), arch: None, matched: 0 }
    }
}

/// One kernel (or launch) being summed: the launches of one [`LaunchKey`], as the frame
/// groups them (`analyze`), or each launch alone with `--per-launch`.
struct Group {
    key: LaunchKey,
    launch: Option<u64>,
    launches: u64,
    mangled: Option<String>,
    cubin: Option<Arc<[u8]>>,
    counters: Launch,
    /// The kernel-level load + store requests of its launches, where every launch has them.
    kernel_requests: Option<f64>,
}

/// The kernel-level global load + store requests of a launch (`metrics.toml`'s raw
/// `global_load_requests` and `global_store_requests`).
fn kernel_requests(rec: &LaunchRecord, catalogue: &Catalogue) -> Option<f64> {
    let value = |key: &str| {
        let raw = catalogue.raw.get(key)?;
        std::iter::once(&raw.ncu).chain(&raw.aliases).find_map(|n| rec.metric(n)?.number())
    };
    Some(value("global_load_requests")? + value("global_store_requests")?)
}

/// Build the report from the launches of every input. `disassemble` gives SASS text for a
/// cubin (nvdisasm), or `None` when it cannot. The per-line metrics are `catalogue`'s.
pub fn build(
    launches: impl IntoIterator<Item = (LaunchRecord, SourceCounters)>,
    opts: &Options,
    catalogue: &Catalogue,
    sources: &mut Sources,
    disassemble: &mut dyn FnMut(&[u8]) -> Option<Sass>,
) -> Result<LineReport> {
    let derivation = Derivation::lines(catalogue)?;
    let mut notices = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut grouper = Grouper::new(if opts.per_launch { Grouping::PerLaunch } else { Grouping::PerKernel });
    let mut without: BTreeMap<String, u64> = BTreeMap::new();
    let mut unplaced: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut arch = None;
    let mut matched = 0;
    // The launches of a module share its embedded files: embedded once, not once a launch.
    let mut embedded: Option<Arc<[(String, String)]>> = None;
    for (mut rec, sc) in launches {
        if opts.kernel.as_ref().is_some_and(|re| !re.is_match(&rec.kernel)) {
            continue;
        }
        matched += 1;
        // SMRevision is `major << 16 | minor` (docs/ncu-rep-format.md): 0x80000 is sm_80.
        arch = arch.or(sc.sm_revision.map(|r| format!("sm_{}{}", r >> 16, r & 0xffff)));
        if !embedded.as_ref().is_some_and(|e| Arc::ptr_eq(e, &sc.sources)) {
            sources.embed(&sc.sources);
            embedded = Some(sc.sources.clone());
        }
        let counters = match per_instruction(&sc) {
            Ok(c) => c,
            Err(NoCounters::Absent) => {
                *without.entry(rec.kernel.clone()).or_default() += 1;
                continue;
            }
            Err(NoCounters::Unplaced(why)) => {
                unplaced.entry(rec.kernel.clone()).or_insert((0, why)).0 += 1;
                continue;
            }
        };
        let requests = kernel_requests(&rec, catalogue);
        let launch = opts.per_launch.then_some(rec.id).flatten();
        match grouper.group(LaunchKey::take(&mut rec)) {
            (i, false) => {
                let g = &mut groups[i];
                g.launches += rec.launches;
                g.kernel_requests = g.kernel_requests.zip(requests).map(|(a, b)| a + b);
                for (off, c) in counters.instructions {
                    let e = g.counters.instructions.entry(off).or_default();
                    let n = e.instructions.max(1);
                    e.add(&c);
                    e.instructions = n;
                }
                g.counters.elsewhere = g.counters.elsewhere.max(counters.elsewhere);
                g.counters.entry_executions = match (g.counters.entry_executions, counters.entry_executions) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
            }
            (i, true) => {
                groups.push(Group {
                    key: grouper.key(i).clone(),
                    launch,
                    launches: rec.launches,
                    mangled: sc.mangled.clone(),
                    cubin: sc.cubin.clone(),
                    counters,
                    kernel_requests: requests,
                });
            }
        }
    }
    for (k, n) in without {
        notices.push(format!(
            "{}: {n} launch(es) without per-instruction counters (profile with `--section SourceCounters` \
             or `--set full`)",
            quoted(&k)
        ));
    }
    for (k, (n, why)) in unplaced {
        notices.push(format!("{}: {n} launch(es) not attributed: {why}", quoted(&k)));
    }
    notices.extend(request_notices(&groups));

    let mut cubins: HashMap<*const u8, (Option<Cubin>, Option<Sass>)> = HashMap::new();
    let mut rows: Vec<(usize, bool, LineRow)> = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        // How this group's notices name its kernel.
        let kernel = quoted(&g.key.kernel);
        let empty = (None, None);
        let (cubin, sass) = match &g.cubin {
            Some(bytes) => &*cubins.entry(bytes.as_ptr()).or_insert_with(|| match Cubin::parse(bytes) {
                Ok(c) => (Some(c), disassemble(bytes)),
                Err(e) => {
                    notices.push(format!("{kernel}: {e}; rows are SASS offsets"));
                    (None, None)
                }
            }),
            None => {
                notices.push(format!("{kernel}: the report holds no cubin; rows are SASS offsets"));
                &empty
            }
        };
        let function = cubin.as_ref().and_then(|c| {
            g.mangled
                .as_deref()
                .and_then(|m| c.functions.iter().find(|f| f.name == m))
                .or_else(|| c.function(&g.key.kernel))
        });
        if let Some(c) = cubin {
            match function {
                None => notices
                    .push(format!("{kernel}: no function of its cubin matches the kernel; rows are SASS offsets")),
                Some(f) if !f.has_lines() => {
                    let why = c.notices.first().cloned().unwrap_or_else(|| {
                        "the kernel was built without `-lineinfo`: rows are SASS instructions, not source lines \
                         (rebuild with `nvcc -lineinfo`)"
                            .into()
                    });
                    notices.push(format!("{kernel}: {why}"));
                }
                Some(_) => notices.extend(c.notices.iter().map(|n| format!("{kernel}: {n}"))),
            }
        }
        if g.counters.elsewhere > 0 {
            notices.push(format!(
                "{kernel}: {} memory instruction(s) run in functions the kernel calls; ncu does not name those, so they \
                 are not attributed",
                g.counters.elsewhere
            ));
        }
        let locate = |off: u64| -> Option<Location> { cubin.as_ref()?.location(function?, off) };
        let sass_of = |off: u64| -> Option<String> { sass.as_ref()?.get(&function?.name)?.get(&off).cloned() };
        let total_excess: Option<f64> =
            g.counters.instructions.values().filter_map(|c| c.excess_sectors).reduce(|a, b| a + b);

        let mut keyed: BTreeMap<(Option<Location>, Option<u64>, Op), Counters> = BTreeMap::new();
        for (&(off, op), c) in &g.counters.instructions {
            if c.executions == Some(0.0) {
                continue;
            }
            let loc = locate(off);
            let key = match (opts.by, loc) {
                (By::Line, Some(l)) => (Some(l), None, op),
                (_, loc) => (loc, Some(off), op),
            };
            keyed.entry(key).or_default().add(c);
        }
        let id = RowId {
            kernel: g.key.kernel.clone(),
            rank: g.key.rank,
            launch: g.launch,
            launches: g.launches,
            grid: g.key.grid,
            block: g.key.block,
        };
        for ((loc, off, op), c) in keyed {
            let in_loop = match (c.executions, g.counters.entry_executions) {
                (Some(e), Some(entry)) => e > entry * 1.01 * f64::from(c.instructions.max(1)),
                _ => false,
            };
            let place = loc.map(|l| (l.file, l.line));
            let row = line_row(&id, place, off, off.and_then(sass_of), op, &c, total_excess, sources);
            rows.push((gi, in_loop, row));
        }
    }
    let rows = finish(rows, &derivation, opts.top)?;
    notices.extend(unresolved(&rows));
    Ok(LineReport { schema: SCHEMA, rows, notices, arch, matched })
}

/// Which kernel (or launch) a row belongs to.
pub(super) struct RowId {
    pub kernel: String,
    pub rank: Option<u32>,
    pub launch: Option<u64>,
    pub launches: u64,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
}

/// One row before its derivation: its place (file and line, else an offset), access kind,
/// summed counters as `[line_counter.*]` metrics, and the code of its line.
#[allow(clippy::too_many_arguments)] // the row's parts, each of a different kind
pub(super) fn line_row(
    id: &RowId,
    place: Option<(String, u32)>,
    pc_offset: Option<u64>,
    sass: Option<String>,
    op: Op,
    c: &Counters,
    kernel_excess: Option<f64>,
    sources: &mut Sources,
) -> LineRow {
    let (file, line) = place.map(|(f, l)| (Some(f), Some(l))).unwrap_or_default();
    let path = file.as_deref().and_then(|f| sources.resolve(f).relative.clone());
    let source = match (&file, line) {
        (Some(f), Some(l)) => sources.line(f, l),
        _ => None,
    };
    let metrics: Metrics = counter_values(c, kernel_excess)
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.filter(|v| v.is_finite())?)))
        .collect();
    LineRow {
        kernel: id.kernel.clone(),
        rank: id.rank,
        launch: id.launch,
        launches: id.launches,
        grid: id.grid,
        block: id.block,
        file,
        line,
        path,
        pc_offset,
        sass,
        op: Some(op.name().to_string()),
        kind: Some(op),
        access_bytes: c.access_bytes,
        instructions: c.instructions,
        executions: c.executions,
        requests: c.requests,
        tag_requests: c.tag_requests,
        sectors: c.sectors,
        ideal_sectors: c.ideal_sectors,
        excess_sectors: c.excess_sectors,
        shared_wavefronts: c.shared_wavefronts,
        shared_ideal_wavefronts: c.shared_ideal_wavefronts,
        shared_excess_wavefronts: c.shared_excess_wavefronts(),
        source,
        metrics,
        ..LineRow::default()
    }
}

/// The notice naming source files whose text was found nowhere, if any.
pub(super) fn unresolved(rows: &[LineRow]) -> Option<String> {
    let mut v: Vec<String> = rows.iter().filter(|r| r.source.is_none()).filter_map(|r| r.file.clone()).collect();
    v.sort();
    v.dedup();
    (!v.is_empty()).then(|| {
        format!(
            "source text left out: not embedded in the report and not found under the source root: {}",
            v.join(", ")
        )
    })
}

/// The `[line_counter.*]` inputs of `metrics.toml` from a row's summed counters (a unit test
/// keeps the two lists equal).
fn counter_values(c: &Counters, kernel_excess: Option<f64>) -> [(&'static str, Option<f64>); 10] {
    [
        ("line_executions", c.executions),
        ("line_requests", c.requests),
        ("line_tag_requests", c.tag_requests),
        ("line_threads", c.threads),
        ("line_sectors", c.sectors),
        ("line_ideal_sectors", c.ideal_sectors),
        ("line_excess_sectors", c.excess_sectors),
        ("line_kernel_excess_sectors", kernel_excess.filter(|_| c.excess_sectors.is_some())),
        ("line_shared_wavefronts", c.shared_wavefronts),
        ("line_shared_ideal_wavefronts", c.shared_ideal_wavefronts),
    ]
}

/// Once per kernel: where its global load and store instructions executed more (or less)
/// often than the kernel counted requests, beyond [`REQUEST_TOLERANCE`].
fn request_notices(groups: &[Group]) -> Vec<String> {
    let mut per_kernel: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
    for g in groups {
        let Some(kernel) = g.kernel_requests else { continue };
        let ours: f64 = (g.counters.instructions.iter())
            .filter(|((_, op), _)| op.is_load_or_store())
            .filter_map(|(_, c)| c.requests)
            .sum();
        let e = per_kernel.entry(&g.key.kernel).or_default();
        e.0 += ours;
        e.1 += kernel;
    }
    per_kernel
        .into_iter()
        .filter(|(_, (ours, kernel))| *kernel > 0.0 && (ours / kernel - 1.0).abs() > REQUEST_TOLERANCE)
        .map(|(k, (ours, kernel))| {
            format!(
                "{}: its global load and store instructions executed {} times, but the kernel counts {} \
                 requests ({:+.1}%): warps that run an instruction with every thread predicated off issue no \
                 request, so those lines' sectors/request read lower than the kernel's",
                quoted(k),
                thousands(ours.round() as i128),
                thousands(kernel.round() as i128),
                100.0 * (ours / kernel - 1.0)
            )
        })
        .collect()
}

/// Derive every row's per-line metrics in one frame, diagnose, and order each group's rows
/// worst first (cut to `top`).
pub(super) fn finish(
    rows: Vec<(usize, bool, LineRow)>,
    derivation: &Derivation,
    top: Option<usize>,
) -> Result<Vec<LineRow>> {
    let mut as_rows: Vec<Row> = rows
        .iter()
        .map(|(_, _, r)| Row { metrics: r.metrics.clone(), ..Row::new(r.kernel.clone(), Source::Measured) })
        .collect();
    derivation.fill(&mut as_rows)?;
    let mut out: Vec<(usize, LineRow)> = rows
        .into_iter()
        .zip(as_rows)
        .map(|((group, in_loop, mut r), derived)| {
            r.metrics = derived.metrics;
            let m = |k: &str| r.metrics.get(k).copied();
            r.sectors_per_request = m("line_sectors_per_request");
            r.ideal_sectors_per_request = m("line_ideal_sectors_per_request");
            r.lines_per_request = m("line_lines_per_request");
            r.active_lanes = m("line_active_lanes");
            r.excess_share = m("line_excess_share");
            r.shared_wavefronts_per_ideal = m("line_shared_wavefronts_per_ideal");
            let numbers = Numbers {
                op: r.kind,
                access_bytes: r.access_bytes,
                instructions: r.instructions,
                in_loop,
                sectors_per_request: r.sectors_per_request,
                ideal_sectors_per_request: r.ideal_sectors_per_request,
                lines_per_request: r.lines_per_request,
                active_lanes: r.active_lanes,
                wavefronts_per_ideal: r.shared_wavefronts_per_ideal,
            };
            if let Some(f) = diagnose(&numbers) {
                r.waste = f.waste;
                r.rule = f.waste.map(Waste::id);
                r.diagnosis = Some(f.text);
            }
            (group, r)
        })
        .collect();
    out.sort_by(|(ga, a), (gb, b)| {
        // Per group: worst first (`waste_order`); then by place, for stable output.
        ga.cmp(gb).then(waste_order(a, b)).then((&a.file, a.line, a.pc_offset, a.kind).cmp(&(
            &b.file,
            b.line,
            b.pc_offset,
            b.kind,
        )))
    });
    say_advice_once(&mut out);
    let mut kept: BTreeMap<usize, usize> = BTreeMap::new();
    Ok(out
        .into_iter()
        .filter(|(g, _)| {
            let n = kept.entry(*g).or_default();
            *n += 1;
            top.is_none_or(|t| *n <= t)
        })
        .map(|(_, r)| r)
        .collect())
}
/// How two rows rank, worst first: waste first, global and shared on one scale (excess sectors
/// and excess wavefronts are each a 32-byte or 128-byte transfer beyond the ideal: a 32-way bank
/// conflict outranks a coalesced load); among equals, the heaviest traffic. The one ranking of
/// lines: each kernel's rows here, and the worst lines across kernels of the summary
/// (`render/summary.rs`).
pub(crate) fn waste_order(a: &LineRow, b: &LineRow) -> std::cmp::Ordering {
    let key = |r: &LineRow| {
        let traffic = r.sectors.unwrap_or(0.0) + r.shared_wavefronts.unwrap_or(0.0);
        let excess = match (r.excess_sectors, r.shared_excess_wavefronts) {
            (None, None) => -1.0,
            (s, w) => s.unwrap_or(0.0) + w.unwrap_or(0.0),
        };
        (excess, traffic)
    };
    let (ka, kb) = (key(a), key(b));
    kb.0.total_cmp(&ka.0).then(kb.1.total_cmp(&ka.1))
}

/// Advice that names no waste (a coalesced narrow access in a loop: "vectorise") is said once
/// per kernel, on its heaviest line, naming how many more lines it fits: on every coalesced
/// line of a kernel it would bury the line that wastes.
fn say_advice_once(rows: &mut [(usize, LineRow)]) {
    let mut first: BTreeMap<usize, usize> = BTreeMap::new();
    let mut more: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, (group, r)) in rows.iter_mut().enumerate() {
        if r.waste.is_some() || r.diagnosis.is_none() {
            continue;
        }
        if first.contains_key(group) {
            r.diagnosis = None;
            *more.entry(*group).or_default() += 1;
        } else {
            first.insert(*group, i);
        }
    }
    for (group, n) in more {
        if let Some(d) = first.get(&group).and_then(|&i| rows[i].1.diagnosis.as_mut()) {
            d.push_str(&format!(" (and {n} more line{} of this kernel like it)", if n == 1 { "" } else { "s" }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_is_said_once_per_kernel_and_waste_on_every_line() {
        let row = |diagnosis: Option<&str>, waste: Option<super::super::diagnose::Waste>| LineRow {
            diagnosis: diagnosis.map(str::to_string),
            waste,
            ..LineRow::default()
        };
        let conflict = Some(super::super::diagnose::Waste::BankConflict);
        let mut rows = vec![
            (0, row(Some("32-way"), conflict)),
            (0, row(Some("vectorise"), None)),
            (0, row(Some("vectorise"), None)),
            (0, row(Some("vectorise"), None)),
            (0, row(Some("16-way"), conflict)),
            (1, row(Some("vectorise"), None)),
        ];
        say_advice_once(&mut rows);
        let said: Vec<Option<&str>> = rows.iter().map(|(_, r)| r.diagnosis.as_deref()).collect();
        assert_eq!(
            said,
            [
                Some("32-way"),
                Some("vectorise (and 2 more lines of this kernel like it)"),
                None,
                None,
                Some("16-way"),
                Some("vectorise"),
            ]
        );
    }

    fn launch(id: u64, kernel: &str, cubin: Option<&[u8]>, sectors: f64) -> (LaunchRecord, SourceCounters) {
        let pc = 0x1000u64;
        let m = |n: &str, v: f64| (Arc::from(n), vec![(pc + 0x10, v)]);
        let rec =
            LaunchRecord { id: Some(id), grid: Some([1, 1, 1]), block: Some([32, 1, 1]), ..LaunchRecord::new(kernel) };
        let sc = SourceCounters {
            function_pcs: vec![pc],
            instanced: vec![
                m("memory_type", 4.0),
                m("memory_access_type", 2.0),
                m("memory_access_size_type", 32.0),
                m("inst_executed", 1.0),
                m("memory_l1_tag_requests_global", sectors / 4.0),
                m("memory_l2_theoretical_sectors_global", sectors),
                m("memory_l2_theoretical_sectors_global_ideal", 4.0),
            ],
            cubin: cubin.map(Arc::from),
            ..SourceCounters::default()
        };
        (rec, sc)
    }

    fn run(launches: Vec<(LaunchRecord, SourceCounters)>, opts: &Options) -> LineReport {
        let mut sources = Sources::new(std::path::PathBuf::from("/nonexistent-source-root"));
        build(launches, opts, &Catalogue::builtin(), &mut sources, &mut |_| None).unwrap()
    }

    #[test]
    fn launches_of_one_kernel_and_shape_are_summed_and_ratios_are_of_the_sums() {
        let r = run(vec![launch(0, "k", None, 32.0), launch(1, "k", None, 4.0)], &Options::default());
        assert_eq!(r.rows.len(), 1);
        let row = &r.rows[0];
        assert_eq!(
            (row.launches, row.sectors, row.requests, row.tag_requests, row.excess_sectors),
            (2, Some(36.0), Some(2.0), Some(9.0), Some(28.0))
        );
        assert_eq!((row.sectors_per_request, row.excess_share, row.launch), (Some(18.0), Some(1.0), None));
        assert_eq!((row.ideal_sectors_per_request, row.lines_per_request), (Some(4.0), Some(4.5)));
        assert_eq!(row.metrics.get("line_sectors_per_request"), Some(&18.0), "the gate reads the derived metrics");
        let per = run(
            vec![launch(0, "k", None, 32.0), launch(1, "k", None, 4.0)],
            &Options { per_launch: true, ..Options::default() },
        );
        assert_eq!(per.rows.iter().map(|r| r.launch).collect::<Vec<_>>(), [Some(0), Some(1)]);
    }

    #[test]
    fn every_counter_is_a_line_counter_of_metrics_toml() {
        let c = Catalogue::builtin();
        let mut ours: Vec<&str> = counter_values(&Counters::default(), None).iter().map(|(k, _)| *k).collect();
        ours.sort();
        assert_eq!(c.line_counters.keys().map(String::as_str).collect::<Vec<_>>(), ours);
    }

    #[test]
    fn a_line_that_loads_and_stores_is_two_rows_each_with_its_own_numbers() {
        // A naive transpose's `C[ix * n + iy] = A[iy * n + ix]`: the load coalesced, the store a
        // column walk (issue 18's RTX 4090 figures: 4.0 and 32.0 sectors/request).
        let pc = 0x1000u64;
        let at = |off: u64, v: f64| (pc + off, v);
        let rec = LaunchRecord {
            id: Some(0),
            grid: Some([1, 1, 1]),
            block: Some([32, 1, 1]),
            ..LaunchRecord::new("transpose")
        };
        let m = |n: &str, v: Vec<(u64, f64)>| (Arc::from(n), v);
        let sc = SourceCounters {
            function_pcs: vec![pc],
            instanced: vec![
                m("memory_type", vec![at(0x10, 4.0), at(0x20, 4.0)]),
                m("memory_access_type", vec![at(0x10, 2.0), at(0x20, 4.0)]),
                m("memory_access_size_type", vec![at(0x10, 32.0), at(0x20, 32.0)]),
                m("inst_executed", vec![at(0, 450.0), at(0x10, 450.0), at(0x20, 450.0)]),
                m("memory_l1_tag_requests_global", vec![at(0x10, 450.0), at(0x20, 14_400.0)]),
                m("memory_l2_theoretical_sectors_global", vec![at(0x10, 1800.0), at(0x20, 14_400.0)]),
                m("memory_l2_theoretical_sectors_global_ideal", vec![at(0x10, 1800.0), at(0x20, 1800.0)]),
            ],
            ..SourceCounters::default()
        };
        let r = run(vec![(rec, sc)], &Options { by: By::Line, ..Options::default() });
        let by_op = |op: &str| r.rows.iter().find(|r| r.op.as_deref() == Some(op)).unwrap();
        let (load, store) = (by_op("global load"), by_op("global store"));
        assert_eq!((store.sectors_per_request, store.ideal_sectors_per_request), (Some(32.0), Some(4.0)));
        assert_eq!((load.sectors_per_request, load.ideal_sectors_per_request), (Some(4.0), Some(4.0)));
        assert_eq!((store.lines_per_request, store.executions), (Some(32.0), Some(450.0)));
        assert_eq!(r.rows[0].op.as_deref(), Some("global store"), "the waste first");
        let d = store.diagnosis.as_deref().unwrap();
        assert!(d.contains("global stores") && !d.contains("loads") && !d.contains("misaligned"), "{d}");
        assert!(load.diagnosis.is_none(), "{:?}", load.diagnosis);
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
