//! Counters that cannot be true, in CSV and `.ncu-rep` alike: a NaN, sectors below requests,
//! a launch of nothing but NaNs. Each is named (launch and metric) in the notices and the
//! table, its value and everything derived from it is absent, and a gate rule on it fails with
//! the reason: a broken counter never passes a gate. And an ncu CSV re-saved by a script or a
//! spreadsheet (quotes only where needed, CRLF, a BOM, pandas' index column) reads exactly as
//! the original.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::util::{coalprof, fake_report, fixture, json, OkStdout};

/// A raw page as ncu writes it (every field quoted), one row per launch of `k`: the sectors
/// and requests given, 4096 DRAM bytes each.
fn raw_csv(dir: &Path, name: &str, launches: &[(&str, &str)]) -> PathBuf {
    let q = |cells: &[&str]| cells.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(",") + "\n";
    let mut text = q(&[
        "ID",
        "Process ID",
        "Process Name",
        "Host Name",
        "Kernel Name",
        "Kernel Time",
        "Context",
        "Stream",
        "Block Size",
        "Grid Size",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "dram__bytes_read.sum",
    ]);
    text += &q(&["", "", "", "", "", "", "", "", "", "", "sector", "request", "byte"]);
    for (i, (sectors, requests)) in launches.iter().enumerate() {
        let id = i.to_string();
        text += &q(&[
            &id,
            "1",
            "app",
            "h",
            "k(float *)",
            "t",
            "1",
            "7",
            "(256, 1, 1)",
            "(64, 1, 1)",
            sectors,
            requests,
            "4096",
        ]);
    }
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn analyze(path: &Path, per_launch: bool) -> Value {
    let mut c = coalprof();
    c.args(["analyze", "--format", "json"]).arg(path);
    if per_launch {
        c.arg("--per-launch");
    }
    json(&c.ok_stdout())
}

#[test]
fn a_nan_counter_is_named_left_out_and_fails_a_gate_rule_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let csv = raw_csv(dir.path(), "nan.csv", &[("nan", "1024"), ("4096", "1024")]);
    let v = analyze(&csv, true);
    let notices = v["notices"].to_string();
    assert!(notices.contains("launch 0 (`k(float *)`)") && notices.contains("global_load_sectors"), "{notices}");
    assert!(!notices.contains("not in the input: global_load_sectors"), "a NaN is broken, not missing: {notices}");
    let (bad, good) = (&v["rows"][0], &v["rows"][1]);
    for key in ["global_load_sectors", "global_load_sectors_per_request"] {
        assert!(bad["metrics"][key].is_null(), "{key}: {bad}");
        assert!(bad["broken"][key].as_str().unwrap().contains("nan"), "{bad}");
    }
    assert_eq!(good["metrics"]["global_load_sectors_per_request"].as_f64(), Some(4.0));
    // Summed over launches, the kernel's row is broken too: never a sum of the good half.
    let summed = analyze(&csv, false);
    assert!(summed["rows"][0]["metrics"]["global_load_sectors"].is_null(), "{}", summed["rows"][0]);
    // The table says it.
    let table = String::from_utf8(coalprof().arg("analyze").arg(&csv).ok_stdout()).unwrap();
    assert!(table.contains("ncu recorded"), "{table}");
    // A `max = 8` rule on sectors/request fails with the reason (it used to be SKIPPED: passed).
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[[gate]]\nmatch = \"*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 8\n").unwrap();
    let out = coalprof().args(["--format", "json", "check", "--rules"]).arg(&rules).arg(&csv).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let checks = json(&out.stdout);
    let fail = checks["checks"].as_array().unwrap().iter().find(|c| c["verdict"] == "fail").unwrap();
    assert!(fail["message"].as_str().unwrap().contains("cannot be trusted"), "{fail}");
}

