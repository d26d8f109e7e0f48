//! Typed variant parameters and the address arithmetic each kernel implements.
//!
//! Conventions shared by every streaming kernel (`Strided`, `Broadcast`, `Vector`, `Gather`):
//! blocks are 1-D with `block` threads; each thread handles `ilp` items, and item `k` of thread
//! `t` in block `b` is the logical index `j = (b * ilp + k) * block + t`, processed only when
//! `j < m`. Consecutive lanes therefore take consecutive `j` in every load instruction.
//! Buffers come from `cudaMalloc` (256-byte aligned); `base_offset` values shift from there.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use super::Pattern;

/// Grid and block dimensions of one launch, as ncu reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LaunchShape {
    /// Blocks per grid (x, y, z).
    pub grid: [u32; 3],
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
}

impl LaunchShape {
    /// A 1-D launch of `items` items, `ilp` per thread, `block` threads per block.
    /// `grid.x` is capped at CUDA's limit (2^31 − 1); the catalogue's sizes stay far below it,
    /// and the kernels refuse a grid that does not cover their items.
    pub fn linear(items: u64, block: u32, ilp: u32) -> LaunchShape {
        let per_block = u64::from(block) * u64::from(ilp);
        let grid = items.div_ceil(per_block).max(1);
        LaunchShape { grid: [grid_x(grid), 1, 1], block: [block, 1, 1] }
    }

    /// Threads in one block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| u64::from(d)).product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| u64::from(d)).product()
    }
}

/// Element type of the KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Dtype {
    Fp16,
    Fp32,
}

impl Dtype {
    pub(crate) fn bytes(self) -> u64 {
        match self {
            Dtype::Fp16 => 2,
            Dtype::Fp32 => 4,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dtype::Fp16 => "fp16",
            Dtype::Fp32 => "fp32",
        }
    }
}

/// KV-cache layouts. Dimensions: `B` blocks, `S` tokens per block (block_size), `H` KV heads,
/// `D` head_dim, `x = 16 / sizeof(dtype)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum KvLayout {
    /// `[B, S, H, D]` (FlashAttention's paged layout).
    /// Element of (b, o, h, d) at `((b * S + o) * H + h) * D + d`.
    Nhd,
    /// `[B, H, S, D]` (FlashInfer's "HND"): `((b * H + h) * S + o) * D + d`.
    Hnd,
    /// `[B, H, D, S]` (head_dim before block_size):
    /// `((b * H + h) * D + d) * S + o`.
    Hdn,
    /// vLLM's split K layout `[B, H, D/x, S, x]`: `(((b * H + h) * (D/x) + d / x) * S + o) * x + d % x`.
    Vllm,
}

impl KvLayout {
    pub(crate) fn name(self) -> &'static str {
        match self {
            KvLayout::Nhd => "NHD",
            KvLayout::Hnd => "HND",
            KvLayout::Hdn => "HDN",
            KvLayout::Vllm => "vLLM",
        }
    }
}

/// Width of one vector load per thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum VecWidth {
    F32,
    F32x2,
    F32x4,
    /// Eight halves in one 16-byte load (`uint4`).
    F16x8,
}

impl VecWidth {
    pub(crate) fn bytes(self) -> u64 {
        match self {
            VecWidth::F32 => 4,
            VecWidth::F32x2 => 8,
            VecWidth::F32x4 | VecWidth::F16x8 => 16,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            VecWidth::F32 => "float",
            VecWidth::F32x2 => "float2",
            VecWidth::F32x4 => "float4",
            VecWidth::F16x8 => "half8",
        }
    }
}

/// Which shared-memory access the micro-benchmark makes, lane `l`, repetition `r` in `0..32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum SharedAccess {
    /// `t[l][r]` on `float t[32][32]`: word `l*32 + r`, every lane on bank `r`: 32-way.
    RowUnpadded,
    /// `t[r][l]` on `float t[32][32]`: word `r*32 + l`: conflict-free.
    Column,
    /// `t[l][r]` on `float t[32][33]`: word `l*33 + r`, banks `(l + r) % 32`: conflict-free.
    RowPadded,
    /// `t[r][0]` on `float t[32][32]`: one word for all lanes: broadcast, one wavefront.
    Broadcast,
}

