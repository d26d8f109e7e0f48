//! `profile --backend sim FILE.cu` on CUDA programs written the way people write them
//! (`tests/programs/sim/`: cooperative groups, CUB, Thrust, the profiler API and device
//! queries, libcu++ atomics with memory orders, streaming intrinsics and float4, hundreds of
//! template instantiations, bf16 layernorm and GELU kernels in the style of LLM training code,
//! packed half2 arithmetic): each compiles with the tool home's CUDA 11.8 and its C++
//! libraries, runs in GPGPU-Sim from a folder of its own, checks its own results against the
//! host (a wrong simulation exits 1, and `profile` with it), and its per-line counters equal
//! what the address arithmetic in its source gives, derived here. And a program using what
//! the simulator cannot do is one error naming it, exit 3, with the log kept.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::util::{coalprof, json, root, skipped, OkStdout};

/// The simulator, its toolkit and the toolkit's C++ libraries, or `None` (said loudly).
fn tools(test: &str) -> Option<PathBuf> {
    let tools = root().join(".tools");
    let need = [
        tools.join("gpgpu-sim/lib/libcudart.so"),
        tools.join("cuda11/bin/nvcc"),
        tools.join("cuda11/include/cuda/std/type_traits"),
        tools.join("cuda11/include/cub/cub.cuh"),
        tools.join("cuda11/include/thrust/version.h"),
    ];
    match need.iter().find(|p| !p.exists()) {
        Some(p) => {
            skipped(test, &format!("{} is missing; run `coalprof setup sim` with COALPROF_HOME=.tools", p.display()));
            None
        }
        None => Some(tools),
    }
}

/// One program profiled: its results, its lines, its source and its run folder.
struct Profiled {
    results: serde_json::Value,
    lines: serde_json::Value,
    source: String,
    run: PathBuf,
    _dir: tempfile::TempDir,
}

impl Profiled {
    /// The line of the source holding `marker` (a `// MARKER` comment on the access), 1-based.
    fn line_of(&self, marker: &str) -> u64 {
        let i = self
            .source
            .lines()
            .position(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no {marker} in the program"));
        i as u64 + 1
    }

    /// The lines row of the access on `marker`'s line, of kind `op` (`global load`, `shared store`…).
    fn line(&self, marker: &str, op: &str) -> &serde_json::Value {
        let n = self.line_of(marker);
        let rows = self.lines["rows"].as_array().unwrap();
        rows.iter()
            .find(|r| {
                r["line"].as_u64() == Some(n)
                    && r["op"] == op
                    && r["file"].as_str().is_some_and(|f| !f.contains("/include/"))
            })
            .unwrap_or_else(|| panic!("no {op} row on line {n} ({marker}): {rows:#?}"))
    }

    /// The results row of the kernel whose name starts with `prefix`.
    fn kernel(&self, prefix: &str) -> &serde_json::Value {
        let rows = self.results["rows"].as_array().unwrap();
        rows.iter().find(|r| r["kernel"].as_str().is_some_and(|k| k.starts_with(prefix))).unwrap_or_else(|| {
            panic!("no kernel {prefix}: {:?}", rows.iter().map(|r| &r["kernel"]).collect::<Vec<_>>())
        })
    }

    /// The simulator's PTX of the program (every kernel it holds, launched or not).
    fn ptx(&self) -> String {
        let sim = self.run.join("sim");
        let mut text = String::new();
        for e in std::fs::read_dir(&sim).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "ptx") {
                text += &std::fs::read_to_string(e.path()).unwrap();
            }
        }
        text
    }
}

/// The metric `name` of a results row.
fn metric(row: &serde_json::Value, name: &str) -> Option<f64> {
    row["metrics"][name].as_f64()
}

/// Copy `tests/programs/sim/NAME.cu` into a fresh folder and run `profile --backend sim` on it
/// there, as a user would, with the simulator named as a tool home stands for it; `lines` on
/// the saved run. Prints the wall time (the issue's budget: ≤ 10 s a program, release build).
fn profile(test: &str, name: &str) -> Option<Profiled> {
    let tools = tools(test)?;
    let dir = tempfile::tempdir().unwrap();
    let file = format!("{name}.cu");
    let source = std::fs::read_to_string(root().join("tests/programs/sim").join(&file)).unwrap();
    std::fs::write(dir.path().join(&file), &source).unwrap();
    let start = Instant::now();
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["--format", "json", "profile", "--backend", "sim", &file])
        .output()
        .unwrap();
    eprintln!("{test}: {name}.cu compiled and simulated in {:.1} s", start.elapsed().as_secs_f64());
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    let run = only_run(dir.path());
    let lines = json(&coalprof().current_dir(dir.path()).args(["--format", "json", "lines"]).arg(&run).ok_stdout());
    Some(Profiled { results, lines, source, run, _dir: dir })
}

