//! The default gate sees every waste, for every input with per-line counters: a naive
//! transpose's store, a `[32][32]` shared tile's 32-way bank conflict, and nothing on a
//! `[32][33]` tile (`tests/fixtures/cuda/transpose_tiles.cu`), each warned per kernel and on its
//! line, with a GitHub annotation on that line; from a simulated run and from a report the fake
//! ncu writes around the program's real cubin. Also `check --format csv` parsed as CSV, and the
//! formats `check` does not write refused.
//!
//! The numbers, from the address arithmetic of a 64 x 64 float matrix in 32 x 32-thread blocks
//! (a warp is one `threadIdx.y` row, `threadIdx.x` = 0..31):
//! * every access is `64 * 64 / 32 = 128` warp-level instructions, 32 lanes of 4 bytes each, so a
//!   coalesced one moves `32 * 4 / 32 = 4` sectors per request, its ideal;
//! * the naive store `c[x * N + y]` puts lanes `N * 4 = 256` bytes apart: 32 sectors per request,
//!   8 times the ideal;
//! * the tiles' shared load `tile[threadIdx.x][threadIdx.y]` reads word `tx * W + ty`, bank
//!   `(tx * W + ty) % 32`: with `W = 32` one bank for all 32 lanes (32 wavefronts, ideal 1:
//!   32-way), with `W = 33` bank `(tx + ty) % 32`, 32 distinct banks (1 wavefront).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use coalprof::tools::nvdisasm::Nvdisasm;
use serde_json::json;

type Listing = std::collections::BTreeMap<String, Vec<coalprof::tools::nvdisasm::Instruction>>;

use crate::util::{coalprof, fake_report, fixture, real_nvcc, real_nvdisasm, root, skipped};

/// Warp-level instructions of each access: one per warp of the 64 x 64 matrix.
const WARPS: f64 = 64.0 * 64.0 / 32.0;
/// The ideal sectors per request of a warp of 4-byte lanes.
const IDEAL_SPR: f64 = 32.0 * 4.0 / 32.0;
/// The naive store's lanes are 256 bytes apart: a sector each.
const NAIVE_STORE_SPR: f64 = 32.0;
/// The `[32][32]` tile's column read: one bank, 32 words.
const TILE32_WAYS: f64 = 32.0;

fn program() -> PathBuf {
    fixture("cuda/transpose_tiles.cu")
}

/// The 1-based line of the program whose text contains `needle`, after line `after` (the
/// kernels repeat their lines).
fn line_of(needle: &str, after: usize) -> usize {
    let text = std::fs::read_to_string(program()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    after + lines[after..].iter().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("no {needle}")) + 1
}

/// The lines the gate must name: the naive store, and the `[32][32]` tile's shared load.
fn expected_lines() -> (usize, usize, usize) {
    let naive = line_of("void transpose_naive", 0);
    let tile32 = line_of("void transpose_tile32", 0);
    let tile33 = line_of("void transpose_tile33", 0);
    (line_of("c[x * N + y] = v;", naive), line_of("float v = tile[threadIdx.x][threadIdx.y];", tile32), tile33)
}

/// `check --github` (table) and `check --format csv` of `input`, run in `dir`: the
/// annotations' (file, line) and the CSV's records, after asserting the common shape.
fn check_outputs(dir: &Path, input: &Path) -> (Vec<(String, usize, String)>, Vec<csv::StringRecord>) {
    let out = coalprof().current_dir(dir).args(["--wide", "check", "--github"]).arg(input).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "warnings never fail the gate: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("gate passed with warnings"), "{stdout}");
    let annotations: Vec<(String, usize, String)> = (stdout.lines().filter(|l| l.starts_with("::warning ")))
        .map(|l| {
            let props = l.strip_prefix("::warning ").unwrap().split("::").next().unwrap();
            let get =
                |k: &str| props.split(',').find_map(|p| p.strip_prefix(k)).unwrap_or_else(|| panic!("no {k}: {l}"));
            (get("file=").to_string(), get("line=").parse().unwrap(), get("title=").to_string())
        })
        .collect();
    let out = coalprof().current_dir(dir).args(["--format", "csv", "check"]).arg(input).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut reader = csv::Reader::from_reader(out.stdout.as_slice());
    let header: Vec<String> = reader.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(&header[..5], ["arch", "row", "kernel", "metric", "verdict"], "{header:?}");
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert!(records.iter().all(|r| r.len() == header.len()), "every record has every column");
    (annotations, records)
}

