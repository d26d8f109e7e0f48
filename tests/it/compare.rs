//! `coalprof compare`: two model runs that differ in one setting (`--l2-fetch 32` vs `64`) side
//! by side in every format, rows present in one input only, reports matched by kernel and
//! launch shape, and the exit codes of bad input.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{coalprof, fixture, json, OkStdout};

/// A model run of `patterns` with `--l2-fetch l2`, saved as `<base>/<id>`.
fn model_run(base: &Path, id: &str, patterns: &str, l2: &str) -> PathBuf {
    coalprof()
        .args(["run", "--pattern", patterns, "--backend", "model", "--size", "16M", "--l2-fetch", l2, "--run-id", id])
        .arg("--out")
        .arg(base)
        .args(["--format", "json"])
        .ok_stdout();
    base.join(id)
}

fn compare(args: &[&Path], extra: &[&str]) -> std::process::Output {
    coalprof().arg("compare").args(args).args(extra).output().unwrap()
}

/// Output with the temporary folder replaced, for snapshots.
fn clean(out: &[u8], tmp: &Path) -> String {
    String::from_utf8_lossy(out).replace(&tmp.display().to_string(), "[TMP]")
}

#[test]
fn compare_of_two_model_runs_shows_both_columns_and_the_deltas() {
    let tmp = tempfile::tempdir().unwrap();
    let a = model_run(tmp.path(), "l2-32", "stride", "32");
    let b = model_run(tmp.path(), "l2-64", "stride", "64");
    let out = compare(&[&a, &b], &["--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&out.stdout);
    assert_eq!(doc["schema"], "coalprof-compare/2");
    let labels: Vec<&str> = doc["inputs"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["model (l2-32)", "model (l2-64)"]);
    assert_eq!(doc["inputs"][0]["path"], a.display().to_string());
    assert!(doc["inputs"][0]["gpu"].is_null() && doc["inputs"][0]["arch"].is_null());
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "every stride variant, matched");
    assert_eq!(rows[0]["key"], "stride/stride_1");
    let amp = |row: &Value, i: usize| row["values"][i]["dram_amplification"].as_f64().unwrap();
    for row in rows {
        assert_eq!(row["values"].as_array().unwrap().len(), 2);
        // A 64-byte fetch never moves fewer bytes than a 32-byte one.
        assert!(amp(row, 1) >= amp(row, 0), "{row}");
    }
    // From stride 16 on (64 bytes apart) each lane's sector is alone in its 64-byte fetch.
    let s16 = rows.iter().find(|r| r["key"] == "stride/stride_16").unwrap();
    assert_eq!((amp(s16, 0), amp(s16, 1)), (8.0, 16.0));
    let s8 = rows.iter().find(|r| r["key"] == "stride/stride_8").unwrap();
    assert_eq!(amp(s8, 0), amp(s8, 1), "stride 8 uses both sectors of every 64-byte fetch");

    // The markdown a reviewer pastes: both column groups, deltas and ratios against the first.
    let md = compare(&[&a, &b], &["--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout).into_owned();
    assert!(md.starts_with("# coalprof compare: model (l2-32) vs model (l2-64)\n"), "{md}");
    assert!(md.contains("model (l2-32)<br>DRAM amp") && md.contains("model (l2-64)<br>DRAM amp"), "{md}");
    assert!(md.contains("| 16.00x (+8.00, 2.00x) |"), "stride_16's DRAM amplification doubles: {md}");
    assert!(md.contains("(=)"), "unchanged cells say so: {md}");

    for format in ["table", "markdown", "csv", "json"] {
        let out = compare(&[&a, &b], &["--format", format]);
        assert!(out.status.success());
        insta::assert_snapshot!(format!("compare_l2_fetch_{format}"), clean(&out.stdout, tmp.path()));
    }
}

#[test]
fn compare_keeps_rows_present_in_one_input_only_and_takes_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let a = model_run(tmp.path(), "main", "stride", "32");
    let b = model_run(tmp.path(), "branch", "stride,offset", "32");
    let out = compare(&[&a, &b], &["--format", "json", "--label", "main", "--label", "branch"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&out.stdout);
    assert_eq!(doc["inputs"][1]["label"], "branch");
    let rows = doc["rows"].as_array().unwrap();
    let offset: Vec<&Value> = rows.iter().filter(|r| r["key"].as_str().unwrap().starts_with("offset/")).collect();
    assert!(!offset.is_empty());
    for r in &offset {
        assert!(r["values"][0].is_null() && r["values"][1].is_object(), "{r}");
    }
    let md = compare(&[&a, &b], &["--format", "markdown", "--label", "main", "--label", "branch"]);
    assert!(String::from_utf8_lossy(&md.stdout).contains("(only in branch)"));
}

#[test]
fn compare_matches_reports_by_kernel_when_they_carry_no_launch_shape() {
    // Two ncu raw pages of one kernel at two sizes; the raw page of ncu 2022.3 has no grid or
    // block here, so the rows match by kernel name.
    let small = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_100_32_gtx1080_2019_raw_base.csv");
    let large = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let out = compare(&[&small, &large], &["--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&out.stdout);
    assert_eq!(doc["inputs"][0]["gpu"], "NVIDIA GeForce GTX 1080");
    assert_eq!(doc["inputs"][0]["arch"], "sm_61");
    let label = doc["inputs"][1]["label"].as_str().unwrap();
    assert!(label.starts_with("NVIDIA GeForce GTX 1080 sm_61 (import_"), "the same GPU: told apart by file: {label}");
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["key"], "vecAdd<float>", "matched by the signature without its parameters");
    assert_eq!(rows[0]["kernel"], "void vecAdd<float>(float*,float*,float*,int)", "JSON keeps the full signature");
    assert_eq!(rows[0]["name"], "vecAdd");
    let bytes = |i: usize| rows[0]["values"][i]["dram_bytes_read"].as_f64().unwrap();
    assert_eq!((bytes(0), bytes(1)), (15808.0, 820928.0));
}

#[test]
fn compare_bad_input_exits_with_the_readme_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let a = model_run(tmp.path(), "a", "stride", "32");
    let one = compare(&[&a], &[]);
    assert_eq!(one.status.code(), Some(2), "one run on one GPU has nothing to compare with");
    assert!(String::from_utf8_lossy(&one.stderr).starts_with("error: compare needs two inputs"));
    let labels = compare(&[&a, &a], &["--label", "x", "--label", "y", "--label", "z"]);
    assert_eq!(labels.status.code(), Some(2));
    let metric = compare(&[&a, &a], &["--metric", "no_such_metric"]);
    assert_eq!(metric.status.code(), Some(2));
    let missing = compare(&[&a, &tmp.path().join("nope.json")], &[]);
    assert_eq!(missing.status.code(), Some(3), "{}", String::from_utf8_lossy(&missing.stderr));
}

/// One program profiled at two sizes (two real reports: 100 and 102,400 elements, so two
/// grids): matched kernel by kernel by name, each side's grid and block shown; `--match shape`
/// keeps them apart.
#[test]
fn two_reports_of_one_program_at_two_sizes_compare_kernel_by_kernel() {
    let small = fixture("ncu-rep/microgpusim_vectoradd_100_32_gtx1080_2019.ncu-rep");
    let large = fixture("ncu-rep/microgpusim_vectoradd_102400_32_gtx1080_2019.ncu-rep");
    let out = compare(&[&small, &large], &["--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&out.stdout);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "one kernel, matched across the sizes: {rows:#?}");
    let shapes: Vec<&str> = rows[0]["shapes"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(shapes.len(), 2);
    assert_ne!(shapes[0], shapes[1], "the grids differ: {shapes:?}");
    assert!(rows[0]["values"].as_array().unwrap().iter().all(|v| v.is_object()), "{rows:#?}");
    let table = String::from_utf8(compare(&[&small, &large], &[]).stdout).unwrap();
    assert!(table.contains("grid / block") && table.contains("vecAdd") && !table.contains("only in"), "{table}");
    assert!(!table.contains("float*"), "tables show the function name, not the signature: {table}");
    let exact = json(&compare(&[&small, &large], &["--format", "json", "--match", "shape"]).stdout);
    assert_eq!(exact["rows"].as_array().unwrap().len(), 2, "by exact shape they are two rows");
}

/// One program on two GPUs whose CUB releases differ (CUB 2.1 on the H100, 2.3 on the RTX
/// 4070 Ti): its scan kernel's template arguments differ, the other kernels match by name. The
/// scan kernels are the only `cub::DeviceScanKernel` left unmatched on each side, so they pair by
/// base name, marked so in every format.
#[test]
fn kernels_whose_template_arguments_changed_pair_by_base_name_and_say_so() {
    let tmp = tempfile::tempdir().unwrap();
    let results = |name: &str, gpu: &str, cc: &str, scan: &str, ns: &str| {
        let row = |kernel: String, spr: f64| {
            serde_json::json!({
                "kernel": kernel, "launches": 1, "source": "measured", "grid": [120, 1, 1], "block": [128, 1, 1],
                "metrics": { "global_load_sectors_per_request": spr, "duration": 1e-5 }
            })
        };
        let doc = serde_json::json!({
            "provenance": { "coalprof": "0.1.0", "backend": "import", "gpu": gpu, "compute_capability": cc },
            "rows": [
                row(format!("void cub::{ns}::DeviceScanInitKernel<cub::{ns}::ScanTileState<float, true>>(cub::{ns}::ScanTileState<float, true>, int)"), 4.0),
                row(format!("void cub::{ns}::DeviceScanKernel<{scan}>(const float *, float *, int)"), 8.0),
                row("void thrust::THRUST_200301_900_NS::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__fill::functor<float *, float>, unsigned long>(float *, unsigned long)".into(), 4.0),
                row("histogram(const int *, int *, int)".into(), 16.0),
            ]
        });
        // `schema` first, as coalprof writes it: a results.json is known by it near the start.
        let text = doc.to_string().replacen('{', "{\"schema\":\"coalprof/1\",", 1);
        let path = tmp.path().join(format!("{name}.json"));
        std::fs::write(&path, text).unwrap();
        path
    };
    let h100 = results(
        "h100",
        "NVIDIA H100 80GB HBM3",
        "9.0",
        "cub::CUB_200100_900_NS::DeviceScanPolicy<float, cub::Sum>::Policy600, const float *, float *, cub::Sum",
        "CUB_200100_900_NS",
    );
    let ada = results(
        "ada",
        "NVIDIA GeForce RTX 4070 Ti",
        "8.9",
        "cub::CUB_200300_890_NS::DeviceScanPolicy<float, float, cub::Sum>::Policy900, const float *, float *, cub::Sum, float",
        "CUB_200300_890_NS",
    );
    let out = compare(&[&h100, &ada], &["--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json(&out.stdout);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "every kernel paired: {rows:#?}");
    assert!(rows.iter().all(|r| r["values"].as_array().unwrap().iter().all(Value::is_object)), "{rows:#?}");
    let scan = rows.iter().find(|r| r["name"] == "cub::DeviceScanKernel").unwrap();
    assert_eq!(scan["matched_by_base_name"], true, "{scan:#}");
    let kernels: Vec<&str> = scan["kernels"].as_array().unwrap().iter().map(|k| k.as_str().unwrap()).collect();
    assert!(kernels[0].contains("Policy600") && kernels[1].contains("Policy900"), "{kernels:?}");
    let others: Vec<&Value> = rows.iter().filter(|r| r["name"] != "cub::DeviceScanKernel").collect();
    assert!(others.iter().all(|r| r["matched_by_base_name"] == false), "{others:#?}");

    let table = String::from_utf8(compare(&[&h100, &ada], &[]).stdout).unwrap();
    assert!(!table.contains("only in"), "{table}");
    assert!(table.contains("cub::DeviceScanKernel †"), "the table marks the row: {table}");
    assert!(table.contains("† cub::DeviceScanKernel: matched by base name"), "and says why under it: {table}");
    let md = String::from_utf8(compare(&[&h100, &ada], &["--format", "markdown"]).stdout).unwrap();
    assert!(md.contains("`cub::DeviceScanKernel †`") && md.contains("matched by base name"), "{md}");
    let csv = String::from_utf8(compare(&[&h100, &ada], &["--format", "csv"]).stdout).unwrap();
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().ends_with(",matched_by_base_name"), "{csv}");
    for line in lines {
        let marked = line.ends_with(",true");
        assert_eq!(marked, line.contains("DeviceScanKernel<"), "{line}");
    }
    let html = String::from_utf8(compare(&[&h100, &ada], &["--format", "html"]).stdout).unwrap();
    assert!(html.contains("matched by base name"), "the page marks it too");
}
