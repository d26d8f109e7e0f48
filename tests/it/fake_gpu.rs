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
        FakeGpu::with_patterns(test, &["stride"])
    }

    /// A fake GPU whose ncu reports the model's counters for every variant of `patterns`.
    fn with_patterns(test: &str, patterns: &[&str]) -> Option<FakeGpu> {
        let nvcc = real_nvcc(test)?;
        let dir = tempfile::tempdir().unwrap();
        let mut counters = serde_json::Map::new();
        for p in patterns {
            for (variant, c) in model_counters(p).as_object().unwrap() {
                assert!(counters.insert(variant.clone(), c.clone()).is_none(), "variant `{variant}` twice");
            }
        }
        std::fs::write(dir.path().join("counters.json"), Value::Object(counters).to_string()).unwrap();
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
        self.run_with(&["--pattern", "stride"], env)
    }

    /// `coalprof run ARGS… --backend ncu` on the fake GPU, with extra environment.
    fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
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
        cmd.arg("run")
            .args(args)
            .args(["--backend", "ncu", "--size", SIZE, "--format", "json", "--out"])
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

/// The fake ncu's log: one line when a call starts (`start`), one when a profiling run ends
/// (`event: end`, with its `start` and `end`).
fn read_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap().lines().map(|l| json(l.as_bytes())).collect()
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

/// Four GPUs of two architectures, as nvidia-smi lists them.
const FOUR_GPUS: &str = "\
0, NVIDIA A100-SXM4-80GB, 8.0, 81920, 570.124.06, GPU-a100a000-0000-4000-8000-000000000000
1, NVIDIA A100-SXM4-80GB, 8.0, 81920, 570.124.06, GPU-a100a000-0000-4000-8000-000000000001
2, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-h200a000-0000-4000-8000-000000000002
3, NVIDIA H200, 9.0, 143771, 570.124.06, GPU-h200a000-0000-4000-8000-000000000003";

const FOUR_PATTERNS: [&str; 4] = ["stride", "offset", "coalesced", "vector"];

fn uuid_arch(uuid: &str) -> &'static str {
    if uuid.starts_with("GPU-a100") {
        "sm_80"
    } else {
        "sm_90"
    }
}

/// The profiling runs in the log (argv with `--export`): (start line, end line).
fn profiling_runs(log: &[Value]) -> Vec<&Value> {
    let exports = |l: &&Value| l["argv"].as_array().unwrap().iter().any(|a| a == "--export");
    log.iter().filter(exports).filter(|l| l["event"] == "end").collect()
}

