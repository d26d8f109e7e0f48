//! Streaming kernels: `Spec::Strided` (patterns `coalesced`, `offset`, `stride`),
//! `Spec::Broadcast`, `Spec::Vector`, and the scalar `Spec::Gather` (whose loads are random but
//! whose launch follows the same convention; `gather.rs` counts it faster, and its DRAM side).
//!
//! Mirrors `src/patterns/spec.rs`, module doc: "item `k` of thread `t` in block `b` is the
//! logical index `j = (b * ilp + k) * block + t`, processed only when `j < m`". A warp is
//! 32 consecutive `t`, so warp `wi` of block `b`, item `k`, is one load and one store
//! instruction over `j = (b*ilp + k)*block + 32*wi + lane`. Per spec:
//!
//! * `Strided`: load `in[j * stride + offset]` (fp32), store `out[j]` (fp32).
//! * `Broadcast`: load `in[0]` or, with `per_warp`, `in[j / 32]`; store `out[j]`.
//! * `Vector`: load `in` as `width`-byte vectors, `base_offset` bytes past a 256-byte boundary,
//!   element `j`; store `out[j]` (vectors, `out` aligned). When `base_offset % width != 0` the
//!   kernel "falls back to scalar fp32 loads over the same `m * width / 4` floats": the launch
//!   (`LaunchShape::linear(m, 256, ilp)`) is unchanged, so each thread then handles
//!   `ilp * width / 4` floats under the same convention, with scalar fp32 stores (see the report:
//!   the spec's "with `ilp` floats" is read this way, otherwise the launch would cover a quarter).
//! * `Gather`: load `in[hash32(j, seed) % table]`, store `out[j]`.
//!
//! Buffers are `cudaMalloc`ed, 256-byte aligned: addresses below are byte offsets into them.

use super::closed::{add_instructions, partial_contiguous, periodic, sectors};
use super::core::Bitset;
use super::core::{unique_blocks_affine, WarpAccess};
use super::replay::{Cta, Kernel, Totals};
use crate::patterns::{hash32, Spec, Variant, VecWidth};

/// Where item `j`'s load goes.
#[derive(Debug, Clone, Copy)]
pub(super) enum LoadAt {
    /// `base + step * j`, `bytes` wide.
    Affine { base: u64, step: u64 },
    /// `4 * (j / 32)`, or `0` when not `per_warp`.
    Broadcast { per_warp: bool },
    /// `4 * (hash32(j, seed) % table)`.
    Hash { table: u64, seed: u32 },
}

/// One streaming launch in the common convention.
#[derive(Debug, Clone, Copy)]
pub(super) struct Streaming {
    /// Items `j < m`.
    pub m: u64,
    /// Items per thread.
    pub ilp: u64,
    pub block: u64,
    pub ctas: u64,
    pub load: LoadAt,
    pub load_bytes: u32,
    /// Stores go to `store_bytes * j`.
    pub store_bytes: u32,
}

impl Streaming {
    pub(super) fn from_variant(v: &Variant) -> Streaming {
        let block = v.launch.threads_per_block();
        let ctas = v.launch.blocks();
        match v.spec {
            Spec::Strided { m, stride, offset, ilp } => Streaming {
                m,
                ilp: u64::from(ilp),
                block,
                ctas,
                load: LoadAt::Affine { base: 4 * offset, step: 4 * stride },
                load_bytes: 4,
                store_bytes: 4,
            },
            Spec::Broadcast { m, per_warp, ilp } => Streaming {
                m,
                ilp: u64::from(ilp),
                block,
                ctas,
                load: LoadAt::Broadcast { per_warp },
                load_bytes: 4,
                store_bytes: 4,
            },
            Spec::Vector { width, m, base_offset, ilp } => {
                let w = width.bytes();
                if vector_aligned(width, base_offset) {
                    Streaming {
                        m,
                        ilp: u64::from(ilp),
                        block,
                        ctas,
                        load: LoadAt::Affine { base: base_offset, step: w },
                        load_bytes: w as u32,
                        store_bytes: w as u32,
                    }
                } else {
                    Streaming {
                        m: m * w / 4,
                        ilp: u64::from(ilp) * w / 4,
                        block,
                        ctas,
                        load: LoadAt::Affine { base: base_offset, step: 4 },
                        load_bytes: 4,
                        store_bytes: 4,
                    }
                }
            }
            Spec::Gather { lookups, table, seed, ilp } => Streaming {
                m: lookups,
                ilp: u64::from(ilp),
                block,
                ctas,
                load: LoadAt::Hash { table, seed },
                load_bytes: 4,
                store_bytes: 4,
            },
            _ => unreachable!("not a streaming spec"),
        }
    }

