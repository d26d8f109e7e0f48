//! `coalprof lines` on reports in ncu 2025's layout, where `launch__function_pcs`' scalar is the
//! number of functions and the start PCs are only in its instances (docs/ncu-rep-format.md).
//! No public 2025+ report with source counters is in the fixtures, so the fake ncu's writer
//! (tests/fake_gpu/ncu, `--fake-write-report`) makes one around a real cubin: a naive transpose
//! built by the real nvcc with `-lineinfo`, whose load and store share one source line. The
//! same counters in the 2024 layout must give the same rows.

use std::path::{Path, PathBuf};
use std::process::Command;

use coalprof::tools::nvdisasm::Nvdisasm;
use serde_json::{json, Value};

use crate::util::{coalprof, fake_report, fixture, json, real_nvcc, real_nvdisasm, OkStdout};

/// Where the kernel's code sits in the fake process (a PC of the size ncu reports).
pub(crate) const START: u64 = 0x7f3a_5c00_1000;

/// The transpose's cubin and, by nvdisasm, the offset and line of its global load and store.
pub(crate) struct Built {
    cubin: PathBuf,
    load: (u64, u32),
    store: (u64, u32),
}

fn build(test: &str, dir: &Path) -> Option<Built> {
    build_from(test, dir, &fixture("cuda/transpose.cu"))
}

/// [`build`] of the transpose copied to `source` (its line table names that path).
pub(crate) fn build_from(test: &str, dir: &Path, source: &Path) -> Option<Built> {
    let (nvcc, nvdisasm) = (real_nvcc(test)?, real_nvdisasm(test)?);
    if source != fixture("cuda/transpose.cu") {
        std::fs::create_dir_all(source.parent().unwrap()).unwrap();
        std::fs::copy(fixture("cuda/transpose.cu"), source).unwrap();
    }
    let cubin = dir.join("transpose.cubin");
    let o = Command::new(&nvcc)
        .args(["-cubin", "-arch=sm_90", "-lineinfo", "-o"])
        .arg(&cubin)
        .arg(source)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let listing = Nvdisasm { path: nvdisasm }.disassemble(&cubin).unwrap();
    let ins = &listing["transpose_naive"];
    let find = |op: &str| {
        let i = ins.iter().find(|i| i.text.starts_with(op)).unwrap_or_else(|| panic!("no {op} in {ins:#?}"));
        (i.offset, i.line.as_ref().expect("built with -lineinfo").1)
    };
    Some(Built { cubin, load: find("LDG"), store: find("STG") })
}

/// A report of one transpose launch in `layout` (`2025` or `2024`), with `start` as the
/// kernel's start PC: the load coalesced (4 sectors/request), the store a column walk (32).
fn write(dir: &Path, b: &Built, layout: &str, start: u64) -> PathBuf {
    write_with(dir, b, layout, start, 4.0)
}

/// The same, the load fetching `load_spr` sectors per request (the kernel's counters agree).
pub(crate) fn write_with(dir: &Path, b: &Built, layout: &str, start: u64, load_spr: f64) -> PathBuf {
    write_spec(dir, b, layout, start, load_spr, true)
}

/// The same, with the kernel-level counters or, like a report made with `--section
/// SourceCounters` alone, without them (no requests, sectors or bytes requested per kernel).
fn write_spec(dir: &Path, b: &Built, layout: &str, start: u64, load_spr: f64, kernel_counters: bool) -> PathBuf {
    let (ld, st) = (START + b.load.0, START + b.store.0);
    let load_sectors = 450.0 * load_spr;
    let metrics = if kernel_counters {
        json!({
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 450,
            "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": 450,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": load_sectors,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 14400,
            "smsp__sass_data_bytes_mem_global_op_ld.sum": 450 * 128,
            "smsp__sass_inst_executed_op_global_ld.sum": 450
        })
    } else {
        json!({})
    };
    let spec = json!({
        "program": "transpose",
        "layout": layout,
        "launches": [{
            "kernel": "transpose_naive",
            "mangled": "transpose_naive",
            "demangled": "transpose_naive(const float *, float *, int)",
            "grid": [64, 64, 1],
            "block": [32, 8, 1],
            "metrics": metrics,
            "start_pc": start,
            "cubin": b.cubin,
            "instanced": {
                "memory_type": [[ld, 4], [st, 4]],
                "memory_access_type": [[ld, 2], [st, 4]],
                "memory_access_size_type": [[ld, 32], [st, 32]],
                "inst_executed": [[START, 450], [ld, 450], [st, 450]],
                "thread_inst_executed_true": [[ld, 14400], [st, 14400]],
                "memory_l1_tag_requests_global": [[ld, (load_sectors / 4.0).max(450.0)], [st, 14400]],
                "memory_l2_theoretical_sectors_global": [[ld, load_sectors], [st, 14400]],
                "memory_l2_theoretical_sectors_global_ideal": [[ld, 1800], [st, 1800]]
            }
        }]
    });
    let stem = format!("transpose-{layout}-{load_spr}-{kernel_counters}");
    fake_report(&spec.to_string(), &dir.join(format!("{stem}.ncu-rep")))
}

