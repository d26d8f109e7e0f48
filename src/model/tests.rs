//! The model against the brute-force reference, and against every number the seeds state.

use super::core::{shared_wavefronts, WarpAccess};
use super::expr::analyze_layout;
use super::reference::{reference, reference_at};
use super::*;
use crate::patterns::{variants, LaunchShape, Pattern, Sizing};

/// The catalogue's variants at `sizing`, with the shared micro-benchmark cut to 3 blocks and
/// 2 repetitions (its size does not follow `--size`; 2048 blocks are too slow byte by byte),
/// and attention at its shortest length only (64: one tile, millions of lane accesses already).
fn small_variants(sizing: Sizing) -> Vec<Variant> {
    let mut out = Vec::new();
    for p in Pattern::ALL {
        for mut v in variants(p, sizing) {
            if matches!(v.spec, Spec::Attention { seq, .. } if seq > 64) {
                continue;
            }
            if let Spec::Shared { blocks, reps, .. } = &mut v.spec {
                *blocks = 3;
                *reps = 2;
                v.launch = LaunchShape { grid: [3, 1, 1], block: v.launch.block };
            }
            out.push(v);
        }
    }
    out
}

#[test]
fn fast_path_matches_the_thread_by_thread_reference_for_every_variant() {
    // 1 << 16: whole CTAs; 100_000 bytes: partial warps and partial last CTAs.
    for bytes in [1u64 << 16, 100_000] {
        for v in small_variants(Sizing { bytes }) {
            let gs = [32u64, 64, 128];
            for (g, slow) in gs.into_iter().zip(reference_at(&v, &gs)) {
                let fast = outcome(&v, g);
                let mut t = fast.totals;
                t.partial_store_sectors = 0;
                assert_eq!(t, slow.totals, "{} at {bytes} B", v.id());
                assert_eq!(fast.read_blocks.unwrap_or(0), slow.read_blocks, "{} dram read, g {g}, {bytes} B", v.id());
                assert_eq!(fast.write_sectors, slow.write_sectors, "{} dram write, {bytes} B", v.id());
            }
        }
    }
}

fn get(p: Pattern, name: &str, sizing: Sizing) -> Variant {
    variants(p, sizing).into_iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no {p}/{name}"))
}

/// A metric of `v`'s prediction, derived with `metrics.toml`'s formulas as every output is.
fn metric(v: &Variant, key: &str) -> f64 {
    let m = derived(&predict(v, &ModelSettings::default()));
    *m.get(key).unwrap_or_else(|| panic!("{} has no {key}: {m:?}", v.id()))
}

const SMALL: Sizing = Sizing { bytes: 1 << 22 };

#[test]
fn seed_001_stride_table_sectors_and_banks() {
    // "stride 1: 4 sectors, 1-way bank; stride 8: 32 sectors, 8-way; stride 32: 32, 32-way".
    for (s, sectors, ways) in [(1u64, 4.0, 1u64), (8, 32.0, 8), (32, 32.0, 32)] {
        let v = get(Pattern::Stride, &format!("stride_{s}"), SMALL);
        assert_eq!(metric(&v, "global_load_sectors_per_request"), sectors, "stride {s}");
        assert_eq!(metric(&v, "global_load_ideal_sectors_per_request"), 4.0);
        let w = WarpAccess::build(4, |_| true, |l| 4 * l * s);
        assert_eq!(shared_wavefronts(&w), ways, "stride {s} banks");
        // The same through the expression language.
        let a = derived(&analyze_layout(&format!("lane * {s}"), &[], 4, true).unwrap());
        assert_eq!(a["shared_load_wavefronts_per_instruction"], ways as f64);
        let a = derived(&analyze_layout(&format!("lane * {s}"), &[], 4, false).unwrap());
        assert_eq!(a["global_load_sectors_per_request"], sectors);
    }
}

