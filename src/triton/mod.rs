//! `coalprof triton FILE.py::KERNEL`: a Triton kernel's per-line sectors per request without a
//! GPU. The backend's room: the request (the kernel, grid, arguments, target) typed from the
//! flags, the counter's counts read back, and turned into `lines`' rows at one seam
//! ([`crate::lines::counted`]); the run folder it saves and `lines RUN`/`check RUN` read.
//!
//! The counting is the counter's (`python/coalprof/_triton.py`, run by [`crate::tools::triton`]):
//! Triton's compiler gives each memory op's layout and vector width, its interpreter every
//! program's addresses; per (program, warp, instruction) a request where a lane is active and
//! the distinct 32-byte sectors of the active lanes' bytes, as ncu counts them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::lines::counted::{CountedInstruction, CountedKernel};
use crate::lines::instructions::Counters;
use crate::lines::source::Sources;
use crate::lines::{LineReport, Op, Options};
use crate::metrics::Catalogue;

/// The counter's document in a run folder.
pub const DOC_FILE: &str = "triton.json";

/// One `--arg NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Arg {
    /// `NAME=f32[8192]` or `NAME=f16[64,64]`: a buffer of that type and shape, random data.
    Tensor {
        /// Its name.
        name: String,
        /// Triton's short spelling (`f32`, `bf16`, `i32`).
        dtype: String,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// `NAME=8192`: an integer scalar.
    Int {
        /// Its name.
        name: String,
        /// Its value.
        value: i64,
    },
    /// `NAME=0.5`: a float scalar.
    Float {
        /// Its name.
        name: String,
        /// Its value.
        value: f64,
    },
    /// `NAME=@file.npy`: a buffer with the file's data (indices of a gather).
    Npy {
        /// Its name.
        name: String,
        /// The file.
        path: PathBuf,
    },
}

/// The dtypes `--arg` takes, as Triton spells them short.
pub const DTYPES: &[&str] = &["i1", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32", "f64"];

/// `NAME=VALUE` of `--arg`, or why not.
pub fn parse_arg(text: &str) -> Result<Arg> {
    let (name, value) = split_named(text, "--arg")?;
    if let Some(path) = value.strip_prefix('@') {
        return Ok(Arg::Npy { name, path: PathBuf::from(path) });
    }
    if let Some((dtype, rest)) = value.split_once('[') {
        let dims = rest.strip_suffix(']').ok_or_else(|| bad_arg(text))?;
        if !DTYPES.contains(&dtype) {
            return Err(Error::usage(format!(
                "`--arg {text}`: unknown dtype `{dtype}` (one of {})",
                DTYPES.join(", ")
            )));
        }
        let shape = dims
            .split(',')
            .map(|d| d.trim().parse::<u64>().ok().filter(|&n| n > 0))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad_arg(text))?;
        return Ok(Arg::Tensor { name, dtype: dtype.to_string(), shape });
    }
    if let Ok(value) = value.parse::<i64>() {
        return Ok(Arg::Int { name, value });
    }
    match value.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(Arg::Float { name, value }),
        _ => Err(bad_arg(text)),
    }
}

fn bad_arg(text: &str) -> Error {
    Error::usage(format!(
        "`--arg {text}` is not `NAME=dtype[shape]` (`x=f32[8192]`), `NAME=INTEGER`, `NAME=FLOAT` or `NAME=@file.npy`"
    ))
}

fn split_named(text: &str, flag: &str) -> Result<(String, String)> {
    match text.split_once('=') {
        Some((n, v)) if is_identifier(n) && !v.is_empty() => Ok((n.to_string(), v.to_string())),
        _ => Err(Error::usage(format!("`{flag} {text}` is not `NAME=VALUE` (a Python parameter name)"))),
    }
}

fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_') && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `NAME=VALUE` of `--meta` (a `tl.constexpr`): an integer, a float, `true`/`false`, else text.
pub fn parse_meta(text: &str) -> Result<(String, Value)> {
    let (name, v) = split_named(text, "--meta")?;
    let value = if let Ok(i) = v.parse::<i64>() {
        Value::from(i)
    } else if let Some(f) = v.parse::<f64>().ok().filter(|f| f.is_finite()) {
        Value::from(f)
    } else if v == "true" || v == "false" {
        Value::from(v == "true")
    } else {
        Value::from(v)
    };
    Ok((name, value))
}

/// `FILE.py::KERNEL`.
pub fn parse_target(text: &str) -> Result<(PathBuf, String)> {
    match text.rsplit_once("::") {
        Some((f, k)) if !f.is_empty() && is_identifier(k) => Ok((PathBuf::from(f), k.to_string())),
        _ => Err(Error::usage(format!("`{text}` is not `FILE.py::KERNEL` (the file and its `@triton.jit` function)"))),
    }
}

/// `sm_80` → 80.
pub fn parse_arch(text: &str) -> Result<u32> {
    text.strip_prefix("sm_")
        .map(|s| s.trim_end_matches('a'))
        .and_then(|s| s.parse::<u32>().ok())
        .filter(|&cc| (70..=120).contains(&cc))
        .ok_or_else(|| Error::usage(format!("`--arch {text}` is not an architecture Triton targets (sm_70 … sm_120)")))
}

/// One kernel to interpret: everything the counter needs, as it reads it (JSON).
#[derive(Debug, Clone, Serialize)]
pub struct Request {
    /// The kernel's file.
    pub file: PathBuf,
    /// The `@triton.jit` function.
    pub kernel: String,
    /// Programs along x, y, z.
    pub grid: Vec<u32>,
    /// The arguments.
    pub args: Vec<Arg>,
    /// The `tl.constexpr` values.
    pub meta: serde_json::Map<String, Value>,
    /// Warps per program.
    pub num_warps: u32,
    /// Software pipelining stages.
    pub num_stages: u32,
    /// The compute capability compiled for (90 for sm_90).
    pub cc: u32,
    /// Programs to run (spread evenly, each axis's last always), `None` for all.
    pub programs: Option<u64>,
}

/// What the counter found for one PTX memory instruction, summed over the programs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Instruction {
    /// The kernel's file.
    pub file: String,
    /// The source line (its TTGIR `loc`).
    pub line: u32,
    /// The line the cubin's line table gives it (ncu's), when it differs it is shown.
    pub ncu_line: Option<u32>,
    /// `load` or `store`.
    pub op: String,
    /// Which of the line's instructions (a `tl.load` of 4 registers a lane is 4 scalar loads).
    pub instruction: u32,
    /// The PTX instruction (`ld.global.v4.b32`).
    pub ptx: Option<String>,
    /// Bytes per lane.
    pub access_bytes: u32,
    /// The layout of the op (`#ttg.blocked<…>`).
    pub layout: Option<String>,
    /// Warp-level executions.
    pub executions: f64,
    /// Requests: executions with an active lane.
    pub requests: f64,
    /// Distinct 32-byte sectors of active lanes, per request, summed.
    pub sectors: f64,
    /// `ceil(active lanes × bytes / 32)`, summed.
    pub ideal_sectors: f64,
    /// Active lanes, summed.
    pub threads: f64,
}

/// A line the counter could not count, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotModelled {
    /// The file.
    pub file: String,
    /// The line.
    pub line: u32,
    /// The op (`load`, `cp.async`, `atomic`, `tma`).
    pub op: String,
    /// Why.
    pub why: String,
}

/// Which programs ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Programs {
    /// Programs in the grid.
    pub total: u64,
    /// Programs interpreted.
    pub run: u64,
    /// Whether the totals are scaled from a sample.
    pub scaled: bool,
    /// The sampled programs, when sampled.
    pub sampled: Option<Vec<[u32; 3]>>,
}