    #[inline]
    fn load_addr(&self, j: u64) -> u64 {
        match self.load {
            LoadAt::Affine { base, step } => base + step * j,
            LoadAt::Broadcast { per_warp } => {
                if per_warp {
                    4 * (j / 32)
                } else {
                    0
                }
            }
            LoadAt::Hash { table, seed } => 4 * (u64::from(hash32(j, seed)) % table),
        }
    }

    /// Unique `g`-byte blocks of `in` the launch reads (affine and broadcast loads; `None` for
    /// the hashed gather, which `gather.rs` counts with a bitset).
    pub(super) fn read_blocks(&self, g: u64) -> Option<u64> {
        let covered = self.m.min(self.ctas * self.block * self.ilp);
        let bytes = u64::from(self.load_bytes);
        match self.load {
            LoadAt::Affine { base, step } => Some(unique_blocks_affine(base, step, bytes, covered, g)),
            LoadAt::Broadcast { per_warp: false } => Some(unique_blocks_affine(0, 0, 4, u64::from(covered > 0), g)),
            LoadAt::Broadcast { per_warp: true } => Some(unique_blocks_affine(0, 4, 4, covered.div_ceil(32), g)),
            LoadAt::Hash { .. } => None,
        }
    }

    /// The launch's totals in closed form (`closed.rs`), equal to [`super::replay::replay`]'s
    /// for affine and broadcast loads whenever warps are whole (`block % 32 == 0`); `None`
    /// otherwise (the hashed gather, odd blocks), which the replay then counts.
    ///
    /// With whole warps, the items `0..n` a launch covers split into `n / 32` full warps (items
    /// `32 i .. 32 i + 32`) and at most one partial warp, and CTA `b` covers the contiguous
    /// items `b P .. (b + 1) P`, `P = block · ilp`. Each warp and each CTA is then one
    /// arithmetic progression of lane ranges (or, for per-warp broadcast, of words).
    pub(super) fn closed_totals(&self) -> Option<Totals> {
        if self.block == 0 || self.block % 32 != 0 || self.ilp == 0 || matches!(self.load, LoadAt::Hash { .. }) {
            return None;
        }
        let per_cta = self.block * self.ilp;
        let n = self.m.min(self.ctas * per_cta);
        let (warps, rest) = (n / 32, n % 32);
        let (lb, sb) = (u64::from(self.load_bytes), u64::from(self.store_bytes));
        // Sectors of the loads of the items `j0 .. j0 + count` together.
        let load = |j0: u64, count: u64| -> u64 {
            match self.load {
                LoadAt::Affine { base, step } => sectors(base + step * j0, step, lb, count),
                LoadAt::Broadcast { per_warp: false } => sectors(0, 0, 4, count),
                LoadAt::Broadcast { per_warp: true } if count > 0 => {
                    let (w0, w1) = (j0 / 32, (j0 + count - 1) / 32);
                    sectors(4 * w0, 4, 4, w1 - w0 + 1)
                }
                LoadAt::Broadcast { per_warp: true } => 0,
                LoadAt::Hash { .. } => unreachable!("checked above"),
            }
        };
        // How far the first byte of the loads moves from one item to the next (per-warp
        // broadcast: 4 bytes per 32 items, so per warp or CTA `4 · items / 32`).
        let shift = |items: u64| match self.load {
            LoadAt::Affine { step, .. } => step * items,
            LoadAt::Broadcast { per_warp: false } => 0,
            LoadAt::Broadcast { per_warp: true } => 4 * (items / 32),
            LoadAt::Hash { .. } => unreachable!("checked above"),
        };
        let start = |j0: u64| match self.load {
            LoadAt::Affine { base, step } => base + step * j0,
            LoadAt::Broadcast { per_warp } => 4 * u64::from(per_warp) * (j0 / 32),
            LoadAt::Hash { .. } => unreachable!("checked above"),
        };
        // `periodic` hands `f` the first byte; the count of a warp or CTA is a function of it
        // alone (the progression's step and length are fixed), rebuilt here from that byte.
        let from_start = |first: u64, count: u64| -> u64 {
            match self.load {
                LoadAt::Affine { step, .. } => sectors(first, step, lb, count),
                LoadAt::Broadcast { per_warp: false } => sectors(first, 0, 4, count),
                LoadAt::Broadcast { per_warp: true } => sectors(first, 4, 4, count.div_ceil(32)),
                LoadAt::Hash { .. } => unreachable!("checked above"),
            }
        };

        let mut t = Totals::default();
        let ld_full = periodic(warps, start(0), shift(32), |a| from_start(a, 32));
        add_instructions(&mut t.ld, warps, ld_full, 32, lb);
        add_instructions(&mut t.ld, u64::from(rest > 0), load(32 * warps, rest), rest, lb);
        let st_full = periodic(warps, 0, 32 * sb, |a| sectors(a, sb, sb, 32));
        add_instructions(&mut t.st, warps, st_full, 32, sb);
        add_instructions(&mut t.st, u64::from(rest > 0), sectors(32 * warps * sb, sb, sb, rest), rest, sb);

        let (ctas, tail) = (n / per_cta, n % per_cta);
        t.l2_read_sectors = periodic(ctas, start(0), shift(per_cta), |a| from_start(a, per_cta));
        t.l2_read_sectors += load(ctas * per_cta, tail);
        // Full warps store whole aligned sectors (32 · sb bytes from a multiple of 32 · sb).
        t.partial_store_sectors = partial_contiguous(32 * warps * sb, rest * sb);
        Some(t)
    }