/// The warnings of the CSV as (kernel, metric, value, file line or 0), and that no other check
/// warned or failed.
fn warnings(records: &[csv::StringRecord]) -> BTreeSet<(String, String, String, usize)> {
    let col = |r: &csv::StringRecord, i: usize| r.get(i).unwrap().to_string();
    for r in records {
        assert!(matches!(r.get(4), Some("pass" | "warn" | "skipped")), "{r:?}");
    }
    (records.iter().filter(|r| r.get(4) == Some("warn")))
        .map(|r| (col(r, 2), col(r, 3), col(r, 6), r.get(11).unwrap().parse().unwrap_or(0)))
        .collect()
}

/// What both inputs must warn on: per kernel and per line, the store and the conflict, each at
/// its line; nothing of `transpose_tile33`.
fn assert_the_wastes(annotations: &[(String, usize, String)], records: &[csv::StringRecord]) {
    let (store, conflict, _) = expected_lines();
    let kernel = |name: &str| format!("transpose_{name}");
    let warned = warnings(records);
    let v = |x: f64| x.to_string();
    let want: BTreeSet<(String, String, String, usize)> = [
        (kernel("naive"), "global_store_sectors_over_ideal", v(NAIVE_STORE_SPR / IDEAL_SPR), store),
        (kernel("naive"), "line_sectors_over_ideal", v(NAIVE_STORE_SPR / IDEAL_SPR), store),
        (kernel("tile32"), "shared_load_wavefronts_over_ideal", v(TILE32_WAYS), conflict),
        (kernel("tile32"), "line_shared_wavefronts_per_ideal", v(TILE32_WAYS), conflict),
    ]
    .into_iter()
    .map(|(k, m, v, l)| (k, m.to_string(), v, l))
    .collect();
    // Kernel names may carry their parameters: compare on the function's name.
    let warned: BTreeSet<_> =
        warned.into_iter().map(|(k, m, v, l)| (k.split('(').next().unwrap().to_string(), m, v, l)).collect();
    assert_eq!(warned, want, "{records:#?}");
    let passed = |k: &str, m: &str| {
        records
            .iter()
            .any(|r| r.get(2).is_some_and(|x| x.starts_with(k)) && r.get(3) == Some(m) && r.get(4) == Some("pass"))
    };
    for m in ["shared_load_wavefronts_over_ideal", "global_store_sectors_over_ideal", "global_load_sectors_over_ideal"]
    {
        assert!(passed("transpose_tile33", m), "the padded tile passes {m}: {records:#?}");
    }
    // One annotation per warning, on its line of the program.
    let mut placed: Vec<(bool, usize)> =
        annotations.iter().map(|(f, l, _)| (f.ends_with("transpose_tiles.cu"), *l)).collect();
    placed.sort();
    assert_eq!(placed, vec![(true, store), (true, store), (true, conflict), (true, conflict)], "{annotations:#?}");
}