#[test]
fn seed_000_ranked_patterns() {
    let spr = |p, n| metric(&get(p, n, SMALL), "global_load_sectors_per_request");
    assert_eq!(spr(Pattern::Coalesced, "fp32"), 4.0, "PERFECT");
    assert_eq!(spr(Pattern::Offset, "offset_0"), 4.0);
    assert_eq!(spr(Pattern::Offset, "offset_1"), 5.0, "GOOD: 4-5 with alignment");
    assert_eq!(spr(Pattern::Offset, "offset_8"), 4.0, "8 floats = 32 B: aligned again");
    assert_eq!(spr(Pattern::Stride, "stride_2"), 8.0, "OK");
    assert_eq!(spr(Pattern::Stride, "stride_32"), 32.0, "BAD");
    assert_eq!(spr(Pattern::Broadcast, "one_word"), 1.0, "BROADCAST");
    let gather = spr(Pattern::Gather, "random_fp32");
    assert!(gather > 31.9 && gather <= 32.0, "WORST: up to 32, got {gather}");
    // Vectorized: one float4 request = 16 sectors; the same bytes as floats = 4 requests of 4.
    let f4 = get(Pattern::Vector, "float4", SMALL);
    let f1 = get(Pattern::Vector, "float", SMALL);
    assert_eq!(metric(&f4, "global_load_sectors_per_request"), 16.0);
    assert_eq!(metric(&f1, "global_load_sectors_per_request"), 4.0);
    assert_eq!(metric(&f1, "global_load_requests"), 4.0 * metric(&f4, "global_load_requests"));
    assert_eq!(metric(&f1, "global_load_sectors"), metric(&f4, "global_load_sectors"));
    // docs/metric-facts.md §1.1: float4 offset by one float4 = 17 sectors; by one float: scalar.
    // One vector fewer when shifted, so the last warp is partial: 17 on every full request.
    let f4o = spr(Pattern::Vector, "float4_offset16");
    assert!(f4o > 16.999 && f4o <= 17.0, "{f4o}");
    let fb = spr(Pattern::Vector, "float4_offset4_fallback");
    assert!(fb > 4.999 && fb <= 5.0, "{fb}");
    assert_eq!(spr(Pattern::Vector, "half8"), 16.0);
    assert_eq!(spr(Pattern::Vector, "float2"), 8.0);
}

#[test]
fn kv_layout_nhd_vs_hdn_fp16_is_16x() {
    let sizing = Sizing::default();
    let nhd = metric(&get(Pattern::KvLayout, "nhd_fp16", sizing), "global_load_sectors_per_request");
    let hdn = metric(&get(Pattern::KvLayout, "hdn_fp16", sizing), "global_load_sectors_per_request");
    assert_eq!((nhd, hdn), (2.0, 32.0));
    assert_eq!(hdn / nhd, 16.0);
    assert_eq!(metric(&get(Pattern::KvLayout, "nhd_fp32", sizing), "global_load_sectors_per_request"), 4.0);
    assert_eq!(metric(&get(Pattern::KvLayout, "hdn_fp32", sizing), "global_load_sectors_per_request"), 32.0);
    assert_eq!(metric(&get(Pattern::KvLayout, "hnd_fp16", sizing), "global_load_sectors_per_request"), 2.0);
    // vLLM's split layout with its lane->token mapping: 256 contiguous bytes, ideal 8.
    let vllm = get(Pattern::KvLayout, "vllm_fp16", sizing);
    assert_eq!(metric(&vllm, "global_load_sectors_per_request"), 8.0);
    assert_eq!(metric(&vllm, "global_load_ideal_sectors_per_request"), 8.0);
    // Every layout reads the cache once from DRAM, and HDN's waste is absorbed by L1 per CTA.
    for name in ["nhd_fp16", "hdn_fp16", "hnd_fp16", "vllm_fp16", "nhd_fp32", "hdn_fp32"] {
        let v = get(Pattern::KvLayout, name, sizing);
        assert_eq!(metric(&v, "dram_amplification"), 1.0, "{name}");
        assert_eq!(metric(&v, "l2_amplification"), 1.0, "{name}");
    }
}

