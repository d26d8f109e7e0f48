//! Core primitives of the address model: what one warp-level memory instruction costs.
//!
//! Input is always the set of *active* lanes of one warp instruction, their byte addresses and
//! the access width. Outputs follow `docs/metric-facts.md`:
//!
//! * **Global (§1.1)**: sectors = distinct aligned 32-byte chunks touched by the byte ranges
//!   `[addr, addr + width)` of the active lanes; lines (tags) = distinct 128-byte chunks;
//!   ideal sectors = `ceil(active_lanes × width / 32)`. One request per instruction (sm_70+).
//! * **Shared (§1.2)**: 32 banks of 4 bytes, word `w` on bank `w % 32`. The rule implemented:
//!   the warp is served in *phases* of 128 bytes of lane data: one phase for accesses of at most
//!   32 bits, two for 64-bit (lanes 0–15, 16–31), four for 128-bit (lanes 0–7, 8–15, …).
//!   Within a phase, each active lane touches `ceil(width / 4)` consecutive 32-bit words; the
//!   phase costs as many wavefronts as the largest number of *distinct* words on any one bank
//!   (lanes touching the same word share it: broadcast). A phase with no active lane costs
//!   nothing. Wavefronts = sum over phases. Ideal = `max(1, ceil(active × width / 128))`, so a
//!   full warp's ideal is 1 / 2 / 4 for ≤32 / 64 / 128-bit and conflicts = wavefronts − ideal
//!   is never negative. Not modelled: the CC 7.x merge of uniform-address 128-bit pairs into
//!   2 wavefronts (§1.2, [F-UNEXP]); the model then over-predicts by up to 2 wavefronts.

/// Bytes of one sector.
pub(super) const SECTOR: u64 = 32;
/// Bytes of one L1/L2 line (tag).
pub(super) const LINE: u64 = 128;
/// Banks of shared memory, 4 bytes each.
pub(super) const BANKS: u64 = 32;

/// The active lanes of one warp instruction: byte addresses (relative to their buffer) and a
/// mask of the lanes that are active and predicated on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WarpAccess {
    pub addr: [u64; 32],
    pub mask: u32,
    /// Bytes each lane accesses: 1, 2, 4, 8 or 16.
    pub bytes: u32,
}

impl WarpAccess {
    /// A warp access with every lane's address from `f(lane)` where `active(lane)`.
    #[inline]
    pub(crate) fn build(bytes: u32, mut active: impl FnMut(u64) -> bool, mut f: impl FnMut(u64) -> u64) -> WarpAccess {
        let mut addr = [0u64; 32];
        let mut mask = 0u32;
        for l in 0..32u64 {
            if active(l) {
                addr[l as usize] = f(l);
                mask |= 1 << l;
            }
        }
        WarpAccess { addr, mask, bytes }
    }

    pub(crate) fn active(&self) -> u32 {
        self.mask.count_ones()
    }
}

/// `ceil(active × bytes / 32)`: the ideal sectors of one request (§3).
#[inline]
pub(crate) fn ideal_sectors(active: u32, bytes: u32) -> u64 {
    (u64::from(active) * u64::from(bytes)).div_ceil(SECTOR)
}

/// `max(1, ceil(active × bytes / 128))` for an instruction with at least one active lane.
#[inline]
pub(crate) fn ideal_wavefronts(active: u32, bytes: u32) -> u64 {
    if active == 0 {
        return 0;
    }
    (u64::from(active) * u64::from(bytes)).div_ceil(LINE).max(1)
}

/// Distinct `unit`-byte chunks touched by one warp instruction, written in increasing order to
/// `out` (cleared first). `unit` is 32 for sectors, 128 for lines.
#[inline]
pub(super) fn chunks(w: &WarpAccess, unit: u64, out: &mut Vec<u64>) {
    out.clear();
    let bytes = u64::from(w.bytes.max(1));
    let mut m = w.mask;
    let mut sorted = true;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = w.addr[l];
        let (lo, hi) = (a / unit, (a + bytes - 1) / unit);
        for c in lo..=hi {
            match out.last() {
                Some(&last) if last == c => {}
                Some(&last) if last > c => {
                    sorted = false;
                    out.push(c);
                }
                _ => out.push(c),
            }
        }
    }
    if !sorted {
        out.sort_unstable();
        out.dedup();
    }
}

/// The footprint of one global instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub sectors: u64,
    pub lines: u64,
}