#[test]
fn the_default_gate_warns_on_a_simulated_store_and_bank_conflict_on_their_lines() {
    let test = "the_default_gate_warns_on_a_simulated_store_and_bank_conflict_on_their_lines";
    let tools = root().join(".tools");
    if let Some(p) =
        [tools.join("gpgpu-sim/lib/libcudart.so"), tools.join("cuda11/bin/nvcc")].iter().find(|p| !p.exists())
    {
        skipped(test, &format!("{} is missing; run scripts/install-sim.sh (scripts/test.sh does)", p.display()));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(program(), dir.path().join("transpose_tiles.cu")).unwrap();
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["profile", "--backend", "sim", "--out", "runs", "transpose_tiles.cu"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = std::fs::read_dir(dir.path().join("runs")).unwrap().next().unwrap().unwrap().path();
    // `profile`'s worst lines name the store and, for the kernel whose one waste is the
    // conflict, the conflicting load (not a coalesced line beside it).
    let (store, conflict, _) = expected_lines();
    let table = String::from_utf8_lossy(&out.stdout).replace("\n  ", " ");
    for (kernel, line, numbers) in [
        ("transpose_naive", store, format!("{NAIVE_STORE_SPR:.1} sectors/request (ideal {IDEAL_SPR:.1})")),
        ("transpose_tile32", conflict, format!("{TILE32_WAYS:.1} shared wavefronts per ideal")),
    ] {
        let said = format!("worst line: {kernel}: transpose_tiles.cu:{line} — {numbers}");
        assert!(table.contains(&said), "{said}: {table}");
    }
    assert!(!table.contains("worst line: transpose_tile33"), "the padded tile wastes nothing: {table}");
    // The page marks the store's and the conflict's cells as it marks load waste.
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    for key in ["global_store_sectors_per_request", "shared_load_wavefronts_per_instruction"] {
        let bad = format!("<td class=\"n bad\" data-key=\"{key}\"");
        assert_eq!(page.matches(&bad).count(), 1, "{key}: one kernel's cell is marked bad");
    }
    let (annotations, records) = check_outputs(dir.path(), &run);
    assert_the_wastes(&annotations, &records);
    for (file, _, _) in &annotations {
        assert_eq!(file, "transpose_tiles.cu", "relative to the source root, the current folder");
    }
}

/// The program's sm_90 cubin (real nvcc, `-lineinfo`) and, per kernel, the offsets of its
/// memory instructions by nvdisasm: `LDG`, `STG`, `LDS`, `STS`.
fn cubin(test: &str, dir: &Path) -> Option<(PathBuf, Listing)> {
    let (nvcc, nvdisasm) = (real_nvcc(test)?, real_nvdisasm(test)?);
    let cubin = dir.join("transpose_tiles.cubin");
    let o = Command::new(&nvcc)
        .args(["-cubin", "-arch=sm_90", "-lineinfo", "-o"])
        .arg(&cubin)
        .arg(program())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listing = Nvdisasm { path: nvdisasm }.disassemble(&cubin).unwrap();
    Some((cubin, listing))
}

/// One launch of `kernel` for the fake ncu: kernel counters and per-instruction counters from
/// the arithmetic above (`store_spr` sectors per store request, `load_ways` wavefronts per
/// shared load).
fn launch(cubin: &Path, listing: &Listing, kernel: &str) -> serde_json::Value {
    const START: u64 = crate::lines_2025::START;
    let ins = &listing[kernel];
    let at = |op: &str| -> Option<u64> { ins.iter().find(|i| i.text.starts_with(op)).map(|i| START + i.offset) };
    let (store_spr, ways) = match kernel {
        "transpose_naive" => (NAIVE_STORE_SPR, None),
        "transpose_tile32" => (IDEAL_SPR, Some(TILE32_WAYS)),
        _ => (IDEAL_SPR, Some(1.0)),
    };
    let (ldg, stg) = (at("LDG").expect("a global load"), at("STG").expect("a global store"));
    let lanes = WARPS * 32.0;
    let mut m = json!({
        "memory_type": [[ldg, 4], [stg, 4]],
        "memory_access_type": [[ldg, 2], [stg, 4]],
        "memory_access_size_type": [[ldg, 32], [stg, 32]],
        "inst_executed": [[START, WARPS], [ldg, WARPS], [stg, WARPS]],
        "thread_inst_executed_true": [[ldg, lanes], [stg, lanes]],
        "memory_l1_tag_requests_global": [[ldg, WARPS], [stg, WARPS * store_spr / 4.0]],
        "memory_l2_theoretical_sectors_global": [[ldg, WARPS * IDEAL_SPR], [stg, WARPS * store_spr]],
        "memory_l2_theoretical_sectors_global_ideal": [[ldg, WARPS * IDEAL_SPR], [stg, WARPS * IDEAL_SPR]]
    });
    let mut kernel_metrics = json!({
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": WARPS,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": WARPS * IDEAL_SPR,
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": WARPS,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": WARPS * store_spr,
        "smsp__sass_data_bytes_mem_global_op_ld.sum": lanes * 4.0,
        "smsp__sass_inst_executed_op_global_ld.sum": WARPS
    });
    if let Some(ways) = ways {
        let (lds, sts) = (at("LDS").expect("a shared load"), at("STS").expect("a shared store"));
        let push = |m: &mut serde_json::Value, k: &str, v: serde_json::Value| m[k].as_array_mut().unwrap().push(v);
        for (pc, access) in [(lds, 2), (sts, 4)] {
            push(&mut m, "memory_type", json!([pc, 16]));
            push(&mut m, "memory_access_type", json!([pc, access]));
            push(&mut m, "memory_access_size_type", json!([pc, 32]));
            push(&mut m, "inst_executed", json!([pc, WARPS]));
            push(&mut m, "thread_inst_executed_true", json!([pc, lanes]));
        }
        // A row of the tile (the store) is conflict-free; the column (the load) `ways`-way.
        m["memory_l1_wavefronts_shared"] = json!([[lds, WARPS * ways], [sts, WARPS]]);
        m["memory_l1_wavefronts_shared_ideal"] = json!([[lds, WARPS], [sts, WARPS]]);
        kernel_metrics["smsp__sass_inst_executed_op_shared_ld.sum"] = json!(WARPS);
        kernel_metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] = json!(WARPS * ways);
        kernel_metrics["smsp__sass_inst_executed_op_shared_st.sum"] = json!(WARPS);
        kernel_metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] = json!(WARPS);
    }
    json!({
        "kernel": kernel,
        "mangled": kernel,
        "demangled": format!("{kernel}(const float *, float *)"),
        "grid": [2, 2, 1],
        "block": [32, 32, 1],
        "metrics": kernel_metrics,
        "start_pc": START,
        "cubin": cubin,
        "instanced": m
    })
}

