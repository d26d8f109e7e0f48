//! The variants of every built-in pattern, sized from one number (`--size`).

use super::spec::{AttentionStep, Dtype, KvLayout, LaunchShape, SharedAccess, Spec, TransposeTile, Variant, VecWidth};
use super::spec::{ATTENTION_HEAD_DIM, ATTENTION_TILE, SOFTMAX_BLOCK};
use super::Pattern;

/// Default size of the main array: 1 GiB, far beyond the 50 MB L2 of an H100/H200.
pub(crate) const DEFAULT_SIZE_BYTES: u64 = 1 << 30;
/// Default sizes under the simulator, in its functional and its timing mode (see
/// [`Sizing::simulated`]).
const SIM_SIZE_BYTES: u64 = 256 << 10;
const SIM_TIMING_SIZE_BYTES: u64 = 64 << 10;

/// Threads per block of the streaming kernels.
const BLOCK: u32 = 256;
/// Bytes each thread of a streaming kernel moves per launch (4 floats or one 16-byte vector).
const BYTES_PER_THREAD: u64 = 16;
/// Seed of the documented hash behind gather indices.
const SEED: u32 = 0x5eed;
/// KV-cache shape of the decode-attention patterns: head_dim 128, block_size 16, 8 KV heads.
const KV_HEAD_DIM: u64 = 128;
const KV_BLOCK_SIZE: u64 = 16;
const KV_HEADS: u64 = 8;
/// Embedding rows of 64 floats (256 bytes, two full lines).
const EMBEDDING_DIM: u64 = 64;

/// How big the pattern's main array is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sizing {
    /// Bytes of the main array.
    pub bytes: u64,
}

/// Why a `--size` is no size (the settings make it a usage error, its text the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// No number in front.
    #[error("`{0}` is not a size (e.g. `1G`, `64M`, `4096`)")]
    NotASize(String),
    /// A unit that is none of K, M, G, KB, MB, GB.
    #[error("`{unit}` in `{size}` is not a size unit (K, M, G, KB, MB, GB)")]
    Unit {
        /// The unit as written.
        unit: String,
        /// The whole size as written.
        size: String,
    },
    /// Below 4 KiB, or more bytes than a `u64` holds.
    #[error("size `{0}` must be between 4 KiB and 16 EiB")]
    Range(String),
}

/// `--size`: `1G`, `64M`, `512K` (binary multiples, as `GiB`), `1GB` (decimal), or plain bytes;
/// the error says what is wrong (the settings make it a usage error).
pub fn parse_size(s: &str) -> Result<Sizing, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| SizeError::NotASize(s.to_string()))?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        other => return Err(SizeError::Unit { unit: other.to_string(), size: s.to_string() }),
    };
    let bytes = n.checked_mul(mult).filter(|&b| b >= 4096).ok_or_else(|| SizeError::Range(s.to_string()))?;
    Ok(Sizing { bytes })
}

impl Default for Sizing {
    fn default() -> Self {
        Sizing { bytes: DEFAULT_SIZE_BYTES }
    }
}

impl Sizing {
    /// The default under `--backend sim`: 256 KiB arrays, grids of up to 16K threads, which
    /// GPGPU-Sim's functional mode finishes in about a second per variant; 64 KiB in its
    /// `timing` mode, which takes minutes per variant at 256 KiB (`docs/performance.md`).
    pub fn simulated(timing: bool) -> Sizing {
        Sizing { bytes: if timing { SIM_TIMING_SIZE_BYTES } else { SIM_SIZE_BYTES } }
    }

    /// Number of fp32 elements in the main array (at least one warp's worth).
    fn floats(self) -> u64 {
        (self.bytes / 4).max(1024)
    }
}