/// Which transpose the `bank-conflicts` pattern runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum TransposeTile {
    /// Tiled through `float tile[32][32]`: the transposed shared read is 32-way.
    Unpadded,
    /// Tiled through `float tile[32][33]`: conflict-free.
    Padded,
    /// No shared memory: coalesced reads, stores 32 sectors per request.
    Naive,
}

/// Head dimension of the `reuse` pattern's attention (one head, fp32).
pub(crate) const ATTENTION_HEAD_DIM: u64 = 64;
/// Rows of Q and of K/V per tile, and threads per block, of the attention kernels.
pub(crate) const ATTENTION_TILE: u64 = 64;
/// Threads per block of the softmax kernel (one block per row).
pub(crate) const SOFTMAX_BLOCK: u64 = 256;

/// Which kernel of single-head attention a `reuse` variant runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AttentionStep {
    /// Naive, first kernel: the scores `Q·Kᵀ / sqrt(d)` written to global memory (S×S).
    Scores,
    /// Naive, second kernel: the row softmax of the scores, in place (S×S read and written).
    Softmax,
    /// Naive, third kernel: `P·V` from the S×S probabilities in global memory.
    Pv,
    /// FlashAttention's tiling: one kernel, online softmax, no S×S in global memory.
    Flash,
}

impl AttentionStep {
    pub(crate) fn name(self) -> &'static str {
        match self {
            AttentionStep::Scores => "scores",
            AttentionStep::Softmax => "softmax",
            AttentionStep::Pv => "pv",
            AttentionStep::Flash => "flash",
        }
    }
}

