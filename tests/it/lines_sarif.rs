//! SARIF 2.1.0 from `lines`, validated against the OASIS schema (tests/oracle/validate_sarif.py,
//! jsonschema + the schema from scripts/install-tools.sh), on a real cubin: the pattern kernel
//! `row_sums` built with `-lineinfo`, its loads given column-walk counters (32 sectors per
//! request), must come out as one CP1001 result on the line nvdisasm puts those loads on.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use coalprof::lines::source::Sources;
use coalprof::lines::{build, By, Options};
use coalprof::parse::{LaunchRecord, SourceCounters};
use coalprof::render::sarif;
use coalprof::tools::nvdisasm::Nvdisasm;
use serde_json::Value;

use crate::util::{coalprof, fixture, real_nvcc, real_nvdisasm, root, tool_path};

/// Instanced metric name → (PC, value), as in `SourceCounters`.
type Instanced = Vec<(Arc<str>, Vec<(u64, f64)>)>;

fn validate(python: &Path, sarif: &Path) -> (bool, String) {
    let out = Command::new(python).arg(root().join("tests/oracle/validate_sarif.py")).arg(sarif).output().unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let Some(python) = tool_path("the_validator_rejects", ".tools/sarif/bin/python") else { return };
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.sarif");
    std::fs::write(&bad, r#"{"version": "2.1.0", "runs": [{"tool": {}, "results": [{"message": {}}]}]}"#).unwrap();
    let (ok, text) = validate(&python, &bad);
    assert!(!ok && text.contains("driver"), "{text}");
}

#[test]
fn a_column_walk_is_one_valid_sarif_result_on_its_line() {
    let (Some(nvcc), Some(nvdisasm), Some(python)) = (
        real_nvcc("a_column_walk_is_one_valid_sarif_result"),
        real_nvdisasm("a_column_walk_is_one_valid_sarif_result"),
        tool_path("a_column_walk_is_one_valid_sarif_result", ".tools/sarif/bin/python"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cubin_path = dir.path().join("column.cubin");
    let o = Command::new(&nvcc)
        .args(["-cubin", "-arch=sm_80", "-lineinfo", "-o"])
        .arg(&cubin_path)
        .arg(root().join("kernels/column.cu"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cubin: Arc<[u8]> = std::fs::read(&cubin_path).unwrap().into();
    let listing = Nvdisasm { path: nvdisasm }.disassemble(&cubin_path).unwrap();

    // Counters per kernel: every global load 100 requests; row_sums' at 32 sectors each (a
    // column walk), column_sums' at the ideal 4. Stores ideal.
    let base = 0x7f00_0000_0000u64;
    let launch = |kernel: &str, id: u64, sectors_per_request: f64| {
        let ins = &listing[kernel];
        let mem: Vec<(u64, bool)> = ins
            .iter()
            .filter(|i| i.text.starts_with("LDG") || i.text.starts_with("STG"))
            .map(|i| (i.offset, i.text.starts_with("LDG")))
            .collect();
        let per = |f: &dyn Fn(bool) -> f64| mem.iter().map(|&(o, ld)| (base + o, f(ld))).collect::<Vec<_>>();
        let instanced: Instanced = vec![
            ("memory_type".into(), per(&|_| 4.0)),
            ("memory_access_type".into(), per(&|ld| if ld { 2.0 } else { 4.0 })),
            ("memory_access_size_type".into(), per(&|_| 32.0)),
            ("inst_executed".into(), [(base, 100.0)].into_iter().chain(per(&|_| 100.0)).collect()),
            // A column walk touches one 128-byte line per lane, a coalesced read one per request.
            (
                "memory_l1_tag_requests_global".into(),
                per(&|ld| if ld && sectors_per_request >= 32.0 { 3200.0 } else { 100.0 }),
            ),
            (
                "memory_l2_theoretical_sectors_global".into(),
                per(&|ld| if ld { 100.0 * sectors_per_request } else { 400.0 }),
            ),
            ("memory_l2_theoretical_sectors_global_ideal".into(), per(&|_| 400.0)),
        ];
        let rec =
            LaunchRecord { id: Some(id), grid: Some([1, 1, 1]), block: Some([256, 1, 1]), ..LaunchRecord::new(kernel) };
        let sc = SourceCounters {
            function_pcs: vec![base],
            instanced,
            cubin: Some(cubin.clone()),
            sm_revision: Some(0x80000), // major << 16 | minor, as reports store it
            mangled: Some(kernel.to_string()),
            ..SourceCounters::default()
        };
        (rec, sc)
    };
    let make = || {
        let opts = Options { by: By::Line, ..Options::default() };
        let mut sources = Sources::new(root());
        let catalogue = coalprof::metrics::Catalogue::builtin();
        let launches = vec![launch("row_sums", 0, 32.0), launch("column_sums", 1, 4.0)];
        build(launches, &opts, &catalogue, &mut sources, &mut |_| None).unwrap()
    };
    let report = make();
    let log = sarif(&report, &|_| "warning");
    let path = dir.path().join("lines.sarif");
    std::fs::write(&path, serde_json::to_string_pretty(&log).unwrap()).unwrap();
    let (ok, text) = validate(&python, &path);
    assert!(ok, "SARIF does not validate:\n{text}");

    // The loads of row_sums, by nvdisasm: the lines they are on.
    let load_lines: std::collections::BTreeSet<u32> = listing["row_sums"]
        .iter()
        .filter(|i| i.text.starts_with("LDG"))
        .filter_map(|i| i.line.as_ref().map(|l| l.1))
        .collect();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), load_lines.len(), "one result per wasteful line: {results:#?}");
    for r in results {
        assert_eq!(r["ruleId"], "CP1001");
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], "kernels/column.cu", "repository-relative");
        let line = loc["region"]["startLine"].as_u64().unwrap() as u32;
        assert!(load_lines.contains(&line), "line {line} is not one of row_sums' loads {load_lines:?}");
        let msg = r["message"]["text"].as_str().unwrap();
        assert!(
            msg.contains("row_sums") && msg.contains("32.0 sectors/request") && msg.contains("column walk"),
            "{msg}"
        );
    }
    // Stable across runs.
    let again = sarif(&make(), &|_| "warning");
    let prints = |l: &Value| -> Vec<Value> {
        l["runs"][0]["results"].as_array().unwrap().iter().map(|r| r["partialFingerprints"].clone()).collect()
    };
    assert_eq!(prints(&log), prints(&again));
    assert_eq!(log["runs"][0]["automationDetails"]["id"], "coalprof/sm_80/");
}

#[test]
fn lines_sarif_on_the_fixture_reports_validates() {
    let Some(python) = tool_path("lines_sarif_on_the_fixture_reports_validates", ".tools/sarif/bin/python") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for stem in ["bwd29-self-join-MiSTIC_profileHiggs.out_2022.4.0", "panjd123-cutlass_report80_2024.1.1"] {
        let out = dir.path().join(format!("{stem}.sarif"));
        coalprof()
            .args(["lines", "--format", "json", "--sarif"])
            .arg(&out)
            .arg(fixture(&format!("ncu-rep/{stem}.ncu-rep")))
            .assert()
            .success();
        let (ok, text) = validate(&python, &out);
        assert!(ok, "{stem}: {text}");
        // Both are A100 reports: SMRevision 0x80000.
        let log: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        assert_eq!(log["runs"][0]["automationDetails"]["id"], "coalprof/sm_80/", "{stem}");
    }
}