/// Sectors and lines (tags) of one global-memory warp instruction.
pub(crate) fn footprint(w: &WarpAccess) -> Footprint {
    let mut v = Vec::with_capacity(64);
    chunks(w, SECTOR, &mut v);
    let sectors = v.len() as u64;
    chunks(w, LINE, &mut v);
    Footprint { sectors, lines: v.len() as u64 }
}

/// For each distinct sector of a *store* (in `sectors`, as from [`chunks`]), whether the
/// instruction writes fewer than its 32 bytes (a partial-sector write, which costs a DRAM read
/// on ECC parts, docs/metric-facts.md §2.6.4). Returns how many sectors are partially written.
/// Lanes are assumed not to overlap (true of every built-in store).
pub(super) fn partial_sectors(w: &WarpAccess, sectors: &[u64], partial: &mut Vec<u64>) -> u64 {
    partial.clear();
    let bytes = u64::from(w.bytes.max(1));
    // At most 32 lanes × 2 sectors for the widths the kernels use: no allocation per store.
    let mut stack = [0u64; 64];
    let mut heap = Vec::new();
    let covered: &mut [u64] = if sectors.len() <= stack.len() {
        &mut stack[..sectors.len()]
    } else {
        heap.resize(sectors.len(), 0);
        &mut heap
    };
    let mut m = w.mask;
    while m != 0 {
        let l = m.trailing_zeros() as usize;
        m &= m - 1;
        let a = w.addr[l];
        let mut b = a;
        while b < a + bytes {
            let s = b / SECTOR;
            let end = ((s + 1) * SECTOR).min(a + bytes);
            if let Ok(i) = sectors.binary_search(&s) {
                covered[i] += end - b;
            }
            b = end;
        }
    }
    for (i, &c) in covered.iter().enumerate() {
        if c < SECTOR {
            partial.push(sectors[i]);
        }
    }
    partial.len() as u64
}

