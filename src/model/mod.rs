//! The address model: replays the address arithmetic of the built-in kernels, warp instruction
//! by warp instruction, and predicts what ncu would count. No GPU needed.
//!
//! Each `Spec` of `src/patterns/spec.rs` documents the arithmetic its kernel implements; the
//! family files here mirror it (`streaming.rs`, `gather.rs`, `kv.rs`, `shared.rs`, `sums.rs`,
//! `attention.rs`),
//! the per-instruction rules are in `core.rs` and the CTA-by-CTA driver in `replay.rs`.
//! Families whose addresses are affine (streaming, strided, vector, kv-layout, row/column
//! sums; attention's key-tile loops, and the staging copy) are counted in closed form
//! (`closed.rs`, `attention.rs`); the replay stays their test oracle
//! (`tests.rs`, `closed_forms_*`) and counts what the closed forms do not cover.
//! `expr.rs` applies the same rules to a layout the user writes as an index expression.
//!
//! Modelling assumptions (each one also appears in [`Prediction::notes`] where it matters):
//!
//! * sm_70+ rules: one request per warp instruction; sectors = distinct 32-byte sectors of the
//!   active lanes' byte ranges; an instruction whose lanes are all inactive is branched around
//!   and not counted (ncu may count a fully predicated-off instruction as a 0-sector request).
//! * `l2_read_sectors`: distinct load sectors per CTA, summed over CTAs (L1 reuse within a CTA
//!   hits, nothing is reused across CTAs). See `replay.rs`.
//! * `dram_bytes_read`: distinct `l2_fetch_bytes`-aligned blocks of loaded bytes over the whole
//!   launch × `l2_fetch_bytes` (cold L2 as under `--cache-control all`, no eviction between two
//!   touches of a block: exact for streaming kernels, a lower bound for gathers over tables far
//!   larger than L2). `dram_bytes_write`: distinct 32-byte sectors stored × 32 (write-back at
//!   sector granularity; the fetch granularity is a read-side setting). ECC read-modify-write
//!   of partially written sectors is *not* added to `dram_bytes_read`; when a kernel writes
//!   partial sectors, a note gives the bytes it would add on an ECC (HBM) part.
//! * Broadcast: in global memory the lanes of one request reading one word touch 1 sector
//!   (below the ideal of 4); in shared memory lanes reading one 32-bit word share it.
//! * Shared memory: see `core.rs` for the wavefront rule (phases of 128 bytes, 32 banks × 4 B).

mod attention;
mod closed;
mod core;
pub(crate) mod expr;
mod gather;
mod kv;
mod replay;
mod shared;
mod streaming;
mod sums;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

pub(crate) use self::core::ideal_sectors;
pub(crate) use self::replay::{GlobalTotals, SharedTotals, Totals};

use crate::patterns::{AttentionStep, Spec, Variant};
use crate::results::{Metrics, Row, Source};

/// Settings the prediction depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSettings {
    /// L2→DRAM fetch granularity in bytes: 32, 64 or 128 (`cudaLimitMaxL2FetchGranularity`,
    /// docs/metric-facts.md §2.3). Other values are rounded up to the next of these.
    pub l2_fetch_bytes: u32,
}

impl Default for ModelSettings {
    fn default() -> Self {
        ModelSettings { l2_fetch_bytes: 32 }
    }
}

impl ModelSettings {
    fn fetch(&self) -> u64 {
        match self.l2_fetch_bytes {
            0..=32 => 32,
            33..=64 => 64,
            _ => 128,
        }
    }
}

/// The model's numbers for one variant, under the stable metric names, and how they were made.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prediction {
    /// Predicted raw counters and launch facts, by catalogue key.
    pub metrics: Metrics,
    /// The model's assumptions and what it left out.
    pub notes: Vec<String>,
}

/// What a family computes: instruction totals and the DRAM side.
pub(crate) struct Outcome {
    pub totals: Totals,
    /// Distinct `g`-byte blocks loaded over the launch (`None`: the kernel loads nothing).
    pub read_blocks: Option<u64>,
    /// Distinct 32-byte sectors stored over the launch.
    pub write_sectors: u64,
}

/// How `outcome` counts: the closed forms and the gather's fast path (what `predict` uses), or
/// the CTA-by-CTA replay of every family (their oracle, and the benchmark's peer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Fast,
    Replay,
}

#[cfg(test)]
fn outcome(v: &Variant, g: u64) -> Outcome {
    outcome_by(v, g, Method::Fast)
}

