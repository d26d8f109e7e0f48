//! KV-cache reads: `Spec::Kv`.
//!
//! Mirrors `Spec::Kv` and `KvLayout` in `src/patterns/spec.rs`:
//!
//! * NHD / HND / HDN: "blocks of `head_dim` threads, one per `d`, block `i` handles
//!   `b = i / H, h = i % H`, and loops over the `S` tokens `o`, reading `K[b, o, h, d]` at the
//!   layout's offset, and writes its fp32 sum to `out[(b * H + h) * D + d]`". A warp is 32
//!   consecutive `d`: one load per `(warp, o)`, one fp32 store per warp. Offsets (elements):
//!   NHD `((b*S + o)*H + h)*D + d`, HND `((b*H + h)*S + o)*D + d`, HDN `((b*H + h)*D + d)*S + o`.
//! * vLLM `[B, H, D/x, S, x]`, `x = 16 / sizeof(dtype)`: "blocks of 128 threads, warp `w` of
//!   block `i` handles pair `p = i * 4 + w` (`b = p / H, h = p % H`); lane `l` reads 8 bytes
//!   (4 halves) at token `o = l / 2`, element `(l % 2) * 4` of each x-chunk `c in 0..D/x` (one
//!   load instruction per chunk), and writes one fp32 sum to `out[p * 32 + l]`": element
//!   `(((b*H + h)*(D/x) + c)*S + o)*x + (l % 2)*4`. A warp whose `p ≥ B·H` does nothing.
//!
//! Every layout is a bijection and the launch visits every `(b, o, h, d)` once, so DRAM reads
//! are the whole cache once (`blocks·S·H·D·sizeof`), counted in `g`-blocks.

use super::closed::{add_instructions, periodic, sectors};
use super::core::{unique_blocks_affine, WarpAccess};
use super::replay::{Cta, Kernel, Totals};
use crate::patterns::{KvLayout, Spec, Variant};

pub(super) struct Kv {
    layout: KvLayout,
    e: u64,
    blocks: u64,
    s: u64,
    h: u64,
    d: u64,
    ctas: u64,
    threads: u64,
}

impl Kv {
    pub(super) fn from_variant(v: &Variant) -> Kv {
        let Spec::Kv { layout, dtype, blocks, block_size, heads, head_dim } = v.spec else { unreachable!() };
        Kv {
            layout,
            e: dtype.bytes(),
            blocks,
            s: block_size,
            h: heads,
            d: head_dim,
            ctas: v.launch.blocks(),
            threads: v.launch.threads_per_block(),
        }
    }

    fn pairs(&self) -> u64 {
        self.blocks * self.h
    }

    /// Element offset of `K[b, o, h, d]`.
    fn elem(&self, b: u64, o: u64, h: u64, d: u64) -> u64 {
        let (s, hh, dd) = (self.s, self.h, self.d);
        match self.layout {
            KvLayout::Nhd => ((b * s + o) * hh + h) * dd + d,
            KvLayout::Hnd => ((b * hh + h) * s + o) * dd + d,
            KvLayout::Hdn => ((b * hh + h) * dd + d) * s + o,
            KvLayout::Vllm => {
                let x = 16 / self.e;
                (((b * hh + h) * (dd / x) + d / x) * s + o) * x + d % x
            }
        }
    }

    pub(super) fn read_blocks(&self, g: u64) -> u64 {
        let bytes = self.pairs() * self.s * self.d * self.e;
        unique_blocks_affine(0, self.e, self.e, bytes / self.e, g)
    }

