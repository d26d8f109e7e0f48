//! `--backend sim`: the built-in kernels executed in GPGPU-Sim (built by `scripts/install-sim.sh`)
//! against the address model, the model's continuous oracle: for a subset of every pattern's
//! variants at a small size, the simulated counters must equal the predicted ones exactly, as
//! `../shared/docs/gpgpu-sim.md` found for every variant (`scripts/bench-sim.sh` runs all of them, in both simulator modes).

use crate::util::{coalprof, json, real_nvcc, root, skipped, OkStdout};

/// The counters the simulator and the model agree on exactly: requests and sectors of global
/// loads and stores, shared instructions and wavefronts (and so conflicts).
const EXACT: &[&str] = &[
    "global_load_requests",
    "global_load_sectors",
    "global_store_requests",
    "global_store_sectors",
    "shared_load_instructions",
    "shared_load_wavefronts",
    "shared_load_bank_conflicts",
    "shared_store_instructions",
    "shared_store_wavefronts",
    "global_load_sectors_per_request",
    "global_store_sectors_per_request",
    "shared_load_wavefronts_per_instruction",
];

/// Whether the simulator and its toolkit are installed, saying loudly when not.
fn simulator(test: &str) -> bool {
    let need = [root().join(".tools/gpgpu-sim/lib/libcudart.so"), root().join(".tools/cuda11/bin/nvcc")];
    match need.iter().find(|p| !p.exists()) {
        Some(p) => {
            skipped(test, &format!("{} is missing; run scripts/install-sim.sh (scripts/test.sh does)", p.display()));
            false
        }
        None => true,
    }
}

/// `run --backend sim` of `variants` of `patterns` at 16 KiB: the JSON results.
fn simulate(patterns: &str, variants: &str) -> serde_json::Value {
    simulate_in(patterns, variants, "functional")
}

/// [`simulate`] in the simulator's `mode` (`functional` or `timing`).
fn simulate_in(patterns: &str, variants: &str, mode: &str) -> serde_json::Value {
    let out_dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .args([
            "--format",
            "json",
            "run",
            "--backend",
            "sim",
            "--sim-mode",
            mode,
            "--size",
            "16K",
            "--pattern",
            patterns,
        ])
        .args(["--variant", variants, "--out"])
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    // The run folder records what simulated it.
    let run = std::fs::read_dir(out_dir.path()).unwrap().next().unwrap().unwrap().path();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(record["backend"], "sim");
    assert_eq!(record["config"], "SM7_QV100");
    assert_eq!(record["sim_mode"], mode);
    assert!(record["simulator"].as_str().unwrap().contains("GPGPU-Sim"), "{record}");
    assert_unmeasured_said_once(&results);
    results
}

