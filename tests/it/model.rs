//! The address model through the command line: `run --all --backend model` reproduces every
//! number the coalescing lessons state, and `coalprof model` answers their KV-layout question.

use std::collections::HashMap;

use serde_json::Value;

use crate::util::{coalprof, json, OkStdout};

/// `pattern/variant` → metrics of a model run of every pattern at default sizes.
fn suite() -> HashMap<String, Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .args(["run", "--all", "--backend", "model", "--format", "json", "--out"])
        .arg(dir.path())
        .ok_stdout();
    let v = json(&out);
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["source"], "predicted");
            (format!("{}/{}", r["pattern"].as_str().unwrap(), r["variant"].as_str().unwrap()), r["metrics"].clone())
        })
        .collect()
}

fn m(s: &HashMap<String, Value>, row: &str, key: &str) -> f64 {
    s.get(row).unwrap_or_else(|| panic!("no row {row}"))[key].as_f64().unwrap_or_else(|| panic!("{row}: no {key}"))
}

#[test]
fn run_all_backend_model_reproduces_every_seed_number() {
    let s = suite();
    let spr = "global_load_sectors_per_request";
    // Seed 000 §5, the ranking: perfect 4, offset 4–5, stride 2 → 8, stride 32 → 32, broadcast 1.
    assert_eq!(m(&s, "coalesced/fp32", spr), 4.0);
    assert_eq!(m(&s, "offset/offset_0", spr), 4.0);
    assert_eq!(m(&s, "offset/offset_1", spr), 5.0);
    assert_eq!(m(&s, "offset/offset_8", spr), 4.0);
    assert_eq!(m(&s, "stride/stride_2", spr), 8.0);
    assert_eq!(m(&s, "stride/stride_32", spr), 32.0);
    assert_eq!(m(&s, "broadcast/one_word", spr), 1.0);
    // Vectorised: float4 is 16 sectors in one request; scalar takes four requests of 4.
    assert_eq!(m(&s, "vector/float4", spr), 16.0);
    assert_eq!(m(&s, "vector/float", spr), 4.0);
    let reqs = |row: &str| m(&s, row, "global_load_requests");
    assert_eq!(reqs("vector/float"), 4.0 * reqs("vector/float4"));
    // Seed 001's table: stride 1 → 4 sectors, stride 8 and 32 → 32.
    assert_eq!(m(&s, "stride/stride_1", spr), 4.0);
    assert_eq!(m(&s, "stride/stride_8", spr), 32.0);
    // Exercise C: KV layouts 16x apart in fp16 (head_dim 128, block_size 16).
    assert_eq!(m(&s, "kv-layout/hdn_fp16", spr) / m(&s, "kv-layout/nhd_fp16", spr), 16.0);
    // Exercise D: [32][33] padding is conflict-free, t[tid][0] on [32][32] is 32-way.
    let wf = "shared_load_wavefronts_per_instruction";
    assert_eq!(m(&s, "bank-conflicts/row_32x32", wf), 32.0);
    assert_eq!(m(&s, "bank-conflicts/row_32x33", wf), 1.0);
    assert_eq!(m(&s, "bank-conflicts/row_32x33", "shared_load_bank_conflicts"), 0.0);
    assert_eq!(m(&s, "bank-conflicts/transpose_32x32", wf), 32.0);
    assert_eq!(m(&s, "bank-conflicts/transpose_32x33", wf), 1.0);
    // The RTX 3070 measurement (fixture 2022/text_ncu2022_rtx3070_metrics_l1tex_coalescing_rowcol):
    // row sums 268,427,291 sectors / 8,388,608 requests; column sums 33,554,432 / 8,388,608.
    assert_eq!(m(&s, "column/row_sums", "global_load_requests"), 8_388_608.0);
    assert_eq!(m(&s, "column/column_sums", "global_load_requests"), 8_388_608.0);
    assert_eq!(m(&s, "column/column_sums", "global_load_sectors"), 33_554_432.0);
    let rows = m(&s, "column/row_sums", "global_load_sectors");
    assert!((rows - 268_427_291.0).abs() / 268_427_291.0 < 0.001, "{rows}");
}

