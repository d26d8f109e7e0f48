//! GPGPU-Sim's output → typed records: the per-PTX-line statistics it writes to
//! `gpgpu_inst_stats.txt`, the PTX files it extracted and parsed (which kernel each line belongs
//! to, what memory access it makes, and the source line its `.loc` names), and the kernel
//! launches its log announces. Nothing downstream sees a raw line of the simulator's.
//!
//! The statistics are keyed by (PTX file, PTX line) and summed over every launch of the
//! process, so a kernel's counters are the sum over the lines of its body.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One line of `gpgpu_inst_stats.txt`: `FILE LINE : count latency dram_traffic
/// smem_bk_conflicts smem_warp gmem_access_generated gmem_warp exposed_latency warp_divergence`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineStats {
    /// The PTX file the simulator parsed (`stride.1.sm_70.ptx`).
    pub ptx_file: String,
    /// The line of that file (1-based).
    pub ptx_line: u32,
    /// Threads that executed the instruction (summed over warps: active lanes).
    pub executions: u64,
    /// Shared memory: wavefronts (the bank-conflict model's accesses, summed over warps).
    pub shared_wavefronts: u64,
    /// Shared memory: warp-level instructions.
    pub shared_warps: u64,
    /// Global memory: accesses generated, one per 32-byte sector under the sm_70 configs.
    pub global_sectors: u64,
    /// Global memory: warp-level instructions (requests).
    pub global_warps: u64,
    /// DRAM traffic the line caused, as the simulator's memory model counts it.
    pub dram_traffic: u64,
}

/// Why a statistics file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct StatsError {
    /// The 1-based line of the statistics file.
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

const STATS_HEADER: &str = "kernel line :";

/// Parse the statistics file's text.
pub fn parse_inst_stats(text: &str) -> Result<Vec<LineStats>, StatsError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with(STATS_HEADER) {
            continue;
        }
        let err = |message: String| StatsError { line: i + 1, message };
        let (key, values) = l.split_once(" : ").ok_or_else(|| err(format!("no ` : ` in `{l}`")))?;
        let (file, line) = key.rsplit_once(' ').ok_or_else(|| err(format!("`{key}` is not `FILE LINE`")))?;
        let ptx_line = line.parse().map_err(|_| err(format!("`{line}` is not a line number")))?;
        let v: Vec<u64> = values
            .split_whitespace()
            .map(|w| w.parse::<u64>().map_err(|_| err(format!("`{w}` is not a count"))))
            .collect::<Result<_, _>>()?;
        if v.len() < 7 {
            return Err(err(format!("{} counts, expected 9", v.len())));
        }
        out.push(LineStats {
            ptx_file: file.to_string(),
            ptx_line,
            executions: v[0],
            dram_traffic: v[2],
            shared_wavefronts: v[3],
            shared_warps: v[4],
            global_sectors: v[5],
            global_warps: v[6],
        });
    }
    Ok(out)
}

/// The state space an instruction accesses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// `.global` (and generic addresses resolved to it are not distinguished: nvcc emits
    /// `ld.global` for the kernels coalprof measures).
    Global,
    /// `.shared`.
    Shared,
}

/// Whether an instruction reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LoadOrStore {
    /// `ld`, `ldu`.
    Load,
    /// `st`, and atomics/reductions (read-modify-write, counted with the stores).
    Store,
}

/// A memory instruction: what it touches and how wide each thread's access is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    /// Global or shared.
    pub space: Space,
    /// Load or store.
    pub direction: LoadOrStore,
    /// Bytes per thread (`ld.global.v4.f32`: 16).
    pub bytes: u32,
}