/// Shared-memory wavefronts of one warp instruction under the phase rule in the module doc.
pub(crate) fn shared_wavefronts(w: &WarpAccess) -> u64 {
    let bytes = u64::from(w.bytes.max(1));
    let phases: u32 = match bytes {
        0..=4 => 1,
        5..=8 => 2,
        _ => 4,
    };
    let per = 32 / phases;
    let mut total = 0;
    let mut words: [u64; 32] = [0; 32];
    for p in 0..phases {
        let pmask = if per == 32 { u32::MAX } else { ((1u32 << per) - 1) << (p * per) };
        let mut m = w.mask & pmask;
        if m == 0 {
            continue;
        }
        let mut n = 0;
        while m != 0 {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            let first = w.addr[l] / 4;
            let last = (w.addr[l] + bytes - 1) / 4;
            for word in first..=last {
                if n < words.len() {
                    words[n] = word;
                    n += 1;
                }
            }
        }
        let ws = &mut words[..n];
        ws.sort_unstable();
        let mut per_bank = [0u32; BANKS as usize];
        let mut prev = None;
        for &word in ws.iter() {
            if prev != Some(word) {
                per_bank[(word % BANKS) as usize] += 1;
                prev = Some(word);
            }
        }
        total += u64::from(*per_bank.iter().max().unwrap_or(&1)).max(1);
    }
    total
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Distinct aligned `g`-byte blocks touched by the byte ranges `[start + i·step, … + width)`,
/// `i in 0..count`. Exact, in O(g) time: the ranges increase, so a block touched by range `i`
/// and an earlier one is also touched by range `i − 1`; the number of blocks range `i` adds is
/// then periodic in `i` with period `g / gcd(step mod g, g)`.
pub(crate) fn unique_blocks_affine(start: u64, step: u64, width: u64, count: u64, g: u64) -> u64 {
    if count == 0 || width == 0 {
        return 0;
    }
    let lo = |i: u64| (start + i * step) / g;
    let hi = |i: u64| (start + i * step + width - 1) / g;
    let first = hi(0) - lo(0) + 1;
    if step == 0 {
        return first;
    }
    let new = |i: u64| {
        let a = lo(i).max(hi(i - 1) + 1);
        if hi(i) >= a {
            hi(i) - a + 1
        } else {
            0
        }
    };
    let period = g / gcd(step % g, g);
    let n = count - 1;
    let (full, rem) = (n / period, n % period);
    let per: u64 = (1..=period.min(n)).map(new).sum();
    let tail: u64 = if full == 0 { 0 } else { (1..=rem).map(new).sum() };
    if full == 0 {
        // Fewer ranges than one period: `per` already summed them all.
        first + per
    } else {
        first + full * per + tail
    }
}

/// `x % d` for every 32-bit `x` by two multiplications instead of a 64-bit division (Lemire,
/// Kaser & Kurz, "Faster remainder by direct computation", 2019: exact for `d < 2^32`). A
/// divisor of `2^32` or more leaves every 32-bit `x` unchanged.
#[derive(Debug, Clone, Copy)]
pub(super) struct FastMod {
    d: u64,
    m: u64,
}

impl FastMod {
    pub(super) fn new(d: u64) -> FastMod {
        assert!(d > 0, "remainder by zero");
        // d == 1 gives m == 0 (wrapped), hence 0: correct.
        let m = if d <= u64::from(u32::MAX) { (u64::MAX / d).wrapping_add(1) } else { 0 };
        FastMod { d, m }
    }

    #[inline]
    pub(super) fn rem(&self, x: u32) -> u64 {
        if self.d > u64::from(u32::MAX) {
            return u64::from(x);
        }
        let low = self.m.wrapping_mul(u64::from(x));
        ((u128::from(low) * u128::from(self.d)) >> 64) as u64
    }
}

/// Counts distinct `u64` keys; reused across CTAs without reallocating. Dense key sets (a span
/// at most 64× their number) go through a bitset, sparse ones through an open-addressing set.
#[derive(Default)]
pub(super) struct Distinct {
    bits: Vec<u64>,
    slots: Vec<u64>,
    stamp: Vec<u32>,
    generation: u32,
}

impl Distinct {
    pub(super) fn count(&mut self, keys: &[u64]) -> u64 {
        if keys.is_empty() {
            return 0;
        }
        let (mut lo, mut hi) = (u64::MAX, 0);
        for &k in keys {
            lo = lo.min(k);
            hi = hi.max(k);
        }
        let span = hi - lo + 1;
        if span <= 64 * keys.len() as u64 + 4096 {
            let words = span.div_ceil(64) as usize;
            self.bits.clear();
            self.bits.resize(words, 0);
            let mut n = 0;
            for &k in keys {
                let o = k - lo;
                let (wi, b) = ((o / 64) as usize, 1u64 << (o % 64));
                n += u64::from(self.bits[wi] & b == 0);
                self.bits[wi] |= b;
            }
            n
        } else {
            let cap = (keys.len() * 2).next_power_of_two().max(64);
            if self.slots.len() < cap {
                self.slots = vec![0; cap];
                self.stamp = vec![0; cap];
                self.generation = 0;
            }
            let cap = self.slots.len();
            self.generation = self.generation.wrapping_add(1);
            if self.generation == 0 {
                self.stamp.iter_mut().for_each(|s| *s = 0);
                self.generation = 1;
            }
            let shift = 64 - cap.trailing_zeros();
            let mut n = 0;
            for &k in keys {
                let mut i = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize;
                loop {
                    if self.stamp[i] != self.generation {
                        self.stamp[i] = self.generation;
                        self.slots[i] = k;
                        n += 1;
                        break;
                    }
                    if self.slots[i] == k {
                        break;
                    }
                    i = (i + 1) & (cap - 1);
                }
            }
            n
        }
    }
}

/// A bitset over `len` keys, for unique sectors over a whole launch.
pub(super) struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    pub(super) fn new(len: u64) -> Bitset {
        Bitset { words: vec![0; len.div_ceil(64) as usize] }
    }
    #[inline]
    pub(super) fn insert(&mut self, k: u64) {
        self.words[(k / 64) as usize] |= 1 << (k % 64);
    }
    /// Asks the CPU to fetch the word holding `k` ahead of an [`insert`](Bitset::insert): a
    /// hint, it neither reads nor faults.
    #[inline]
    pub(super) fn prefetch(&self, k: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = self.words.as_ptr().wrapping_add((k / 64) as usize).cast::<i8>();
            // SAFETY: a prefetch never dereferences: any address, even out of bounds, is fine.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = k;
    }
    pub(super) fn union(&mut self, other: &Bitset) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }
    pub(super) fn len(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn lanes(bytes: u32, f: impl Fn(u64) -> u64) -> WarpAccess {
        WarpAccess::build(bytes, |_| true, f)
    }

    #[test]
    fn sectors_follow_metric_semantics_examples() {
        assert_eq!(footprint(&lanes(4, |l| 4 * l)), Footprint { sectors: 4, lines: 1 });
        assert_eq!(footprint(&lanes(4, |l| 4 + 4 * l)).sectors, 5, "offset by one float");
        assert_eq!(footprint(&lanes(4, |l| 32 + 4 * l)), Footprint { sectors: 4, lines: 2 });
        assert_eq!(footprint(&lanes(16, |l| 16 + 16 * l)), Footprint { sectors: 17, lines: 5 });
        assert_eq!(footprint(&lanes(16, |l| 16 * l)).sectors, 16);
        assert_eq!(footprint(&lanes(4, |_| 0)).sectors, 1, "broadcast");
        assert_eq!(footprint(&lanes(4, |l| 128 * l)), Footprint { sectors: 32, lines: 32 });
        assert_eq!(footprint(&lanes(4, |l| 4 * ((l * 7919) % 32))).sectors, 4, "order does not matter");
        assert_eq!(ideal_sectors(32, 4), 4);
        assert_eq!(ideal_sectors(32, 16), 16);
        assert_eq!(ideal_sectors(1, 4), 1);
    }

    #[test]
    fn shared_wavefronts_rules() {
        // 32-bit: conflict-free, 32-way, broadcast, padded column.
        assert_eq!(shared_wavefronts(&lanes(4, |l| 4 * l)), 1);
        assert_eq!(shared_wavefronts(&lanes(4, |l| 4 * 32 * l)), 32);
        assert_eq!(shared_wavefronts(&lanes(4, |_| 12)), 1);
        assert_eq!(shared_wavefronts(&lanes(4, |l| 4 * 33 * l)), 1);
        assert_eq!(shared_wavefronts(&lanes(4, |l| 4 * 2 * l)), 2, "stride 2 words: 2-way");
        assert_eq!(shared_wavefronts(&lanes(4, |l| 4 * 8 * l)), 8);
        // Bytes of one word broadcast.
        assert_eq!(shared_wavefronts(&lanes(1, |l| l / 4)), 1);
        // 64-bit contiguous: 2 phases of 128 B, ideal 2, no conflict.
        assert_eq!(shared_wavefronts(&lanes(8, |l| 8 * l)), 2);
        assert_eq!(ideal_wavefronts(32, 8), 2);
        // 128-bit contiguous: 4.
        assert_eq!(shared_wavefronts(&lanes(16, |l| 16 * l)), 4);
        assert_eq!(ideal_wavefronts(32, 16), 4);
        // 64-bit with a stride of 2 elements (16 B): each half-warp spans 256 B: 2 per phase.
        assert_eq!(shared_wavefronts(&lanes(8, |l| 16 * l)), 4);
        // 64-bit, every lane the same double: broadcast, one wavefront per phase.
        assert_eq!(shared_wavefronts(&lanes(8, |_| 64)), 2);
    }

    #[test]
    fn unique_blocks_affine_matches_brute_force() {
        for g in [32u64, 64, 128] {
            for start in [0u64, 4, 16, 60, 100] {
                for step in [0u64, 4, 8, 12, 16, 32, 48, 64, 128, 132, 256, 512] {
                    for width in [1u64, 2, 4, 8, 16] {
                        for count in [0u64, 1, 2, 3, 7, 31, 32, 33, 100, 257] {
                            let mut set = HashSet::new();
                            for i in 0..count {
                                let a = start + i * step;
                                for b in a..a + width {
                                    set.insert(b / g);
                                }
                            }
                            let fast = unique_blocks_affine(start, step, width, count, g);
                            assert_eq!(fast, set.len() as u64, "g{g} s{start} st{step} w{width} c{count}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn fast_mod_is_exact() {
        let xs = [0u32, 1, 2, 3, 7, 1000, 0x5eed, 1 << 31, (1 << 31) - 1, u32::MAX - 1, u32::MAX];
        let ds =
            [1u64, 2, 3, 5, 7, 1000, 25_000, 1 << 28, (1 << 28) + 1, 3 << 29, u64::from(u32::MAX), 1 << 32, 1 << 40];
        for &d in &ds {
            let f = FastMod::new(d);
            for &x in &xs {
                assert_eq!(f.rem(x), u64::from(x) % d, "{x} % {d}");
            }
            let mut x = 12345u32;
            for _ in 0..2000 {
                x = x.wrapping_mul(0x9E37_79B9).wrapping_add(0x7F4A_7C15);
                assert_eq!(f.rem(x), u64::from(x) % d, "{x} % {d}");
            }
        }
    }

    #[test]
    fn distinct_counts_dense_and_sparse() {
        let mut d = Distinct::default();
        assert_eq!(d.count(&[1, 2, 2, 3, 1000]), 4);
        let sparse: Vec<u64> = (0..5000u64).map(|i| (i % 1500) * 1_000_003).collect();
        assert_eq!(d.count(&sparse), 1500);
        assert_eq!(d.count(&sparse[..10]), 10);
    }
}