#[test]
fn bank_conflicts_padding_and_transpose() {
    let sizing = SMALL;
    let bc = |n: &str, k: &str| metric(&get(Pattern::BankConflicts, n, sizing), k);
    assert_eq!(bc("row_32x33", "shared_load_wavefronts_per_instruction"), 1.0);
    assert_eq!(bc("row_32x33", "shared_load_bank_conflicts"), 0.0);
    assert_eq!(bc("row_32x32", "shared_load_wavefronts_per_instruction"), 32.0);
    assert_eq!(bc("row_32x32", "shared_load_bank_conflicts"), 31.0 * bc("row_32x32", "shared_load_instructions"));
    assert_eq!(bc("column_32x32", "shared_load_wavefronts_per_instruction"), 1.0);
    assert_eq!(bc("broadcast", "shared_load_wavefronts_per_instruction"), 1.0);
    assert_eq!(bc("transpose_32x32", "shared_load_wavefronts_per_instruction"), 32.0);
    assert_eq!(bc("transpose_32x33", "shared_load_wavefronts_per_instruction"), 1.0);
    assert_eq!(bc("transpose_32x33", "shared_store_wavefronts_per_instruction"), 1.0);
    assert_eq!(bc("transpose_32x32", "global_load_sectors_per_request"), 4.0);
    assert_eq!(bc("transpose_32x32", "global_store_sectors_per_request"), 4.0);
    assert_eq!(bc("transpose_naive", "global_store_sectors_per_request"), 32.0);
    let m = derived(&predict(&get(Pattern::BankConflicts, "row_32x32", sizing), &ModelSettings::default()));
    assert!(!m.contains_key("global_load_requests"), "no global loads in the shared benchmark");
    assert!(!m.contains_key("dram_amplification"), "bytes_read = 0");
}

/// Attention's reuse (naive, quadratic, flash, staged), counted from the kernels' own arithmetic (`Spec::Attention`): tiles
/// of 64 rows of d = 64 floats (256 B), so a tile is 64 × 256 B = 512 sectors.
#[test]
fn seed_001_reuse_naive_quadratic_flash_linear_staging_no_gain() {
    let sizing = Sizing::default();
    let m = |name: &str, key: &str| metric(&get(Pattern::Reuse, name, sizing), key);
    for s in [4096u64, 8192, 16384] {
        let (sf, row) = (s as f64, 256.0 * s as f64);
        let matrix = 4.0 * sf * sf;
        let naive = |step: &str, key: &str| m(&format!("naive_s{s}_{step}"), key);
        // The scores are written, read and written by the softmax, read by P.V.
        assert_eq!(naive("scores", "dram_bytes_read"), 2.0 * row, "Q and K once");
        assert_eq!(naive("scores", "dram_bytes_write"), matrix);
        assert_eq!(naive("softmax", "dram_bytes_read"), matrix);
        assert_eq!(naive("softmax", "dram_bytes_write"), matrix);
        assert_eq!(naive("pv", "dram_bytes_read"), matrix + row);
        assert_eq!(naive("pv", "dram_bytes_write"), row);
        // Flash: Q, K, V read once from DRAM, O written once.
        let flash = format!("flash_s{s}");
        assert_eq!(m(&flash, "dram_bytes_read"), 3.0 * row);
        assert_eq!(m(&flash, "dram_bytes_write"), row);
        assert_eq!(m(&flash, "dram_bytes"), 4.0 * row, "the derived sum");
        // ...but each of the S/64 query tiles reads its Q tile and every K and V tile from L2.
        let tiles = sf / 64.0;
        assert_eq!(m(&flash, "l2_read_sectors"), tiles * (512.0 + tiles * 2.0 * 512.0));
        // Every shared access is one wavefront: conflict-free (padded rows) or a broadcast.
        for v in [flash.as_str(), &format!("naive_s{s}_scores"), &format!("naive_s{s}_pv")] {
            assert_eq!(m(v, "shared_load_wavefronts_per_instruction"), 1.0, "{v}");
            assert_eq!(m(v, "global_load_sectors_per_request"), 4.0, "{v}");
        }
    }
    let total =
        |s: u64| ["scores", "softmax", "pv"].iter().map(|st| m(&format!("naive_s{s}_{st}"), "dram_bytes")).sum::<f64>();
    for (a, b) in [(4096u64, 8192u64), (8192, 16384)] {
        // 16 S^2 for the matrix, 1,024 S for Q, K (scores), V and O (P.V): x4 but for the last.
        assert_eq!(total(b), (16 * b * b + 1024 * b) as f64);
        let naive = total(b) / total(a);
        assert!(naive > 3.96 && naive < 4.0, "naive x{naive} per doubling");
        let flash = m(&format!("flash_s{b}"), "dram_bytes") / m(&format!("flash_s{a}"), "dram_bytes");
        assert_eq!(flash, 2.0);
    }
    // Staging once: the same DRAM bytes, one more shared store and load per load instruction.
    let direct = get(Pattern::Reuse, "direct", sizing);
    let staged = get(Pattern::Reuse, "staged_once", sizing);
    for key in ["dram_bytes_read", "dram_bytes_write", "global_load_sectors", "l2_read_sectors"] {
        assert_eq!(metric(&direct, key), metric(&staged, key), "{key}");
    }
    let loads = metric(&staged, "global_load_instructions");
    assert_eq!(metric(&staged, "shared_load_wavefronts"), loads);
    assert_eq!(metric(&staged, "shared_store_wavefronts"), loads);
    assert!(!predict(&direct, &ModelSettings::default()).metrics.contains_key("shared_load_wavefronts"));
}