#[test]
fn model_answers_interview_question_4_for_both_layouts() {
    let bindings =
        ["block_size=16", "n_kv_heads=8", "head_dim=128", "t=tid", "warp=0..4", "block=0..4", "offset=0..16", "h=0..8"];
    let spr = |expr: &str, bytes: &str| {
        let out =
            coalprof().arg("model").arg(expr).args(bindings).args(["--bytes", bytes, "--format", "json"]).ok_stdout();
        let v = json(&out);
        (
            v["rows"][0]["metrics"]["global_load_sectors_per_request"].as_f64().unwrap(),
            v["rows"][0]["metrics"]["global_load_ideal_sectors_per_request"].as_f64().unwrap(),
        )
    };
    let nhd = "((block * block_size + offset) * n_kv_heads + h) * head_dim + t";
    let hdn = "((block * n_kv_heads + h) * head_dim + t) * block_size + offset";
    assert_eq!(spr(nhd, "4"), (4.0, 4.0));
    assert_eq!(spr(hdn, "4"), (32.0, 4.0));
    assert_eq!(spr(nhd, "2"), (2.0, 2.0));
    assert_eq!(spr(hdn, "2"), (32.0, 2.0));
}

#[test]
fn model_shared_padding_and_a_bad_expression_pointing_at_its_column() {
    let wf = |expr: &str| {
        let out = coalprof().args(["model", "--shared", expr, "r=0..32", "--format", "json"]).ok_stdout();
        json(&out)["rows"][0]["metrics"]["shared_load_wavefronts_per_instruction"].as_f64().unwrap()
    };
    assert_eq!(wf("lane * 32 + r"), 32.0);
    assert_eq!(wf("lane * 33 + r"), 1.0);
    let out = coalprof().args(["model", "(lane * 4 + 1"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("at column 14"), "the end of the 13-character text: {e}");
    assert!(e.lines().any(|l| l.trim_end().ends_with('^')), "a caret under the column: {e}");
}

/// Every key of every model row is defined in `metrics.toml`, and the row carries the raw
/// counters ncu would count next to what the formulas derive from them.
#[test]
fn model_rows_carry_raw_counters_and_only_catalogue_keys() {
    let catalogue = coalprof::metrics::Catalogue::builtin();
    let s = suite();
    for (row, metrics) in &s {
        for key in metrics.as_object().unwrap().keys() {
            assert!(catalogue.defines(key), "{row}: `{key}` is not defined in metrics.toml");
        }
    }
    let stride = &s["stride/stride_8"];
    let (sectors, requests) =
        (stride["global_load_sectors"].as_f64().unwrap(), stride["global_load_requests"].as_f64().unwrap());
    assert_eq!(stride["global_load_sectors_per_request"].as_f64(), Some(sectors / requests));
    let out = coalprof().args(["model", "lane * 2", "--format", "json"]).ok_stdout();
    let row = &json(&out)["rows"][0]["metrics"];
    for key in row.as_object().unwrap().keys() {
        assert!(catalogue.defines(key), "coalprof model: `{key}` is not defined in metrics.toml");
    }
    assert_eq!(row["global_load_sectors"].as_f64(), Some(8.0));
    assert_eq!(row["dram_amplification"].as_f64(), Some(2.0));
}

/// The model's derived metrics come from the catalogue's formulas: change a formula in a
/// `--metrics` file and the prediction follows.
#[test]
fn model_metrics_follow_the_formulas_of_the_metrics_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("metrics.toml");
    let builtin = coalprof::metrics::BUILTIN;
    let doubled = builtin.replace(
        "formula = \"coalesce(global_load_sectors / global_load_requests, reported_global_load_sectors_per_request)\"",
        "formula = \"2 * global_load_sectors / global_load_requests\"",
    );
    assert_ne!(doubled, builtin, "the formula to replace is in metrics.toml");
    std::fs::write(&file, doubled).unwrap();
    let spr = |extra: &[&std::ffi::OsStr]| {
        let out = coalprof()
            .args(["run", "--pattern", "stride", "--backend", "model", "--format", "json", "--size", "1M", "--out"])
            .arg(dir.path())
            .args(extra)
            .ok_stdout();
        let v = json(&out);
        let row = v["rows"].as_array().unwrap().iter().find(|r| r["variant"] == "stride_2").unwrap().clone();
        row["metrics"]["global_load_sectors_per_request"].as_f64().unwrap()
    };
    assert_eq!(spr(&[]), 8.0);
    assert_eq!(spr(&["--metrics".as_ref(), file.as_os_str()]), 16.0);
}