/// Every variant of `pattern` at `sizing`, in launch order.
pub fn variants(pattern: Pattern, sizing: Sizing) -> Vec<Variant> {
    let n = sizing.floats();
    match pattern {
        Pattern::Coalesced => vec![strided(pattern, "fp32", "coalesced_copy", n, 1, 0)],
        Pattern::Offset => [0u64, 1, 2, 4, 8, 16, 32]
            .into_iter()
            .map(|k| strided(pattern, &format!("offset_{k}"), "offset_copy", n, 1, k))
            .collect(),
        Pattern::Stride => [1u64, 2, 4, 8, 16, 32, 64, 128]
            .into_iter()
            .map(|s| strided(pattern, &format!("stride_{s}"), "stride_copy", (n / s).max(32), s, 0))
            .collect(),
        Pattern::Broadcast => vec![broadcast(n, false), broadcast(n, true)],
        Pattern::Gather => gather(n),
        Pattern::Vector => vector(n),
        Pattern::KvLayout => kv(sizing.bytes),
        Pattern::BankConflicts => bank_conflicts(n),
        Pattern::Column => column(n),
        Pattern::Reuse => reuse(sizing.bytes, n),
    }
}

/// Blocks of the shared-memory micro-benchmark under the simulator: its 2,048 blocks do not
/// follow `--size`, and at 64 a simulation takes seconds (the counters per instruction are
/// the same in every block, so the comparison with the model loses nothing).
const SIM_SHARED_BLOCKS: u64 = 64;

/// Every variant of `pattern` at `sizing` as GPGPU-Sim runs it (`--backend sim`): the same
/// variants, with the shared-memory micro-benchmark cut to `SIM_SHARED_BLOCKS` blocks. The
/// model predicts this plan, so simulated and predicted describe the same launches.
pub fn sim_variants(pattern: Pattern, sizing: Sizing) -> Vec<Variant> {
    let mut plan = variants(pattern, sizing);
    for v in &mut plan {
        if let Spec::Shared { blocks, .. } = &mut v.spec {
            *blocks = (*blocks).min(SIM_SHARED_BLOCKS);
            v.launch.grid = [*blocks as u32, 1, 1];
            v.bytes_written = *blocks * u64::from(v.launch.block[0]) * 4;
        }
    }
    plan
}

fn variant(
    pattern: Pattern,
    name: &str,
    kernel: &'static str,
    launch: LaunchShape,
    access_bytes: u32,
    bytes: (u64, u64),
    spec: Spec,
) -> Variant {
    Variant {
        pattern,
        name: name.to_string(),
        kernel,
        launch,
        access_bytes,
        bytes_read: bytes.0,
        bytes_written: bytes.1,
        spec,
    }
}

fn strided(pattern: Pattern, name: &str, kernel: &'static str, m: u64, stride: u64, offset: u64) -> Variant {
    let ilp = (BYTES_PER_THREAD / 4) as u32;
    let launch = LaunchShape::linear(m, BLOCK, ilp);
    let spec = Spec::Strided { m, stride, offset, ilp };
    variant(pattern, name, kernel, launch, 4, (4 * m, 4 * m), spec)
}

fn broadcast(n: u64, per_warp: bool) -> Variant {
    let ilp = (BYTES_PER_THREAD / 4) as u32;
    let launch = LaunchShape::linear(n, BLOCK, ilp);
    let (name, read) = if per_warp { ("warp_word", 4 * n.div_ceil(32)) } else { ("one_word", 4) };
    let spec = Spec::Broadcast { m: n, per_warp, ilp };
    variant(Pattern::Broadcast, name, "broadcast_read", launch, 4, (read, 4 * n), spec)
}

fn gather(n: u64) -> Vec<Variant> {
    let ilp = (BYTES_PER_THREAD / 4) as u32;
    let lookups = (n / 8).max(32);
    let scalar = variant(
        Pattern::Gather,
        "random_fp32",
        "gather_random",
        LaunchShape::linear(lookups, BLOCK, ilp),
        4,
        (4 * lookups, 4 * lookups),
        Spec::Gather { lookups, table: n, seed: SEED, ilp },
    );
    let rows = (n / EMBEDDING_DIM).max(8);
    let row_lookups = (rows / 8).max(8) / 8 * 8;
    let bytes = row_lookups * EMBEDDING_DIM * 4;
    let rows_variant = |random: bool| {
        let name = if random { "embedding_random" } else { "embedding_sequential" };
        let launch = LaunchShape::linear(row_lookups * 32, BLOCK, 1);
        let spec = Spec::EmbeddingRows { lookups: row_lookups, rows, dim: EMBEDDING_DIM, seed: SEED, random };
        variant(Pattern::Gather, name, "gather_rows", launch, 4, (bytes, bytes), spec)
    };
    vec![scalar, rows_variant(true), rows_variant(false)]
}