/// One instruction line of a PTX file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxInstruction {
    /// The kernel (`.entry`) or device function whose body holds it, as the PTX names it
    /// (mangled for C++).
    pub function: String,
    /// Whether it is an `.entry` (a kernel) rather than a `.func`.
    pub is_entry: bool,
    /// The opcode with its modifiers (`ld.global.nc.f32`).
    pub opcode: String,
    /// The memory access it makes, if it is a global or shared load or store.
    pub access: Option<Access>,
    /// The source file and line of the `.loc` in force (the inlined callee's own line when
    /// `.loc` says `inlined_at`), if the PTX was made with `-lineinfo`.
    pub source: Option<(String, u32)>,
    /// Where the callee of an inlined `.loc` was called, innermost first: its `inlined_at`,
    /// then that call site's own `inlined_at` (the `.loc` nvcc writes just before, for the
    /// frame around it) and so on out; empty when not inlined. So an access inside a CUDA
    /// header, however deep, can be put on the user's line.
    pub call_sites: Vec<(String, u32)>,
}

/// A parsed PTX file: its instructions by line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ptx {
    /// Instruction lines by their 1-based line number.
    pub instructions: BTreeMap<u32, PtxInstruction>,
}

impl Ptx {
    /// Parse a PTX file's text. Only what attribution needs is read: function bodies, the
    /// opcodes of their instructions, `.loc` and `.file`.
    pub fn parse(text: &str) -> Ptx {
        let mut files: BTreeMap<u32, String> = BTreeMap::new();
        let mut found: Vec<Found> = Vec::new();
        let mut function: Option<(String, bool)> = None;
        let mut depth = 0usize;
        let mut loc: Option<Loc> = None;
        // The call sites of every place a `.loc` of this function named (file, line, column):
        // an `inlined_at` that names one continues its chain.
        let mut chains: HashMap<(u32, u32, u32), Vec<(u32, u32)>> = HashMap::new();
        let mut pending: Option<(String, bool)> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let l = strip_comment(raw).trim();
            if l.is_empty() {
                continue;
            }
            if let Some(rest) = l.strip_prefix(".file") {
                if let Some((id, path)) = parse_file(rest) {
                    files.insert(id, path);
                }
                continue;
            }
            if let Some(rest) = l.strip_prefix(".loc") {
                loc = parse_loc(rest).map(|(at, inlined_at)| {
                    let callers = match inlined_at {
                        Some(c) => {
                            let mut v = vec![(c.0, c.1)];
                            v.extend(chains.get(&c).into_iter().flatten().copied());
                            v
                        }
                        None => Vec::new(),
                    };
                    // A bad or cyclic table cannot grow a chain without end: one frame per place.
                    let callers: Vec<(u32, u32)> = callers.into_iter().take(64).collect();
                    chains.insert(at, callers.clone());
                    Loc { at: (at.0, at.1), callers }
                });
                continue;
            }
            if depth == 0 {
                if let Some(name) = declared_function(l) {
                    pending = Some(name);
                    loc = None;
                    chains.clear();
                }
            }
            let opens = l.matches('{').count();
            let closes = l.matches('}').count();
            if depth == 0 && opens > 0 {
                function = pending.take();
            }
            let at_depth = depth;
            depth = (depth + opens).saturating_sub(closes);
            if depth == 0 {
                if at_depth > 0 {
                    function = None;
                }
                continue;
            }
            if l.starts_with('.') || l.ends_with(':') || l.starts_with('{') || l.starts_with('}') {
                continue;
            }
            let Some((name, is_entry)) = &function else { continue };
            let Some(opcode) = opcode_of(l) else { continue };
            found.push((n, name.clone(), *is_entry, opcode.to_string(), loc.clone()));
        }
        let instructions = found
            .into_iter()
            .map(|(n, function, is_entry, opcode, loc)| {
                let place = |at: Option<(u32, u32)>| {
                    at.and_then(|(f, line)| Some((files.get(&f)?.clone(), line))).filter(|(_, l)| *l > 0)
                };
                let source = place(loc.as_ref().map(|l| l.at));
                let call_sites = loc.iter().flat_map(|l| &l.callers).filter_map(|&c| place(Some(c))).collect();
                let access = access_of(&opcode);
                (n, PtxInstruction { function, is_entry, opcode, access, source, call_sites })
            })
            .collect();
        Ptx { instructions }
    }
}

