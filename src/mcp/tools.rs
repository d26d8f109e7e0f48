//! The server's tools, one per coalprof command an agent needs: each an input schema (the
//! doc comments are the descriptions an agent reads) and the child's argument vector.

use std::ffi::OsString;
use std::time::{Duration, Instant};

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;

use super::outcome;
use crate::tools::coalprof::Coalprof;

/// The MCP server: the child it runs per call.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    coalprof: Coalprof,
}

impl Server {
    pub(crate) fn new(coalprof: Coalprof) -> Server {
        Server { coalprof }
    }
}

/// `analyze`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct AnalyzeArgs {
    /// Nsight Compute reports (`.ncu-rep`) or ncu CSV exports, as paths (relative ones to the
    /// folder the server runs in).
    pub reports: Vec<String>,
    /// Kernels, lines and checks the summary shows, each, worst first (default 5, within 4 KB;
    /// 0: all).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `lines`' arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct LinesArgs {
    /// A `.ncu-rep` report made with the SourceCounters section (`ncu --set full`, kernels built
    /// with `-lineinfo`), or a run folder `profile_sim` or `triton` saved.
    pub report: String,
    /// Only kernels whose name matches this regex.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Kernels, lines and checks the summary shows, each, worst first (default 5, within 4 KB;
    /// 0: all).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `profile_sim`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ProfileSimArgs {
    /// A CUDA program's source file (`.cu`, with its `main`): compiled with CUDA 11.8 for
    /// GPGPU-Sim (`-arch=sm_70 -lineinfo`) and run there.
    pub source: String,
    /// Extra nvcc arguments (`-Iinclude`, `-DN=4096`).
    #[serde(default)]
    pub nvcc_args: Vec<String>,
    /// The program's own command-line arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Only kernels whose function name matches this regex.
    #[serde(default)]
    pub kernel: Option<String>,
    /// Where to save the run folder (default: `profiles/` in the checkout); `lines` and `check`
    /// read it.
    #[serde(default)]
    pub out: Option<String>,
    /// Kernels, lines and checks the summary shows, each, worst first (default 5, within 4 KB;
    /// 0: all).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `triton`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct TritonArgs {
    /// The kernel as `FILE.py::KERNEL` (the file is read, never imported).
    pub kernel: String,
    /// Programs along x[,y[,z]], e.g. `64` or `16,16`.
    pub grid: String,
    /// Kernel arguments, `NAME=f32[8192]` (a buffer: dtype and shape), `NAME=INTEGER`,
    /// `NAME=FLOAT` or `NAME=@file.npy`, one per argument.
    #[serde(default)]
    pub args: Vec<String>,
    /// `tl.constexpr` values, `BLOCK=1024`.
    #[serde(default)]
    pub meta: Vec<String>,
    /// Warps per program (default 4).
    #[serde(default)]
    pub num_warps: Option<u32>,
    /// The GPU architecture compiled for (default `sm_90`).
    #[serde(default)]
    pub arch: Option<String>,
    /// Interpret only this many programs spread over the grid and scale the totals (default:
    /// every program).
    #[serde(default)]
    pub programs: Option<u64>,
    /// Kernels, lines and checks the summary shows, each, worst first (default 5, within 4 KB;
    /// 0: all).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Save a run folder here (for `lines` and `check`).
    #[serde(default)]
    pub out: Option<String>,
}

/// `model`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct ModelArgs {
    /// The element index each lane touches, over `lane`, `warp`, `tid`, `block` and your own
    /// names, e.g. `(block * 32 + lane) * stride`.
    pub expr: String,
    /// `name=VALUE` constants and `name=A..B` loop variables (each value of a loop variable is
    /// one warp instruction), e.g. `stride=32`, `k=0..8`.
    #[serde(default)]
    pub bindings: Vec<String>,
    /// Bytes per element: 1, 2, 4, 8 or 16 (default 4).
    #[serde(default)]
    pub bytes: Option<u32>,
    /// The array is in shared memory: report wavefronts and bank conflicts instead of sectors.
    #[serde(default)]
    pub shared: bool,
}

/// `check`'s arguments.
#[derive(Debug, Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(crate) struct CheckArgs {
    /// Run folders (from `profile_sim`, `triton` with `out`, `coalprof run`), `results.json`
    /// files, ncu CSVs or `.ncu-rep` reports.
    pub inputs: Vec<String>,
    /// A rules file whose `[[gate]]` entries replace the built-in ones.
    #[serde(default)]
    pub rules: Option<String>,
    /// A baseline JSON to compare `regress` rules against.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Kernels, lines and checks the summary shows, each, worst first (default 5, within 4 KB;
    /// 0: all).
    #[serde(default)]
    pub limit: Option<u32>,
}