fn vector(n: u64) -> Vec<Variant> {
    let make = |name: &str, kernel: &'static str, width: VecWidth, base_offset: u64| {
        let per = width.bytes() / 4;
        // One vector fewer when the base is shifted, so the last one stays inside the buffer.
        let m = n / per - u64::from(base_offset > 0);
        let ilp = (BYTES_PER_THREAD / width.bytes()) as u32;
        let launch = LaunchShape::linear(m, BLOCK, ilp);
        let bytes = m * width.bytes();
        // A base the vector width does not divide takes the scalar fallback: 4-byte loads.
        let access = if base_offset % width.bytes() == 0 { width.bytes() } else { 4 };
        let spec = Spec::Vector { width, m, base_offset, ilp };
        variant(Pattern::Vector, name, kernel, launch, access as u32, (bytes, bytes), spec)
    };
    vec![
        make("float", "vector_float", VecWidth::F32, 0),
        make("float2", "vector_float2", VecWidth::F32x2, 0),
        make("float4", "vector_float4", VecWidth::F32x4, 0),
        make("half8", "vector_half8", VecWidth::F16x8, 0),
        make("float4_offset16", "vector_float4", VecWidth::F32x4, 16),
        make("float4_offset4_fallback", "vector_float4", VecWidth::F32x4, 4),
    ]
}

fn kv(bytes: u64) -> Vec<Variant> {
    let (s, h, d) = (KV_BLOCK_SIZE, KV_HEADS, KV_HEAD_DIM);
    let make = |layout: KvLayout, dtype: Dtype| {
        let blocks = (bytes / (s * h * d * dtype.bytes())).max(4);
        let spec = Spec::Kv { layout, dtype, blocks, block_size: s, heads: h, head_dim: d };
        let read = blocks * s * h * d * dtype.bytes();
        let name = format!("{}_{}", layout.name().to_lowercase(), dtype.name());
        if layout == KvLayout::Vllm {
            let launch = LaunchShape { grid: [grid_dim((blocks * h).div_ceil(4)), 1, 1], block: [128, 1, 1] };
            variant(Pattern::KvLayout, &name, "kv_read_vllm", launch, 8, (read, blocks * h * 32 * 4), spec)
        } else {
            let launch = LaunchShape { grid: [grid_dim(blocks * h), 1, 1], block: [d as u32, 1, 1] };
            let access = dtype.bytes() as u32;
            variant(Pattern::KvLayout, &name, "kv_read", launch, access, (read, blocks * h * d * 4), spec)
        }
    };
    vec![
        make(KvLayout::Nhd, Dtype::Fp16),
        make(KvLayout::Hdn, Dtype::Fp16),
        make(KvLayout::Hnd, Dtype::Fp16),
        make(KvLayout::Vllm, Dtype::Fp16),
        make(KvLayout::Nhd, Dtype::Fp32),
        make(KvLayout::Hdn, Dtype::Fp32),
    ]
}

fn bank_conflicts(n: u64) -> Vec<Variant> {
    const SHARED_BLOCKS: u64 = 2048;
    const REPS: u32 = 8;
    let shared = |name: &str, access: SharedAccess| {
        let launch = LaunchShape { grid: [SHARED_BLOCKS as u32, 1, 1], block: [256, 1, 1] };
        let spec = Spec::Shared { access, blocks: SHARED_BLOCKS, reps: REPS };
        variant(Pattern::BankConflicts, name, "shared_access", launch, 4, (0, SHARED_BLOCKS * 256 * 4), spec)
    };
    let side = square_side(n);
    let transpose = |name: &str, kernel: &'static str, tile: TransposeTile| {
        let tiles = grid_dim(side / 32);
        let launch = LaunchShape { grid: [tiles, tiles, 1], block: [32, 8, 1] };
        let bytes = side * side * 4;
        variant(Pattern::BankConflicts, name, kernel, launch, 4, (bytes, bytes), Spec::Transpose { tile, n: side })
    };
    vec![
        shared("row_32x32", SharedAccess::RowUnpadded),
        shared("column_32x32", SharedAccess::Column),
        shared("row_32x33", SharedAccess::RowPadded),
        shared("broadcast", SharedAccess::Broadcast),
        transpose("transpose_32x32", "transpose_tile32", TransposeTile::Unpadded),
        transpose("transpose_32x33", "transpose_tile33", TransposeTile::Padded),
        transpose("transpose_naive", "transpose_naive", TransposeTile::Naive),
    ]
}