fn outcome_by(v: &Variant, g: u64, method: Method) -> Outcome {
    use replay::replay;
    let fast = method == Method::Fast;
    match &v.spec {
        Spec::Strided { .. } | Spec::Broadcast { .. } | Spec::Vector { .. } => {
            let k = streaming::Streaming::from_variant(v);
            let totals = k.closed_totals().filter(|_| fast).unwrap_or_else(|| replay(&k));
            Outcome { totals, read_blocks: k.read_blocks(g), write_sectors: k.write_sectors() }
        }
        Spec::Gather { .. } => {
            let k = streaming::Streaming::from_variant(v);
            let (totals, read) =
                if fast { gather::gather_outcome(&k, g) } else { (replay(&k), k.hashed_read_blocks(g)) };
            Outcome { totals, read_blocks: Some(read), write_sectors: k.write_sectors() }
        }
        Spec::EmbeddingRows { .. } => {
            let k = gather::Embedding::from_variant(v);
            let totals = if fast { k.totals() } else { replay(&k) };
            Outcome { totals, read_blocks: Some(k.read_blocks(g)), write_sectors: k.write_sectors() }
        }
        Spec::Kv { .. } => {
            let k = kv::Kv::from_variant(v);
            let totals = k.closed_totals().filter(|_| fast).unwrap_or_else(|| replay(&k));
            Outcome { totals, read_blocks: Some(k.read_blocks(g)), write_sectors: k.write_sectors() }
        }
        Spec::Shared { .. } => {
            let k = shared::Shared::from_variant(v);
            Outcome { totals: replay(&k), read_blocks: None, write_sectors: k.write_sectors() }
        }
        Spec::Transpose { .. } => {
            let k = shared::Transpose::from_variant(v);
            Outcome { totals: replay(&k), read_blocks: Some(k.read_blocks(g)), write_sectors: k.write_sectors() }
        }
        Spec::Sums { .. } => {
            let k = sums::Sums::from_variant(v);
            let totals = k.closed_totals().filter(|_| fast).unwrap_or_else(|| replay(&k));
            Outcome { totals, read_blocks: Some(k.read_blocks(g)), write_sectors: k.write_sectors() }
        }
        Spec::Attention { .. } => {
            let k = attention::Attention::from_variant(v);
            let totals = if fast { k.closed_totals() } else { replay(&k) };
            Outcome { totals, read_blocks: Some(k.read_blocks(g)), write_sectors: k.write_sectors() }
        }
        Spec::Staging { .. } => {
            let k = attention::Staging::from_variant(v);
            let totals = k.closed_totals().filter(|_| fast).unwrap_or_else(|| replay(&k));
            Outcome { totals, read_blocks: k.stream.read_blocks(g), write_sectors: k.stream.write_sectors() }
        }
    }
}

/// A predicted row per variant: the raw counters and launch facts, not yet derived.
pub fn predicted_rows(plan: &[Variant], s: &ModelSettings) -> Vec<Row> {
    (plan.iter())
        .map(|v| {
            let p = predict(v, s);
            Row {
                pattern: Some(v.pattern.name().into()),
                variant: Some(v.name.clone()),
                grid: Some(v.launch.grid),
                block: Some(v.launch.block),
                params: v.params(),
                metrics: p.metrics,
                notes: p.notes,
                ..Row::new(v.kernel, Source::Predicted)
            }
        })
        .collect()
}

/// Predicts what ncu would count for `v` (totals over the whole launch): the raw counters of
/// `metrics.toml` under their keys, and the launch facts the formulas read. Never a derived
/// metric: the frame module derives predicted rows with the same formulas as measured ones.
pub fn predict(v: &Variant, s: &ModelSettings) -> Prediction {
    predict_by(v, s, Method::Fast)
}

/// [`predict`] with every count made by the CTA-by-CTA replay instead of the closed forms and
/// the gather's fast path: the same numbers, slower. The closed forms' oracle in the tests, and
/// the peer `cargo bench --bench model` times the suite against.
pub fn predict_by_replay(v: &Variant, s: &ModelSettings) -> Prediction {
    predict_by(v, s, Method::Replay)
}