/// The counter's document (`coalprof-triton/1`), also a run folder's `triton.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interpreted {
    /// `coalprof-triton/1`.
    pub schema: String,
    /// The kernel.
    pub kernel: String,
    /// Its file.
    pub file: String,
    /// Triton's version.
    pub triton: String,
    /// `cuda:90`.
    pub target: String,
    /// `sm_90`.
    pub arch: String,
    /// Warps per program.
    pub num_warps: u32,
    /// Pipelining stages.
    pub num_stages: u32,
    /// Programs along x, y, z.
    pub grid: [u32; 3],
    /// Which programs ran.
    pub programs: Programs,
    /// Each parameter as the JIT specialised it (`*fp32, divisible by 16`, `constexpr (1)`).
    pub specialisation: serde_json::Map<String, Value>,
    /// Every memory instruction counted.
    pub instructions: Vec<Instruction>,
    /// Lines not modelled.
    pub not_modelled: Vec<NotModelled>,
}

/// Interpret `request` with the counter.
pub fn interpret(triton: &crate::tools::triton::Triton, cache: &Path, request: &Request) -> Result<Interpreted> {
    let json = serde_json::to_string(request).map_err(|e| Error::encoding("JSON", e))?;
    let out = triton.run(cache, &request.file, &json)?;
    serde_json::from_str(&out).map_err(|e| Error::Internal(format!("the Triton counter's output is not its JSON: {e}")))
}

/// What a person should know of the counts: that they are interpreted, sampled, which lines
/// are not modelled, and where ncu would show a line.
pub fn notices(doc: &Interpreted) -> Vec<String> {
    let mut n = vec![format!(
        "interpreted: Triton {}'s interpreter and its {} layout (num_warps {}, num_stages {}), no GPU",
        doc.triton, doc.arch, doc.num_warps, doc.num_stages
    )];
    if doc.programs.scaled {
        n.push(format!(
            "sampled: {} of {} programs interpreted (each axis's last among them), totals scaled by {:.2}",
            doc.programs.run,
            doc.programs.total,
            doc.programs.total as f64 / doc.programs.run.max(1) as f64
        ));
    }
    for m in &doc.not_modelled {
        n.push(format!("not modelled: {}:{}: the {}: {}", m.file, m.line, m.op, m.why));
    }
    let mut shifted: Vec<(u32, &str, u32)> = (doc.instructions.iter())
        .filter_map(|i| Some((i.line, i.op.as_str(), i.ncu_line.filter(|&l| l != i.line)?)))
        .collect();
    shifted.dedup();
    for (line, op, ncu) in shifted {
        n.push(format!(
            "{}:{line}: ncu shows this {op} on line {ncu} (the `.loc` the PTX gives the instruction, which ptxas carries into the line table: LLVM moves inline-asm loads on, llvm-project#177718)",
            doc.file
        ));
    }
    n
}

/// `lines`' rows of an interpreted kernel.
pub fn line_report(
    doc: &Interpreted,
    opts: &Options,
    catalogue: &Catalogue,
    sources: &mut Sources,
) -> Result<LineReport> {
    let instructions = (doc.instructions.iter().enumerate())
        .map(|(index, i)| {
            let text = i.ptx.clone().map(|p| match i.ncu_line {
                Some(l) if l != i.line => format!("{p} (ncu: line {l})"),
                _ => p,
            });
            CountedInstruction {
                source: (i.file.clone(), i.line),
                index: index as u64,
                text,
                op: if i.op == "store" { Op::GlobalStore } else { Op::GlobalLoad },
                counters: Counters {
                    access_bytes: Some(i.access_bytes),
                    executions: Some(i.executions),
                    requests: Some(i.requests),
                    threads: Some(i.threads),
                    sectors: Some(i.sectors),
                    ideal_sectors: Some(i.ideal_sectors),
                    excess_sectors: Some((i.sectors - i.ideal_sectors).max(0.0)),
                    instructions: 1,
                    ..Counters::default()
                },
            }
        })
        .collect();
    let kernel = CountedKernel {
        kernel: doc.kernel.clone(),
        grid: Some(doc.grid),
        block: Some([doc.num_warps * 32, 1, 1]),
        instructions,
    };
    crate::lines::counted::build(vec![kernel], opts, catalogue, sources, Some(doc.arch.clone()), notices(doc))
}

