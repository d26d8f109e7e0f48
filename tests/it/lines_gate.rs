//! The gate on source lines: a `[[gate]]` rule on `line_sectors_per_request` fails a
//! report where a line exceeds it (the line's value taken from ncu 2022.3's own source page),
//! passes one where it does not, names `file:line` and the access kind, and a baseline keys
//! lines by kernel, file, line and kind, so a line that moves is `new` + `missing`. The default
//! gate speaks on a real report that has per-instruction counters but no kernel ideal.

use std::path::Path;

use crate::util::{coalprof, fixture, json, OkStdout};

const STEM: &str = "NVIDIA-nsight-training_manual_nvtx_2022.3.0";

/// Sectors per request of the global loads of `line` on ncu's source page: its SASS rows whose
/// address space is global and operation a load, L2 theoretical sectors over instructions
/// executed (one request per warp-level execution).
fn ncu_sectors_per_request(line: &str) -> f64 {
    let csv =
        std::fs::read_to_string(fixture(&format!("ncu/2022/import_ncu2022_3_{STEM}_source_cuda_sass.csv"))).unwrap();
    // Each function's block has its own header (the columns differ between blocks).
    let mut header: Vec<&str> = Vec::new();
    let (mut current, mut sectors, mut requests) = (String::new(), 0.0, 0.0);
    for l in csv.lines() {
        let cells: Vec<&str> = l.split("\",\"").map(|c| c.trim_matches('"')).collect();
        if cells[0] == "Line No" {
            header = cells;
            continue;
        }
        if !cells[0].is_empty() {
            current = cells[0].to_string();
            continue;
        }
        let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
        if current == line && cells[col("Address Space")] == "Global" && cells[col("Access Operation")] == "Load" {
            let n = |name: &str| cells[col(name)].replace(',', "").parse::<f64>().unwrap();
            sectors += n("L2 Theoretical Sectors Global");
            requests += n("Instructions Executed");
        }
    }
    assert!(requests > 0.0, "line {line} has no global load on the source page");
    sectors / requests
}

fn rules(dir: &Path, body: &str) -> std::path::PathBuf {
    let p = dir.join("rules.toml");
    std::fs::write(&p, body).unwrap();
    p
}

#[test]
fn a_line_rule_fails_a_report_where_a_line_exceeds_it() {
    let spr = ncu_sectors_per_request("78");
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(&format!("ncu-rep/{STEM}.ncu-rep"));
    let tight = rules(
        dir.path(),
        &format!("[[gate]]\nmatch = \"check_results*\"\nmetric = \"line_sectors_per_request\"\nmax = {}\n", spr - 0.5),
    );
    // `--wide`: the table keeps whole names, whatever the width it would fit.
    let a = coalprof().args(["--wide", "check", "--rules"]).arg(&tight).arg(&report).assert().code(1);
    let out = String::from_utf8_lossy(&a.get_output().stdout).into_owned();
    assert!(out.contains("manual_nvtx.cu:78") && out.contains("FAIL"), "{out}");
    let loose = rules(
        dir.path(),
        &format!("[[gate]]\nmatch = \"check_results*\"\nmetric = \"line_sectors_per_request\"\nmax = {}\n", spr + 0.5),
    );
    let out = String::from_utf8(coalprof().args(["--wide", "check", "--rules"]).arg(&loose).arg(&report).ok_stdout())
        .unwrap();
    assert!(out.contains("manual_nvtx.cu:78") && out.contains("PASS"), "{out}");
    // Kernel rows are not checked against a line metric (no `skipped` noise).
    assert!(!out.lines().any(|l| l.contains("SKIPPED") && !l.contains(" @ ")), "{out}");
}