#[test]
fn rtx3070_row_and_column_sums_fixture() {
    // fixtures/ncu/text_ncu2022_rtx3070_metrics_l1tex_coalescing_rowcol.txt, 16384 x 16384.
    let row = get(Pattern::Column, "row_sums", Sizing::default());
    let col = get(Pattern::Column, "column_sums", Sizing::default());
    assert_eq!(metric(&row, "global_load_requests"), 8_388_608.0);
    let sectors = metric(&row, "global_load_sectors");
    assert_eq!(sectors, 268_435_456.0);
    assert!((sectors - 268_427_291.0).abs() / 268_427_291.0 < 0.001);
    assert_eq!(metric(&col, "global_load_requests"), 8_388_608.0);
    assert_eq!(metric(&col, "global_load_sectors"), 33_554_432.0);
}

#[test]
fn dram_granularity_and_amplification() {
    let v = get(Pattern::Stride, "stride_32", SMALL);
    let amp = |g| derived(&predict(&v, &ModelSettings { l2_fetch_bytes: g }))["dram_amplification"];
    assert_eq!((amp(32), amp(64), amp(128)), (8.0, 16.0, 32.0), "docs/metric-facts.md §6");
    let s2 = get(Pattern::Stride, "stride_2", SMALL);
    assert_eq!(derived(&predict(&s2, &ModelSettings::default()))["dram_amplification"], 2.0);
    let off = get(Pattern::Offset, "offset_1", SMALL);
    let m = derived(&predict(&off, &ModelSettings::default()));
    assert!((m["dram_amplification"] - 1.0).abs() < 1e-3, "neighbour warps reuse the 5th sector");
    assert!((m["l2_amplification"] - 129.0 / 128.0).abs() < 1e-9, "one extra sector per CTA");
    let naive = predict(&get(Pattern::BankConflicts, "transpose_naive", SMALL), &ModelSettings::default());
    assert!(naive.notes.iter().any(|n| n.contains("ECC")), "{:?}", naive.notes);
}