#[test]
fn sectors_below_requests_are_impossible_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let csv = raw_csv(dir.path(), "low.csv", &[("512", "1024")]);
    let v = analyze(&csv, true);
    assert!(v["notices"].to_string().contains("below global_load_requests"), "{}", v["notices"]);
    let row = &v["rows"][0];
    assert!(row["metrics"]["global_load_sectors_per_request"].is_null(), "{row}");
    assert!(row["broken"]["global_load_requests"].is_string(), "{row}");
    // Equal counts (a broadcast: 1 sector per request) are fine.
    let ok = analyze(&raw_csv(dir.path(), "ok.csv", &[("1024", "1024")]), true);
    assert_eq!(ok["rows"][0]["metrics"]["global_load_sectors_per_request"].as_f64(), Some(1.0));
    assert!(ok["notices"].to_string().find("below").is_none(), "{}", ok["notices"]);
}

#[test]
fn a_report_launch_of_only_nans_recorded_no_values() {
    let dir = tempfile::tempdir().unwrap();
    let spec = json!({
        "program": "app",
        "launches": [
            {"kernel": "k", "grid": [64, 1, 1], "block": [256, 1, 1], "metrics": {
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4096.0,
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1024.0}},
            {"kernel": "k", "grid": [64, 1, 1], "block": [256, 1, 1], "metrics": {
                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "NaN",
                "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "NaN"}}
        ]
    });
    // The fake's writer stores numbers as doubles; a "NaN" string becomes a double NaN.
    let report = fake_report(&spec.to_string().replace("\"NaN\"", "NaN"), &dir.path().join("nan.ncu-rep"));
    let v = analyze(&report, true);
    let notices = v["notices"].to_string();
    assert!(
        notices
            .contains("launch 1 (`k(const float *, float *, unsigned long, unsigned long)`): ncu recorded no values"),
        "{notices}"
    );
    assert_eq!(v["rows"][0]["metrics"]["global_load_sectors_per_request"].as_f64(), Some(4.0));
    assert!(v["rows"][1]["metrics"]["global_load_sectors_per_request"].is_null());
}

/// The rows of `analyze --format json`, without the input's path.
fn rows_of(path: &Path) -> Value {
    analyze(path, true)["rows"].clone()
}

#[test]
fn a_csv_resaved_by_a_script_or_a_spreadsheet_reads_as_the_original() {
    let original = fixture("ncu/2022/import_ncu2022_3_microgpusim_vectoradd_102400_32_gtx1080_2019_raw_base.csv");
    let records: Vec<csv::StringRecord> = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(&original)
        .unwrap()
        .records()
        .map(Result::unwrap)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let resave = |name: &str, crlf: bool, bom: bool, index: bool| -> PathBuf {
        let mut w = csv::WriterBuilder::new()
            .quote_style(csv::QuoteStyle::Necessary)
            .flexible(true)
            .terminator(if crlf { csv::Terminator::CRLF } else { csv::Terminator::Any(b'\n') })
            .from_writer(Vec::new());
        for (i, r) in records.iter().enumerate() {
            let mut cells: Vec<String> = r.iter().map(str::to_string).collect();
            if index {
                // pandas' to_csv: an unnamed index column first.
                cells.insert(0, if i == 0 { String::new() } else { (i - 1).to_string() });
            }
            w.write_record(&cells).unwrap();
        }
        let mut bytes = if bom { vec![0xEF, 0xBB, 0xBF] } else { Vec::new() };
        bytes.extend(w.into_inner().unwrap());
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let want = rows_of(&original);
    assert!(!want.as_array().unwrap().is_empty());
    for (name, crlf, bom, index) in
        [("python-csv.csv", false, false, false), ("excel.csv", true, true, false), ("pandas.csv", false, false, true)]
    {
        let path = resave(name, crlf, bom, index);
        let head = std::fs::read_to_string(&path).unwrap();
        assert!(!head.trim_start_matches('\u{feff}').starts_with('"'), "{name}: the header is no longer quoted");
        assert_eq!(rows_of(&path), want, "{name}");
    }
}
