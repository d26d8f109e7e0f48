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
//!
//! Both gathers have a fast path that gives exactly what [`replay`] gives: in a *full* CTA
//! (every lane active) everything but the random loads is a translate of CTA 0 by a multiple of
//! 32 bytes, so CTA 0 is traced once for those counts, and only what the random addresses
//! change (sectors per load, distinct sectors per CTA, the DRAM blocks) is computed per CTA,
//! straight from the hashed indices. CTAs that are not full go through [`replay`]'s tracing.

use super::core::{unique_blocks_affine, Bitset, FastMod, WarpAccess};
use super::replay::{replay, Cta, Kernel, Totals};
use super::streaming::{LoadAt, Streaming};
use crate::patterns::{hash32, Spec, Variant};

/// The scalar gather (`Spec::Gather`): totals of the launch (as [`replay`] counts them) and the
/// distinct `g`-byte blocks of the table it reads (as [`Streaming::hashed_read_blocks`]).
///
/// A load of a full warp reads `4 * x` with `x = hash32(j, seed) % table`, 4 bytes at a 4-byte
/// aligned address: exactly one sector `x / 8` per lane. Its instruction counts (1 request,
/// ideal 4 sectors, 128 bytes) and every store count are CTA 0's; its sectors are the distinct
/// `x / 8` among the 32 lanes, and the CTA's L2 reads the distinct `x / 8` among its
/// `block * ilp` lanes. Both come from [`full_ctas`], with a filter over the CTA's lanes. The DRAM
/// blocks `4 * x / g` go into one bitset per thread, ORed at the end.
pub(super) fn gather_outcome(k: &Streaming, g: u64) -> (Totals, u64) {
    let LoadAt::Hash { table, seed } = k.load else { unreachable!("not a hashed gather") };
    let per_cta = k.block * k.ilp;
    let covered = k.m.min(k.ctas * per_cta);
    let full = if k.block % 32 == 0 && k.load_bytes == 4 && per_cta > 0 { (k.m / per_cta).min(k.ctas) } else { 0 };
    let fm = FastMod::new(table);
    let nblocks = (4 * table).div_ceil(g);
    // g is 32, 64 or 128: a shift, not a 64-bit division per lane.
    debug_assert!(g.is_power_of_two());
    let g_shift = g.trailing_zeros();

    let mut total = Totals::default();
    let mut c = Cta::default();
    if full > 0 {
        // CTA 0 for everything a full CTA repeats; its random-load counts are replaced below.
        k.trace(0, &mut c);
        let mut t = c.finish();
        t.ld.sectors = 0;
        t.l2_read_sectors = 0;
        total.add(&t, full);
    }

    let mask = (table.is_power_of_two() && table <= 1 << 32).then(|| (table - 1) as u32);
    let lanes = Lanes { seed, mask, fm, per_cta, nblocks, g_shift };
    let run = |lo, hi| full_ctas(lanes, lo, hi);
    let (sectors, l2, mut bits) = if full >= 64 {
        let mid = full / 2;
        let (a, b) = std::thread::scope(|s| {
            let h = s.spawn(|| run(0, mid));
            let b = run(mid, full);
            (h.join().expect("model worker panicked"), b)
        });
        let mut bits = a.2;
        bits.union(&b.2);
        (a.0 + b.0, a.1 + b.1, bits)
    } else {
        run(0, full)
    };
    total.ld.sectors += sectors;
    total.l2_read_sectors += l2;

    // The CTAs that are not full: traced, and their loads' blocks added.
    for b in full..k.ctas {
        k.trace(b, &mut c);
        total.add(&c.finish(), 1);
    }
    for j in full * per_cta..covered {
        bits.insert((4 * fm.rem(hash32(j, seed))) >> g_shift);
    }
    (total, bits.len())
}

/// What [`full_ctas`] needs of the gather, by value, so the loop keeps it in registers.
#[derive(Clone, Copy)]
struct Lanes {
    seed: u32,
    /// `table - 1` when the table is a power of two (a mask instead of [`FastMod`]).
    mask: Option<u32>,
    fm: FastMod,
    per_cta: u64,
    nblocks: u64,
    g_shift: u32,
}