#[test]
fn a_baseline_keys_lines_so_a_moved_line_is_new_and_missing() {
    let dir = tempfile::tempdir().unwrap();
    let report = fixture(&format!("ncu-rep/{STEM}.ncu-rep"));
    let metrics = dir.path().join("metrics.toml");
    let builtin = std::fs::read_to_string(crate::util::root().join("metrics.toml")).unwrap();
    std::fs::write(
        &metrics,
        builtin + "\n[[gate]]\nmatch = \"*\"\nmetric = \"line_sectors_per_request\"\nregress = \"+5%\"\n",
    )
    .unwrap();
    let baseline = dir.path().join("baseline.json");
    coalprof()
        .arg("--metrics")
        .arg(&metrics)
        .args(["baseline", "update", "--baseline"])
        .arg(&baseline)
        .arg(&report)
        .assert()
        .success();
    let text = std::fs::read_to_string(&baseline).unwrap();
    let key = "manual_nvtx.cu:78 (global load)\"";
    assert!(text.contains(key), "the baseline keys the line: {text}");
    // Unchanged: the line passes against itself.
    let v = json(
        &coalprof()
            .arg("--metrics")
            .arg(&metrics)
            .args(["--format", "json", "check", "--baseline"])
            .arg(&baseline)
            .arg(&report)
            .ok_stdout(),
    );
    let verdict = |v: &serde_json::Value, suffix: &str| -> Vec<String> {
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["row"].as_str().unwrap().ends_with(suffix) && c["metric"] == "line_sectors_per_request")
            .map(|c| c["verdict"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(verdict(&v, "manual_nvtx.cu:78 (global load)"), ["pass"]);
    // The line "moved" (the baseline recorded it one line up): new here, missing there.
    std::fs::write(&baseline, text.replace(key, "manual_nvtx.cu:77 (global load)\"")).unwrap();
    let out = coalprof()
        .arg("--metrics")
        .arg(&metrics)
        .args(["--format", "json", "check", "--baseline"])
        .arg(&baseline)
        .arg(&report)
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(verdict(&v, "manual_nvtx.cu:78 (global load)"), ["new"]);
    assert_eq!(verdict(&v, "manual_nvtx.cu:77 (global load)"), ["missing"]);
}

/// A real report (ncu 2020.3, A100) with per-instruction counters, no line table and no kernel
/// counters for an ideal, where the default gate used to say `gate passed (4 skipped)`: with
/// no rules file it now warns (exit 0) on exactly the instructions `lines` shows above twice
/// their ideal sectors/request (`lines` itself is held to NVIDIA's `ncu_report` in
/// `lines.rs`), in the table, the annotations, JUnit and SARIF, and the kernel's own check
/// reads its ideal from the same counters instead of skipping; its stores, taken together, warn.
#[test]
fn the_default_gate_warns_on_a_real_report_without_kernel_ideals() {
    let report = fixture("ncu-rep/bwd29-self-join-MiSTIC_profileBIGCROSS3.out_2020.3.0.ncu-rep");
    let lines = json(&coalprof().args(["--format", "json", "lines"]).arg(&report).ok_stdout());
    let mut wasteful: Vec<String> = (lines["rows"].as_array().unwrap().iter())
        .filter(|r| match (r["sectors"].as_f64(), r["ideal_sectors"].as_f64()) {
            (Some(s), Some(i)) => i > 0.0 && s > 2.0 * i,
            _ => false,
        })
        .map(|r| format!("+{:#x} ({})", r["pc_offset"].as_u64().unwrap(), r["op"].as_str().unwrap()))
        .collect();
    wasteful.sort();
    assert!(!wasteful.is_empty(), "the fixture has instructions at 7x their ideal: {lines}");

    let dir = tempfile::tempdir().unwrap();
    let (junit, sarif) = (dir.path().join("junit.xml"), dir.path().join("check.sarif"));
    let out = coalprof()
        .args(["--wide", "check", "--github", "--junit"])
        .arg(&junit)
        .arg("--sarif")
        .arg(&sarif)
        .arg(&report)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("coalprof check: gate passed with warnings")), "{stdout}");
    // The kernel's stores taken together (every store instruction's sectors over their ideal,
    // summed) are above twice their ideal too: the one kernel-level warning.
    let stores = |k: &str| -> f64 {
        (lines["rows"].as_array().unwrap().iter())
            .filter(|r| r["op"] == "global store")
            .map(|r| r[k].as_f64().unwrap())
            .sum()
    };
    let store_over_ideal = stores("sectors") / stores("ideal_sectors");
    assert!(store_over_ideal > 2.0, "{store_over_ideal}");
    let kernel_warnings: Vec<&str> = stdout.lines().filter(|l| l.starts_with("WARN ") && !l.contains(" @ ")).collect();
    assert_eq!(kernel_warnings.len(), 1, "{stdout}");
    assert!(
        kernel_warnings[0].contains("global_store_sectors_over_ideal")
            && kernel_warnings[0].contains(&format!("{:.3}", store_over_ideal).trim_end_matches('0').to_string()),
        "{}: {store_over_ideal}",
        kernel_warnings[0]
    );
    // Every other warning is a per-line one, on one of those instructions, and each has one.
    let mut warned: Vec<String> = (stdout.lines().filter(|l| l.starts_with("WARN ") && l.contains(" @ ")))
        .map(|l| {
            assert!(l.contains("line_sectors_over_ideal"), "{l}");
            let at = l.find(" @ ").unwrap() + 3;
            l[at..].split(")").next().unwrap().to_string() + ")"
        })
        .collect();
    warned.sort();
    assert_eq!(warned, wasteful, "{stdout}");
    assert_eq!(stdout.lines().filter(|l| l.starts_with("::warning ")).count(), wasteful.len() + 1, "{stdout}");
    let kernel = (stdout.lines())
        .find(|l| l.contains("global_load_sectors_over_ideal"))
        .unwrap_or_else(|| panic!("the kernel is checked: {stdout}"));
    assert!(kernel.starts_with("PASS "), "{kernel}");

    let xml = std::fs::read_to_string(&junit).unwrap();
    for w in &wasteful {
        assert!(xml.contains(&format!("@ {w}\" name=\"line_sectors_over_ideal\"")), "{w}: {xml}");
    }
    let log: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let mut placed: Vec<String> = (log["runs"][0]["results"].as_array().unwrap().iter())
        .filter(|r| r["level"] == "warning")
        .map(|r| {
            let name = r["locations"][0]["logicalLocations"][0]["name"].as_str().unwrap();
            format!("{name} ({})", r["properties"]["op"].as_str().unwrap())
        })
        .collect();
    placed.sort();
    for w in &wasteful {
        assert!(placed.contains(w), "{w} is a SARIF warning: {placed:?}");
    }
}