/// The pattern a profiling run ran: its program's file name.
fn program_of(run: &Value) -> String {
    let argv: Vec<&str> = run["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
    argv.iter().find(|a| a.contains("/kernels/build/")).unwrap().to_string()
}

#[test]
fn fake_gpu_four_gpus_of_two_archs_profile_four_pinned_children_at_once() {
    let test = "fake_gpu_four_gpus_of_two_archs_profile_four_pinned_children_at_once";
    let Some(gpu) = FakeGpu::with_patterns(test, &FOUR_PATTERNS) else { return };
    let env = [("FAKE_SMI_GPUS", FOUR_GPUS), ("FAKE_NCU_SLEEP", "0.25")];
    let out = gpu.run_with(&["--pattern", &FOUR_PATTERNS.join(","), "--gpus", "all"], &env);
    assert!(out.status.success(), "{}", stderr(&out));

    // Four ncu processes, each pinned to its own GPU by UUID with its own TMPDIR, all running
    // at once: every one started before any one ended.
    let log = read_log(&gpu.log());
    let runs = profiling_runs(&log);
    assert_eq!(runs.len(), 4, "{log:?}");
    let uuids: std::collections::BTreeSet<&str> =
        runs.iter().map(|r| r["env"]["CUDA_VISIBLE_DEVICES"].as_str().unwrap()).collect();
    assert_eq!(uuids.len(), 4, "{uuids:?}");
    assert!(uuids.iter().all(|u| FOUR_GPUS.contains(u)), "pinned by UUID: {uuids:?}");
    let tmpdirs: std::collections::BTreeSet<&str> = runs.iter().map(|r| r["env"]["TMPDIR"].as_str().unwrap()).collect();
    assert_eq!(tmpdirs.len(), 4, "{tmpdirs:?}");
    let last_start = runs.iter().map(|r| r["start"].as_f64().unwrap()).fold(f64::MIN, f64::max);
    let first_end = runs.iter().map(|r| r["end"].as_f64().unwrap()).fold(f64::MAX, f64::min);
    assert!(
        last_start < first_end,
        "the four ncu runs did not overlap: last start {last_start}, first end {first_end}"
    );
    // Each GPU ran the build of its own architecture.
    for r in &runs {
        let arch = uuid_arch(r["env"]["CUDA_VISIBLE_DEVICES"].as_str().unwrap());
        assert!(program_of(r).contains(&format!("/kernels/build/{arch}/")), "{}", program_of(r));
    }

    // One run whose rows name their GPU; measured equals predicted on every one of them.
    let results = json(&out.stdout);
    assert_eq!(results["provenance"]["gpu"], "NVIDIA A100-SXM4-80GB, NVIDIA H200");
    let rows = results["rows"].as_array().unwrap();
    let patterns: Vec<&str> = rows.iter().map(|r| r["pattern"].as_str().unwrap()).collect();
    let mut order = patterns.clone();
    order.dedup();
    assert_eq!(order, FOUR_PATTERNS, "rows in the order asked for, whichever GPU finished first");
    for r in rows {
        let place = &r["placement"];
        let uuid = place["uuid"].as_str().unwrap();
        assert_eq!(place["arch"], uuid_arch(uuid), "{r}");
        assert_eq!(place["gpu"], if uuid_arch(uuid) == "sm_80" { "NVIDIA A100-SXM4-80GB" } else { "NVIDIA H200" });
        assert_eq!(r["metrics"]["global_load_sectors_per_request"], r["predicted"]["global_load_sectors_per_request"]);
    }
    let run = gpu.run_dir();
    coalprof().arg("check").arg(&run).assert().code(0);
    // `compare` of the one run: one column group per GPU model.
    let cmp = coalprof().args(["compare", "--format", "json"]).arg(&run).ok_stdout();
    let labels: Vec<String> =
        json(&cmp)["inputs"].as_array().unwrap().iter().map(|i| i["label"].as_str().unwrap().to_string()).collect();
    assert_eq!(labels.len(), 2, "{labels:?}");
    assert!(labels.contains(&"NVIDIA H200 sm_90".to_string()), "{labels:?}");
}

#[test]
fn fake_gpu_a_gpu_whose_ncu_dies_costs_only_its_own_patterns() {
    let test = "fake_gpu_a_gpu_whose_ncu_dies_costs_only_its_own_patterns";
    let Some(gpu) = FakeGpu::with_patterns(test, &FOUR_PATTERNS) else { return };
    let bad = "GPU-a100a000-0000-4000-8000-000000000001";
    let env = [("FAKE_SMI_GPUS", FOUR_GPUS), ("FAKE_NCU_SLEEP", "0.1"), ("FAKE_NCU_DIE_ON", bad)];
    let out = gpu.run_with(&["--pattern", &FOUR_PATTERNS.join(","), "--gpus", "all"], &env);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("on GPU 1 (NVIDIA A100-SXM4-80GB)"), "{}", stderr(&out));
    let log = read_log(&gpu.log());
    let attempted_on_bad: Vec<String> = (log.iter())
        .filter(|l| l["event"].is_null() && l["env"]["CUDA_VISIBLE_DEVICES"] == bad)
        .filter(|l| l["argv"].as_array().unwrap().iter().any(|a| a == "--export"))
        .map(program_of)
        .collect();
    assert!(!attempted_on_bad.is_empty());
    let results = json(&std::fs::read(gpu.run_dir().join("results.json")).unwrap());
    let measured: std::collections::BTreeSet<&str> =
        results["rows"].as_array().unwrap().iter().map(|r| r["pattern"].as_str().unwrap()).collect();
    for p in FOUR_PATTERNS {
        let lost = attempted_on_bad.iter().any(|prog| prog.ends_with(&format!("/{}", p.replace('-', "_"))));
        assert_eq!(measured.contains(p), !lost, "{p}: measured {measured:?}, lost on GPU 1: {attempted_on_bad:?}");
    }
}

