//! Slow, obviously-correct reference for the tests: written *thread by thread* straight from
//! the `Spec` doc comments (the fast path is written warp by warp), grouped into warp
//! instructions by `(warp, kind, dynamic slot)`, and counted byte by byte with hash sets.

use std::collections::{BTreeMap, HashSet};

use super::replay::{GlobalTotals, SharedTotals, Totals};
use crate::patterns::{hash32, AttentionStep, KvLayout, SharedAccess, Spec, TransposeTile, Variant, VecWidth};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Ld,
    St,
    Lds,
    Sts,
}

struct Thread {
    acc: Vec<(Kind, u32, u64, u32)>,
}

impl Thread {
    fn push(&mut self, k: Kind, slot: u32, addr: u64, bytes: u32) {
        self.acc.push((k, slot, addr, bytes));
    }
}

/// The program of thread `t` of CTA `b`, per the spec text.
fn thread_program(v: &Variant, b: u64, t: u64, p: &mut Thread) {
    use Kind::*;
    let block = v.launch.threads_per_block();
    match v.spec {
        Spec::Strided { m, stride, offset, ilp } => {
            for k in 0..u64::from(ilp) {
                let j = (b * u64::from(ilp) + k) * block + t;
                if j < m {
                    p.push(Ld, k as u32, 4 * (j * stride + offset), 4);
                    p.push(St, k as u32, 4 * j, 4);
                }
            }
        }
        Spec::Broadcast { m, per_warp, ilp } => {
            for k in 0..u64::from(ilp) {
                let j = (b * u64::from(ilp) + k) * block + t;
                if j < m {
                    let w = if per_warp { j / 32 } else { 0 };
                    p.push(Ld, k as u32, 4 * w, 4);
                    p.push(St, k as u32, 4 * j, 4);
                }
            }
        }
        Spec::Gather { lookups, table, seed, ilp } => {
            for k in 0..u64::from(ilp) {
                let j = (b * u64::from(ilp) + k) * block + t;
                if j < lookups {
                    p.push(Ld, k as u32, 4 * (u64::from(hash32(j, seed)) % table), 4);
                    p.push(St, k as u32, 4 * j, 4);
                }
            }
        }
        Spec::Vector { width, m, base_offset, ilp } => {
            let w = width.bytes();
            if base_offset % w == 0 {
                for k in 0..u64::from(ilp) {
                    let j = (b * u64::from(ilp) + k) * block + t;
                    if j < m {
                        p.push(Ld, k as u32, base_offset + w * j, w as u32);
                        p.push(St, k as u32, w * j, w as u32);
                    }
                }
            } else {
                let (floats, per) = (m * w / 4, u64::from(ilp) * w / 4);
                for k in 0..per {
                    let j = (b * per + k) * block + t;
                    if j < floats {
                        p.push(Ld, k as u32, base_offset + 4 * j, 4);
                        p.push(St, k as u32, 4 * j, 4);
                    }
                }
            }
            let _ = VecWidth::F32;
        }
        Spec::EmbeddingRows { lookups, rows, dim, seed, random } => {
            let (warp, lane) = (t / 32, t % 32);
            let i = b * (block / 32) + warp;
            if i < lookups {
                let r = if random { u64::from(hash32(i, seed)) % rows } else { i };
                for c in 0..dim / 32 {
                    p.push(Ld, c as u32, 4 * (r * dim + c * 32 + lane), 4);
                    p.push(St, c as u32, 4 * (i * dim + c * 32 + lane), 4);
                }
            }
        }
        Spec::Kv { layout, dtype, blocks, block_size: s, heads: h, head_dim: d } => {
            let e = dtype.bytes();
            if layout == KvLayout::Vllm {
                let x = 16 / e;
                let (w, l) = (t / 32, t % 32);
                let pair = b * (block / 32) + w;
                if pair < blocks * h {
                    let (bb, hh) = (pair / h, pair % h);
                    for c in 0..d / x {
                        let o = l / 2;
                        let el = (((bb * h + hh) * (d / x) + c) * s + o) * x + (l % 2) * 4;
                        p.push(Ld, c as u32, e * el, 8);
                    }
                    p.push(St, 0, 4 * (pair * 32 + l), 4);
                }
            } else {
                let (bb, hh, dd) = (b / h, b % h, t);
                for o in 0..s {
                    let el = match layout {
                        KvLayout::Nhd => ((bb * s + o) * h + hh) * d + dd,
                        KvLayout::Hnd => ((bb * h + hh) * s + o) * d + dd,
                        KvLayout::Hdn => ((bb * h + hh) * d + dd) * s + o,
                        KvLayout::Vllm => unreachable!(),
                    };
                    p.push(Ld, o as u32, e * el, e as u32);
                }
                p.push(St, 0, 4 * ((bb * h + hh) * d + dd), 4);
            }
        }
        Spec::Shared { access, reps, .. } => {
            let cols = if access == SharedAccess::RowPadded { 33 } else { 32 };
            let mut it = 0;
            let mut i = t;
            while i < 32 * cols {
                p.push(Sts, it, 4 * i, 4);
                it += 1;
                i += block;
            }
            let l = t % 32;
            let mut slot = 0;
            for _ in 0..reps {
                for r in 0..32u64 {
                    let (row, col) = match access {
                        SharedAccess::RowUnpadded | SharedAccess::RowPadded => (l, r),
                        SharedAccess::Column => (r, l),
                        SharedAccess::Broadcast => (r, 0),
                    };
                    p.push(Lds, slot, 4 * (row * cols + col), 4);
                    slot += 1;
                }
            }
            p.push(St, 0, 4 * (b * block + t), 4);
        }
        Spec::Transpose { tile, n } => {
            let gx = u64::from(v.launch.grid[0]);
            let (bx, by) = (b % gx, b / gx);
            let (tx, ty) = (t % 32, t / 32);
            let pad = if tile == TransposeTile::Padded { 33 } else { 32 };
            for j in 0..4u64 {
                let y = by * 32 + ty + 8 * j;
                let x = bx * 32 + tx;
                p.push(Ld, j as u32, 4 * (y * n + x), 4);
                if tile == TransposeTile::Naive {
                    p.push(St, j as u32, 4 * (x * n + y), 4);
                } else {
                    p.push(Sts, j as u32, 4 * ((ty + 8 * j) * pad + tx), 4);
                }
            }
            if tile != TransposeTile::Naive {
                for j in 0..4u64 {
                    p.push(Lds, j as u32, 4 * (tx * pad + ty + 8 * j), 4);
                    let (x, y) = (by * 32 + tx, bx * 32 + ty + 8 * j);
                    p.push(St, j as u32, 4 * (y * n + x), 4);
                }
            }
        }
        Spec::Sums { along_rows, rows, cols } => {
            let i = b * block + t;
            let outputs = if along_rows { rows } else { cols };
            if i < outputs {
                if along_rows {
                    for c in 0..cols {
                        p.push(Ld, c as u32, 4 * (i * cols + c), 4);
                    }
                } else {
                    for r in 0..rows {
                        p.push(Ld, r as u32, 4 * (r * cols + i), 4);
                    }
                }
                p.push(St, 0, 4 * i, 4);
            }
        }
        Spec::Attention { step, seq } => attention_thread(step, seq, v, b, t, p),
        Spec::Staging { m, ilp, staged } => {
            let ilp = u64::from(ilp);
            for k in 0..ilp {
                let j = (b * ilp + k) * block + t;
                if j < m {
                    p.push(Ld, k as u32, 4 * j, 4);
                    if staged {
                        p.push(Sts, k as u32, 4 * (k * 256 + t), 4);
                    }
                }
            }
            for k in 0..ilp {
                let j = (b * ilp + k) * block + t;
                if j < m {
                    if staged {
                        p.push(Lds, k as u32, 4 * (k * 256 + t), 4);
                    }
                    p.push(St, k as u32, 4 * j, 4);
                }
            }
        }
    }
}