#[tool_router]
impl Server {
    /// Per-kernel numbers of Nsight Compute reports.
    #[tool(
        description = "Per-kernel memory efficiency of Nsight Compute reports (.ncu-rep or ncu CSV) someone made on a \
        GPU: sectors per request against the ideal for the access width, sector efficiency, amplification, bank \
        conflicts. Use it to see which kernel of a report wastes bandwidth; then `lines` for the source line.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn analyze(
        &self,
        Parameters(a): Parameters<AnalyzeArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("analyze");
        option(&mut args, "--summary-limit", a.limit);
        args.push("--".into());
        args.extend(a.reports.iter().map(|p| path(p)));
        self.call("analyze", args, ctx).await
    }

    /// Per-line numbers of a report or a run folder.
    #[tool(
        description = "Which source line wastes the bandwidth: per line sectors per request against the ideal, excess \
        sectors and their share of the kernel's, bank conflicts, and a diagnosis with the fix. Input: a .ncu-rep \
        made with SourceCounters (`ncu --set full`, `-lineinfo`), or the run folder `profile_sim` or `triton` \
        saved.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn lines(
        &self,
        Parameters(a): Parameters<LinesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("lines");
        option(&mut args, "--kernel", a.kernel.as_deref());
        option(&mut args, "--summary-limit", a.limit);
        args.push("--".into());
        args.push(path(&a.report));
        self.call("lines", args, ctx).await
    }

    /// A `.cu` program in GPGPU-Sim.
    #[tool(
        description = "Run a CUDA program (.cu source with main) without a GPU: compiled for and executed in \
        GPGPU-Sim: per-kernel sectors per request against the ideal, the worst source lines with a diagnosis and \
        the fix, and the run folder saved (for `lines` with more rows, or `check`). Use it after writing or changing a kernel to see \
        whether its loads and stores coalesce. Takes seconds to minutes: keep the problem small (a few thousand \
        threads give the same per-request numbers). The numbers are the simulator's, not a measured GPU's.",
        annotations(read_only_hint = false, open_world_hint = false)
    )]
    async fn profile_sim(
        &self,
        Parameters(a): Parameters<ProfileSimArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("profile");
        args.push("--backend=sim".into());
        for n in &a.nvcc_args {
            option(&mut args, "--nvcc-arg", Some(n));
        }
        option(&mut args, "--kernel", a.kernel.as_deref());
        option(&mut args, "--out", a.out.as_deref());
        option(&mut args, "--summary-limit", a.limit);
        args.push(path(&a.source));
        args.push("--".into());
        args.extend(a.args.iter().map(OsString::from));
        self.call("profile_sim", args, ctx).await
    }

    /// A Triton kernel, interpreted.
    #[tool(
        description = "A Triton kernel's per-line sectors per request without a GPU: compiled for the target (each \
        load's and store's layout and vector width) and every program's addresses from Triton's interpreter. \
        Describe the launch: the grid, each argument (`x=f32[4096]` for a buffer, `n=4096`), the constexprs \
        (`BLOCK=1024`). The numbers are the model's, not a measured GPU's.",
        annotations(read_only_hint = false, open_world_hint = false)
    )]
    async fn triton(
        &self,
        Parameters(a): Parameters<TritonArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("triton");
        option(&mut args, "--grid", Some(&a.grid));
        for v in &a.args {
            option(&mut args, "--arg", Some(v));
        }
        for v in &a.meta {
            option(&mut args, "--meta", Some(v));
        }
        option(&mut args, "--num-warps", a.num_warps);
        option(&mut args, "--arch", a.arch.as_deref());
        option(&mut args, "--programs", a.programs);
        option(&mut args, "--summary-limit", a.limit);
        option(&mut args, "--out", a.out.as_deref());
        args.push("--".into());
        args.push(path(&a.kernel));
        self.call("triton", args, ctx).await
    }

    /// The address model on an index expression.
    #[tool(
        description = "Predict the coalescing of an access before writing the kernel: the address model on the index \
        expression each lane touches (over lane, warp, tid, block and loop variables), with no GPU and no \
        compiler. Gives sectors per request against the ideal (global memory) or wavefronts and bank conflicts \
        (`shared`). Use it to compare layouts (row- vs column-major, padding `[N][33]`) in milliseconds.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn model(
        &self,
        Parameters(a): Parameters<ModelArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("model");
        option(&mut args, "--bytes", a.bytes);
        if a.shared {
            args.push("--shared".into());
        }
        args.push("--".into());
        args.push(OsString::from(&a.expr));
        args.extend(a.bindings.iter().map(OsString::from));
        self.call("model", args, ctx).await
    }

    /// The gate.
    #[tool(
        description = "The gate: check run folders or reports against coalprof's rules (or a rules file) and an \
        optional baseline, with a verdict per kernel and metric. A failed gate is a result (`gate_failed` in the \
        text), not a tool error. Use it to confirm a kernel change made nothing worse.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn check(
        &self,
        Parameters(a): Parameters<CheckArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut args = command("check");
        option(&mut args, "--rules", a.rules.as_deref());
        option(&mut args, "--baseline", a.baseline.as_deref());
        option(&mut args, "--summary-limit", a.limit);
        args.push("--".into());
        args.extend(a.inputs.iter().map(|p| path(p)));
        self.call("check", args, ctx).await
    }
}