#[test]
fn fake_gpu_gpus_that_nvidia_smi_does_not_list_are_a_usage_error() {
    let Some(gpu) = FakeGpu::new("fake_gpu_gpus_that_nvidia_smi_does_not_list") else { return };
    let out = gpu.run_with(&["--pattern", "stride", "--gpus", "0,7"], &[("FAKE_SMI_GPUS", FOUR_GPUS)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`--gpus 7`: nvidia-smi lists no such GPU (it lists 0, 1, 2, 3)"),
        "{}",
        stderr(&out)
    );
}

/// Ctrl-C while four GPUs profile at once: every ncu's group is killed, the run stops with
/// exit 130 and one `error: interrupted` line (no GPU reports a failure of its own, none goes on
/// to a next pattern), and the run folder holds what finished: the same loop as one GPU.
#[test]
fn fake_gpu_ctrl_c_under_gpus_stops_every_gpu_with_exit_130() {
    let test = "fake_gpu_ctrl_c_under_gpus_stops_every_gpu_with_exit_130";
    let Some(gpu) = FakeGpu::with_patterns(test, &FOUR_PATTERNS) else { return };
    let fakes = root().join("tests/fake_gpu");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("coalprof"))
        .env("PATH", format!("{}:/usr/bin:/bin", fakes.display()))
        .env("COALPROF_NCU", fakes.join("ncu"))
        .env("COALPROF_NVCC", &gpu.nvcc)
        .env("COALPROF_PLAN_ONLY", "1")
        .env("FAKE_NCU_COUNTERS", gpu.dir.path().join("counters.json"))
        .env("FAKE_NCU_LOG", gpu.log())
        .env("FAKE_SMI_GPUS", FOUR_GPUS)
        .env("FAKE_NCU_SLEEP", "30")
        .args(["run", "--pattern", &FOUR_PATTERNS.join(","), "--gpus", "all", "--backend", "ncu", "--size", SIZE])
        .arg("--out")
        .arg(gpu.out())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the four ncu processes are profiling (each logs its start).
    let started = std::time::Instant::now();
    let profiling = || {
        let log = std::fs::read_to_string(gpu.log()).unwrap_or_default();
        log.lines().filter(|l| l.contains("--export")).count()
    };
    while profiling() < 4 {
        assert!(started.elapsed().as_secs() < 120, "the four ncu runs never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be interrupted");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: sending SIGINT to a child we own.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let sent = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(sent.elapsed().as_secs() < 10, "Ctrl-C took {:?}", sent.elapsed());
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line, the interruption: {err}");
    assert!(errors[0].contains("interrupted"), "{err}");
    assert_eq!(profiling(), 4, "no GPU went on to another pattern after Ctrl-C");
    assert!(gpu.run_dir().join("results.json").is_file(), "the run folder is saved");
}

/// The reuse pattern measured end to end on the fake GPU: the real executable's plan (three
/// grid shapes, the softmax's block of 256), the verified join of all its launches, the derived
/// `dram_bytes` equal to the model's, and its log–log plot with measured points in the run folder.
#[test]
fn fake_gpu_runs_the_reuse_pattern_joined_derived_and_plotted() {
    let test = "fake_gpu_runs_the_reuse_pattern_joined_derived_and_plotted";
    let Some(gpu) = FakeGpu::with_patterns(test, &["reuse"]) else { return };
    let out = gpu.run_with(&["--pattern", "reuse"], &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results = json(&out.stdout);
    let rows = rows_by_variant(&results);
    assert_eq!(rows.len(), 3 * 4 + 2, "three lengths of naive (3 kernels) and flash, direct, staged_once");
    for (variant, row) in &rows {
        assert_eq!(row["source"], "measured", "{variant}");
        let m = &row["metrics"];
        let sum = m["dram_bytes_read"].as_f64().unwrap() + m["dram_bytes_write"].as_f64().unwrap();
        assert_eq!(m["dram_bytes"].as_f64(), Some(sum), "{variant}: the formula over the report's counters");
        assert_eq!(m["dram_bytes"], row["predicted"]["dram_bytes"], "{variant}");
        assert!(row["findings"].is_null(), "{variant}: {}", row["findings"]);
    }
    assert_eq!(rows["naive_s128_softmax"]["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(rows["naive_s128_scores"]["grid"], serde_json::json!([2, 2, 1]));
    let svg = std::fs::read_to_string(gpu.run_dir().join("reuse.svg")).unwrap();
    assert!(svg.contains("DRAM bytes of one attention pass (measured vs predicted)"), "{svg}");
    assert_eq!(svg.matches("<circle").count(), 6 + 1, "3 lengths x (naive, flash) measured, and the legend's");
}