/// Thread `t` of CTA `b` of an attention kernel, per `Spec::Attention`'s text: tiles of 64,
/// d = 64. Global buffers at bases 2^40 apart (Q, K, V; or Sc; or P, V), stores to their own.
fn attention_thread(step: AttentionStep, seq: u64, v: &Variant, b: u64, t: u64, th: &mut Thread) {
    use Kind::*;
    const TT: u64 = 64;
    const DD: u64 = 64;
    let region = |r: u64| r << 40;
    // The thread's n-th instruction of a kind is its slot; a lane that skips one (the softmax's
    // lane-0 store) skips its slot too, so the later ones line up across lanes.
    let mut slots = [0u32; 4];
    let mut p = |k: Kind, addr: Option<u64>| {
        let i = k as usize;
        if let Some(a) = addr {
            th.push(k, slots[i], a, 4);
        }
        slots[i] += 1;
    };
    let gx = u64::from(v.launch.grid[0]);
    match step {
        AttentionStep::Scores => {
            let (kt, qt) = (b % gx, b / gx);
            let ks = TT * DD; // Ks after Qs, in words
            for r in 0..TT {
                p(Ld, Some(region(0) + 4 * ((qt * TT + r) * DD + t)));
                p(Sts, Some(4 * (r * TT + t)));
                p(Ld, Some(region(1) + 4 * ((kt * TT + r) * DD + t)));
                p(Sts, Some(4 * (ks + r * (TT + 1) + t)));
            }
            for k in 0..DD {
                p(Lds, Some(4 * (ks + t * (TT + 1) + k)));
            }
            for i in 0..TT {
                for k in 0..DD {
                    p(Lds, Some(4 * (i * TT + k)));
                }
                p(St, Some(4 * ((qt * TT + i) * seq + kt * TT + t)));
            }
        }
        AttentionStep::Softmax => {
            let (i, warp, lane) = (b, t / 32, t % 32);
            let red = |w: u64| 4 * w;
            let buf = |j: u64| 4 * (8 + j);
            let js: Vec<u64> = (t..seq).step_by(256).collect();
            for pass in 0..3 {
                for &j in &js {
                    match pass {
                        0 => {
                            p(Ld, Some(4 * (i * seq + j)));
                            p(Sts, Some(buf(j)));
                        }
                        1 => {
                            p(Lds, Some(buf(j)));
                            p(Sts, Some(buf(j)));
                        }
                        _ => {
                            p(Lds, Some(buf(j)));
                            p(St, Some(4 * (i * seq + j)));
                        }
                    }
                }
                if pass < 2 {
                    // The block reduction: lane 0 stores its warp's value, every thread loads all.
                    p(Sts, (lane == 0).then(|| red(warp)));
                    for w in 0..8 {
                        p(Lds, Some(red(w)));
                    }
                }
            }
        }
        AttentionStep::Pv => {
            let qt = b;
            let vs = TT * TT;
            for kt in 0..seq / TT {
                for r in 0..TT {
                    p(Ld, Some(region(0) + 4 * ((qt * TT + r) * seq + kt * TT + t)));
                    p(Sts, Some(4 * (r * TT + t)));
                    p(Ld, Some(region(1) + 4 * ((kt * TT + r) * DD + t)));
                    p(Sts, Some(4 * (vs + r * TT + t)));
                }
                for j in 0..TT {
                    p(Lds, Some(4 * (vs + j * TT + t)));
                    for i in 0..TT {
                        p(Lds, Some(4 * (i * TT + j)));
                    }
                }
            }
            for i in 0..TT {
                p(St, Some(4 * ((qt * TT + i) * DD + t)));
            }
        }
        AttentionStep::Flash => {
            let qt = b;
            let vs = TT * (TT + 1);
            for r in 0..TT {
                p(Ld, Some(region(0) + 4 * ((qt * TT + r) * DD + t)));
                p(Sts, Some(4 * (r * (TT + 1) + t)));
            }
            for k in 0..DD {
                p(Lds, Some(4 * (t * (TT + 1) + k)));
            }
            for kt in 0..seq / TT {
                for r in 0..TT {
                    p(Ld, Some(region(1) + 4 * ((kt * TT + r) * DD + t)));
                    p(Sts, Some(4 * (r * TT + t)));
                    p(Ld, Some(region(2) + 4 * ((kt * TT + r) * DD + t)));
                    p(Sts, Some(4 * (vs + r * TT + t)));
                }
                for j in 0..TT {
                    for k in 0..DD {
                        p(Lds, Some(4 * (j * TT + k)));
                    }
                    for k in 0..DD {
                        p(Lds, Some(4 * (vs + j * TT + k)));
                    }
                }
            }
            for k in 0..DD {
                p(Sts, Some(4 * (t * (TT + 1) + k)));
            }
            for r in 0..TT {
                p(Lds, Some(4 * (r * (TT + 1) + t)));
                p(St, Some(4 * ((qt * TT + r) * DD + t)));
            }
        }
    }
}

