//! Gathers: `Spec::Gather` (scalar random lookups, replayed by `streaming.rs`; its DRAM side is
//! here) and `Spec::EmbeddingRows`.
//!
//! Mirrors `Spec::EmbeddingRows` in `src/patterns/spec.rs`: "one warp per lookup, 8 warps per
//! block. Lookup `i = blockIdx.x * 8 + warp` reads row `r = hash32(i, seed) % rows` (`random`)
//! or `r = i` (sequential); lane `l` copies elements `r * dim + c * 32 + l` for
//! `c in 0..dim/32` into `out[i * dim + c * 32 + l]`". fp32, so one load and one store
//! instruction per `(warp, c)`.
//!
//! DRAM: unique blocks over the whole launch, as if nothing were evicted from L2 between two
//! touches of the same block. For a 1 GiB table (≫ 50 MB L2) a block hit again much later may
//! really be fetched again: the prediction is then a lower bound (noted in the prediction).

use super::core::{unique_blocks_affine, Bitset, WarpAccess};
use super::engine::{Cta, Kernel};
use crate::patterns::{hash32, Spec, Variant};

pub struct Embedding {
    lookups: u64,
    rows: u64,
    dim: u64,
    seed: u32,
    random: bool,
    ctas: u64,
    warps: u64,
}

impl Embedding {
    pub fn from_variant(v: &Variant) -> Embedding {
        let Spec::EmbeddingRows { lookups, rows, dim, seed, random } = v.spec else { unreachable!() };
        Embedding { lookups, rows, dim, seed, random, ctas: v.launch.blocks(), warps: v.launch.threads_per_block() / 32 }
    }

    fn row(&self, i: u64) -> u64 {
        if self.random {
            u64::from(hash32(i, self.seed)) % self.rows
        } else {
            i
        }
    }

    fn issued(&self) -> u64 {
        self.lookups.min(self.ctas * self.warps)
    }

    /// Unique `g`-byte blocks of the table read: distinct rows × blocks per row. Rows are
    /// `dim * 4` bytes; when that is a multiple of `g` (256-byte rows and g ≤ 128) rows do not
    /// share blocks. Otherwise each row's blocks are counted on the bitset directly.
    pub fn read_blocks(&self, g: u64) -> u64 {
        let row_bytes = self.dim * 4;
        let n = self.issued();
        if row_bytes % g == 0 {
            let mut rows = Bitset::new(self.rows.max(n));
            for i in 0..n {
                rows.insert(self.row(i));
            }
            rows.len() * (row_bytes / g)
        } else {
            let mut blocks = Bitset::new((self.rows.max(n) * row_bytes).div_ceil(g) + 1);
            for i in 0..n {
                let start = self.row(i) * row_bytes;
                for b in start / g..=(start + row_bytes - 1) / g {
                    blocks.insert(b);
                }
            }
            blocks.len()
        }
    }

    pub fn write_sectors(&self) -> u64 {
        unique_blocks_affine(0, 4, 4, self.issued() * self.dim, 32)
    }
}

impl Kernel for Embedding {
    fn ctas(&self) -> u64 {
        self.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        // Sequential: CTA b reads rows 8b..8b+7, a shift of 8 rows (2 KiB). Random: none.
        if self.random {
            0
        } else {
            self.lookups / self.warps
        }
    }

    fn trace(&self, b: u64, c: &mut Cta) {
        for w in 0..self.warps {
            let i = b * self.warps + w;
            if i >= self.lookups {
                continue;
            }
            let r = self.row(i);
            for k in 0..self.dim.div_ceil(32) {
                let active = |l: u64| k * 32 + l < self.dim;
                c.ld(&WarpAccess::build(4, active, |l| 4 * (r * self.dim + k * 32 + l)));
                c.st(&WarpAccess::build(4, active, |l| 4 * (i * self.dim + k * 32 + l)));
            }
        }
    }
}
