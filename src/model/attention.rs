//! The `reuse` pattern: `Spec::Attention` (naive attention's three kernels and FlashAttention's
//! one) and `Spec::Staging` (a streaming read, direct or staged once through shared memory).
//!
//! Mirrors `Spec::Attention` in `src/patterns/spec.rs` (tile `T = 64`, `d = 64`, blocks of 64
//! threads, two warps; the softmax's blocks of 256, eight warps), instruction by instruction in
//! program order; a warp of a 64-thread block is threads `32w .. 32w + 32`. Global buffers are
//! placed at disjoint virtual bases ([`REGION`] apart, so the per-CTA distinct sectors of two
//! buffers never coincide); every offset within one is a byte offset from its 256-byte aligned
//! start. Shared tiles are word arrays laid out one after another; only `word mod 32` matters.
//!
//! Every CTA of every step is a translate of CTA 0 by a multiple of 128 bytes in each buffer
//! (tiles of 64 rows of 256 bytes, rows of `seq` ≥ 64 floats) with the same shared addresses,
//! so a launch is CTA 0 times the grid. Within a CTA, the key-tile loop of `Pv` and `Flash`
//! repeats the same instructions over fresh bytes: every count, the CTA's distinct load
//! sectors included, is affine in the number of key tiles, which [`Attention::closed_totals`]
//! uses (two short traces instead of `seq / 64` iterations); the replay is its oracle.

use super::core::{unique_blocks_affine, WarpAccess};
use super::replay::{Cta, GlobalTotals, Kernel, SharedTotals, Totals};
use super::streaming::{LoadAt, Streaming};
use crate::patterns::{AttentionStep, Spec, Variant, ATTENTION_HEAD_DIM, ATTENTION_TILE, SOFTMAX_BLOCK};

/// Distance between the virtual bases of two global buffers (1 TiB: beyond any buffer).
pub(super) const REGION: u64 = 1 << 40;

const T: u64 = ATTENTION_TILE;
const D: u64 = ATTENTION_HEAD_DIM;
/// A tile row read one row per thread is padded to 65 words (conflict-free).
const P: u64 = T + 1;

/// One attention kernel.
pub(super) struct Attention {
    step: AttentionStep,
    seq: u64,
    grid: [u64; 2],
}

impl Attention {
    pub(super) fn from_variant(v: &Variant) -> Attention {
        let Spec::Attention { step, seq } = v.spec else { unreachable!("not an attention spec") };
        Attention { step, seq, grid: [u64::from(v.launch.grid[0]), u64::from(v.launch.grid[1])] }
    }

    /// Key tiles the `Pv` and `Flash` loops walk.
    fn tiles(&self) -> u64 {
        self.seq / T
    }

    /// Distinct `g`-byte blocks the launch loads: every input read whole.
    pub(super) fn read_blocks(&self, g: u64) -> u64 {
        let rows = unique_blocks_affine(0, 4, 4, self.seq * D, g);
        let matrix = unique_blocks_affine(0, 4, 4, self.seq * self.seq, g);
        match self.step {
            AttentionStep::Scores => 2 * rows,
            AttentionStep::Softmax => matrix,
            AttentionStep::Pv => matrix + rows,
            AttentionStep::Flash => 3 * rows,
        }
    }

    /// Distinct 32-byte sectors the launch stores: the S×S matrix or `O`.
    pub(super) fn write_sectors(&self) -> u64 {
        match self.step {
            AttentionStep::Scores | AttentionStep::Softmax => unique_blocks_affine(0, 4, 4, self.seq * self.seq, 32),
            AttentionStep::Pv | AttentionStep::Flash => unique_blocks_affine(0, 4, 4, self.seq * D, 32),
        }
    }

    /// The launch's totals: CTA 0 (its key-tile loop extrapolated from one and two tiles) times
    /// the CTAs. Equal to [`super::replay::replay`]'s; the tests hold it to that.
    pub(super) fn closed_totals(&self) -> Totals {
        let cta = match self.step {
            AttentionStep::Scores | AttentionStep::Softmax => self.cta_totals(0, self.tiles()),
            AttentionStep::Pv | AttentionStep::Flash => {
                let (one, two) = (self.cta_totals(0, 1), self.cta_totals(0, 2));
                affine(&one, &two, self.tiles())
            }
        };
        let mut t = Totals::default();
        t.add(&cta, self.ctas());
        t
    }

    fn cta_totals(&self, cta: u64, tiles: u64) -> Totals {
        let mut c = Cta::default();
        self.trace_tiles(cta, tiles, &mut c);
        c.finish()
    }