/// Wavefronts of one shared instruction, counted from scratch: lanes in phases of 128 bytes of
/// lane data; per phase, the most distinct 32-bit words any bank must deliver.
fn wavefronts(lanes: &[(u64, u64, u32)]) -> u64 {
    let bytes = u64::from(lanes[0].2);
    let lanes_per_phase = (128 / bytes.max(4)).min(32);
    let mut phases: BTreeMap<u64, BTreeMap<u64, HashSet<u64>>> = BTreeMap::new();
    for &(lane, addr, _) in lanes {
        for byte in addr..addr + bytes {
            let word = byte / 4;
            phases.entry(lane / lanes_per_phase).or_default().entry(word % 32).or_default().insert(word);
        }
    }
    phases.values().map(|banks| banks.values().map(|w| w.len() as u64).max().unwrap()).sum()
}

/// Everything the fast path computes, from the thread programs.
pub(super) struct Reference {
    pub totals: Totals,
    pub read_blocks: u64,
    pub write_sectors: u64,
}

/// The lanes of one warp instruction (warp, kind, program slot): (lane, address, bytes) each.
type Instructions = BTreeMap<(u64, Kind, u32), Vec<(u64, u64, u32)>>;

pub(super) fn reference(v: &Variant, g: u64) -> Reference {
    reference_at(v, &[g]).swap_remove(0)
}

