//! Row and column sums: `Spec::Sums` (pattern `column`).
//!
//! Mirrors `Spec::Sums` in `src/patterns/spec.rs`: "sums of a row-major `rows x cols` fp32
//! matrix, one thread per output, blocks of 256. `along_rows`: thread `i` sums row `i`
//! (`a[i * cols + c]`, lanes a row apart: uncoalesced); otherwise thread `i` sums column `i`
//! (`a[r * cols + i]`, coalesced)". Thread `i = 256*b + t`, active while `i < outputs`; the
//! loop runs `c in 0..cols` (or `r in 0..rows`), one load instruction per iteration per warp,
//! then one fp32 store `out[i]`.
//!
//! The RTX 3070 fixture (`text_ncu2022_rtx3070_metrics_l1tex_coalescing_rowcol.txt`, 16384²)
//! measured `row_sums` 8,388,608 requests and 268,427,291 sectors; the arithmetic gives
//! 8,388,608 × 32 = 268,435,456: 8,165 sectors (0.003 %) fewer. Every request of `row_sums`
//! has 32 lanes 64 KiB apart, so no request can touch fewer than 32 distinct sectors and the
//! request count matches exactly: the deficit is not in the addresses. 8,165 is not a multiple
//! of 32 (not whole requests lost) and is far below one SM's share of the work. The most
//! likely cause is the counter itself: `l1tex__t_sectors` is a hardware counter sampled per
//! L1TEX instance and summed, with documented small errors ("Range & Precision", PG §2.3.8) –
//! e.g. the tag stage counting a sector that is already in flight for the *same* warp's
//! previous iteration (each lane re-reads its 32-byte sector on 8 consecutive iterations)
//! differently under some timing, or a few sector lookups merged across requests. `column_sums`
//! (4 sectors per request, perfectly regular) matched exactly. The model keeps the exact
//! arithmetic; the tolerance for this metric should be ≥ 0.01 %.

use super::closed::{add_instructions, partial_contiguous, periodic, sectors};
use super::core::{unique_blocks_affine, WarpAccess};
use super::replay::{Cta, Kernel, Totals};
use crate::patterns::{Spec, Variant};

pub(super) struct Sums {
    along_rows: bool,
    rows: u64,
    cols: u64,
    ctas: u64,
    threads: u64,
}

impl Sums {
    pub(super) fn from_variant(v: &Variant) -> Sums {
        let Spec::Sums { along_rows, rows, cols } = v.spec else { unreachable!() };
        Sums { along_rows, rows, cols, ctas: v.launch.blocks(), threads: v.launch.threads_per_block() }
    }

    fn outputs(&self) -> u64 {
        if self.along_rows {
            self.rows
        } else {
            self.cols
        }
    }

    fn issued(&self) -> u64 {
        self.outputs().min(self.ctas * self.threads)
    }

    pub(super) fn read_blocks(&self, g: u64) -> u64 {
        if self.along_rows {
            unique_blocks_affine(0, 4, 4, self.issued() * self.cols, g)
        } else if self.issued() == self.cols {
            unique_blocks_affine(0, 4, 4, self.rows * self.cols, g)
        } else {
            self.rows * unique_blocks_affine(0, 4, 4, self.issued(), g)
        }
    }

    /// The launch's totals in closed form (`closed.rs`), equal to [`super::replay::replay`]'s
    /// when blocks are whole warps; `None` otherwise. Outputs `0..n` split into `n / 32` full
    /// warps and at most one partial one. A warp of `k` lanes from output `i0` makes one load
    /// per loop index: row sums `4 · ((i0 + l) · cols + c)` (lanes `4 · cols` apart, starts 4
    /// bytes apart per `c`), column sums `4 · (r · cols + i0 + l)` (lanes 4 apart, starts
    /// `4 · cols` apart per `r`). A CTA's loads together: rows `lo..hi` whole (one contiguous
    /// block), or `rows` ranges of `4 · (hi − lo)` bytes `4 · cols` apart.
    pub(super) fn closed_totals(&self) -> Option<Totals> {
        let threads = self.threads;
        if threads == 0 || threads % 32 != 0 {
            return None;
        }
        let (rows, cols) = (self.rows, self.cols);
        let n = self.issued();
        let (warps, rest) = (n / 32, n % 32);
        let (iters, lane_step, iter_shift, row_bytes) =
            if self.along_rows { (cols, 4 * cols, 4, 4 * cols) } else { (rows, 4, 4 * cols, 4) };
        // One warp of `k` lanes whose first load starts at byte `first`.
        let warp = |first: u64, k: u64| periodic(iters, first, iter_shift, |a| sectors(a, lane_step, 4, k));
        // The CTA of outputs `lo .. lo + k` together, from its first byte.
        let cta = |first: u64, k: u64| {
            if self.along_rows {
                sectors(first, 0, 4 * k * cols, u64::from(k > 0 && cols > 0))
            } else {
                unique_blocks_affine(first, 4 * cols, 4 * k, if k > 0 { rows } else { 0 }, 32)
            }
        };
        let mut t = Totals::default();
        let full = periodic(warps, 0, 32 * row_bytes, |a| warp(a, 32));
        add_instructions(&mut t.ld, warps * iters, full, 32, 4);
        add_instructions(&mut t.ld, u64::from(rest > 0) * iters, warp(32 * warps * row_bytes, rest), rest, 4);
        add_instructions(&mut t.st, warps, periodic(warps, 0, 128, |a| sectors(a, 4, 4, 32)), 32, 4);
        add_instructions(&mut t.st, u64::from(rest > 0), sectors(128 * warps, 4, 4, rest), rest, 4);
        if iters > 0 {
            let (ctas, tail) = (n / threads, n % threads);
            t.l2_read_sectors = periodic(ctas, 0, threads * row_bytes, |a| cta(a, threads));
            t.l2_read_sectors += cta(ctas * threads * row_bytes, tail);
        }
        t.partial_store_sectors = partial_contiguous(128 * warps, 4 * rest);
        Some(t)
    }

    pub(super) fn write_sectors(&self) -> u64 {
        unique_blocks_affine(0, 4, 4, self.issued(), 32)
    }
}

impl Kernel for Sums {
    fn ctas(&self) -> u64 {
        self.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        // Block b is block 0 shifted by 256 rows (row sums) or 256 columns (1 KiB).
        self.outputs() / self.threads
    }

    fn trace(&self, b: u64, c: &mut Cta) {
        let (rows, cols) = (self.rows, self.cols);
        for w in 0..self.threads.div_ceil(32) {
            let i0 = b * self.threads + 32 * w;
            let active = |l: u64| 32 * w + l < self.threads && i0 + l < self.outputs();
            if self.along_rows {
                for col in 0..cols {
                    c.ld(&WarpAccess::build(4, active, |l| 4 * ((i0 + l) * cols + col)));
                }
            } else {
                for r in 0..rows {
                    c.ld(&WarpAccess::build(4, active, |l| 4 * (r * cols + i0 + l)));
                }
            }
            c.st(&WarpAccess::build(4, active, |l| 4 * (i0 + l)));
        }
    }
}