    /// CTA `cta`'s instructions, with the key-tile loop (of `Pv` and `Flash`) cut to `tiles`.
    fn trace_tiles(&self, cta: u64, tiles: u64, c: &mut Cta) {
        let (x, y) = (cta % self.grid[0], cta / self.grid[0]);
        match self.step {
            AttentionStep::Scores => self.scores(x, y, c),
            AttentionStep::Softmax => self.softmax(x, c),
            AttentionStep::Pv => self.pv(x, tiles, c),
            AttentionStep::Flash => self.flash(x, tiles, c),
        }
    }

    fn scores(&self, kt: u64, qt: u64, c: &mut Cta) {
        let (q, k) = (0, REGION);
        let ks = T * D;
        for w in 0..T / 32 {
            let t = |l: u64| 32 * w + l;
            for r in 0..T {
                c.ld(&full(|l| q + 4 * ((qt * T + r) * D + t(l))));
                c.sts(&full(|l| 4 * (r * D + t(l))));
                c.ld(&full(|l| k + 4 * ((kt * T + r) * D + t(l))));
                c.sts(&full(|l| 4 * (ks + r * P + t(l))));
            }
            for d in 0..D {
                c.lds(&full(|l| 4 * (ks + t(l) * P + d)));
            }
            for i in 0..T {
                for d in 0..D {
                    c.lds(&full(|_| 4 * (i * D + d)));
                }
                c.st(&full(|l| 4 * ((qt * T + i) * self.seq + kt * T + t(l))));
            }
        }
    }

    fn softmax(&self, row: u64, c: &mut Cta) {
        let (red, buf) = (0, 32);
        let base = row * self.seq;
        for w in 0..SOFTMAX_BLOCK / 32 {
            // Thread t = 32w + l takes j = t, t + 256, … below seq: whole warps, as seq is a
            // multiple of 64 (a warp is either in or out of an iteration).
            let js: Vec<u64> = (0..).map(|i| 32 * w + i * SOFTMAX_BLOCK).take_while(|&j| j < self.seq).collect();
            let reduce = |c: &mut Cta| {
                c.sts(&WarpAccess::build(4, |l| l == 0, |_| 4 * (red + w)));
                for k in 0..SOFTMAX_BLOCK / 32 {
                    c.lds(&full(|_| 4 * (red + k)));
                }
            };
            for &j in &js {
                c.ld(&full(|l| 4 * (base + j + l)));
                c.sts(&full(|l| 4 * (buf + j + l)));
            }
            reduce(c);
            for &j in &js {
                c.lds(&full(|l| 4 * (buf + j + l)));
                c.sts(&full(|l| 4 * (buf + j + l)));
            }
            reduce(c);
            for &j in &js {
                c.lds(&full(|l| 4 * (buf + j + l)));
                c.st(&full(|l| 4 * (base + j + l)));
            }
        }
    }

    fn pv(&self, qt: u64, tiles: u64, c: &mut Cta) {
        let (p, v) = (0, REGION);
        let vs = T * T;
        for w in 0..T / 32 {
            let t = |l: u64| 32 * w + l;
            for kt in 0..tiles {
                for r in 0..T {
                    c.ld(&full(|l| p + 4 * ((qt * T + r) * self.seq + kt * T + t(l))));
                    c.sts(&full(|l| 4 * (r * T + t(l))));
                    c.ld(&full(|l| v + 4 * ((kt * T + r) * D + t(l))));
                    c.sts(&full(|l| 4 * (vs + r * D + t(l))));
                }
                for j in 0..T {
                    c.lds(&full(|l| 4 * (vs + j * D + t(l))));
                    for i in 0..T {
                        c.lds(&full(|_| 4 * (i * T + j)));
                    }
                }
            }
            for i in 0..T {
                c.st(&full(|l| 4 * ((qt * T + i) * D + t(l))));
            }
        }
    }

    fn flash(&self, qt: u64, tiles: u64, c: &mut Cta) {
        let (q, k, v) = (0, REGION, 2 * REGION);
        let vs = T * P;
        for w in 0..T / 32 {
            let t = |l: u64| 32 * w + l;
            for r in 0..T {
                c.ld(&full(|l| q + 4 * ((qt * T + r) * D + t(l))));
                c.sts(&full(|l| 4 * (r * P + t(l))));
            }
            for d in 0..D {
                c.lds(&full(|l| 4 * (t(l) * P + d)));
            }
            for kt in 0..tiles {
                for r in 0..T {
                    c.ld(&full(|l| k + 4 * ((kt * T + r) * D + t(l))));
                    c.sts(&full(|l| 4 * (r * D + t(l))));
                    c.ld(&full(|l| v + 4 * ((kt * T + r) * D + t(l))));
                    c.sts(&full(|l| 4 * (vs + r * D + t(l))));
                }
                for j in 0..T {
                    for d in 0..D {
                        c.lds(&full(|_| 4 * (j * D + d)));
                    }
                    for d in 0..D {
                        c.lds(&full(|_| 4 * (vs + j * D + d)));
                    }
                }
            }
            for d in 0..D {
                c.sts(&full(|l| 4 * (t(l) * P + d)));
            }
            for r in 0..T {
                c.lds(&full(|l| 4 * (r * P + t(l))));
                c.st(&full(|l| 4 * ((qt * T + r) * D + t(l))));
            }
        }
    }
}

