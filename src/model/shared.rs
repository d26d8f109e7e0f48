//! Shared memory: `Spec::Shared` (bank-conflict micro-benchmark) and `Spec::Transpose`.
//!
//! Mirrors `src/patterns/spec.rs`:
//!
//! * `Shared`: "blocks of 256 threads fill the tile conflict-free, then every warp makes 32 loads
//!   (`r in 0..32`) of [`SharedAccess`] through a `volatile` pointer, `reps` times over, and
//!   writes one sum per thread to `out[global thread]`". The tile is `float t[32][32]`, or
//!   `[32][33]` for `RowPadded`. Lane `l`, repetition `r`, word: `RowUnpadded` `l*32 + r`,
//!   `Column` `r*32 + l`, `RowPadded` `l*33 + r`, `Broadcast` `r*32`. The fill is not spelled out
//!   beyond "conflict-free"; modelled as the flat loop `for (i = tid; i < words; i += 256)
//!   t_flat[i] = …` (consecutive words per warp: one wavefront per store; the `[32][33]` tile
//!   takes a fifth, one-warp iteration).
//! * `Transpose`: "tile 32, blocks of 32 x 8 threads, each thread handling rows
//!   `ty, ty+8, ty+16, ty+24` of its tile: `out[x * n + y] = in[y * n + x]`". Tiled (the
//!   classic kernel): `x = bx*32 + tx, y = by*32 + ty`; for `j in 0,8,16,24`:
//!   `tile[ty+j][tx] = in[(y+j)*n + x]`; sync; `x = by*32 + tx, y = bx*32 + ty`; for `j`:
//!   `out[(y+j)*n + x] = tile[tx][ty+j]`, tile `[32][32]` or `[32][33]`. Naive: for `j`:
//!   `out[x*n + (y+j)] = in[(y+j)*n + x]`. Warps are 32 consecutive linear thread ids
//!   `tx + 32*ty`, i.e. one `ty` per warp and `tx` = lane.

use super::core::{unique_blocks_affine, WarpAccess};
use super::replay::{Cta, Kernel};
use crate::patterns::{SharedAccess, Spec, TransposeTile, Variant};

pub(super) struct Shared {
    access: SharedAccess,
    ctas: u64,
    threads: u64,
    reps: u64,
}

impl Shared {
    pub(super) fn from_variant(v: &Variant) -> Shared {
        let Spec::Shared { access, reps, .. } = v.spec else { unreachable!() };
        Shared { access, ctas: v.launch.blocks(), threads: v.launch.threads_per_block(), reps: u64::from(reps) }
    }

    fn cols(&self) -> u64 {
        if self.access == SharedAccess::RowPadded {
            33
        } else {
            32
        }
    }

    fn word(&self, l: u64, r: u64) -> u64 {
        match self.access {
            SharedAccess::RowUnpadded => l * 32 + r,
            SharedAccess::Column => r * 32 + l,
            SharedAccess::RowPadded => l * 33 + r,
            SharedAccess::Broadcast => r * 32,
        }
    }

    pub(super) fn write_sectors(&self) -> u64 {
        unique_blocks_affine(0, 4, 4, self.ctas * self.threads, 32)
    }
}

impl Kernel for Shared {
    fn ctas(&self) -> u64 {
        self.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        self.ctas
    }

    fn trace(&self, b: u64, c: &mut Cta) {
        let words = 32 * self.cols();
        for w in 0..self.threads.div_ceil(32) {
            let active = |l: u64| 32 * w + l < self.threads;
            let mut i0 = 32 * w;
            while i0 < words {
                c.sts(&WarpAccess::build(4, |l| active(l) && i0 + l < words, |l| 4 * (i0 + l)));
                i0 += self.threads;
            }
            for _ in 0..self.reps {
                for r in 0..32 {
                    c.lds(&WarpAccess::build(4, active, |l| 4 * self.word(l, r)));
                }
            }
            c.st(&WarpAccess::build(4, active, |l| 4 * (b * self.threads + 32 * w + l)));
        }
    }
}

pub(super) struct Transpose {
    tile: TransposeTile,
    n: u64,
    grid: [u64; 2],
    block: [u64; 2],
}