/// The tables show the catalogue's `[[column]]`s: rename a header, drop a column, and the
/// terminal table and the run folder's markdown follow.
#[test]
fn tables_show_the_columns_of_the_metrics_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("metrics.toml");
    let builtin = coalprof::metrics::BUILTIN;
    let (rename, drop) = (
        "header = \"ld sectors/req\"",
        "[[column]]\nkey = \"l2_amplification\"\nheader = \"L2 amp\"\nformat = \"factor\"\nheadline = true\n",
    );
    assert!(builtin.contains(rename) && builtin.contains(drop), "the columns to edit are in metrics.toml");
    let edited = builtin.replacen(rename, "header = \"LDG sec/req\"", 1).replacen(drop, "", 1);
    std::fs::write(&file, edited).unwrap();
    let table = |extra: &[&std::ffi::OsStr]| {
        let out = coalprof()
            .args(["run", "--pattern", "stride", "--backend", "model", "--size", "1M", "--color", "never", "--out"])
            .arg(dir.path())
            .args(["--run-id", "cols"])
            .args(extra)
            .ok_stdout();
        let md = std::fs::read_to_string(dir.path().join("cols/results.md")).unwrap();
        (String::from_utf8(out).unwrap(), md)
    };
    let (t, md) = table(&[]);
    assert!(t.contains("ld sectors/req") && t.contains("L2 amp") && md.contains("| L2 amp |"), "{t}");
    let (t, md) = table(&["--metrics".as_ref(), file.as_os_str()]);
    assert!(t.contains("LDG sec/req") && !t.contains("ld sectors/req"), "{t}");
    assert!(!t.contains("L2 amp") && !md.contains("L2 amp") && md.contains("LDG sec/req"), "{md}");
}

/// A name shown is the name given: the table labels a model row with its expression, whole
/// (only C++ signatures lose a return type or parameters), as the JSON does.
#[test]
fn model_tables_show_the_expression_as_given() {
    for expr in ["lane * 33", "(block * 4 + warp) * 32 + lane * (8 + 1)"] {
        let args = ["model", expr, "warp=0..2", "block=0..2"];
        let v = json(&coalprof().args(args).args(["--format", "json"]).ok_stdout());
        assert_eq!(v["rows"][0]["kernel"], expr);
        let table = String::from_utf8(coalprof().args(args).ok_stdout()).unwrap();
        assert!(table.contains(&format!("│ {expr} ")), "the row is labelled `{expr}`:\n{table}");
        let md = String::from_utf8(coalprof().args(args).args(["--format", "markdown"]).ok_stdout()).unwrap();
        assert!(md.contains(&format!("| `{expr}` |")), "{md}");
    }
}