impl Kernel for Attention {
    fn ctas(&self) -> u64 {
        self.grid[0] * self.grid[1]
    }

    fn uniform_prefix(&self) -> u64 {
        // Tiles of 64 rows of 256 B, rows of the S×S matrix of 4·seq B (seq a multiple of 64):
        // every CTA is CTA 0 shifted by multiples of 256 bytes (module doc).
        self.ctas()
    }

    fn trace(&self, cta: u64, c: &mut Cta) {
        self.trace_tiles(cta, self.tiles(), c);
    }
}

/// A warp instruction of all 32 lanes, 4 bytes each, at `f(lane)`.
fn full(f: impl FnMut(u64) -> u64) -> WarpAccess {
    WarpAccess::build(4, |_| true, f)
}

/// `one + (n − 1) · (two − one)`, field by field: the totals of `n` key tiles from those of one
/// and two (each tile adds the same instructions, sectors and distinct load sectors).
fn affine(one: &Totals, two: &Totals, n: u64) -> Totals {
    let f = |a: u64, b: u64| a + (n - 1) * (b - a);
    let g = |a: &GlobalTotals, b: &GlobalTotals| GlobalTotals {
        instructions: f(a.instructions, b.instructions),
        sectors: f(a.sectors, b.sectors),
        ideal_sectors: f(a.ideal_sectors, b.ideal_sectors),
        bytes_requested: f(a.bytes_requested, b.bytes_requested),
    };
    let s = |a: &SharedTotals, b: &SharedTotals| SharedTotals {
        instructions: f(a.instructions, b.instructions),
        wavefronts: f(a.wavefronts, b.wavefronts),
        ideal_wavefronts: f(a.ideal_wavefronts, b.ideal_wavefronts),
    };
    Totals {
        ld: g(&one.ld, &two.ld),
        st: g(&one.st, &two.st),
        lds: s(&one.lds, &two.lds),
        sts: s(&one.sts, &two.sts),
        l2_read_sectors: f(one.l2_read_sectors, two.l2_read_sectors),
        partial_store_sectors: f(one.partial_store_sectors, two.partial_store_sectors),
    }
}

/// The streaming read of `Spec::Staging`, direct or staged once through shared memory.
pub(super) struct Staging {
    pub stream: Streaming,
    staged: bool,
}

impl Staging {
    pub(super) fn from_variant(v: &Variant) -> Staging {
        let Spec::Staging { m, ilp, staged } = v.spec else { unreachable!("not a staging spec") };
        let stream = Streaming {
            m,
            ilp: u64::from(ilp),
            block: v.launch.threads_per_block(),
            ctas: v.launch.blocks(),
            load: LoadAt::Affine { base: 0, step: 4 },
            load_bytes: 4,
            store_bytes: 4,
        };
        Staging { stream, staged }
    }

    /// The streaming closed form; staged, one shared store and one shared load per global load
    /// (the same lanes: a contiguous run of at most 32 words, one wavefront).
    pub(super) fn closed_totals(&self) -> Option<Totals> {
        let mut t = self.stream.closed_totals()?;
        if self.staged {
            let n = t.ld.instructions;
            let one = SharedTotals { instructions: n, wavefronts: n, ideal_wavefronts: n };
            t.sts = one;
            t.lds = one;
        }
        Some(t)
    }
}

impl Kernel for Staging {
    fn ctas(&self) -> u64 {
        self.stream.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        self.stream.uniform_prefix()
    }

    fn trace(&self, b: u64, c: &mut Cta) {
        if !self.staged {
            return self.stream.trace(b, c);
        }
        let s = &self.stream;
        let warps = s.block.div_ceil(32);
        let items = |c: &mut Cta, global: &dyn Fn(&mut Cta, &WarpAccess), shared: &dyn Fn(&mut Cta, &WarpAccess)| {
            for k in 0..s.ilp {
                for wi in 0..warps {
                    let j0 = (b * s.ilp + k) * s.block + 32 * wi;
                    let active = |l: u64| 32 * wi + l < s.block && j0 + l < s.m;
                    let word = |l: u64| 4 * (k * s.block + 32 * wi + l);
                    let g = WarpAccess::build(4, active, |l| 4 * (j0 + l));
                    let sh = WarpAccess::build(4, active, word);
                    // Loads go global → shared, stores shared → global: order within the
                    // pair does not change a count.
                    global(c, &g);
                    shared(c, &sh);
                }
            }
        };
        items(c, &|c, w| c.ld(w), &|c, w| c.sts(w));
        items(c, &|c, w| c.st(w), &|c, w| c.lds(w));
    }
}