fn column(n: u64) -> Vec<Variant> {
    let side = square_side(n);
    let make = |along_rows: bool| {
        let (name, kernel) = if along_rows { ("row_sums", "row_sums") } else { ("column_sums", "column_sums") };
        let launch = LaunchShape::linear(side, BLOCK, 1);
        let spec = Spec::Sums { along_rows, rows: side, cols: side };
        variant(Pattern::Column, name, kernel, launch, 4, (side * side * 4, side * 4), spec)
    };
    vec![make(true), make(false)]
}

/// The shortest sequence length of `reuse`: one tile of 64.
const MIN_SEQ: u64 = ATTENTION_TILE;

/// The sequence lengths of `reuse`: the longest is the largest power of two whose S×S fp32
/// score matrix fits in `bytes` (16,384 at the default 1 GiB), with the two halvings below it;
/// never shorter than 64, 128, 256 (what `--backend sim` runs at its default 64 KiB).
pub(crate) fn attention_lengths(bytes: u64) -> [u64; 3] {
    let mut longest = 4 * MIN_SEQ;
    while 4 * (2 * longest) * (2 * longest) <= bytes {
        longest *= 2;
    }
    [longest / 4, longest / 2, longest]
}

fn reuse(bytes: u64, n: u64) -> Vec<Variant> {
    let (t, d) = (ATTENTION_TILE, ATTENTION_HEAD_DIM);
    let lengths = attention_lengths(bytes);
    let attention = |name: String, step: AttentionStep, seq: u64| {
        let tiles = grid_dim(seq / t);
        let tile_block = [t as u32, 1, 1];
        let (matrix, rows) = (4 * seq * seq, 4 * seq * d);
        let (launch, kernel, read, written) = match step {
            AttentionStep::Scores => {
                (LaunchShape { grid: [tiles, tiles, 1], block: tile_block }, "attn_scores", 2 * rows, matrix)
            }
            AttentionStep::Softmax => (
                LaunchShape { grid: [grid_dim(seq), 1, 1], block: [SOFTMAX_BLOCK as u32, 1, 1] },
                "attn_softmax",
                matrix,
                matrix,
            ),
            AttentionStep::Pv => {
                (LaunchShape { grid: [tiles, 1, 1], block: tile_block }, "attn_pv", matrix + rows, rows)
            }
            AttentionStep::Flash => {
                (LaunchShape { grid: [tiles, 1, 1], block: tile_block }, "attn_flash", 3 * rows, rows)
            }
        };
        variant(Pattern::Reuse, &name, kernel, launch, 4, (read, written), Spec::Attention { step, seq })
    };
    let mut out = Vec::new();
    for s in lengths {
        for step in [AttentionStep::Scores, AttentionStep::Softmax, AttentionStep::Pv] {
            out.push(attention(format!("naive_s{s}_{}", step.name()), step, s));
        }
    }
    for s in lengths {
        out.push(attention(format!("flash_s{s}"), AttentionStep::Flash, s));
    }
    let ilp = (BYTES_PER_THREAD / 4) as u32;
    let staging = |name: &str, kernel: &'static str, staged: bool| {
        let launch = LaunchShape::linear(n, BLOCK, ilp);
        variant(Pattern::Reuse, name, kernel, launch, 4, (4 * n, 4 * n), Spec::Staging { m: n, ilp, staged })
    };
    out.push(staging("direct", "reuse_direct", false));
    out.push(staging("staged_once", "reuse_staged", true));
    out
}

/// The side of the largest square fp32 matrix of at most `n` elements, a multiple of 32.
fn square_side(n: u64) -> u64 {
    ((n as f64).sqrt() as u64 / 32 * 32).max(32)
}