/// The typed parameters of one variant, and the address arithmetic its kernel implements.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Spec {
    /// `out[j] = 2 * in[j * stride + offset]` for `j < m`, fp32, streaming convention (ilp items).
    /// `in` holds `m * stride + offset` floats (rounded up), `out` holds `m` floats.
    Strided { m: u64, stride: u64, offset: u64, ilp: u32 },
    /// `out[j] = 2 * in[w]` where `w = 0` (`per_warp == false`) or `w = j / 32`, the index of
    /// the 32 consecutive `j` a load instruction covers (`per_warp == true`: each warp-level load
    /// reads its own word, consecutive loads consecutive words). fp32, streaming convention.
    Broadcast { m: u64, per_warp: bool, ilp: u32 },
    /// Scalar random gather, fp32, streaming convention:
    /// `out[j] = in[hash32(j, seed) % table]` for `j < lookups` (see [`hash32`]).
    Gather { lookups: u64, table: u64, seed: u32, ilp: u32 },
    /// Embedding-row gather: fp32 table `[rows, dim]`, one warp per lookup, 8 warps per block.
    /// Lookup `i = blockIdx.x * 8 + warp` reads row `r = hash32(i, seed) % rows` (`random`) or
    /// `r = i` (sequential, the same bytes in order); lane `l` copies elements `r * dim + c * 32 + l`
    /// for `c in 0..dim/32` into `out[i * dim + c * 32 + l]`.
    EmbeddingRows { lookups: u64, rows: u64, dim: u64, seed: u32, random: bool },
    /// Vector loads of `width` bytes: `out[j] = 2 * in[j]` with `in` and `out` viewed as vectors,
    /// streaming convention with `m` vectors, `in` starting `base_offset` bytes past a 256-byte
    /// boundary. When `in` is not aligned to the vector width the kernel falls back to scalar
    /// fp32 loads over the same `m * width / 4` floats: streaming convention with
    /// `ilp * width / 4` floats per thread (so each block covers the same bytes), `j < m * width / 4`,
    /// address `in + 4 * j`.
    Vector { width: VecWidth, m: u64, base_offset: u64, ilp: u32 },
    /// Decode-attention K read of one layout: one warp per 32 consecutive `d` of one (block, head)
    /// pair; blocks of `head_dim` threads, one per `d`, block `i` handles `b = i / H, h = i % H`,
    /// and loops over the `S` tokens `o`, reading `K[b, o, h, d]` at the layout's offset, and
    /// writes its fp32 sum `q[d] * K` to `out[(b * H + h) * D + d]`; `q[d]` is computed in
    /// registers, so the K reads are the only global loads.
    /// For `KvLayout::Vllm` (fp16 only) the mapping is vLLM's: blocks of 128 threads, warp `w`
    /// of block `i` handles pair `p = i * 4 + w` (`b = p / H, h = p % H`); lane `l` reads 8 bytes
    /// (4 halves) at token `o = l / 2`, element `(l % 2) * 4` of each x-chunk `c in 0..D/x`
    /// (one load instruction per chunk), and writes one fp32 sum to `out[p * 32 + l]`.
    Kv { layout: KvLayout, dtype: Dtype, blocks: u64, block_size: u64, heads: u64, head_dim: u64 },
    /// Shared-memory micro-benchmark: blocks of 256 threads fill the tile conflict-free, then
    /// every warp makes 32 loads (`r in 0..32`) of [`SharedAccess`] through a `volatile` pointer,
    /// `reps` times over, and writes one sum per thread to `out[global thread]`.
    Shared { access: SharedAccess, blocks: u64, reps: u32 },
    /// Transpose of an `n x n` fp32 matrix, tile 32, blocks of 32 x 8 threads, each thread
    /// handling rows `ty, ty+8, ty+16, ty+24` of its tile: `out[x * n + y] = in[y * n + x]`.
    Transpose { tile: TransposeTile, n: u64 },
    /// Sums of a row-major `rows x cols` fp32 matrix, one thread per output, blocks of 256.
    /// `along_rows`: thread `i` sums row `i` (`a[i * cols + c]`, lanes a row apart: uncoalesced);
    /// otherwise thread `i` sums column `i` (`a[r * cols + i]`, coalesced).
    Sums { along_rows: bool, rows: u64, cols: u64 },
    /// One kernel of single-head attention over `seq` tokens, head dimension `d = 64`, fp32,
    /// row-major `Q, K, V, O: [seq, 64]`, tile `T = 64`, `seq` a multiple of 64. Every block of
    /// `T` threads is `T` threads `t` (warp `t / 32`, lane `t % 32`); `sync` is `__syncthreads`.
    /// Shared tiles are `float` arrays indexed by word; `K·` marks a broadcast (every lane the
    /// same word), read through a `volatile` pointer so each is one 32-bit load.
    ///
    /// * `Scores` (`attn_scores`): grid `(seq/T, seq/T)`, block `x = kt` (keys), `y = qt`
    ///   (queries); `Qs[T*T]`, `Ks[T*(T+1)]` (padded). For `r in 0..T`: `Qs[r*T + t] =
    ///   Q[(qt*T + r)*64 + t]`, `Ks[r*(T+1) + t] = K[(kt*T + r)*64 + t]`; sync; for `k in 0..64`:
    ///   `kr[k] = Ks[t*(T+1) + k]` (conflict-free); for `i in 0..T`: `s = Σ_k Qs[i*T + k]·kr[k]`
    ///   (broadcast), `Sc[(qt*T + i)*seq + kt*T + t] = s / 8`.
    /// * `Softmax` (`attn_softmax`): grid `seq`, block 256, row `i = blockIdx.x` of `Sc`, in
    ///   place; `buf[seq]` (dynamic shared), `red[8]`. (1) for `j = t; j < seq; j += 256`:
    ///   `x = Sc[i*seq + j]`, `buf[j] = x`, running max; (2) block max: warp shuffles, lane 0 of
    ///   warp `w` stores `red[w]`, sync, every thread loads `red[0..8]` (broadcast), sync;
    ///   (3) for the same `j`: `e = exp(buf[j] - max)`, `buf[j] = e`, running sum; (4) block sum
    ///   as (2); (5) for the same `j`: `Sc[i*seq + j] = buf[j] / sum`.
    /// * `Pv` (`attn_pv`): grid `seq/T`, block `qt`; thread `t` is output dimension `t`;
    ///   `Ps[T*T]`, `Vs[T*T]`. For each key tile `kt in 0..seq/T`: for `r in 0..T`: `Ps[r*T + t] =
    ///   P[(qt*T + r)*seq + kt*T + t]`, `Vs[r*T + t] = V[(kt*T + r)*64 + t]`; sync; for `j in
    ///   0..T`: `v = Vs[j*T + t]`, for `i in 0..T`: `acc[i] += Ps[i*T + j]·v` (broadcast); sync.
    ///   Then for `i in 0..T`: `O[(qt*T + i)*64 + t] = acc[i]`.
    /// * `Flash` (`attn_flash`): grid `seq/T`, block `qt`; thread `t` is query row `qt*T + t`;
    ///   `QK[T*(T+1)]` (Q staging, then the K tile, then O staging), `Vs[T*T]`. For `r in 0..T`:
    ///   `QK[r*(T+1) + t] = Q[(qt*T + r)*64 + t]`; sync; for `k`: `q[k] = QK[t*(T+1) + k] / 8`;
    ///   sync. For each key tile `kt`: for `r`: `QK[r*T + t] = K[(kt*T + r)*64 + t]`, `Vs[r*T + t]
    ///   = V[(kt*T + r)*64 + t]`; sync; for `j in 0..T`: `s = Σ_k q[k]·QK[j*T + k]` (broadcast),
    ///   online softmax (running max `m`, sum `l`, rescale `c`), for `k`: `o[k] = o[k]·c +
    ///   p·Vs[j*T + k]` (broadcast); sync. Then for `k`: `QK[t*(T+1) + k] = o[k] / l`; sync; for
    ///   `r`: `O[(qt*T + r)*64 + t] = QK[r*(T+1) + t]`.
    Attention { step: AttentionStep, seq: u64 },
    /// The same streaming read, `out[j] = 2 * in[j]` (fp32, streaming convention, blocks of 256,
    /// `ilp` items per thread, `j < m`): straight from global memory (`staged == false`, the
    /// `coalesced` copy's arithmetic), or staged once through shared memory (`staged`): for
    /// each item `k`, `tile[k*256 + t] = in[j]`; sync; for each `k`, `out[j] = 2 * tile[k*256 +
    /// t]`: every word stored and loaded once, nothing reused.
    Staging { m: u64, ilp: u32, staged: bool },
}