/// Seed 001's last lesson through the command line: `run --pattern reuse --backend model`.
/// Expected values are the kernels' arithmetic (`Spec::Attention`: d = 64 fp32, tiles of 64
/// rows), not the model's output: the S×S scores are 4·S² bytes, written by the scores kernel,
/// read and written by the softmax, read by P·V; Q, K, V and O are 256·S bytes each.
#[test]
fn reuse_naive_is_quadratic_in_dram_flash_linear_and_staging_once_gains_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .args(["run", "--pattern", "reuse", "--backend", "model", "--format", "json", "--out"])
        .arg(dir.path())
        .ok_stdout();
    let v = json(&out);
    let rows = v["rows"].as_array().unwrap();
    let get = |name: &str| rows.iter().find(|r| r["variant"] == name).unwrap_or_else(|| panic!("no {name}"));
    let metric = |name: &str, key: &str| get(name)["metrics"][key].as_f64();
    let dram = |name: &str| metric(name, "dram_bytes_read").unwrap() + metric(name, "dram_bytes_write").unwrap();

    // The lengths, from the flash rows' names: at least three, each double the last.
    let mut lengths: Vec<u64> =
        (rows.iter()).filter_map(|r| r["variant"].as_str()?.strip_prefix("flash_s")?.parse().ok()).collect();
    lengths.sort_unstable();
    assert!(lengths.len() >= 3, "{lengths:?}");
    assert!(lengths.windows(2).all(|w| w[1] == 2 * w[0]), "{lengths:?}");

    let naive = |s: u64| ["scores", "softmax", "pv"].iter().map(|k| dram(&format!("naive_s{s}_{k}"))).sum::<f64>();
    let flash = |s: u64| dram(&format!("flash_s{s}"));
    for &s in &lengths {
        assert_eq!(get(&format!("flash_s{s}"))["params"]["seq_len"], s);
        assert_eq!(naive(s), (4 * 4 * s * s + 4 * 256 * s) as f64, "naive at {s}: 4 passes of S², Q K V O once");
        assert_eq!(flash(s), (4 * 256 * s) as f64, "flash at {s}: Q K V read, O written, once");
        // The derived `dram_bytes` (metrics.toml) is the same sum.
        assert_eq!(metric(&format!("flash_s{s}"), "dram_bytes"), Some(flash(s)));
    }
    for w in lengths.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (n, f) = (naive(b) / naive(a), flash(b) / flash(a));
        assert!(n >= 3.5, "naive DRAM x{n} from S = {a} to {b}");
        assert!(f <= 2.5, "flash DRAM x{f} from S = {a} to {b}");
        // Flash's L2 reads keep the S²/tile term: every 64-row query tile reads all of K and V.
        let l2 = |s: u64| metric(&format!("flash_s{s}"), "l2_read_sectors").unwrap();
        let tiles = |s: u64| (s / 64) as f64;
        assert_eq!(l2(b), tiles(b) * (512.0 + tiles(b) * 1024.0), "Q tile + S/64 tiles of K and V");
        assert!(l2(b) / l2(a) > 3.5, "flash L2 x{} from S = {a} to {b}", l2(b) / l2(a));
    }

    // Staging once: the same DRAM bytes, more shared-memory work (direct has none).
    assert_eq!(dram("staged_once"), dram("direct"));
    assert_eq!(metric("direct", "dram_bytes_read"), metric("staged_once", "dram_bytes_read"));
    let wavefronts = |name: &str| {
        metric(name, "shared_load_wavefronts").unwrap_or(0.0) + metric(name, "shared_store_wavefronts").unwrap_or(0.0)
    };
    assert!(wavefronts("staged_once") > wavefronts("direct"), "staging adds shared wavefronts");
    assert_eq!(wavefronts("direct"), 0.0);

    // The table shows the bytes (DRAM MB: flash at 16,384 moves 16.8 MB).
    let table = String::from_utf8(
        coalprof()
            .args(["run", "--pattern", "reuse", "--backend", "model", "--wide", "--out"])
            .arg(dir.path())
            .ok_stdout(),
    )
    .unwrap();
    assert!(table.contains("DRAM MB"), "{table}");
    let line = table.lines().find(|l| l.contains("flash_s16384")).unwrap();
    assert!(line.contains(&format!("{:.1}", (4 * 256 * 16384) as f64 / 1e6)), "{line}");
}