/// The counters GPGPU-Sim never gives (no L2, DRAM or time model: `../shared/docs/gpgpu-sim.md`)
/// are one notice, `not measured by GPGPU-Sim`, however many patterns ran; nothing is said to be
/// missing from the input (a counter it measures but a kernel lacks is an access that never ran).
fn assert_unmeasured_said_once(results: &serde_json::Value) {
    let notices: Vec<&str> = results["notices"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    let by_sim: Vec<&&str> = notices.iter().filter(|n| n.starts_with("not measured by GPGPU-Sim: ")).collect();
    assert_eq!(by_sim.len(), 1, "{notices:?}");
    for never in ["dram_bytes_read", "dram_bytes_write", "l2_read_sectors", "duration"] {
        assert!(by_sim[0].contains(never), "{never}: {notices:?}");
    }
    assert!(!notices.iter().any(|n| n.contains("not in the input")), "{notices:?}");
}

/// Every row simulated, every counter of [`EXACT`] the model predicts present and equal, no
/// finding, and exactly the variants asked for.
fn assert_simulated_equals_predicted(results: &serde_json::Value, variants: &str) {
    let rows = results["rows"].as_array().unwrap();
    let mut names: Vec<&str> = rows.iter().map(|r| r["variant"].as_str().unwrap()).collect();
    let mut asked: Vec<&str> = variants.split(',').collect();
    names.sort_unstable();
    asked.sort_unstable();
    assert_eq!(names, asked);
    let mut compared = 0;
    for r in rows {
        let id = format!("{}/{}", r["pattern"].as_str().unwrap(), r["variant"].as_str().unwrap());
        assert_eq!(r["source"], "simulated", "{id}");
        let predicted = r["predicted"].as_object().unwrap_or_else(|| panic!("{id} has no prediction"));
        for key in EXACT {
            let Some(p) = predicted.get(*key) else { continue };
            let s = &r["metrics"][*key];
            assert_eq!(s.as_f64(), p.as_f64(), "{id}: simulated {key} {s}, predicted {p}");
            compared += 1;
        }
        assert!(r["findings"].as_array().is_none_or(|f| f.is_empty()), "{id}: {}", r["findings"]);
    }
    assert!(compared >= 3 * rows.len(), "only {compared} counters compared");
}

#[test]
fn streaming_and_gather_kernels_simulated_equal_the_model() {
    if !simulator("streaming_and_gather_kernels_simulated_equal_the_model") {
        return;
    }
    // offset_1: one sector more than ideal; stride_32: 32; one_word: 1; random_fp32 needs the
    // simulator's 64-bit immediates (without the fix its bounds test is always false).
    let variants = "fp32,offset_1,stride_32,one_word,random_fp32";
    let results = simulate("coalesced,offset,stride,broadcast,gather", variants);
    assert_simulated_equals_predicted(&results, variants);
}

/// The reuse lesson executed: attention's scores, softmax and P·V, the one-kernel flash form
/// with its shared-memory tiles, and the staged copy, each counted by the simulator as the
/// model predicts (the smallest S at the simulator's size).
#[test]
fn reuse_kernels_simulated_equal_the_model() {
    if !simulator("reuse_kernels_simulated_equal_the_model") {
        return;
    }
    let variants = "naive_s64_scores,naive_s64_softmax,naive_s64_pv,flash_s64,direct,staged_once";
    let results = simulate("reuse", variants);
    assert_simulated_equals_predicted(&results, variants);
}

#[test]
fn vector_layout_and_shared_kernels_simulated_equal_the_model() {
    if !simulator("vector_layout_and_shared_kernels_simulated_equal_the_model") {
        return;
    }
    // float4_offset16: 17 sectors; nhd vs hdn: the lesson's 2 vs 32; column_32x32: 32-way
    // conflicts; transpose_32x33: the padding; row_sums: lanes a row apart.
    let variants = "float4_offset16,nhd_fp16,hdn_fp16,column_32x32,transpose_32x33,row_sums";
    let results = simulate("vector,kv-layout,bank-conflicts,column", variants);
    assert_simulated_equals_predicted(&results, variants);
    let spr = |v: &str| {
        let r = results["rows"].as_array().unwrap().iter().find(|r| r["variant"] == v).unwrap();
        r["metrics"]["global_load_sectors_per_request"].as_f64().unwrap()
    };
    assert_eq!((spr("nhd_fp16"), spr("hdn_fp16")), (2.0, 32.0), "the lesson: 2 vs 32 sectors/request in fp16");
}

#[test]
fn the_functional_mode_counts_what_the_timing_mode_counts() {
    if !simulator("the_functional_mode_counts_what_the_timing_mode_counts") {
        return;
    }
    // Global loads one sector off (offset_1) and shared stores with 32-way conflicts
    // (transpose_32x32): every per-line counter the two modes write must be equal.
    let variants = "offset_1,transpose_32x32";
    let rows = |mode| {
        let r = simulate_in("offset,bank-conflicts", variants, mode);
        assert_simulated_equals_predicted(&r, variants);
        r["rows"].as_array().unwrap().iter().map(|r| (r["variant"].clone(), r["metrics"].clone())).collect::<Vec<_>>()
    };
    let (functional, timing) = (rows("functional"), rows("timing"));
    assert_eq!(functional.len(), 2);
    assert_eq!(functional, timing);
}

#[test]
fn a_missing_simulator_is_exit_4_naming_the_setup_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", dir.path().join("none"))
        .args(["run", "--backend", "sim", "--pattern", "coalesced", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{e}");
    assert!(e.contains("coalprof setup sim"), "{e}");
    assert_eq!(e.lines().filter(|l| l.starts_with("error: ")).count(), 1, "{e}");
}

#[test]
fn variant_names_are_checked_and_need_the_sim_or_model_backend() {
    let out =
        coalprof().args(["run", "--backend", "sim", "--pattern", "stride", "--variant", "stride_3"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("no variant `stride_3`") && e.contains("stride_32"), "{e}");
    let out =
        coalprof().args(["run", "--backend", "ncu", "--pattern", "stride", "--variant", "stride_2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `examples/sim/app.cu` built for the simulator (`-cudart shared`, or nvcc's default static
/// runtime when `static_runtime`) into `dir`.
fn build_example(dir: &std::path::Path, static_runtime: bool) -> std::path::PathBuf {
    let exe = dir.join(if static_runtime { "app-static" } else { "app" });
    let mut nvcc = std::process::Command::new(root().join(".tools/cuda11/bin/nvcc"));
    nvcc.args(["-ccbin", "g++-11", "-arch=sm_70", "-lineinfo", "-o"]).arg(&exe).arg(root().join("examples/sim/app.cu"));
    if !static_runtime {
        nvcc.args(["-cudart", "shared"]);
    }
    let out = nvcc.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

#[test]
fn profile_sim_gives_per_kernel_rows_and_lines_names_the_strided_line() {
    if !simulator("profile_sim_gives_per_kernel_rows_and_lines_names_the_strided_line") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = build_example(dir.path(), false);
    let runs = dir.path().join("runs");
    let out = coalprof()
        .args(["--format", "json", "profile", "--backend", "sim", "--out"])
        .arg(&runs)
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    assert_eq!(results["provenance"]["backend"], "sim");
    assert_unmeasured_said_once(&results);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("not in the input"), "{stderr}");
    let rows = results["rows"].as_array().unwrap();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["kernel"].as_str().unwrap().starts_with(name))
            .unwrap_or_else(|| panic!("no {name}: {rows:?}"))
    };
    for (kernel, spr) in [("strided_copy(", 32.0), ("coalesced_copy(", 4.0)] {
        let r = row(kernel);
        assert_eq!(r["source"], "simulated");
        assert_eq!(r["launches"], 1);
        assert_eq!(r["metrics"]["global_load_sectors_per_request"].as_f64(), Some(spr), "{kernel}");
        assert_eq!(r["metrics"]["global_load_requests"].as_f64(), Some(4096.0 / 32.0), "{kernel}: one per warp");
    }
    // `lines` on the run folder: the strided load is the worst line, named by file and line.
    let strided_line = std::fs::read_to_string(root().join("examples/sim/app.cu"))
        .unwrap()
        .lines()
        .position(|l| l.contains("in[static_cast<size_t>(i) * stride]"))
        .unwrap()
        + 1;
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
    let lines = json(&coalprof().args(["--format", "json", "lines"]).arg(&run).ok_stdout());
    let worst = &lines["rows"][0];
    assert_eq!(worst["kernel"].as_str().map(|k| k.starts_with("strided_copy(")), Some(true), "{worst}");
    assert_eq!(
        (worst["path"].as_str(), worst["line"].as_u64()),
        (Some("examples/sim/app.cu"), Some(strided_line as u64))
    );
    assert_eq!(worst["op"], "global load");
    assert_eq!(worst["sectors_per_request"].as_f64(), Some(32.0));
    assert!(worst["diagnosis"].as_str().unwrap().contains("32.0 sectors/request"), "{worst}");
}

/// `profile --backend sim FILE.cu` from the user's own folder (outside the checkout, the
/// simulator named by the variables a tool home would stand for): coalprof compiles the source
/// itself (the right nvcc, host compiler, `-cudart shared`, `-lineinfo`, `--nvcc-arg`), runs it,
/// and `lines` on the saved run names the strided line by its path in that folder.
#[test]
fn profile_sim_compiles_a_source_file_itself_from_any_folder() {
    if !simulator("profile_sim_compiles_a_source_file_itself_from_any_folder") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The example with its stride made a macro: `--nvcc-arg=-D…` must reach nvcc to compile it.
    let text = std::fs::read_to_string(root().join("examples/sim/app.cu")).unwrap();
    assert!(text.contains("int stride"), "the example changed: adapt this test");
    std::fs::write(dir.path().join("walk.cu"), format!("#ifndef WALK_OK\n#error WALK_OK not defined\n#endif\n{text}"))
        .unwrap();
    let tools = root().join(".tools");
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["--format", "json", "profile", "--backend", "sim", "walk.cu", "--nvcc-arg=-DWALK_OK"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    let spr = |name: &str| {
        let rows = results["rows"].as_array().unwrap();
        let r = rows.iter().find(|r| r["kernel"].as_str().unwrap().starts_with(name)).unwrap();
        r["metrics"]["global_load_sectors_per_request"].as_f64()
    };
    assert_eq!((spr("coalesced_copy("), spr("strided_copy(")), (Some(4.0), Some(32.0)));
    // Saved where a user's runs go outside the checkout, with the program it built and run.json.
    let runs = dir.path().join("profiles");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap().path();
    assert!(run.join("walk").is_file() && run.join("run.json").is_file(), "{run:?}");
    // run.json is the results' provenance (one record) plus what only the run folder keeps.
    let record = json(&std::fs::read(run.join("run.json")).unwrap());
    assert_eq!(
        (&record["backend"], &record["config"]),
        (&results["provenance"]["backend"], &serde_json::json!("SM7_QV100"))
    );
    assert_eq!(record["settings"], results["provenance"]["settings"]);
    assert!(record["source"].as_str().is_some_and(|s| s.ends_with("walk.cu")), "{record}");
    let lines = json(&coalprof().current_dir(dir.path()).args(["--format", "json", "lines"]).arg(&run).ok_stdout());
    let worst = &lines["rows"][0];
    assert_eq!(worst["path"].as_str(), Some("walk.cu"), "{worst}");
    assert_eq!(worst["sectors_per_request"].as_f64(), Some(32.0), "{worst}");
    // Without the define it does not compile: nvcc's own words, exit 3, one error line.
    let out = coalprof()
        .env("COALPROF_GPGPUSIM", tools.join("gpgpu-sim"))
        .env("CUDA11_HOME", tools.join("cuda11"))
        .current_dir(dir.path())
        .args(["profile", "--backend", "sim", "walk.cu"])
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("does not compile for the simulator") && e.contains("WALK_OK not defined"), "{e}");
}

#[test]
fn run_sim_works_from_a_folder_of_its_own_with_relative_paths() {
    if !simulator("run_sim_works_from_a_folder_of_its_own_with_relative_paths") {
        return;
    }
    // As a user runs it: the runs go to the default `profiles/` under the current folder, and
    // the simulator is named relative to it, although the program runs in its run folder.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root().join(".tools/gpgpu-sim"), dir.path().join("sim")).unwrap();
    let out = coalprof()
        .current_dir(dir.path())
        .env("COALPROF_GPGPUSIM", "sim")
        .env("CUDA11_HOME", root().join(".tools/cuda11"))
        .args(["--format", "json", "run", "--backend", "sim", "--size", "16K", "--pattern", "stride"])
        .args(["--variant", "stride_1,stride_32"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    let spr = |v: &str| {
        let rows = results["rows"].as_array().unwrap();
        rows.iter().find(|r| r["variant"] == v).unwrap()["metrics"]["global_load_sectors_per_request"].as_f64()
    };
    assert_eq!((spr("stride_1"), spr("stride_32")), (Some(4.0), Some(32.0)));
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("profiles")).unwrap().collect();
    assert_eq!(runs.len(), 1, "one run folder under the relative default");
}

#[test]
fn a_source_file_needs_the_simulator_backend_and_must_exist() {
    let out = coalprof().args(["profile", "walk.cu"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("only for `--backend sim`"), "{e}");
    let out = coalprof().args(["profile", "--backend", "sim", "nope.cu"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{e}");
    assert!(e.contains("nope.cu"), "{e}");
}

#[test]
fn a_program_with_the_static_cuda_runtime_is_refused_plainly() {
    if !simulator("a_program_with_the_static_cuda_runtime_is_refused_plainly") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = build_example(dir.path(), true);
    let out =
        coalprof().args(["profile", "--backend", "sim", "--out"]).arg(dir.path()).arg("--").arg(&app).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("statically") && e.contains("-cudart shared"), "{e}");
}

/// [`build_example_cuda12`] in a fresh folder, or `None` (said SKIPPED) without the project's
/// nvcc or the simulator.
fn cuda12_example(test: &str, static_runtime: bool) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    let nvcc = real_nvcc(test)?;
    if !simulator(test) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = build_example_cuda12(&nvcc, dir.path(), static_runtime);
    Some((dir, app))
}

/// `examples/sim/app.cu` built by the project's CUDA 12+ nvcc (PyPI; CUDA 13 has no sm_70, so
/// `sm_75`, whose PTX the simulator runs) into `dir`: with the shared runtime (linked through a
/// `libcudart.so` beside the wheel's `libcudart.so.13`), or nvcc's default static one.
fn build_example_cuda12(nvcc: &std::path::Path, dir: &std::path::Path, static_runtime: bool) -> std::path::PathBuf {
    let exe = dir.join(if static_runtime { "app12-static" } else { "app12" });
    let lib = nvcc.parent().unwrap().parent().unwrap().join("lib");
    let runtime = std::fs::read_dir(&lib)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("libcudart.so."))
        .unwrap_or_else(|| panic!("no libcudart.so.* in {}", lib.display()));
    std::os::unix::fs::symlink(&runtime, dir.join("libcudart.so")).unwrap();
    let mut cmd = std::process::Command::new(nvcc);
    cmd.args(["-arch=sm_75", "-lineinfo", "-o"]).arg(&exe).arg(root().join("examples/sim/app.cu"));
    if !static_runtime {
        cmd.args(["-cudart", "shared"]).arg(format!("-L{}", dir.display()));
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    exe
}

#[test]
fn a_program_built_with_cuda_12_or_later_runs_in_the_simulator() {
    let Some((dir, app)) = cuda12_example("a_program_built_with_cuda_12_or_later_runs_in_the_simulator", false) else {
        return;
    };
    let out = coalprof()
        .args(["--format", "json", "profile", "--backend", "sim", "--out"])
        .arg(dir.path().join("runs"))
        .arg("--")
        .arg(&app)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let results = json(&out.stdout);
    let rows = results["rows"].as_array().unwrap();
    // The same counts as the CUDA 11.8 build of the same program (the test above).
    for (kernel, spr) in [("strided_copy(", 32.0), ("coalesced_copy(", 4.0)] {
        let r = rows.iter().find(|r| r["kernel"].as_str().unwrap().starts_with(kernel)).unwrap();
        assert_eq!(r["metrics"]["global_load_sectors_per_request"].as_f64(), Some(spr), "{kernel}");
        assert_eq!(r["metrics"]["global_load_requests"].as_f64(), Some(4096.0 / 32.0), "{kernel}");
    }
}

#[test]
fn a_cuda_12_program_with_the_static_runtime_is_refused_naming_the_rebuild() {
    let test = "a_cuda_12_program_with_the_static_runtime_is_refused_naming_the_rebuild";
    let Some((dir, app)) = cuda12_example(test, true) else { return };
    let out =
        coalprof().args(["profile", "--backend", "sim", "--out"]).arg(dir.path()).arg("--").arg(&app).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_eq!(e.lines().filter(|l| l.starts_with("error: ")).count(), 1, "{e}");
    assert!(e.contains("statically") && e.contains("-cudart shared -arch=sm_70 -lineinfo -ccbin g++-11"), "{e}");
}
