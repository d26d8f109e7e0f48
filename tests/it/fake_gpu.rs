//! `coalprof run --backend ncu` end to end without a GPU, through seams whose names say they
//! are fakes (`tests/fake_gpu/`): a fake `nvidia-smi` that answers as an H200, the real `nvcc`
//! building the real pattern executable, the executable's plan mode (`COALPROF_PLAN_ONLY=1`:
//! its launch manifest, and the times of a GPU at 4.8 TB/s, without a driver), and a fake
//! `ncu` that prints ncu's `==PROF==` lines and writes a real `.ncu-rep` whose counters are the
//! address model's, so every number is known. What runs for real is everything of coalprof's:
//! the ncu argument vector, reading the report, the verified join to the manifest, the timing
//! run, the derivation, the comparison with the model, the saved run folder and `check`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{coalprof, json, real_nvcc, root, OkStdout};

const SIZE: &str = "1M";

/// A machine with one fake H200: the folder with the fakes first on PATH, the real nvcc.
struct FakeGpu {
    dir: tempfile::TempDir,
    nvcc: PathBuf,
}

impl FakeGpu {
    fn new(test: &str) -> Option<FakeGpu> {
        let nvcc = real_nvcc(test)?;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("counters.json"), model_counters("stride").to_string()).unwrap();
        Some(FakeGpu { dir, nvcc })
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("ncu.log")
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("runs")
    }

    /// `coalprof run --pattern stride --backend ncu` on the fake GPU, with extra environment.
    fn run(&self, env: &[(&str, &str)]) -> std::process::Output {
        let fakes = root().join("tests/fake_gpu");
        let mut cmd = coalprof();
        cmd.env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
            .env("COALPROF_NCU", fakes.join("ncu"))
            .env("COALPROF_NVCC", &self.nvcc)
            .env("COALPROF_PLAN_ONLY", "1")
            .env("FAKE_NCU_COUNTERS", self.dir.path().join("counters.json"))
            .env("FAKE_NCU_LOG", self.log());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(["run", "--pattern", "stride", "--backend", "ncu", "--size", SIZE, "--format", "json", "--out"])
            .arg(self.out())
            .output()
            .unwrap()
    }

    /// The one run folder written so far.
    fn run_dir(&self) -> PathBuf {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.out()).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(dirs.len(), 1, "{dirs:?}");
        dirs.remove(0)
    }
}