#[test]
fn interview_question_4_both_kv_layouts() {
    let binds = |extra: &[(&str, &str)]| {
        let mut v: Vec<(String, String)> = vec![
            ("block_size".into(), "16".into()),
            ("n_kv_heads".into(), "8".into()),
            ("head_dim".into(), "128".into()),
        ];
        v.extend(extra.iter().map(|(a, b)| (a.to_string(), b.to_string())));
        v
    };
    let vars = binds(&[("block", "0..4"), ("offset", "0..16"), ("h", "0..8"), ("t", "tid"), ("warp", "0..4")]);
    let l1 = "((block * block_size + offset) * n_kv_heads + h) * head_dim + t";
    let l2 = "((block * n_kv_heads + h) * head_dim + t) * block_size + offset";
    let spr =
        |e: &str, bytes| derived(&analyze_layout(e, &vars, bytes, false).unwrap())["global_load_sectors_per_request"];
    assert_eq!(spr(l1, 4), 4.0);
    assert_eq!(spr(l1, 2), 2.0);
    assert_eq!(spr(l2, 4), 32.0);
    assert_eq!(spr(l2, 2), 32.0);
}

/// The gathers' fast paths (`gather.rs`) against the CTA-by-CTA replay and, where the kernel is
/// the catalogue's, the thread-by-thread reference: tiny tables so that lanes of one
/// instruction and of one CTA share sectors and rows, and launches with partial CTAs.
#[test]
fn gather_fast_paths_match_the_replay_with_collisions() {
    use super::gather::{gather_outcome, Embedding};
    use super::replay::replay;
    use super::streaming::Streaming;
    use crate::patterns::LaunchShape;

    let base = get(Pattern::Gather, "random_fp32", SMALL);
    // (lookups, table, ilp, block): collisions within warps and CTAs, partial last CTA,
    // fewer lookups than one CTA, and a table the size of one sector.
    for (lookups, table, ilp, block) in [
        (5000u64, 3000u64, 4u32, 256u32),
        (4096, 7, 1, 64),
        (20_001, 1 << 12, 2, 128),
        (300, 100_000, 4, 256),
        (2048, 8, 4, 256),
    ] {
        let mut v = base.clone();
        v.spec = Spec::Gather { lookups, table, seed: 0x5eed, ilp };
        v.launch = LaunchShape::linear(lookups, block, ilp);
        let k = Streaming::from_variant(&v);
        let slow = reference(&v, 32);
        for g in [32u64, 64, 128] {
            let (fast, blocks) = gather_outcome(&k, g);
            assert_eq!(fast, replay(&k), "gather {lookups} into {table}, ilp {ilp}, block {block}");
            assert_eq!(blocks, k.hashed_read_blocks(g), "gather {lookups} into {table}, g {g}");
            if g == 32 {
                let mut t = fast;
                t.partial_store_sectors = 0;
                assert_eq!(t, slow.totals, "gather {lookups} into {table} vs reference");
                assert_eq!(blocks, slow.read_blocks, "gather {lookups} into {table} vs reference");
            }
        }
    }

    let base = get(Pattern::Gather, "embedding_random", SMALL);
    // (lookups, rows, dim, random): rows shared within a CTA, a partial last CTA, rows that
    // are not whole sectors (dim 36: the replay path) or not whole warps (dim 40).
    for (lookups, rows, dim, random) in [
        (800u64, 5u64, 64u64, true),
        (803, 50, 64, true),
        (1000, 1, 32, true),
        (64, 1000, 96, true),
        (500, 30, 40, true),
        (500, 30, 36, true),
        (88, 88, 64, false),
    ] {
        let mut v = base.clone();
        v.spec = Spec::EmbeddingRows { lookups, rows, dim, seed: 0x5eed, random };
        v.launch = LaunchShape::linear(lookups * 32, 256, 1);
        let e = Embedding::from_variant(&v);
        let fast = e.totals();
        assert_eq!(fast, replay(&e), "embedding {lookups} of {rows} rows, dim {dim}");
        if dim % 32 == 0 {
            // The reference copies dim / 32 whole warps of a row: the same kernel when 32 | dim.
            let slow = reference(&v, 32);
            let mut t = fast;
            t.partial_store_sectors = 0;
            assert_eq!(t, slow.totals, "embedding {lookups} of {rows} rows, dim {dim} vs reference");
            assert_eq!(e.read_blocks(32), slow.read_blocks, "embedding {lookups} of {rows} rows, dim {dim}");
        }
    }
}