/// [`reference`] at every fetch granularity of `gs` from one pass over the thread programs
/// (the instructions do not depend on it; only the DRAM blocks do).
pub(super) fn reference_at(v: &Variant, gs: &[u64]) -> Vec<Reference> {
    let block = v.launch.threads_per_block();
    let mut totals = Totals::default();
    let mut dram_read: Vec<HashSet<u64>> = vec![HashSet::new(); gs.len()];
    let mut dram_write: HashSet<u64> = HashSet::new();
    for b in 0..v.launch.blocks() {
        let mut instrs: Instructions = BTreeMap::new();
        for t in 0..block {
            let mut p = Thread { acc: Vec::new() };
            thread_program(v, b, t, &mut p);
            for (k, slot, addr, bytes) in p.acc {
                instrs.entry((t / 32, k, slot)).or_default().push((t % 32, addr, bytes));
            }
        }
        let mut cta_ld: HashSet<u64> = HashSet::new();
        for ((_, kind, _), lanes) in instrs {
            let bytes = lanes[0].2;
            let active = lanes.len() as u64;
            match kind {
                Kind::Ld | Kind::St => {
                    let mut sectors = HashSet::new();
                    for &(_, a, w) in &lanes {
                        for byte in a..a + u64::from(w) {
                            sectors.insert(byte / 32);
                            if kind == Kind::Ld {
                                for (set, g) in dram_read.iter_mut().zip(gs) {
                                    set.insert(byte / g);
                                }
                            } else {
                                dram_write.insert(byte / 32);
                            }
                        }
                    }
                    let t: &mut GlobalTotals = if kind == Kind::Ld { &mut totals.ld } else { &mut totals.st };
                    t.instructions += 1;
                    t.sectors += sectors.len() as u64;
                    t.ideal_sectors += (active * u64::from(bytes)).div_ceil(32);
                    t.bytes_requested += active * u64::from(bytes);
                    if kind == Kind::Ld {
                        cta_ld.extend(sectors);
                    }
                }
                Kind::Lds | Kind::Sts => {
                    let t: &mut SharedTotals = if kind == Kind::Lds { &mut totals.lds } else { &mut totals.sts };
                    t.instructions += 1;
                    t.wavefronts += wavefronts(&lanes);
                    t.ideal_wavefronts += (active * u64::from(bytes)).div_ceil(128).max(1);
                }
            }
        }
        totals.l2_read_sectors += cta_ld.len() as u64;
    }
    (dram_read.iter())
        .map(|set| Reference { totals, read_blocks: set.len() as u64, write_sectors: dram_write.len() as u64 })
        .collect()
}