fn grid_dim(x: u64) -> u32 {
    super::spec::grid_x(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1G").unwrap().bytes, 1 << 30);
        assert_eq!(parse_size("64M").unwrap().bytes, 64 << 20);
        assert_eq!(parse_size("1GB").unwrap().bytes, 1_000_000_000);
        assert_eq!(parse_size("8192").unwrap().bytes, 8192);
        assert!(parse_size("12").is_err());
        assert_eq!(parse_size("1T").unwrap_err().to_string(), "`T` in `1T` is not a size unit (K, M, G, KB, MB, GB)");
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn the_simulator_plan_differs_only_in_the_shared_benchmark_blocks() {
        let sizing = Sizing { bytes: 1 << 16 };
        for p in Pattern::ALL {
            for (sim, full) in sim_variants(p, sizing).iter().zip(variants(p, sizing)) {
                match (&sim.spec, &full.spec) {
                    (Spec::Shared { blocks, .. }, Spec::Shared { blocks: all, .. }) => {
                        assert_eq!((*blocks, *all), (SIM_SHARED_BLOCKS, 2048), "{}", sim.id());
                        assert_eq!(u64::from(sim.launch.grid[0]), *blocks);
                        assert_eq!(sim.bytes_written * 2048, full.bytes_written * *blocks);
                        assert!(sim.kernel_arg().contains("blocks=64"), "{}", sim.kernel_arg());
                    }
                    _ => assert_eq!(sim, &full),
                }
            }
        }
    }

    #[test]
    fn every_pattern_has_unique_variant_names() {
        for p in Pattern::ALL {
            let vs = variants(p, Sizing::default());
            assert!(!vs.is_empty(), "{p} has no variants");
            let mut names: Vec<_> = vs.iter().map(|v| v.name.clone()).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), vs.len(), "{p} repeats a variant name");
        }
    }

    #[test]
    fn default_column_matrix_is_16384_square_like_the_rtx3070_fixture() {
        let vs = variants(Pattern::Column, Sizing::default());
        assert_eq!(vs[0].spec, Spec::Sums { along_rows: true, rows: 16384, cols: 16384 });
    }

    #[test]
    fn reuse_lengths_double_and_follow_the_size() {
        assert_eq!(attention_lengths(DEFAULT_SIZE_BYTES), [4096, 8192, 16384], "16384^2 x 4 B = 1 GiB");
        assert_eq!(attention_lengths(SIM_SIZE_BYTES), [64, 128, 256]);
        assert_eq!(attention_lengths(16 << 10), [64, 128, 256]);
        assert_eq!(attention_lengths((1 << 30) - 1), [2048, 4096, 8192]);
        let vs = variants(Pattern::Reuse, Sizing::default());
        let names: Vec<&str> = vs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names[..4], ["naive_s4096_scores", "naive_s4096_softmax", "naive_s4096_pv", "naive_s8192_scores"]);
        assert_eq!(names[9..], ["flash_s4096", "flash_s8192", "flash_s16384", "direct", "staged_once"]);
        let scores = &vs[0];
        assert_eq!(scores.launch, LaunchShape { grid: [64, 64, 1], block: [64, 1, 1] });
        assert_eq!(scores.bytes_written, 4096 * 4096 * 4);
        assert!(
            scores.kernel_arg().contains(";step=scores;seq_len=4096;head_dim=64;tile=64"),
            "{}",
            scores.kernel_arg()
        );
    }

    #[test]
    fn strided_launch_covers_every_item() {
        for v in variants(Pattern::Stride, Sizing { bytes: 1 << 20 }) {
            let Spec::Strided { m, ilp, .. } = v.spec else { unreachable!() };
            let covered = v.launch.blocks() * v.launch.threads_per_block() * u64::from(ilp);
            assert!(covered >= m && covered - m < v.launch.threads_per_block() * u64::from(ilp));
        }
    }

    #[test]
    fn kernel_arg_carries_launch_and_params() {
        let v = &variants(Pattern::Stride, Sizing::default())[3];
        let arg = v.kernel_arg();
        assert!(arg.starts_with("name=stride_8;kernel=stride_copy;grid="), "{arg}");
        assert!(arg.contains(";stride=8;"), "{arg}");
    }

    #[test]
    fn hash32_is_lowbias32() {
        use crate::patterns::hash32;
        // Reference values from an independent Python implementation of lowbias32.
        assert_eq!(hash32(0, 0), 0);
        assert_eq!(hash32(1, 0), 1_753_845_952);
        assert_eq!(hash32(12345, 0x5eed), 2_390_903_232);
        assert_eq!(hash32(1 << 32, 7), hash32(0, 7), "the index is truncated to 32 bits");
    }
}