/// The `run.json` of a run folder: what was interpreted, how.
pub fn run_json(doc: &Interpreted, request: &Request) -> Value {
    serde_json::json!({
        "schema": "coalprof-triton-run/1",
        "backend": "triton",
        "interpreted": true,
        "coalprof": env!("CARGO_PKG_VERSION"),
        "triton": doc.triton,
        "target": doc.target,
        "arch": doc.arch,
        "kernel": doc.kernel,
        "file": doc.file,
        "grid": doc.grid,
        "num_warps": doc.num_warps,
        "num_stages": doc.num_stages,
        "specialisation": doc.specialisation,
        "programs": doc.programs,
        "request": request,
    })
}

/// The `results.json` of a run folder: no kernel-level rows (the counts are per line), the
/// provenance saying what interpreted them, and the worst lines, so `check RUN` reads it as any
/// run and gates its line rows.
pub fn results(doc: &Interpreted, report: &LineReport) -> crate::results::Results {
    let cc = doc.target.trim_start_matches("cuda:");
    let cc = match cc.len() {
        3 => format!("{}.{}", &cc[..2], &cc[2..]),
        _ => format!("{}.{}", &cc[..1], &cc[1..]),
    };
    let mut settings = std::collections::BTreeMap::new();
    settings.insert("interpreted".into(), Value::from(true));
    settings.insert("triton".into(), Value::from(doc.triton.clone()));
    settings.insert("num_warps".into(), Value::from(doc.num_warps));
    settings.insert("num_stages".into(), Value::from(doc.num_stages));
    settings.insert("programs".into(), Value::from(doc.programs.run));
    let provenance = crate::results::Provenance {
        coalprof: env!("CARGO_PKG_VERSION").into(),
        backend: crate::results::Backend::Triton,
        compute_capability: Some(cc),
        settings,
        inputs: vec![doc.file.clone()],
        ..Default::default()
    };
    let mut r = crate::results::Results::new(provenance, Vec::new());
    r.notices = report.notices.clone();
    r.worst_lines = crate::lines::gate_rows::worst_lines(report, &|_| (None, None));
    r
}

/// The counter's document of a run folder `coalprof triton --out` saved, if `path` is one.
pub fn folder(path: &Path) -> Option<PathBuf> {
    let doc = path.join(DOC_FILE);
    doc.is_file().then_some(doc)
}

/// Read a run folder's document.
pub fn read_folder(doc: &Path) -> Result<Interpreted> {
    let text = std::fs::read_to_string(doc).map_err(|e| Error::input(doc, e.to_string()))?;
    serde_json::from_str(&text).map_err(|e| Error::input(doc, format!("not coalprof's Triton document: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_as_the_flags_spell_them() {
        assert_eq!(
            parse_arg("x_ptr=f32[64,128]").unwrap(),
            Arg::Tensor { name: "x_ptr".into(), dtype: "f32".into(), shape: vec![64, 128] }
        );
        assert_eq!(parse_arg("n=8192").unwrap(), Arg::Int { name: "n".into(), value: 8192 });
        assert_eq!(parse_arg("s=0.5").unwrap(), Arg::Float { name: "s".into(), value: 0.5 });
        assert_eq!(parse_arg("idx=@i.npy").unwrap(), Arg::Npy { name: "idx".into(), path: "i.npy".into() });
        for bad in ["x", "=3", "x=f33[8]", "x=f32[0]", "x=f32[8", "x=abc", "1x=3"] {
            let e = parse_arg(bad).unwrap_err();
            assert_eq!(e.exit(), crate::exit::Exit::Usage, "{bad}: {e}");
        }
        assert_eq!(parse_meta("BLOCK=256").unwrap(), ("BLOCK".into(), Value::from(256)));
        assert_eq!(parse_target("k.py::copy").unwrap(), (PathBuf::from("k.py"), "copy".into()));
        assert!(parse_target("k.py").is_err());
        assert_eq!(parse_arch("sm_90a").unwrap(), 90);
        assert!(parse_arch("90").is_err());
    }
}