fn predict_by(v: &Variant, s: &ModelSettings, method: Method) -> Prediction {
    let g = s.fetch();
    let o = outcome_by(v, g, method);
    let mut p = Prediction::default();
    emit_global(&mut p.metrics, "global_load", &o.totals.ld);
    emit_global(&mut p.metrics, "global_store", &o.totals.st);
    emit_shared(&mut p.metrics, "shared_load", &o.totals.lds);
    emit_shared(&mut p.metrics, "shared_store", &o.totals.sts);
    let m = &mut p.metrics;
    m.insert("access_bytes".into(), f64::from(v.access_bytes));
    m.insert("algorithm_bytes_read".into(), v.bytes_read as f64);
    m.insert("algorithm_bytes_written".into(), v.bytes_written as f64);
    if o.totals.ld.instructions > 0 {
        m.insert("l2_read_sectors".into(), o.totals.l2_read_sectors as f64);
    }
    if let Some(blocks) = o.read_blocks.filter(|_| o.totals.ld.instructions > 0) {
        m.insert("dram_bytes_read".into(), (blocks * g) as f64);
    }
    if o.totals.st.instructions > 0 {
        m.insert("dram_bytes_write".into(), (o.write_sectors * 32) as f64);
    }

    let n = &mut p.notes;
    n.push(format!("predicted by the address model (sm_70+ rules), L2 fetch granularity {g} B"));
    if o.totals.ld.instructions > 0 {
        n.push(
            "l2_read_sectors counts distinct 32-B load sectors per CTA (L1 reuse within a block, none across blocks)"
                .into(),
        );
    }
    if o.totals.partial_store_sectors > 0 {
        n.push(format!(
            "{} sectors are written partially by some store: with ECC (HBM GPUs) each can cost a 32-B DRAM read, up to {} bytes more dram_bytes_read",
            o.totals.partial_store_sectors,
            o.totals.partial_store_sectors * 32
        ));
    }
    match &v.spec {
        Spec::Gather { .. } => n.push(
            "dram_bytes_read assumes a block fetched once stays in L2 for the whole launch: a lower bound for tables far larger than L2".into(),
        ),
        Spec::EmbeddingRows { random: true, .. } => n.push(
            "dram_bytes_read assumes a row fetched once stays in L2 for the whole launch: a lower bound for tables far larger than L2".into(),
        ),
        Spec::Broadcast { .. } => n.push(
            "broadcast: 1 sector per request is below the ideal of ceil(32 x 4 / 32) = 4".into(),
        ),
        Spec::Vector { width, base_offset, .. } if !streaming::vector_aligned(*width, *base_offset) => n.push(format!(
            "misaligned base ({base_offset} B): the kernel falls back to scalar 4-byte loads, so the ideal is 4 sectors/request, not {}",
            ideal_sectors(32, width.bytes() as u32)
        )),
        Spec::Attention { step: AttentionStep::Flash, .. } => n.push(
            "one kernel, the SxS scores never leave the chip: DRAM bytes grow as S; every 64-row query tile reads all of K and V from L2 (an S^2/64 term: L2 amp grows with S)".into(),
        ),
        Spec::Attention { .. } => n.push(
            "naive attention at one length is three kernels: _scores writes the SxS matrix, _softmax reads and writes it, _pv reads it (16 S^2 bytes of DRAM), each one coalesced".into(),
        ),
        Spec::Staging { staged: true, .. } => n.push(
            "every word is stored to shared memory and loaded back once: direct's DRAM bytes plus shared-memory work, nothing reused".into(),
        ),
        _ => {}
    }
    p
}

/// The global-memory counters of one direction (`global_load`, `global_store`). Requests and
/// instructions are equal under the sm_70+ rule; ncu only has an instruction counter for loads.
fn emit_global(m: &mut Metrics, prefix: &str, t: &GlobalTotals) {
    if t.instructions == 0 {
        return;
    }
    let mut put = |k: &str, v: f64| {
        m.insert(format!("{prefix}_{k}"), v);
    };
    put("requests", t.instructions as f64);
    put("sectors", t.sectors as f64);
    if prefix == "global_load" {
        put("instructions", t.instructions as f64);
        put("bytes_requested", t.bytes_requested as f64);
    }
}

/// The shared-memory counters of one direction. The bank-conflict counter is predicted as
/// wavefronts beyond the conflict-free minimum, which is what the hardware counts in the
/// clean case (64/128-bit accesses need 2/4 wavefronts with no conflict counted).
fn emit_shared(m: &mut Metrics, prefix: &str, t: &SharedTotals) {
    if t.instructions == 0 {
        return;
    }
    let mut put = |k: &str, v: f64| {
        m.insert(format!("{prefix}_{k}"), v);
    };
    put("instructions", t.instructions as f64);
    put("wavefronts", t.wavefronts as f64);
    put("bank_conflicts", (t.wavefronts - t.ideal_wavefronts) as f64);
}