#[test]
fn a_2025_layout_report_yields_its_lines_load_and_store_apart() {
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = build("a_2025_layout_report_yields_its_lines", dir.path()) else { return };
    assert_eq!(b.load.1, b.store.1, "the transpose loads and stores on one line");
    let report = write(dir.path(), &b, "2025", START);
    let v = json(&coalprof().args(["lines", "--format", "json"]).arg(&report).ok_stdout());
    assert_eq!(v["schema"], "coalprof-lines/2");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "one row per access kind of the line: {rows:#?}");
    let row = |op: &str| rows.iter().find(|r| r["op"] == op).unwrap_or_else(|| panic!("no {op} row: {rows:#?}"));
    let (load, store) = (row("global load"), row("global store"));
    for r in [load, store] {
        assert_eq!(r["line"].as_u64(), Some(u64::from(b.load.1)), "{r}");
        assert!(r["file"].as_str().unwrap().ends_with("transpose.cu"), "{r}");
        assert_eq!((r["requests"].as_u64(), r["executions"].as_u64()), (Some(450), Some(450)), "{r}");
        assert_eq!(r["active_lanes"].as_f64(), Some(32.0), "{r}");
    }
    assert_eq!(
        (store["sectors_per_request"].as_f64(), store["ideal_sectors_per_request"].as_f64()),
        (Some(32.0), Some(4.0))
    );
    assert_eq!(
        (load["sectors_per_request"].as_f64(), load["ideal_sectors_per_request"].as_f64()),
        (Some(4.0), Some(4.0))
    );
    assert_eq!((store["lines_per_request"].as_f64(), load["lines_per_request"].as_f64()), (Some(32.0), Some(1.0)));
    assert_eq!(rows[0]["op"], "global store", "the waste ranks first");
    let d = store["diagnosis"].as_str().unwrap();
    assert!(d.contains("global stores") && d.contains("32.0 lines/request"), "{d}");
    assert!(load["diagnosis"].is_null(), "{load}");
    assert_eq!(
        v["notices"].as_array().unwrap().iter().filter(|n| n.as_str().unwrap().contains("attributed")).count(),
        0
    );
    // The markdown a reviewer pastes names the store's waste and shows both rows.
    let md = String::from_utf8(coalprof().args(["lines", "--format", "markdown"]).arg(&report).ok_stdout()).unwrap();
    assert!(md.contains("global store") && md.contains("global load") && md.contains("32.00"), "{md}");
}

#[test]
fn the_2024_and_2025_layouts_give_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = build("the_2024_and_2025_layouts_give_the_same_rows", dir.path()) else { return };
    let rows = |layout: &str| -> Value {
        let v =
            json(&coalprof().args(["lines", "--format", "json"]).arg(write(dir.path(), &b, layout, START)).ok_stdout());
        v["rows"].clone()
    };
    let new = rows("2025");
    assert_eq!(new.as_array().unwrap().len(), 2);
    assert_eq!(new, rows("2024"));
}

#[test]
fn counters_that_cannot_be_placed_say_why_never_zero_rows_in_silence() {
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = build("counters_that_cannot_be_placed_say_why", dir.path()) else { return };
    // The start PC lies far from every instruction's PC: nothing can be attributed.
    let report = write(dir.path(), &b, "2025", START + (1 << 40));
    let out = coalprof().args(["lines", "--format", "json"]).arg(&report).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out.stdout);
    assert!(v["rows"].as_array().unwrap().is_empty());
    let notices = v["notices"].to_string();
    assert!(notices.contains("not attributed") && notices.contains("transpose_naive"), "{notices}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().any(|l| l.starts_with("note: ") && l.contains("not attributed")), "{stderr}");
}