/// The gathers' fast paths against the CTA-by-CTA replay at the default size (1 GiB); about two
/// seconds with the project's debug profile (opt-level 1).
#[test]
fn gather_fast_paths_at_default_size() {
    use super::gather::{gather_outcome, Embedding};
    use super::replay::replay;
    use super::streaming::Streaming;

    for v in variants(Pattern::Gather, Sizing::default()) {
        match v.spec {
            Spec::Gather { .. } => {
                let k = Streaming::from_variant(&v);
                let (fast, blocks) = gather_outcome(&k, 32);
                assert_eq!(fast, replay(&k), "{}", v.id());
                assert_eq!(blocks, k.hashed_read_blocks(32), "{}", v.id());
            }
            _ => {
                let e = Embedding::from_variant(&v);
                assert_eq!(e.totals(), replay(&e), "{}", v.id());
            }
        }
    }
}

/// A prediction's metrics with every derived metric added by the frame module, as every output
/// shows them (the model's tests check their numbers on these).
pub(crate) fn derived(p: &Prediction) -> Metrics {
    let derivation = crate::frame::Derivation::new(&crate::metrics::Catalogue::builtin()).expect("built-in formulas");
    let mut rows = [Row { metrics: p.metrics.clone(), ..Row::new("k", Source::Predicted) }];
    derivation.apply(&mut rows).expect("derivation");
    let [row] = rows;
    row.metrics
}

/// The closed forms (`closed.rs`) against the replay of every CTA, for one variant: `None`
/// when the family has no closed form for this shape (then the replay is what `predict` uses).
fn closed_form(v: &Variant) -> Option<(Totals, Totals)> {
    use super::replay::replay_every_cta;
    match &v.spec {
        Spec::Strided { .. } | Spec::Broadcast { .. } | Spec::Vector { .. } => {
            let k = super::streaming::Streaming::from_variant(v);
            Some((k.closed_totals()?, replay_every_cta(&k)))
        }
        Spec::Kv { .. } => {
            let k = super::kv::Kv::from_variant(v);
            Some((k.closed_totals()?, replay_every_cta(&k)))
        }
        Spec::Sums { .. } => {
            let k = super::sums::Sums::from_variant(v);
            Some((k.closed_totals()?, replay_every_cta(&k)))
        }
        Spec::Attention { .. } => {
            let k = super::attention::Attention::from_variant(v);
            Some((k.closed_totals(), replay_every_cta(&k)))
        }
        Spec::Staging { .. } => {
            let k = super::attention::Staging::from_variant(v);
            Some((k.closed_totals()?, replay_every_cta(&k)))
        }
        _ => None,
    }
}

/// Whether `spec` is an attention spec already in `seen` (and adds it).
fn attention_seen(seen: &mut Vec<Spec>, spec: &Spec) -> bool {
    if !matches!(spec, Spec::Attention { .. }) {
        return false;
    }
    let known = seen.contains(spec);
    if !known {
        seen.push(spec.clone());
    }
    known
}