    /// Unique 32-byte sectors of `out` the launch writes.
    pub(super) fn write_sectors(&self) -> u64 {
        let covered = self.m.min(self.ctas * self.block * self.ilp);
        let b = u64::from(self.store_bytes);
        unique_blocks_affine(0, b, b, covered, 32)
    }

    /// Hashed gather: the unique `g`-blocks of the table, over the whole launch, in a bitset.
    /// The straightforward count, kept to check `gather::gather_outcome` against (and the
    /// replay's, `predict_by_replay`).
    pub(super) fn hashed_read_blocks(&self, g: u64) -> u64 {
        let LoadAt::Hash { table, seed } = self.load else { unreachable!() };
        let covered = self.m.min(self.ctas * self.block * self.ilp);
        let blocks = (4 * table).div_ceil(g);
        let run = |lo: u64, hi: u64| {
            let mut set = Bitset::new(blocks);
            for j in lo..hi {
                set.insert(4 * (u64::from(hash32(j, seed)) % table) / g);
            }
            set
        };
        let mid = covered / 2;
        let (mut a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| run(0, mid));
            let b = run(mid, covered);
            (h.join().expect("model worker panicked"), b)
        });
        a.union(&b);
        a.len()
    }
}

/// Whether the vector kernel takes the vector path (`in` aligned to the vector width).
pub(super) fn vector_aligned(width: VecWidth, base_offset: u64) -> bool {
    base_offset % width.bytes() == 0
}

impl Kernel for Streaming {
    fn ctas(&self) -> u64 {
        self.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        match self.load {
            // Block b is block 0 shifted by `block*ilp` items: a multiple of 128 bytes in `in`
            // (4*stride*1024, 4096, 16*256*ilp, or 128 words for per-warp broadcast) and `out`.
            LoadAt::Affine { .. } | LoadAt::Broadcast { .. } => self.m / (self.block * self.ilp),
            LoadAt::Hash { .. } => 0,
        }
    }

    fn trace(&self, b: u64, c: &mut Cta) {
        let warps = self.block.div_ceil(32);
        for k in 0..self.ilp {
            for wi in 0..warps {
                let j0 = (b * self.ilp + k) * self.block + 32 * wi;
                let active = |l: u64| 32 * wi + l < self.block && j0 + l < self.m;
                c.ld(&WarpAccess::build(self.load_bytes, active, |l| self.load_addr(j0 + l)));
                let sb = u64::from(self.store_bytes);
                c.st(&WarpAccess::build(self.store_bytes, active, |l| sb * (j0 + l)));
            }
        }
    }
}