/// The default gate, no baseline: a kernel at 2.4x its ideal sectors/request warns (exit 0) in
/// the table, JUnit and GitHub output, and the annotation sits on the kernel's worst source
/// line, not on the rule in metrics.toml.
#[test]
fn the_default_gate_warns_at_2_4x_the_ideal_on_the_kernels_worst_line() {
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = build("the_default_gate_warns_at_2_4x_the_ideal", dir.path()) else { return };
    let report = write_with(dir.path(), &b, "2025", START, 9.6);
    let junit = dir.path().join("junit.xml");
    let out = coalprof().args(["check", "--github", "--junit"]).arg(&junit).arg(&report).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "a warning never fails the gate: {stdout}");
    assert!(
        stdout.contains("gate passed with warnings") && stdout.contains("global_load_sectors_over_ideal"),
        "{stdout}"
    );
    let annotation = stdout.lines().find(|l| l.starts_with("::warning ")).unwrap_or_else(|| panic!("{stdout}"));
    let place = format!("file=tests/fixtures/cuda/transpose.cu,line={}", b.load.1);
    assert!(annotation.contains(&place) && annotation.contains("2.4"), "{annotation}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("global_load_sectors_over_ideal") && xml.contains("transpose.cu"), "{xml}");
}

/// The `<testcase>` elements of a JUnit file, each as its attributes.
fn junit_cases(xml: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut cases = Vec::new();
    loop {
        match reader.read_event().expect("valid XML") {
            Event::Start(e) | Event::Empty(e) if e.name().as_ref() == b"testcase" => cases.push(
                e.attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (String::from_utf8(a.key.as_ref().to_vec()).unwrap(), a.unescape_value().unwrap().into_owned())
                    })
                    .collect(),
            ),
            Event::Eof => return cases,
            _ => {}
        }
    }
}

/// A report with per-line counters and no kernel counters for an ideal (as `ncu --section
/// SourceCounters` makes; written by the fake ncu around the real transpose cubin, since no
/// public report in the fixtures has a line at 2x its ideal and a line table): the default
/// gate, no rules file, warns on the load's line at 2.4x its ideal in the annotations, JUnit
/// and SARIF, gives the kernel its ideal from the same counters, and exits 0.
#[test]
fn the_default_gate_warns_on_the_line_of_a_report_with_only_source_counters_fake_written() {
    let dir = tempfile::tempdir().unwrap();
    let Some(b) = build("the_default_gate_warns_on_the_line_of_a_report_with_only_source_counters", dir.path()) else {
        return;
    };
    // The spec's load: 450 requests of 9.6 sectors against ncu's ideal of 1,800 sectors.
    let (load_sectors, ideal_sectors) = (450.0 * 9.6, 1800.0);
    let report = write_spec(dir.path(), &b, "2025", START, 9.6, false);
    let (junit, sarif) = (dir.path().join("junit.xml"), dir.path().join("lines.sarif"));
    let out = coalprof()
        .args(["--wide", "check", "--github", "--junit"])
        .arg(&junit)
        .arg("--sarif")
        .arg(&sarif)
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "a warning never fails the gate: {stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("coalprof check: gate passed with warnings")), "{stdout}");
    let place = format!("file=tests/fixtures/cuda/transpose.cu,line={}", b.load.1);
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::warning ")).collect();
    let on_line = annotations
        .iter()
        .find(|a| a.contains("line_sectors_over_ideal") && a.contains("(global load)"))
        .unwrap_or_else(|| panic!("no per-line warning on the load: {stdout}"));
    assert!(on_line.contains(&place) && on_line.contains("2.4 > 2"), "{on_line}");
    // The kernel's own check reads the same counters: its loads' sectors over their ideal.
    let kernel = annotations
        .iter()
        .find(|a| a.contains("global_load_sectors_over_ideal"))
        .unwrap_or_else(|| panic!("no kernel warning: {stdout}"));
    let ratio = load_sectors / ideal_sectors;
    assert!(kernel.contains(&format!("global_load_sectors_over_ideal {ratio} > 2")), "{kernel}");

    let cases = junit_cases(&std::fs::read_to_string(&junit).unwrap());
    let case = cases
        .iter()
        .find(|c| c["name"] == "line_sectors_over_ideal" && c["classname"].contains("(global load)"))
        .unwrap_or_else(|| panic!("no line case: {cases:#?}"));
    assert_eq!(
        (case.get("file").map(String::as_str), case.get("line").cloned()),
        (Some("tests/fixtures/cuda/transpose.cu"), Some(b.load.1.to_string()))
    );

    let log: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    let load = results
        .iter()
        .find(|r| r["properties"]["op"] == "global load")
        .unwrap_or_else(|| panic!("no SARIF result for the load: {results:#?}"));
    let at = &load["locations"][0]["physicalLocation"];
    assert_eq!(
        (at["artifactLocation"]["uri"].as_str(), at["region"]["startLine"].as_u64(), load["level"].as_str()),
        (Some("tests/fixtures/cuda/transpose.cu"), Some(u64::from(b.load.1)), Some("warning"))
    );
}