/// An instruction line before `.file` (at the end of nvcc's PTX) names its files: line,
/// function, is_entry, opcode, the `.loc` file id and line.
type Found = (u32, String, bool, String, Option<Loc>);

/// A `.loc`: its file id and line, and the file ids and lines of its call sites, innermost
/// first (empty when not inlined).
#[derive(Debug, Clone)]
struct Loc {
    at: (u32, u32),
    callers: Vec<(u32, u32)>,
}

fn strip_comment(l: &str) -> &str {
    match l.find("//") {
        Some(i) => &l[..i],
        None => l,
    }
}

/// `.visible .entry name(` or `.func (…) name(` → the function's name and whether it is a kernel.
fn declared_function(l: &str) -> Option<(String, bool)> {
    let words: Vec<&str> = l.split_whitespace().collect();
    let at = words.iter().position(|w| *w == ".entry" || *w == ".func")?;
    let is_entry = words[at] == ".entry";
    // A `.func` may declare its return value first: `.func (.param .b32 r) name(`.
    let rest = words[at + 1..].join(" ");
    let rest = match rest.strip_prefix('(') {
        Some(r) => r.split_once(')').map(|(_, after)| after.trim_start().to_string())?,
        None => rest,
    };
    let name: String = rest.chars().take_while(|c| !c.is_whitespace() && *c != '(' && *c != ';').collect();
    (!name.is_empty()).then_some((name, is_entry))
}

/// ` 1 "/path/file.cu"` (optionally `, timestamp, size`).
fn parse_file(rest: &str) -> Option<(u32, String)> {
    let rest = rest.trim();
    let (id, rest) = rest.split_once(char::is_whitespace)?;
    let path = rest.trim().strip_prefix('"')?;
    let path = &path[..path.find('"')?];
    Some((id.parse().ok()?, path.to_string()))
}

/// A place a `.loc` names: file id, line, column.
type Place = (u32, u32, u32);

/// ` 1 23 5` → (1, 23, 5); ` 1 2 106, function_name $L__info_string0, inlined_at 1 5 25` →
/// (1, 2, 106) inlined at (1, 5, 25).
fn parse_loc(rest: &str) -> Option<(Place, Option<Place>)> {
    let place = |text: &str| -> Option<Place> {
        let mut it = text.split_whitespace().map(str::parse::<u32>);
        let (file, line) = (it.next()?.ok()?, it.next()?.ok()?);
        Some((file, line, it.next().and_then(Result::ok).unwrap_or(0)))
    };
    let mut parts = rest.split(',');
    let at = place(parts.next()?)?;
    let inlined_at = parts.find_map(|p| p.trim().strip_prefix("inlined_at")).and_then(place);
    Some((at, inlined_at))
}

/// The opcode of an instruction line (`@%p1 bra $L;` → `bra`, `ld.global.f32 %f1, [%rd4];`
/// → `ld.global.f32`).
fn opcode_of(l: &str) -> Option<&str> {
    let mut words = l.split_whitespace();
    let mut w = words.next()?;
    if w.starts_with('@') {
        w = words.next()?;
    }
    let w = w.trim_end_matches(';');
    w.chars().next().filter(char::is_ascii_alphabetic).map(|_| w)
}

/// The memory access of an opcode, if it is a global or shared load, store or atomic.
fn access_of(opcode: &str) -> Option<Access> {
    let mut parts = opcode.split('.');
    let direction = match parts.next()? {
        "ld" | "ldu" => LoadOrStore::Load,
        "st" | "atom" | "red" => LoadOrStore::Store,
        _ => return None,
    };
    let mut space = None;
    let mut lanes = 1u32;
    let mut size = None;
    for p in parts {
        match p {
            "global" => space = Some(Space::Global),
            "shared" => space = Some(Space::Shared),
            "v2" => lanes = 2,
            "v4" => lanes = 4,
            _ => size = type_bytes(p).or(size),
        }
    }
    Some(Access { space: space?, direction, bytes: lanes * size? })
}