/// Full CTAs `[lo, hi)`: (load sectors, L2 sectors, DRAM blocks).
///
/// Their warps are consecutive runs of 32 indices: warp `n` reads `j = lo * per_cta + 32 * n +
/// lane`. A lane's sector is new to its CTA and to its instruction unless an earlier lane of
/// the CTA loaded it: a [`Filter`] says "certainly new" for nearly every lane (random sectors
/// rarely meet within a CTA: 299 times in 2^25 lanes at the default size), and only a lane whose
/// filter bit is already set scans the CTA's earlier lanes. Exact: a sector seen earlier in the
/// CTA always finds its bit set. The DRAM bitset (megabytes, beyond L1 and often L2) is what the
/// loop waits for, so each warp's indices are computed [`AHEAD`] warps ahead and each insert
/// prefetches the bitset word of the lane that many warps later: the misses overlap the work
/// in between, one at a time (a burst of 32 prefetches per warp, as before, overflows the
/// core's miss buffers: 5-10 % slower).
fn full_ctas(p: Lanes, lo: u64, hi: u64) -> (u64, u64, Bitset) {
    let Lanes { seed, mask, fm, per_cta, nblocks, g_shift } = p;
    let mut filter = Filter::new();
    let mut bits = Bitset::new(nblocks);
    // The current CTA's sectors, by lane position (`32 * warp + lane`).
    let mut cta = vec![0u32; per_cta as usize];
    // Lanes whose sector an earlier lane of their CTA (of their instruction) loaded.
    let (mut cta_repeats, mut instr_repeats) = (0u64, 0u64);
    let warps = per_cta / 32;
    let all = (hi - lo) * warps;
    let j0 = |n: u64| lo * per_cta + 32 * n;
    // Warp `n`'s indices in `ring[n % RING]`, computed `AHEAD` warps before it is counted.
    let mut ring = [[0u32; 32]; RING];
    for (n, warp) in ring.iter_mut().enumerate().take(AHEAD.min(all as usize)) {
        warp_indices(j0(n as u64), seed, mask, &fm, warp);
    }
    let mut n = 0usize;
    for _ in lo..hi {
        for w in 0..warps as usize {
            let ahead = (n + AHEAD) % RING;
            if ((n + AHEAD) as u64) < all {
                warp_indices(j0((n + AHEAD) as u64), seed, mask, &fm, &mut ring[ahead]);
            }
            let cur = ring[n % RING];
            n += 1;
            let start = 32 * w;
            for (lane, &x) in cur.iter().enumerate() {
                bits.prefetch((4 * u64::from(ring[ahead][lane])) >> g_shift);
                let (sector, at) = (x / 8, start + lane);
                if filter.test_and_set(sector) {
                    let earlier = &cta[..at];
                    if earlier.contains(&sector) {
                        cta_repeats += 1;
                        instr_repeats += u64::from(earlier[start..].contains(&sector));
                    }
                }
                cta[at] = sector;
                bits.insert((4 * u64::from(x)) >> g_shift);
            }
        }
        filter.clear(&cta);
    }
    let lanes = (hi - lo) * per_cta;
    (lanes - instr_repeats, lanes - cta_repeats, bits)
}

/// How many warps ahead [`full_ctas`] computes indices and prefetches: 64 inserts (1 and 4
/// warps measured no better), in a ring of `AHEAD + 1` warps.
const AHEAD: usize = 2;
const RING: usize = AHEAD + 1;

/// `hash32(j0 + lane, seed) % table` for the 32 lanes of one warp. The hashes come first, in
/// a loop of plain 32-bit arithmetic the compiler vectorises; the remainder is `mask` for a
/// power-of-two table and [`FastMod`] otherwise. (An AVX2 copy of the hash loop, not inlined
/// into the lane loop, measured slower: 86 against 79 ms for the default gather.)
#[inline]
fn warp_indices(j0: u64, seed: u32, mask: Option<u32>, fm: &FastMod, out: &mut [u32; 32]) {
    for (lane, o) in out.iter_mut().enumerate() {
        *o = hash32(j0 + lane as u64, seed);
    }
    match mask {
        Some(mask) => out.iter_mut().for_each(|o| *o &= mask),
        None => out.iter_mut().for_each(|o| *o = fm.rem(*o) as u32),
    }
}