impl Transpose {
    pub(super) fn from_variant(v: &Variant) -> Transpose {
        let Spec::Transpose { tile, n } = v.spec else { unreachable!() };
        let g = v.launch.grid;
        let b = v.launch.block;
        Transpose { tile, n, grid: [u64::from(g[0]), u64::from(g[1])], block: [u64::from(b[0]), u64::from(b[1])] }
    }

    fn tiles_covered(&self) -> (u64, u64) {
        ((self.grid[0] * 32).min(self.n), (self.grid[1] * 32).min(self.n))
    }

    pub(super) fn read_blocks(&self, g: u64) -> u64 {
        // Each tile is 32 rows of 128 aligned bytes (n is a multiple of 32): whole rows of tiles
        // `0..grid` are read; with the catalogue's grid (n/32 square) that is the whole matrix.
        let (cx, cy) = self.tiles_covered();
        if cx == self.n {
            unique_blocks_affine(0, 4, 4, cy * self.n, g)
        } else {
            cy * unique_blocks_affine(0, 4, 4, cx, g)
        }
    }

    pub(super) fn write_sectors(&self) -> u64 {
        let (cx, cy) = self.tiles_covered();
        if cy == self.n {
            unique_blocks_affine(0, 4, 4, cx * self.n, 32)
        } else {
            cx * unique_blocks_affine(0, 4, 4, cy, 32)
        }
    }
}

impl Kernel for Transpose {
    fn ctas(&self) -> u64 {
        self.grid[0] * self.grid[1]
    }

    fn uniform_prefix(&self) -> u64 {
        // Tile (bx, by) is tile (0, 0) shifted by (by*32*n + bx*32)*4 bytes in `in` and
        // (bx*32*n + by*32)*4 in `out`: multiples of 128. Shared addresses do not move.
        self.ctas()
    }

    fn trace(&self, cta: u64, c: &mut Cta) {
        let (bx, by) = (cta % self.grid[0], cta / self.grid[0]);
        let n = self.n;
        let pad = if self.tile == TransposeTile::Padded { 33 } else { 32 };
        let (bdx, bdy) = (self.block[0], self.block[1]);
        let threads = bdx * bdy;
        let rows_per_thread = 32 / bdy;
        for w in 0..threads.div_ceil(32) {
            // Lane l of warp w is linear thread 32w + l: (tx, ty) = (t % bdx, t / bdx).
            let txy = |l: u64| ((32 * w + l) % bdx, (32 * w + l) / bdx);
            let active = |l: u64| 32 * w + l < threads;
            for j in 0..rows_per_thread {
                let jj = j * bdy;
                let ld = |l: u64| {
                    let (tx, ty) = txy(l);
                    4 * ((by * 32 + ty + jj) * n + bx * 32 + tx)
                };
                c.ld(&WarpAccess::build(4, active, ld));
                match self.tile {
                    TransposeTile::Naive => {
                        let st = |l: u64| {
                            let (tx, ty) = txy(l);
                            4 * ((bx * 32 + tx) * n + by * 32 + ty + jj)
                        };
                        c.st(&WarpAccess::build(4, active, st));
                    }
                    _ => {
                        let sts = |l: u64| {
                            let (tx, ty) = txy(l);
                            4 * ((ty + jj) * pad + tx)
                        };
                        c.sts(&WarpAccess::build(4, active, sts));
                    }
                }
            }
        }
        if self.tile == TransposeTile::Naive {
            return;
        }
        for w in 0..threads.div_ceil(32) {
            let txy = |l: u64| ((32 * w + l) % bdx, (32 * w + l) / bdx);
            let active = |l: u64| 32 * w + l < threads;
            for j in 0..rows_per_thread {
                let jj = j * bdy;
                let lds = |l: u64| {
                    let (tx, ty) = txy(l);
                    4 * (tx * pad + ty + jj)
                };
                c.lds(&WarpAccess::build(4, active, lds));
                let st = |l: u64| {
                    let (tx, ty) = txy(l);
                    4 * ((bx * 32 + ty + jj) * n + by * 32 + tx)
                };
                c.st(&WarpAccess::build(4, active, st));
            }
        }
    }
}