/// One variant of a pattern: what to launch and what the algorithm needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Variant {
    /// The pattern it belongs to.
    #[serde(serialize_with = "serialize_pattern")]
    pub pattern: Pattern,
    /// Unique within the pattern, e.g. `stride_8`.
    pub name: String,
    /// The `extern "C"` kernel function ncu reports.
    pub kernel: &'static str,
    /// Its grid and block.
    pub launch: LaunchShape,
    /// Bytes one thread asks for in one load of the measured access (4, 8 or 16).
    pub access_bytes: u32,
    /// Distinct bytes the algorithm must read and write (the denominator of amplification).
    pub bytes_read: u64,
    /// Distinct bytes the algorithm must write.
    pub bytes_written: u64,
    pub(crate) spec: Spec,
}

fn serialize_pattern<S: serde::Serializer>(p: &Pattern, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name())
}

impl Variant {
    /// `pattern/variant`, the key the gate and the reports use.
    pub fn id(&self) -> String {
        format!("{}/{}", self.pattern.name(), self.name)
    }

    /// The variant's parameters, in the one encoding both the pattern executable
    /// (`--variant key=value;…`, kernels/README.md) and the JSON rows (`"params"`) use.
    pub fn args(&self) -> Vec<(&'static str, Arg)> {
        use Arg::{Flag, Int, Text};
        match &self.spec {
            Spec::Strided { m, stride, offset, ilp } => {
                vec![
                    ("elements", Int(*m)),
                    ("stride", Int(*stride)),
                    ("offset", Int(*offset)),
                    ("ilp", Int(u64::from(*ilp))),
                ]
            }
            Spec::Broadcast { m, per_warp, ilp } => {
                vec![("elements", Int(*m)), ("per_warp", Flag(*per_warp)), ("ilp", Int(u64::from(*ilp)))]
            }
            Spec::Gather { lookups, table, seed, ilp } => vec![
                ("lookups", Int(*lookups)),
                ("table_elements", Int(*table)),
                ("seed", Int(u64::from(*seed))),
                ("ilp", Int(u64::from(*ilp))),
            ],
            Spec::EmbeddingRows { lookups, rows, dim, seed, random } => vec![
                ("lookups", Int(*lookups)),
                ("rows", Int(*rows)),
                ("dim", Int(*dim)),
                ("seed", Int(u64::from(*seed))),
                ("random", Flag(*random)),
            ],
            Spec::Vector { width, m, base_offset, ilp } => vec![
                ("width", Text(width.name().into())),
                ("vectors", Int(*m)),
                ("base_offset_bytes", Int(*base_offset)),
                ("ilp", Int(u64::from(*ilp))),
            ],
            Spec::Kv { layout, dtype, blocks, block_size, heads, head_dim } => vec![
                ("layout", Text(layout.name().to_lowercase())),
                ("dtype", Text(dtype.name().into())),
                ("blocks", Int(*blocks)),
                ("block_size", Int(*block_size)),
                ("kv_heads", Int(*heads)),
                ("head_dim", Int(*head_dim)),
            ],
            Spec::Shared { access, blocks, reps } => {
                let a = match access {
                    SharedAccess::RowUnpadded => "row32",
                    SharedAccess::Column => "col32",
                    SharedAccess::RowPadded => "row33",
                    SharedAccess::Broadcast => "bcast",
                };
                vec![("access", Text(a.into())), ("blocks", Int(*blocks)), ("reps", Int(u64::from(*reps)))]
            }
            Spec::Transpose { tile, n } => {
                let t = match tile {
                    TransposeTile::Unpadded => "32",
                    TransposeTile::Padded => "33",
                    TransposeTile::Naive => "naive",
                };
                vec![("tile", Text(t.into())), ("n", Int(*n))]
            }
            Spec::Sums { along_rows, rows, cols } => {
                vec![("along_rows", Flag(*along_rows)), ("rows", Int(*rows)), ("cols", Int(*cols))]
            }
            Spec::Attention { step, seq } => vec![
                ("step", Text(step.name().into())),
                ("seq_len", Int(*seq)),
                ("head_dim", Int(ATTENTION_HEAD_DIM)),
                ("tile", Int(ATTENTION_TILE)),
            ],
            Spec::Staging { m, ilp, staged } => {
                vec![("elements", Int(*m)), ("ilp", Int(u64::from(*ilp))), ("staged", Flag(*staged))]
            }
        }
    }