/// Every streaming, strided, vector, kv-layout, sums, attention and staging variant of the
/// catalogue has a closed
/// form, and it equals the replay of every CTA, at whole and ragged sizes.
#[test]
fn closed_forms_equal_the_replay_on_every_variant() {
    let mut seen = Vec::new();
    for bytes in [1u64 << 16, 100_000, 1 << 20, 3_000_017] {
        for p in Pattern::ALL {
            for v in variants(p, Sizing { bytes }) {
                // Attention's replay is millions of lane accesses per CTA beyond 256 tokens
                // (4 key tiles: enough for the tile loop's extrapolation from 1 and 2), and
                // its variants depend on the size only through the lengths: each once.
                if matches!(v.spec, Spec::Attention { seq, .. } if seq > 256) || attention_seen(&mut seen, &v.spec) {
                    continue;
                }
                let expected = matches!(v.spec, Spec::Strided { .. } | Spec::Broadcast { .. } | Spec::Vector { .. })
                    || matches!(v.spec, Spec::Kv { .. } | Spec::Sums { .. })
                    || matches!(v.spec, Spec::Attention { .. } | Spec::Staging { .. });
                match closed_form(&v) {
                    Some((closed, replayed)) => assert_eq!(closed, replayed, "{} at {bytes} B", v.id()),
                    None => assert!(!expected, "{} at {bytes} B has no closed form", v.id()),
                }
            }
        }
    }
}

/// At the default size (1 GiB) the closed forms equal the replay `predict` used before them
/// (CTA 0 times the uniform prefix, the rest traced).
#[test]
fn closed_forms_equal_the_replay_at_default_size() {
    use super::replay::replay;
    for p in
        [Pattern::Coalesced, Pattern::Offset, Pattern::Stride, Pattern::Broadcast, Pattern::Vector, Pattern::KvLayout]
    {
        for v in variants(p, Sizing::default()) {
            let o = outcome(&v, 32);
            let replayed = match &v.spec {
                Spec::Kv { .. } => replay(&super::kv::Kv::from_variant(&v)),
                _ => replay(&super::streaming::Streaming::from_variant(&v)),
            };
            assert_eq!(o.totals, replayed, "{}", v.id());
        }
    }
    // reuse: the staging copy, and attention at its shortest default length (64 key tiles: the
    // longer ones are the same arithmetic, replayed in seconds each).
    for v in variants(Pattern::Reuse, Sizing::default()) {
        let replayed = match &v.spec {
            Spec::Attention { seq, .. } if *seq > 4096 => continue,
            Spec::Attention { .. } => replay(&super::attention::Attention::from_variant(&v)),
            _ => replay(&super::attention::Staging::from_variant(&v)),
        };
        assert_eq!(outcome(&v, 32).totals, replayed, "{}", v.id());
    }
}

mod closed_props {
    //! Random shapes: sizes, strides, offsets, widths, blocks, heads, tokens, matrix sides.
    use super::*;
    use crate::patterns::{KvLayout, VecWidth};
    use proptest::prelude::*;

    fn check(v: &Variant) -> Result<(), TestCaseError> {
        let (closed, replayed) =
            closed_form(v).ok_or_else(|| TestCaseError::fail(format!("no closed form: {:?}", v.spec)))?;
        prop_assert_eq!(closed, replayed, "{:?} {:?}", v.spec, v.launch);
        // And the thread-by-thread reference, written from the spec text (it does not count
        // partial stores).
        let slow = reference(v, 32);
        let mut t = closed;
        t.partial_store_sectors = 0;
        prop_assert_eq!(t, slow.totals, "reference: {:?} {:?}", v.spec, v.launch);
        Ok(())
    }

    fn with(p: Pattern, spec: Spec, launch: LaunchShape) -> Variant {
        let mut v = variants(p, Sizing { bytes: 1 << 16 }).swap_remove(0);
        v.spec = spec;
        v.launch = launch;
        v
    }