fn only_run(dir: &Path) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(dir.join("profiles")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

/// Warps of `threads` threads.
fn warps(threads: u64) -> u64 {
    threads.div_ceil(32)
}

/// 32-byte sectors that `bytes` contiguous, sector-aligned bytes cover.
fn sectors(bytes: u64) -> u64 {
    bytes.div_ceil(32)
}

#[test]
fn a_cooperative_groups_reduction_runs_and_its_lines_are_the_arithmetics() {
    let Some(p) = profile("a_cooperative_groups_reduction_runs", "cg_reduce") else { return };
    // n = 1 << 14 floats, blocks of 256 threads: 64 blocks, 8 warps each.
    let (n, block) = (1u64 << 14, 256u64);
    let blocks = n / block;
    let all_warps = warps(n);
    // Each warp loads 32 consecutive floats: one request, 128 bytes, 4 sectors.
    let load = p.line("LOAD_IN", "global load");
    assert_eq!((load["requests"].as_u64(), load["sectors"].as_u64()), (Some(all_warps), Some(sectors(n * 4))));
    // Lane 0 of every warp stores its partial: one lane, one wavefront, per warp.
    let store = p.line("STORE_PARTIAL", "shared store");
    assert_eq!(
        (store["executions"].as_u64(), store["shared_wavefronts"].as_u64(), store["active_lanes"].as_f64()),
        (Some(all_warps), Some(all_warps), Some(1.0))
    );
    // Warp 0 of each block reads the 8 partials: 8 lanes, 32 contiguous bytes, one wavefront.
    let partials = p.line("LOAD_PARTIAL", "shared load");
    assert_eq!(
        (partials["executions"].as_u64(), partials["shared_wavefronts"].as_u64(), partials["active_lanes"].as_f64()),
        (Some(blocks), Some(blocks), Some((block / 32) as f64))
    );
    // One float per block: one request, one sector.
    let out = p.line("STORE_OUT", "global store");
    assert_eq!((out["requests"].as_u64(), out["sectors"].as_u64()), (Some(blocks), Some(blocks)));
}

#[test]
fn cub_block_and_device_reductions_run_and_count_as_their_layouts_give() {
    let Some(p) = profile("cub_block_and_device_reductions_run", "cub_reduce") else { return };
    // 16 tiles of 128 threads × 4 ints, BLOCK_LOAD_DIRECT: thread t loads ints 4t..4t+3, one
    // load instruction per item, so each warp request spans 32 × 16 bytes = 16 sectors.
    let (tiles, threads, items) = (16u64, 128u64, 4u64);
    let k = p.kernel("tile_sums(");
    let requests = tiles * warps(threads) * items;
    assert_eq!(metric(k, "global_load_requests"), Some(requests as f64));
    assert_eq!(metric(k, "global_load_sectors"), Some((requests * sectors(32 * 16)) as f64));
    // BlockReduce (warp reductions): each warp's lane 0 stores its aggregate, thread 0 reads
    // the other warps' ones.
    assert_eq!(metric(k, "shared_store_instructions"), Some((tiles * warps(threads)) as f64));
    assert_eq!(metric(k, "shared_load_instructions"), Some((tiles * (warps(threads) - 1)) as f64));
    let out = p.line("STORE_OUT", "global store");
    assert_eq!((out["requests"].as_u64(), out["sectors"].as_u64()), (Some(tiles), Some(tiles)));
    // The accesses CUB makes, however deep inside it, stand on the lines of ours that called
    // it, CUB's line beside them: every load of the tile on the `Load` call, the reduction's
    // shared stores and loads on the `Sum` call.
    let load = p.line("LOAD_TILE", "global load");
    assert_eq!(
        (load["requests"].as_u64(), load["sectors"].as_u64()),
        (Some(requests), Some(requests * sectors(32 * 16)))
    );
    assert!(load["via"].as_str().is_some_and(|v| v.contains("/cub/")), "{load}");
    for op in ["shared store", "shared load"] {
        let r = p.line("REDUCE", op);
        assert!(r["via"].as_str().is_some_and(|v| v.contains("/cub/")), "{op}: {r}");
    }
    // DeviceReduce::Sum over the 16 tile sums: one kernel, 16 ints read = 64 bytes = 2 sectors.
    let device = p.kernel("void cub::");
    assert!(device["kernel"].as_str().unwrap().contains("DeviceReduceSingleTileKernel"), "{device}");
    assert_eq!(metric(device, "global_load_sectors"), Some(sectors(tiles * 4) as f64));
    assert_eq!(metric(device, "global_store_sectors"), Some(1.0));
}

#[test]
fn thrust_device_vectors_transform_and_reduce_in_the_simulator() {
    let Some(p) = profile("thrust_device_vectors_transform_and_reduce", "thrust_saxpy") else { return };
    // n = 4096 floats: 128 warps. The transform reads x and y (two coalesced loads per warp)
    // and writes y (one store per warp), 4 sectors a request.
    let n = 4096u64;
    let rows = p.results["rows"].as_array().unwrap();
    let transform = rows
        .iter()
        .find(|r| r["kernel"].as_str().is_some_and(|k| k.contains("__transform::")))
        .unwrap_or_else(|| panic!("no transform kernel: {rows:#?}"));
    assert_eq!(metric(transform, "global_load_requests"), Some((2 * warps(n)) as f64));
    assert_eq!(metric(transform, "global_load_sectors"), Some((2 * sectors(n * 4)) as f64));
    assert_eq!(metric(transform, "global_store_requests"), Some(warps(n) as f64));
    assert_eq!(metric(transform, "global_store_sectors"), Some(sectors(n * 4) as f64));
    // reduce ran as CUB's device reduction (its result is checked by the program).
    assert!(rows.iter().any(|r| r["kernel"].as_str().is_some_and(|k| k.contains("DeviceReduce"))), "{rows:#?}");
}

#[test]
fn the_profiler_api_and_device_queries_of_cuda_samples_answer_as_a_v100() {
    let Some(p) = profile("the_profiler_api_and_device_queries", "device_query") else { return };
    // The program exits 1 unless the queries answered (compute mode, sm_70, SMs, clock, L2,
    // bus width, opt-in shared memory…) and cudaProfilerStart/Stop succeeded.
    let log = std::fs::read_to_string(p.run.join("sim/gpgpusim.log")).unwrap();
    assert!(log.contains("device 0: sm_70"), "{log}");
    // out[i] = in[2i]: a warp's loads span 32 × 8 bytes = 8 sectors; its stores 4.
    let n = 4096u64;
    let load = p.line("EVERY_OTHER", "global load");
    assert_eq!(
        (load["requests"].as_u64(), load["sectors"].as_u64()),
        (Some(warps(n)), Some(warps(n) * sectors(32 * 8)))
    );
    let store = p.line("EVERY_OTHER", "global store");
    assert_eq!((store["requests"].as_u64(), store["sectors"].as_u64()), (Some(warps(n)), Some(sectors(n * 4))));
}

#[test]
fn an_unlaunched_kernel_with_acq_rel_atomics_does_not_stop_the_run() {
    let Some(p) = profile("an_unlaunched_kernel_with_acq_rel_atomics", "acq_rel_unlaunched") else { return };
    // The PTX the simulator parsed holds the memory orders (else this test tests nothing).
    let ptx = p.ptx();
    for q in [".acq_rel.", "ld.acquire.", "st.release.", "fence.sc."] {
        assert!(ptx.contains(q), "no {q} in the PTX");
    }
    // Only the histogram ran; its 2048 keys are one coalesced load per warp.
    let rows = p.results["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let n = 2048u64;
    let keys = p.line("bins[keys[i] & 15]", "global load");
    assert_eq!((keys["requests"].as_u64(), keys["sectors"].as_u64()), (Some(warps(n)), Some(sectors(n * 4))));
}

#[test]
fn streaming_intrinsics_and_float4_accesses_count_as_their_widths() {
    let Some(p) = profile("streaming_intrinsics_and_float4_accesses", "streaming_float4") else { return };
    let n = 8192u64;
    // __ldcs/__stcs of one float a thread: 4 sectors a warp request, loads and stores.
    let k = p.kernel("scale_streaming(");
    for m in ["global_load", "global_store"] {
        assert_eq!(metric(k, &format!("{m}_requests")), Some(warps(n) as f64), "{m}");
        assert_eq!(metric(k, &format!("{m}_sectors")), Some(sectors(n * 4) as f64), "{m}");
    }
    // Made inside CUDA's `sm_32_intrinsics.hpp`, they stand on the lines that called them,
    // with the intrinsic's own line (its definition, found in the toolkit's header) beside.
    let header = std::fs::read_to_string(root().join(".tools/cuda11/include/sm_32_intrinsics.hpp")).unwrap();
    let defined = |needle: &str| header.lines().position(|l| l.contains(needle)).unwrap() + 1;
    for (marker, op, definition) in [
        ("LDCS", "global load", "float __ldcs(const float *ptr)"),
        ("STCS", "global store", "void __stcs(float *ptr, float value)"),
    ] {
        let r = p.line(marker, op);
        assert_eq!((r["requests"].as_u64(), r["sectors"].as_u64()), (Some(warps(n)), Some(sectors(n * 4))), "{marker}");
        let via = format!("/include/sm_32_intrinsics.hpp:{}", defined(definition));
        assert!(r["via"].as_str().is_some_and(|v| v.ends_with(&via)), "{marker}: {} is not …{via}", r["via"]);
    }
    // float4: n/4 threads, each warp request 32 × 16 bytes = 16 sectors, on the user's lines.
    let threads = n / 4;
    for (marker, op) in [("LOAD4", "global load"), ("STORE4", "global store")] {
        let r = p.line(marker, op);
        assert_eq!(
            (r["requests"].as_u64(), r["sectors"].as_u64(), r["access_bytes"].as_u64()),
            (Some(warps(threads)), Some(warps(threads) * sectors(32 * 16)), Some(16)),
            "{marker}"
        );
    }
}

#[test]
fn a_file_with_216_template_instantiations_parses_and_its_launches_count() {
    let Some(p) = profile("a_file_with_216_template_instantiations", "many_templates") else { return };
    let entries = p.ptx().matches(".entry ").count();
    assert!(entries >= 216, "{entries} kernels in the PTX");
    // gather<T, Stride, 1> over n = 2048 elements: a warp reads 32 elements Stride apart and
    // writes 32 contiguous ones.
    let n = 2048u64;
    for (prefix, size, stride) in [
        ("void gather<float, (int)1, (int)1>", 4u64, 1u64),
        ("void gather<float, (int)2, (int)1>", 4, 2),
        ("void gather<double, (int)4, (int)1>", 8, 4),
    ] {
        let k = p.kernel(prefix);
        // A warp's loads cover 32 × size × stride bytes: that many sectors, at most one a lane.
        let per_request = sectors(32 * size * stride).min(32);
        assert_eq!(metric(k, "global_load_requests"), Some(warps(n) as f64), "{prefix}");
        assert_eq!(metric(k, "global_load_sectors"), Some((warps(n) * per_request) as f64), "{prefix}");
        assert_eq!(metric(k, "global_store_sectors"), Some(sectors(n * size) as f64), "{prefix}");
    }
    assert_eq!(p.line_of("// GATHER"), p.lines["rows"][0]["line"].as_u64().unwrap());
}

#[test]
fn bf16_layernorm_and_gelu_in_llm_style_run_and_their_128_bit_accesses_count() {
    let Some(p) = profile("bf16_layernorm_and_gelu_in_llm_style", "llm_bf16") else { return };
    // How sm_70 code widens a bf16 (`__bfloat162float`): a literal inside a vector operand.
    assert!(p.ptx().contains("{0,%rs"), "no `mov.b32 %f, {{0,%rs}}` in the PTX");
    // rows = 64 rows of C = 512 bf16, one warp a row. Each lane moves 8 bf16 = 16 bytes
    // through an int4, and the 32 lanes of a warp take consecutive 16-byte chunks: one
    // request covers 32 × 16 = 512 contiguous bytes, 2 lanes a 32-byte sector, 16 sectors
    // (the ideal for 128-bit accesses). A row is C × 2 = 1024 bytes: C / 256 = 2 requests a
    // warp and row.
    let (rows, c) = (64u64, 512u64);
    let per_row = c / (32 * 8);
    let chunk = sectors(32 * 16);
    for marker in ["LN_LOAD_X", "LN_LOAD_W", "LN_LOAD_B"] {
        let r = p.line(marker, "global load");
        assert_eq!(
            (r["requests"].as_u64(), r["sectors"].as_u64(), r["access_bytes"].as_u64()),
            (Some(rows * per_row), Some(rows * per_row * chunk), Some(16)),
            "{marker}"
        );
    }
    let out = p.line("LN_STORE_OUT", "global store");
    assert_eq!(
        (out["requests"].as_u64(), out["sectors"].as_u64(), out["access_bytes"].as_u64()),
        (Some(rows * per_row), Some(sectors(rows * c * 2)), Some(16))
    );
    // Lane 0 of each row's warp stores its mean and rstd: one 4-byte store, one sector.
    for marker in ["LN_STORE_MEAN", "LN_STORE_RSTD"] {
        let r = p.line(marker, "global store");
        assert_eq!(
            (r["requests"].as_u64(), r["sectors"].as_u64(), r["active_lanes"].as_f64()),
            (Some(rows), Some(rows), Some(1.0)),
            "{marker}"
        );
    }
    // GELU: n = rows × C elements, 8 a thread, so n / 8 threads in warps of 32 consecutive
    // 16-byte chunks: 16 sectors a request, loads and stores.
    let n = rows * c;
    for (marker, op) in [("GELU_LOAD", "global load"), ("GELU_STORE", "global store")] {
        let r = p.line(marker, op);
        assert_eq!(
            (r["requests"].as_u64(), r["sectors"].as_u64()),
            (Some(warps(n / 8)), Some(warps(n / 8) * chunk)),
            "{marker}"
        );
    }
}

#[test]
fn half2_arithmetic_computes_both_lanes_and_rounds_to_nearest_even() {
    let Some(p) = profile("half2_arithmetic_computes_both_lanes", "half2_arith") else { return };
    // The program exits 1 on any wrong lane; these are the instructions it checks.
    let ptx = p.ptx();
    for op in ["add.f16x2", "sub.f16x2", "mul.f16x2", "fma.rn.f16x2", "neg.f16x2", "set.gt.f16x2.f16x2", "setp.lt.f16"]
    {
        assert!(ptx.contains(op), "no {op} in the PTX");
    }
    // n = 4096 __half2 of 4 bytes: a warp's request is 128 contiguous bytes, 4 sectors.
    let n = 4096u64;
    for (marker, op) in [("LOAD_A", "global load"), ("STORE_SUM", "global store")] {
        let r = p.line(marker, op);
        assert_eq!((r["requests"].as_u64(), r["sectors"].as_u64()), (Some(warps(n)), Some(sectors(n * 4))), "{marker}");
    }
}

/// sm_80's bf16 PTX (`fma.rn.bf16`, `fma.rn.bf16x2`, `cvt.rn.bf16.f32`, `cvt.rn.bf16x2.f32`, and
/// as inline PTX `cvt.f32.bf16`, `min`/`neg`/`abs.bf16`, `max.bf16x2`, `cvt.rn.f16x2.f32`), in
/// a program built for compute_80 by hand and run as `profile --backend sim -- ./app`: it parses,
/// and computes what the host does (the program checks every lane).
#[test]
fn bf16_arithmetic_of_sm_80_ptx_runs_in_the_simulator() {
    let Some(tools) = tools("bf16_arithmetic_of_sm_80_ptx") else { return };
    let dir = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(root().join("tests/programs/sim/bf16_sm80.cu")).unwrap();
    std::fs::write(dir.path().join("bf16_sm80.cu"), &source).unwrap();
    let built = std::process::Command::new(tools.join("cuda11/bin/nvcc"))
        .current_dir(dir.path())
        .args(["-ccbin", "g++-11", "-gencode", "arch=compute_80,code=compute_80", "-O3", "-lineinfo"])
        .args(["-cudart", "shared", "bf16_sm80.cu", "-o", "bf16_sm80"])
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["--format", "json", "profile", "--backend", "sim", "--", "./bf16_sm80"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = only_run(dir.path());
    let lines = json(&coalprof().current_dir(dir.path()).args(["--format", "json", "lines"]).arg(&run).ok_stdout());
    let p = Profiled { results: json(&out.stdout), lines, source, run, _dir: dir };
    let ptx = p.ptx();
    for op in [
        "fma.rn.bf16 ",
        "fma.rn.bf16x2 ",
        "cvt.rn.bf16.f32 ",
        "cvt.rn.bf16x2.f32 ",
        "cvt.f32.bf16 ",
        "cvt.rz.bf16.f32 ",
        "min.bf16 ",
        "neg.bf16 ",
        "abs.bf16 ",
        "max.bf16x2 ",
        "cvt.rn.f16x2.f32 ",
    ] {
        assert!(ptx.contains(op), "no {op} in the PTX");
    }
    // One warp stores 32 bf16 (64 bytes, 2 sectors) a line, and 32 bf16x2 (128 bytes, 4).
    let add = p.line("// fma.rn.bf16 with 1.0", "global store");
    assert_eq!((add["requests"].as_u64(), add["sectors"].as_u64()), (Some(1), Some(sectors(32 * 2))));
    let pair = p.line("pairs[i] = p;", "global store");
    assert_eq!((pair["requests"].as_u64(), pair["sectors"].as_u64()), (Some(1), Some(sectors(32 * 4))));
    assert_eq!(p.kernel("bf16_ops(")["launches"].as_u64(), Some(1));
}

/// A program using what the simulator cannot do, in `dir`: `profile --backend sim` on it.
fn profile_unsupported(tools: &Path, dir: &Path, file: &str, text: &str) -> std::process::Output {
    std::fs::write(dir.join(file), text).unwrap();
    coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir)
        .args(["profile", "--backend", "sim", file])
        .output()
        .unwrap()
}

/// sm_80's asynchronous copy, written as inline PTX: the simulator's architecture (sm_70)
/// has no such instruction, so the build says so, naming it.
#[test]
fn unsupported_cp_async_exits_3_naming_the_instruction() {
    let Some(tools) = tools("unsupported_cp_async_exits_3") else { return };
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
__global__ void stage(const float *in, float *out) {
  __shared__ float tile[32];
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&tile[threadIdx.x]));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" :: "r"(dst), "l"(in + threadIdx.x));
  asm volatile("cp.async.wait_all;\n" ::);
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}
int main() { stage<<<1, 32>>>(nullptr, nullptr); return cudaDeviceSynchronize() != cudaSuccess; }
"#;
    let out = profile_unsupported(&tools, dir.path(), "async_copy.cu", text);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("cp.async"), "{e}");
    assert_eq!(e.matches("error:").count(), 1, "{e}");
}