    /// The variant's parameters by name, for JSON rows (`{"stride": 8}`, `{"layout": "nhd", …}`).
    pub fn params(&self) -> BTreeMap<String, Value> {
        (self.args().into_iter())
            .map(|(k, a)| {
                let v = match a {
                    Arg::Int(n) => json!(n),
                    Arg::Flag(b) => json!(b),
                    Arg::Text(t) => json!(t),
                };
                (k.to_string(), v)
            })
            .collect()
    }

    /// The `--variant` argument for the pattern executable: `key=value` pairs joined by `;`,
    /// the launch shape and bytes first, then [`Variant::args`] (flags as `1`/`0`).
    pub fn kernel_arg(&self) -> String {
        let mut kv: Vec<(&str, String)> = vec![
            ("name", self.name.clone()),
            ("kernel", self.kernel.into()),
            ("grid", dims(self.launch.grid)),
            ("block", dims(self.launch.block)),
            ("bytes_read", self.bytes_read.to_string()),
            ("bytes_written", self.bytes_written.to_string()),
        ];
        kv.extend(self.args().into_iter().map(|(k, a)| {
            let v = match a {
                Arg::Int(n) => n.to_string(),
                Arg::Flag(b) => u8::from(b).to_string(),
                Arg::Text(t) => t,
            };
            (k, v)
        }));
        kv.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(";")
    }
}

/// One parameter value of a variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Int(u64),
    Flag(bool),
    Text(String),
}

/// CUDA's largest `grid.x`.
pub(super) const MAX_GRID_X: u64 = (1 << 31) - 1;

pub(super) fn grid_x(blocks: u64) -> u32 {
    blocks.clamp(1, MAX_GRID_X) as u32
}

fn dims(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}

/// The documented integer hash behind every "random" index, identical in `kernels/common.cuh`
/// (`coalprof_hash32`): Chris Wellons' lowbias32 of `(i ^ seed)`, with `i` truncated to 32 bits.
/// Inlined into the model's gather loops, which compute it 2^25 times at the default size.
#[inline]
pub(crate) fn hash32(i: u64, seed: u32) -> u32 {
    let mut x = (i as u32) ^ seed;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}