/// A bit per hashed sector, set by the lanes of one CTA: a set bit means "maybe seen in this
/// CTA", a clear one "certainly not". 2^18 bits, 32 KiB (in L1): about 1 lane in 512 of a
/// 1,024-lane CTA finds its bit set by another sector (more in larger CTAs: slower, as exact).
/// Indexed by the sector's low bits, which are the hash's (exact whatever the index; only the
/// speed depends on the spread); a constant size, so the index needs no bounds check.
struct Filter(Box<[u64; FILTER_WORDS]>);

const FILTER_WORDS: usize = 1 << 12;

impl Filter {
    fn new() -> Filter {
        Filter(Box::new([0; FILTER_WORDS]))
    }

    #[inline]
    fn slot(sector: u32) -> (usize, u64) {
        ((sector / 64) as usize % FILTER_WORDS, 1 << (sector % 64))
    }

    /// Sets the sector's bit: whether it was already set.
    #[inline]
    fn test_and_set(&mut self, sector: u32) -> bool {
        let (w, bit) = Self::slot(sector);
        let was = self.0[w] & bit != 0;
        self.0[w] |= bit;
        was
    }

    /// Clears the bits of these sectors (a CTA's: cheaper than clearing all 32 KiB).
    fn clear(&mut self, sectors: &[u32]) {
        for &s in sectors {
            self.0[Self::slot(s).0] = 0;
        }
    }
}

pub(super) struct Embedding {
    lookups: u64,
    rows: u64,
    rows_mod: FastMod,
    dim: u64,
    seed: u32,
    random: bool,
    ctas: u64,
    warps: u64,
}

impl Embedding {
    pub(super) fn from_variant(v: &Variant) -> Embedding {
        let Spec::EmbeddingRows { lookups, rows, dim, seed, random } = v.spec else { unreachable!() };
        Embedding {
            lookups,
            rows,
            rows_mod: FastMod::new(rows.max(1)),
            dim,
            seed,
            random,
            ctas: v.launch.blocks(),
            warps: v.launch.threads_per_block() / 32,
        }
    }

    fn row(&self, i: u64) -> u64 {
        if self.random {
            self.rows_mod.rem(hash32(i, self.seed))
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
    pub(super) fn read_blocks(&self, g: u64) -> u64 {
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

    pub(super) fn write_sectors(&self) -> u64 {
        unique_blocks_affine(0, 4, 4, self.issued() * self.dim, 32)
    }

    /// What [`replay`] gives, faster for random rows. When a row is a whole number of sectors
    /// (`dim * 4 % 32 == 0`), every row and every output row starts on a sector boundary, so a
    /// full CTA (all `warps` lookups issued) costs per instruction what CTA 0 costs; only its
    /// L2 reads differ: `dim / 8` sectors per *distinct* row among its lookups (rows are
    /// disjoint and wholly loaded). Those are counted from the row ids.
    pub(super) fn totals(&self) -> Totals {
        if !self.random || (self.dim * 4) % 32 != 0 || self.warps == 0 {
            // Sequential rows are all translates: `replay`'s uniform prefix already covers them.
            return replay(self);
        }
        let full = (self.lookups / self.warps).min(self.ctas);
        let mut total = Totals::default();
        let mut c = Cta::default();
        if full > 0 {
            self.trace(0, &mut c);
            let mut t = c.finish();
            t.l2_read_sectors = 0;
            total.add(&t, full);
            let per_row = self.dim * 4 / 32;
            let mut rows = Vec::with_capacity(self.warps as usize);
            for b in 0..full {
                rows.clear();
                rows.extend((0..self.warps).map(|w| self.row(b * self.warps + w)));
                rows.sort_unstable();
                rows.dedup();
                total.l2_read_sectors += rows.len() as u64 * per_row;
            }
        }
        for b in full..self.ctas {
            self.trace(b, &mut c);
            total.add(&c.finish(), 1);
        }
        total
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