/// Volta's warp-level matrix multiply (`mma.sync.aligned.m8n8k4`, which ptxas accepts for
/// sm_70) is beyond GPGPU-Sim's PTX parser: one error naming the PTX line, exit 3, no
/// results, and the run folder keeps the simulator's log.
#[test]
fn unsupported_mma_sync_exits_3_naming_the_ptx_and_keeps_the_log() {
    let Some(tools) = tools("unsupported_mma_sync_exits_3") else { return };
    let dir = tempfile::tempdir().unwrap();
    let text = r#"__global__ void tile_mma(const unsigned *a, const unsigned *b, float *d) {
  float c[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned x0 = a[2 * threadIdx.x], x1 = a[2 * threadIdx.x + 1], y0 = b[2 * threadIdx.x], y1 = b[2 * threadIdx.x + 1];
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]), "+f"(c[4]), "+f"(c[5]), "+f"(c[6]), "+f"(c[7])
               : "r"(x0), "r"(x1), "r"(y0), "r"(y1));
  for (int i = 0; i < 8; ++i) d[threadIdx.x * 8 + i] = c[i];
}
int main() {
  unsigned *a, *b; float *d;
  cudaMalloc(&a, 256); cudaMalloc(&b, 256); cudaMalloc(&d, 1024);
  tile_mma<<<1, 32>>>(a, b, d);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"#;
    let out = profile_unsupported(&tools, dir.path(), "tile_mma.cu", text);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(
        e.contains("GPGPU-Sim rejected") && e.contains("the PTX `mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 "),
        "{e}"
    );
    assert!(
        e.contains("in kernel `tile_mma(const unsigned int *, const unsigned int *, float *)`, near tile_mma.cu:4"),
        "the kernel and line: {e}"
    );
    assert!(e.contains("Syntax error"), "the simulator's own words beneath: {e}");
    assert!(out.stdout.is_empty(), "no results of a half run");
    let run = only_run(dir.path());
    assert!(run.join("sim/gpgpusim.log").is_file(), "the log is kept in {run:?}");
}
