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

use super::core::{unique_blocks_affine, WarpAccess};
use super::engine::{Cta, Kernel};
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