    /// The launch's totals in closed form (`closed.rs`), equal to [`super::replay::replay`]'s
    /// when `head_dim` is a multiple of 32 (whole warps; every pair then starts a multiple of
    /// 32 bytes from pair 0 in the cache and in `out`), and for vLLM when it is fp16 with at
    /// most 16 tokens per block (each warp's lanes cover them: `o = l / 2`). `None` otherwise.
    ///
    /// NHD / HND / HDN: warp `w`, token `o` of pair 0 reads 32 lanes `e` bytes wide at
    /// `e · elem(0, o, 0, 32 w + l)`, a progression in `l` (step `e`, or `e · S` for HDN) whose
    /// start moves by a fixed amount per `o`; the pair's loads together are `S` rows of `D · e`
    /// bytes `H · D · e` apart (NHD) or one block of `S · D · e` bytes (HND, HDN).
    /// vLLM: lane `l` of chunk `q = p · D/x + c` reads 8 bytes at `16 · S · q + 8 · l`, so the
    /// chunks of consecutive pairs are one progression in `q`, and so are a CTA's.
    pub(super) fn closed_totals(&self) -> Option<Totals> {
        let (e, s, d) = (self.e, self.s, self.d);
        let mut t = Totals::default();
        if self.layout == KvLayout::Vllm {
            let warps = self.threads / 32;
            if e != 2 || s == 0 || s > 16 || d % 8 != 0 || self.threads % 32 != 0 || warps == 0 {
                return None;
            }
            let chunks = d / 8;
            let lanes = (2 * s).min(32);
            let pairs = self.pairs().min(self.ctas * warps);
            let q = pairs * chunks;
            let ld = periodic(q, 0, 16 * s, |a| sectors(a, 8, 8, lanes));
            add_instructions(&mut t.ld, q, ld, lanes, 8);
            add_instructions(&mut t.st, pairs, periodic(pairs, 0, 128, |a| sectors(a, 4, 4, 32)), 32, 4);
            let per_cta = warps * chunks;
            let (full, tail) = (q / per_cta, q % per_cta);
            let cta = |first: u64, n: u64| unique_blocks_affine(first, 16 * s, 8 * lanes, n, 32);
            t.l2_read_sectors = periodic(full, 0, 16 * s * per_cta, |a| cta(a, per_cta));
            t.l2_read_sectors += cta(16 * s * full * per_cta, tail);
            return Some(t);
        }
        if d % 32 != 0 || self.threads != d || s == 0 {
            return None;
        }
        let pairs = self.pairs().min(self.ctas);
        let (lane_step, token_shift) = match self.layout {
            KvLayout::Nhd => (e, e * self.h * d),
            KvLayout::Hnd => (e, e * d),
            KvLayout::Hdn => (e * s, e),
            KvLayout::Vllm => unreachable!("above"),
        };
        // Pair 0's loads: warp w's first byte for token 0, then `token_shift` more per token.
        let ld: u64 = (0..d / 32)
            .map(|w| periodic(s, e * self.elem(0, 0, 0, 32 * w), token_shift, |a| sectors(a, lane_step, e, 32)))
            .sum();
        add_instructions(&mut t.ld, pairs * (d / 32) * s, pairs * ld, 32, e);
        add_instructions(&mut t.st, pairs * (d / 32), pairs * (d / 32) * sectors(0, 4, 4, 32), 32, 4);
        let cta = match self.layout {
            KvLayout::Nhd => sectors(0, e * self.h * d, e * d, s),
            _ => sectors(0, 0, e * s * d, 1),
        };
        t.l2_read_sectors = pairs * cta;
        Some(t)
    }

    pub(super) fn write_sectors(&self) -> u64 {
        if self.layout == KvLayout::Vllm {
            unique_blocks_affine(0, 4, 4, self.pairs().min(self.ctas * 4) * 32, 32)
        } else {
            unique_blocks_affine(0, 4, 4, self.pairs().min(self.ctas) * self.d, 32)
        }
    }
}

impl Kernel for Kv {
    fn ctas(&self) -> u64 {
        self.ctas
    }

    fn uniform_prefix(&self) -> u64 {
        // Pair (b, h) is pair (0, 0) shifted by a multiple of S·D·sizeof (NHD: by h·D·sizeof,
        // 256 or 512 bytes) in the cache and of D·4 bytes in `out`: all multiples of 32.
        if self.layout == KvLayout::Vllm {
            self.pairs() / (self.threads / 32)
        } else {
            self.pairs()
        }
    }

    fn trace(&self, i: u64, c: &mut Cta) {
        let e = self.e;
        if self.layout == KvLayout::Vllm {
            let x = 16 / e;
            for w in 0..self.threads / 32 {
                let p = i * (self.threads / 32) + w;
                if p >= self.pairs() {
                    continue;
                }
                let (b, h) = (p / self.h, p % self.h);
                for chunk in 0..self.d / x {
                    let addr = |l: u64| e * self.elem(b, l / 2, h, chunk * x + (l % 2) * (x / 2));
                    c.ld(&WarpAccess::build(8, |l| l / 2 < self.s, addr));
                }
                c.st(&WarpAccess::build(4, |_| true, |l| 4 * (p * 32 + l)));
            }
            return;
        }
        if i >= self.pairs() {
            return;
        }
        let (b, h) = (i / self.h, i % self.h);
        for w in 0..self.threads.div_ceil(32) {
            let active = |l: u64| 32 * w + l < self.threads;
            for o in 0..self.s {
                c.ld(&WarpAccess::build(e as u32, active, |l| e * self.elem(b, o, h, 32 * w + l)));
            }
            c.st(&WarpAccess::build(4, active, |l| 4 * ((b * self.h + h) * self.d + 32 * w + l)));
        }
    }
}