// What the server tells an agent on `initialize` (the macro takes a literal only).
#[tool_handler(
    name = "coalprof",
    instructions = "coalprof shows how CUDA and Triton kernels touch memory: sectors per request against \
the ideal for the access width, per kernel and per source line, with a diagnosis and a fix. Without a GPU: \
`profile_sim` runs a .cu file in GPGPU-Sim, `triton` interprets a Triton kernel, `model` predicts an index \
expression. With a report someone made on a GPU: `analyze` (per kernel), `lines` (per source line). `check` \
is the gate. Every tool returns the compact summary (coalprof-summary/1): per kernel each number beside its \
ideal, the worst lines with diagnosis and fix. Read \"32.00 (ideal 4.00)\" as 8x the sectors a perfectly \
coalesced access needs."
)]
impl ServerHandler for Server {}

/// A tick of progress this often while a child runs (for a client that sent a progress token).
const TICK: Duration = Duration::from_secs(1);

impl Server {
    /// Run the child for tool `tool` and turn what it did into the tool's result; a progress
    /// notification every [`TICK`] where the client asked for them; the child stopped if the
    /// client cancels the request.
    async fn call(
        &self,
        tool: &'static str,
        args: Vec<OsString>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let cancelled = ctx.ct.clone();
        let run = self.coalprof.run(args, cancelled.cancelled_owned());
        tokio::pin!(run);
        let progress = ctx.meta.get_progress_token();
        let started = Instant::now();
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + TICK, TICK);
        let captured = loop {
            tokio::select! {
                done = &mut run => break done,
                _ = ticks.tick(), if progress.is_some() => {
                    let token = progress.clone().expect("the branch runs only with a token");
                    let secs = started.elapsed().as_secs();
                    let note = ProgressNotificationParam::new(token, secs as f64)
                        .with_message(format!("{tool}: running for {secs} s"));
                    // A client that cannot take a notification still gets the result.
                    let _ = ctx.peer.notify_progress(note).await;
                }
            }
        };
        Ok(outcome::result(tool, captured))
    }
}

/// The child's first arguments: the command, and the output every tool returns: the compact,
/// versioned summary (`coalprof-summary/1`, a few KB: `render/summary.rs`).
fn command(name: &str) -> Vec<OsString> {
    vec![name.into(), "--format=summary".into()]
}

/// `--flag=VALUE` (one argument: a value that starts with `-` stays a value), when given.
fn option(args: &mut Vec<OsString>, flag: &str, value: Option<impl std::fmt::Display>) {
    if let Some(v) = value {
        args.push(format!("{flag}={v}").into());
    }
}

/// A path argument where a flag may follow: one that starts with `-` is given as `./-…` (the
/// same file), so it can never be read as a flag.
fn path(p: &str) -> OsString {
    if p.starts_with('-') {
        format!("./{p}").into()
    } else {
        p.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_look_like_flags_stay_values() {
        assert_eq!(path("-rf"), OsString::from("./-rf"));
        assert_eq!(path("a/-b.cu"), OsString::from("a/-b.cu"));
        let mut args = Vec::new();
        option(&mut args, "--kernel", Some("-x"));
        option(&mut args, "--top", None::<u32>);
        assert_eq!(args, [OsString::from("--kernel=-x")]);
    }
}