/// The address model's raw counters of every variant of `pattern`, under their ncu names: what
/// the fake ncu reports, so the measured rows must equal the predicted ones.
fn model_counters(pattern: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .args(["run", "--pattern", pattern, "--backend", "model", "--format", "json", "--size", SIZE, "--out"])
        .arg(dir.path())
        .ok_stdout();
    let catalogue = coalprof::metrics::Catalogue::builtin();
    let mut by_variant = serde_json::Map::new();
    for row in json(&out)["rows"].as_array().unwrap() {
        let metrics = row["metrics"].as_object().unwrap();
        let ncu: serde_json::Map<String, Value> = (catalogue.raw.iter())
            .filter_map(|(key, raw)| Some((raw.ncu.clone(), metrics.get(key)?.clone())))
            .collect();
        by_variant.insert(row["variant"].as_str().unwrap().to_string(), Value::Object(ncu));
    }
    Value::Object(by_variant)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn rows_by_variant(results: &Value) -> BTreeMap<String, Value> {
    (results["rows"].as_array().unwrap().iter())
        .map(|r| (r["variant"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

#[test]
fn fake_gpu_run_measures_joins_times_derives_and_saves() {
    let Some(gpu) = FakeGpu::new("fake_gpu_run_measures_joins_times_derives_and_saves") else { return };
    let out = gpu.run(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = json(&out.stdout);
    assert_eq!(results["provenance"]["backend"], "ncu");
    assert_eq!(results["provenance"]["gpu"], "NVIDIA H200");
    assert_eq!(results["provenance"]["ncu_version"], "2025.3.1.0");

    // The ncu argument vector: the catalogue's metrics, ncu's cache and clock defaults, the
    // kernels of the pattern by function name, the report in the run folder.
    let log: Vec<Value> = std::fs::read_to_string(gpu.log()).unwrap().lines().map(|l| json(l.as_bytes())).collect();
    let profile = log.iter().find(|l| l["argv"].as_array().unwrap().iter().any(|a| a == "--export")).unwrap();
    let argv: Vec<&str> = profile["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    let arg = |name: &str| argv[argv.iter().position(|a| *a == name).unwrap() + 1];
    let catalogue = coalprof::metrics::Catalogue::builtin();
    let asked: Vec<&str> = arg("--metrics").split(',').collect();
    for raw in catalogue.raw.values() {
        assert!(asked.contains(&raw.ncu.as_str()), "{} is not collected: {asked:?}", raw.ncu);
    }
    assert_eq!((arg("--cache-control"), arg("--clock-control")), ("all", "base"));
    assert_eq!((arg("--kernel-name-base"), arg("--kernel-name")), ("function", "regex:^(stride_copy)$"));
    let run = gpu.run_dir();
    assert_eq!(Path::new(arg("--export")).parent().unwrap(), run);

    // The progress lines were read: one pass count per launch.
    let passes = results["provenance"]["settings"]["replay_passes.stride"].as_array().unwrap();
    assert_eq!(passes.len(), 8);
    assert_eq!(passes[0], serde_json::json!(["stride_copy", 9]));

    // The join: every variant, in the catalogue's order, measured, with its prediction.
    let rows = rows_by_variant(&results);
    assert_eq!(rows.len(), 8);
    let order: Vec<&str> = results["rows"].as_array().unwrap().iter().map(|r| r["variant"].as_str().unwrap()).collect();
    assert_eq!(order[..3], ["stride_1", "stride_2", "stride_4"]);
    for (variant, row) in &rows {
        assert_eq!(row["source"], "measured", "{variant}");
        let (m, p) = (&row["metrics"], &row["predicted"]);
        // The derivation: the formulas of metrics.toml over the report's counters.
        let spr = m["global_load_sectors"].as_f64().unwrap() / m["global_load_requests"].as_f64().unwrap();
        assert_eq!(m["global_load_sectors_per_request"].as_f64(), Some(spr), "{variant}");
        assert_eq!(m["global_load_sectors_per_request"], p["global_load_sectors_per_request"], "{variant}");
        assert_eq!(m["dram_amplification"], p["dram_amplification"], "{variant}");
        assert!(row["findings"].is_null(), "{variant}: the counters are the model's: {}", row["findings"]);
        // Timing: the plan-mode GPU moves the algorithm's bytes at 4.8 TB/s, the fake's peak.
        let bytes = m["algorithm_bytes_read"].as_f64().unwrap() + m["algorithm_bytes_written"].as_f64().unwrap();
        let t = m["event_time"].as_f64().unwrap();
        assert!((t - bytes / 4.8e12).abs() < 1e-12, "{variant}: event_time {t}");
        assert!((m["peak_bandwidth"].as_f64().unwrap() - 4.8e12).abs() < 1e3, "{variant}");
        assert!((m["peak_bandwidth_fraction"].as_f64().unwrap() - 1.0).abs() < 1e-9, "{variant}");
    }
    assert_eq!(rows["stride_2"]["metrics"]["global_load_sectors_per_request"], 8.0);

    // The saved run folder.
    for f in
        ["results.json", "results.md", "run.json", "stride.ncu-rep", "stride.manifest.jsonl", "stride.timing.jsonl"]
    {
        assert!(run.join(f).is_file(), "{f} is not in {}", run.display());
    }
    assert_eq!(json(&std::fs::read(run.join("results.json")).unwrap())["rows"], results["rows"]);

    // `check` on it: passes without limits, fails a limit stride_2 exceeds.
    coalprof().arg("check").arg(&run).assert().code(0);
    let rules = gpu.dir.path().join("rules.toml");
    std::fs::write(&rules, "[[gate]]\nmatch = \"stride/*\"\nmetric = \"global_load_sectors_per_request\"\nmax = 4.5\n")
        .unwrap();
    let checked = coalprof().arg("check").arg(&run).arg("--rules").arg(&rules).output().unwrap();
    assert_eq!(checked.status.code(), Some(1), "{}", String::from_utf8_lossy(&checked.stdout));
    assert!(String::from_utf8_lossy(&checked.stdout).contains("stride/stride_2"));
}

#[test]
fn fake_gpu_a_counter_off_the_model_is_a_finding_with_both_numbers_and_the_tolerance() {
    let Some(gpu) = FakeGpu::new("fake_gpu_a_counter_off_the_model") else { return };
    let out = gpu.run(&[("FAKE_NCU_SCALE", "stride_2:l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum:1.25")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let rows = rows_by_variant(&json(&out.stdout));
    let findings = rows["stride_2"]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{findings:?}");
    assert_eq!(
        findings[0],
        "measured 10.00 global_load_sectors_per_request, predicted 8.00 (+25%, tolerance ±2%): is the base misaligned, or are lanes inactive?"
    );
    assert!(findings[1].as_str().unwrap().starts_with("measured 0.40 global_load_sector_efficiency, predicted 0.50"));
    assert!(rows["stride_4"]["findings"].is_null(), "only the variant whose counter is off");
}

#[test]
fn fake_gpu_a_missing_or_reordered_launch_is_an_error_not_a_shift() {
    let Some(gpu) = FakeGpu::new("fake_gpu_a_missing_or_reordered_launch") else { return };
    let out = gpu.run(&[("FAKE_NCU_DROP", "1")]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("ncu profiled 7 launches but the manifest lists 8"), "{e}");
    let out = gpu.run(&[("FAKE_NCU_SWAP", "1")]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("launch 0: ncu profiled `stride_copy"), "{e}");
    assert!(e.contains("(variant `stride_1`)"), "{e}");
}