fn type_bytes(t: &str) -> Option<u32> {
    Some(match t {
        "b8" | "u8" | "s8" => 1,
        "b16" | "u16" | "s16" | "f16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}

/// One kernel launch as the simulator's log announces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimLaunch {
    /// The kernel's name as the PTX has it (mangled for C++).
    pub kernel: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
}

/// The launches of a simulator log, in order: GPGPU-Sim prints
/// `GPGPU-Sim PTX: pushing kernel '_Z6kernelPf' to stream 0, gridDim= (4,1,1) blockDim = (128,1,1)`
/// for every launch.
pub fn launches(log: &str) -> Vec<SimLaunch> {
    log.lines().filter_map(launch_line).collect()
}

fn launch_line(l: &str) -> Option<SimLaunch> {
    let rest = l.split_once("pushing kernel '")?.1;
    let (kernel, rest) = rest.split_once('\'')?;
    let grid = dims(rest.split_once("gridDim")?.1)?;
    let block = dims(rest.split_once("blockDim")?.1)?;
    Some(SimLaunch { kernel: kernel.to_string(), grid, block })
}

/// `= (4,1,1) …` → `[4, 1, 1]`.
fn dims(s: &str) -> Option<[u32; 3]> {
    let inner = s.split_once('(')?.1.split_once(')')?.0;
    let mut it = inner.split(',').map(|p| p.trim().parse::<u32>());
    let d = [it.next()?.ok()?, it.next()?.ok()?, it.next()?.ok()?];
    it.next().is_none().then_some(d)
}

/// Why the simulator rejected the program, if its log says so: what it cannot do named first
/// (the PTX instruction and where it is, the CUDA function), then the simulator's own line.
///
/// * `x.ptx:44 Syntax error:`, the offending PTX line and a caret after it: the instruction;
/// * `CUDA API function "cudaX()" has not been implemented yet`, or the loader's `undefined
///   symbol: cudaX` (a function GPGPU-Sim's runtime lacks): the function;
/// * `ERROR (x.ptx:12) instruction "ldmatrix" not (yet) implemented`;
/// * otherwise the first `Parser error`, `syntax error`, `ERROR **`, `Execution error` or
///   `ASSERT` line, as it is.
pub fn failure(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().map(str::trim).collect();
    for (i, l) in lines.iter().enumerate() {
        if let Some((place, _)) = l.split_once(" Syntax error") {
            let instruction =
                lines[i + 1..].iter().find(|n| !n.is_empty()).map_or("", |n| n.trim_matches(['{', '}', ' ']));
            return Some(format!(
                "the PTX `{instruction}` ({place}) is not something GPGPU-Sim can parse (GPGPU-Sim: `{l}`)"
            ));
        }
        if let Some(rest) = l.split_once("CUDA API function \"").map(|(_, r)| r) {
            let name = rest.split(['(', '"']).next().unwrap_or(rest);
            return Some(format!(
                "the CUDA runtime function `{name}` is not implemented in GPGPU-Sim (GPGPU-Sim: `{l}`)"
            ));
        }
        if let Some(rest) = l.split_once("undefined symbol: ").map(|(_, r)| r) {
            let name = rest.split([',', ' ']).next().unwrap_or(rest);
            return Some(format!("the CUDA function `{name}` is not in GPGPU-Sim's runtime (the loader: `{l}`)"));
        }
        if l.contains("not (yet) implemented") {
            let what = l.split_once("instruction \"").and_then(|(_, r)| r.split_once('"')).map(|(n, _)| n);
            return Some(match what {
                Some(op) => format!("the PTX instruction `{op}` is not implemented in GPGPU-Sim (GPGPU-Sim: `{l}`)"),
                None => format!("GPGPU-Sim: `{l}`"),
            });
        }
    }
    lines
        .iter()
        .find(|l| {
            l.contains("Parser error")
                || l.contains("Parse error")
                || l.contains("syntax error")
                || l.contains("ERROR **")
                || l.contains("Execution error")
                || l.contains("ASSERT")
        })
        .map(|l| l.to_string())
}

/// Where a PTX syntax error the log reports is: the PTX file and line (`app.sm_70.ptx:44
/// Syntax error:`).
pub fn failure_place(log: &str) -> Option<(String, u32)> {
    let line = log.lines().map(str::trim).find(|l| l.contains(" Syntax error"))?;
    let (place, _) = line.split_once(" Syntax error")?;
    let (file, n) = place.rsplit_once(':')?;
    Some((file.to_string(), n.parse().ok()?))
}

/// The statistics file the simulator writes in its folder.
pub const STATS_FILE: &str = "gpgpu_inst_stats.txt";

/// What one simulated process left: its log, the statistics and the PTX it executed.
#[derive(Debug, Clone)]
pub struct SimRun {
    /// stdout and stderr of the program and the simulator.
    pub log: String,
    /// The launches the log announces, in order.
    pub launches: Vec<SimLaunch>,
    /// `gpgpu_inst_stats.txt`, per PTX line, summed over the process's launches.
    pub stats: Vec<LineStats>,
    /// The PTX files the simulator extracted and parsed, by file name.
    pub ptx: Vec<(String, Ptx)>,
    /// Wall time.
    pub elapsed: Duration,
}

/// Why a simulation's folder cannot be read (the caller names the folder).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The statistics file is not there: no kernel ran.
    #[error("there is no `{}`: did the program launch a kernel?", .0.display())]
    NoStats(PathBuf),
    /// The statistics file is there but malformed.
    #[error("`{}`: {error}", path.display())]
    Stats {
        /// The statistics file.
        path: PathBuf,
        /// Its line at fault.
        error: StatsError,
    },
}

/// What a simulation left in its folder (`gpgpusim.log`, the statistics, the PTX), read again:
/// how `lines` reads a run folder `profile --backend sim` saved.
pub fn read_run(dir: &Path) -> Result<SimRun, RunError> {
    let log = std::fs::read_to_string(dir.join("gpgpusim.log")).unwrap_or_default();
    let stats_path = dir.join(STATS_FILE);
    let Ok(text) = std::fs::read_to_string(&stats_path) else {
        return Err(RunError::NoStats(stats_path));
    };
    let stats = parse_inst_stats(&text).map_err(|error| RunError::Stats { path: stats_path, error })?;
    let ptx = read_ptx(dir, &stats);
    Ok(SimRun { launches: launches(&log), log, stats, ptx, elapsed: Duration::ZERO })
}

/// The PTX files the statistics name, parsed (a file that is gone is left out: its lines then
/// have no kernel and are reported as unattributed by the caller).
fn read_ptx(dir: &Path, stats: &[LineStats]) -> Vec<(String, Ptx)> {
    let mut names: Vec<&str> = stats.iter().map(|s| s.ptx_file.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let text = std::fs::read_to_string(dir.join(n)).ok()?;
            Some((n.to_string(), Ptx::parse(&text)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 7.8
.target sm_70
.address_size 64

	// .globl	_Z7stridedPKfPfmm

.visible .entry _Z7stridedPKfPfmm(
	.param .u64 _Z7stridedPKfPfmm_param_0,
	.param .u64 _Z7stridedPKfPfmm_param_3
)
{
	.reg .pred 	%p<2>;
	.loc	1 3 0
	ld.param.u64 	%rd2, [_Z7stridedPKfPfmm_param_0];
	.loc	1 5 5
	setp.ge.u64 	%p1, %rd1, %rd5;
	@%p1 bra 	$L__BB0_2;
	.loc	1 2 106, function_name $L__info_string0, inlined_at 1 5 25
	ld.global.nc.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd12];
	.loc	1 5 25
	st.global.f32 	[%rd15], %f1;
	st.shared.u16 	[%rd15], %h1;
$L__BB0_2:
	ret;
}
	.file	1 "/tmp/k/t.cu"
	.section	.debug_str
	{
$L__info_string0:
.b8 95,90,52,108,111,97,100,80,75,102,109,0
	}
"#;

    #[test]
    fn ptx_lines_know_their_kernel_access_and_source_line() {
        let ptx = Ptx::parse(PTX);
        let at = |n: u32| ptx.instructions.get(&n).unwrap_or_else(|| panic!("line {n}: {:#?}", ptx.instructions));
        assert_eq!(at(15).opcode, "ld.param.u64");
        assert_eq!(at(15).access, None, "parameters are not global memory");
        assert_eq!(at(15).function, "_Z7stridedPKfPfmm");
        assert!(at(15).is_entry);
        assert_eq!(at(18).opcode, "bra", "a predicated branch");
        let ld = at(20);
        assert_eq!(ld.access, Some(Access { space: Space::Global, direction: LoadOrStore::Load, bytes: 16 }));
        assert_eq!(ld.source, Some(("/tmp/k/t.cu".into(), 2)), "the inlined callee's own line");
        assert_eq!(ld.call_sites, [("/tmp/k/t.cu".into(), 5)], "and where it was called");
        let st = at(22);
        assert_eq!(st.access, Some(Access { space: Space::Global, direction: LoadOrStore::Store, bytes: 4 }));
        assert_eq!(st.source, Some(("/tmp/k/t.cu".into(), 5)));
        assert_eq!(at(23).access, Some(Access { space: Space::Shared, direction: LoadOrStore::Store, bytes: 2 }));
        assert_eq!(at(25).opcode, "ret");
        assert!(!ptx.instructions.contains_key(&24), "a label is no instruction");
        assert_eq!(ptx.instructions.keys().max(), Some(&25), "nothing of the debug section is code");
    }

    #[test]
    fn a_func_with_a_return_value_is_named_and_not_a_kernel() {
        let ptx =
            Ptx::parse(".func (.param .b32 func_retval0) _Z3addii(\n.param .b32 a\n)\n{\nadd.s32 %r1, %r2, %r3;\n}\n");
        let i = &ptx.instructions[&5];
        assert_eq!((i.function.as_str(), i.is_entry), ("_Z3addii", false));
    }

    #[test]
    fn inst_stats_lines_become_typed_counts() {
        let text = "kernel line : count latency dram_traffic smem_bk_conflicts smem_warp gmem_access_generated gmem_warp exposed_latency warp_divergence\n\
                    stride.1.sm_70.ptx 47 : 65536 1200 0 0 0 16384 2048 17 0 \n\
                    stride.1.sm_70.ptx 9 : 512 3 0 64 16 0 0 0 0 \n";
        let s = parse_inst_stats(text).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0],
            LineStats {
                ptx_file: "stride.1.sm_70.ptx".into(),
                ptx_line: 47,
                executions: 65536,
                global_sectors: 16384,
                global_warps: 2048,
                ..LineStats::default()
            }
        );
        assert_eq!((s[1].shared_wavefronts, s[1].shared_warps), (64, 16));
        let bad = parse_inst_stats("x.ptx 3 : 1 2 three 4 5 6 7 8 9\n").unwrap_err();
        assert_eq!(bad.line, 1);
        assert!(bad.message.contains("three"), "{bad}");
        assert!(parse_inst_stats("x.ptx 3 1 2\n").is_err());
    }

    #[test]
    fn launches_come_from_the_log_in_order() {
        let log = "GPGPU-Sim PTX: pushing kernel 'coalprof_init_fill_f32' to stream 0, gridDim= (64,1,1) blockDim = (256,1,1) \n\
                   other line\n\
                   GPGPU-Sim PTX: pushing kernel 'stride_copy' to stream 0, gridDim= (16,2,1) blockDim = (128,1,1) \n";
        let l = launches(log);
        assert_eq!(l.len(), 2);
        assert_eq!(l[1], SimLaunch { kernel: "stride_copy".into(), grid: [16, 2, 1], block: [128, 1, 1] });
        assert_eq!(
            failure("GPGPU-Sim PTX: Parser error in file x.ptx line 12\n").as_deref(),
            Some("GPGPU-Sim PTX: Parser error in file x.ptx line 12")
        );
        assert_eq!(failure(log), None);
    }

    /// The simulator's own words, as its parser, runtime and the loader print them (from logs
    /// of programs it rejected), each turned into what it cannot do, named.
    #[test]
    fn a_rejection_names_the_instruction_or_function_the_simulator_lacks() {
        let syntax = "GPGPU-Sim PTX: Parsing app.sm_70.ptx\napp.sm_70.ptx:44 Syntax error:\n\n   \t{ mov.b32 %f1, {0,%rs1};}\n   \t                ^\n\nGPGPU-Sim PTX: finished parsing\n";
        let e = failure(syntax).unwrap();
        assert!(e.starts_with("the PTX `mov.b32 %f1, {0,%rs1};` (app.sm_70.ptx:44)"), "{e}");
        assert_eq!(failure_place(syntax), Some(("app.sm_70.ptx".to_string(), 44)));
        assert_eq!(failure_place("GPGPU-Sim PTX: Parser error in file x.ptx line 12\n"), None);
        assert!(e.contains("Syntax error"), "{e}");
        let api = "\n\nGPGPU-Sim PTX: Execution error: CUDA API function \"cudaMallocAsync()\" has not been implemented yet.\n";
        let e = failure(api).unwrap();
        assert!(e.starts_with("the CUDA runtime function `cudaMallocAsync` is not implemented"), "{e}");
        let loader = "./app: symbol lookup error: ./app: undefined symbol: cudaGraphInstantiateWithFlags, version libcudart.so.11.0\n";
        let e = failure(loader).unwrap();
        assert!(
            e.starts_with("the CUDA function `cudaGraphInstantiateWithFlags` is not in GPGPU-Sim's runtime"),
            "{e}"
        );
        let op = "GPGPU-Sim PTX: ERROR (app.ptx:12) instruction \"ldmatrix\" not (yet) implemented\n";
        assert!(failure(op).unwrap().starts_with("the PTX instruction `ldmatrix` is not implemented"));
    }

    #[test]
    fn a_chain_of_inlined_calls_is_followed_out_through_each_loc_before() {
        // As nvcc writes `twice()` of a header `mine.cuh` calling `__ldg`, called on line 7.
        let ptx = r#"
.visible .entry k(
	.param .u64 k_param_0
)
{
	.loc	1 7 20
	.loc	3 3 19, function_name $L__info_string2, inlined_at 1 7 20
	.loc	2 134 86, function_name $L__info_string3, inlined_at 3 3 19
	ld.global.nc.f32 %f3, [%rd5];
	.loc	3 3 19, function_name $L__info_string2, inlined_at 1 7 20
	mul.f32 %f4, %f3, 0f40000000;
	.loc	2 134 86, function_name $L__info_string3, inlined_at 9 9 9
	ld.global.nc.f32 %f5, [%rd5];
	ret;
}
	.file	1 "/a/k.cu"
	.file	2 "/cuda/include/sm_32_intrinsics.hpp"
	.file	3 "/a/mine.cuh"
"#;
        let p = Ptx::parse(ptx);
        let ld = p.instructions.values().find(|i| i.opcode.starts_with("ld.global")).unwrap();
        assert_eq!(ld.source, Some(("/cuda/include/sm_32_intrinsics.hpp".into(), 134)));
        assert_eq!(ld.call_sites, [("/a/mine.cuh".into(), 3), ("/a/k.cu".into(), 7)]);
        let mul = p.instructions.values().find(|i| i.opcode.starts_with("mul")).unwrap();
        assert_eq!(mul.call_sites, [("/a/k.cu".into(), 7)]);
        // A call site no `.loc` named (file 9 is not declared): the chain ends there.
        let last = p.instructions.values().filter(|i| i.opcode.starts_with("ld.global")).nth(1).unwrap();
        assert!(last.call_sites.is_empty(), "{:?}", last.call_sites);
    }
}
