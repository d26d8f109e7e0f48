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

use super::core::{unique_blocks_affine, WarpAccess};
use super::engine::{Cta, Kernel};
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