    const BLOCKS: [u32; 4] = [32, 64, 128, 256];
    const WIDTHS: [VecWidth; 4] = [VecWidth::F32, VecWidth::F32x2, VecWidth::F32x4, VecWidth::F16x8];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        #[test]
        fn strided(m in 1u64..40_000, stride in 1u64..300, offset in 0u64..70, ilp in 1u32..9, b in 0usize..4) {
            let launch = LaunchShape::linear(m, BLOCKS[b], ilp);
            check(&with(Pattern::Stride, Spec::Strided { m, stride, offset, ilp }, launch))?;
        }

        #[test]
        fn broadcast(m in 1u64..60_000, per_warp: bool, ilp in 1u32..9, b in 0usize..4) {
            let launch = LaunchShape::linear(m, BLOCKS[b], ilp);
            check(&with(Pattern::Broadcast, Spec::Broadcast { m, per_warp, ilp }, launch))?;
        }

        #[test]
        fn vector(m in 1u64..30_000, w in 0usize..4, base_offset in 0u64..64, ilp in 1u32..5, b in 0usize..4) {
            let width = WIDTHS[w];
            // The launch covers the items of the path the kernel takes (vector or scalar).
            let items = if base_offset % width.bytes() == 0 { m } else { m * width.bytes() / 4 };
            let per = if base_offset % width.bytes() == 0 { ilp } else { ilp * width.bytes() as u32 / 4 };
            let launch = LaunchShape::linear(items, BLOCKS[b], per);
            check(&with(Pattern::Vector, Spec::Vector { width, m, base_offset, ilp }, launch))?;
        }

        #[test]
        fn kv(layout in 0usize..3, fp16: bool, blocks in 1u64..8, s in 1u64..20, h in 1u64..6, d in 1u64..5) {
            let layout = [KvLayout::Nhd, KvLayout::Hnd, KvLayout::Hdn][layout];
            let dtype = if fp16 { crate::patterns::Dtype::Fp16 } else { crate::patterns::Dtype::Fp32 };
            let d = 32 * d;
            let launch = LaunchShape { grid: [(blocks * h) as u32, 1, 1], block: [d as u32, 1, 1] };
            let spec = Spec::Kv { layout, dtype, blocks, block_size: s, heads: h, head_dim: d };
            check(&with(Pattern::KvLayout, spec, launch))?;
        }

        #[test]
        fn kv_vllm(blocks in 1u64..12, h in 1u64..6, d in 1u64..5) {
            // vLLM's lane mapping covers 16 tokens per block (o = lane / 2): the catalogue's.
            let d = 32 * d;
            let launch = LaunchShape { grid: [(blocks * h).div_ceil(4) as u32, 1, 1], block: [128, 1, 1] };
            let spec = Spec::Kv { layout: KvLayout::Vllm, dtype: crate::patterns::Dtype::Fp16, blocks, block_size: 16, heads: h, head_dim: d };
            check(&with(Pattern::KvLayout, spec, launch))?;
        }

        #[test]
        fn sums(along_rows: bool, rows in 1u64..200, cols in 1u64..200, b in 0usize..4) {
            let outputs = if along_rows { rows } else { cols };
            let launch = LaunchShape::linear(outputs, BLOCKS[b], 1);
            check(&with(Pattern::Column, Spec::Sums { along_rows, rows, cols }, launch))?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// vLLM with fewer tokens than its lanes cover, against the replay only (the reference
        /// reads all 16 token slots whatever `block_size`).
        #[test]
        fn kv_vllm_short_blocks(blocks in 1u64..40, s in 1u64..17, h in 1u64..10, d in 1u64..5) {
            let d = 32 * d;
            let launch = LaunchShape { grid: [(blocks * h).div_ceil(4) as u32, 1, 1], block: [128, 1, 1] };
            let spec = Spec::Kv { layout: KvLayout::Vllm, dtype: crate::patterns::Dtype::Fp16, blocks, block_size: s, heads: h, head_dim: d };
            let v = with(Pattern::KvLayout, spec, launch);
            let (closed, replayed) = closed_form(&v).expect("closed form");
            prop_assert_eq!(closed, replayed);
        }
    }
}