#[test]
fn the_default_gate_warns_on_a_fake_reports_store_and_bank_conflict_on_their_lines_and_its_run_folders() {
    let test = "the_default_gate_warns_on_a_fake_reports_store_and_bank_conflict_on_their_lines_and_its_run_folders";
    let dir = tempfile::tempdir().unwrap();
    let Some((cubin, listing)) = cubin(test, dir.path()) else { return };
    let launches: Vec<_> = ["transpose_naive", "transpose_tile32", "transpose_tile33"]
        .iter()
        .map(|k| launch(&cubin, &listing, k))
        .collect();
    let spec = json!({ "program": "transpose_tiles", "layout": "2025", "launches": launches });
    let report = fake_report(&spec.to_string(), &dir.path().join("tiles.ncu-rep"));
    let (annotations, records) = check_outputs(&root(), &report);
    assert_the_wastes(&annotations, &records);
    // A measured run folder as `profile -- PROGRAM` leaves it: the results, and the report they
    // were read from, whose per-line counters the gate reads.
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::copy(&report, run.join("report.ncu-rep")).unwrap();
    let results = coalprof().args(["--format", "json", "analyze"]).arg(&report).output().unwrap();
    assert!(results.status.success(), "{}", String::from_utf8_lossy(&results.stderr));
    std::fs::write(run.join("results.json"), &results.stdout).unwrap();
    let (annotations, records) = check_outputs(&root(), &run);
    assert_the_wastes(&annotations, &records);
}

#[test]
fn check_writes_csv_markdown_and_refuses_the_formats_it_has_not() {
    let run = root().join("tests/fixtures/runs/stride-sm90.json");
    let out = coalprof().args(["--format", "markdown", "check"]).arg(&run).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("## coalprof check:"), "the step summary's markdown: {text}");
    for format in ["bencher", "github-benchmark", "github-benchmark-bigger", "svg"] {
        let out = coalprof().args(["--format", format, "check"]).arg(&run).output().unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{format}: {e}");
        assert!(out.stdout.is_empty(), "{format}: no table in its place");
        assert!(e.contains(&format!("--format {format}")), "{e}");
    }
}
